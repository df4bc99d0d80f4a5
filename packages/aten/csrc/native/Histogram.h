#pragma once
// bincount and histc: the argument checks, histc's range and its bin formula, shared by
// the CPU kernels (Histogram.cpp) and the CUDA kernels (cuda/Histogram.cu).
#include <cmath>
#include <cstdint>
#include <optional>

#include <ember/aten/Tensor.h>

#include "HostDevice.h"

namespace ember::at::native {

// bincount's checks; returns whether `weights` are given.
inline bool check_bincount_args(const Tensor& self, const std::optional<Tensor>& weights, int64_t minlength) {
  EMBER_CHECK(minlength >= 0, "minlength should be >= 0");
  EMBER_CHECK(self.dim() == 1 && c10::isIntegralType(self.dtype(), /*includeBool=*/false),
              "bincount only supports 1-d non-negative integral inputs.");
  const bool has_w = weights.has_value() && weights->defined();
  if (has_w) {
    EMBER_CHECK(weights->dim() == 1 && weights->size(0) == self.size(0),
                "weights should be 1-d and have the same length as input");
    check_same_device("bincount", self, *weights);
  }
  return has_w;
}

// float32 weights give float32 counts; any other weights are summed in float64.
inline ScalarType bincount_weight_dtype(const Tensor& weights) {
  return weights.dtype() == ScalarType::Float ? ScalarType::Float : ScalarType::Double;
}

// histc's checks of the input, bins, out= and the given range [lo, hi].
inline void check_histc_args(const Tensor& self, int64_t bins, double lo, double hi, const Tensor& out) {
  EMBER_CHECK(c10::isFloatingType(self.dtype()), "torch.histc: input tensor must have a floating point dtype, but got ",
              c10::toPythonName(self.dtype()));
  EMBER_CHECK(bins > 0, "torch.histc(): bins must be > 0, but got ", bins);
  if (out.defined()) {
    EMBER_CHECK(out.dtype() == self.dtype(), "torch.histc: Expected out tensor to have dtype ",
                c10::toPythonName(self.dtype()), ", but got ", c10::toPythonName(out.dtype()), " instead");
  }
  EMBER_CHECK(!(lo > hi), "torch.histc: max must be larger than min");
}

// An empty range (min == max, and the data's range was one value or none) widens to
// [lo - 1, hi + 1]; the range must then be finite.
inline void widen_histc_range(double& lo, double& hi) {
  if (lo == hi) {
    lo -= 1;
    hi += 1;
  }
  EMBER_CHECK(std::isfinite(lo) && std::isfinite(hi), "torch.histc: range of [", lo, ", ", hi, "] is not finite");
}

EMBER_FORMULAS_BEGIN

// The bin of v among `bins` equal bins over [lo, hi] (in T, the input's opmath type);
// -1 outside the range or for NaN. The right edge belongs to the last bin.
template <typename T>
EMBER_HOST_DEVICE inline int64_t histc_bin(T v, T lo, T hi, int64_t bins) {
  if (!(v >= lo && v <= hi)) return -1;
  const int64_t b = static_cast<int64_t>((v - lo) / (hi - lo) * static_cast<T>(bins));
  return b >= bins ? bins - 1 : b;
}

EMBER_FORMULAS_END

}  // namespace ember::at::native
