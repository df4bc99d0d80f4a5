// CUDA kernels of var / std (Welford, with the correction), the vector norms (every
// order) and logsumexp. The loops are Reduce.cuh's.
#include "../ReduceOps.h"
#include "Reduce.cuh"

namespace ember::at::native {
namespace {

using namespace cuda_reduce;

// ---- var / std (and the mean): Welford in double, merged with Chan's formula ----

struct WelfordAcc {
  double n, mean, m2;
};

template <typename scalar_t>
struct VarOps {
  using input_t = scalar_t;
  using acc_t = WelfordAcc;
  scalar_t* var_out;
  scalar_t* mean_out;  // may be null
  double correction;
  bool take_sqrt;

  __device__ acc_t identity() const { return {0.0, 0.0, 0.0}; }
  __device__ acc_t reduce(acc_t a, scalar_t x, int64_t) const {
    const double v = static_cast<double>(up(x));
    const double n = a.n + 1.0;
    const double delta = v - a.mean;
    const double mean = a.mean + delta / n;
    return {n, mean, a.m2 + delta * (v - mean)};
  }
  __device__ acc_t combine(acc_t a, acc_t b) const {
    if (a.n == 0) return b;
    if (b.n == 0) return a;
    const double n = a.n + b.n;
    const double delta = b.mean - a.mean;
    return {n, a.mean + delta * (b.n / n), a.m2 + b.m2 + delta * delta * (a.n * b.n / n)};
  }
  __device__ void project(acc_t a, int64_t off) const {
    const double nan = __longlong_as_double(0x7ff8000000000000LL);
    const double denom = a.n - correction > 0.0 ? a.n - correction : 0.0;
    double var = a.n == 0 ? nan : a.m2 / denom;
    if (take_sqrt) var = sqrt(var);
    var_out[off] = static_cast<scalar_t>(static_cast<opmath_t<scalar_t>>(var));
    if (mean_out) mean_out[off] = static_cast<scalar_t>(static_cast<opmath_t<scalar_t>>(a.n == 0 ? nan : a.mean));
  }
};

void var_kernel_cuda(const ReductionPlan& p) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(p.in_dtype, "var", [&] {
    run_reduction_cuda(p, VarOps<scalar_t>{static_cast<scalar_t*>(p.out[0]), static_cast<scalar_t*>(p.out[1]), p.param,
                                           (p.flags & 1) != 0});
  });
}

// ---- vector norms: every order through one instantiation per dtype ----

enum class NormKind : int { Zero, One, Two, Inf, NegInf, General };

template <typename scalar_t>
struct NormOps {
  using input_t = scalar_t;
  using acc_t = opmath_t<scalar_t>;
  scalar_t* out;
  NormKind kind;
  acc_t p;

  __device__ static acc_t nan_max(acc_t acc, acc_t a) { return (a > acc || a != a) ? a : acc; }
  __device__ static acc_t nan_min(acc_t acc, acc_t a) { return (a < acc || a != a) ? a : acc; }
  __device__ acc_t identity() const { return kind == NormKind::NegInf ? highest<acc_t>() : acc_t(0); }
  __device__ acc_t reduce(acc_t acc, scalar_t x, int64_t) const {
    const acc_t v = up(x);
    switch (kind) {
      case NormKind::Zero:
        return acc + (v != acc_t(0) ? acc_t(1) : acc_t(0));
      case NormKind::One:
        return acc + dabs(v);
      case NormKind::Two:
        return acc + v * v;
      case NormKind::Inf:
        return nan_max(acc, dabs(v));
      case NormKind::NegInf:
        return nan_min(acc, dabs(v));
      default:
        return acc + dpow(dabs(v), p);
    }
  }
  __device__ acc_t combine(acc_t a, acc_t b) const {
    if (kind == NormKind::Inf) return nan_max(a, b);
    if (kind == NormKind::NegInf) return nan_min(a, b);
    return a + b;
  }
  __device__ void project(acc_t a, int64_t off) const {
    if (kind == NormKind::Two) a = dsqrt(a);
    if (kind == NormKind::General) a = dpow(a, acc_t(1) / p);
    out[off] = static_cast<scalar_t>(a);
  }
};

void norm_kernel_cuda(const ReductionPlan& p) {
  const double ord = p.param;
  const NormKind kind = ord == 0           ? NormKind::Zero
                        : ord == 1         ? NormKind::One
                        : ord == 2         ? NormKind::Two
                        : ord == INFINITY  ? NormKind::Inf
                        : ord == -INFINITY ? NormKind::NegInf
                                           : NormKind::General;
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(p.in_dtype, "linalg.vector_norm", [&] {
    using acc_t = opmath_t<scalar_t>;
    run_reduction_cuda(p, NormOps<scalar_t>{static_cast<scalar_t*>(p.out[0]), kind, static_cast<acc_t>(ord)});
  });
}

// ---- logsumexp: (max, sum of exp(x - max)), merged ----

template <typename T>
struct LseAcc {
  T m, s;  // s == 0: nothing folded yet
};

template <typename scalar_t>
struct LogSumExpOps {
  using input_t = scalar_t;
  using T = opmath_t<scalar_t>;
  using acc_t = LseAcc<T>;
  scalar_t* out;

  __device__ acc_t identity() const { return {lowest<T>(), T(0)}; }
  __device__ acc_t combine(acc_t a, acc_t b) const {
    if (a.s == T(0)) return b;
    if (b.s == T(0)) return a;
    if (a.m != a.m || b.m != b.m) return {a.m != a.m ? a.m : b.m, T(1)};
    const T m = a.m > b.m ? a.m : b.m;
    if (m == highest<T>() || m == lowest<T>()) return {m, T(1)};
    return {m, a.s * dexp(a.m - m) + b.s * dexp(b.m - m)};
  }
  __device__ acc_t reduce(acc_t acc, scalar_t x, int64_t) const { return combine(acc, {up(x), T(1)}); }
  __device__ void project(acc_t a, int64_t off) const { out[off] = static_cast<scalar_t>(dlog(a.s) + a.m); }
};

void logsumexp_kernel_cuda(const ReductionPlan& p) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(p.in_dtype, "logsumexp", [&] {
    run_reduction_cuda(p, LogSumExpOps<scalar_t>{static_cast<scalar_t*>(p.out[0])});
  });
}

}  // namespace

REGISTER_CUDA_DISPATCH(var_stub, &var_kernel_cuda);
REGISTER_CUDA_DISPATCH(norm_stub, &norm_kernel_cuda);
REGISTER_CUDA_DISPATCH(norm_other_stub, &norm_kernel_cuda);
REGISTER_CUDA_DISPATCH(logsumexp_stub, &logsumexp_kernel_cuda);

}  // namespace ember::at::native
