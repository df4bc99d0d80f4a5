#pragma once
// Stubs of torch.special's elementwise functions (kernels: cpu/SpecialOpsKernel.cpp and
// cuda/SpecialOps.cu, both over the formulas of SpecialFunctions.h).
#include <ember/aten/TensorIterator.h>
#include <ember/aten/native/DispatchStub.h>

#include "SpecialFunctions.h"

namespace ember::at::native {
using special_unary_fn = void (*)(TensorIterator&, special_math::SpecialUnary);
using special_binary_fn = void (*)(TensorIterator&, special_math::SpecialBinary);
using polygamma_fn = void (*)(TensorIterator&, int64_t);

DECLARE_DISPATCH(special_unary_fn, special_unary_stub);
DECLARE_DISPATCH(special_binary_fn, special_binary_stub);
DECLARE_DISPATCH(polygamma_fn, polygamma_stub);  // n >= 1 (n == 0 is digamma)
}  // namespace ember::at::native
