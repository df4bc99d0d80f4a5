// The CUDA kernel of myops::my_add (compiled when nvcc is found; runs on a GPU).
#include <cuda_runtime.h>

#include <ember/aten/library.h>

namespace at = ember::at;

namespace {

template <typename T>
__global__ void my_add_kernel(const T* x, const T* y, T* out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = 2 * x[i] + y[i];
}

at::Tensor my_add_cuda(const at::Tensor& x_, const at::Tensor& y_) {
  EMBER_CHECK(x_.sizes() == y_.sizes() && x_.dtype() == y_.dtype(),
              "my_add: x and y must have the same shape and dtype, got ", x_.toString(), " and ", y_.toString());
  EMBER_CHECK(x_.is_cuda() && y_.is_cuda() && x_.device() == y_.device(),
              "my_add_cuda: expected CUDA tensors on one device, got ", x_.toString(), " and ", y_.toString());
  const at::Tensor x = x_.contiguous(), y = y_.contiguous();
  at::Tensor out = at::empty(x.sizes(), x.dtype(), x.device());
  const int64_t n = x.numel();
  if (n == 0) return out;
  const int threads = 256;
  const int blocks = static_cast<int>(std::min<int64_t>((n + threads - 1) / threads, 65535));
  if (x.dtype() == at::ScalarType::Float)
    my_add_kernel<<<blocks, threads>>>(x.data_ptr<float>(), y.data_ptr<float>(), out.data_ptr<float>(), n);
  else if (x.dtype() == at::ScalarType::Double)
    my_add_kernel<<<blocks, threads>>>(x.data_ptr<double>(), y.data_ptr<double>(), out.data_ptr<double>(), n);
  else
    EMBER_CHECK(false, "my_add: expected float32 or float64 tensors, got ", x.toString());
  const cudaError_t err = cudaGetLastError();
  EMBER_CHECK(err == cudaSuccess, "my_add_cuda: kernel launch failed: ", cudaGetErrorString(err));
  return out;
}

}  // namespace

EMBER_LIBRARY_IMPL(myops, CUDA, m) { m.impl("my_add", &my_add_cuda, "my_add_cuda"); }
