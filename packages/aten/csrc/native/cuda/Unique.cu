// CUDA unique: _unique2 and _unique_consecutive (of elements) sort with the CUDA sort
// kernel when asked, mark where a run of equal adjacent elements starts, number the
// runs with CUB's inclusive scan, copy the number of runs to the host (the result's
// size depends on the data: one stream synchronisation), and scatter the values,
// inverse indices and counts. Equality as the CPU kernel: ==, so every NaN is its
// own unique value and -0.0 equals 0.0.
//
// Unique slices along a dim (unique_dim, unique_consecutive with dim) run the CPU
// kernel on a host copy and copy the results back.
#include <cub/device/device_scan.cuh>

#include <climits>

#include <ember/aten/Dispatch.h>

#include "../Sorting.h"
#include "Reduce.cuh"

namespace ember::at::native {

// the CPU kernels (Unique.cpp)
std::tuple<Tensor, Tensor, Tensor> unique_dim(const Tensor& self, int64_t dim, bool sorted, bool return_inverse,
                                              bool return_counts);
std::tuple<Tensor, Tensor, Tensor> _unique_consecutive(const Tensor& self, bool return_inverse, bool return_counts,
                                                       std::optional<int64_t> dim);

namespace {

template <typename scalar_t>
__global__ void mark_run_starts(const scalar_t* __restrict__ v, int64_t* __restrict__ starts, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    starts[i] = (i == 0 || !(cuda_reduce::up(v[i]) == cuda_reduce::up(v[i - 1]))) ? 1 : 0;
  }
}

// run id of element i: ids[i] - 1; element i starts a run when flags[i].
template <typename scalar_t>
__global__ void scatter_runs(const scalar_t* __restrict__ v, const int64_t* __restrict__ flags,
                             const int64_t* __restrict__ ids, const int64_t* __restrict__ pos, int64_t n,
                             scalar_t* __restrict__ values, int64_t* __restrict__ run_start,
                             int64_t* __restrict__ inverse) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t id = ids[i] - 1;
    if (flags[i]) {
      values[id] = v[i];
      run_start[id] = i;
    }
    if (inverse) inverse[pos ? pos[i] : i] = id;
  }
}

__global__ void run_lengths(const int64_t* __restrict__ run_start, int64_t k, int64_t n, int64_t* __restrict__ counts) {
  for (int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; r < k;
       r += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    counts[r] = (r + 1 < k ? run_start[r + 1] : n) - run_start[r];
  }
}

std::tuple<Tensor, Tensor, Tensor> unique_flat_cuda(const Tensor& self, bool sort_first, bool return_inverse,
                                                    bool return_counts) {
  c10::DeviceGuard guard(self.device());
  const Device device = self.device();
  const Tensor flat = self.reshape({self.numel()});
  const int64_t n = flat.numel();
  EMBER_CHECK(n <= INT_MAX, "unique: CUDA tensors of more than ", INT_MAX, " elements are not supported");
  Tensor v = flat, pos;
  if (sort_first) {
    SortedRows s = sort_rows(flat, 0, false, true);
    v = s.values;
    pos = s.indices;
  } else {
    v = flat.contiguous();
  }
  Tensor inverse = empty(return_inverse ? self.sizes() : IntArrayRef({0}), ScalarType::Long, device);
  if (n == 0) {
    return {empty({0}, self.dtype(), device), inverse, empty({0}, ScalarType::Long, device)};
  }
  const cudaStream_t stream = cuda::current_stream();
  const ScalarType dt = self.dtype() == ScalarType::Bool ? ScalarType::Byte : self.dtype();
  Tensor flags = empty({n}, ScalarType::Long, device);
  Tensor ids = empty({n}, ScalarType::Long, device);
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(dt, "unique", [&] {
    mark_run_starts<scalar_t><<<cuda::grid_size(n), cuda::kNumThreads, 0, stream>>>(
        static_cast<const scalar_t*>(v.data_ptr()), flags.data_ptr<int64_t>(), n);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
  size_t temp_bytes = 0;
  EMBER_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, temp_bytes, flags.data_ptr<int64_t>(),
                                                 ids.data_ptr<int64_t>(), static_cast<int>(n), stream));
  Tensor temp = empty({std::max<int64_t>(static_cast<int64_t>(temp_bytes), 1)}, ScalarType::Byte, device);
  EMBER_CUDA_CHECK(cub::DeviceScan::InclusiveSum(temp.data_ptr(), temp_bytes, flags.data_ptr<int64_t>(),
                                                 ids.data_ptr<int64_t>(), static_cast<int>(n), stream));
  int64_t k = 0;  // the number of runs: the last run id
  EMBER_CUDA_CHECK(
      cudaMemcpyAsync(&k, ids.data_ptr<int64_t>() + (n - 1), sizeof(int64_t), cudaMemcpyDeviceToHost, stream));
  EMBER_CUDA_CHECK(cudaStreamSynchronize(stream));
  Tensor values = empty({k}, self.dtype(), device);
  Tensor run_start = empty({k}, ScalarType::Long, device);
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(dt, "unique", [&] {
    scatter_runs<scalar_t><<<cuda::grid_size(n), cuda::kNumThreads, 0, stream>>>(
        static_cast<const scalar_t*>(v.data_ptr()), flags.data_ptr<int64_t>(), ids.data_ptr<int64_t>(),
        pos.defined() ? pos.data_ptr<int64_t>() : nullptr, n, static_cast<scalar_t*>(values.data_ptr()),
        run_start.data_ptr<int64_t>(), return_inverse ? inverse.data_ptr<int64_t>() : nullptr);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
  Tensor counts = empty({return_counts ? k : 0}, ScalarType::Long, device);
  if (return_counts) {
    run_lengths<<<cuda::grid_size(k), cuda::kNumThreads, 0, stream>>>(run_start.data_ptr<int64_t>(), k, n,
                                                                      counts.data_ptr<int64_t>());
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  }
  return {values, inverse, counts};
}

std::tuple<Tensor, Tensor, Tensor> to_device(std::tuple<Tensor, Tensor, Tensor> r, Device device) {
  return {std::get<0>(r).to(device), std::get<1>(r).to(device), std::get<2>(r).to(device)};
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> _unique2_cuda(const Tensor& self, bool sorted, bool return_inverse,
                                                 bool return_counts) {
  // unsorted unique may come back in any order: ours is always sorted (as on the CPU)
  return unique_flat_cuda(self, true, return_inverse, return_counts);
}

std::tuple<Tensor, Tensor, Tensor> unique_dim_cuda(const Tensor& self, int64_t dim, bool sorted, bool return_inverse,
                                                   bool return_counts) {
  return to_device(unique_dim(self.to(Device(DeviceType::CPU)), dim, sorted, return_inverse, return_counts),
                   self.device());
}

std::tuple<Tensor, Tensor, Tensor> _unique_consecutive_cuda(const Tensor& self, bool return_inverse, bool return_counts,
                                                            std::optional<int64_t> dim) {
  if (dim) {
    return to_device(_unique_consecutive(self.to(Device(DeviceType::CPU)), return_inverse, return_counts, dim),
                     self.device());
  }
  return unique_flat_cuda(self, false, return_inverse, return_counts);
}

}  // namespace ember::at::native
