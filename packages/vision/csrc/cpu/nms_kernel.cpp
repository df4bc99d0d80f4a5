// vision::nms on the CPU: greedy non-maximum suppression. Boxes are visited in order of
// decreasing score; each kept box suppresses the later ones whose IoU with it exceeds
// iou_threshold. Returns the kept indices (int64), highest score first.
#include <algorithm>
#include <numeric>
#include <vector>

#include "../vision.h"

namespace ember::vision {
namespace {

template <typename T>
std::vector<int64_t> nms_loop(const T* boxes, const T* scores, int64_t n, double threshold) {
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  // stable: equal scores keep their input order, so the result is deterministic
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return scores[a] > scores[b]; });
  std::vector<T> area(n);
  for (int64_t i = 0; i < n; ++i) area[i] = (boxes[i * 4 + 2] - boxes[i * 4]) * (boxes[i * 4 + 3] - boxes[i * 4 + 1]);
  std::vector<char> suppressed(n, 0);
  std::vector<int64_t> keep;
  for (int64_t oi = 0; oi < n; ++oi) {
    const int64_t i = order[oi];
    if (suppressed[i]) continue;
    keep.push_back(i);
    const T* bi = boxes + i * 4;
    for (int64_t oj = oi + 1; oj < n; ++oj) {
      const int64_t j = order[oj];
      if (suppressed[j]) continue;
      const T* bj = boxes + j * 4;
      const T iw = std::max(T(0), std::min(bi[2], bj[2]) - std::max(bi[0], bj[0]));
      const T ih = std::max(T(0), std::min(bi[3], bj[3]) - std::max(bi[1], bj[1]));
      const T inter = iw * ih;
      const T iou = inter / (area[i] + area[j] - inter);
      if (iou > threshold) suppressed[j] = 1;
    }
  }
  return keep;
}

at::Tensor nms_cpu(const at::Tensor& dets_, const at::Tensor& scores_, double iou_threshold) {
  EMBER_CHECK_VALUE(dets_.dim() == 2 && dets_.sizes()[1] == 4,
                    "nms: expected boxes of shape [N, 4] (x1, y1, x2, y2), got ", dets_.toString());
  EMBER_CHECK_VALUE(scores_.dim() == 1 && scores_.sizes()[0] == dets_.sizes()[0], "nms: expected scores of shape [",
                    dets_.sizes()[0], "] (one per box), got ", scores_.toString());
  check_floating("nms", "boxes", dets_);
  EMBER_CHECK_TYPE(dets_.dtype() == scores_.dtype(), "nms: expected boxes and scores of one dtype, got ",
                   dets_.toString(), " and ", scores_.toString());
  const at::Tensor dets = dets_.contiguous(), scores = scores_.contiguous();
  const int64_t n = dets.sizes()[0];
  const std::vector<int64_t> keep =
      dets.dtype() == at::ScalarType::Float
          ? nms_loop(dets.data_ptr<float>(), scores.data_ptr<float>(), n, iou_threshold)
          : nms_loop(dets.data_ptr<double>(), scores.data_ptr<double>(), n, iou_threshold);
  at::Tensor out = at::empty({static_cast<int64_t>(keep.size())}, at::ScalarType::Long);
  std::copy(keep.begin(), keep.end(), out.data_ptr<int64_t>());
  return out;
}

}  // namespace
}  // namespace ember::vision

EMBER_LIBRARY_IMPL(vision, CPU, m) { m.impl("nms", &ember::vision::nms_cpu, "nms_cpu"); }
