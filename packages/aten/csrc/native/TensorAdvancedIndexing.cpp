// Writing through an index along one dim: scatter (src / value / reduce),
// scatter_add, scatter_reduce, index_add, index_copy, index_fill, index_reduce, put_.
//
// Each op views self in the shape of the index (or source) with stride 0 along
// `dim` and runs [dst, src, index] through the shared index loops (Indexing.h).
// Plain writes go through index_put_stub; reductions through index_reduce_serial,
// on the CPU a serial loop: duplicate indices then accumulate exactly and
// deterministically (CUDA: atomics, see Indexing.h). Every CPU index is validated
// before the first write; CUDA indices are checked on the device.
#include <cmath>
#include <limits>

#include <ember/aten/Dispatch.h>

#include "Indexing.h"

namespace ember::at::native {

// ---------------------------------------------------------------------------
// the serial reduce loop (compiled once: it is dtype-dispatched and serial)
// ---------------------------------------------------------------------------

namespace {

template <typename T, typename F>
void reduce_loop(TensorIterator& iter, const IndexedDims& dims, IndexMode mode, const F& f) {
  const int nt = iter.ntensors();
  const size_t k = dims.size();
  iter.serial_for_each(
      [&](char** data, const int64_t* strides, int64_t n, int64_t m) {
        // locals: stores of T may alias int64 memory as far as the compiler knows
        const int64_t s0 = strides[0], s1 = strides[1], t0 = strides[nt], t1 = strides[nt + 1];
        for (int64_t j = 0; j < m; ++j) {
          char* a = data[0] + j * t0;
          const char* b = data[1] + j * t1;
          if (k == 1) {
            const IndexedDim d0 = dims[0];
            const char* ip = data[2] + j * strides[nt + 2];
            const int64_t is = strides[2];
            for (int64_t i = 0; i < n; ++i) {
              T* dst = reinterpret_cast<T*>(a + i * s0 +
                                            index_offset(*reinterpret_cast<const int64_t*>(ip + i * is), d0, mode));
              *dst = f(*dst, *reinterpret_cast<const T*>(b + i * s1));
            }
            continue;
          }
          for (int64_t i = 0; i < n; ++i) {
            int64_t off = 0;
            for (size_t q = 0; q < k; ++q) {
              const char* ip = data[2 + q] + j * strides[nt + 2 + q] + i * strides[2 + q];
              off += index_offset(*reinterpret_cast<const int64_t*>(ip), dims[q], mode);
            }
            T* dst = reinterpret_cast<T*>(a + i * s0 + off);
            *dst = f(*dst, *reinterpret_cast<const T*>(b + i * s1));
          }
        }
      },
      0, iter.numel());
}

template <typename T>
void reduce_typed(TensorIterator& iter, const IndexedDims& dims, IndexMode mode, ReduceOp op, const Scalar& alpha) {
  // (plain writes, ReduceOp::Assign, go through index_put_stub, not here)
  EMBER_INTERNAL_ASSERT(op != ReduceOp::Assign, "index_reduce_serial: Assign is index_put_stub's job");
  if constexpr (std::is_same_v<T, bool>) {
    switch (op) {
      case ReduceOp::Assign:
      case ReduceOp::Add: {
        // x + alpha * y in bool: alpha=False adds nothing (index_add(..., alpha=False))
        const bool a = alpha.to<bool>();
        return reduce_loop<T>(iter, dims, mode, [a](bool x, bool y) { return x || (a && y); });
      }
      case ReduceOp::Max:
        return reduce_loop<T>(iter, dims, mode, [](bool a, bool b) { return a || b; });
      case ReduceOp::Mul:
      case ReduceOp::Min:
        return reduce_loop<T>(iter, dims, mode, [](bool a, bool b) { return a && b; });
    }
  } else {
    using acc_t = opmath_t<T>;
    switch (op) {
      case ReduceOp::Assign:
      case ReduceOp::Add: {
        const acc_t a = alpha.to<acc_t>();
        return reduce_loop<T>(iter, dims, mode, [a](T x, T y) { return T(acc_t(x) + a * acc_t(y)); });
      }
      case ReduceOp::Mul:
        return reduce_loop<T>(iter, dims, mode, [](T x, T y) { return T(acc_t(x) * acc_t(y)); });
      case ReduceOp::Max:  // NaN wins, as in PyTorch
        return reduce_loop<T>(iter, dims, mode, [](T x, T y) {
          const acc_t a = acc_t(x), b = acc_t(y);
          return (a != a || a > b) ? x : y;
        });
      case ReduceOp::Min:
        return reduce_loop<T>(iter, dims, mode, [](T x, T y) {
          const acc_t a = acc_t(x), b = acc_t(y);
          return (a != a || a < b) ? x : y;
        });
    }
  }
}

// self[i] /= count[i] where count[i] > 0 (floor division for integers), for reduce='mean'.
template <typename T>
void divide_by_count(TensorIterator& iter) {
  iter.for_each([](char** data, const int64_t* strides, int64_t n, int64_t m) {
    for (int64_t j = 0; j < m; ++j) {
      for (int64_t i = 0; i < n; ++i) {
        T* x = reinterpret_cast<T*>(data[0] + j * strides[2] + i * strides[0]);
        const int64_t c = *reinterpret_cast<const int64_t*>(data[1] + j * strides[3] + i * strides[1]);
        if (c <= 0) continue;
        if constexpr (std::is_same_v<T, bool>) {
          // a bool "mean" stays the logical or of its values
        } else if constexpr (std::is_integral_v<T>) {
          const int64_t v = static_cast<int64_t>(*x);
          int64_t q = v / c;
          if (v % c != 0 && v < 0) --q;
          *x = static_cast<T>(q);
        } else {
          *x = T(static_cast<opmath_t<T>>(*x) / static_cast<opmath_t<T>>(c));
        }
      }
    }
  });
}

// The value a reduction starts from when self's own value is left out (0-dim, on `device`).
Tensor reduce_identity(ScalarType t, ReduceOp op, Device device) {
  const bool fp = c10::isFloatingType(t);
  switch (op) {
    case ReduceOp::Mul:
      return scalar_tensor(Scalar(int64_t{1}), t, device);
    case ReduceOp::Max:
      if (fp) return scalar_tensor(Scalar(-std::numeric_limits<double>::infinity()), t, device);
      return EMBER_DISPATCH_INTEGRAL_TYPES_AND_BOOL(t, "reduce_identity", [&] {
        return scalar_tensor(Scalar(std::numeric_limits<scalar_t>::lowest()), t, device);
      });
    case ReduceOp::Min:
      if (fp) return scalar_tensor(Scalar(std::numeric_limits<double>::infinity()), t, device);
      return EMBER_DISPATCH_INTEGRAL_TYPES_AND_BOOL(
          t, "reduce_identity", [&] { return scalar_tensor(Scalar(std::numeric_limits<scalar_t>::max()), t, device); });
    default:
      return scalar_tensor(Scalar(int64_t{0}), t, device);
  }
}

void index_reduce_cpu(TensorIterator& iter, const IndexedDims& dims, IndexMode mode, ReduceOp op, const Scalar& alpha,
                      const char*) {
  EMBER_DISPATCH_ALL_TYPES(iter.dtype(0), "index_reduce", [&] { reduce_typed<scalar_t>(iter, dims, mode, op, alpha); });
}

void divide_by_count_cpu(TensorIterator& iter) {
  EMBER_DISPATCH_ALL_TYPES(iter.dtype(0), "index_reduce", [&] { divide_by_count<scalar_t>(iter); });
}

}  // namespace

// These two stubs have one CPU kernel (serial, dtype-dispatched: nothing to gain from
// per-capability copies).
REGISTER_BASELINE_DISPATCH(index_reduce_stub, &index_reduce_cpu);
REGISTER_BASELINE_DISPATCH(divide_by_count_stub, &divide_by_count_cpu);

void index_reduce_serial(TensorIterator& iter, const IndexedDims& dims, IndexMode mode, ReduceOp op,
                         const Scalar& alpha, const char* name) {
  if (iter.numel() == 0) return;
  index_reduce_stub(iter.device_type(0), iter, dims, mode, op, alpha, name);
}

// ---------------------------------------------------------------------------
// the common body: write `src` (shaped like the iteration) into `result` at index
// ---------------------------------------------------------------------------

namespace {

// t viewed in `shape` with stride 0 along d: element i of the view is the start of
// t's line along d that the index value at i picks from.
Tensor restride(const Tensor& t, int64_t d, IntArrayRef shape) {
  DimVector strides(t.strides());
  strides[d] = 0;
  return t.as_strided(shape, strides);
}

IndexedDims one_dim(const Tensor& t, int64_t d) {
  IndexedDims dims;
  dims.push_back(IndexedDim{t.size(d), t.stride(d) * static_cast<int64_t>(t.itemsize()), d});
  return dims;
}

// Writes src into result1 (1-d or more) along d at index_r (all three in the
// iteration shape), reducing with op. Handles include_self=False and 'mean'.
void write_along_dim(const Tensor& result1, int64_t d, const Tensor& index_r, const Tensor& src_r, ReduceOp op,
                     bool include_self, bool mean, const char* name) {
  const IntArrayRef shape = src_r.sizes();
  const IndexedDims dims = one_dim(result1, d);
  const Tensor dst = restride(result1, d, shape);
  const Device dev = result1.device();
  if (op == ReduceOp::Assign) {
    auto iter = make_index_iter(dst, src_r, {index_r}, name);
    index_put_stub(dev.type, iter, dims, IndexMode::NoWrap, name);
    return;
  }
  if (!include_self) {
    // every position that receives a value starts from the reduction's identity
    const Tensor ident = reduce_identity(result1.dtype(), op, dev).as_strided(shape, DimVector(shape.size(), 0));
    auto iter = make_index_iter(dst, ident, {index_r}, name);
    index_put_stub(dev.type, iter, dims, IndexMode::NoWrap, name);
  }
  auto iter = make_index_iter(dst, src_r, {index_r}, name);
  index_reduce_serial(iter, dims, IndexMode::NoWrap, op, Scalar(int64_t{1}), name);
  if (!mean) return;
  const Tensor count = full(result1.sizes(), Scalar(int64_t{include_self ? 1 : 0}), ScalarType::Long, dev);
  const Tensor one =
      scalar_tensor(Scalar(int64_t{1}), ScalarType::Long, dev).as_strided(shape, DimVector(shape.size(), 0));
  auto count_iter = make_index_iter(restride(count, d, shape), one, {index_r}, name);
  index_reduce_serial(count_iter, one_dim(count, d), IndexMode::NoWrap, ReduceOp::Add, Scalar(int64_t{1}), name);
  auto div_iter = TensorIteratorConfig()
                      .name(name)
                      .add_output(result1)
                      .add_input(count)
                      .check_all_same_dtype(false)
                      .resize_outputs(false)
                      .check_mem_overlap(false)
                      .build();
  divide_by_count_stub(dev.type, div_iter);
}

// ---- scatter / gather-style checks (index has self's number of dims) ----

void scatter_checks(const char* op, const Tensor& self, int64_t d, const Tensor& index, const Tensor* src) {
  // an empty index of any dtype and rank writes nothing, as PyTorch's
  EMBER_CHECK(index.numel() == 0 || index.dtype() == ScalarType::Long || index.dtype() == ScalarType::Int, op,
              "(): Expected dtype int32/int64 for index");
  check_same_device(self, index, "index", op);
  if (src) check_same_device(self, *src, "src", op);
  if (src) {
    EMBER_CHECK(src->dtype() == self.dtype(), op, "(): Expected self.dtype to be equal to src.dtype");
  }
  if (index.numel() == 0) return;
  const int64_t nd = std::max<int64_t>(self.dim(), 1);
  EMBER_CHECK(std::max<int64_t>(index.dim(), 1) == nd,
              "Index tensor must have the same number of dimensions as self tensor");
  if (src) {
    EMBER_CHECK(std::max<int64_t>(src->dim(), 1) == nd,
                "Index tensor must have the same number of dimensions as src tensor");
  }
  if (index.numel() == 0) return;
  const Tensor self1 = ensure_1d(self), index1 = ensure_1d(index);
  const Tensor src1 = src ? ensure_1d(*src) : Tensor();
  for (int64_t i = 0; i < nd; ++i) {
    const bool bad = (i != d && index1.size(i) > self1.size(i)) || (src && index1.size(i) > src1.size(i));
    if (!bad) continue;
    if (src) {
      EMBER_CHECK(false, "Expected index ", index.sizes(), " to be smaller than self ", self.sizes(),
                  " apart from dimension ", d, " and to be smaller size than src ", src->sizes());
    }
    EMBER_CHECK(false, "Expected index ", index.sizes(), " to be smaller than self ", self.sizes(),
                " apart from dimension ", d);
  }
}

// One body for every scatter overload.
Tensor scatter_common(const char* op, const Tensor& self, int64_t dim, const Tensor& index_in, const Tensor& src,
                      const Scalar* value, ReduceOp rop, bool include_self, bool mean, const Tensor& out) {
  const int64_t d = c10::maybe_wrap_dim(dim, self.dim());
  scatter_checks(op, self, d, index_in, value ? nullptr : &src);
  // int32 indices are accepted as PyTorch does; the kernels read int64
  const Tensor index = index_in.dtype() == ScalarType::Long ? index_in : index_in.to(ScalarType::Long);
  if (out.defined()) check_same_device(self, out, "out", op);
  Tensor result = prepare_out_like_self(self, out, op);
  if (index.numel() == 0) return result;
  const Tensor result1 = ensure_1d(result);
  const Tensor index1 = ensure_1d(index);
  index_error_as_runtime_error([&] { check_index_range(index1, result1.size(d), d, IndexMode::NoWrap); });
  Tensor src_r;
  if (value) {
    src_r = scalar_tensor(*value, self.dtype(), self.device()).as_strided(index1.sizes(), DimVector(index1.dim(), 0));
  } else {
    const Tensor s = src.is_alias_of(result) ? src.clone() : src;
    const Tensor s1 = ensure_1d(s);
    src_r = s1.as_strided(index1.sizes(), s1.strides());
  }
  write_along_dim(result1, d, index1, src_r, rop, include_self, mean, op);
  return result;
}

ReduceOp parse_scatter_reduce(const std::string& reduce) {
  if (reduce == "add") return ReduceOp::Add;
  if (reduce == "multiply") return ReduceOp::Mul;
  EMBER_CHECK(false, "reduce argument must be either add or multiply.");
  return ReduceOp::Assign;
}

// sum / prod / mean / amax / amin (scatter_reduce, index_reduce); `mean` set for mean.
ReduceOp parse_reduce_two(const std::string& reduce, bool& mean, const char* op, bool allow_sum) {
  mean = false;
  if (reduce == "sum" && allow_sum) return ReduceOp::Add;
  if (reduce == "prod") return ReduceOp::Mul;
  if (reduce == "amax") return ReduceOp::Max;
  if (reduce == "amin") return ReduceOp::Min;
  if (reduce == "mean") {
    mean = true;
    return ReduceOp::Add;
  }
  if (allow_sum) {
    EMBER_CHECK(false, "reduce argument must be either sum, prod, mean, amax or amin, got ", reduce);
  }
  EMBER_CHECK(false, op, "(): Expected reduce to be one of prod, mean, amax or amin but got ", reduce, ".");
  return ReduceOp::Assign;
}

}  // namespace

// ---------------------------------------------------------------------------
// scatter, scatter_add, scatter_reduce
// ---------------------------------------------------------------------------

Tensor scatter_src_out(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, const Tensor& out) {
  return scatter_common("scatter", self, dim, index, src, nullptr, ReduceOp::Assign, true, false, out);
}

Tensor scatter_value_out(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value, const Tensor& out) {
  return scatter_common("scatter", self, dim, index, Tensor(), &value, ReduceOp::Assign, true, false, out);
}

Tensor scatter_reduce_out(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                          const std::string& reduce, const Tensor& out) {
  const ReduceOp op = parse_scatter_reduce(reduce);
  return scatter_common("scatter", self, dim, index, src, nullptr, op, true, false, out);
}

Tensor scatter_value_reduce_out(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value,
                                const std::string& reduce, const Tensor& out) {
  const ReduceOp op = parse_scatter_reduce(reduce);
  return scatter_common("scatter", self, dim, index, Tensor(), &value, op, true, false, out);
}

Tensor scatter_add_out(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, const Tensor& out) {
  return scatter_common("scatter_add", self, dim, index, src, nullptr, ReduceOp::Add, true, false, out);
}

Tensor scatter_reduce_two_out(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                              const std::string& reduce, bool include_self, const Tensor& out) {
  bool mean = false;
  const ReduceOp op = parse_reduce_two(reduce, mean, "scatter_reduce", true);
  return scatter_common("scatter_reduce", self, dim, index, src, nullptr, op, include_self, mean, out);
}

// ---------------------------------------------------------------------------
// index_add, index_copy, index_reduce (a vector index along dim; source shaped
// like self except along dim)
// ---------------------------------------------------------------------------

namespace {

Tensor index_along_dim(const char* op, const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                       bool allow_int32, ReduceOp rop, const Scalar& alpha, bool include_self, bool mean,
                       const Tensor& out) {
  check_same_device(self, index, "index", op);
  check_same_device(self, source, "source", op);
  if (out.defined()) check_same_device(self, out, "out", op);
  const Tensor idx = check_vector_index(index, op, allow_int32);
  const int64_t d = c10::maybe_wrap_dim(dim, self.dim());
  EMBER_CHECK(source.dtype() == self.dtype(), op, "(): self (", c10::toString(self.dtype()), ") and source (",
              c10::toString(source.dtype()), ") must have the same scalar type");
  const int64_t nd = std::max<int64_t>(self.dim(), 1);
  EMBER_CHECK(std::max<int64_t>(source.dim(), 1) == nd, op, "(): source (", source.dim(), "-d) and self (", self.dim(),
              "-d) must have the same number of dimensions");
  const Tensor self1 = ensure_1d(self), source1 = ensure_1d(source);
  const int64_t n = idx.numel();
  EMBER_CHECK(n == source1.size(d), op, "(): Number of indices (", n, ") should be equal to source.size(dim) (",
              source1.size(d), ")");
  for (int64_t i = 0; i < nd; ++i) {
    if (i == d) continue;
    EMBER_CHECK(source1.size(i) == self1.size(i), op, "(): source ", source.sizes(), " and self ", self.sizes(),
                " must have the same size apart from dimension ", d);
  }
  Tensor result = prepare_out_like_self(self, out, op);
  if (source.numel() == 0) return result;
  check_index_range(idx, self1.size(d), d, IndexMode::NoWrap);
  const Tensor result1 = ensure_1d(result);
  const Tensor src = source1.is_alias_of(result) ? source1.clone() : source1;
  DimVector isizes(nd, 1), istrides(nd, 0);
  isizes[d] = n;
  istrides[d] = idx.stride(0);
  const Tensor index_r = idx.as_strided(isizes, istrides).expand(src.sizes());
  if (rop == ReduceOp::Add && !mean) {
    // index_add: alpha scales the source
    const IndexedDims dims = one_dim(result1, d);
    auto iter = make_index_iter(restride(result1, d, src.sizes()), src, {index_r}, op);
    index_reduce_serial(iter, dims, IndexMode::NoWrap, ReduceOp::Add, alpha, op);
    return result;
  }
  write_along_dim(result1, d, index_r, src, rop, include_self, mean, op);
  return result;
}

}  // namespace

Tensor index_add_out(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha,
                     const Tensor& out) {
  EMBER_CHECK(c10::isFloatingType(self.dtype()) || !alpha.isFloatingPoint(),
              "index_add(): For integral input tensors, argument alpha must not be a floating point number.");
  return index_along_dim("index_add", self, dim, index, source, true, ReduceOp::Add, alpha, true, false, out);
}

Tensor index_copy_out(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const Tensor& out) {
  return index_along_dim("index_copy", self, dim, index, source, false, ReduceOp::Assign, Scalar(int64_t{1}), true,
                         false, out);
}

Tensor index_reduce_out(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                        const std::string& reduce, bool include_self, const Tensor& out) {
  bool mean = false;
  const ReduceOp op = parse_reduce_two(reduce, mean, "index_reduce", false);
  return index_along_dim("index_reduce", self, dim, index, source, true, op, Scalar(int64_t{1}), include_self, mean,
                         out);
}

// ---------------------------------------------------------------------------
// index_fill
// ---------------------------------------------------------------------------

Tensor index_fill__int_Scalar(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  EMBER_CHECK_INDEX(index.dim() <= 1, "index_fill_(): Index has to be a vector, but got tensor with ", index.dim(),
                    " dimensions");
  EMBER_CHECK(index.dtype() == ScalarType::Long, "index_fill_(): Expected dtype int64 for index.");
  check_same_device(self, index, "index", "index_fill_");
  const int64_t d = c10::maybe_wrap_dim(dim, self.dim());
  check_no_internal_overlap(self, "index_fill_");
  const Tensor idx = ensure_1d(index);
  const Tensor self1 = ensure_1d(self);
  const int64_t n = idx.numel();
  if (n == 0 || self.numel() == 0) return self;
  check_index_range(idx, self1.size(d), d, IndexMode::Wrap);
  DimVector shape(self1.sizes());
  shape[d] = n;
  DimVector isizes(self1.dim(), 1), istrides(self1.dim(), 0);
  isizes[d] = n;
  istrides[d] = idx.stride(0);
  const Tensor v = scalar_tensor(value, self.dtype(), self.device()).as_strided(shape, DimVector(shape.size(), 0));
  auto iter = make_index_iter(restride(self1, d, shape), v, {idx.as_strided(isizes, istrides)}, "index_fill_");
  index_put_stub(self.device().type, iter, one_dim(self1, d), IndexMode::Wrap, "index_fill_()");
  return self;
}

Tensor index_fill__int_Tensor(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& value) {
  EMBER_CHECK(value.dim() == 0, "index_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
              value.dim(), " dimension(s).");
  return index_fill__int_Scalar(self, dim, index, value.item());
}

Tensor index_fill_int_Scalar(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  Tensor result = self.clone();
  return index_fill__int_Scalar(result, dim, index, value);
}

Tensor index_fill_int_Tensor(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& value) {
  Tensor result = self.clone();
  return index_fill__int_Tensor(result, dim, index, value);
}

// ---------------------------------------------------------------------------
// put_: self.flatten()[index] = source (index and source flattened too)
// ---------------------------------------------------------------------------

Tensor put_(const Tensor& self, const Tensor& index, const Tensor& source, bool accumulate) {
  EMBER_CHECK(index.dtype() == ScalarType::Long, "put_(): Expected a long tensor for index, but got ",
              c10::toString(index.dtype()));
  EMBER_CHECK(self.dtype() == source.dtype(), "put_(): self and source expected to have the same dtype, but got ",
              "self.dtype = ", c10::toString(self.dtype()), " and source.dtype = ", c10::toString(source.dtype()));
  EMBER_CHECK(source.numel() == index.numel(),
              "put_(): Expected source and index to have the same number of elements, but got source.numel() = ",
              source.numel(), ", index.numel() = ", index.numel());
  check_same_device(self, index, "index", "put_");
  check_same_device(self, source, "source", "put_");
  check_no_internal_overlap(self, "put_");
  if (index.numel() == 0) return self;
  check_index_range(index, self.numel(), 0, IndexMode::Take);
  const Tensor target = self.is_contiguous() ? self : self.contiguous();
  const Tensor dst = target.as_strided(index.sizes(), DimVector(index.dim(), 0));
  const Tensor src = (source.is_alias_of(self) ? source.clone() : source).reshape(index.sizes());
  auto iter = make_index_iter(dst, src, {index}, "put_");
  IndexedDims dims;
  dims.push_back(IndexedDim{target.numel(), static_cast<int64_t>(target.itemsize()), 0});
  if (accumulate) {
    index_reduce_serial(iter, dims, IndexMode::Take, ReduceOp::Add, Scalar(int64_t{1}), "put_()");
  } else {
    index_put_stub(self.device().type, iter, dims, IndexMode::Take, "put_()");
  }
  if (!target.is_same(self)) self.copy_(target);
  return self;
}

Tensor put(const Tensor& self, const Tensor& index, const Tensor& source, bool accumulate) {
  Tensor result = self.clone();
  return put_(result, index, source, accumulate);
}

}  // namespace ember::at::native
