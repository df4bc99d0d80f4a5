#pragma once
// What the CUDA indexing kernels (Indexing.cu, AdvancedIndexing.cu) share: the
// geometry of a TensorIterator [dst, src, idx...] packed into one kernel argument,
// per-element operand offsets, the bounds-checked offset an element's indices
// select (see ../Indexing.h for the restride scheme), an atomic read-modify-write
// for any element type, and the per-element bodies of every kernel.
//
// The offset math and the element bodies are __host__ __device__: the test-only module
// ember_aten_testing (packages/aten/testing) runs them on the host over CPU tensors, so
// the CPU test suite checks the CUDA kernels' logic on machines without a GPU.
//
// Everything is int64 and one thread handles one element (grid-stride loop): simple
// rather than fast. The geometry is passed as a __grid_constant__ parameter, so
// reading it through a reference does not copy it to local memory.

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

#include <ember/aten/Dispatch.h>
#include <ember/aten/TensorIterator.h>

#include "../Indexing.h"
#include "CUDAUtils.cuh"

namespace ember::at::native::cuda_index {

namespace ecuda = ::ember::at::cuda;

constexpr int kMaxDims = 25;      // iteration / tensor dims (PyTorch's MAX_DIMS)
constexpr int kMaxOperands = 10;  // dst, src and up to 8 index tensors
constexpr int kMaxIndices = kMaxOperands - 2;

struct IndexGeom {
  int ndim = 0;      // iteration dims, innermost first
  int ntensors = 0;  // 2 + nindex
  int nindex = 0;
  int mode = 0;  // IndexMode
  int64_t sizes[kMaxDims] = {};
  int64_t strides[kMaxDims][kMaxOperands] = {};  // bytes
  char* data[kMaxOperands] = {};
  int64_t dim_size[kMaxIndices] = {};    // the indexed dims' sizes,
  int64_t dim_stride[kMaxIndices] = {};  // their byte strides in the indexed tensor,
  int dim_num[kMaxIndices] = {};         // and the dim numbers the errors name
};

// Host: packs iter (and the indexed dims, if any). Every operand must be on iter's
// device: the host code moves or rejects others before it gets here.
inline IndexGeom make_geom(const TensorIterator& iter, const IndexedDims* dims, IndexMode mode, const char* op) {
  IndexGeom g;
  const int nt = iter.ntensors();
  const int nidx = dims ? static_cast<int>(dims->size()) : 0;
  EMBER_CHECK(iter.ndim() <= kMaxDims, op, ": CUDA indexing supports at most ", kMaxDims, " dimensions, got ",
              iter.ndim());
  EMBER_CHECK(nt <= kMaxOperands && nidx <= kMaxIndices, op, ": CUDA indexing supports at most ", kMaxIndices,
              " index tensors, got ", nidx);
  EMBER_INTERNAL_ASSERT(!dims || nt == 2 + nidx, op, ": index iterator operands do not match the indexed dims");
  for (int t = 0; t < nt; ++t) {
    EMBER_INTERNAL_ASSERT(iter.device(t) == iter.device(0), op, ": operand ", t, " is on ", iter.device(t),
                          ", expected ", iter.device(0));
  }
  g.ndim = iter.ndim();
  g.ntensors = nt;
  g.nindex = nidx;
  g.mode = static_cast<int>(mode);
  const IntArrayRef shape = iter.shape();
  for (int d = 0; d < g.ndim; ++d) {
    g.sizes[d] = shape[d];
    for (int t = 0; t < nt; ++t) g.strides[d][t] = iter.strides(t)[d];
  }
  for (int t = 0; t < nt; ++t) g.data[t] = static_cast<char*>(iter.data_ptr(t));
  for (int q = 0; q < nidx; ++q) {
    g.dim_size[q] = (*dims)[q].size;
    g.dim_stride[q] = (*dims)[q].stride_bytes;
    g.dim_num[q] = static_cast<int>((*dims)[q].dim);
  }
  return g;
}

// Byte offsets of element `linear` (iteration order) in every operand.
EMBER_HOST_DEVICE inline void operand_offsets(const IndexGeom& g, int64_t linear, int64_t* off) {
  for (int t = 0; t < g.ntensors; ++t) off[t] = 0;
  for (int d = 0; d < g.ndim; ++d) {
    const int64_t size = g.sizes[d];
    const int64_t c = linear % size;
    linear /= size;
    for (int t = 0; t < g.ntensors; ++t) off[t] += c * g.strides[d][t];
  }
}

// The value of this element's q-th index.
EMBER_HOST_DEVICE inline int64_t index_value(const IndexGeom& g, const int64_t* off, int q) {
  return *reinterpret_cast<const int64_t*>(g.data[2 + q] + off[2 + q]);
}

// The byte offset this element's index values select in the indexed tensor, in
// `extra`; returns -1, or the position q of the first index out of range.
EMBER_HOST_DEVICE inline int checked_offset(const IndexGeom& g, const int64_t* off, int64_t& extra) {
  extra = 0;
  for (int q = 0; q < g.nindex; ++q) {
    const int64_t v = index_value(g, off, q);
    const int64_t size = g.dim_size[q];
    int64_t w = v;
    if (w < 0 && g.mode != static_cast<int>(IndexMode::NoWrap)) w += size;
    if (static_cast<uint64_t>(w) >= static_cast<uint64_t>(size)) return q;
    extra += w * g.dim_stride[q];
  }
  return -1;
}

// Device: checked_offset, an index out of range reported (the first one wins) and
// false returned: the caller skips the element.
__device__ inline bool indexed_offset(const IndexGeom& g, const int64_t* off, ecuda::DeviceError* err, int op,
                                      int64_t& extra) {
  const int q = checked_offset(g, off, extra);
  if (q < 0) return true;
  ecuda::report_index_error(err, op, g.dim_num[q], index_value(g, off, q), g.dim_size[q]);
  return false;
}

// The name an index error gives its operator: "gather()" whether or not the caller's
// spelling ends in "()" (the error then reads "gather(): index 7 is out of bounds ...").
inline std::string error_op_name(const char* op) {
  std::string name(op);
  if (name.size() < 2 || name.compare(name.size() - 2, 2, "()") != 0) name += "()";
  return name;
}

// Host: the error-op id for an operator name (see error_op_name).
inline int error_op_id(const char* op) { return ecuda::register_error_op(error_op_name(op).c_str()); }

// take / put_ (IndexMode::Take) word a bad index as the CPU kernels and PyTorch do.
constexpr const char* kTakeErrorFormat = "out of range: tried to access index {index} on a tensor of {size} elements.";

// Host: the error id the kernels of `op` report a bad index with, in `mode`.
inline int index_error_id(const char* op, IndexMode mode) {
  return mode == IndexMode::Take ? ecuda::register_error_format(kTakeErrorFormat) : error_op_id(op);
}

#define EMBER_GRID_STRIDE_LOOP(i, n)                                                     \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)

template <typename To, typename From>
EMBER_HOST_DEVICE inline To bit_cast(const From& f) {
  static_assert(sizeof(To) == sizeof(From), "bit_cast: sizes differ");
  To t;
  memcpy(&t, &f, sizeof(To));
  return t;
}

// *addr = f(*addr, val), atomically, for an element of any size: a compare-and-swap
// loop on the element (4 / 8 bytes) or on the aligned 32-bit word holding it (1 / 2
// bytes; the allocator's blocks are 512-byte aligned and sized, so the word is ours).
template <typename T, typename F>
__device__ inline void atomic_apply(T* addr, T val, const F& f) {
  if constexpr (sizeof(T) == 8) {
    auto* a = reinterpret_cast<unsigned long long*>(addr);
    unsigned long long old = *a, assumed;
    do {
      assumed = old;
      old = atomicCAS(a, assumed, bit_cast<unsigned long long>(f(bit_cast<T>(assumed), val)));
    } while (assumed != old);
  } else if constexpr (sizeof(T) == 4) {
    auto* a = reinterpret_cast<unsigned int*>(addr);
    unsigned int old = *a, assumed;
    do {
      assumed = old;
      old = atomicCAS(a, assumed, bit_cast<unsigned int>(f(bit_cast<T>(assumed), val)));
    } while (assumed != old);
  } else {
    static_assert(sizeof(T) == 1 || sizeof(T) == 2, "atomic_apply: unsupported element size");
    using U = std::conditional_t<sizeof(T) == 1, uint8_t, uint16_t>;
    const auto p = reinterpret_cast<uintptr_t>(addr);
    auto* word = reinterpret_cast<unsigned int*>(p & ~uintptr_t{3});
    const unsigned int shift = static_cast<unsigned int>(p & 3) * 8;
    const unsigned int lane = sizeof(T) == 1 ? 0xFFu : 0xFFFFu;
    unsigned int old = *word, assumed;
    do {
      assumed = old;
      const T cur = bit_cast<T>(static_cast<U>((assumed >> shift) & lane));
      const unsigned int bits = bit_cast<U>(f(cur, val));
      old = atomicCAS(word, assumed, (assumed & ~(lane << shift)) | (bits << shift));
    } while (assumed != old);
  }
}

// ---- element bodies (host and device) ----------------------------------------------------

// index / index_put: out[i] = src[i + extra] (Put=false) or dst[i + extra] = values[i].
template <typename T, bool Put>
EMBER_HOST_DEVICE inline void move_element(const IndexGeom& g, const int64_t* off, int64_t extra) {
  if constexpr (Put) {
    *reinterpret_cast<T*>(g.data[0] + off[0] + extra) = *reinterpret_cast<const T*>(g.data[1] + off[1]);
  } else {
    *reinterpret_cast<T*>(g.data[0] + off[0]) = *reinterpret_cast<const T*>(g.data[1] + off[1] + extra);
  }
}

// masked_fill: [self, mask]
template <typename T>
EMBER_HOST_DEVICE inline void masked_fill_element(const IndexGeom& g, const int64_t* off, T value) {
  if (*reinterpret_cast<const uint8_t*>(g.data[1] + off[1])) *reinterpret_cast<T*>(g.data[0] + off[0]) = value;
}

// The accumulate loops' arithmetic (the CPU loop's, TensorAdvancedIndexing.cpp): op(x, y).
template <typename T>
EMBER_HOST_DEVICE inline T reduce_combine(ReduceOp op, opmath_t<T> alpha, T x, T y) {
  using acc_t = opmath_t<T>;
  if constexpr (std::is_same_v<T, bool>) {
    return (op == ReduceOp::Add || op == ReduceOp::Max) ? (x || y) : (x && y);
  } else {
    switch (op) {
      case ReduceOp::Mul:
        return T(acc_t(x) * acc_t(y));
      case ReduceOp::Max: {  // NaN wins, as in PyTorch
        const acc_t a = acc_t(x), b = acc_t(y);
        return (a != a || a > b) ? x : y;
      }
      case ReduceOp::Min: {
        const acc_t a = acc_t(x), b = acc_t(y);
        return (a != a || a < b) ? x : y;
      }
      default:  // Add (Assign never gets here)
        return T(acc_t(x) + alpha * acc_t(y));
    }
  }
}

// reduce='mean': [self, count(int64)], self /= count where count > 0 (floor division for integers).
template <typename T>
EMBER_HOST_DEVICE inline void divide_element(const IndexGeom& g, const int64_t* off) {
  T* x = reinterpret_cast<T*>(g.data[0] + off[0]);
  const int64_t c = *reinterpret_cast<const int64_t*>(g.data[1] + off[1]);
  if (c <= 0) return;
  if constexpr (std::is_integral_v<T>) {
    const int64_t v = static_cast<int64_t>(*x);
    int64_t q = v / c;
    if (v % c != 0 && v < 0) --q;
    *x = static_cast<T>(q);
  } else {
    *x = T(static_cast<opmath_t<T>>(*x) / static_cast<opmath_t<T>>(c));
  }
}

// ---- row-major compactions: masked_select, masked_scatter, nonzero ------------------------

// Up to two same-shaped operands walked in logical (row-major) order.
struct RowMajorGeom {
  int ndim = 0;
  int64_t sizes[kMaxDims] = {};       // outermost first
  int64_t strides[2][kMaxDims] = {};  // bytes
  char* data[2] = {};
};

inline RowMajorGeom make_row_major(const Tensor& a, const Tensor* b, const char* op) {
  RowMajorGeom g;
  EMBER_CHECK(a.dim() <= kMaxDims, op, ": CUDA kernel supports at most ", kMaxDims, " dimensions, got ", a.dim());
  g.ndim = static_cast<int>(a.dim());
  for (int d = 0; d < g.ndim; ++d) {
    g.sizes[d] = a.size(d);
    g.strides[0][d] = a.stride(d) * static_cast<int64_t>(a.itemsize());
    if (b) g.strides[1][d] = b->stride(d) * static_cast<int64_t>(b->itemsize());
  }
  g.data[0] = static_cast<char*>(a.data_ptr());
  if (b) g.data[1] = static_cast<char*>(b->data_ptr());
  return g;
}

// Byte offset of row-major element i in operand `which`; coords (if given) receive its coordinates.
EMBER_HOST_DEVICE inline int64_t row_major_offset(const RowMajorGeom& g, int which, int64_t i,
                                                  int64_t* coords = nullptr) {
  int64_t off = 0;
  for (int d = g.ndim - 1; d >= 0; --d) {
    const int64_t c = i % g.sizes[d];
    i /= g.sizes[d];
    off += c * g.strides[which][d];
    if (coords) coords[d] = c;
  }
  return off;
}

// 1 where operand `which` (viewed as T, bits masked with value_mask) is non-zero.
template <typename T>
EMBER_HOST_DEVICE inline int64_t flag_element(const RowMajorGeom& g, int which, int64_t i, T value_mask) {
  const T v = *reinterpret_cast<const T*>(g.data[which] + row_major_offset(g, which, i));
  return (v & value_mask) != 0 ? 1 : 0;
}

// After the inclusive scan of the flags, element i is set iff pos[i] differs from
// pos[i - 1] (or from 0); its output slot is pos[i] - 1.
EMBER_HOST_DEVICE inline bool is_set(const int64_t* pos, int64_t i) { return pos[i] != (i > 0 ? pos[i - 1] : 0); }

template <typename T>
EMBER_HOST_DEVICE inline void select_element(const RowMajorGeom& g, int64_t i, const int64_t* pos, T* out) {
  if (is_set(pos, i)) out[pos[i] - 1] = *reinterpret_cast<const T*>(g.data[0] + row_major_offset(g, 0, i));
}

template <typename T>
EMBER_HOST_DEVICE inline void scatter_element(const RowMajorGeom& g, int64_t i, const int64_t* pos, const T* src) {
  if (is_set(pos, i)) *reinterpret_cast<T*>(g.data[0] + row_major_offset(g, 0, i)) = src[pos[i] - 1];
}

EMBER_HOST_DEVICE inline void nonzero_element(const RowMajorGeom& g, int64_t i, const int64_t* pos, int64_t* out) {
  if (!is_set(pos, i)) return;
  int64_t coords[kMaxDims];
  row_major_offset(g, 0, i, coords);
  int64_t* row = out + (pos[i] - 1) * g.ndim;
  for (int d = 0; d < g.ndim; ++d) row[d] = coords[d];
}

// The nonzero bit mask of an element of `itemsize` bytes (floating: sign bit cleared,
// so -0.0 is zero and NaN is not), as the CPU kernel.
template <typename T>
inline T nonzero_value_mask(bool floating) {
  if constexpr (sizeof(T) == 1) {
    return T(0xFF);
  } else if constexpr (sizeof(T) == 2) {
    return T(floating ? 0x7FFF : 0xFFFF);
  } else if constexpr (sizeof(T) == 4) {
    return T(floating ? 0x7FFFFFFFu : 0xFFFFFFFFu);
  } else {
    return T(floating ? 0x7FFFFFFFFFFFFFFFull : ~0ull);
  }
}

}  // namespace ember::at::native::cuda_index
