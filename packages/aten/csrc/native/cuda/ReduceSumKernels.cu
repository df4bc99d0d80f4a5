// CUDA kernels of the additive and logical reductions: sum, nansum, mean (sum with a
// divisor), prod, all, any, count_nonzero, and nanmean's final division. The loops
// are Reduce.cuh's; this file only says how each reduction folds and writes.
//
// Accumulation types (as PyTorch and the CPU kernels): float for float16/bfloat16,
// double for float64, 64-bit wrapping integers for integral and bool inputs.
#include "../ReduceOps.h"
#include "Reduce.cuh"

namespace ember::at::native {
namespace {

using namespace cuda_reduce;

// bool data is 0/1 bytes: bool inputs run through the uint8 instantiations.
ScalarType bool_as_byte(ScalarType t) { return t == ScalarType::Bool ? ScalarType::Byte : t; }

// sum / mean / nansum (floating: acc opmath_t, out scalar_t; integral: acc uint64, out int64)
template <typename scalar_t>
struct SumOps {
  static constexpr bool kFloat = is_float_like_v<scalar_t>;
  using input_t = scalar_t;
  using acc_t = std::conditional_t<kFloat, opmath_t<scalar_t>, uint64_t>;
  using out_t = std::conditional_t<kFloat, scalar_t, int64_t>;
  out_t* out;
  acc_t divisor;  // floating only: 1 for sum, N for mean
  bool nan_to_zero;
  bool bool_bytes = false;  // a bool input read as uint8: a non-zero byte counts 1 (bytes 2..255)

  __device__ acc_t identity() const { return acc_t(0); }
  __device__ acc_t reduce(acc_t acc, scalar_t x, int64_t) const {
    if constexpr (kFloat) {
      acc_t v = up(x);
      if (nan_to_zero && v != v) v = acc_t(0);
      return acc + v;
    } else {
      return acc + (bool_bytes ? acc_t(x != 0) : static_cast<acc_t>(static_cast<int64_t>(x)));
    }
  }
  __device__ acc_t combine(acc_t a, acc_t b) const { return a + b; }
  __device__ void project(acc_t a, int64_t off) const {
    if constexpr (kFloat) {
      out[off] = static_cast<scalar_t>(a / divisor);
    } else {
      out[off] = static_cast<int64_t>(a);
    }
  }
};

template <typename scalar_t>
void run_sum(const ReductionPlan& p, bool nan_to_zero) {
  using Ops = SumOps<scalar_t>;
  using acc_t = typename Ops::acc_t;
  const acc_t divisor = Ops::kFloat ? static_cast<acc_t>(p.param) : acc_t(1);
  run_reduction_cuda(
      p, Ops{static_cast<typename Ops::out_t*>(p.out[0]), divisor, nan_to_zero, p.in_dtype == ScalarType::Bool});
}

void sum_kernel_cuda(const ReductionPlan& p) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(bool_as_byte(p.in_dtype), "sum", [&] { run_sum<scalar_t>(p, false); });
}

void nansum_kernel_cuda(const ReductionPlan& p) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(p.in_dtype, "nansum", [&] { run_sum<scalar_t>(p, true); });
}

template <typename scalar_t>
struct ProdOps {
  static constexpr bool kFloat = is_float_like_v<scalar_t>;
  using input_t = scalar_t;
  using acc_t = std::conditional_t<kFloat, opmath_t<scalar_t>, uint64_t>;
  using out_t = std::conditional_t<kFloat, scalar_t, int64_t>;
  out_t* out;

  __device__ acc_t identity() const { return acc_t(1); }
  __device__ acc_t reduce(acc_t acc, scalar_t x, int64_t) const {
    if constexpr (kFloat) {
      return acc * up(x);
    } else {
      return acc * static_cast<acc_t>(static_cast<int64_t>(x));
    }
  }
  __device__ acc_t combine(acc_t a, acc_t b) const { return a * b; }
  __device__ void project(acc_t a, int64_t off) const {
    if constexpr (kFloat) {
      out[off] = static_cast<scalar_t>(a);
    } else {
      out[off] = static_cast<int64_t>(a);
    }
  }
};

void prod_kernel_cuda(const ReductionPlan& p) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(bool_as_byte(p.in_dtype), "prod", [&] {
    using Ops = ProdOps<scalar_t>;
    run_reduction_cuda(p, Ops{static_cast<typename Ops::out_t*>(p.out[0])});
  });
}

// ---- all / any / count_nonzero: integral inputs are read as unsigned integers of
// their width (nonzero is nonzero), so eight instantiations cover the ten dtypes ----

template <typename T>
__device__ __forceinline__ bool truthy(T v) {
  if constexpr (is_float_like_v<T>) {
    return up(v) != opmath_t<T>(0);  // NaN is nonzero
  } else {
    return v != T(0);
  }
}

template <typename T>
struct LogicalOps {
  using input_t = T;
  using acc_t = bool;
  uint8_t* out;
  bool all;

  __device__ acc_t identity() const { return all; }
  __device__ acc_t reduce(acc_t acc, T x, int64_t) const { return all ? (acc && truthy(x)) : (acc || truthy(x)); }
  __device__ acc_t combine(acc_t a, acc_t b) const { return all ? (a && b) : (a || b); }
  __device__ void project(acc_t a, int64_t off) const { out[off] = a ? 1 : 0; }
};

// not_nan: counts x == x (floating inputs) instead of x != 0.
template <typename T>
struct CountOps {
  using input_t = T;
  using acc_t = int64_t;
  int64_t* out;
  bool not_nan;

  __device__ acc_t identity() const { return 0; }
  __device__ acc_t reduce(acc_t acc, T x, int64_t) const {
    if constexpr (is_float_like_v<T>) {
      if (not_nan) return acc + (up(x) == up(x) ? 1 : 0);
    }
    return acc + (truthy(x) ? 1 : 0);
  }
  __device__ acc_t combine(acc_t a, acc_t b) const { return a + b; }
  __device__ void project(acc_t a, int64_t off) const { out[off] = a; }
};

struct RunLogical {
  const ReductionPlan& p;
  bool all;
  template <typename T>
  void operator()() const {
    run_reduction_cuda(p, LogicalOps<T>{static_cast<uint8_t*>(p.out[0]), all});
  }
};

struct RunCount {
  const ReductionPlan& p;
  template <typename T>
  void operator()() const {
    run_reduction_cuda(p, CountOps<T>{static_cast<int64_t*>(p.out[0]), p.flags == 1});
  }
};

void all_kernel_cuda(const ReductionPlan& p) { dispatch_nonzero_type(p.in_dtype, "all", RunLogical{p, true}); }
void any_kernel_cuda(const ReductionPlan& p) { dispatch_nonzero_type(p.in_dtype, "any", RunLogical{p, false}); }
void count_nonzero_kernel_cuda(const ReductionPlan& p) {
  dispatch_nonzero_type(p.in_dtype, p.flags == 1 ? "count" : "count_nonzero", RunCount{p});
}

// ---- nanmean: sum / count, the quotient taken in double as the CPU kernel ----

template <typename scalar_t>
__global__ void nanmean_divide_kernel(const scalar_t* sum, const int64_t* count, scalar_t* out, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const double q = static_cast<double>(up(sum[i])) / static_cast<double>(count[i]);
    out[i] = static_cast<scalar_t>(static_cast<opmath_t<scalar_t>>(q));
  }
}

void nanmean_divide_cuda(const Tensor& sum, const Tensor& count, const Tensor& out) {
  const int64_t n = out.numel();
  if (n == 0) return;
  c10::DeviceGuard guard(out.device());
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(out.dtype(), "nanmean", [&] {
    nanmean_divide_kernel<scalar_t><<<cuda::grid_size(n), cuda::kNumThreads, 0, cuda::current_stream()>>>(
        static_cast<const scalar_t*>(sum.data_ptr()), count.data_ptr<int64_t>(), static_cast<scalar_t*>(out.data_ptr()),
        n);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

}  // namespace

REGISTER_CUDA_DISPATCH(sum_stub, &sum_kernel_cuda);
REGISTER_CUDA_DISPATCH(nansum_stub, &nansum_kernel_cuda);
REGISTER_CUDA_DISPATCH(prod_stub, &prod_kernel_cuda);
REGISTER_CUDA_DISPATCH(all_stub, &all_kernel_cuda);
REGISTER_CUDA_DISPATCH(any_stub, &any_kernel_cuda);
REGISTER_CUDA_DISPATCH(count_nonzero_stub, &count_nonzero_kernel_cuda);
REGISTER_CUDA_DISPATCH(nanmean_divide_stub, &nanmean_divide_cuda);

}  // namespace ember::at::native
