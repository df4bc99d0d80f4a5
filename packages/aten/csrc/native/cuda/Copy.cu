// The CUDA copy and fill kernels (copy_stub, fill_stub).
//
// copy_ with a CUDA side:
//   device -> same device: cudaMemcpyAsync when both sides are dense with the same
//     strides and dtype; an elementwise kernel otherwise (moving bytes when the dtypes agree, else
//     converting with the CPU kernel's rules: float -> integer through int64 with NaN
//     and out-of-range values giving INT64_MIN, anything -> bool is `!= 0`, half
//     types through float).
//   host -> device, device -> host: one cudaMemcpyAsync on the device's current
//     stream between dense buffers of the destination's dtype and layout (its own
//     strides when it is dense -- transposed, channels-last --, else contiguous); a
//     side that is not such a buffer is staged through a temporary (a dtype change is
//     done on the CPU for host -> device, on the GPU for device -> host). The copy is
//     asynchronous only for non_blocking=True with the host side itself in pinned
//     memory (ember.c10py.cuda's pinned allocator, which then keeps the block alive
//     until the copy is done); otherwise the stream is synchronised. After every
//     device -> host copy, index errors reported by earlier kernels are raised
//     (check_device_errors).
//   device -> another device: dense buffers and cudaMemcpyPeerAsync, synchronised.
#include <cstring>

#include <ember/aten/Dispatch.h>

#include "../Copy.h"
#include "Loops.cuh"

namespace ember::at::native {
namespace {

using c10::ScalarType;
using cuda_detail::OffsetCalculator;

// ---- dtype conversion with a run-time source and destination dtype ----
// One kernel for every (dst, src) pair instead of 100 instantiations.
struct DynValue {
  bool is_int;
  int64_t i;
  double d;
};

__device__ __forceinline__ DynValue load_dyn(const char* p, ScalarType t) {
  switch (t) {
    case ScalarType::Bool:
      return {true, *reinterpret_cast<const uint8_t*>(p) != 0 ? 1 : 0, 0.0};
    case ScalarType::Byte:
      return {true, *reinterpret_cast<const uint8_t*>(p), 0.0};
    case ScalarType::Char:
      return {true, *reinterpret_cast<const int8_t*>(p), 0.0};
    case ScalarType::Short:
      return {true, *reinterpret_cast<const int16_t*>(p), 0.0};
    case ScalarType::Int:
      return {true, *reinterpret_cast<const int32_t*>(p), 0.0};
    case ScalarType::Long:
      return {true, *reinterpret_cast<const int64_t*>(p), 0.0};
    case ScalarType::Half:
      return {false, 0, static_cast<double>(static_cast<float>(*reinterpret_cast<const c10::Half*>(p)))};
    case ScalarType::BFloat16:
      return {false, 0, static_cast<double>(static_cast<float>(*reinterpret_cast<const c10::BFloat16*>(p)))};
    case ScalarType::Float:
      return {false, 0, static_cast<double>(*reinterpret_cast<const float*>(p))};
    default:  // Double
      return {false, 0, *reinterpret_cast<const double*>(p)};
  }
}

// Integer destination: the value as int64 (float: truncated; NaN and |x| >= 2^63 give INT64_MIN).
__device__ __forceinline__ int64_t dyn_to_int64(const DynValue& v) {
  if (v.is_int) return v.i;
  const double d = v.d;
  if (!(d == d) || d >= 9.2233720368547758e18 || d <= -9.2233720368547758e18) {
    return static_cast<int64_t>(0x8000000000000000ull);
  }
  return static_cast<int64_t>(d);
}

__device__ __forceinline__ float dyn_to_float(const DynValue& v) {
  return v.is_int ? static_cast<float>(v.i) : static_cast<float>(v.d);
}

__device__ __forceinline__ void store_dyn(char* p, ScalarType t, const DynValue& v) {
  switch (t) {
    case ScalarType::Bool:
      *reinterpret_cast<bool*>(p) = v.is_int ? v.i != 0 : v.d != 0.0;
      break;
    case ScalarType::Byte:
      *reinterpret_cast<uint8_t*>(p) = static_cast<uint8_t>(dyn_to_int64(v));
      break;
    case ScalarType::Char:
      *reinterpret_cast<int8_t*>(p) = static_cast<int8_t>(dyn_to_int64(v));
      break;
    case ScalarType::Short:
      *reinterpret_cast<int16_t*>(p) = static_cast<int16_t>(dyn_to_int64(v));
      break;
    case ScalarType::Int:
      *reinterpret_cast<int32_t*>(p) = static_cast<int32_t>(dyn_to_int64(v));
      break;
    case ScalarType::Long:
      *reinterpret_cast<int64_t*>(p) = dyn_to_int64(v);
      break;
    case ScalarType::Half:
      *reinterpret_cast<c10::Half*>(p) = c10::Half(dyn_to_float(v));
      break;
    case ScalarType::BFloat16:
      *reinterpret_cast<c10::BFloat16*>(p) = c10::BFloat16(dyn_to_float(v));
      break;
    case ScalarType::Float:
      *reinterpret_cast<float*>(p) = dyn_to_float(v);
      break;
    default:  // Double
      *reinterpret_cast<double*>(p) = v.is_int ? static_cast<double>(v.i) : v.d;
      break;
  }
}

__global__ void convert_kernel(int32_t n, OffsetCalculator<2> calc, char* dst, const char* src, ScalarType dst_t,
                               ScalarType src_t) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const auto off = calc.get(static_cast<uint32_t>(i));
    store_dyn(dst + off.v[0], dst_t, load_dyn(src + off.v[1], src_t));
  }
}

void launch_convert(const TensorIterator& iter) {
  const int64_t n = iter.numel();
  if (n == 0) return;
  OffsetCalculator<2> calc(iter.shape(), [&](int k) { return iter.strides(k); });
  const unsigned grid = ember::at::cuda::grid_size(n);
  convert_kernel<<<grid, ember::at::cuda::kNumThreads, 0, ember::at::cuda::current_stream()>>>(
      static_cast<int32_t>(n), calc, static_cast<char*>(iter.data_ptr(0)), static_cast<const char*>(iter.data_ptr(1)),
      iter.dtype(0), iter.dtype(1));
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
}

// A same-dtype copy with any strides: moves elements as unsigned words of their size.
template <typename word_t>
void copy_words(TensorIterator& iter) {
  gpu_kernel(iter, [] EMBER_GPU_LAMBDA(word_t v) -> word_t { return v; });
}

void copy_same_dtype(TensorIterator& iter) {
  switch (c10::elementSize(iter.dtype(0))) {
    case 1:
      return copy_words<uint8_t>(iter);
    case 2:
      return copy_words<uint16_t>(iter);
    case 4:
      return copy_words<uint32_t>(iter);
    default:
      return copy_words<uint64_t>(iter);
  }
}

int64_t byte_size(const Tensor& t) { return t.numel() * static_cast<int64_t>(t.itemsize()); }

c10::cuda::CUDAStream stream_of(const Tensor& t) { return c10::cuda::current_stream(t.device().index); }

// Dense (non-overlapping, no gaps): the elements fill numel * itemsize bytes from
// data_ptr(), whatever the order of the dims -- one memcpy moves them.
bool dense(const Tensor& t) { return t.is_non_overlapping_and_dense(); }

bool same_dense_layout(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.sizes().equals(b.sizes()) && a.strides().equals(b.strides()) && dense(a);
}

// Both on one device.
void copy_device_to_device(TensorIterator& iter, const Tensor& dst, const Tensor& src) {
  c10::DeviceGuard guard(dst.device());
  if (same_dense_layout(dst, src)) {
    EMBER_CUDA_CHECK(cudaMemcpyAsync(dst.data_ptr(), src.data_ptr(), static_cast<size_t>(byte_size(dst)),
                                     cudaMemcpyDeviceToDevice, ember::at::cuda::current_stream()));
    return;
  }
  if (iter.dtype(0) == iter.dtype(1)) {
    copy_same_dtype(iter);
    return;
  }
  if (iter.can_use_32bit_indexing()) {
    launch_convert(iter);
  } else {
    for (const TensorIterator& sub : iter.with_32bit_indexing()) launch_convert(sub);
  }
}

// The layout a transfer between devices moves: dst's own when dst is dense (a
// transposed or channels-last tensor needs no reordering), else contiguous.
DimVector transfer_strides(const Tensor& dst) {
  return dense(dst) ? DimVector(dst.strides()) : c10::contiguous_strides(dst.sizes());
}

// A dense tensor on `device` in dst's dtype and transfer layout holding src's values
// (src itself when it already is one).
Tensor staged_source(const Tensor& src, const Tensor& dst, Device device) {
  const DimVector strides = transfer_strides(dst);
  if (src.device() == device && src.dtype() == dst.dtype() && src.sizes().equals(dst.sizes()) &&
      src.strides().equals(strides) && dense(src)) {
    return src;
  }
  Tensor out = empty_strided(dst.sizes(), strides, dst.dtype(), device);
  out.copy_(src);
  return out;
}

// dst itself when dense, else a contiguous temporary on dst's device to land in.
Tensor landing_buffer(const Tensor& dst) {
  return dense(dst) ? dst : empty_strided(dst.sizes(), transfer_strides(dst), dst.dtype(), dst.device());
}

void copy_host_to_device(const Tensor& dst, const Tensor& src, bool non_blocking) {
  c10::DeviceGuard guard(dst.device());
  const Tensor host = staged_source(src, dst, src.device());
  const bool staged_host = !host.is_same(src);
  const Tensor dev = landing_buffer(dst);
  const bool async = non_blocking && !staged_host && c10::cuda::is_pinned(host.data_ptr());
  c10::cuda::memcpy(dev.data_ptr(), host.data_ptr(), static_cast<size_t>(byte_size(dev)),
                    c10::cuda::CopyKind::HostToDevice, stream_of(dst), async);
  if (!dev.is_same(dst)) dst.copy_(dev);
}

void copy_device_to_host(const Tensor& dst, const Tensor& src, bool non_blocking) {
  c10::DeviceGuard guard(src.device());
  const Tensor dev = staged_source(src, dst, src.device());
  const Tensor host = landing_buffer(dst);
  const bool async = non_blocking && host.is_same(dst) && c10::cuda::is_pinned(host.data_ptr());
  c10::cuda::memcpy(host.data_ptr(), dev.data_ptr(), static_cast<size_t>(byte_size(host)),
                    c10::cuda::CopyKind::DeviceToHost, stream_of(src), async);
  if (!host.is_same(dst)) dst.copy_(host);
  ember::at::cuda::check_device_errors(src.device().index);
}

// Between two devices: dense buffers and a peer copy, then synchronised (the
// temporaries live on two devices' streams; this path is rare).
void copy_between_devices(const Tensor& dst, const Tensor& src) {
  const Tensor from = [&] {
    c10::DeviceGuard guard(src.device());
    return staged_source(src, dst, src.device());
  }();
  stream_of(src).synchronize();  // src's pending writes (and the conversion) are done
  c10::DeviceGuard guard(dst.device());
  const Tensor to = landing_buffer(dst);
  const c10::cuda::CUDAStream s = stream_of(dst);
  EMBER_CUDA_CHECK(cudaMemcpyPeerAsync(to.data_ptr(), to.device().index, from.data_ptr(), from.device().index,
                                       static_cast<size_t>(byte_size(to)), static_cast<cudaStream_t>(s.handle)));
  if (!to.is_same(dst)) dst.copy_(to);
  s.synchronize();
}

void copy_kernel_cuda(TensorIterator& iter, bool non_blocking) {
  const Tensor& dst = iter.tensor(0);
  Tensor src = iter.tensor(1);
  if (!src.sizes().equals(dst.sizes())) src = src.expand(dst.sizes());
  if (dst.is_cuda() && src.is_cuda()) {
    if (dst.device() == src.device()) {
      copy_device_to_device(iter, dst, src);
    } else {
      copy_between_devices(dst, src);
    }
  } else if (dst.is_cuda()) {
    copy_host_to_device(dst, src, non_blocking);
  } else {
    copy_device_to_host(dst, src, non_blocking);
  }
}

// fill: the value converted on the host, stored as a word of the dtype's size.
template <typename word_t>
void fill_words(TensorIterator& iter, word_t bits) {
  gpu_kernel(iter, [bits] EMBER_GPU_LAMBDA() -> word_t { return bits; });
}

void fill_kernel_cuda(TensorIterator& iter, const Scalar& value) {
  c10::DeviceGuard guard(iter.device(0));
  uint64_t bits = 0;
  EMBER_DISPATCH_ALL_TYPES(iter.dtype(0), "fill_", [&] {
    const scalar_t v = value.to<scalar_t>();
    std::memcpy(&bits, &v, sizeof(scalar_t));
  });
  switch (c10::elementSize(iter.dtype(0))) {
    case 1:
      return fill_words<uint8_t>(iter, static_cast<uint8_t>(bits));
    case 2:
      return fill_words<uint16_t>(iter, static_cast<uint16_t>(bits));
    case 4:
      return fill_words<uint32_t>(iter, static_cast<uint32_t>(bits));
    default:
      return fill_words<uint64_t>(iter, bits);
  }
}

}  // namespace

REGISTER_CUDA_DISPATCH(copy_stub, &copy_kernel_cuda);
REGISTER_CUDA_DISPATCH(fill_stub, &fill_kernel_cuda);

}  // namespace ember::at::native
