// The CUDA kernel of searchsorted and bucketize (bucketize_stub; the operators and their
// checks are Bucketization.cpp's): one thread per value running the shared binary search.
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
    out[i] = static_cast<out_t>(bucketize_position<scalar_t, acc_t>(boundaries, sorter, row_size, inner, i,
                                                                    static_cast<acc_t>(values[i]), right));
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

void bucketize_cuda(const BucketizePlan& p) {
  c10::DeviceGuard guard(p.input.device());
  if (p.buffer.dtype() == ScalarType::Int) {
    launch<int32_t>(p);
  } else {
    launch<int64_t>(p);
  }
}

}  // namespace

REGISTER_CUDA_DISPATCH(bucketize_stub, &bucketize_cuda);

}  // namespace ember::at::native
