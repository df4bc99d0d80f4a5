// CUDA kernels of the losses: the pointwise losses (pointwise_loss_stub, through
// gpu_kernel), the sum behind every loss reduction (loss_sum_stub) and nll_loss /
// nll_loss2d forward and backward (the host side checks as Loss.cpp does, with the
// shared nll_check_* functions).
//
// binary_cross_entropy's input range is checked on the device too: a value outside
// [0, 1] is recorded and raised as the CPU's RuntimeError ("all elements of input should
// be between 0 and 1") by the next check_device_errors; the element's loss is NaN.
//
// nll targets are checked on the device: a target outside [0, C) that is not
// ignore_index is recorded with report_index_error and raised as PyTorch's CPU message
// ("Target 7 is out of bounds.", IndexError) by the next check_device_errors (the next
// launch of a reporting kernel, a device-to-host copy or cuda.synchronize()); the
// element itself contributes nothing.
//
// Sums are taken in double, as on the CPU: per block, then the block partials in a
// fixed order (deterministic).
#include <algorithm>

#include <ember/aten/Dispatch.h>

#include "../Loss.h"
#include "CUDAUtils.cuh"
#include "Loops.cuh"
#include "NNReduce.cuh"

namespace ember::at::native {
namespace {

using namespace cuda_nn;

constexpr int kSumThreads = 512;
constexpr int kMaxSumBlocks = 256;

template <typename T>
__global__ void partial_sum_kernel(double* __restrict__ partial, const T* __restrict__ x, int64_t n) {
  double s = 0;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    s += static_cast<double>(static_cast<opmath_t<T>>(x[i]));
  s = block_reduce(s, SumOp(), 0.0);
  if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

__global__ void finish_sum_kernel(double* __restrict__ out, const double* __restrict__ partial, int64_t nparts,
                                  double divisor) {
  double s = 0;
  for (int64_t i = threadIdx.x; i < nparts; i += blockDim.x) s += partial[i];
  s = block_reduce(s, SumOp(), 0.0);
  if (threadIdx.x == 0) out[0] = divisor == 1.0 ? s : s / divisor;
}

void loss_sum_kernel_cuda(const Tensor& out, const Tensor& t, double divisor) {
  c10::DeviceGuard guard(t.device());
  const cudaStream_t stream = cuda::current_stream();
  const int64_t n = t.numel();
  const int64_t blocks =
      std::max<int64_t>(1, std::min<int64_t>(kMaxSumBlocks, cuda::ceil_div<int64_t>(n, kSumThreads)));
  Tensor partial = at::empty({blocks}, ScalarType::Double, t.device());
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(t.dtype(), "loss_sum_cuda", [&] {
    partial_sum_kernel<scalar_t><<<static_cast<unsigned int>(blocks), kSumThreads, 0, stream>>>(
        partial.data_ptr<double>(), t.data_ptr<scalar_t>(), n);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
  finish_sum_kernel<<<1, kSumThreads, 0, stream>>>(out.data_ptr<double>(), partial.data_ptr<double>(), blocks, divisor);
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
}

// ---------------------------------------------------------------- pointwise losses
// The formulas of cpu/LossKernel.cpp, one functor per arity (the loss chosen at run
// time: a uniform branch), so each dtype instantiates three gpu_kernels rather than eleven.

__host__ __device__ inline float lf_log(float x) { return logf(x); }
__host__ __device__ inline double lf_log(double x) { return log(x); }
__host__ __device__ inline float lf_log1p(float x) { return log1pf(x); }
__host__ __device__ inline double lf_log1p(double x) { return log1p(x); }
__host__ __device__ inline float lf_exp(float x) { return expf(x); }
__host__ __device__ inline double lf_exp(double x) { return exp(x); }
__host__ __device__ inline float lf_abs(float x) { return fabsf(x); }
__host__ __device__ inline double lf_abs(double x) { return fabs(x); }

template <typename A>
__host__ __device__ inline A lf_sign(A d) {
  return d > A(0) ? A(1) : (d < A(0) ? A(-1) : A(0));
}

// log(1 + exp(z)) without overflow: max(z, 0) + log1p(exp(-|z|))
template <typename A>
__host__ __device__ inline A lf_softplus(A z) {
  return (z > A(0) ? z : A(0)) + lf_log1p(lf_exp(-lf_abs(z)));
}

// (self, target): MSE, SmoothL1, Huber, SoftMargin
template <typename S>
struct Loss2 {
  using A = opmath_t<S>;
  PointwiseLoss op;
  A a0;
  __host__ __device__ S operator()(S x, S t) const {
    const A xv = static_cast<A>(x), tv = static_cast<A>(t);
    switch (op) {
      case PointwiseLoss::MSE: {
        const A d = xv - tv;
        return S(d * d);
      }
      case PointwiseLoss::SmoothL1: {
        const A d = lf_abs(xv - tv);
        return S(d < a0 ? A(0.5) * d * d / a0 : d - A(0.5) * a0);
      }
      case PointwiseLoss::Huber: {
        const A d = lf_abs(xv - tv);
        return S(d < a0 ? A(0.5) * d * d : a0 * (d - A(0.5) * a0));
      }
      default:  // SoftMargin
        return S(lf_softplus(-tv * xv));
    }
  }
};

// (self, target, grad) for the backward ones; (self, target, weight) for BCE
template <typename S>
struct Loss3 {
  using A = opmath_t<S>;
  PointwiseLoss op;
  A a0, a1;
  cuda::DeviceError* err;
  int err_op;
  __host__ __device__ S operator()(S x, S t, S g) const {
    const A xv = static_cast<A>(x), tv = static_cast<A>(t), gv = static_cast<A>(g);
    switch (op) {
      case PointwiseLoss::MSEBackward:
        return S(a0 * (xv - tv) * gv);
      case PointwiseLoss::SmoothL1Backward: {
        const A d = xv - tv;
        return S(a0 * gv * (lf_abs(d) < a1 ? d / a1 : lf_sign(d)));
      }
      case PointwiseLoss::HuberBackward: {
        const A d = xv - tv;
        const A c = d < -a1 ? -a1 : (d > a1 ? a1 : d);
        return S(a0 * gv * c);
      }
      case PointwiseLoss::SoftMarginBackward: {
        const A z = -tv * xv;  // d/dx log(1 + exp(z)) = -t sigmoid(z)
        return S(-a0 * gv * tv / (A(1) + lf_exp(-z)));
      }
      default: {  // BCE, g is the weight
        if (!(xv >= A(0) && xv <= A(1))) {
#if defined(__CUDA_ARCH__)
          cuda::report_index_error(err, err_op, 0, 0, 0);
#endif
          return S(A(0) / A(0));  // NaN
        }
        // PyTorch clamps each log at -100, so x = 0 or 1 gives a finite loss
        const A lx = lf_log(xv) > A(-100) ? lf_log(xv) : A(-100);
        const A l1x = lf_log1p(-xv) > A(-100) ? lf_log1p(-xv) : A(-100);
        return S(gv * ((tv - A(1)) * l1x - tv * lx));
      }
    }
  }
};

// BCEBackward (self, target, grad, weight); BCEWithLogits (self, target, pos_weight, weight)
template <typename S>
struct Loss4 {
  using A = opmath_t<S>;
  PointwiseLoss op;
  A a0;
  __host__ __device__ S operator()(S x, S t, S u, S w) const {
    const A xv = static_cast<A>(x), tv = static_cast<A>(t), uv = static_cast<A>(u), wv = static_cast<A>(w);
    if (op == PointwiseLoss::BCEBackward) {
      const A den = (A(1) - xv) * xv > A(1e-12) ? (A(1) - xv) * xv : A(1e-12);
      return S(a0 * uv * wv * (xv - tv) / den);
    }
    // (1 - t) x + (1 + (pw - 1) t) log(1 + exp(-x)), the log in its overflow-free form
    const A log_weight = (uv - A(1)) * tv + A(1);
    return S(wv * ((A(1) - tv) * xv + log_weight * lf_softplus(-xv)));
  }
};

template <typename S>
void pointwise_loss_impl_cuda(TensorIterator& iter, PointwiseLoss op, double p0, double p1) {
  using A = opmath_t<S>;
  switch (iter.ninputs()) {
    case 2:
      gpu_kernel(iter, Loss2<S>{op, static_cast<A>(p0)});
      return;
    case 3: {
      cuda::DeviceError* err = nullptr;
      int err_op = 0;
      if (op == PointwiseLoss::BCE) {
        const int dev = iter.device(0).index;
        cuda::check_device_errors(dev);
        err = cuda::device_error_slot(dev);
        err_op = cuda::register_error_format("all elements of input should be between 0 and 1", false);
      }
      gpu_kernel(iter, Loss3<S>{op, static_cast<A>(p0), static_cast<A>(p1), err, err_op});
      return;
    }
    default:
      gpu_kernel(iter, Loss4<S>{op, static_cast<A>(p0)});
      return;
  }
}

void pointwise_loss_kernel_cuda(TensorIterator& iter, PointwiseLoss op, double p0, double p1) {
  c10::DeviceGuard guard(iter.device(0));
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(iter.common_dtype(), "loss_cuda",
                                         [&] { pointwise_loss_impl_cuda<scalar_t>(iter, op, p0, p1); });
}

// ---------------------------------------------------------------- nll_loss

struct NllArgs {
  int64_t count, C, S, ignore_index;
  cuda::DeviceError* err;
  int op;
};

// -1: ignored, -2: out of range (reported), else the class
template <typename target_t>
__device__ inline int64_t nll_class(const target_t* tg, int64_t i, const NllArgs& a) {
  const int64_t t = static_cast<int64_t>(tg[i]);
  if (t == a.ignore_index) return -1;
  if (t < 0 || t >= a.C) {
    cuda::report_index_error(a.err, a.op, 0, t, a.C);
    return -2;
  }
  return t;
}

// reduction='none': out[i] = -w[t] x[n, t, s] (0 when ignored)
template <typename T, typename target_t>
__global__ void nll_forward_none_kernel(T* __restrict__ out, const T* __restrict__ x, const target_t* __restrict__ tg,
                                        const T* __restrict__ w, NllArgs a) {
  using A = opmath_t<T>;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < a.count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t t = nll_class(tg, i, a);
    double v = 0;
    if (t >= 0) {
      const int64_t n = i / a.S, s = i % a.S;
      const double wt = w ? static_cast<double>(static_cast<A>(w[t])) : 1.0;
      v = -wt * static_cast<double>(static_cast<A>(x[(n * a.C + t) * a.S + s]));
    }
    out[i] = static_cast<T>(static_cast<A>(v));
  }
}

// One block: total_weight = sum of w[t] over the non-ignored targets; out (when given) =
// the sum of -w[t] x[n, t, s], divided by total_weight for a mean (0 / 0 = NaN).
template <typename T, typename target_t>
__global__ void nll_forward_reduce_kernel(T* __restrict__ out, T* __restrict__ total_weight, const T* __restrict__ x,
                                          const target_t* __restrict__ tg, const T* __restrict__ w, NllArgs a,
                                          bool mean) {
  using A = opmath_t<T>;
  double sum = 0, tw = 0;
  for (int64_t i = threadIdx.x; i < a.count; i += blockDim.x) {
    const int64_t t = nll_class(tg, i, a);
    if (t < 0) continue;
    const double wt = w ? static_cast<double>(static_cast<A>(w[t])) : 1.0;
    tw += wt;
    if (out) {
      const int64_t n = i / a.S, s = i % a.S;
      sum -= wt * static_cast<double>(static_cast<A>(x[(n * a.C + t) * a.S + s]));
    }
  }
  sum = block_reduce(sum, SumOp(), 0.0);
  tw = block_reduce(tw, SumOp(), 0.0);
  if (threadIdx.x == 0) {
    if (out) out[0] = static_cast<T>(static_cast<A>(mean ? sum / tw : sum));
    total_weight[0] = static_cast<T>(static_cast<A>(tw));
  }
}

// grad_input[n, t, s] = -w[t] g (g: grad_output[i] for 'none', else grad_output[0], divided
// by total_weight for a mean); grad_input starts as zeros.
template <typename T, typename target_t>
__global__ void nll_backward_kernel(T* __restrict__ gi, const T* __restrict__ go, const target_t* __restrict__ tg,
                                    const T* __restrict__ w, const T* __restrict__ total_weight, NllArgs a,
                                    int64_t reduction) {
  using A = opmath_t<T>;
  double scale = 1;
  if (reduction != Reduction::None) {
    scale = static_cast<double>(static_cast<A>(go[0]));
    if (reduction == Reduction::Mean) scale /= static_cast<double>(static_cast<A>(total_weight[0]));
  }
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < a.count;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t t = nll_class(tg, i, a);
    if (t < 0) continue;
    const int64_t n = i / a.S, s = i % a.S;
    const double wt = w ? static_cast<double>(static_cast<A>(w[t])) : 1.0;
    const double gv = reduction == Reduction::None ? static_cast<double>(static_cast<A>(go[i])) : scale;
    gi[(n * a.C + t) * a.S + s] = static_cast<T>(static_cast<A>(-wt * gv));
  }
}

int nll_error_op() {
  static const int op = cuda::register_error_format("Target {index} is out of bounds.");
  return op;
}

NllArgs nll_args(const Tensor& self, NllGeometry g, int64_t ignore_index) {
  const int dev = self.device().index;
  cuda::check_device_errors(dev);  // an earlier kernel's error surfaces before this one runs
  return NllArgs{g.N * g.S, g.C, g.S, ignore_index, cuda::device_error_slot(dev), nll_error_op()};
}

std::tuple<Tensor, Tensor> nll_forward_cuda(const Tensor& self, const Tensor& target,
                                            const std::optional<Tensor>& weight, int64_t reduction,
                                            int64_t ignore_index, NllGeometry g, DimVector out_shape,
                                            const char* kernel) {
  const Tensor w = nll_check_forward(self, target, weight, reduction, g, kernel);
  c10::DeviceGuard guard(self.device());
  const cudaStream_t stream = cuda::current_stream();
  const Tensor x = self.contiguous(), t = target.contiguous();
  Tensor out = reduction == Reduction::None ? at::empty(out_shape, self.dtype(), self.device())
                                            : at::empty({}, self.dtype(), self.device());
  Tensor total_weight = at::empty({}, self.dtype(), self.device());
  const NllArgs a = nll_args(self, g, ignore_index);
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(self.dtype(), kernel, [&] {
    auto run = [&](auto target_zero) {
      using target_t = decltype(target_zero);
      const target_t* tg = t.data_ptr<target_t>();
      const scalar_t* wp = w.defined() ? w.data_ptr<scalar_t>() : nullptr;
      if (reduction == Reduction::None && a.count > 0) {
        nll_forward_none_kernel<scalar_t, target_t><<<cuda::grid_size(a.count), cuda::kNumThreads, 0, stream>>>(
            out.data_ptr<scalar_t>(), x.data_ptr<scalar_t>(), tg, wp, a);
        EMBER_CUDA_KERNEL_LAUNCH_CHECK();
      }
      nll_forward_reduce_kernel<scalar_t, target_t><<<1, kSumThreads, 0, stream>>>(
          reduction == Reduction::None ? nullptr : out.data_ptr<scalar_t>(), total_weight.data_ptr<scalar_t>(),
          x.data_ptr<scalar_t>(), tg, wp, a, reduction == Reduction::Mean);
      EMBER_CUDA_KERNEL_LAUNCH_CHECK();
    };
    if (t.dtype() == ScalarType::Long) {
      run(int64_t{0});
    } else {
      run(uint8_t{0});
    }
  });
  return {out, total_weight};
}

Tensor nll_backward_cuda(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                         const std::optional<Tensor>& weight, int64_t reduction, int64_t ignore_index,
                         const Tensor& total_weight, NllGeometry g, IntArrayRef loss_shape, const char* kernel) {
  const Tensor w =
      nll_check_backward(grad_output, self, target, weight, reduction, total_weight, g, loss_shape, kernel);
  check_same_device("nll_loss_backward", self, total_weight);
  c10::DeviceGuard guard(self.device());
  const cudaStream_t stream = cuda::current_stream();
  auto same = [&](const Tensor& t) { return (t.dtype() == self.dtype() ? t : t.to(self.dtype())).contiguous(); };
  const Tensor go = same(grad_output), tw = same(total_weight), t = target.contiguous();
  Tensor grad_input = at::zeros(self.sizes(), self.dtype(), self.device());
  const NllArgs a = nll_args(self, g, ignore_index);
  if (a.count == 0) return grad_input;
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(self.dtype(), kernel, [&] {
    auto run = [&](auto target_zero) {
      using target_t = decltype(target_zero);
      nll_backward_kernel<scalar_t, target_t><<<cuda::grid_size(a.count), cuda::kNumThreads, 0, stream>>>(
          grad_input.data_ptr<scalar_t>(), go.data_ptr<scalar_t>(), t.data_ptr<target_t>(),
          w.defined() ? w.data_ptr<scalar_t>() : nullptr, tw.data_ptr<scalar_t>(), a, reduction);
      EMBER_CUDA_KERNEL_LAUNCH_CHECK();
    };
    if (t.dtype() == ScalarType::Long) {
      run(int64_t{0});
    } else {
      run(uint8_t{0});
    }
  });
  return grad_input;
}

}  // namespace

std::tuple<Tensor, Tensor> nll_loss_forward_cuda(const Tensor& self, const Tensor& target,
                                                 const std::optional<Tensor>& weight, int64_t reduction,
                                                 int64_t ignore_index) {
  const NllGeometry g = nll_geometry(self, target);
  return nll_forward_cuda(self, target, weight, reduction, ignore_index, g, nll_loss_shape(self), "nll_loss_out_frame");
}

Tensor nll_loss_backward_cuda(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                              const std::optional<Tensor>& weight, int64_t reduction, int64_t ignore_index,
                              const Tensor& total_weight) {
  const NllGeometry g = nll_geometry(self, target);
  return nll_backward_cuda(grad_output, self, target, weight, reduction, ignore_index, total_weight, g,
                           nll_loss_shape(self), "nll_loss_backward_out_frame");
}

std::tuple<Tensor, Tensor> nll_loss2d_forward_cuda(const Tensor& self, const Tensor& target,
                                                   const std::optional<Tensor>& weight, int64_t reduction,
                                                   int64_t ignore_index) {
  const NllGeometry g = nll2d_geometry(self, target);
  return nll_forward_cuda(self, target, weight, reduction, ignore_index, g,
                          DimVector(target.sizes().begin(), target.sizes().end()), "nll_loss2d_forward_out_frame");
}

Tensor nll_loss2d_backward_cuda(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                                const std::optional<Tensor>& weight, int64_t reduction, int64_t ignore_index,
                                const Tensor& total_weight) {
  const NllGeometry g = nll2d_geometry(self, target);
  return nll_backward_cuda(grad_output, self, target, weight, reduction, ignore_index, total_weight, g, target.sizes(),
                           "nll_loss2d_backward_out_frame");
}

REGISTER_CUDA_DISPATCH(loss_sum_stub, &loss_sum_kernel_cuda);
REGISTER_CUDA_DISPATCH(pointwise_loss_stub, &pointwise_loss_kernel_cuda);

}  // namespace ember::at::native
