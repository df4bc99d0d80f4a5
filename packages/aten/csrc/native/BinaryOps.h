#pragma once
// Stubs of the elementwise binary operators (kernels in cpu/BinaryOpsKernel.cpp).
#include <ember/aten/TensorIterator.h>
#include <ember/aten/native/DispatchStub.h>

namespace ember::at::native {
using binary_fn = void (*)(TensorIterator&);
using binary_fn_alpha = void (*)(TensorIterator&, const Scalar& alpha);

DECLARE_DISPATCH(binary_fn_alpha, add_stub);
DECLARE_DISPATCH(binary_fn, mul_stub);
DECLARE_DISPATCH(binary_fn, div_true_stub);
DECLARE_DISPATCH(binary_fn, div_trunc_stub);
DECLARE_DISPATCH(binary_fn, div_floor_stub);
}  // namespace ember::at::native
