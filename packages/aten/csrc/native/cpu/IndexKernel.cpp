// CPU kernels of the indexing operators (see ../Indexing.h for the restride scheme).
// They move elements, never compute on them, so they dispatch on the element size
// (1/2/4/8 bytes) rather than on the dtype: four copies of each loop, not ten.
#include <cstring>
#include <vector>

#include <ember/aten/Parallel.h>
#include <ember/aten/TensorIterator.h>

#include "../Indexing.h"

namespace ember::at::native {
inline namespace CPU_CAPABILITY {
namespace {

inline int64_t load_index(const char* p) { return *reinterpret_cast<const int64_t*>(p); }

// Copies n elements of type T (strided; stride 0 on the source repeats one value).
template <typename T>
inline void copy_run(char* dst, int64_t ds, const char* src, int64_t ss, int64_t n) {
  constexpr int64_t sz = static_cast<int64_t>(sizeof(T));
  if (ds == sz && ss == sz) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(T));
  } else if (ss == 0) {
    const T v = *reinterpret_cast<const T*>(src);
    for (int64_t i = 0; i < n; ++i) *reinterpret_cast<T*>(dst + i * ds) = v;
  } else {
    for (int64_t i = 0; i < n; ++i) *reinterpret_cast<T*>(dst + i * ds) = *reinterpret_cast<const T*>(src + i * ss);
  }
}

// The index loop. Put=false: out[i] = src[i + off(i)] (gather); Put=true:
// dst[i + off(i)] = values[i] (scatter). Single: exactly one index tensor.
// Strides and the indexed dims are copied into locals first: stores of T may
// alias int64 memory as far as the compiler knows, which would reload them per element.
template <typename T, bool Put, bool Single>
struct IndexLoop {
  const IndexedDims& dims;
  IndexMode mode;
  int nt;

  void operator()(char** data, const int64_t* strides, int64_t n, int64_t m) const {
    const int k = static_cast<int>(dims.size());
    c10::SmallVector<IndexedDim, 8> d(dims.ref());
    c10::SmallVector<int64_t, 8> is(k), js(k);  // index strides along dim 0 / dim 1
    c10::SmallVector<const char*, 8> ib(k);
    bool index_constant = true;  // every index has stride 0 along the inner dim: one offset per row
    for (int q = 0; q < k; ++q) {
      is[q] = strides[2 + q];
      js[q] = strides[nt + 2 + q];
      index_constant &= is[q] == 0;
    }
    const int64_t s0 = strides[0], s1 = strides[1], t0 = strides[nt], t1 = strides[nt + 1];
    const IndexMode md = mode;
    auto offset_at = [&](int64_t i) -> int64_t {
      if constexpr (Single) {
        return index_offset(load_index(ib[0] + i * is[0]), d[0], md);
      } else {
        int64_t off = 0;
        for (int q = 0; q < k; ++q) off += index_offset(load_index(ib[q] + i * is[q]), d[q], md);
        return off;
      }
    };
    for (int64_t j = 0; j < m; ++j) {
      char* a = data[0] + j * t0;
      char* b = data[1] + j * t1;
      for (int q = 0; q < k; ++q) ib[q] = data[2 + q] + j * js[q];
      if (index_constant && n > 1) {
        const int64_t off = offset_at(0);
        if constexpr (Put) {
          copy_run<T>(a + off, s0, b, s1, n);
        } else {
          copy_run<T>(a, s0, b + off, s1, n);
        }
        continue;
      }
      if constexpr (Single) {
        // the common x[idx] / gather / scatter shape: contiguous side, stride-0 indexed side, int64 index
        const int64_t* ip = reinterpret_cast<const int64_t*>(ib[0]);
        const IndexedDim d0 = d[0];
        if (is[0] == 8 && !Put && s0 == static_cast<int64_t>(sizeof(T)) && s1 == 0) {
          T* out = reinterpret_cast<T*>(a);
          for (int64_t i = 0; i < n; ++i) out[i] = *reinterpret_cast<const T*>(b + index_offset(ip[i], d0, md));
          continue;
        }
        if (is[0] == 8 && Put && s0 == 0 && s1 == static_cast<int64_t>(sizeof(T))) {
          const T* in = reinterpret_cast<const T*>(b);
          for (int64_t i = 0; i < n; ++i) *reinterpret_cast<T*>(a + index_offset(ip[i], d0, md)) = in[i];
          continue;
        }
      }
      for (int64_t i = 0; i < n; ++i) {
        const int64_t off = offset_at(i);
        if constexpr (Put) {
          *reinterpret_cast<T*>(a + i * s0 + off) = *reinterpret_cast<const T*>(b + i * s1);
        } else {
          *reinterpret_cast<T*>(a + i * s0) = *reinterpret_cast<const T*>(b + i * s1 + off);
        }
      }
    }
  }
};

template <typename T, bool Put>
void run_index(TensorIterator& iter, const IndexedDims& dims, IndexMode mode) {
  if (dims.size() == 1) {
    iter.for_each(IndexLoop<T, Put, true>{dims, mode, iter.ntensors()});
  } else {
    iter.for_each(IndexLoop<T, Put, false>{dims, mode, iter.ntensors()});
  }
}

template <bool Put>
void index_kernel_impl(TensorIterator& iter, const IndexedDims& dims, IndexMode mode) {
  switch (c10::elementSize(iter.dtype(0))) {
    case 1:
      return run_index<uint8_t, Put>(iter, dims, mode);
    case 2:
      return run_index<uint16_t, Put>(iter, dims, mode);
    case 4:
      return run_index<uint32_t, Put>(iter, dims, mode);
    default:
      return run_index<uint64_t, Put>(iter, dims, mode);
  }
}

void index_kernel(TensorIterator& iter, const IndexedDims& dims, IndexMode mode, const char*) {
  index_kernel_impl<false>(iter, dims, mode);
}

void index_put_kernel(TensorIterator& iter, const IndexedDims& dims, IndexMode mode, const char*) {
  index_kernel_impl<true>(iter, dims, mode);
}

// ---- masked_fill ----------------------------------------------------------------

// The element kept where the mask byte is 0, v elsewhere (any nonzero byte is true), as bit
// operations on the element's bytes: no branch, which a random mask (relu's backward, a
// dropout-like pattern) mispredicts on every other element (~20x slower), and a loop GCC
// vectorizes.
template <typename T>
inline T blend_bits(T old, uint8_t mask, T v) {
  const T keep = static_cast<T>(static_cast<T>(mask != 0) - T(1));  // all ones where mask == 0
  return static_cast<T>((old & keep) | (v & static_cast<T>(~keep)));
}

template <typename T>
void masked_fill_impl(TensorIterator& iter, const void* value) {
  T v;
  std::memcpy(&v, value, sizeof(T));
  iter.for_each([v](char** data, const int64_t* strides, int64_t n, int64_t m) {
    for (int64_t j = 0; j < m; ++j) {
      char* out = data[0] + j * strides[2];
      const char* mask = data[1] + j * strides[3];
      if (strides[0] == static_cast<int64_t>(sizeof(T)) && strides[1] == 1) {
        T* __restrict o = reinterpret_cast<T*>(out);
        const uint8_t* __restrict mk = reinterpret_cast<const uint8_t*>(mask);
        for (int64_t i = 0; i < n; ++i) o[i] = blend_bits(o[i], mk[i], v);
      } else {
        for (int64_t i = 0; i < n; ++i) {
          if (mask[i * strides[1]]) *reinterpret_cast<T*>(out + i * strides[0]) = v;
        }
      }
    }
  });
}

void masked_fill_kernel(TensorIterator& iter, const void* value) {
  switch (c10::elementSize(iter.dtype(0))) {
    case 1:
      return masked_fill_impl<uint8_t>(iter, value);
    case 2:
      return masked_fill_impl<uint16_t>(iter, value);
    case 4:
      return masked_fill_impl<uint32_t>(iter, value);
    default:
      return masked_fill_impl<uint64_t>(iter, value);
  }
}

// ---- row-major walks: masked_select, masked_scatter, nonzero ------------------------
// These ops define their output by the logical (row-major) order of the elements,
// which TensorIterator does not keep (it reorders dims by stride). RowMajor walks
// up to two same-shaped tensors in that order, one innermost-dim run at a time.
// Parallel versions split the flat range into chunks, count per chunk, prefix-sum
// the counts, then let each chunk write its own slice of the output.

struct RowMajor {
  DimVector sizes;       // outermost first
  DimVector strides[2];  // bytes
  int nops = 1;
  int64_t numel = 1;
};

// Merges neighbouring dims that every operand walks contiguously (coalesce=false
// keeps the shape, for nonzero, which reports coordinates).
RowMajor make_row_major(const Tensor& a, const Tensor* b, bool coalesce) {
  RowMajor r;
  r.nops = b ? 2 : 1;
  const int64_t nd = a.dim();
  for (int64_t d = 0; d < nd; ++d) {
    if (coalesce && a.size(d) == 1) continue;
    r.sizes.push_back(a.size(d));
    r.strides[0].push_back(a.stride(d) * static_cast<int64_t>(a.itemsize()));
    if (b) r.strides[1].push_back(b->stride(d) * static_cast<int64_t>(b->itemsize()));
  }
  r.numel = a.numel();
  if (!coalesce || r.sizes.size() < 2) return r;
  DimVector sz, st0, st1;
  sz.push_back(r.sizes[0]);
  st0.push_back(r.strides[0][0]);
  if (b) st1.push_back(r.strides[1][0]);
  for (size_t d = 1; d < r.sizes.size(); ++d) {
    const size_t last = sz.size() - 1;
    bool merge = st0[last] == r.strides[0][d] * r.sizes[d];
    if (b) merge = merge && st1[last] == r.strides[1][d] * r.sizes[d];
    if (merge) {
      sz[last] *= r.sizes[d];
      st0[last] = r.strides[0][d];
      if (b) st1[last] = r.strides[1][d];
    } else {
      sz.push_back(r.sizes[d]);
      st0.push_back(r.strides[0][d]);
      if (b) st1.push_back(r.strides[1][d]);
    }
  }
  r.sizes = sz;
  r.strides[0] = st0;
  r.strides[1] = st1;
  return r;
}

// f(p0, p1, n, s0, s1, coords): one run of n elements along the innermost dim,
// starting at the row-major coordinates `coords` (last one: the run's first index).
template <typename F>
void walk(const RowMajor& r, char* base0, char* base1, int64_t begin, int64_t end, const F& f) {
  const int64_t nd = static_cast<int64_t>(r.sizes.size());
  if (begin >= end) return;
  if (nd == 0) {
    f(base0, base1, int64_t{1}, int64_t{0}, int64_t{0}, static_cast<const int64_t*>(nullptr));
    return;
  }
  DimVector ctr(nd, 0);
  int64_t rem = begin;
  for (int64_t d = nd - 1; d >= 0; --d) {
    ctr[d] = rem % r.sizes[d];
    rem /= r.sizes[d];
  }
  const int64_t inner = r.sizes[nd - 1];
  const int64_t s0 = r.strides[0][nd - 1];
  const int64_t s1 = r.nops > 1 ? r.strides[1][nd - 1] : 0;
  int64_t pos = begin;
  while (pos < end) {
    char* p0 = base0;
    char* p1 = base1;
    for (int64_t d = 0; d < nd; ++d) {
      p0 += ctr[d] * r.strides[0][d];
      if (r.nops > 1) p1 += ctr[d] * r.strides[1][d];
    }
    const int64_t n = std::min(inner - ctr[nd - 1], end - pos);
    f(p0, p1, n, s0, s1, ctr.data());
    pos += n;
    ctr[nd - 1] += n;
    for (int64_t d = nd - 1; d > 0 && ctr[d] >= r.sizes[d]; --d) {
      ctr[d] = 0;
      ctr[d - 1]++;
    }
  }
}

int64_t num_chunks(int64_t n) {
  if (n <= GRAIN_SIZE || in_parallel_region()) return 1;
  return std::max<int64_t>(1, std::min<int64_t>(get_num_threads(), divup(n, GRAIN_SIZE)));
}

inline int64_t count_run(const char* m, int64_t n, int64_t s) {
  int64_t c = 0;
  if (s == 1) {
    const uint8_t* mm = reinterpret_cast<const uint8_t*>(m);
    for (int64_t i = 0; i < n; ++i) c += mm[i] != 0;
  } else {
    for (int64_t i = 0; i < n; ++i) c += m[i * s] != 0;
  }
  return c;
}

// Per-chunk counts of the set mask bytes (operand 1), as exclusive prefix sums:
// offsets[c] is where chunk c starts writing, offsets.back() the total.
std::vector<int64_t> chunk_offsets(const RowMajor& r, char* b0, char* b1, int64_t nchunks, int64_t chunk) {
  std::vector<int64_t> offsets(nchunks + 1, 0);
  parallel_for(0, nchunks, 1, [&](int64_t cb, int64_t ce) {
    for (int64_t c = cb; c < ce; ++c) {
      int64_t cnt = 0;
      walk(r, b0, b1, c * chunk, std::min(r.numel, (c + 1) * chunk),
           [&](char*, char* p1, int64_t n, int64_t, int64_t s1, const int64_t*) { cnt += count_run(p1, n, s1); });
      offsets[c + 1] = cnt;
    }
  });
  for (int64_t c = 0; c < nchunks; ++c) offsets[c + 1] += offsets[c];
  return offsets;
}

// Compaction without a branch per element (a random mask would mispredict half the
// time): every element is written to a small buffer and the cursor moves by the
// mask bit; each full block is then copied out.
constexpr int64_t kBlock = 256;

template <typename T>
Tensor masked_select_impl(const Tensor& self, const Tensor& mask) {
  RowMajor r = make_row_major(self, &mask, true);
  char* b0 = static_cast<char*>(self.data_ptr());
  char* b1 = static_cast<char*>(mask.data_ptr());
  const int64_t nchunks = num_chunks(r.numel);
  const int64_t chunk = divup(std::max<int64_t>(r.numel, 1), nchunks);
  const std::vector<int64_t> offsets = chunk_offsets(r, b0, b1, nchunks, chunk);
  Tensor out = empty({offsets.back()}, self.dtype(), self.device());
  T* o = static_cast<T*>(out.data_ptr());
  parallel_for(0, nchunks, 1, [&](int64_t cb, int64_t ce) {
    T buf[kBlock + 1];
    for (int64_t c = cb; c < ce; ++c) {
      int64_t k = offsets[c];
      walk(r, b0, b1, c * chunk, std::min(r.numel, (c + 1) * chunk),
           [&](char* p0, char* p1, int64_t n, int64_t s0, int64_t s1, const int64_t*) {
             for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
               const int64_t len = std::min(kBlock, n - i0);
               int64_t kb = 0;
               if (s0 == static_cast<int64_t>(sizeof(T)) && s1 == 1) {
                 const T* src = reinterpret_cast<const T*>(p0) + i0;
                 const uint8_t* mk = reinterpret_cast<const uint8_t*>(p1) + i0;
                 for (int64_t i = 0; i < len; ++i) {
                   buf[kb] = src[i];
                   kb += mk[i] != 0;
                 }
               } else {
                 for (int64_t i = i0; i < i0 + len; ++i) {
                   buf[kb] = *reinterpret_cast<const T*>(p0 + i * s0);
                   kb += p1[i * s1] != 0;
                 }
               }
               std::memcpy(o + k, buf, static_cast<size_t>(kb) * sizeof(T));
               k += kb;
             }
           });
    }
  });
  return out;
}

Tensor masked_select_kernel(const Tensor& self, const Tensor& mask) {
  switch (self.itemsize()) {
    case 1:
      return masked_select_impl<uint8_t>(self, mask);
    case 2:
      return masked_select_impl<uint16_t>(self, mask);
    case 4:
      return masked_select_impl<uint32_t>(self, mask);
    default:
      return masked_select_impl<uint64_t>(self, mask);
  }
}

template <typename T>
void masked_scatter_impl(const Tensor& self, const Tensor& mask, const Tensor& source) {
  RowMajor r = make_row_major(self, &mask, true);
  char* b0 = static_cast<char*>(self.data_ptr());
  char* b1 = static_cast<char*>(mask.data_ptr());
  const int64_t nchunks = num_chunks(r.numel);
  const int64_t chunk = divup(std::max<int64_t>(r.numel, 1), nchunks);
  const std::vector<int64_t> offsets = chunk_offsets(r, b0, b1, nchunks, chunk);
  // Checked before anything is written.
  EMBER_CHECK(offsets.back() <= source.numel(),
              "masked_scatter_: Number of elements of source < number of ones in mask (", source.numel(), " < ",
              offsets.back(), ")");
  const T* src = static_cast<const T*>(source.data_ptr());
  parallel_for(0, nchunks, 1, [&](int64_t cb, int64_t ce) {
    for (int64_t c = cb; c < ce; ++c) {
      int64_t k = offsets[c];
      walk(r, b0, b1, c * chunk, std::min(r.numel, (c + 1) * chunk),
           [&](char* p0, char* p1, int64_t n, int64_t s0, int64_t s1, const int64_t*) {
             for (int64_t i = 0; i < n; ++i) {
               if (p1[i * s1]) *reinterpret_cast<T*>(p0 + i * s0) = src[k++];
             }
           });
    }
  });
}

void masked_scatter_kernel(const Tensor& self, const Tensor& mask, const Tensor& source) {
  switch (self.itemsize()) {
    case 1:
      return masked_scatter_impl<uint8_t>(self, mask, source);
    case 2:
      return masked_scatter_impl<uint16_t>(self, mask, source);
    case 4:
      return masked_scatter_impl<uint32_t>(self, mask, source);
    default:
      return masked_scatter_impl<uint64_t>(self, mask, source);
  }
}

// nonzero: an element is non-zero when its bits, sign bit cleared for floating
// types (-0.0 is zero; NaN is not), are not all zero. No per-dtype loop needed.
template <typename T>
Tensor nonzero_impl(const Tensor& self, T value_mask) {
  RowMajor r = make_row_major(self, nullptr, false);
  const int64_t nd = self.dim();
  char* b0 = static_cast<char*>(self.data_ptr());
  const int64_t nchunks = num_chunks(r.numel);
  const int64_t chunk = divup(std::max<int64_t>(r.numel, 1), nchunks);
  auto is_set = [value_mask](const char* p) { return (*reinterpret_cast<const T*>(p) & value_mask) != 0; };
  std::vector<int64_t> offsets(nchunks + 1, 0);
  parallel_for(0, nchunks, 1, [&](int64_t cb, int64_t ce) {
    for (int64_t c = cb; c < ce; ++c) {
      int64_t cnt = 0;
      walk(r, b0, nullptr, c * chunk, std::min(r.numel, (c + 1) * chunk),
           [&](char* p0, char*, int64_t n, int64_t s0, int64_t, const int64_t*) {
             if (s0 == static_cast<int64_t>(sizeof(T))) {
               const T* v = reinterpret_cast<const T*>(p0);
               for (int64_t i = 0; i < n; ++i) cnt += (v[i] & value_mask) != 0;
             } else {
               for (int64_t i = 0; i < n; ++i) cnt += is_set(p0 + i * s0);
             }
           });
      offsets[c + 1] = cnt;
    }
  });
  for (int64_t c = 0; c < nchunks; ++c) offsets[c + 1] += offsets[c];
  Tensor out = empty({offsets.back(), nd}, ScalarType::Long, self.device());
  if (nd == 0 || offsets.back() == 0) return out;
  int64_t* o = static_cast<int64_t*>(out.data_ptr());
  parallel_for(0, nchunks, 1, [&](int64_t cb, int64_t ce) {
    int64_t pos[kBlock + 1];  // positions along the run, compacted without branches
    for (int64_t c = cb; c < ce; ++c) {
      int64_t* w = o + offsets[c] * nd;
      walk(r, b0, nullptr, c * chunk, std::min(r.numel, (c + 1) * chunk),
           [&](char* p0, char*, int64_t n, int64_t s0, int64_t, const int64_t* ctr) {
             for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
               const int64_t len = std::min(kBlock, n - i0);
               int64_t kb = 0;
               for (int64_t i = i0; i < i0 + len; ++i) {
                 pos[kb] = i;
                 kb += is_set(p0 + i * s0);
               }
               if (nd == 1) {
                 for (int64_t q = 0; q < kb; ++q) w[q] = ctr[0] + pos[q];
                 w += kb;
                 continue;
               }
               for (int64_t q = 0; q < kb; ++q) {
                 for (int64_t dd = 0; dd < nd - 1; ++dd) w[dd] = ctr[dd];
                 w[nd - 1] = ctr[nd - 1] + pos[q];
                 w += nd;
               }
             }
           });
    }
  });
  return out;
}

Tensor nonzero_kernel(const Tensor& self) {
  const bool fp = c10::isFloatingType(self.dtype());
  switch (self.itemsize()) {
    case 1:
      return nonzero_impl<uint8_t>(self, 0xFF);
    case 2:
      return nonzero_impl<uint16_t>(self, fp ? 0x7FFF : 0xFFFF);
    case 4:
      return nonzero_impl<uint32_t>(self, fp ? 0x7FFFFFFFu : 0xFFFFFFFFu);
    default:
      return nonzero_impl<uint64_t>(self, fp ? 0x7FFFFFFFFFFFFFFFull : ~0ull);
  }
}

}  // namespace
}  // namespace CPU_CAPABILITY

REGISTER_DISPATCH(index_stub, &index_kernel);
REGISTER_DISPATCH(index_put_stub, &index_put_kernel);
REGISTER_DISPATCH(masked_fill_stub, &masked_fill_kernel);
REGISTER_DISPATCH(masked_select_stub, &masked_select_kernel);
REGISTER_DISPATCH(masked_scatter_stub, &masked_scatter_kernel);
REGISTER_DISPATCH(nonzero_stub, &nonzero_kernel);

}  // namespace ember::at::native
