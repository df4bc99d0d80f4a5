#pragma once
// What the CUDA indexing kernels (Indexing.cu, AdvancedIndexing.cu) share: the
// geometry of a TensorIterator [dst, src, idx...] packed into one kernel argument,
// per-element operand offsets, the bounds-checked offset an element's indices
// select (see ../Indexing.h for the restride scheme), and an atomic read-modify-write
// for any element type.
//
// Everything is int64 and one thread handles one element (grid-stride loop): simple
// rather than fast. The geometry is passed as a __grid_constant__ parameter, so
// reading it through a reference does not copy it to local memory.

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>

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

// Host: the error-op id for an operator name, written as "gather()" whether or not the
// caller's name ends in "()" (the error then reads "gather(): index 7 is out of bounds ...").
inline int error_op_id(const char* op) {
  std::string name(op);
  if (name.size() < 2 || name.compare(name.size() - 2, 2, "()") != 0) name += "()";
  return ecuda::register_error_op(name.c_str());
}

// Byte offsets of element `linear` (iteration order) in every operand.
__device__ inline void operand_offsets(const IndexGeom& g, int64_t linear, int64_t* off) {
  for (int t = 0; t < g.ntensors; ++t) off[t] = 0;
  for (int d = 0; d < g.ndim; ++d) {
    const int64_t size = g.sizes[d];
    const int64_t c = linear % size;
    linear /= size;
    for (int t = 0; t < g.ntensors; ++t) off[t] += c * g.strides[d][t];
  }
}

// The byte offset this element's index values select in the indexed tensor. An
// index out of range is reported (the first one wins) and false returned: the
// caller skips the element.
__device__ inline bool indexed_offset(const IndexGeom& g, const int64_t* off, ecuda::DeviceError* err, int op,
                                      int64_t& extra) {
  extra = 0;
  for (int q = 0; q < g.nindex; ++q) {
    const int64_t v = *reinterpret_cast<const int64_t*>(g.data[2 + q] + off[2 + q]);
    const int64_t size = g.dim_size[q];
    int64_t w = v;
    if (w < 0 && g.mode != static_cast<int>(IndexMode::NoWrap)) w += size;
    if (static_cast<uint64_t>(w) >= static_cast<uint64_t>(size)) {
      ecuda::report_index_error(err, op, g.dim_num[q], v, size);
      return false;
    }
    extra += w * g.dim_stride[q];
  }
  return true;
}

#define EMBER_GRID_STRIDE_LOOP(i, n)                                                     \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)

template <typename To, typename From>
__device__ inline To bit_cast(const From& f) {
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

}  // namespace ember::at::native::cuda_index
