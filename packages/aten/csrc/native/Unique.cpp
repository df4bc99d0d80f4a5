// unique (of elements or of slices along a dim) and unique_consecutive.
//
// Elements are equal when == says so (as PyTorch: NaNs are never equal, so each NaN
// is its own unique value; -0.0 equals 0.0). Sorted unique uses the stable sort
// kernel (Sorting.h); unique along a dim sorts the slices lexicographically.
// Each returns (values, inverse, counts); inverse and counts are empty tensors
// unless asked for.
#include <algorithm>
#include <numeric>
#include <vector>

#include <ember/aten/Dispatch.h>

#include "Sorting.h"

namespace ember::at::native {

namespace {

template <typename scalar_t>
bool eq(scalar_t a, scalar_t b) {
  if constexpr (std::is_same_v<scalar_t, c10::Half> || std::is_same_v<scalar_t, c10::BFloat16>) {
    return static_cast<float>(a) == static_cast<float>(b);
  } else {
    return a == b;
  }
}

// a < b with NaN after everything (and NaNs equivalent), for ordering slices.
template <typename scalar_t>
int cmp(scalar_t a, scalar_t b) {
  using T = std::conditional_t<std::is_same_v<scalar_t, c10::Half> || std::is_same_v<scalar_t, c10::BFloat16>, float,
                               scalar_t>;
  const T x = static_cast<T>(a), y = static_cast<T>(b);
  const bool xn = x != x, yn = y != y;
  if (xn || yn) return xn == yn ? 0 : (xn ? 1 : -1);
  return x < y ? -1 : (y < x ? 1 : 0);
}

// Runs of equal consecutive elements of v[0..n): writes the run id of each element
// (through pos: element i of v is element pos[i] of the input) and returns run starts.
template <typename scalar_t>
std::vector<int64_t> runs(const scalar_t* v, int64_t n, const int64_t* pos, int64_t* inverse) {
  std::vector<int64_t> starts;
  for (int64_t i = 0; i < n; ++i) {
    if (i == 0 || !eq(v[i], v[i - 1])) starts.push_back(i);
    if (inverse) inverse[pos ? pos[i] : i] = static_cast<int64_t>(starts.size()) - 1;
  }
  return starts;
}

std::tuple<Tensor, Tensor, Tensor> unique_flat(const Tensor& self, bool sort_first, bool return_inverse,
                                               bool return_counts) {
  const Tensor flat = self.reshape({self.numel()});
  const int64_t n = flat.numel();
  Tensor values_sorted = flat, positions;
  if (sort_first) {
    SortedRows s = sort_rows(flat, 0, false, true);
    values_sorted = s.values;
    positions = s.indices;
  } else {
    values_sorted = flat.contiguous();
  }
  Tensor inverse = empty(return_inverse ? self.sizes() : IntArrayRef({0}), ScalarType::Long, self.device());
  Tensor counts, values;
  EMBER_DISPATCH_ALL_TYPES_AND_HALF_AND_BOOL(self.dtype(), "unique", [&] {
    const scalar_t* v = static_cast<const scalar_t*>(values_sorted.data_ptr());
    const std::vector<int64_t> starts = runs(v, n, positions.defined() ? positions.data_ptr<int64_t>() : nullptr,
                                             return_inverse ? inverse.data_ptr<int64_t>() : nullptr);
    const int64_t k = static_cast<int64_t>(starts.size());
    values = empty({k}, self.dtype(), self.device());
    scalar_t* out = static_cast<scalar_t*>(values.data_ptr());
    for (int64_t r = 0; r < k; ++r) out[r] = v[starts[r]];
    counts = empty({return_counts ? k : 0}, ScalarType::Long, self.device());
    if (return_counts) {
      int64_t* c = counts.data_ptr<int64_t>();
      for (int64_t r = 0; r < k; ++r) c[r] = (r + 1 < k ? starts[r + 1] : n) - starts[r];
    }
  });
  return {values, inverse, counts};
}

// Slices along `dim`: self moved so `dim` is first, as a contiguous (n, m) block.
std::tuple<Tensor, Tensor, Tensor> unique_slices(const char* op, const Tensor& self, int64_t dim, bool sort_first,
                                                 bool return_inverse, bool return_counts) {
  EMBER_CHECK_INDEX(self.dim() > 0, op, ": cannot take unique slices of a 0-dim tensor along dim ", dim);
  const int64_t d = c10::maybe_wrap_dim(dim, self.dim());
  const int64_t n = self.size(d);
  Tensor x = self.transpose(0, d).contiguous();  // slice i is x[i]
  const int64_t m = n > 0 ? x.numel() / n : 0;
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::vector<int64_t> starts;
  Tensor inverse = empty({return_inverse ? n : 0}, ScalarType::Long, self.device());
  EMBER_DISPATCH_ALL_TYPES_AND_HALF_AND_BOOL(self.dtype(), op, [&] {
    const scalar_t* base = static_cast<const scalar_t*>(x.data_ptr());
    auto slice = [&](int64_t i) { return base + i * m; };
    if (sort_first) {
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        const scalar_t* pa = slice(a);
        const scalar_t* pb = slice(b);
        for (int64_t j = 0; j < m; ++j) {
          const int c = cmp(pa[j], pb[j]);
          if (c) return c < 0;
        }
        return false;
      });
    }
    int64_t* inv = return_inverse ? inverse.data_ptr<int64_t>() : nullptr;
    for (int64_t i = 0; i < n; ++i) {
      bool same = i > 0;
      if (same) {
        const scalar_t* pa = slice(order[i]);
        const scalar_t* pb = slice(order[i - 1]);
        for (int64_t j = 0; j < m && same; ++j) same = eq(pa[j], pb[j]);
      }
      if (!same) starts.push_back(i);
      if (inv) inv[order[i]] = static_cast<int64_t>(starts.size()) - 1;
    }
  });
  const int64_t k = static_cast<int64_t>(starts.size());
  DimVector shape(x.sizes());
  if (!shape.empty()) shape[0] = k;
  Tensor picked = empty(shape, self.dtype(), self.device());
  for (int64_t r = 0; r < k; ++r) picked.select(0, r).copy_(x.select(0, order[starts[r]]));
  Tensor counts = empty({return_counts ? k : 0}, ScalarType::Long, self.device());
  if (return_counts) {
    int64_t* c = counts.data_ptr<int64_t>();
    for (int64_t r = 0; r < k; ++r) c[r] = (r + 1 < k ? starts[r + 1] : n) - starts[r];
  }
  return {picked.transpose(0, d).contiguous(), inverse, counts};
}

}  // namespace

namespace {
// bool bytes 2..255 (uint8.view(bool)) compare as true: a 0/1 copy first (the copy
// kernel reads bool as byte != 0)
Tensor clean_bool(const Tensor& t) { return t.dtype() == ScalarType::Bool ? t.clone() : t; }
}  // namespace

std::tuple<Tensor, Tensor, Tensor> _unique2(const Tensor& self, bool sorted, bool return_inverse, bool return_counts) {
  // unsorted unique may come back in any order: ours is always sorted
  return unique_flat(clean_bool(self), true, return_inverse, return_counts);
}

std::tuple<Tensor, Tensor, Tensor> unique_dim(const Tensor& self, int64_t dim, bool sorted, bool return_inverse,
                                              bool return_counts) {
  return unique_slices("unique_dim", clean_bool(self), dim, true, return_inverse, return_counts);
}

std::tuple<Tensor, Tensor, Tensor> _unique_consecutive(const Tensor& self, bool return_inverse, bool return_counts,
                                                       std::optional<int64_t> dim) {
  if (dim) return unique_slices("unique_consecutive", clean_bool(self), *dim, false, return_inverse, return_counts);
  return unique_flat(clean_bool(self), false, return_inverse, return_counts);
}

}  // namespace ember::at::native
