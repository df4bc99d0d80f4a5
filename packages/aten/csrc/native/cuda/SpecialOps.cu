// CUDA kernels of torch.special's elementwise functions: the formulas of
// SpecialFunctions.h (the CPU kernel's, cpu/SpecialOpsKernel.cpp), in double. The
// function is a run-time code switched on inside the element function (uniform across
// the grid), so the whole family is one kernel per dtype.
#include <ember/aten/Dispatch.h>

#include "../SpecialOps.h"
#include "Loops.cuh"

namespace ember::at::native {
namespace {

namespace sm = special_math;

void special_unary_kernel_cuda(TensorIterator& iter, sm::SpecialUnary op) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(iter.common_dtype(), "special", [&] {
    gpu_kernel(iter, [op] EMBER_GPU_LAMBDA(scalar_t a) -> scalar_t {
      return static_cast<scalar_t>(sm::special_unary(op, static_cast<double>(a)));
    });
  });
}

void special_binary_kernel_cuda(TensorIterator& iter, sm::SpecialBinary op) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(iter.common_dtype(), "special", [&] {
    gpu_kernel(iter, [op] EMBER_GPU_LAMBDA(scalar_t a, scalar_t b) -> scalar_t {
      return static_cast<scalar_t>(sm::special_binary(op, static_cast<double>(a), static_cast<double>(b)));
    });
  });
}

void polygamma_kernel_cuda(TensorIterator& iter, int64_t n) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(iter.common_dtype(), "polygamma", [&] {
    gpu_kernel(iter, [n] EMBER_GPU_LAMBDA(scalar_t a) -> scalar_t {
      return static_cast<scalar_t>(sm::polygamma(n, static_cast<double>(a)));
    });
  });
}

}  // namespace

REGISTER_CUDA_DISPATCH(special_unary_stub, &special_unary_kernel_cuda);
REGISTER_CUDA_DISPATCH(special_binary_stub, &special_binary_kernel_cuda);
REGISTER_CUDA_DISPATCH(polygamma_stub, &polygamma_kernel_cuda);

}  // namespace ember::at::native
