// Host emulation of the CUDA indexing kernels, for tests on machines without a GPU
// (ember_aten_testing.cuda_indexing_emulation).
//
// Each function here is a CUDA stub kernel of Indexing.cu / AdvancedIndexing.cu with
// the launch replaced by a serial loop over the same element bodies
// (IndexingUtils.cuh: geometry, offsets, bounds checks, arithmetic, compaction), run
// on CPU tensors. cuda_indexing_emulation(true) puts them in the CPU slots of the
// indexing stubs, so the whole CPU test suite of the indexing operators exercises
// the CUDA kernels' logic; what it cannot check is the device itself (launches,
// atomics, CUB's scan, the error slot). An index out of range raises at once, with
// the message check_device_errors would give.
#include <string>
#include <vector>

#include "../../csrc/native/cuda/IndexingUtils.cuh"
#include "Emulation.h"
#include "StubEmulation.h"

namespace ember::at::native::cuda_emulation {
namespace {

using cuda_index::IndexGeom;
using cuda_index::kMaxOperands;
using cuda_index::RowMajorGeom;

[[noreturn]] void emulated_index_error(const IndexGeom& g, const int64_t* off, int q, const char* op) {
  const int64_t index = cuda_index::index_value(g, off, q);
  if (g.mode == static_cast<int>(IndexMode::Take)) {
    std::string msg = cuda_index::kTakeErrorFormat;
    msg.replace(msg.find("{index}"), 7, std::to_string(index));
    msg.replace(msg.find("{size}"), 6, std::to_string(g.dim_size[q]));
    throw c10::IndexError(msg);
  }
  throw c10::IndexError(c10::str(cuda_index::error_op_name(op), ": index ", index, " is out of bounds for dimension ",
                                 g.dim_num[q], " with size ", g.dim_size[q]));
}

// f(off, extra) for each element, in the kernels' linear order.
template <typename F>
void for_each_indexed(const IndexGeom& g, int64_t n, const char* op, const F& f) {
  int64_t off[kMaxOperands];
  for (int64_t i = 0; i < n; ++i) {
    cuda_index::operand_offsets(g, i, off);
    int64_t extra = 0;
    const int q = cuda_index::checked_offset(g, off, extra);
    if (q >= 0) emulated_index_error(g, off, q, op);
    f(off, extra);
  }
}

template <bool Put>
void index_emulated_impl(TensorIterator& iter, const IndexedDims& dims, IndexMode mode, const char* op) {
  const int64_t n = iter.numel();
  if (n == 0) return;
  const IndexGeom g = cuda_index::make_geom(iter, &dims, mode, op);
  auto run = [&](auto tag) {
    using T = decltype(tag);
    for_each_indexed(g, n, op,
                     [&](const int64_t* off, int64_t extra) { cuda_index::move_element<T, Put>(g, off, extra); });
  };
  switch (c10::elementSize(iter.dtype(0))) {
    case 1:
      return run(uint8_t{});
    case 2:
      return run(uint16_t{});
    case 4:
      return run(uint32_t{});
    default:
      return run(uint64_t{});
  }
}

void index_emulated(TensorIterator& iter, const IndexedDims& dims, IndexMode mode, const char* op) {
  index_emulated_impl<false>(iter, dims, mode, op);
}

void index_put_emulated(TensorIterator& iter, const IndexedDims& dims, IndexMode mode, const char* op) {
  index_emulated_impl<true>(iter, dims, mode, op);
}

void masked_fill_emulated(TensorIterator& iter, const void* value) {
  const int64_t n = iter.numel();
  if (n == 0) return;
  const IndexGeom g = cuda_index::make_geom(iter, nullptr, IndexMode::NoWrap, "masked_fill_");
  auto run = [&](auto tag) {
    using T = decltype(tag);
    T v;
    std::memcpy(&v, value, sizeof(T));
    int64_t off[kMaxOperands];
    for (int64_t i = 0; i < n; ++i) {
      cuda_index::operand_offsets(g, i, off);
      cuda_index::masked_fill_element<T>(g, off, v);
    }
  };
  switch (c10::elementSize(iter.dtype(0))) {
    case 1:
      return run(uint8_t{});
    case 2:
      return run(uint16_t{});
    case 4:
      return run(uint32_t{});
    default:
      return run(uint64_t{});
  }
}

template <typename T>
void index_reduce_emulated_typed(const IndexGeom& g, int64_t n, ReduceOp op, const Scalar& alpha, const char* name) {
  opmath_t<T> a{};
  if constexpr (std::is_same_v<T, bool>) {
    a = true;
  } else {
    a = alpha.to<opmath_t<T>>();
  }
  for_each_indexed(g, n, name, [&](const int64_t* off, int64_t extra) {
    T* dst = reinterpret_cast<T*>(g.data[0] + off[0] + extra);
    *dst = cuda_index::reduce_combine<T>(op, a, *dst, *reinterpret_cast<const T*>(g.data[1] + off[1]));
  });
}

void index_reduce_emulated(TensorIterator& iter, const IndexedDims& dims, IndexMode mode, ReduceOp op,
                           const Scalar& alpha, const char* name) {
  EMBER_INTERNAL_ASSERT(op != ReduceOp::Assign, "index_reduce: Assign is index_put_stub's job");
  const int64_t n = iter.numel();
  if (n == 0) return;
  const IndexGeom g = cuda_index::make_geom(iter, &dims, mode, name);
  EMBER_DISPATCH_ALL_TYPES(iter.dtype(0), "index_reduce",
                           [&] { index_reduce_emulated_typed<scalar_t>(g, n, op, alpha, name); });
}

template <typename T>
void divide_emulated_typed(const IndexGeom& g, int64_t n) {
  int64_t off[kMaxOperands];
  for (int64_t i = 0; i < n; ++i) {
    cuda_index::operand_offsets(g, i, off);
    cuda_index::divide_element<T>(g, off);
  }
}

void divide_by_count_emulated(TensorIterator& iter) {
  const int64_t n = iter.numel();
  if (n == 0 || iter.dtype(0) == ScalarType::Bool) return;
  const IndexGeom g = cuda_index::make_geom(iter, nullptr, IndexMode::NoWrap, "index_reduce");
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(iter.dtype(0), "index_reduce", [&] { divide_emulated_typed<scalar_t>(g, n); });
}

// The flags and their inclusive prefix sums (the kernels: flag_kernel + CUB's scan).
template <typename T>
std::vector<int64_t> emulated_positions(const RowMajorGeom& g, int64_t n, int which, T value_mask) {
  std::vector<int64_t> pos(static_cast<size_t>(n));
  int64_t sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    sum += cuda_index::flag_element<T>(g, which, i, value_mask);
    pos[static_cast<size_t>(i)] = sum;
  }
  return pos;
}

template <typename T>
Tensor masked_select_emulated_typed(const Tensor& self, const Tensor& mask) {
  const int64_t n = self.numel();
  if (n == 0) return empty({0}, self.dtype(), self.device());
  const RowMajorGeom g = cuda_index::make_row_major(self, &mask, "masked_select");
  const std::vector<int64_t> pos = emulated_positions<uint8_t>(g, n, 1, uint8_t{0xFF});
  Tensor out = empty({pos.back()}, self.dtype(), self.device());
  T* o = static_cast<T*>(out.data_ptr());
  for (int64_t i = 0; i < n; ++i) cuda_index::select_element<T>(g, i, pos.data(), o);
  return out;
}

Tensor masked_select_emulated(const Tensor& self, const Tensor& mask) {
  switch (self.itemsize()) {
    case 1:
      return masked_select_emulated_typed<uint8_t>(self, mask);
    case 2:
      return masked_select_emulated_typed<uint16_t>(self, mask);
    case 4:
      return masked_select_emulated_typed<uint32_t>(self, mask);
    default:
      return masked_select_emulated_typed<uint64_t>(self, mask);
  }
}

template <typename T>
void masked_scatter_emulated_typed(const Tensor& self, const Tensor& mask, const Tensor& source) {
  const int64_t n = self.numel();
  if (n == 0) return;
  const RowMajorGeom g = cuda_index::make_row_major(self, &mask, "masked_scatter_");
  const std::vector<int64_t> pos = emulated_positions<uint8_t>(g, n, 1, uint8_t{0xFF});
  EMBER_CHECK(pos.back() <= source.numel(), "masked_scatter_: Number of elements of source < number of ones in mask (",
              source.numel(), " < ", pos.back(), ")");
  const T* src = static_cast<const T*>(source.data_ptr());
  for (int64_t i = 0; i < n; ++i) cuda_index::scatter_element<T>(g, i, pos.data(), src);
}

void masked_scatter_emulated(const Tensor& self, const Tensor& mask, const Tensor& source) {
  switch (self.itemsize()) {
    case 1:
      return masked_scatter_emulated_typed<uint8_t>(self, mask, source);
    case 2:
      return masked_scatter_emulated_typed<uint16_t>(self, mask, source);
    case 4:
      return masked_scatter_emulated_typed<uint32_t>(self, mask, source);
    default:
      return masked_scatter_emulated_typed<uint64_t>(self, mask, source);
  }
}

template <typename T>
Tensor nonzero_emulated_typed(const Tensor& self) {
  const int64_t n = self.numel();
  const int64_t nd = self.dim();
  if (n == 0) return empty({0, nd}, ScalarType::Long, self.device());
  const RowMajorGeom g = cuda_index::make_row_major(self, nullptr, "nonzero");
  const std::vector<int64_t> pos =
      emulated_positions<T>(g, n, 0, cuda_index::nonzero_value_mask<T>(c10::isFloatingType(self.dtype())));
  Tensor out = empty({pos.back(), nd}, ScalarType::Long, self.device());
  if (pos.back() == 0 || nd == 0) return out;
  int64_t* o = static_cast<int64_t*>(out.data_ptr());
  for (int64_t i = 0; i < n; ++i) cuda_index::nonzero_element(g, i, pos.data(), o);
  return out;
}

Tensor nonzero_emulated(const Tensor& self) {
  switch (self.itemsize()) {
    case 1:
      return nonzero_emulated_typed<uint8_t>(self);
    case 2:
      return nonzero_emulated_typed<uint16_t>(self);
    case 4:
      return nonzero_emulated_typed<uint32_t>(self);
    default:
      return nonzero_emulated_typed<uint64_t>(self);
  }
}

}  // namespace

// true: the CPU slots of the indexing stubs run the CUDA kernels' host emulation;
// false: the CPU kernels again. Returns whether emulation was on before.
bool cuda_indexing_emulation(bool on) {
  static bool active = false;
  static SlotSwap<index_stub_DECLARE_DISPATCH_type> s_index;
  static SlotSwap<index_put_stub_DECLARE_DISPATCH_type> s_index_put;
  static SlotSwap<masked_fill_stub_DECLARE_DISPATCH_type> s_masked_fill;
  static SlotSwap<masked_select_stub_DECLARE_DISPATCH_type> s_masked_select;
  static SlotSwap<masked_scatter_stub_DECLARE_DISPATCH_type> s_masked_scatter;
  static SlotSwap<nonzero_stub_DECLARE_DISPATCH_type> s_nonzero;
  static SlotSwap<index_reduce_stub_DECLARE_DISPATCH_type> s_index_reduce;
  static SlotSwap<divide_by_count_stub_DECLARE_DISPATCH_type> s_divide;
  const bool was = active;
  if (on == active) return was;
  s_index.swap(index_stub, &index_emulated, on);
  s_index_put.swap(index_put_stub, &index_put_emulated, on);
  s_masked_fill.swap(masked_fill_stub, &masked_fill_emulated, on);
  s_masked_select.swap(masked_select_stub, &masked_select_emulated, on);
  s_masked_scatter.swap(masked_scatter_stub, &masked_scatter_emulated, on);
  s_nonzero.swap(nonzero_stub, &nonzero_emulated, on);
  s_index_reduce.swap(index_reduce_stub, &index_reduce_emulated, on);
  s_divide.swap(divide_by_count_stub, &divide_by_count_emulated, on);
  active = on;
  return was;
}

}  // namespace ember::at::native::cuda_emulation
