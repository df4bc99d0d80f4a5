// CUDA kernels of the indexing stubs (../Indexing.h):
//   index_stub / index_put_stub   the restrided gather / scatter loop (x[idx], index_select,
//                                 gather, take, x[idx] = v, scatter, index_copy, index_fill, put_)
//   masked_fill_stub              [self, mask] with the value passed by value
//   masked_select_stub, masked_scatter_stub, nonzero_stub
//                                 row-major compactions: a flag per element, an inclusive
//                                 prefix sum of the flags (CUB), one device-to-host copy of the
//                                 total on the current stream (the output size depends on it,
//                                 as in PyTorch), then each set element writes its own slot.
// The copy loops move bytes, so they are instantiated per element size (1/2/4/8), not per dtype.
// Index errors are checked on the device (report_index_error; see CUDAUtils.cuh).
#include <cub/device/device_scan.cuh>

#include "IndexingUtils.cuh"

namespace ember::at::native {
namespace {

namespace ecuda = ::ember::at::cuda;
using cuda_index::IndexGeom;
using cuda_index::kMaxOperands;
using cuda_index::make_row_major;
using cuda_index::RowMajorGeom;

// ---- index / index_put ------------------------------------------------------------

template <typename T, bool Put>
__global__ void index_elementwise_kernel(const __grid_constant__ IndexGeom g, int64_t n, ecuda::DeviceError* err,
                                         int op) {
  int64_t off[kMaxOperands];
  EMBER_GRID_STRIDE_LOOP(i, n) {
    cuda_index::operand_offsets(g, i, off);
    int64_t extra;
    if (!cuda_index::indexed_offset(g, off, err, op, extra)) continue;
    cuda_index::move_element<T, Put>(g, off, extra);
  }
}

template <bool Put>
void index_cuda_impl(TensorIterator& iter, const IndexedDims& dims, IndexMode mode, const char* op) {
  const int64_t n = iter.numel();
  if (n == 0) return;
  c10::DeviceGuard guard(iter.device(0));
  ecuda::check_device_errors(iter.device(0).index);
  const IndexGeom g = cuda_index::make_geom(iter, &dims, mode, op);
  ecuda::DeviceError* err = ecuda::device_error_slot();
  const int op_id = cuda_index::index_error_id(op, mode);
  const unsigned int blocks = ecuda::grid_size(n);
  cudaStream_t stream = ecuda::current_stream();
  switch (c10::elementSize(iter.dtype(0))) {
    case 1:
      index_elementwise_kernel<uint8_t, Put><<<blocks, ecuda::kNumThreads, 0, stream>>>(g, n, err, op_id);
      break;
    case 2:
      index_elementwise_kernel<uint16_t, Put><<<blocks, ecuda::kNumThreads, 0, stream>>>(g, n, err, op_id);
      break;
    case 4:
      index_elementwise_kernel<uint32_t, Put><<<blocks, ecuda::kNumThreads, 0, stream>>>(g, n, err, op_id);
      break;
    default:
      index_elementwise_kernel<uint64_t, Put><<<blocks, ecuda::kNumThreads, 0, stream>>>(g, n, err, op_id);
      break;
  }
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
}

void index_kernel_cuda(TensorIterator& iter, const IndexedDims& dims, IndexMode mode, const char* op) {
  index_cuda_impl<false>(iter, dims, mode, op);
}

void index_put_kernel_cuda(TensorIterator& iter, const IndexedDims& dims, IndexMode mode, const char* op) {
  index_cuda_impl<true>(iter, dims, mode, op);
}

// ---- masked_fill --------------------------------------------------------------------

template <typename T>
__global__ void masked_fill_kernel(const __grid_constant__ IndexGeom g, int64_t n, T value) {
  int64_t off[kMaxOperands];
  EMBER_GRID_STRIDE_LOOP(i, n) {
    cuda_index::operand_offsets(g, i, off);
    cuda_index::masked_fill_element<T>(g, off, value);
  }
}

template <typename T>
void launch_masked_fill(const IndexGeom& g, int64_t n, const void* value) {
  T v;
  std::memcpy(&v, value, sizeof(T));
  masked_fill_kernel<T><<<ecuda::grid_size(n), ecuda::kNumThreads, 0, ecuda::current_stream()>>>(g, n, v);
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
}

// value: one element of self's dtype in host memory.
void masked_fill_kernel_cuda(TensorIterator& iter, const void* value) {
  const int64_t n = iter.numel();
  if (n == 0) return;
  c10::DeviceGuard guard(iter.device(0));
  const IndexGeom g = cuda_index::make_geom(iter, nullptr, IndexMode::NoWrap, "masked_fill_");
  switch (c10::elementSize(iter.dtype(0))) {
    case 1:
      return launch_masked_fill<uint8_t>(g, n, value);
    case 2:
      return launch_masked_fill<uint16_t>(g, n, value);
    case 4:
      return launch_masked_fill<uint32_t>(g, n, value);
    default:
      return launch_masked_fill<uint64_t>(g, n, value);
  }
}

// ---- row-major compactions ------------------------------------------------------------

template <typename T>
__global__ void flag_kernel(const __grid_constant__ RowMajorGeom g, int64_t n, int which, T value_mask,
                            int64_t* flags) {
  EMBER_GRID_STRIDE_LOOP(i, n) { flags[i] = cuda_index::flag_element<T>(g, which, i, value_mask); }
}

template <typename T>
__global__ void masked_select_kernel(const __grid_constant__ RowMajorGeom g, int64_t n, const int64_t* pos, T* out) {
  EMBER_GRID_STRIDE_LOOP(i, n) { cuda_index::select_element<T>(g, i, pos, out); }
}

template <typename T>
__global__ void masked_scatter_kernel(const __grid_constant__ RowMajorGeom g, int64_t n, const int64_t* pos,
                                      const T* src) {
  EMBER_GRID_STRIDE_LOOP(i, n) { cuda_index::scatter_element<T>(g, i, pos, src); }
}

__global__ void nonzero_write_kernel(const __grid_constant__ RowMajorGeom g, int64_t n, const int64_t* pos,
                                     int64_t* out) {
  EMBER_GRID_STRIDE_LOOP(i, n) { cuda_index::nonzero_element(g, i, pos, out); }
}

// flags of operand `which` -> inclusive prefix sums (in a new int64 tensor of n
// elements on g's device); returns them and the total, read back to the host.
template <typename T>
Tensor flags_and_positions(const RowMajorGeom& g, int64_t n, int which, T value_mask, Device device, int64_t& total) {
  cudaStream_t stream = ecuda::current_stream();
  Tensor pos = empty({n}, ScalarType::Long, device);
  int64_t* p = static_cast<int64_t*>(pos.data_ptr());
  flag_kernel<T><<<ecuda::grid_size(n), ecuda::kNumThreads, 0, stream>>>(g, n, which, value_mask, p);
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  size_t temp_bytes = 0;
  EMBER_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, temp_bytes, p, n, stream));
  Tensor temp = empty({static_cast<int64_t>(std::max<size_t>(temp_bytes, 1))}, ScalarType::Byte, device);
  EMBER_CUDA_CHECK(cub::DeviceScan::InclusiveSum(temp.data_ptr(), temp_bytes, p, n, stream));
  // the one synchronisation: the output's size is the total
  EMBER_CUDA_CHECK(cudaMemcpyAsync(&total, p + (n - 1), sizeof(int64_t), cudaMemcpyDeviceToHost, stream));
  EMBER_CUDA_CHECK(cudaStreamSynchronize(stream));
  ecuda::check_device_errors(device.index);
  return pos;
}

template <typename T>
Tensor masked_select_impl(const Tensor& self, const Tensor& mask) {
  const int64_t n = self.numel();
  if (n == 0) return empty({0}, self.dtype(), self.device());
  const RowMajorGeom g = make_row_major(self, &mask, "masked_select");
  int64_t total = 0;
  const Tensor pos = flags_and_positions<uint8_t>(g, n, 1, uint8_t{0xFF}, self.device(), total);
  Tensor out = empty({total}, self.dtype(), self.device());
  if (total == 0) return out;
  masked_select_kernel<T><<<ecuda::grid_size(n), ecuda::kNumThreads, 0, ecuda::current_stream()>>>(
      g, n, static_cast<const int64_t*>(pos.data_ptr()), static_cast<T*>(out.data_ptr()));
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

// self, mask: the same sizes (mask bool, maybe broadcast strides).
Tensor masked_select_kernel_cuda(const Tensor& self, const Tensor& mask) {
  c10::DeviceGuard guard(self.device());
  switch (self.itemsize()) {
    case 1:
      return masked_select_impl<uint8_t>(self, mask);
    case 2:
      return masked_select_impl<uint16_t>(self, mask);
    case 4:
      return masked_select_impl<uint32_t>(self, mask);
    default:
      return masked_select_impl<uint64_t>(self, mask);
  }
}

template <typename T>
void masked_scatter_impl(const Tensor& self, const Tensor& mask, const Tensor& source) {
  const int64_t n = self.numel();
  if (n == 0) return;
  const RowMajorGeom g = make_row_major(self, &mask, "masked_scatter_");
  int64_t total = 0;
  const Tensor pos = flags_and_positions<uint8_t>(g, n, 1, uint8_t{0xFF}, self.device(), total);
  // checked before anything is written, as on the CPU
  EMBER_CHECK(total <= source.numel(), "masked_scatter_: Number of elements of source < number of ones in mask (",
              source.numel(), " < ", total, ")");
  if (total == 0) return;
  masked_scatter_kernel<T><<<ecuda::grid_size(n), ecuda::kNumThreads, 0, ecuda::current_stream()>>>(
      g, n, static_cast<const int64_t*>(pos.data_ptr()), static_cast<const T*>(source.data_ptr()));
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
}

// self, mask: the same sizes; source contiguous, self's dtype.
void masked_scatter_kernel_cuda(const Tensor& self, const Tensor& mask, const Tensor& source) {
  c10::DeviceGuard guard(self.device());
  switch (self.itemsize()) {
    case 1:
      return masked_scatter_impl<uint8_t>(self, mask, source);
    case 2:
      return masked_scatter_impl<uint16_t>(self, mask, source);
    case 4:
      return masked_scatter_impl<uint32_t>(self, mask, source);
    default:
      return masked_scatter_impl<uint64_t>(self, mask, source);
  }
}

// nonzero: as on the CPU, an element is non-zero when its bits (sign bit cleared for
// floating types: -0.0 is zero, NaN is not) are not all zero.
template <typename T>
Tensor nonzero_impl(const Tensor& self, T value_mask) {
  const int64_t n = self.numel();
  const int64_t nd = self.dim();
  if (n == 0) return empty({0, nd}, ScalarType::Long, self.device());
  const RowMajorGeom g = make_row_major(self, nullptr, "nonzero");
  int64_t total = 0;
  const Tensor pos = flags_and_positions<T>(g, n, 0, value_mask, self.device(), total);
  Tensor out = empty({total, nd}, ScalarType::Long, self.device());
  if (total == 0 || nd == 0) return out;
  nonzero_write_kernel<<<ecuda::grid_size(n), ecuda::kNumThreads, 0, ecuda::current_stream()>>>(
      g, n, static_cast<const int64_t*>(pos.data_ptr()), static_cast<int64_t*>(out.data_ptr()));
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

Tensor nonzero_kernel_cuda(const Tensor& self) {
  c10::DeviceGuard guard(self.device());
  const bool fp = c10::isFloatingType(self.dtype());
  switch (self.itemsize()) {
    case 1:
      return nonzero_impl<uint8_t>(self, cuda_index::nonzero_value_mask<uint8_t>(fp));
    case 2:
      return nonzero_impl<uint16_t>(self, cuda_index::nonzero_value_mask<uint16_t>(fp));
    case 4:
      return nonzero_impl<uint32_t>(self, cuda_index::nonzero_value_mask<uint32_t>(fp));
    default:
      return nonzero_impl<uint64_t>(self, cuda_index::nonzero_value_mask<uint64_t>(fp));
  }
}

}  // namespace

REGISTER_CUDA_DISPATCH(index_stub, &index_kernel_cuda);
REGISTER_CUDA_DISPATCH(index_put_stub, &index_put_kernel_cuda);
REGISTER_CUDA_DISPATCH(masked_fill_stub, &masked_fill_kernel_cuda);
REGISTER_CUDA_DISPATCH(masked_select_stub, &masked_select_kernel_cuda);
REGISTER_CUDA_DISPATCH(masked_scatter_stub, &masked_scatter_kernel_cuda);
REGISTER_CUDA_DISPATCH(nonzero_stub, &nonzero_kernel_cuda);

}  // namespace ember::at::native
