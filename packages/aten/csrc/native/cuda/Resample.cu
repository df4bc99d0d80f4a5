// Separable resampling on CUDA (resample_gather_stub / resample_stub / resample_backward_stub;
// maps and layout in Resample.h). The per-dim maps live in host memory: each call packs
// the three dims' index and weight arrays into one buffer and copies it to the device on
// the current stream (a pageable-memory copy returns once the host buffer has been read).
// One thread per output element: forward sums its taps in the CPU kernel's order; the
// backward pass adds each grad_output element's weighted share into grad_input with
// atomicAdd (grad_input zero-filled by the caller; the order of float additions is not
// fixed).
#include <cstring>
#include <vector>

#include "../Resample.h"
#include "CUDAUtils.cuh"

namespace ember::at::native {
namespace {

using cuda::grid_size;
using cuda::kNumThreads;

// One dim's map on the device: index[out * taps], weight[out * taps] (nullptr: weight 1).
struct DevDim {
  int64_t in, out, taps;
  const int64_t* index;
  const double* weight;
};
struct DevMaps {
  DevDim d[3];
  int64_t in_numel, out_numel;
};

// The three maps copied to a device buffer that lives as long as `holder`.
DevMaps to_device(const ResampleDim* dims, Tensor& holder) {
  int64_t n_index = 0, n_weight = 0;
  for (int i = 0; i < 3; ++i) {
    n_index += dims[i].out * dims[i].taps;
    if (dims[i].weight) n_weight += dims[i].out * dims[i].taps;
  }
  // int64 indices first, then double weights: both 8-byte aligned
  std::vector<int64_t> host(static_cast<size_t>(n_index + n_weight));
  int64_t* ip = host.data();
  double* wp = reinterpret_cast<double*>(host.data() + n_index);
  int64_t io[3], wo[3];
  for (int i = 0; i < 3; ++i) {
    const int64_t m = dims[i].out * dims[i].taps;
    io[i] = ip - host.data();
    std::memcpy(ip, dims[i].index, sizeof(int64_t) * m);
    ip += m;
    wo[i] = -1;
    if (dims[i].weight) {
      wo[i] = wp - reinterpret_cast<double*>(host.data() + n_index);
      std::memcpy(wp, dims[i].weight, sizeof(double) * m);
      wp += m;
    }
  }
  int device = 0;
  EMBER_CUDA_CHECK(cudaGetDevice(&device));
  holder = empty({static_cast<int64_t>(host.size())}, ScalarType::Long, Device(DeviceType::CUDA, device));
  EMBER_CUDA_CHECK(cudaMemcpyAsync(holder.data_ptr(), host.data(), sizeof(int64_t) * host.size(),
                                   cudaMemcpyHostToDevice, cuda::current_stream()));
  const int64_t* dev = static_cast<const int64_t*>(holder.data_ptr());
  const double* dev_w = reinterpret_cast<const double*>(dev + n_index);
  DevMaps m{};
  m.in_numel = 1;
  m.out_numel = 1;
  for (int i = 0; i < 3; ++i) {
    m.d[i] = DevDim{dims[i].in, dims[i].out, dims[i].taps, dev + io[i], wo[i] < 0 ? nullptr : dev_w + wo[i]};
    m.in_numel *= dims[i].in;
    m.out_numel *= dims[i].out;
  }
  return m;
}

#define EMBER_GRID_STRIDE_LOOP(i, n) \
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < (n); i += int64_t(gridDim.x) * blockDim.x)

__device__ __forceinline__ double tap_weight(const DevDim& d, int64_t i) { return d.weight ? d.weight[i] : 1.0; }

template <typename E>
__global__ void gather_kernel(const E* in, E* out, int64_t total, DevMaps m) {
  EMBER_GRID_STRIDE_LOOP(i, total) {
    const int64_t o = i % m.out_numel, plane = i / m.out_numel;
    const int64_t ow = o % m.d[2].out, oh = (o / m.d[2].out) % m.d[1].out, od = o / (m.d[2].out * m.d[1].out);
    const int64_t src = (m.d[0].index[od] * m.d[1].in + m.d[1].index[oh]) * m.d[2].in + m.d[2].index[ow];
    out[i] = in[plane * m.in_numel + src];
  }
}

// Forward (Backward == false): out[i] = sum of w * in[src]; backward: gin[src] += w * gout[i].
template <typename T, bool Backward>
__global__ void resample_kernel(const T* src, T* dst, int64_t total, DevMaps m) {
  EMBER_GRID_STRIDE_LOOP(i, total) {
    const int64_t o = i % m.out_numel, plane = i / m.out_numel;
    const int64_t ow = o % m.d[2].out, oh = (o / m.d[2].out) % m.d[1].out, od = o / (m.d[2].out * m.d[1].out);
    const int64_t iHW = m.d[1].in * m.d[2].in, iW = m.d[2].in;
    const int64_t td = m.d[0].taps, th = m.d[1].taps, tw = m.d[2].taps;
    const int64_t base = plane * m.in_numel;
    T sum = T(0);
    const T g = Backward ? src[i] : T(0);
    for (int64_t a = 0; a < td; ++a) {
      const T wa = static_cast<T>(tap_weight(m.d[0], od * td + a));
      const int64_t ia = m.d[0].index[od * td + a] * iHW;
      for (int64_t b = 0; b < th; ++b) {
        const T wab = wa * static_cast<T>(tap_weight(m.d[1], oh * th + b));
        const int64_t iab = ia + m.d[1].index[oh * th + b] * iW;
        for (int64_t c = 0; c < tw; ++c) {
          const T w = wab * static_cast<T>(tap_weight(m.d[2], ow * tw + c));
          const int64_t j = base + iab + m.d[2].index[ow * tw + c];
          if constexpr (Backward) {
            atomicAdd(dst + j, w * g);
          } else {
            sum += w * src[j];
          }
        }
      }
    }
    if constexpr (!Backward) dst[i] = sum;
  }
}

void gather_cuda(int64_t elem_size, const void* in, void* out, int64_t planes, const ResampleDim* dims) {
  Tensor holder;
  const DevMaps m = to_device(dims, holder);
  const int64_t total = planes * m.out_numel;
  if (total == 0) return;
  cudaStream_t stream = cuda::current_stream();
  auto launch = [&](auto tag) {
    using E = decltype(tag);
    gather_kernel<E>
        <<<grid_size(total), kNumThreads, 0, stream>>>(static_cast<const E*>(in), static_cast<E*>(out), total, m);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  };
  switch (elem_size) {
    case 1:
      return launch(uint8_t{});
    case 2:
      return launch(uint16_t{});
    case 4:
      return launch(uint32_t{});
    default:
      return launch(uint64_t{});
  }
}

template <bool Backward>
void resample_launch(ScalarType dtype, const void* src, void* dst, int64_t planes, const ResampleDim* dims) {
  Tensor holder;
  const DevMaps m = to_device(dims, holder);
  const int64_t total = planes * m.out_numel;
  if (total == 0) return;
  cudaStream_t stream = cuda::current_stream();
  if (dtype == ScalarType::Double) {
    resample_kernel<double, Backward><<<grid_size(total), kNumThreads, 0, stream>>>(
        static_cast<const double*>(src), static_cast<double*>(dst), total, m);
  } else {
    resample_kernel<float, Backward><<<grid_size(total), kNumThreads, 0, stream>>>(static_cast<const float*>(src),
                                                                                   static_cast<float*>(dst), total, m);
  }
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
}

void resample_cuda(ScalarType dtype, const void* in, void* out, int64_t planes, const ResampleDim* dims) {
  resample_launch<false>(dtype, in, out, planes, dims);
}

void resample_backward_cuda(ScalarType dtype, const void* grad_out, void* grad_in, int64_t planes,
                            const ResampleDim* dims) {
  resample_launch<true>(dtype, grad_out, grad_in, planes, dims);
}

}  // namespace

REGISTER_CUDA_DISPATCH(resample_gather_stub, &gather_cuda);
REGISTER_CUDA_DISPATCH(resample_stub, &resample_cuda);
REGISTER_CUDA_DISPATCH(resample_backward_stub, &resample_backward_cuda);

}  // namespace ember::at::native
