// CPU kernels of torch.special's elementwise functions: the formulas of
// SpecialFunctions.h in double over TensorIterator's loops (float32 / float64 and the
// half types, widened to double and rounded back).
#include <ember/aten/Dispatch.h>
#include <ember/aten/native/cpu/Loops.h>

#include "../SpecialOps.h"

namespace ember::at::native {
namespace {

namespace sm = special_math;

void special_unary_kernel(TensorIterator& iter, sm::SpecialUnary op) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(iter.common_dtype(), "special", [&] {
    cpu_kernel(iter, [op](scalar_t a) -> scalar_t {
      return static_cast<scalar_t>(sm::special_unary(op, static_cast<double>(a)));
    });
  });
}

void special_binary_kernel(TensorIterator& iter, sm::SpecialBinary op) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(iter.common_dtype(), "special", [&] {
    cpu_kernel(iter, [op](scalar_t a, scalar_t b) -> scalar_t {
      return static_cast<scalar_t>(sm::special_binary(op, static_cast<double>(a), static_cast<double>(b)));
    });
  });
}

void polygamma_kernel(TensorIterator& iter, int64_t n) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(iter.common_dtype(), "polygamma", [&] {
    cpu_kernel(iter,
               [n](scalar_t a) -> scalar_t { return static_cast<scalar_t>(sm::polygamma(n, static_cast<double>(a))); });
  });
}

}  // namespace

REGISTER_DISPATCH(special_unary_stub, &special_unary_kernel);
REGISTER_DISPATCH(special_binary_stub, &special_binary_kernel);
REGISTER_DISPATCH(polygamma_stub, &polygamma_kernel);

}  // namespace ember::at::native
