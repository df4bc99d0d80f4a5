// addr on CUDA: beta * self + alpha * outer(vec1, vec2) as one gpu_kernel over the iterator
// LinearAlgebra.cpp builds for both devices (checks, type promotion, output), with the CPU
// kernel's rules: bool uses and/or, beta == 0 ignores self (NaN too), half types compute in
// float. (The matrix products go through cuBLAS: CUDABlas.cpp.)
#include <ember/aten/Dispatch.h>

#include "Loops.cuh"

namespace ember::at::native {

TensorIterator addr_iterator(const Tensor& self, const Tensor& vec1, const Tensor& vec2, const Scalar& beta,
                             const Scalar& alpha, const Tensor& out);

Tensor addr_out_cuda(const Tensor& self, const Tensor& vec1, const Tensor& vec2, const Scalar& beta,
                     const Scalar& alpha, const Tensor& out) {
  TensorIterator iter = addr_iterator(self, vec1, vec2, beta, alpha, out);
  c10::DeviceGuard guard(vec1.device());
  const ScalarType t = iter.common_dtype();
  if (t == ScalarType::Bool) {
    const bool b = beta.toBool(), a = alpha.toBool();
    gpu_kernel(iter, [b, a] EMBER_GPU_LAMBDA(bool s, bool x, bool y) -> bool { return (b && s) || (a && x && y); });
    return iter.output();
  }
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(t, "addr_cuda", [&] {
    using acc_t = opmath_t<scalar_t>;
    const acc_t b = beta.to<acc_t>(), a = alpha.to<acc_t>();
    const bool use_self = !(b == acc_t(0));
    gpu_kernel(iter, [b, a, use_self] EMBER_GPU_LAMBDA(scalar_t s, scalar_t x, scalar_t y) -> scalar_t {
      acc_t r = a * static_cast<acc_t>(x) * static_cast<acc_t>(y);
      if (use_self) r = b * static_cast<acc_t>(s) + r;
      return static_cast<scalar_t>(r);
    });
  });
  return iter.output();
}

}  // namespace ember::at::native
