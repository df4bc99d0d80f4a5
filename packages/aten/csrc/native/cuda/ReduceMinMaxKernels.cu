// CUDA kernels of amax, amin (NaN propagates) and argmax, argmin with or without
// their values (max.dim / min.dim): the first extreme index, NaN counted as the most
// extreme value (as PyTorch). The loops are Reduce.cuh's.
#include "../ReduceOps.h"
#include "Reduce.cuh"

namespace ember::at::native {
namespace {

using namespace cuda_reduce;

ScalarType bool_as_byte(ScalarType t) { return t == ScalarType::Bool ? ScalarType::Byte : t; }

template <typename scalar_t>
using val_t = std::conditional_t<is_reduced_float_v<scalar_t>, float, scalar_t>;

// max (or min) with NaN winning; one instantiation serves both directions.
template <typename scalar_t>
struct MinMaxOps {
  using input_t = scalar_t;
  using acc_t = val_t<scalar_t>;
  scalar_t* out;
  bool is_max;

  __device__ acc_t upd(acc_t m, acc_t x) const {
    const bool better = is_max ? (x > m) : (x < m);
    return (better || x != x) ? x : m;
  }
  __device__ acc_t identity() const { return is_max ? lowest<acc_t>() : highest<acc_t>(); }
  __device__ acc_t reduce(acc_t acc, scalar_t x, int64_t) const { return upd(acc, static_cast<acc_t>(x)); }
  __device__ acc_t combine(acc_t a, acc_t b) const { return upd(a, b); }
  __device__ void project(acc_t a, int64_t off) const { out[off] = static_cast<scalar_t>(a); }
};

void minmax_kernel_cuda(const ReductionPlan& p, bool is_max) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(bool_as_byte(p.in_dtype), is_max ? "amax" : "amin", [&] {
    run_reduction_cuda(p, MinMaxOps<scalar_t>{static_cast<scalar_t*>(p.out[0]), is_max});
  });
}
void amax_kernel_cuda(const ReductionPlan& p) { minmax_kernel_cuda(p, true); }
void amin_kernel_cuda(const ReductionPlan& p) { minmax_kernel_cuda(p, false); }

template <typename scalar_t>
struct ArgAcc {
  val_t<scalar_t> v;
  int64_t i;  // -1: nothing folded yet
};

template <typename scalar_t>
struct ArgOps {
  using input_t = scalar_t;
  using acc_t = ArgAcc<scalar_t>;
  using V = val_t<scalar_t>;
  scalar_t* values;  // may be null (argmax, argmin)
  int64_t* indices;
  bool is_max;

  // x strictly more extreme than m (a NaN beats any number)
  __device__ bool better(V x, V m) const {
    if constexpr (is_float_like_v<scalar_t>) {
      return (is_max ? x > m : x < m) || (x != x && m == m);
    } else {
      return is_max ? x > m : x < m;
    }
  }
  __device__ acc_t identity() const { return {V(0), -1}; }
  // Symmetric: ties (equal values, or two NaNs) go to the smaller index.
  __device__ acc_t combine(acc_t a, acc_t b) const {
    if (a.i < 0) return b;
    if (b.i < 0) return a;
    if (better(b.v, a.v)) return b;
    if (better(a.v, b.v)) return a;
    return b.i < a.i ? b : a;
  }
  __device__ acc_t reduce(acc_t acc, scalar_t x, int64_t j) const {
    const V v = static_cast<V>(x);
    // a thread folds increasing indices: on a tie the accumulated one stays
    if (acc.i < 0 || better(v, acc.v)) return {v, j};
    return acc;
  }
  __device__ void project(acc_t a, int64_t off) const {
    if (values) values[off] = static_cast<scalar_t>(a.v);
    indices[off] = a.i;
  }
};

void arg_kernel_cuda(const ReductionPlan& p, bool is_max) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(bool_as_byte(p.in_dtype), is_max ? "argmax" : "argmin", [&] {
    run_reduction_cuda(p, ArgOps<scalar_t>{static_cast<scalar_t*>(p.out[0]), static_cast<int64_t*>(p.out[1]), is_max});
  });
}
void argmax_kernel_cuda(const ReductionPlan& p) { arg_kernel_cuda(p, true); }
void argmin_kernel_cuda(const ReductionPlan& p) { arg_kernel_cuda(p, false); }

}  // namespace

REGISTER_CUDA_DISPATCH(amax_stub, &amax_kernel_cuda);
REGISTER_CUDA_DISPATCH(amin_stub, &amin_kernel_cuda);
REGISTER_CUDA_DISPATCH(argmax_stub, &argmax_kernel_cuda);
REGISTER_CUDA_DISPATCH(argmin_stub, &argmin_kernel_cuda);

}  // namespace ember::at::native
