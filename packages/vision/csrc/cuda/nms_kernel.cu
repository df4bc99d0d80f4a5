// vision::nms on CUDA. The boxes are sorted by score on the host; a kernel computes, for
// every box i, a bitmask of the later boxes j whose IoU with i exceeds the threshold (64
// per word, one block per 64 x 64 tile); the greedy pass over those masks, sequential by
// nature, runs on the host.
#include <algorithm>
#include <numeric>
#include <vector>

#include "cuda_utils.cuh"

namespace ember::vision::cuda {
namespace {

constexpr int kBits = 64;

template <typename T>
__device__ bool overlaps(const T* a, const T* b, double threshold) {
  const T iw = max(T(0), min(a[2], b[2]) - max(a[0], b[0]));
  const T ih = max(T(0), min(a[3], b[3]) - max(a[1], b[1]));
  const T inter = iw * ih;
  const T area_a = (a[2] - a[0]) * (a[3] - a[1]), area_b = (b[2] - b[0]) * (b[3] - b[1]);
  return inter / (area_a + area_b - inter) > threshold;
}

template <typename T>
__global__ void mask_kernel(const T* boxes, int64_t n, double threshold, unsigned long long* mask, int64_t words) {
  const int64_t row_block = blockIdx.y, col_block = blockIdx.x;
  const int64_t row_size = min(n - row_block * kBits, int64_t(kBits));
  const int64_t col_size = min(n - col_block * kBits, int64_t(kBits));
  __shared__ T tile[kBits * 4];
  if (threadIdx.x < col_size)
    for (int d = 0; d < 4; ++d) tile[threadIdx.x * 4 + d] = boxes[(col_block * kBits + threadIdx.x) * 4 + d];
  __syncthreads();
  if (threadIdx.x >= row_size) return;
  const int64_t i = row_block * kBits + threadIdx.x;
  unsigned long long bits = 0;
  for (int64_t j = (row_block == col_block ? threadIdx.x + 1 : 0); j < col_size; ++j)
    if (overlaps(boxes + i * 4, tile + j * 4, threshold)) bits |= 1ULL << j;
  mask[i * words + col_block] = bits;
}

template <typename T>
std::vector<int64_t> nms_impl(const at::Tensor& dets, const at::Tensor& scores, double threshold) {
  const int64_t n = dets.sizes()[0];
  const at::Tensor scores_cpu = scores.to(at::Device(at::DeviceType::CPU)).contiguous();
  const at::Tensor dets_cpu = dets.to(at::Device(at::DeviceType::CPU)).contiguous();
  const T* s = scores_cpu.data_ptr<T>();
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return s[a] > s[b]; });
  at::Tensor sorted_cpu = at::empty({n, 4}, dets.dtype());
  for (int64_t i = 0; i < n; ++i)
    std::copy_n(dets_cpu.data_ptr<T>() + order[i] * 4, 4, sorted_cpu.data_ptr<T>() + i * 4);
  const at::Tensor sorted = sorted_cpu.to(dets.device());
  const int64_t words = (n + kBits - 1) / kBits;
  at::Tensor mask = at::empty({n * words}, at::ScalarType::Long, dets.device());
  const dim3 grid(static_cast<unsigned>(words), static_cast<unsigned>(words));
  mask_kernel<T><<<grid, kBits, 0, stream_of(dets)>>>(
      sorted.data_ptr<T>(), n, threshold, reinterpret_cast<unsigned long long*>(mask.data_ptr<int64_t>()), words);
  check_launch("nms");
  const at::Tensor mask_cpu = mask.to(at::Device(at::DeviceType::CPU));
  const auto* m = reinterpret_cast<const unsigned long long*>(mask_cpu.data_ptr<int64_t>());
  std::vector<unsigned long long> removed(words, 0);
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < n; ++i) {
    if (removed[i / kBits] & (1ULL << (i % kBits))) continue;
    keep.push_back(order[i]);
    for (int64_t wd = 0; wd < words; ++wd) removed[wd] |= m[i * words + wd];
  }
  return keep;
}

at::Tensor nms_cuda(const at::Tensor& dets, const at::Tensor& scores, double threshold) {
  EMBER_CHECK_VALUE(dets.dim() == 2 && dets.sizes()[1] == 4,
                    "nms: expected boxes of shape [N, 4] (x1, y1, x2, y2), got ", dets.toString());
  EMBER_CHECK_VALUE(scores.dim() == 1 && scores.sizes()[0] == dets.sizes()[0], "nms: expected scores of shape [",
                    dets.sizes()[0], "] (one per box), got ", scores.toString());
  check_floating("nms", "boxes", dets);
  EMBER_CHECK_TYPE(dets.dtype() == scores.dtype(), "nms: expected boxes and scores of one dtype, got ", dets.toString(),
                   " and ", scores.toString());
  check_cuda("nms", dets);
  EMBER_CHECK_VALUE(scores.device() == dets.device(), "nms: expected scores on the device of boxes, got ",
                    scores.toString());
  ember::c10::DeviceGuard guard(dets.device());
  std::vector<int64_t> keep;
  if (dets.sizes()[0] > 0)
    keep = dets.dtype() == at::ScalarType::Float ? nms_impl<float>(dets, scores, threshold)
                                                 : nms_impl<double>(dets, scores, threshold);
  at::Tensor out = at::empty({static_cast<int64_t>(keep.size())}, at::ScalarType::Long);
  std::copy(keep.begin(), keep.end(), out.data_ptr<int64_t>());
  return out.to(dets.device());
}

}  // namespace
}  // namespace ember::vision::cuda

EMBER_LIBRARY_IMPL(vision, CUDA, m) { m.impl("nms", &ember::vision::cuda::nms_cuda, "nms_cuda"); }
