// CUDA tril_indices / triu_indices: the row counts of TriangularIndices.cpp (host, O(rows))
// are copied to the device, then one thread per row writes that row's coordinates.
#include <ember/aten/Dispatch.h>

#include "../TensorFactories.h"
#include "../TriangularIndices.h"
#include "CUDAUtils.cuh"

namespace ember::at::native {

namespace {

template <typename index_t>
__global__ void triangle_fill_kernel(const int64_t* __restrict__ first_col, const int64_t* __restrict__ start,
                                     int64_t n_rows, int64_t total, index_t* __restrict__ out) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n_rows;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    fill_triangle_row(i, first_col[i], start[i], start[i + 1] - start[i], total, out);
  }
}

Tensor host_vector(const std::vector<int64_t>& v, Device device) {
  const DimVector shape{static_cast<int64_t>(v.size())};
  Tensor t = empty(shape, ScalarType::Long);
  std::copy(v.begin(), v.end(), t.data_ptr<int64_t>());
  return t.to(device);
}

Tensor triangle_indices_cuda(const char* op, int64_t row, int64_t col, int64_t offset, bool lower,
                             std::optional<ScalarType> dtype, std::optional<Device> device,
                             std::optional<bool> pin_memory) {
  const ScalarType dt = dtype.value_or(ScalarType::Long);
  const TriangleRows r = triangle_rows(op, row, col, offset, lower, dt);
  const Device dev = device ? *device : Device(DeviceType::CUDA);
  c10::DeviceGuard guard(dev);
  const int64_t n = r.total();
  const DimVector shape{2, n};
  Tensor out = factory_empty(shape, dt, dev, pin_memory);
  if (n == 0) return out;
  const Tensor first = host_vector(r.first_col, dev), start = host_vector(r.start, dev);
  const cudaStream_t stream = cuda::current_stream();
  if (dt == ScalarType::Long) {
    triangle_fill_kernel<int64_t><<<cuda::grid_size(row), cuda::kNumThreads, 0, stream>>>(
        static_cast<const int64_t*>(first.data_ptr()), static_cast<const int64_t*>(start.data_ptr()), row, n,
        static_cast<int64_t*>(out.data_ptr()));
  } else {
    triangle_fill_kernel<int32_t><<<cuda::grid_size(row), cuda::kNumThreads, 0, stream>>>(
        static_cast<const int64_t*>(first.data_ptr()), static_cast<const int64_t*>(start.data_ptr()), row, n,
        static_cast<int32_t*>(out.data_ptr()));
  }
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

}  // namespace

Tensor tril_indices_cuda(int64_t row, int64_t col, int64_t offset, std::optional<ScalarType> dtype,
                         std::optional<Device> device, std::optional<bool> pin_memory) {
  return triangle_indices_cuda("tril_indices", row, col, offset, true, dtype, device, pin_memory);
}

Tensor triu_indices_cuda(int64_t row, int64_t col, int64_t offset, std::optional<ScalarType> dtype,
                         std::optional<Device> device, std::optional<bool> pin_memory) {
  return triangle_indices_cuda("triu_indices", row, col, offset, false, dtype, device, pin_memory);
}

}  // namespace ember::at::native
