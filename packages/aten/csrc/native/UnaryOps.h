#pragma once
// Stubs of the elementwise unary operators (kernels in cpu/UnaryOpsKernel.cpp).
#include <ember/aten/TensorIterator.h>
#include <ember/aten/native/DispatchStub.h>

namespace ember::at::native {
using unary_fn = void (*)(TensorIterator&);

DECLARE_DISPATCH(unary_fn, neg_stub);
DECLARE_DISPATCH(unary_fn, exp_stub);
}  // namespace ember::at::native
