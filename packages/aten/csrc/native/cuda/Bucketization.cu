// CUDA searchsorted and bucketize: the checks and preparation of Bucketization.cpp
// (searchsorted_plan), then one thread per value running the shared binary search.
#include <ember/aten/Dispatch.h>

#include "../Bucketization.h"
#include "CUDAUtils.cuh"

namespace ember::at::native {

namespace {

template <typename scalar_t, typename acc_t, typename out_t>
__global__ void searchsorted_kernel(const scalar_t* __restrict__ boundaries, const scalar_t* __restrict__ values,
                                    const int64_t* __restrict__ sorter, int64_t n, int64_t row_size, int64_t inner,
                                    bool right, out_t* __restrict__ out) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t off = (inner ? i / inner : 0) * row_size;
    out[i] = static_cast<out_t>(bucketize_search<scalar_t, acc_t>(boundaries + off, sorter ? sorter + off : nullptr,
                                                                  row_size, static_cast<acc_t>(values[i]), right));
  }
}

template <typename out_t>
void launch(const BucketizePlan& p) {
  const int64_t n = p.input.numel();
  const cudaStream_t stream = cuda::current_stream();
  const int64_t* sorter = p.sorter.defined() ? static_cast<const int64_t*>(p.sorter.data_ptr()) : nullptr;
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(p.dtype, "searchsorted", [&] {
    using acc_t = opmath_t<scalar_t>;
    searchsorted_kernel<scalar_t, acc_t, out_t><<<cuda::grid_size(n), cuda::kNumThreads, 0, stream>>>(
        static_cast<const scalar_t*>(p.boundaries.data_ptr()), static_cast<const scalar_t*>(p.input.data_ptr()), sorter,
        n, p.row_size, p.inner, p.right, static_cast<out_t*>(p.buffer.data_ptr()));
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

Tensor run_cuda(const BucketizePlan& p) {
  if (p.input.numel() > 0) {
    c10::DeviceGuard guard(p.input.device());
    if (p.buffer.dtype() == ScalarType::Int) {
      launch<int32_t>(p);
    } else {
      launch<int64_t>(p);
    }
  }
  p.finish();
  return p.result;
}

void check_bucketize_boundaries(const Tensor& boundaries) {
  EMBER_CHECK(boundaries.dim() == 1, "boundaries tensor must be 1 dimension, but got dim(", boundaries.dim(), ")");
}

}  // namespace

Tensor searchsorted_out_cuda(const Tensor& sorted_sequence, const Tensor& self, bool out_int32, bool right,
                             const std::optional<std::string>& side, const std::optional<Tensor>& sorter,
                             const Tensor& out) {
  return run_cuda(searchsorted_plan(sorted_sequence, self, out_int32, right, side, sorter, out, false));
}

Tensor searchsorted_scalar_out_cuda(const Tensor& sorted_sequence, const Scalar& self, bool out_int32, bool right,
                                    const std::optional<std::string>& side, const std::optional<Tensor>& sorter,
                                    const Tensor& out) {
  const Tensor v = scalar_tensor(self, self.type(), sorted_sequence.device());
  return run_cuda(searchsorted_plan(sorted_sequence, v, out_int32, right, side, sorter, out, true));
}

Tensor bucketize_out_cuda(const Tensor& self, const Tensor& boundaries, bool out_int32, bool right, const Tensor& out) {
  check_bucketize_boundaries(boundaries);
  return run_cuda(searchsorted_plan(boundaries, self, out_int32, right, std::nullopt, std::nullopt, out, false));
}

Tensor bucketize_scalar_cuda(const Scalar& self, const Tensor& boundaries, bool out_int32, bool right) {
  check_bucketize_boundaries(boundaries);
  const Tensor v = scalar_tensor(self, self.type(), boundaries.device());
  return run_cuda(searchsorted_plan(boundaries, v, out_int32, right, std::nullopt, std::nullopt, Tensor(), true));
}

}  // namespace ember::at::native
