// Transformations that move elements around: repeat, repeat_interleave, flip, roll,
// tril/triu, diag, diag_embed, trace. (tile, fliplr/flipud, rot90, diagflat are
// Python composites in ember/aten/native/shape.py.)
//
// Moving elements does not depend on their type, only on their size: the raw CPU
// loops here dispatch on the element size (1, 2, 4, 8 bytes), so each exists four
// times rather than ten, and this file is compiled once (nothing here gains from
// AVX). Where a loop is not needed, the kernels are views plus copy_, which works on
// any device.
#include <cstring>

#include <ember/aten/Dispatch.h>
#include <ember/aten/Parallel.h>
#include <ember/aten/ShapeUtils.h>
#include <ember/aten/TensorIterator.h>

#include "TensorFactories.h"
#include "TensorTransformations.h"

namespace ember::at::native {

Tensor index_select_out(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& out);  // Indexing.cpp

namespace {

// dst[i...] = src[i...] over `sizes`, both with signed byte strides; dims are visited
// with the destination's smallest stride innermost. Parallel over rows.
void strided_copy(char* dst, IntArrayRef dst_strides, const char* src, IntArrayRef src_strides, IntArrayRef sizes,
                  int64_t itemsize) {
  const int64_t nd = static_cast<int64_t>(sizes.size());
  DimVector order(nd);
  for (int64_t d = 0; d < nd; ++d) order[d] = d;
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return std::abs(dst_strides[a]) > std::abs(dst_strides[b]); });
  DimVector sz(nd), ds(nd), ss(nd);
  for (int64_t d = 0; d < nd; ++d) {
    sz[d] = sizes[order[d]];
    ds[d] = dst_strides[order[d]];
    ss[d] = src_strides[order[d]];
  }
  const int64_t inner = nd == 0 ? 1 : sz[nd - 1];
  const int64_t d_in = nd == 0 ? 0 : ds[nd - 1];
  const int64_t s_in = nd == 0 ? 0 : ss[nd - 1];
  int64_t rows = 1;
  for (int64_t d = 0; d + 1 < nd; ++d) rows *= sz[d];
  if (rows == 0 || inner == 0) return;
  dispatch_elem_size(itemsize, [&](auto tag) {
    using T = decltype(tag);
    const int64_t grain = std::max<int64_t>(1, GRAIN_SIZE / std::max<int64_t>(inner, 1));
    parallel_for(0, rows, grain, [&](int64_t begin, int64_t end) {
      DimVector counter(std::max<int64_t>(nd - 1, 0), 0);
      int64_t rem = begin;
      for (int64_t d = nd - 2; d >= 0; --d) {
        counter[d] = rem % sz[d];
        rem /= sz[d];
      }
      for (int64_t r = begin; r < end; ++r) {
        char* o = dst;
        const char* i = src;
        for (int64_t d = 0; d + 1 < nd; ++d) {
          o += counter[d] * ds[d];
          i += counter[d] * ss[d];
        }
        if (d_in == itemsize && s_in == itemsize) {
          std::memcpy(o, i, static_cast<size_t>(inner * itemsize));
        } else {
          for (int64_t k = 0; k < inner; ++k) {
            *reinterpret_cast<T*>(o + k * d_in) = *reinterpret_cast<const T*>(i + k * s_in);
          }
        }
        for (int64_t d = nd - 2; d >= 0; --d) {
          if (++counter[d] < sz[d]) break;
          counter[d] = 0;
        }
      }
    });
  });
}

DimVector byte_strides(const Tensor& t) {
  DimVector s(t.strides());
  for (auto& v : s) v *= static_cast<int64_t>(t.itemsize());
  return s;
}

// out = self gathered along dim: out.select(dim, j) = self.select(dim, index[j]).
// CPU: one memcpy per (outer index, j) on contiguous data.
Tensor index_select_rows(const Tensor& self, int64_t dim, const std::vector<int64_t>& index) {
  DimVector shape(self.sizes());
  shape[dim] = static_cast<int64_t>(index.size());
  Tensor out = empty(shape, self.dtype(), self.device());
  if (out.numel() == 0) return out;
  if (!self.is_cpu()) {
    // one gather on the device (not one copy launch per output row)
    Tensor idx = empty({static_cast<int64_t>(index.size())}, ScalarType::Long, Device(DeviceType::CPU));
    std::memcpy(idx.data_ptr(), index.data(), index.size() * sizeof(int64_t));
    return index_select_out(self, dim, idx.to(self.device()), out);
  }
  const Tensor src = self.contiguous();
  int64_t outer = 1, inner = static_cast<int64_t>(src.itemsize());
  for (int64_t d = 0; d < dim; ++d) outer *= src.size(d);
  for (int64_t d = dim + 1; d < src.dim(); ++d) inner *= src.size(d);
  const int64_t n_in = src.size(dim), n_out = shape[dim];
  const char* in = static_cast<const char*>(src.data_ptr());
  char* o = static_cast<char*>(out.data_ptr());
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / inner);
  parallel_for(0, outer * n_out, grain, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      const int64_t i = k / n_out, j = k % n_out;
      std::memcpy(o + k * inner, in + (i * n_in + index[j]) * inner, static_cast<size_t>(inner));
    }
  });
  return out;
}

std::vector<int64_t> read_repeats(const Tensor& repeats) {
  EMBER_CHECK(repeats.dtype() == ScalarType::Long || repeats.dtype() == ScalarType::Int,
              "repeats has to be Long or Int tensor");
  const Tensor r = repeats.to(Device(DeviceType::CPU)).to(ScalarType::Long).contiguous();
  const int64_t* p = static_cast<const int64_t*>(r.data_ptr());
  std::vector<int64_t> out(p, p + r.numel());
  for (int64_t v : out) EMBER_CHECK(v >= 0, "repeats can not be negative");
  return out;
}

void check_output_size(std::optional<int64_t> output_size, int64_t total) {
  if (output_size) {
    EMBER_CHECK(*output_size == total,
                "repeat_interleave: allocated size does not match required size (output_size=", *output_size,
                ", required ", total, ")");
  }
}

}  // namespace

// ---- repeat ------------------------------------------------------------------------

Tensor repeat(const Tensor& self, IntArrayRef repeats) {
  const int64_t nd = static_cast<int64_t>(repeats.size());
  EMBER_CHECK(nd >= self.dim(),
              "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor");
  DimVector padded(nd - self.dim(), 1), target(nd);
  for (int64_t s : self.sizes()) padded.push_back(s);
  for (int64_t d = 0; d < nd; ++d) {
    EMBER_CHECK(repeats[d] >= 0, "Trying to create tensor with negative dimension ", repeats[d], ": ", repeats);
    EMBER_CHECK(!__builtin_mul_overflow(padded[d], repeats[d], &target[d]), "repeat: the size ", padded[d],
                " repeated ", repeats[d], " times overflows int64");
  }
  Tensor result = empty(target, self.dtype(), self.device());
  if (result.numel() == 0) return result;
  // result viewed as [r0, s0, r1, s1, ...] receives self broadcast over the r dims.
  const DimVector res_strides = c10::contiguous_strides(target);
  DimVector sizes2, dst2, src2;
  const int64_t lead = nd - self.dim();
  for (int64_t d = 0; d < nd; ++d) {
    sizes2.push_back(repeats[d]);
    sizes2.push_back(padded[d]);
    dst2.push_back(res_strides[d] * padded[d]);
    dst2.push_back(res_strides[d]);
    src2.push_back(0);
    src2.push_back(d < lead ? 0 : self.stride(d - lead));
  }
  result.as_strided(sizes2, dst2).copy_(self.as_strided(sizes2, src2));
  return result;
}

// ---- repeat_interleave ---------------------------------------------------------------

Tensor repeat_interleave_self_int(const Tensor& self, int64_t repeats, std::optional<int64_t> dim,
                                  std::optional<int64_t> output_size) {
  EMBER_CHECK(repeats >= 0, "repeats can not be negative");
  const Tensor input = dim ? self : self.reshape({-1});
  const int64_t d = c10::maybe_wrap_dim(dim.value_or(0), input.dim());
  if (input.dim() == 0) {  // a 0-dim input with dim=0 behaves as a 1-element vector
    return repeat_interleave_self_int(input.reshape({1}), repeats, 0, output_size);
  }
  check_output_size(output_size, input.size(d) * repeats);
  DimVector expanded(input.sizes());
  expanded.insert(expanded.begin() + d + 1, repeats);
  DimVector final_shape(input.sizes());
  final_shape[d] *= repeats;
  Tensor result = empty(expanded, input.dtype(), input.device());
  if (result.numel() > 0) result.copy_(input.unsqueeze(d + 1).expand(expanded));
  return result.view(final_shape);
}

Tensor repeat_interleave_self_tensor(const Tensor& self, const Tensor& repeats, std::optional<int64_t> dim,
                                     std::optional<int64_t> output_size) {
  EMBER_CHECK(repeats.dim() <= 1, "repeats must be 0-dim or 1-dim tensor");
  const std::vector<int64_t> reps = read_repeats(repeats);
  if (reps.size() == 1) {
    // a 0-dim or 1-element repeats applies to every element (PyTorch broadcasts it)
    return repeat_interleave_self_int(self, reps[0], dim, output_size);
  }
  const Tensor input = dim ? self : self.reshape({-1});
  const int64_t d = c10::maybe_wrap_dim(dim.value_or(0), input.dim());
  const int64_t n = input.dim() == 0 ? 1 : input.size(d);
  EMBER_CHECK(static_cast<int64_t>(reps.size()) == n,
              "repeats must have the same size as input along dim, but got "
              "repeats.size(0) = ",
              reps.size(), " and input.size(", d, ") = ", n);
  std::vector<int64_t> index;
  for (int64_t j = 0; j < n; ++j) index.insert(index.end(), static_cast<size_t>(reps[j]), j);
  check_output_size(output_size, static_cast<int64_t>(index.size()));
  return index_select_rows(input.dim() == 0 ? input.reshape({1}) : input, d, index);
}

// repeat_interleave(repeats): [0]*repeats[0] + [1]*repeats[1] + ..., in repeats' dtype.
Tensor repeat_interleave_indices(const Tensor& repeats, std::optional<int64_t> output_size) {
  EMBER_CHECK(repeats.dim() == 1 || repeats.dim() == 0, "repeat_interleave only accept 1D vector as repeat");
  const std::vector<int64_t> reps = read_repeats(repeats);
  int64_t total = 0;
  for (int64_t r : reps) total += r;
  check_output_size(output_size, total);
  Tensor out = empty({total}, ScalarType::Long, Device(DeviceType::CPU));
  int64_t* p = static_cast<int64_t*>(out.data_ptr());
  for (size_t j = 0; j < reps.size(); ++j) p = std::fill_n(p, reps[j], static_cast<int64_t>(j));
  return out.to(repeats.dtype()).to(repeats.device());
}

// ---- flip / roll ---------------------------------------------------------------------

Tensor flip_cpu(const Tensor& self, IntArrayRef dims) {
  const int64_t nd = self.dim();
  const DimVector wrapped = wrap_dims(dims, nd, "flip");
  Tensor out = empty_like_preserve(self, self.dtype(), self.device());
  if (self.numel() == 0) return out;
  if (nd == 0) {
    out.copy_(self);
    return out;
  }
  DimVector src_strides = byte_strides(self);
  const char* src = static_cast<const char*>(self.data_ptr());
  for (int64_t d : wrapped) {
    src += (self.size(d) - 1) * src_strides[d];
    src_strides[d] = -src_strides[d];
  }
  strided_copy(static_cast<char*>(out.data_ptr()), byte_strides(out), src, src_strides, self.sizes(),
               static_cast<int64_t>(self.itemsize()));
  return out;
}

Tensor roll(const Tensor& self, IntArrayRef shifts, IntArrayRef dims) {
  EMBER_CHECK(!shifts.empty(), "`shifts` required");
  if (dims.empty() && shifts.size() == 1) {
    Tensor flat = self.contiguous().view({-1});
    return roll(flat, shifts, {0}).view(self.sizes());
  }
  EMBER_CHECK(shifts.size() == dims.size(), "shifts and dimensions must align. shifts: ", shifts.size(),
              ", dims:", dims.size());
  const int64_t d = c10::maybe_wrap_dim(dims[0], self.dim());
  Tensor out = empty_like_preserve(self, self.dtype(), self.device());
  if (self.numel() == 0) return out;
  const int64_t n = self.size(d);
  const int64_t start = ((n - shifts[0]) % n + n) % n;  // the element that lands at index 0
  if (start == 0) {
    out.copy_(self);
  } else {
    out.narrow(d, 0, n - start).copy_(self.narrow(d, start, n - start));
    out.narrow(d, n - start, start).copy_(self.narrow(d, 0, start));
  }
  if (dims.size() > 1) return roll(out, shifts.slice(1), dims.slice(1));
  return out;
}

// ---- tril / triu -----------------------------------------------------------------------

namespace {

// Zeroes, in every matrix of t (the last two dims), the columns [lo(i), hi(i)) of row i.
template <typename Range>
void zero_columns(const Tensor& t, const Range& range) {
  const int64_t nd = t.dim();
  const int64_t rows = t.size(nd - 2), cols = t.size(nd - 1);
  const int64_t rs = t.stride(nd - 2), cs = t.stride(nd - 1);
  const int64_t isz = static_cast<int64_t>(t.itemsize());
  const int64_t batch = rows == 0 ? 0 : t.numel() / std::max<int64_t>(rows * cols, 1);
  if (t.numel() == 0) return;
  // byte offset of each matrix
  const DimVector batch_sizes(t.sizes().slice(0, nd - 2));
  const DimVector batch_strides(t.strides().slice(0, nd - 2));
  char* base = static_cast<char*>(t.data_ptr());
  parallel_for(0, batch * rows, std::max<int64_t>(1, GRAIN_SIZE / std::max<int64_t>(cols, 1)),
               [&](int64_t b, int64_t e) {
                 for (int64_t k = b; k < e; ++k) {
                   const int64_t m = k / rows, i = k % rows;
                   int64_t off = 0, rem = m;
                   for (int64_t d = static_cast<int64_t>(batch_sizes.size()) - 1; d >= 0; --d) {
                     off += (rem % batch_sizes[d]) * batch_strides[d];
                     rem /= batch_sizes[d];
                   }
                   const auto [lo, hi] = range(i, cols);
                   if (lo >= hi) continue;
                   char* row = base + (off + i * rs) * isz;
                   if (cs == 1) {
                     std::memset(row + lo * isz, 0, static_cast<size_t>((hi - lo) * isz));
                   } else {
                     for (int64_t j = lo; j < hi; ++j) std::memset(row + j * cs * isz, 0, static_cast<size_t>(isz));
                   }
                 }
               });
}

Tensor triangle_out(const Tensor& self, const Tensor& out, const char* name, bool lower, int64_t diagonal) {
  Tensor result = triangle_result(self, out, name);
  // all-zero bits are 0 in every dtype, so memset clears any element
  if (lower) {
    zero_columns(result, [diagonal](int64_t i, int64_t cols) {
      return std::make_pair(std::clamp<int64_t>(i + diagonal + 1, 0, cols), cols);
    });
  } else {
    zero_columns(result, [diagonal](int64_t i, int64_t cols) {
      return std::make_pair(int64_t{0}, std::clamp<int64_t>(i + diagonal, 0, cols));
    });
  }
  return result;
}

}  // namespace

Tensor tril_out_cpu(const Tensor& self, int64_t diagonal, const Tensor& out) {
  return triangle_out(self, out, "tril", true, diagonal);
}

Tensor triu_out_cpu(const Tensor& self, int64_t diagonal, const Tensor& out) {
  return triangle_out(self, out, "triu", false, diagonal);
}

// ---- diag, diag_embed, trace -------------------------------------------------------------

Tensor diag_out(const Tensor& self, int64_t diagonal, const Tensor& out) {
  EMBER_CHECK(self.dim() == 1 || self.dim() == 2, "diag(): Supports 1D or 2D tensors. Got ", self.dim(), "D");
  Tensor result = out;
  if (result.defined()) {
    check_out_not_alias(result, self);
    EMBER_CHECK(can_cast(self.dtype(), result.dtype()), "diag: result type ", c10::toString(self.dtype()),
                " can't be cast to the desired output type ", c10::toString(result.dtype()));
  }
  if (self.dim() == 1) {
    const int64_t n = self.size(0) + std::abs(diagonal);
    if (result.defined()) {
      resize_output(result, {n, n});
    } else {
      result = empty({n, n}, self.dtype(), self.device());
    }
    result.zero_();
    result
        .as_strided(
            {self.size(0)}, {result.stride(0) + result.stride(1)},
            result.storage_offset() + (diagonal >= 0 ? diagonal * result.stride(1) : -diagonal * result.stride(0)))
        .copy_(self);
    return result;
  }
  int64_t n;
  int64_t offset = self.storage_offset();
  if (diagonal >= 0) {
    n = std::max<int64_t>(std::min(self.size(0), self.size(1) - diagonal), 0);
    if (n > 0) offset += diagonal * self.stride(1);
  } else {
    n = std::max<int64_t>(std::min(self.size(0) + diagonal, self.size(1)), 0);
    if (n > 0) offset -= diagonal * self.stride(0);
  }
  const Tensor diag_view = self.as_strided({n}, {self.stride(0) + self.stride(1)}, offset);
  if (result.defined()) {
    resize_output(result, {n});
  } else {
    result = empty({n}, self.dtype(), self.device());
  }
  if (n > 0) result.copy_(diag_view);
  return result;
}

Tensor diag_embed(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  const int64_t nd = self.dim() + 1;
  const int64_t d1 = c10::maybe_wrap_dim(dim1, nd);
  const int64_t d2 = c10::maybe_wrap_dim(dim2, nd);
  EMBER_CHECK(d1 != d2, "diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  const int64_t last = self.dim() == 0 ? 1 : self.size(-1);
  const int64_t n = std::abs(offset) + last;
  DimVector sizes(self.sizes());
  if (!sizes.empty()) sizes.pop_back();
  sizes.insert(sizes.begin() + std::min(d1, d2), n);
  sizes.insert(sizes.begin() + std::max(d1, d2), n);
  Tensor result = at::zeros(sizes, self.dtype(), self.device());
  if (result.numel() == 0) return result;
  // the diagonal of result over (d1, d2) is a view laid out as self
  DimVector dsizes, dstrides;
  for (int64_t d = 0; d < nd; ++d) {
    if (d == d1 || d == d2) continue;
    dsizes.push_back(result.size(d));
    dstrides.push_back(result.stride(d));
  }
  dsizes.push_back(last);
  dstrides.push_back(result.stride(d1) + result.stride(d2));
  const int64_t start = offset >= 0 ? offset * result.stride(d2) : -offset * result.stride(d1);
  result.as_strided(dsizes, dstrides, start).copy_(self.dim() == 0 ? self.reshape({1}) : self);
  return result;
}

namespace {
template <typename scalar_t, typename acc_t>
void trace_impl(const Tensor& self, const Tensor& out) {
  const int64_t n = std::min(self.size(0), self.size(1));
  const int64_t step = self.stride(0) + self.stride(1);
  const scalar_t* p = static_cast<const scalar_t*>(self.data_ptr());
  acc_t acc = 0;
  for (int64_t i = 0; i < n; ++i) acc += static_cast<acc_t>(static_cast<opmath_t<scalar_t>>(p[i * step]));
  out.fill_(Scalar(acc));
}
}  // namespace

Tensor trace_cpu(const Tensor& self) {
  EMBER_CHECK(self.dim() == 2, "trace: expected a matrix, but got tensor with dim ", self.dim());
  // integral (and bool) traces are int64, as sum's
  const bool integral = c10::isIntegralType(self.dtype(), /*includeBool=*/true);
  Tensor out = empty({}, integral ? ScalarType::Long : self.dtype(), self.device());
  EMBER_DISPATCH_ALL_TYPES(self.dtype(), "trace", [&] {
    if (integral) {
      trace_impl<scalar_t, int64_t>(self, out);
    } else {
      trace_impl<scalar_t, double>(self, out);
    }
  });
  return out;
}

}  // namespace ember::at::native
