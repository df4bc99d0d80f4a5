// sort, argsort, topk, kthvalue, median, nanmedian, mode: each sorts rows with
// sort_stub (cpu/SortingKernel.cpp: stable, NaN largest) and then reads its answer
// off the sorted rows.
//
// Tie rules that follow from the stable order: median returns, among equal values, the
// one at that rank in input order, or the first NaN of a row that has one (nanmedian
// skips NaNs; an all-NaN row gives its first NaN). kthvalue picks among ties as PyTorch's
// CPU kernel does, on both devices (a quickselect, SortedPick.h); so does mode on the CPU
// (pytorch_ties below), while the CUDA kernel returns the smallest of the most frequent
// values with the index of its last occurrence.
#include "Sorting.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include <ember/aten/Dispatch.h>
#include <ember/aten/Parallel.h>

#include "ReduceOps.h"
#include "SortedPick.h"

namespace ember::at::native {

DEFINE_DISPATCH(sort_stub);
DEFINE_DISPATCH(pick_sorted_stub);

void sort_into(const Tensor& self, int64_t dim, bool descending, const Tensor& values, const Tensor& indices) {
  SortPlan p;
  p.in = self.data_ptr();
  p.dtype = self.dtype();
  p.device = self.device();
  p.descending = descending;
  p.values = values.defined() ? values.data_ptr() : nullptr;
  p.indices = indices.data_ptr<int64_t>();
  if (values.defined()) {
    EMBER_INTERNAL_ASSERT(values.strides().equals(indices.strides()), "sort: values and indices strides differ");
  }
  if (self.dim() > 0) {
    const int64_t d = c10::maybe_wrap_dim(dim, self.dim());
    p.n = self.size(d);
    p.in_stride = self.stride(d);
    p.out_stride = indices.stride(d);
    // the other dims, last (fastest) first: rows run in row-major order
    for (int64_t k = self.dim() - 1; k >= 0; --k) {
      if (k == d) continue;
      p.batch_sizes.push_back(self.size(k));
      p.batch_in_strides.push_back(self.stride(k));
      p.batch_out_strides.push_back(indices.stride(k));
    }
  }
  EMBER_CHECK(p.n <= static_cast<int64_t>(std::numeric_limits<uint32_t>::max()), "sort: a dimension of size ", p.n,
              " is too long to sort");
  p.rows = 1;
  for (int64_t s : p.batch_sizes) p.rows *= s;
  sort_stub(self.device().type, p);
}

SortedRows sort_rows(const Tensor& self, int64_t dim, bool descending, bool want_values) {
  SortedRows r;
  if (self.dim() == 0) {
    r.indices = empty({}, ScalarType::Long, self.device());
    if (want_values) r.values = empty({}, self.dtype(), self.device());
    sort_into(self, 0, descending, r.values, r.indices);
    r.rows = r.n = 1;
    return r;
  }
  const int64_t d = c10::maybe_wrap_dim(dim, self.dim());
  DimVector perm, shape, inv(static_cast<size_t>(self.dim()));
  for (int64_t k = 0; k < self.dim(); ++k)
    if (k != d) perm.push_back(k);
  perm.push_back(d);
  for (size_t i = 0; i < perm.size(); ++i) {
    shape.push_back(self.size(perm[i]));
    inv[perm[i]] = static_cast<int64_t>(i);
  }
  r.indices = empty(shape, ScalarType::Long, self.device()).permute(inv);
  if (want_values) r.values = empty(shape, self.dtype(), self.device()).permute(inv);
  sort_into(self, d, descending, r.values, r.indices);
  r.n = self.size(d);
  r.rows = 1;
  for (int64_t k = 0; k < self.dim(); ++k)
    if (k != d) r.rows *= self.size(k);
  return r;
}

namespace {

void check_dtype(const char* op, const Tensor& out, ScalarType expected) {
  if (!out.defined()) return;
  EMBER_CHECK(out.dtype() == expected, op, "(): Expected out tensor to have dtype ", c10::toPythonName(expected),
              ", but got ", c10::toPythonName(out.dtype()), " instead");
}

DimVector shape_without(const Tensor& self, int64_t d, bool keepdim) {
  DimVector shape;
  for (int64_t k = 0; k < self.dim(); ++k) {
    if (k != d)
      shape.push_back(self.size(k));
    else if (keepdim)
      shape.push_back(1);
  }
  return shape;
}

using Pick = SortedPick;

template <typename scalar_t>
void pick_rows_impl(Pick kind, const SortedRows& s, int64_t k, scalar_t* out_v, int64_t* out_i) {
  const scalar_t* vals = static_cast<const scalar_t*>(s.values.data_ptr());
  const int64_t* idxs = s.indices.data_ptr<int64_t>();
  const int64_t n = s.n;
  parallel_for(0, s.rows, std::max<int64_t>(1, GRAIN_SIZE / std::max<int64_t>(n, 1)), [&](int64_t rb, int64_t re) {
    for (int64_t r = rb; r < re; ++r) {
      const scalar_t* v = vals + r * n;
      const int64_t* ix = idxs + r * n;
      int64_t pos = k;
      if (kind == Pick::Kth) {  // unsorted scratch rows (select_rows)
        sorted_pick::select_kth(const_cast<scalar_t*>(v), const_cast<int64_t*>(ix), n, k);
      } else {
        pos = sorted_pick::position(kind, v, n, k);
      }
      out_v[r] = v[pos];
      out_i[r] = ix[pos];
    }
  });
}

void pick_rows(Pick kind, const SortedRows& s, int64_t k, const Tensor& out_values, const Tensor& out_indices) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF_AND_BOOL(s.values.dtype(), "sort", [&] {
    pick_rows_impl<scalar_t>(kind, s, k, static_cast<scalar_t*>(out_values.data_ptr()),
                             out_indices.data_ptr<int64_t>());
  });
}

}  // namespace

REGISTER_BASELINE_DISPATCH(pick_sorted_stub, &pick_rows);

namespace {

// Which of several equal values mode reports is, in PyTorch, its CPU kernel's choice: the
// row ordered by value with std::sort (not stable), the first of the longest runs, with
// the index of the run's last element. ember's CPU kernel makes the same choice, so that
// indices agree, not only values (for rows of at most 16 elements std::sort is an
// insertion sort, and the choice is the last occurrence of the smallest most frequent
// value, which is also what the CUDA kernel returns for any length).
namespace pytorch_ties {

template <typename scalar_t>
auto comparable(scalar_t a) {
  if constexpr (std::is_same_v<scalar_t, c10::Half> || std::is_same_v<scalar_t, c10::BFloat16>) {
    return static_cast<float>(a);
  } else {
    return a;
  }
}

template <typename scalar_t>
void mode_of_row(const scalar_t* v, int64_t n, scalar_t* out_v, int64_t* out_i) {
  std::vector<std::pair<scalar_t, int64_t>> row(static_cast<size_t>(n));
  for (int64_t t = 0; t < n; ++t) row[t] = {v[t], t};
  std::sort(row.begin(), row.end(),
            [](const auto& a, const auto& b) { return comparable(a.first) < comparable(b.first); });
  int64_t best = 0, run = 0;
  for (int64_t t = 0; t < n; ++t) {
    ++run;
    if (t == n - 1 || comparable(row[t].first) != comparable(row[t + 1].first)) {
      if (run > best) {
        best = run;
        *out_v = row[t].first;
        *out_i = row[t].second;
      }
      run = 0;
    }
  }
}

// rows: (R, n) contiguous; out_values / out_indices: R contiguous.
void mode_rows_cpu(const Tensor& rows, const Tensor& out_values, const Tensor& out_indices) {
  const int64_t n = rows.size(1);
  EMBER_DISPATCH_ALL_TYPES_AND_HALF_AND_BOOL(rows.dtype(), "mode", [&] {
    const scalar_t* in = static_cast<const scalar_t*>(rows.data_ptr());
    scalar_t* out_v = static_cast<scalar_t*>(out_values.data_ptr());
    int64_t* out_i = out_indices.data_ptr<int64_t>();
    parallel_for(0, rows.size(0), std::max<int64_t>(1, GRAIN_SIZE / std::max<int64_t>(n, 1)),
                 [&](int64_t rb, int64_t re) {
                   for (int64_t r = rb; r < re; ++r) mode_of_row(in + r * n, n, out_v + r, out_i + r);
                 });
  });
}

}  // namespace pytorch_ties

std::tuple<Tensor, Tensor> select_rows(const char* op, Pick kind, const Tensor& self, int64_t dim, int64_t k,
                                       bool keepdim, const Tensor& values, const Tensor& indices) {
  EMBER_CHECK(kind == Pick::Mode || self.dtype() != ScalarType::Bool, op, ": not implemented for dtype bool");
  const int64_t d = c10::maybe_wrap_dim(dim, self.dim());
  if (self.dim() > 0) {
    EMBER_CHECK_INDEX(self.size(d) != 0, op, "(): Expected reduction dim ", d, " to have non-zero size.");
  }
  check_dtype(op, values, self.dtype());
  check_dtype(op, indices, ScalarType::Long);
  const DimVector shape = shape_without(self, self.dim() > 0 ? d : -1, keepdim);
  auto v = prepare_output(values, shape, self.dtype(), self.dtype(), self);
  auto i = prepare_output(indices, shape, ScalarType::Long, ScalarType::Long, self);
  if (v.buffer.numel() > 0 && (kind == Pick::Kth || (kind == Pick::Mode && self.is_cpu()))) {
    // unsorted rows: the reduced dim last, the others in order, one contiguous (scratch)
    // row per output element
    DimVector perm;
    for (int64_t t = 0; t < self.dim(); ++t)
      if (t != d) perm.push_back(t);
    if (self.dim() > 0) perm.push_back(d);
    const int64_t n = self.dim() > 0 ? self.size(d) : 1;
    SortedRows rows;
    rows.n = n;
    rows.rows = self.numel() / n;
    rows.values = (self.dim() > 0 ? self.permute(perm) : self).contiguous().reshape({rows.rows, n});
    if (rows.values.is_alias_of(self)) rows.values = rows.values.clone();  // select_kth works in place
    if (kind == Pick::Kth) {
      rows.indices = empty({rows.rows, n}, ScalarType::Long, self.device());
      pick_sorted_stub(self.device().type, kind, rows, k, v.buffer, i.buffer);
    } else {
      pytorch_ties::mode_rows_cpu(rows.values, v.buffer, i.buffer);
    }
  } else if (v.buffer.numel() > 0) {
    const SortedRows s = sort_rows(self, d, false, true);
    pick_sorted_stub(self.device().type, kind, s, k, v.buffer, i.buffer);
  }
  v.finish();
  i.finish();
  return {v.result, i.result};
}

Tensor select_all(const char* op, Pick kind, const Tensor& self) {
  EMBER_CHECK(self.dtype() != ScalarType::Bool, op, ": not implemented for dtype bool");
  if (self.numel() == 0) {
    EMBER_CHECK(c10::isFloatingType(self.dtype()), op, "(): cannot compute the ", op, " of an empty tensor of dtype ",
                c10::toPythonName(self.dtype()));
    return full({}, std::numeric_limits<double>::quiet_NaN(), self.dtype(), self.device());
  }
  return std::get<0>(select_rows(op, kind, self.reshape({self.numel()}), 0, 0, false, Tensor(), Tensor()));
}

}  // namespace

std::tuple<Tensor, Tensor> sort_out(const Tensor& self, int64_t dim, bool descending, std::optional<bool> stable,
                                    const Tensor& values, const Tensor& indices) {
  const int64_t d = c10::maybe_wrap_dim(dim, self.dim());
  check_dtype("sort", values, self.dtype());
  check_dtype("sort", indices, ScalarType::Long);
  auto v = prepare_output(values, self.sizes(), self.dtype(), self.dtype(), self);
  auto i = prepare_output(indices, self.sizes(), ScalarType::Long, ScalarType::Long, self);
  // bool bytes 2..255 (uint8.view(bool)) sort as true: a 0/1 copy first
  sort_into(self.dtype() == ScalarType::Bool ? self.clone() : self, d, descending, v.buffer, i.buffer);
  v.finish();
  i.finish();
  return {v.result, i.result};
}

Tensor argsort(const Tensor& self, int64_t dim, bool descending, bool stable) {
  const int64_t d = c10::maybe_wrap_dim(dim, self.dim());
  Tensor indices = empty(self.sizes(), ScalarType::Long, self.device());
  sort_into(self, d, descending, Tensor(), indices);
  return indices;
}

std::tuple<Tensor, Tensor> topk_out(const Tensor& self, int64_t k, int64_t dim, bool largest, bool sorted,
                                    const Tensor& values, const Tensor& indices) {
  const int64_t d = c10::maybe_wrap_dim(dim, self.dim());
  const int64_t n = self.dim() > 0 ? self.size(d) : 1;
  EMBER_CHECK(self.dtype() != ScalarType::Bool, "topk: not implemented for dtype bool");
  EMBER_CHECK(k >= 0 && k <= n, "selected index k out of range");
  check_dtype("topk", values, self.dtype());
  check_dtype("topk", indices, ScalarType::Long);
  const Tensor x = self.dim() > 0 ? self : self.unsqueeze(0);
  DimVector shape(x.sizes());
  shape[d] = k;
  // the first k of the rows sorted in the requested direction (stable: ties in input order)
  const SortedRows s = sort_rows(x, d, largest, true);
  Tensor tv = s.values.narrow(d, 0, k), ti = s.indices.narrow(d, 0, k);
  if (self.dim() == 0 && k == 1) {
    shape.clear();
    tv = tv.squeeze(0);
    ti = ti.squeeze(0);
  }
  auto v = prepare_output(values, shape, self.dtype(), self.dtype(), self);
  auto i = prepare_output(indices, shape, ScalarType::Long, ScalarType::Long, self);
  v.buffer.copy_(tv);
  i.buffer.copy_(ti);
  v.finish();
  i.finish();
  return {v.result, i.result};
}

std::tuple<Tensor, Tensor> kthvalue_out(const Tensor& self, int64_t k, int64_t dim, bool keepdim, const Tensor& values,
                                        const Tensor& indices) {
  const int64_t d = c10::maybe_wrap_dim(dim, self.dim());
  const int64_t n = self.dim() > 0 ? self.size(d) : 1;
  EMBER_CHECK(k >= 1 && k <= n, "kthvalue(): selected number k out of range for dimension ", d);
  for (const Tensor* out : {&values, &indices}) {
    EMBER_CHECK(!out->defined() || out->numel() == 0 || !out->is_alias_of(self),
                "kthvalue(): unsupported operation: some elements of the input tensor and the written-to tensor "
                "refer to a single memory location. Please clone() the tensor before performing the operation.");
  }
  return select_rows("kthvalue", Pick::Kth, self, d, k - 1, keepdim, values, indices);
}

Tensor median_all(const Tensor& self) { return select_all("median", Pick::Median, self); }

std::tuple<Tensor, Tensor> median_dim_out(const Tensor& self, int64_t dim, bool keepdim, const Tensor& values,
                                          const Tensor& indices) {
  return select_rows("median", Pick::Median, self, dim, 0, keepdim, values, indices);
}

Tensor nanmedian_all(const Tensor& self) { return select_all("nanmedian", Pick::NanMedian, self); }

std::tuple<Tensor, Tensor> nanmedian_dim_out(const Tensor& self, int64_t dim, bool keepdim, const Tensor& values,
                                             const Tensor& indices) {
  return select_rows("nanmedian", Pick::NanMedian, self, dim, 0, keepdim, values, indices);
}

std::tuple<Tensor, Tensor> mode_out(const Tensor& self, int64_t dim, bool keepdim, const Tensor& values,
                                    const Tensor& indices) {
  return select_rows("mode", Pick::Mode, self, dim, 0, keepdim, values, indices);
}

}  // namespace ember::at::native
