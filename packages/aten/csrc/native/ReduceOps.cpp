// Reductions: argument checks, PyTorch's dtype rules, output allocation and the
// ReductionPlan; the loops are in cpu/ReduceOpsKernel.cpp (through the stubs).
//
// dtype rules (as PyTorch):
//   sum, nansum, prod: integral and bool inputs give int64; dtype= casts the input
//     first; without dtype=, an out= tensor's dtype is the dtype computed in.
//   mean, nanmean, var, std, norms, logsumexp: floating inputs (logsumexp promotes
//     integers to the default dtype); an out= of another dtype must be castable.
//   max, min, amax, amin, aminmax: the input dtype (out= must match); indices int64.
//   all, any: bool (uint8 inputs give uint8); count_nonzero, argmax, argmin: int64.
#include "ReduceOps.h"

#include <cmath>
#include <limits>
#include <type_traits>

#include <ember/aten/Dispatch.h>
#include <ember/aten/ShapeUtils.h>
#include <ember/aten/TensorIterator.h>
#include <ember/aten/native/cpu/Reduce.h>

namespace ember::at::native {

DEFINE_DISPATCH(sum_stub);
DEFINE_DISPATCH(nansum_stub);
DEFINE_DISPATCH(amax_stub);
DEFINE_DISPATCH(amin_stub);
DEFINE_DISPATCH(argmax_stub);
DEFINE_DISPATCH(argmin_stub);
DEFINE_DISPATCH(var_stub);
DEFINE_DISPATCH(norm_stub);
DEFINE_DISPATCH(logsumexp_stub);
DEFINE_DISPATCH(norm_other_stub);
DEFINE_DISPATCH(prod_stub);
DEFINE_DISPATCH(all_stub);
DEFINE_DISPATCH(any_stub);
DEFINE_DISPATCH(count_nonzero_stub);
DEFINE_DISPATCH(nanmean_divide_stub);

// ---------------------------------------------------------------------------
// Reductions whose loops gain little from wider vectors (prod, all, any,
// count_nonzero, vector norms of orders other than 1 and 2) run here, compiled once,
// through the same framework (cpu/Reduce.h), as the DEFAULT slot of their stubs.
// ---------------------------------------------------------------------------

namespace {

template <typename T>
constexpr bool is_reduced_float_v = std::is_same_v<T, c10::Half> || std::is_same_v<T, c10::BFloat16>;
template <typename T>
constexpr bool is_float_like_v = std::is_floating_point_v<T> || is_reduced_float_v<T>;

template <typename T>
inline T to_acc(T v) {
  return v;
}
inline float to_acc(c10::Half v) { return static_cast<float>(v); }
inline float to_acc(c10::BFloat16 v) { return static_cast<float>(v); }

template <typename scalar_t, typename acc_t>
inline scalar_t from_acc(acc_t v) {
  if constexpr (is_reduced_float_v<scalar_t>)
    return scalar_t(static_cast<float>(v));
  else
    return static_cast<scalar_t>(v);
}

// bool data is 0/1 bytes: prod runs bool inputs through the uint8 instantiation.
inline ScalarType bool_as_byte(ScalarType t) { return t == ScalarType::Bool ? ScalarType::Byte : t; }

// A bool tensor may hold bytes 2..255 (uint8.view(bool)); the kernels that read bool bytes
// as numbers (prod, max/min) get a 0/1 copy (the copy kernel reads bool as byte != 0).
inline Tensor clean_bool(const Tensor& t) { return t.dtype() == ScalarType::Bool ? t.clone() : t; }

// ---------------------------------------------------------------------------
// prod
// ---------------------------------------------------------------------------

template <typename scalar_t>
struct ProdOps {
  using input_t = scalar_t;
  static constexpr bool kFloat = is_float_like_v<scalar_t>;
  using acc_t = std::conditional_t<kFloat, opmath_t<scalar_t>, uint64_t>;
  using out_t = std::conditional_t<kFloat, scalar_t, int64_t>;
  out_t* out;
  static acc_t as_acc(scalar_t v) {
    if constexpr (kFloat)
      return to_acc(v);
    else
      return static_cast<acc_t>(static_cast<int64_t>(v));
  }
  acc_t identity() const { return acc_t(1); }
  acc_t reduce_1d(const scalar_t* x, int64_t n, int64_t s, acc_t acc, int64_t) const {
    for (int64_t i = 0; i < n; ++i) acc *= as_acc(x[i * s]);
    return acc;
  }
  void reduce_cols(const scalar_t* x, int64_t nrows, int64_t s, int64_t m, acc_t* acc, int64_t) const {
    for (int64_t r = 0; r < nrows; ++r) {
      const scalar_t* row = x + r * s;
      for (int64_t j = 0; j < m; ++j) acc[j] *= as_acc(row[j]);
    }
  }
  acc_t combine(acc_t a, acc_t b) const { return a * b; }
  void project(acc_t a, int64_t off) const {
    if constexpr (kFloat)
      out[off] = from_acc<scalar_t>(a);
    else
      out[off] = static_cast<int64_t>(a);
  }
};

void prod_kernel(const ReductionPlan& p) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(bool_as_byte(p.in_dtype), "prod", [&] {
    run_reduction(p, ProdOps<scalar_t>{static_cast<typename ProdOps<scalar_t>::out_t*>(p.out[0])});
  });
}

// ---------------------------------------------------------------------------
// all / any / count_nonzero
// ---------------------------------------------------------------------------

template <typename scalar_t>
inline bool truthy(scalar_t v) {
  if constexpr (is_reduced_float_v<scalar_t>)
    return static_cast<float>(v) != 0.0f;
  else
    return v != scalar_t(0);
}

// all (kAll) / any, with a runtime flag; integral inputs are read as unsigned integers
// of their width (nonzero is nonzero), so eight instantiations cover the ten dtypes.
template <typename scalar_t>
struct LogicalOps : ColumnReduceDefault<LogicalOps<scalar_t>, scalar_t, bool> {
  using input_t = scalar_t;
  using acc_t = bool;
  uint8_t* out;
  bool all;
  acc_t identity() const { return all; }
  acc_t reduce_1d(const scalar_t* x, int64_t n, int64_t s, acc_t acc, int64_t) const {
    if (acc != all) return acc;
    int64_t i = 0;
    if (s == 1) {  // blocks of 64: a vectorisable count, then one test
      for (; i + 64 <= n; i += 64) {
        int c = 0;
        for (int k = 0; k < 64; ++k) c += truthy(x[i + k]);
        if (all ? c != 64 : c != 0) return !all;
      }
    }
    for (; i < n; ++i) {
      if (truthy(x[i * s]) != all) return !all;
    }
    return all;
  }
  acc_t combine(acc_t a, acc_t b) const { return all ? (a && b) : (a || b); }
  void project(acc_t a, int64_t off) const { out[off] = a ? 1 : 0; }
};

struct RunLogical {
  const ReductionPlan& p;
  bool all;
  template <typename T>
  void operator()() const {
    run_reduction(p, LogicalOps<T>{{}, static_cast<uint8_t*>(p.out[0]), all});
  }
};

void all_kernel(const ReductionPlan& p) { dispatch_nonzero_type(p.in_dtype, "all", RunLogical{p, true}); }
void any_kernel(const ReductionPlan& p) { dispatch_nonzero_type(p.in_dtype, "any", RunLogical{p, false}); }

// kNotNan: counts x == x instead of x != 0.
template <typename scalar_t, bool kNotNan>
struct CountOps {
  using input_t = scalar_t;
  using acc_t = int64_t;
  int64_t* out;
  static int pred(scalar_t v) {
    if constexpr (kNotNan)
      return to_acc(v) == to_acc(v);
    else
      return truthy(v);
  }
  acc_t identity() const { return 0; }
  acc_t reduce_1d(const scalar_t* x, int64_t n, int64_t s, acc_t acc, int64_t) const {
    if (s == 1) {
      for (int64_t i = 0; i < n; ++i) acc += pred(x[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) acc += pred(x[i * s]);
    }
    return acc;
  }
  void reduce_cols(const scalar_t* x, int64_t nrows, int64_t s, int64_t m, acc_t* acc, int64_t) const {
    for (int64_t r = 0; r < nrows; ++r) {
      const scalar_t* row = x + r * s;
      for (int64_t j = 0; j < m; ++j) acc[j] += pred(row[j]);
    }
  }
  acc_t combine(acc_t a, acc_t b) const { return a + b; }
  void project(acc_t a, int64_t off) const { out[off] = a; }
};

struct RunCountNonzero {
  const ReductionPlan& p;
  template <typename T>
  void operator()() const {
    run_reduction(p, CountOps<T, false>{static_cast<int64_t*>(p.out[0])});
  }
};

void count_nonzero_kernel(const ReductionPlan& p) {
  if (p.flags == 1) {
    EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(
        p.in_dtype, "count", [&] { run_reduction(p, CountOps<scalar_t, true>{static_cast<int64_t*>(p.out[0])}); });
    return;
  }
  dispatch_nonzero_type(p.in_dtype, "count_nonzero", RunCountNonzero{p});
}

enum class NormKind { Zero, Inf, NegInf, General };

// One instantiation per dtype for all four kinds: the kind is loop-invariant.
template <typename scalar_t>
struct NormOps : ColumnReduceDefault<NormOps<scalar_t>, scalar_t, opmath_t<scalar_t>> {
  using input_t = scalar_t;
  using acc_t = opmath_t<scalar_t>;
  scalar_t* out;
  NormKind kind;
  acc_t p;

  acc_t identity() const { return kind == NormKind::NegInf ? std::numeric_limits<acc_t>::infinity() : acc_t(0); }
  static acc_t nan_max(acc_t acc, acc_t a) { return (a > acc || a != a) ? a : acc; }
  static acc_t nan_min(acc_t acc, acc_t a) { return (a < acc || a != a) ? a : acc; }
  acc_t reduce_1d(const scalar_t* x, int64_t n, int64_t s, acc_t acc, int64_t) const {
    switch (kind) {
      case NormKind::Zero:
        for (int64_t i = 0; i < n; ++i) acc += to_acc(x[i * s]) != acc_t(0) ? acc_t(1) : acc_t(0);
        break;
      case NormKind::Inf:
        for (int64_t i = 0; i < n; ++i) acc = nan_max(acc, std::abs(to_acc(x[i * s])));
        break;
      case NormKind::NegInf:
        for (int64_t i = 0; i < n; ++i) acc = nan_min(acc, std::abs(to_acc(x[i * s])));
        break;
      case NormKind::General:
        for (int64_t i = 0; i < n; ++i) acc += std::pow(std::abs(to_acc(x[i * s])), p);
        break;
    }
    return acc;
  }
  acc_t combine(acc_t a, acc_t b) const {
    if (kind == NormKind::Inf) return nan_max(a, b);
    if (kind == NormKind::NegInf) return nan_min(a, b);
    return a + b;
  }
  void project(acc_t a, int64_t off) const {
    if (kind == NormKind::General) a = std::pow(a, acc_t(1) / p);
    out[off] = from_acc<scalar_t>(a);
  }
};

void norm_other_kernel(const ReductionPlan& p) {
  const double ord = p.param;
  const NormKind kind = ord == 0           ? NormKind::Zero
                        : !std::isinf(ord) ? NormKind::General
                        : ord > 0          ? NormKind::Inf
                                           : NormKind::NegInf;
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(p.in_dtype, "linalg.vector_norm", [&] {
    using acc_t = opmath_t<scalar_t>;
    run_reduction(p, NormOps<scalar_t>{{}, static_cast<scalar_t*>(p.out[0]), kind, static_cast<acc_t>(ord)});
  });
}

void nanmean_divide_kernel(const Tensor& sum, const Tensor& count, const Tensor& out) {
  const int64_t n = sum.numel();
  const int64_t* c = count.data_ptr<int64_t>();
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(out.dtype(), "nanmean", [&] {
    const scalar_t* s = static_cast<const scalar_t*>(sum.data_ptr());
    scalar_t* r = static_cast<scalar_t*>(out.data_ptr());
    for (int64_t i = 0; i < n; ++i) {
      r[i] = static_cast<scalar_t>(static_cast<opmath_t<scalar_t>>(
          static_cast<double>(static_cast<opmath_t<scalar_t>>(s[i])) / static_cast<double>(c[i])));
    }
  });
}

}  // namespace

REGISTER_BASELINE_DISPATCH(norm_other_stub, &norm_other_kernel);
REGISTER_BASELINE_DISPATCH(prod_stub, &prod_kernel);
REGISTER_BASELINE_DISPATCH(all_stub, &all_kernel);
REGISTER_BASELINE_DISPATCH(any_stub, &any_kernel);
REGISTER_BASELINE_DISPATCH(count_nonzero_stub, &count_nonzero_kernel);
REGISTER_BASELINE_DISPATCH(nanmean_divide_stub, &nanmean_divide_kernel);

namespace {

// The stubs run on the input's device (CPU: per capability; CUDA: cuda/Reduce.cu).
DeviceType dev(const Tensor& t) { return t.device().type; }

constexpr uint64_t kAllDims = ~uint64_t{0};

const char* dtype_name(ScalarType t) { return c10::toPythonName(t); }

// Bit d set: dim d is reduced. None or an empty list reduce every dim.
uint64_t dims_mask(const char* op, const Tensor& self, IntArrayRef dims) {
  const int64_t nd = self.dim();
  EMBER_CHECK(nd <= 64, op, ": tensors with more than 64 dimensions are not supported");
  if (dims.empty()) return nd == 0 ? 0 : (nd == 64 ? kAllDims : ((uint64_t{1} << nd) - 1));
  uint64_t mask = 0;
  for (int64_t d : dims) {
    const int64_t w = c10::maybe_wrap_dim(d, nd);
    EMBER_CHECK(!(mask >> w & 1), "dim ", w, " appears multiple times in the list of dims");
    if (nd > 0) mask |= uint64_t{1} << w;
  }
  return mask;
}

uint64_t dims_mask(const char* op, const Tensor& self, const std::optional<DimVector>& dims) {
  return dims ? dims_mask(op, self, IntArrayRef(*dims)) : dims_mask(op, self, IntArrayRef());
}

uint64_t dim_mask(const Tensor& self, int64_t dim) {
  const int64_t w = c10::maybe_wrap_dim(dim, self.dim());
  return self.dim() == 0 ? 0 : uint64_t{1} << w;
}

DimVector reduced_shape(IntArrayRef sizes, uint64_t mask, bool keepdim) {
  DimVector out;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (mask >> d & 1) {
      if (keepdim) out.push_back(1);
    } else {
      out.push_back(sizes[d]);
    }
  }
  return out;
}

bool reduces_empty(const Tensor& self, uint64_t mask) {
  for (int64_t d = 0; d < self.dim(); ++d)
    if ((mask >> d & 1) && self.size(d) == 0) return true;
  return false;
}

// For reductions without an identity (max, amax, argmax, ...): the reduced dims must be non-empty.
void check_nonempty(const char* op, const Tensor& self, uint64_t mask, bool dim_given) {
  if (!dim_given) {
    EMBER_CHECK(self.numel() > 0, op, "(): Expected reduction dim to be specified for input.numel() == 0. ",
                "Specify the reduction dim with the 'dim' argument.");
    return;
  }
  for (int64_t d = 0; d < self.dim(); ++d) {
    EMBER_CHECK_INDEX(!((mask >> d & 1) && self.size(d) == 0), op, "(): Expected reduction dim ", d,
                      " to have non-zero size.");
  }
}

// Dims of `in` (size-1 dims dropped) split into kept and reduced, each sorted by input
// stride and coalesced; outputs are contiguous in the kept dims' user order.
ReductionPlan make_plan(const Tensor& in, uint64_t mask, const Tensor& out0, const Tensor& out1 = Tensor()) {
  ReductionPlan p;
  p.in = in.data_ptr();
  p.in_dtype = in.dtype();
  p.device = in.device();
  if (out0.defined()) {
    p.out[0] = out0.data_ptr();
    p.out_dtype[0] = out0.dtype();
  }
  if (out1.defined()) {
    p.out[1] = out1.data_ptr();
    p.out_dtype[1] = out1.dtype();
  }
  struct Dim {
    int64_t size, in_stride, out_stride;
  };
  c10::SmallVector<Dim, 8> kept, red;
  int64_t ostride = 1;
  for (int64_t d = in.dim() - 1; d >= 0; --d) {
    const int64_t n = in.size(d);
    if (mask >> d & 1) {
      if (n != 1) red.push_back({n, in.stride(d), 0});
    } else {
      if (n != 1) kept.push_back({n, in.stride(d), ostride});
      ostride *= n;
    }
  }
  std::stable_sort(kept.begin(), kept.end(), [](const Dim& a, const Dim& b) {
    return a.in_stride != b.in_stride ? a.in_stride < b.in_stride : a.out_stride < b.out_stride;
  });
  std::stable_sort(red.begin(), red.end(), [](const Dim& a, const Dim& b) { return a.in_stride < b.in_stride; });
  for (size_t i = 0; i < kept.size(); ++i) {
    const Dim& k = kept[i];
    if (!p.out_sizes.empty()) {
      const int64_t last = p.out_sizes.size() - 1;
      if (k.in_stride == p.out_in_strides[last] * p.out_sizes[last] &&
          k.out_stride == p.out_strides[last] * p.out_sizes[last]) {
        p.out_sizes[last] *= k.size;
        continue;
      }
    }
    p.out_sizes.push_back(k.size);
    p.out_in_strides.push_back(k.in_stride);
    p.out_strides.push_back(k.out_stride);
  }
  for (size_t i = 0; i < red.size(); ++i) {
    const Dim& r = red[i];
    if (!p.red_sizes.empty()) {
      const int64_t last = p.red_sizes.size() - 1;
      if (r.in_stride == p.red_strides[last] * p.red_sizes[last]) {
        p.red_sizes[last] *= r.size;
        continue;
      }
    }
    p.red_sizes.push_back(r.size);
    p.red_strides.push_back(r.in_stride);
  }
  p.num_outputs = 1;
  for (int64_t s : p.out_sizes) p.num_outputs *= s;
  p.num_reduced = 1;
  for (int64_t s : p.red_sizes) p.num_reduced *= s;
  return p;
}

bool is_integral(ScalarType t) { return c10::isIntegralType(t, /*includeBool=*/true); }

void check_out_dtype(const char* op, const Tensor& out, ScalarType expected) {
  if (!out.defined()) return;
  EMBER_CHECK(out.dtype() == expected, op, "(): Expected the dtype for input and out to match, but got ",
              c10::toString(expected), " for input's dtype and ", c10::toString(out.dtype()), " for out's dtype.");
}

void check_out_castable(const char* op, const Tensor& out, ScalarType result) {
  if (!out.defined()) return;
  EMBER_CHECK(can_cast(result, out.dtype()), op, "(): result type ", c10::toString(result),
              " can't be cast to the desired output type ", c10::toString(out.dtype()));
}

// sum / nansum / mean share this: `divide` makes it a mean.
Tensor sum_like(const char* op, const Tensor& self, uint64_t mask, bool keepdim, std::optional<ScalarType> dtype,
                const Tensor& out, bool nan_to_zero, bool divide) {
  ScalarType result_dtype;
  if (dtype) {
    result_dtype = *dtype;
  } else if (out.defined() && !divide) {
    result_dtype = out.dtype();
  } else {
    result_dtype = is_integral(self.dtype()) ? ScalarType::Long : self.dtype();
  }
  Tensor in = self;
  if (dtype || (out.defined() && !divide)) {
    if (self.dtype() != result_dtype) in = self.to(result_dtype);
  }
  if (divide) check_out_castable(op, out, result_dtype);
  const ScalarType kernel_dtype = is_integral(in.dtype()) ? ScalarType::Long : in.dtype();
  auto o = prepare_output(out, reduced_shape(self.sizes(), mask, keepdim), result_dtype, kernel_dtype, self);
  ReductionPlan p = make_plan(in, mask, o.buffer);
  p.param = divide ? static_cast<double>(p.num_reduced) : 1.0;
  if (nan_to_zero && c10::isFloatingType(in.dtype())) {
    nansum_stub(dev(in), p);
  } else {
    sum_stub(dev(in), p);
  }
  o.finish();
  return o.result;
}

void check_mean_dtype(const char* op, const Tensor& self, std::optional<ScalarType> dtype) {
  if (dtype) {
    EMBER_CHECK(c10::isFloatingType(*dtype), op,
                "(): could not infer output dtype. Optional dtype must be either a floating point or complex dtype. "
                "Got: ",
                c10::toString(*dtype));
  } else {
    EMBER_CHECK(c10::isFloatingType(self.dtype()), op,
                "(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. "
                "Got: ",
                c10::toString(self.dtype()));
  }
}

}  // namespace

ReduceOutput prepare_output(const Tensor& out, IntArrayRef shape, ScalarType result_dtype, ScalarType kernel_dtype,
                            const Tensor& self) {
  ReduceOutput r;
  if (out.defined()) {
    check_same_device("reduction", out, self);
    resize_output(out, shape);
    r.result = out;
  } else {
    r.result = empty(shape, result_dtype, self.device());
  }
  const bool direct =
      r.result.dtype() == kernel_dtype && r.result.is_contiguous() && !(out.defined() && out.is_alias_of(self));
  r.buffer = direct ? r.result : empty(shape, kernel_dtype, self.device());
  return r;
}

// ---------------------------------------------------------------------------
// sum, nansum, mean, nanmean, prod
// ---------------------------------------------------------------------------

Tensor sum_out(const Tensor& self, const std::optional<DimVector>& dim, bool keepdim, std::optional<ScalarType> dtype,
               const Tensor& out) {
  return sum_like("sum", self, dims_mask("sum", self, dim), keepdim, dtype, out, false, false);
}

Tensor nansum_out(const Tensor& self, const std::optional<DimVector>& dim, bool keepdim,
                  std::optional<ScalarType> dtype, const Tensor& out) {
  return sum_like("nansum", self, dims_mask("nansum", self, dim), keepdim, dtype, out, true, false);
}

Tensor mean_out(const Tensor& self, const std::optional<DimVector>& dim, bool keepdim, std::optional<ScalarType> dtype,
                const Tensor& out) {
  check_mean_dtype("mean", self, dtype);
  return sum_like("mean", self, dims_mask("mean", self, dim), keepdim, dtype, out, false, true);
}

Tensor nanmean_out(const Tensor& self, const std::optional<DimVector>& dim, bool keepdim,
                   std::optional<ScalarType> dtype, const Tensor& out) {
  EMBER_CHECK(c10::isFloatingType(self.dtype()),
              "nanmean(): expected input to have floating point or complex dtype but got ",
              c10::toString(self.dtype()));
  check_mean_dtype("nanmean", self, dtype);
  const uint64_t mask = dims_mask("nanmean", self, dim);
  const Tensor in = dtype && *dtype != self.dtype() ? self.to(*dtype) : self;
  const ScalarType rt = in.dtype();
  check_out_castable("nanmean", out, rt);
  const DimVector shape = reduced_shape(self.sizes(), mask, keepdim);
  // nansum / (number of non-NaN elements)
  Tensor sum = sum_like("nansum", in, mask, keepdim, std::nullopt, Tensor(), true, false);
  Tensor count = empty(shape, ScalarType::Long, self.device());
  ReductionPlan p = make_plan(in, mask, count);
  p.flags = 1;
  count_nonzero_stub(dev(in), p);
  auto o = prepare_output(out, shape, rt, rt, self);
  nanmean_divide_stub(dev(in), sum, count, o.buffer);
  o.finish();
  return o.result;
}

Tensor prod_out(const Tensor& self, std::optional<int64_t> dim, bool keepdim, std::optional<ScalarType> dtype,
                const Tensor& out) {
  const uint64_t mask = dim ? dim_mask(self, *dim) : dims_mask("prod", self, IntArrayRef());
  ScalarType result_dtype =
      dtype ? *dtype : (out.defined() ? out.dtype() : (is_integral(self.dtype()) ? ScalarType::Long : self.dtype()));
  Tensor in = clean_bool(self);
  if ((dtype || out.defined()) && self.dtype() != result_dtype) in = self.to(result_dtype);
  const ScalarType kernel_dtype = is_integral(in.dtype()) ? ScalarType::Long : in.dtype();
  auto o = prepare_output(out, reduced_shape(self.sizes(), mask, keepdim), result_dtype, kernel_dtype, self);
  ReductionPlan p = make_plan(in, mask, o.buffer);
  prod_stub(dev(in), p);
  o.finish();
  return o.result;
}

// ---------------------------------------------------------------------------
// max, min, amax, amin, aminmax, argmax, argmin
// ---------------------------------------------------------------------------

namespace {

Tensor minmax_values(const char* op, bool is_max, const Tensor& self_in, uint64_t mask, bool keepdim,
                     const Tensor& out) {
  const Tensor self = clean_bool(self_in);
  check_out_dtype(op, out, self.dtype());
  auto o = prepare_output(out, reduced_shape(self.sizes(), mask, keepdim), self.dtype(), self.dtype(), self);
  ReductionPlan p = make_plan(self, mask, o.buffer);
  if (is_max) {
    amax_stub(dev(self), p);
  } else {
    amin_stub(dev(self), p);
  }
  o.finish();
  return o.result;
}

// values (optional) and int64 indices of the extreme element along the reduced dim.
std::tuple<Tensor, Tensor> arg_reduce(const char* op, bool is_max, const Tensor& self, uint64_t mask, bool keepdim,
                                      const Tensor& values, const Tensor& indices, bool want_values) {
  const DimVector shape = reduced_shape(self.sizes(), mask, keepdim);
  if (want_values) check_out_dtype(op, values, self.dtype());
  if (indices.defined()) {
    EMBER_CHECK(indices.dtype() == ScalarType::Long, op, "(): Expected out tensor to have dtype int64, but got ",
                dtype_name(indices.dtype()), " instead");
  }
  ReduceOutput v;
  if (want_values) v = prepare_output(values, shape, self.dtype(), self.dtype(), self);
  auto i = prepare_output(indices, shape, ScalarType::Long, ScalarType::Long, self);
  ReductionPlan p = make_plan(self, mask, v.buffer, i.buffer);
  if (is_max) {
    argmax_stub(dev(self), p);
  } else {
    argmin_stub(dev(self), p);
  }
  if (want_values) v.finish();
  i.finish();
  return {v.result, i.result};
}

}  // namespace

Tensor max_all(const Tensor& self) {
  check_nonempty("max", self, kAllDims, false);
  return minmax_values("max", true, self, dims_mask("max", self, IntArrayRef()), false, Tensor());
}

Tensor max_unary_out(const Tensor& self, const Tensor& out) {
  check_nonempty("max", self, kAllDims, false);
  return minmax_values("max", true, self, dims_mask("max", self, IntArrayRef()), false, out);
}

Tensor min_all(const Tensor& self) {
  check_nonempty("min", self, kAllDims, false);
  return minmax_values("min", false, self, dims_mask("min", self, IntArrayRef()), false, Tensor());
}

Tensor min_unary_out(const Tensor& self, const Tensor& out) {
  check_nonempty("min", self, kAllDims, false);
  return minmax_values("min", false, self, dims_mask("min", self, IntArrayRef()), false, out);
}

std::tuple<Tensor, Tensor> max_dim_out(const Tensor& self, int64_t dim, bool keepdim, const Tensor& values,
                                       const Tensor& indices) {
  const uint64_t mask = dim_mask(self, dim);
  check_nonempty("max", self, mask, true);
  return arg_reduce("max", true, self, mask, keepdim, values, indices, true);
}

std::tuple<Tensor, Tensor> min_dim_out(const Tensor& self, int64_t dim, bool keepdim, const Tensor& values,
                                       const Tensor& indices) {
  const uint64_t mask = dim_mask(self, dim);
  check_nonempty("min", self, mask, true);
  return arg_reduce("min", false, self, mask, keepdim, values, indices, true);
}

Tensor amax_out(const Tensor& self, IntArrayRef dim, bool keepdim, const Tensor& out) {
  const uint64_t mask = dims_mask("amax", self, dim);
  check_nonempty("amax", self, mask, !dim.empty());
  return minmax_values("amax", true, self, mask, keepdim, out);
}

Tensor amin_out(const Tensor& self, IntArrayRef dim, bool keepdim, const Tensor& out) {
  const uint64_t mask = dims_mask("amin", self, dim);
  check_nonempty("amin", self, mask, !dim.empty());
  return minmax_values("amin", false, self, mask, keepdim, out);
}

std::tuple<Tensor, Tensor> aminmax_out(const Tensor& self, std::optional<int64_t> dim, bool keepdim,
                                       const Tensor& min_out, const Tensor& max_out) {
  const uint64_t mask = dim ? dim_mask(self, *dim) : dims_mask("aminmax", self, IntArrayRef());
  if (dim && reduces_empty(self, mask)) {
    // PyTorch: IndexError for an empty reduced dim, RuntimeError for an empty whole reduction
    EMBER_CHECK_INDEX(false, "aminmax: Expected reduction dim ", c10::maybe_wrap_dim(*dim, self.dim()),
                      " to have non-zero size.");
  }
  EMBER_CHECK(dim || self.numel() != 0,
              "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.");
  // without dim, keepdim keeps every dim (as size 1)
  Tensor mn = minmax_values("aminmax", false, self, mask, keepdim, min_out);
  Tensor mx = minmax_values("aminmax", true, self, mask, keepdim, max_out);
  return {mn, mx};
}

namespace {

Tensor argmax_argmin(const char* op, bool is_max, const Tensor& self, std::optional<int64_t> dim, bool keepdim,
                     const Tensor& out) {
  EMBER_CHECK(self.dtype() != ScalarType::Bool, op, ": not implemented for dtype bool");
  if (dim) {
    const uint64_t mask = dim_mask(self, *dim);
    check_nonempty(op, self, mask, true);
    return std::get<1>(arg_reduce(op, is_max, self, mask, keepdim, Tensor(), out, false));
  }
  EMBER_CHECK(self.numel() > 0, op, "(): Expected reduction dim to be specified for input.numel() == 0.");
  // the flat index over the tensor in its logical (row-major) order
  const Tensor flat = self.reshape({self.numel()});
  Tensor r = std::get<1>(arg_reduce(op, is_max, flat, 1, false, Tensor(), Tensor(), false));
  const DimVector shape = keepdim ? DimVector(static_cast<size_t>(self.dim()), 1) : DimVector();
  r = r.view(shape);
  if (!out.defined()) return r;
  EMBER_CHECK(out.dtype() == ScalarType::Long, op, "(): Expected out tensor to have dtype int64, but got ",
              dtype_name(out.dtype()), " instead");
  resize_output(out, shape);
  out.copy_(r);
  return out;
}

}  // namespace

Tensor argmax_out(const Tensor& self, std::optional<int64_t> dim, bool keepdim, const Tensor& out) {
  return argmax_argmin("argmax", true, self, dim, keepdim, out);
}

Tensor argmin_out(const Tensor& self, std::optional<int64_t> dim, bool keepdim, const Tensor& out) {
  return argmax_argmin("argmin", false, self, dim, keepdim, out);
}

// ---------------------------------------------------------------------------
// all, any, count_nonzero
// ---------------------------------------------------------------------------

namespace {

Tensor logical_reduce(const char* op, bool is_all, const Tensor& self, const std::optional<DimVector>& dim,
                      bool keepdim, const Tensor& out) {
  const uint64_t mask = dims_mask(op, self, dim);
  const ScalarType rt = self.dtype() == ScalarType::Byte ? ScalarType::Byte : ScalarType::Bool;
  if (out.defined()) {
    EMBER_CHECK(out.dtype() == ScalarType::Bool || out.dtype() == ScalarType::Byte, op,
                "(): out tensor must have dtype bool or uint8, but got ", dtype_name(out.dtype()));
  }
  const ScalarType kernel_dtype = out.defined() ? out.dtype() : rt;
  auto o = prepare_output(out, reduced_shape(self.sizes(), mask, keepdim), rt, kernel_dtype, self);
  ReductionPlan p = make_plan(self, mask, o.buffer);
  if (is_all) {
    all_stub(dev(self), p);
  } else {
    any_stub(dev(self), p);
  }
  o.finish();
  return o.result;
}

}  // namespace

Tensor all_out(const Tensor& self, const std::optional<DimVector>& dim, bool keepdim, const Tensor& out) {
  return logical_reduce("all", true, self, dim, keepdim, out);
}

Tensor any_out(const Tensor& self, const std::optional<DimVector>& dim, bool keepdim, const Tensor& out) {
  return logical_reduce("any", false, self, dim, keepdim, out);
}

Tensor count_nonzero(const Tensor& self, const std::optional<DimVector>& dim) {
  const uint64_t mask = dims_mask("count_nonzero", self, dim);
  auto o = prepare_output(Tensor(), reduced_shape(self.sizes(), mask, false), ScalarType::Long, ScalarType::Long, self);
  ReductionPlan p = make_plan(self, mask, o.buffer);
  count_nonzero_stub(dev(self), p);
  return o.result;
}

// ---------------------------------------------------------------------------
// var, std, var_mean, std_mean
// ---------------------------------------------------------------------------

namespace {

std::tuple<Tensor, Tensor> var_std(const char* op, const Tensor& self, const std::optional<DimVector>& dim,
                                   double correction, bool keepdim, bool take_sqrt, const Tensor& out, bool want_mean) {
  EMBER_CHECK(c10::isFloatingType(self.dtype()), op,
              "(): std and var only support floating point and complex dtypes, got ", dtype_name(self.dtype()));
  if (out.defined()) {
    EMBER_CHECK(out.dtype() == self.dtype(), op, "(): Expected out tensor to have dtype ", dtype_name(self.dtype()),
                ", but got ", dtype_name(out.dtype()), " instead");
  }
  const uint64_t mask = dims_mask(op, self, dim);
  const DimVector shape = reduced_shape(self.sizes(), mask, keepdim);
  auto v = prepare_output(out, shape, self.dtype(), self.dtype(), self);
  ReduceOutput m;
  if (want_mean) m = prepare_output(Tensor(), shape, self.dtype(), self.dtype(), self);
  ReductionPlan p = make_plan(self, mask, v.buffer, m.buffer);
  p.param = correction;
  p.flags = take_sqrt ? 1 : 0;
  var_stub(dev(self), p);
  v.finish();
  return {v.result, m.result};
}

double correction_value(const std::optional<Scalar>& correction) { return correction ? correction->toDouble() : 1.0; }

}  // namespace

Tensor var_unbiased(const Tensor& self, bool unbiased) {
  return std::get<0>(var_std("var", self, std::nullopt, unbiased ? 1 : 0, false, false, Tensor(), false));
}
Tensor var_dim(const Tensor& self, const std::optional<DimVector>& dim, bool unbiased, bool keepdim) {
  return std::get<0>(var_std("var", self, dim, unbiased ? 1 : 0, keepdim, false, Tensor(), false));
}
Tensor var_correction(const Tensor& self, const std::optional<DimVector>& dim, const std::optional<Scalar>& correction,
                      bool keepdim) {
  return std::get<0>(var_std("var", self, dim, correction_value(correction), keepdim, false, Tensor(), false));
}
Tensor var_out(const Tensor& self, const std::optional<DimVector>& dim, bool unbiased, bool keepdim,
               const Tensor& out) {
  return std::get<0>(var_std("var", self, dim, unbiased ? 1 : 0, keepdim, false, out, false));
}
Tensor var_correction_out(const Tensor& self, const std::optional<DimVector>& dim,
                          const std::optional<Scalar>& correction, bool keepdim, const Tensor& out) {
  return std::get<0>(var_std("var", self, dim, correction_value(correction), keepdim, false, out, false));
}

Tensor std_unbiased(const Tensor& self, bool unbiased) {
  return std::get<0>(var_std("std", self, std::nullopt, unbiased ? 1 : 0, false, true, Tensor(), false));
}
Tensor std_dim(const Tensor& self, const std::optional<DimVector>& dim, bool unbiased, bool keepdim) {
  return std::get<0>(var_std("std", self, dim, unbiased ? 1 : 0, keepdim, true, Tensor(), false));
}
Tensor std_correction(const Tensor& self, const std::optional<DimVector>& dim, const std::optional<Scalar>& correction,
                      bool keepdim) {
  return std::get<0>(var_std("std", self, dim, correction_value(correction), keepdim, true, Tensor(), false));
}
Tensor std_out(const Tensor& self, const std::optional<DimVector>& dim, bool unbiased, bool keepdim,
               const Tensor& out) {
  return std::get<0>(var_std("std", self, dim, unbiased ? 1 : 0, keepdim, true, out, false));
}
Tensor std_correction_out(const Tensor& self, const std::optional<DimVector>& dim,
                          const std::optional<Scalar>& correction, bool keepdim, const Tensor& out) {
  return std::get<0>(var_std("std", self, dim, correction_value(correction), keepdim, true, out, false));
}

std::tuple<Tensor, Tensor> var_mean_unbiased(const Tensor& self, bool unbiased) {
  return var_std("var_mean", self, std::nullopt, unbiased ? 1 : 0, false, false, Tensor(), true);
}
std::tuple<Tensor, Tensor> var_mean_dim(const Tensor& self, const std::optional<DimVector>& dim, bool unbiased,
                                        bool keepdim) {
  return var_std("var_mean", self, dim, unbiased ? 1 : 0, keepdim, false, Tensor(), true);
}
std::tuple<Tensor, Tensor> var_mean_correction(const Tensor& self, const std::optional<DimVector>& dim,
                                               const std::optional<Scalar>& correction, bool keepdim) {
  return var_std("var_mean", self, dim, correction_value(correction), keepdim, false, Tensor(), true);
}
std::tuple<Tensor, Tensor> std_mean_unbiased(const Tensor& self, bool unbiased) {
  return var_std("std_mean", self, std::nullopt, unbiased ? 1 : 0, false, true, Tensor(), true);
}
std::tuple<Tensor, Tensor> std_mean_dim(const Tensor& self, const std::optional<DimVector>& dim, bool unbiased,
                                        bool keepdim) {
  return var_std("std_mean", self, dim, unbiased ? 1 : 0, keepdim, true, Tensor(), true);
}
std::tuple<Tensor, Tensor> std_mean_correction(const Tensor& self, const std::optional<DimVector>& dim,
                                               const std::optional<Scalar>& correction, bool keepdim) {
  return var_std("std_mean", self, dim, correction_value(correction), keepdim, true, Tensor(), true);
}

// ---------------------------------------------------------------------------
// linalg.vector_norm, logsumexp
// ---------------------------------------------------------------------------

Tensor linalg_vector_norm_out(const Tensor& self, const Scalar& ord, const std::optional<DimVector>& dim, bool keepdim,
                              std::optional<ScalarType> dtype, const Tensor& out) {
  EMBER_CHECK(c10::isFloatingType(self.dtype()),
              "linalg.vector_norm: Expected a floating point or complex tensor as input. Got ",
              c10::toString(self.dtype()));
  if (dtype) {
    EMBER_CHECK(c10::isFloatingType(*dtype), "linalg.vector_norm: dtype should be floating point or complex. Got ",
                c10::toString(*dtype));
  }
  const double p = ord.toDouble();
  const uint64_t mask = dims_mask("linalg.vector_norm", self, dim);
  const bool empty_reduction = (dim && !dim->empty()) ? reduces_empty(self, mask) : self.numel() == 0;
  EMBER_CHECK(!(empty_reduction && (p < 0 || std::isinf(p))), "linalg.vector_norm cannot compute the ", ord,
              " norm on an empty tensor because the operation does not have an identity");
  const Tensor in = dtype && *dtype != self.dtype() ? self.to(*dtype) : self;
  if (out.defined()) {
    EMBER_CHECK(out.dtype() == in.dtype(), "linalg.vector_norm: Expected out tensor dtype ", dtype_name(in.dtype()),
                ", but got ", dtype_name(out.dtype()), " instead");
  }
  auto o = prepare_output(out, reduced_shape(self.sizes(), mask, keepdim), in.dtype(), in.dtype(), self);
  ReductionPlan plan = make_plan(in, mask, o.buffer);
  plan.param = p;
  if (p == 1 || p == 2) {
    norm_stub(dev(in), plan);
  } else {
    norm_other_stub(dev(in), plan);
  }
  o.finish();
  return o.result;
}

Tensor logsumexp_out(const Tensor& self, IntArrayRef dim, bool keepdim, const Tensor& out) {
  const uint64_t mask = dims_mask("logsumexp", self, dim);
  const Tensor in = is_integral(self.dtype()) ? self.to(get_default_dtype()) : self;
  check_out_castable("logsumexp", out, in.dtype());
  auto o = prepare_output(out, reduced_shape(self.sizes(), mask, keepdim), in.dtype(), in.dtype(), self);
  ReductionPlan p = make_plan(in, mask, o.buffer);
  logsumexp_stub(dev(in), p);
  o.finish();
  return o.result;
}

}  // namespace ember::at::native
