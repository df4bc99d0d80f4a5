// Host side of the CUDA reduction framework (Reduce.cuh): launch geometry and the
// workspace of split reductions.
#include "Reduce.cuh"

#include <algorithm>

#include <ember/c10/Exception.h>

namespace ember::at::native::cuda_reduce {

namespace {

int64_t next_pow2(int64_t n) {
  int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

int multiprocessors() {
  int dev = 0, count = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return 108;
  }
  return count;
}

void fill(OffsetCalc& c, IntArrayRef sizes, IntArrayRef s0, IntArrayRef s1) {
  EMBER_CHECK(sizes.size() <= static_cast<size_t>(kMaxDims), "CUDA reduction: more than ", kMaxDims,
              " non-contiguous dimensions are not supported");
  c.ndim = static_cast<int>(sizes.size());
  for (size_t d = 0; d < sizes.size(); ++d) {
    c.sizes[d] = sizes[d];
    c.s0[d] = s0[d];
    c.s1[d] = s1.empty() ? 0 : s1[d];
  }
}

}  // namespace

Geometry make_geometry(const ReductionPlan& p) {
  Geometry g;
  g.K = p.num_outputs;
  g.N = p.num_reduced;
  fill(g.kept, p.out_sizes, p.out_in_strides, p.out_strides);
  fill(g.red, p.red_sizes, p.red_strides, IntArrayRef());
  if (g.K == 0) return g;
  const bool red_contiguous = !p.red_sizes.empty() && p.red_strides[0] == 1;
  g.columns = g.N > 1 && !p.out_sizes.empty() && p.out_in_strides[0] == 1 && !red_contiguous;
  if (g.columns) {
    g.O = static_cast<int>(std::min<int64_t>(32, next_pow2(g.K)));
    g.R = kThreads / g.O;
  } else {
    g.R = static_cast<int>(std::min<int64_t>(kThreads, next_pow2(std::max<int64_t>(g.N, 1))));
    g.O = kThreads / g.R;
  }
  g.num_out_blocks = (g.K + g.O - 1) / g.O;
  g.chunk = std::max<int64_t>(g.N, 1);
  // Split the reduced range when the output blocks alone cannot fill the GPU and
  // each thread would fold many elements. The choice depends on the plan only.
  static const int sms = multiprocessors();
  const int64_t target_blocks = int64_t{4} * sms;
  const int64_t per_thread = (g.N + g.R - 1) / g.R;
  if (g.num_out_blocks < target_blocks && per_thread > 64) {
    int64_t G = std::min<int64_t>((target_blocks + g.num_out_blocks - 1) / g.num_out_blocks, per_thread / 32);
    G = std::min<int64_t>(G, 65535);
    if (G > 1) {
      g.chunk = (g.N + G - 1) / G;
      g.G = (g.N + g.chunk - 1) / g.chunk;
    }
  }
  return g;
}

Tensor workspace(int64_t bytes) {
  int dev = 0;
  EMBER_CUDA_CHECK(cudaGetDevice(&dev));
  return empty({std::max<int64_t>(bytes, 1)}, ScalarType::Byte, Device(DeviceType::CUDA, static_cast<int8_t>(dev)));
}

}  // namespace ember::at::native::cuda_reduce
