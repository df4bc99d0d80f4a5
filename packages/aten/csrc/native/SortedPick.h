#pragma once
// The position kthvalue / median / nanmedian / mode read off one ascending sorted row: one
// definition for the CPU kernel (Sorting.cpp) and the CUDA kernel (cuda/Sort.cu).
#include <cstdint>
#include <type_traits>

#include <ember/c10/Macros.h>

#include "Sorting.h"

namespace ember::at::native::sorted_pick {

// Half and BFloat16 compare as float; NaN never equals itself.
template <typename scalar_t>
EMBER_HOST_DEVICE inline bool is_nan(scalar_t a) {
  if constexpr (std::is_same_v<scalar_t, c10::Half> || std::is_same_v<scalar_t, c10::BFloat16>) {
    return static_cast<float>(a) != static_cast<float>(a);
  } else {
    return a != a;  // false for integers
  }
}

// Equal values (NaNs equal to each other), for mode's runs.
template <typename scalar_t>
EMBER_HOST_DEVICE inline bool same_value(scalar_t a, scalar_t b) {
  if constexpr (std::is_same_v<scalar_t, c10::Half> || std::is_same_v<scalar_t, c10::BFloat16>) {
    return static_cast<float>(a) == static_cast<float>(b) || (is_nan(a) && is_nan(b));
  } else {
    return a == b || (is_nan(a) && is_nan(b));
  }
}

// kthvalue does not sort: as PyTorch's CPU kernel, a median-of-three quickselect over a
// scratch copy of the row (v, with ix its positions 0..n-1 on return) moves the k-th
// smallest value (NaN largest) to position k. Which of several equal values lands there
// is that algorithm's choice -- and so PyTorch's: kthvalue's indices agree with it.
template <typename scalar_t>
EMBER_HOST_DEVICE inline bool greater_or_nan(scalar_t a, scalar_t b) {
  if constexpr (std::is_same_v<scalar_t, c10::Half> || std::is_same_v<scalar_t, c10::BFloat16>) {
    return (is_nan(a) || static_cast<float>(a) > static_cast<float>(b)) && !is_nan(b);
  } else {
    return (is_nan(a) || a > b) && !is_nan(b);
  }
}

template <typename scalar_t>
EMBER_HOST_DEVICE inline void select_kth(scalar_t* v, int64_t* ix, int64_t n, int64_t k) {
  for (int64_t t = 0; t < n; ++t) ix[t] = t;
  auto swap = [&](int64_t a, int64_t b) {
    const scalar_t tv = v[a];
    v[a] = v[b];
    v[b] = tv;
    const int64_t ti = ix[a];
    ix[a] = ix[b];
    ix[b] = ti;
  };
  int64_t lo = 0, hi = n - 1;
  while (hi > lo) {
    if (hi == lo + 1) {
      if (greater_or_nan(v[lo], v[hi])) swap(lo, hi);
      return;
    }
    // the median of v[lo], v[mid], v[hi] becomes the pivot at lo, with v[lo + 1] <= pivot <= v[hi]
    swap(lo + (hi - lo) / 2, lo + 1);
    if (greater_or_nan(v[lo + 1], v[hi])) swap(lo + 1, hi);
    if (greater_or_nan(v[lo], v[hi])) swap(lo, hi);
    if (greater_or_nan(v[lo + 1], v[lo])) swap(lo + 1, lo);
    const scalar_t pivot = v[lo];
    int64_t i = lo + 1, j = hi;
    while (true) {
      do ++i;
      while (greater_or_nan(pivot, v[i]));
      do --j;
      while (greater_or_nan(v[j], pivot));
      if (j < i) break;
      swap(i, j);
    }
    swap(lo, j);
    if (j <= k) lo = i;
    if (j >= k) hi = j - 1;
  }
}

// The position in row v (n ascending values, NaNs last) that `kind` picks (not Kth: see
// select_kth).
// Median: the lower middle, or the first NaN when there is one (NaN propagates);
// NanMedian: the lower middle of the non-NaN values; Mode: the last element of the
// longest run (the first such run on ties).
template <typename scalar_t>
EMBER_HOST_DEVICE inline int64_t position(SortedPick kind, const scalar_t* v, int64_t n, int64_t k) {
  int64_t nans = 0;
  if (kind == SortedPick::Median || kind == SortedPick::NanMedian) {
    while (nans < n && is_nan(v[n - 1 - nans])) ++nans;
  }
  int64_t pos = k;
  if (kind == SortedPick::Median) {
    pos = nans ? n - nans : (n - 1) / 2;
  } else if (kind == SortedPick::NanMedian) {
    const int64_t m = n - nans;
    pos = m ? (m - 1) / 2 : 0;
  } else if (kind == SortedPick::Mode) {
    int64_t best = 0;
    for (int64_t b = 0; b < n;) {
      int64_t e = b + 1;
      while (e < n && same_value(v[e], v[b])) ++e;
      if (e - b > best) {
        best = e - b;
        pos = e - 1;
      }
      b = e;
    }
  }
  return pos;
}

}  // namespace ember::at::native::sorted_pick
