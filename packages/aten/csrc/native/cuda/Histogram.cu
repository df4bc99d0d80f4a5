// CUDA bincount and histc: one thread per element adds into its bin with atomicAdd.
// Counts are exact (64-bit integers); bincount's weighted sums (float32 / float64
// atomics) may round differently from run to run, as PyTorch's CUDA kernels. The
// sizes that depend on the data (bincount's largest value, histc's data range when
// min == max) are reduced on the device and copied to the host.
#include <cmath>

#include <ember/aten/Dispatch.h>

#include "../Histogram.h"
#include "../ReduceOps.h"
#include "Reduce.cuh"

namespace ember::at::native {

// the reductions (ReduceOps.cpp)
Tensor amax_out(const Tensor& self, IntArrayRef dim, bool keepdim, const Tensor& out);
Tensor amin_out(const Tensor& self, IntArrayRef dim, bool keepdim, const Tensor& out);

namespace {

using namespace cuda_reduce;

template <typename index_t, typename weight_t>
__global__ void bincount_kernel(const index_t* __restrict__ x, const weight_t* __restrict__ w, int64_t n,
                                weight_t* __restrict__ out) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    atomicAdd(out + static_cast<int64_t>(x[i]), w[i]);
  }
}

template <typename index_t>
__global__ void bincount_count_kernel(const index_t* __restrict__ x, int64_t n, unsigned long long* __restrict__ out) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    atomicAdd(out + static_cast<int64_t>(x[i]), 1ull);
  }
}

Tensor zeros_cuda(int64_t n, ScalarType dtype, Device device) {
  Tensor t = empty({n}, dtype, device);
  if (n > 0) {
    EMBER_CUDA_CHECK(
        cudaMemsetAsync(t.data_ptr(), 0, static_cast<size_t>(n) * c10::elementSize(dtype), cuda::current_stream()));
  }
  return t;
}

// ---- histc ----

// The smallest and largest non-NaN values (as double); NaN, NaN when there are none.
struct RangeAcc {
  double lo, hi;
  bool any;
};

template <typename scalar_t>
struct RangeOps {
  using input_t = scalar_t;
  using acc_t = RangeAcc;
  double* out;

  __device__ acc_t identity() const { return {0.0, 0.0, false}; }
  __device__ acc_t combine(acc_t a, acc_t b) const {
    if (!a.any) return b;
    if (!b.any) return a;
    return {a.lo < b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi, true};
  }
  __device__ acc_t reduce(acc_t a, scalar_t x, int64_t) const {
    const double v = static_cast<double>(up(x));
    if (v != v) return a;
    return combine(a, {v, v, true});
  }
  __device__ void project(acc_t a, int64_t) const {
    const double nan = __longlong_as_double(0x7ff8000000000000LL);
    out[0] = a.any ? a.lo : nan;
    out[1] = a.any ? a.hi : nan;
  }
};

template <typename scalar_t>
__global__ void histc_kernel(const scalar_t* __restrict__ x, int64_t n, opmath_t<scalar_t> lo, opmath_t<scalar_t> hi,
                             int64_t bins, unsigned long long* __restrict__ counts) {
  using T = opmath_t<scalar_t>;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t b = histc_bin(static_cast<T>(x[i]), lo, hi, bins);
    if (b >= 0) atomicAdd(counts + b, 1ull);
  }
}

template <typename scalar_t>
__global__ void counts_to_dtype(const unsigned long long* __restrict__ counts, int64_t bins,
                                scalar_t* __restrict__ out) {
  for (int64_t b = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; b < bins;
       b += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    out[b] = static_cast<scalar_t>(static_cast<opmath_t<scalar_t>>(static_cast<int64_t>(counts[b])));
  }
}

}  // namespace

Tensor bincount_cuda(const Tensor& self, const std::optional<Tensor>& weights, int64_t minlength) {
  const bool has_w = check_bincount_args(self, weights, minlength);
  c10::DeviceGuard guard(self.device());
  const Device device = self.device();
  const Tensor x = self.contiguous();
  const int64_t n = x.numel();
  int64_t len = minlength;
  if (n > 0) {
    EMBER_CHECK(amin_out(x, {}, false, Tensor()).item().toLong() >= 0,
                "bincount only supports 1-d non-negative integral inputs.");
    len = std::max(amax_out(x, {}, false, Tensor()).item().toLong() + 1, minlength);
  }
  const cudaStream_t stream = cuda::current_stream();
  if (!has_w) {
    Tensor out = zeros_cuda(len, ScalarType::Long, device);
    if (n == 0) return out;
    EMBER_DISPATCH_INTEGRAL_TYPES(x.dtype(), "bincount", [&] {
      bincount_count_kernel<scalar_t><<<cuda::grid_size(n), cuda::kNumThreads, 0, stream>>>(
          static_cast<const scalar_t*>(x.data_ptr()), n, static_cast<unsigned long long*>(out.data_ptr()));
      EMBER_CUDA_KERNEL_LAUNCH_CHECK();
    });
    return out;
  }
  const ScalarType wt = bincount_weight_dtype(*weights);
  const Tensor w = weights->to(wt).contiguous();
  Tensor out = zeros_cuda(len, wt, device);
  if (n == 0) return out;
  EMBER_DISPATCH_FLOATING_TYPES(wt, "bincount", [&] {
    using weight_t = scalar_t;
    EMBER_DISPATCH_INTEGRAL_TYPES(x.dtype(), "bincount", [&] {
      bincount_kernel<scalar_t, weight_t><<<cuda::grid_size(n), cuda::kNumThreads, 0, stream>>>(
          static_cast<const scalar_t*>(x.data_ptr()), static_cast<const weight_t*>(w.data_ptr()), n,
          static_cast<weight_t*>(out.data_ptr()));
      EMBER_CUDA_KERNEL_LAUNCH_CHECK();
    });
  });
  return out;
}

Tensor histc_out_cuda(const Tensor& self, int64_t bins, const Scalar& min, const Scalar& max, const Tensor& out) {
  double lo = min.toDouble(), hi = max.toDouble();
  check_histc_args(self, bins, lo, hi, out);
  c10::DeviceGuard guard(self.device());
  const Device device = self.device();
  const Tensor x = self.contiguous();
  const int64_t n = x.numel();
  auto o = prepare_output(out, {bins}, self.dtype(), self.dtype(), self);
  const cudaStream_t stream = cuda::current_stream();
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(x.dtype(), "histc", [&] {
    using T = opmath_t<scalar_t>;
    if (lo == hi && n > 0) {  // the data's range (NaNs ignored)
      Tensor range = empty({2}, ScalarType::Double, device);
      ReductionPlan p;
      p.in = x.data_ptr();
      p.in_dtype = x.dtype();
      p.out[0] = range.data_ptr();
      p.out_dtype[0] = ScalarType::Double;
      p.red_sizes.push_back(n);
      p.red_strides.push_back(1);
      p.num_outputs = 1;
      p.num_reduced = n;
      p.device = device;
      run_reduction_cuda(p, RangeOps<scalar_t>{static_cast<double*>(range.data_ptr())});
      const Tensor host = range.to(Device(DeviceType::CPU));
      const double* r = static_cast<const double*>(host.data_ptr());
      if (r[0] == r[0]) {
        lo = r[0];
        hi = r[1];
      }
    }
    widen_histc_range(lo, hi);
    Tensor counts = zeros_cuda(bins, ScalarType::Long, device);
    auto* c = static_cast<unsigned long long*>(counts.data_ptr());
    if (n > 0) {
      histc_kernel<scalar_t><<<cuda::grid_size(n), cuda::kNumThreads, 0, stream>>>(
          static_cast<const scalar_t*>(x.data_ptr()), n, static_cast<T>(lo), static_cast<T>(hi), bins, c);
      EMBER_CUDA_KERNEL_LAUNCH_CHECK();
    }
    counts_to_dtype<scalar_t>
        <<<cuda::grid_size(bins), cuda::kNumThreads, 0, stream>>>(c, bins, static_cast<scalar_t*>(o.buffer.data_ptr()));
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
  o.finish();
  return o.result;
}

}  // namespace ember::at::native
