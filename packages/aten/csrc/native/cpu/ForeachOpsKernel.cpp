// CPU kernel of the foreach fast path (ForeachOps.h): one parallel_for over the
// concatenated elements of every tensor of the call. Each op is a struct with a
// scalar form (computed in opmath_t: float for half/bfloat16) and a Vectorized form
// used for float and double.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include <ember/aten/Dispatch.h>
#include <ember/aten/Parallel.h>
#include <ember/aten/vec/Vectorized.h>

#include "../ForeachOps.h"

namespace ember::at::native {
inline namespace CPU_CAPABILITY {
namespace {

template <typename T>
using Vec = vec::Vectorized<T>;

template <typename T>
inline T lerp_scalar(T a, T b, T w) {
  return std::abs(w) < T(0.5) ? a + w * (b - a) : b - (b - a) * (T(1) - w);
}

template <typename T>
inline T nan_max(T a, T b) {
  return a != a ? a : (b != b ? b : (a > b ? a : b));
}
template <typename T>
inline T nan_min(T a, T b) {
  return a != a ? a : (b != b ? b : (a < b ? a : b));
}

// pow with PyTorch's fast exponents (x ** 2 is x * x, x ** 0.5 a square root)
template <typename T>
inline T pow_scalar(T a, T s) {
  if (s == T(2)) return a * a;
  if (s == T(0.5)) return std::sqrt(a);
  return std::pow(a, s);
}

#define EMBER_FOREACH_OP(NAME, NIN, SCALAR_EXPR, VEC_EXPR)                                               \
  struct NAME {                                                                                          \
    static constexpr int nin = NIN;                                                                      \
    template <typename T>                                                                                \
    static T f([[maybe_unused]] T a, [[maybe_unused]] T b, [[maybe_unused]] T c, [[maybe_unused]] T s) { \
      return SCALAR_EXPR;                                                                                \
    }                                                                                                    \
    template <typename T>                                                                                \
    static Vec<T> v([[maybe_unused]] Vec<T> a, [[maybe_unused]] Vec<T> b, [[maybe_unused]] Vec<T> c,     \
                    [[maybe_unused]] T s) {                                                              \
      return VEC_EXPR;                                                                                   \
    }                                                                                                    \
  }

template <typename T>
inline Vec<T> vexp(Vec<T> a) {
  if constexpr (std::is_same_v<T, float>) {
    return vec::exp(a);
  } else {
    return vec::map(a, [](T x) { return std::exp(x); });
  }
}

template <typename T>
inline Vec<T> vlerp(Vec<T> a, Vec<T> b, Vec<T> w) {
  using V = typename Vec<T>::V;
  const V small = (a + w * (b - a)).v;
  const V large = (b - (b - a) * (Vec<T>(T(1)) - w)).v;
  return Vec<T>::make(vec::abs(w).v < T(0.5) ? small : large);
}

EMBER_FOREACH_OP(OpSqrt, 1, std::sqrt(a), vec::sqrt(a));
EMBER_FOREACH_OP(OpNeg, 1, -a, -a);
EMBER_FOREACH_OP(OpAbs, 1, std::abs(a), vec::abs(a));
EMBER_FOREACH_OP(OpExp, 1, std::exp(a), vexp(a));
EMBER_FOREACH_OP(OpReciprocal, 1, T(1) / a, Vec<T>(T(1)) / a);
EMBER_FOREACH_OP(OpSign, 1, T((T(0) < a) - (a < T(0))), vec::map(a, [](T x) { return T((T(0) < x) - (x < T(0))); }));
EMBER_FOREACH_OP(OpCopy, 2, b, b);  // self is a, src is b
EMBER_FOREACH_OP(OpZero, 0, T(0), Vec<T>(T(0)));
EMBER_FOREACH_OP(OpAddScalar, 1, a + s, a + Vec<T>(s));
EMBER_FOREACH_OP(OpMulScalar, 1, a* s, a* Vec<T>(s));
EMBER_FOREACH_OP(OpDivScalar, 1, a / s, a / Vec<T>(s));
EMBER_FOREACH_OP(OpMaxScalar, 1, nan_max(a, s), vec::maximum(a, Vec<T>(s)));
EMBER_FOREACH_OP(OpMinScalar, 1, nan_min(a, s), vec::minimum(a, Vec<T>(s)));
EMBER_FOREACH_OP(OpPowScalar, 1, pow_scalar(a, s), vec::map(a, [s](T x) { return pow_scalar(x, s); }));
EMBER_FOREACH_OP(OpScalarPow, 1, std::pow(s, a), vec::map(a, [s](T x) { return std::pow(s, x); }));
EMBER_FOREACH_OP(OpAddList, 2, a + s * b, a + Vec<T>(s) * b);
EMBER_FOREACH_OP(OpMulList, 2, a* b, a* b);
EMBER_FOREACH_OP(OpDivList, 2, a / b, a / b);
EMBER_FOREACH_OP(OpMaxList, 2, nan_max(a, b), vec::maximum(a, b));
EMBER_FOREACH_OP(OpMinList, 2, nan_min(a, b), vec::minimum(a, b));
EMBER_FOREACH_OP(OpPowList, 2, std::pow(a, b), vec::map(a, [](T x) { return x; }));  // (vector form unused)
EMBER_FOREACH_OP(OpLerpScalar, 2, lerp_scalar(a, b, s), vlerp(a, b, Vec<T>(s)));
EMBER_FOREACH_OP(OpAddcmul, 3, a + s * b * c, a + Vec<T>(s) * b * c);
EMBER_FOREACH_OP(OpAddcdiv, 3, a + s * b / c, a + Vec<T>(s) * b / c);
EMBER_FOREACH_OP(OpLerpList, 3, lerp_scalar(a, b, c), vlerp(a, b, c));

#undef EMBER_FOREACH_OP

// Ops whose Vectorized form would only loop over lanes anyway run the scalar loop.
template <typename Op>
constexpr bool kScalarOnly = std::is_same_v<Op, OpPowList>;

// Elements [lo, hi) of one tensor: p[0] the output, p[1..] the inputs.
template <typename Op, typename scalar_t>
void run_span(char* const* p, int64_t lo, int64_t hi, double sd) {
  using opm = opmath_t<scalar_t>;
  scalar_t* out = reinterpret_cast<scalar_t*>(p[0]);
  const scalar_t* a = reinterpret_cast<const scalar_t*>(p[1]);
  const scalar_t* b = reinterpret_cast<const scalar_t*>(p[2]);
  const scalar_t* c = reinterpret_cast<const scalar_t*>(p[3]);
  const opm s = static_cast<opm>(sd);
  int64_t i = lo;
  if constexpr (std::is_same_v<scalar_t, opm> && !kScalarOnly<Op>) {
    using V = Vec<scalar_t>;
    constexpr int64_t W = V::size();
    const V zero(scalar_t(0));
    for (; i + W <= hi; i += W) {
      V x = zero, y = zero, z = zero;
      if constexpr (Op::nin >= 1) x = V::loadu(a + i);
      if constexpr (Op::nin >= 2) y = V::loadu(b + i);
      if constexpr (Op::nin >= 3) z = V::loadu(c + i);
      Op::template v<scalar_t>(x, y, z, s).store(out + i);
    }
  }
  for (; i < hi; ++i) {
    opm x = 0, y = 0, z = 0;
    if constexpr (Op::nin >= 1) x = static_cast<opm>(a[i]);
    if constexpr (Op::nin >= 2) y = static_cast<opm>(b[i]);
    if constexpr (Op::nin >= 3) z = static_cast<opm>(c[i]);
    out[i] = static_cast<scalar_t>(Op::template f<opm>(x, y, z, s));
  }
}

template <typename Op, typename scalar_t>
void run(const ForeachArgs& args) {
  const std::vector<int64_t>& off = args.offsets;
  parallel_for(0, off.back(), GRAIN_SIZE, [&](int64_t begin, int64_t end) {
    // the last tensor starting at or before `begin` (empty tensors share its offset)
    size_t t = static_cast<size_t>(std::upper_bound(off.begin(), off.end(), begin) - off.begin()) - 1;
    while (begin < end) {
      const int64_t stop = std::min(end, off[t + 1]);
      if (stop > begin) {
        run_span<Op, scalar_t>(args.ptrs[t].data(), begin - off[t], stop - off[t], args.scalars[t]);
        begin = stop;
      }
      ++t;
    }
  });
}

template <typename Op>
void run_op(ScalarType dtype, const ForeachArgs& args) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(dtype, "foreach", [&] { run<Op, scalar_t>(args); });
}

void foreach_kernel(ForeachOp op, ScalarType dtype, const ForeachArgs& args) {
  switch (op) {
    case ForeachOp::Sqrt:
      return run_op<OpSqrt>(dtype, args);
    case ForeachOp::Neg:
      return run_op<OpNeg>(dtype, args);
    case ForeachOp::Abs:
      return run_op<OpAbs>(dtype, args);
    case ForeachOp::Exp:
      return run_op<OpExp>(dtype, args);
    case ForeachOp::Reciprocal:
      return run_op<OpReciprocal>(dtype, args);
    case ForeachOp::Sign:
      return run_op<OpSign>(dtype, args);
    case ForeachOp::Copy:
      return run_op<OpCopy>(dtype, args);
    case ForeachOp::Zero:
      return run_op<OpZero>(dtype, args);
    case ForeachOp::AddScalar:
      return run_op<OpAddScalar>(dtype, args);
    case ForeachOp::MulScalar:
      return run_op<OpMulScalar>(dtype, args);
    case ForeachOp::DivScalar:
      return run_op<OpDivScalar>(dtype, args);
    case ForeachOp::MaxScalar:
      return run_op<OpMaxScalar>(dtype, args);
    case ForeachOp::MinScalar:
      return run_op<OpMinScalar>(dtype, args);
    case ForeachOp::PowScalar:
      return run_op<OpPowScalar>(dtype, args);
    case ForeachOp::ScalarPow:
      return run_op<OpScalarPow>(dtype, args);
    case ForeachOp::AddList:
      return run_op<OpAddList>(dtype, args);
    case ForeachOp::MulList:
      return run_op<OpMulList>(dtype, args);
    case ForeachOp::DivList:
      return run_op<OpDivList>(dtype, args);
    case ForeachOp::MaxList:
      return run_op<OpMaxList>(dtype, args);
    case ForeachOp::MinList:
      return run_op<OpMinList>(dtype, args);
    case ForeachOp::PowList:
      return run_op<OpPowList>(dtype, args);
    case ForeachOp::LerpScalar:
      return run_op<OpLerpScalar>(dtype, args);
    case ForeachOp::Addcmul:
      return run_op<OpAddcmul>(dtype, args);
    case ForeachOp::Addcdiv:
      return run_op<OpAddcdiv>(dtype, args);
    case ForeachOp::LerpList:
      return run_op<OpLerpList>(dtype, args);
  }
}

}  // namespace
}  // namespace CPU_CAPABILITY

REGISTER_DISPATCH(foreach_stub, &foreach_kernel);

}  // namespace ember::at::native
