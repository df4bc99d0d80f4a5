// CUDA kernels of batch, layer, group and RMS norm.
//
// Layer / RMS norm go through row_norm_stub / row_norm_backward_stub (the host side,
// Normalization.cpp, is device-agnostic for them): one block per row, statistics summed
// in double with warp shuffles (NNReduce.cuh); the weight / bias gradients are column
// sums over the rows, taken per chunk of rows and then over the chunks (deterministic).
//
// Batch and group norm have their own host functions here (batch_norm_cuda, ...): the
// CPU ones keep their per-channel coefficients in host arrays. Same checks
// (norm::check_*), same formulas as Normalization.cpp: per-channel mean and biased
// variance in two passes (sum, then squares about the mean, in double), running
// statistics updated with the unbiased variance, out = x * alpha[c] + beta[c]; the
// per-channel coefficients live in float64 device tensors.
#include <algorithm>
#include <cmath>
#include <limits>

#include <ember/aten/Dispatch.h>

#include "../Normalization.h"
#include "CUDAUtils.cuh"
#include "NormalizationKernels.cuh"

namespace ember::at::native {
namespace {

using namespace cuda_norm;
using Tensors3 = std::tuple<Tensor, Tensor, Tensor>;

// The row-norm kernels' bodies are the block functions of NormalizationKernels.cuh.
#define EMBER_CTX \
  Ctx { blockIdx.x, gridDim.x, blockIdx.y, threadIdx.x, blockDim.x }

unsigned int rows_grid(int64_t rows) { return static_cast<unsigned int>(std::min<int64_t>(rows, int64_t{1} << 20)); }

template <typename T>
__global__ void row_norm_kernel(T* __restrict__ out, T* __restrict__ mean, T* __restrict__ rstd,
                                const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ b, int64_t M,
                                int64_t D, double eps, bool rms) {
  row_norm_block<T>(EMBER_CTX, out, mean, rstd, x, w, b, M, D, eps, rms);
}

void row_norm_kernel_cuda(const Tensor& out, const Tensor& mean, const Tensor& rstd, const Tensor& x, const Tensor& w,
                          const Tensor& b, int64_t M, int64_t D, double eps, bool rms) {
  c10::DeviceGuard guard(x.device());
  EMBER_DISPATCH_FLOATING_TYPES(x.dtype(), rms ? "rms_norm_cuda" : "layer_norm_cuda", [&] {
    row_norm_kernel<scalar_t><<<rows_grid(M), row_block_threads(D), 0, cuda::current_stream()>>>(
        mut_ptr_or_null<scalar_t>(out), mut_ptr_or_null<scalar_t>(mean), rstd.data_ptr<scalar_t>(),
        x.data_ptr<scalar_t>(), ptr_or_null<scalar_t>(w), ptr_or_null<scalar_t>(b), M, D, eps, rms);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

template <typename T>
__global__ void row_norm_backward_input_kernel(T* __restrict__ gi, const T* __restrict__ g, const T* __restrict__ x,
                                               const T* __restrict__ mean, const T* __restrict__ rstd,
                                               const T* __restrict__ w, int64_t M, int64_t D, bool rms) {
  row_norm_backward_input_block<T>(EMBER_CTX, gi, g, x, mean, rstd, w, M, D, rms);
}

template <typename T>
__global__ void row_norm_backward_params_kernel(double* __restrict__ pw, double* __restrict__ pb,
                                                const T* __restrict__ g, const T* __restrict__ x,
                                                const T* __restrict__ mean, const T* __restrict__ rstd, int64_t M,
                                                int64_t D, int64_t rows_per) {
  row_norm_backward_params_block<T>(EMBER_CTX, pw, pb, g, x, mean, rstd, M, D, rows_per);
}

template <typename T>
__global__ void sum_chunks_kernel(T* __restrict__ out, const double* __restrict__ partial, int64_t nchunks, int64_t D) {
  sum_chunks_block<T>(EMBER_CTX, out, partial, nchunks, D);
}

void row_norm_backward_kernel_cuda(const Tensor& gi, const Tensor& gw, const Tensor& gb, const Tensor& g,
                                   const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w, int64_t M,
                                   int64_t D, bool rms) {
  c10::DeviceGuard guard(x.device());
  const cudaStream_t stream = cuda::current_stream();
  EMBER_DISPATCH_FLOATING_TYPES(x.dtype(), rms ? "rms_norm_backward_cuda" : "layer_norm_backward_cuda", [&] {
    using T = scalar_t;
    if (gi.defined()) {
      row_norm_backward_input_kernel<T><<<rows_grid(M), row_block_threads(D), 0, stream>>>(
          gi.data_ptr<T>(), g.data_ptr<T>(), x.data_ptr<T>(), ptr_or_null<T>(mean), rstd.data_ptr<T>(),
          ptr_or_null<T>(w), M, D, rms);
      EMBER_CUDA_KERNEL_LAUNCH_CHECK();
    }
    if (!gw.defined() && !gb.defined()) return;
    const int64_t nchunks = std::max<int64_t>(1, std::min<int64_t>(M, 64));
    const int64_t rows_per = cuda::ceil_div(M, nchunks);
    Tensor pw = gw.defined() ? at::empty({nchunks, D}, ScalarType::Double, x.device()) : Tensor();
    Tensor pb = gb.defined() ? at::empty({nchunks, D}, ScalarType::Double, x.device()) : Tensor();
    const dim3 grid(static_cast<unsigned int>(std::min<int64_t>(cuda::ceil_div<int64_t>(D, cuda::kNumThreads), 65535)),
                    static_cast<unsigned int>(nchunks));
    row_norm_backward_params_kernel<T><<<grid, cuda::kNumThreads, 0, stream>>>(
        mut_ptr_or_null<double>(pw), mut_ptr_or_null<double>(pb), g.data_ptr<T>(), x.data_ptr<T>(),
        ptr_or_null<T>(mean), rstd.data_ptr<T>(), M, D, rows_per);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
    if (gw.defined()) {
      sum_chunks_kernel<T>
          <<<cuda::grid_size(D), cuda::kNumThreads, 0, stream>>>(gw.data_ptr<T>(), pw.data_ptr<double>(), nchunks, D);
      EMBER_CUDA_KERNEL_LAUNCH_CHECK();
    }
    if (gb.defined()) {
      sum_chunks_kernel<T>
          <<<cuda::grid_size(D), cuda::kNumThreads, 0, stream>>>(gb.data_ptr<T>(), pb.data_ptr<double>(), nchunks, D);
      EMBER_CUDA_KERNEL_LAUNCH_CHECK();
    }
  });
}

// ---------------------------------------------------------------- channels [N, C, S]

// mean[c], biased var[c] of x[:, c, :] (one block per channel, two passes in double)
template <typename T>
__global__ void channel_stats_kernel(double* __restrict__ mean, double* __restrict__ var, int64_t N, int64_t C,
                                     int64_t S, const T* __restrict__ x) {
  const int64_t count = N * S;
  for (int64_t c = blockIdx.x; c < C; c += gridDim.x) {
    double s = 0;
    for (int64_t k = threadIdx.x; k < count; k += blockDim.x)
      s += static_cast<double>(x[((k / S) * C + c) * S + k % S]);
    const double m = block_reduce(s, SumOp(), 0.0) / static_cast<double>(count);
    double q = 0;
    for (int64_t k = threadIdx.x; k < count; k += blockDim.x) {
      const double d = static_cast<double>(x[((k / S) * C + c) * S + k % S]) - m;
      q += d * d;
    }
    q = block_reduce(q, SumOp(), 0.0);
    if (threadIdx.x == 0) {
      mean[c] = m;
      var[c] = q / static_cast<double>(count);
    }
  }
}

// sum_g[c] = sum of g[:, c, :]; dot[c] = sum of (x - centre[c]) g (centre == nullptr: 0)
template <typename T>
__global__ void channel_backward_reduce_kernel(double* __restrict__ sum_g, double* __restrict__ dot,
                                               const T* __restrict__ g, const T* __restrict__ x,
                                               const double* __restrict__ centre, int64_t N, int64_t C, int64_t S) {
  const int64_t count = N * S;
  for (int64_t c = blockIdx.x; c < C; c += gridDim.x) {
    const double m = centre ? centre[c] : 0.0;
    double s1 = 0, s2 = 0;
    for (int64_t k = threadIdx.x; k < count; k += blockDim.x) {
      const int64_t p = ((k / S) * C + c) * S + k % S;
      const double gv = static_cast<double>(g[p]);
      s1 += gv;
      s2 += (static_cast<double>(x[p]) - m) * gv;
    }
    s1 = block_reduce(s1, SumOp(), 0.0);
    s2 = block_reduce(s2, SumOp(), 0.0);
    if (threadIdx.x == 0) {
      sum_g[c] = s1;
      dot[c] = s2;
    }
  }
}

// out = x * alpha[c] + beta[c] (+ g * A[c] when g != nullptr: out = g A + x B + K), in T
template <typename T>
__global__ void channel_affine_kernel(T* __restrict__ out, const T* __restrict__ x, const double* __restrict__ alpha,
                                      const double* __restrict__ beta, const T* __restrict__ g,
                                      const double* __restrict__ A, int64_t total, int64_t C, int64_t S) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t c = (i / S) % C;
    T y = x[i] * static_cast<T>(alpha[c]) + static_cast<T>(beta[c]);
    if (g) y = g[i] * static_cast<T>(A[c]) + y;
    out[i] = y;
  }
}

template <typename T>
void launch_channel_affine(const Tensor& out, const Tensor& x, const Tensor& alpha, const Tensor& beta, const Tensor& g,
                           const Tensor& A, int64_t C, int64_t S) {
  const int64_t total = x.numel();
  if (total == 0) return;
  channel_affine_kernel<T><<<cuda::grid_size(total), cuda::kNumThreads, 0, cuda::current_stream()>>>(
      out.data_ptr<T>(), x.data_ptr<T>(), alpha.data_ptr<double>(), beta.data_ptr<double>(), ptr_or_null<T>(g),
      ptr_or_null<double>(A), total, C, S);
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
}

// Per channel, forward: invstd from var (training: the batch's; evaluation: the running
// one), the running statistics updated (training, rm / rv given), alpha = invstd w and
// beta = b - mean alpha.
__global__ void batch_norm_coeffs_kernel(double* __restrict__ invstd, double* __restrict__ alpha,
                                         double* __restrict__ beta, const double* __restrict__ mean,
                                         const double* __restrict__ var, const double* __restrict__ w,
                                         const double* __restrict__ b, double* __restrict__ rm, double* __restrict__ rv,
                                         int64_t C, double eps, double momentum, double n) {
  for (int64_t c = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; c < C;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const double is = 1.0 / sqrt(var[c] + eps);
    invstd[c] = is;
    if (rm) {
      rm[c] = (1 - momentum) * rm[c] + momentum * mean[c];
      rv[c] = (1 - momentum) * rv[c] + momentum * var[c] * n / (n - 1);
    }
    const double a = is * (w ? w[c] : 1.0);
    alpha[c] = a;
    beta[c] = (b ? b[c] : 0.0) - mean[c] * a;
  }
}

// Per channel, backward: gi = g A + x B + K; gw = dot invstd; gb = sum_g.
__global__ void batch_norm_backward_coeffs_kernel(double* __restrict__ A, double* __restrict__ B,
                                                  double* __restrict__ K, double* __restrict__ gw,
                                                  const double* __restrict__ mean, const double* __restrict__ invstd,
                                                  const double* __restrict__ w, const double* __restrict__ sum_g,
                                                  const double* __restrict__ dot, int64_t C, double n, bool train) {
  for (int64_t c = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; c < C;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const double is = invstd[c];
    const double a = is * (w ? w[c] : 1.0);
    double bb = 0, k = 0;
    if (train) {
      // (g - sum_g / n - (x - mean) invstd^2 dot / n) invstd w
      bb = -is * is * dot[c] / n * a;
      k = -sum_g[c] / n * a - mean[c] * bb;
    }
    A[c] = a;
    B[c] = bb;
    K[c] = k;
    if (gw) gw[c] = dot[c] * is;
  }
}

// 1 / sqrt(var + eps), elementwise
__global__ void invstd_kernel(double* __restrict__ out, const double* __restrict__ var, int64_t C, double eps) {
  for (int64_t c = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; c < C;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[c] = 1.0 / sqrt(var[c] + eps);
}

Tensor doubles_of(const Tensor& t) { return norm::as_compute(t, ScalarType::Double).reshape({-1}); }

Tensor empty_doubles(int64_t n, Device d) { return at::empty({n}, ScalarType::Double, d); }

}  // namespace

// ================================================================ batch norm

Tensors3 batch_norm_cuda(const Tensor& input, const std::optional<Tensor>& weight_opt,
                         const std::optional<Tensor>& bias_opt, const std::optional<Tensor>& running_mean_opt,
                         const std::optional<Tensor>& running_var_opt, bool training, double momentum, double eps) {
  const Tensor weight = norm::opt(weight_opt), bias = norm::opt(bias_opt);
  const Tensor running_mean = norm::opt(running_mean_opt), running_var = norm::opt(running_var_opt);
  const auto shape = norm::check_batch_norm(input, weight, bias, running_mean, running_var, training);
  const int64_t N = shape.N, C = shape.C, S = shape.S;
  for (const Tensor* p : {&weight, &bias, &running_mean, &running_var})
    if (p->defined()) check_same_device("batch_norm", input, *p);
  c10::DeviceGuard guard(input.device());
  const cudaStream_t stream = cuda::current_stream();
  const Device dev = input.device();
  const Tensor x = norm::as_compute(input, shape.ct);
  Tensor mean, var;
  if (training) {
    mean = empty_doubles(C, dev);
    var = empty_doubles(C, dev);
    EMBER_DISPATCH_FLOATING_TYPES(x.dtype(), "batch_norm_cuda", [&] {
      channel_stats_kernel<scalar_t><<<rows_grid(C), row_block_threads(N * S), 0, stream>>>(
          mean.data_ptr<double>(), var.data_ptr<double>(), N, C, S, x.data_ptr<scalar_t>());
      EMBER_CUDA_KERNEL_LAUNCH_CHECK();
    });
  } else {
    mean = doubles_of(running_mean);
    var = doubles_of(running_var);
  }
  const bool update = training && running_mean.defined();
  // fresh copies: the kernel updates them in place before they are copied back
  Tensor rm = update ? doubles_of(running_mean).clone() : Tensor();
  Tensor rv = update ? doubles_of(running_var).clone() : Tensor();
  const Tensor w = weight.defined() ? doubles_of(weight) : Tensor();
  const Tensor b = bias.defined() ? doubles_of(bias) : Tensor();
  Tensor invstd = empty_doubles(C, dev), alpha = empty_doubles(C, dev), beta = empty_doubles(C, dev);
  batch_norm_coeffs_kernel<<<cuda::grid_size(C), cuda::kNumThreads, 0, stream>>>(
      invstd.data_ptr<double>(), alpha.data_ptr<double>(), beta.data_ptr<double>(), mean.data_ptr<double>(),
      var.data_ptr<double>(), ptr_or_null<double>(w), ptr_or_null<double>(b), mut_ptr_or_null<double>(rm),
      mut_ptr_or_null<double>(rv), C, eps, momentum, static_cast<double>(N * S));
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  if (update) {
    running_mean.copy_(rm.reshape(running_mean.sizes()));
    running_var.copy_(rv.reshape(running_var.sizes()));
  }
  Tensor out = at::empty(x.sizes(), shape.ct, dev);
  EMBER_DISPATCH_FLOATING_TYPES(x.dtype(), "batch_norm_cuda", [&] {
    launch_channel_affine<scalar_t>(out, x, alpha, beta, Tensor(), Tensor(), C, S);
  });
  out = norm::cast_to(out, input.dtype());
  if (!training) return {out, at::empty({0}, shape.pt, dev), at::empty({0}, shape.pt, dev)};
  return {out, norm::cast_to(mean, shape.pt), norm::cast_to(invstd, shape.pt)};
}

Tensors3 batch_norm_backward_cuda(const Tensor& grad_out, const Tensor& input, const std::optional<Tensor>& weight_opt,
                                  const std::optional<Tensor>& running_mean_opt,
                                  const std::optional<Tensor>& running_var_opt,
                                  const std::optional<Tensor>& save_mean_opt,
                                  const std::optional<Tensor>& save_invstd_opt, bool train, double eps,
                                  const std::vector<bool>& output_mask) {
  const Tensor weight = norm::opt(weight_opt), running_mean = norm::opt(running_mean_opt);
  const Tensor running_var = norm::opt(running_var_opt);
  const Tensor save_mean = norm::opt(save_mean_opt), save_invstd = norm::opt(save_invstd_opt);
  const auto shape = norm::check_batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean,
                                                     save_invstd, train);
  const int64_t N = shape.N, C = shape.C, S = shape.S;
  check_same_device("batch_norm_backward", input, grad_out);
  c10::DeviceGuard guard(input.device());
  const cudaStream_t stream = cuda::current_stream();
  const Device dev = input.device();
  Tensor mean, invstd;
  if (train) {
    mean = doubles_of(save_mean);
    invstd = doubles_of(save_invstd);
  } else {
    mean = doubles_of(running_mean);
    invstd = empty_doubles(C, dev);
    const Tensor var = doubles_of(running_var);
    if (C > 0) {
      invstd_kernel<<<cuda::grid_size(C), cuda::kNumThreads, 0, stream>>>(invstd.data_ptr<double>(),
                                                                          var.data_ptr<double>(), C, eps);
      EMBER_CUDA_KERNEL_LAUNCH_CHECK();
    }
  }
  const Tensor w = weight.defined() ? doubles_of(weight) : Tensor();
  const Tensor x = norm::as_compute(input, shape.ct), g = norm::as_compute(grad_out, shape.ct);
  Tensor sum_g = at::zeros({C}, ScalarType::Double, dev), dot = at::zeros({C}, ScalarType::Double, dev);
  if (input.numel() > 0 && (output_mask[1] || output_mask[2] || (output_mask[0] && train))) {
    EMBER_DISPATCH_FLOATING_TYPES(x.dtype(), "batch_norm_backward_cuda", [&] {
      channel_backward_reduce_kernel<scalar_t><<<rows_grid(C), row_block_threads(N * S), 0, stream>>>(
          sum_g.data_ptr<double>(), dot.data_ptr<double>(), g.data_ptr<scalar_t>(), x.data_ptr<scalar_t>(),
          mean.data_ptr<double>(), N, C, S);
      EMBER_CUDA_KERNEL_LAUNCH_CHECK();
    });
  }
  Tensor A = empty_doubles(C, dev), B = empty_doubles(C, dev), K = empty_doubles(C, dev);
  Tensor gw_d = output_mask[1] ? empty_doubles(C, dev) : Tensor();
  if (C > 0) {
    batch_norm_backward_coeffs_kernel<<<cuda::grid_size(C), cuda::kNumThreads, 0, stream>>>(
        A.data_ptr<double>(), B.data_ptr<double>(), K.data_ptr<double>(), mut_ptr_or_null<double>(gw_d),
        mean.data_ptr<double>(), invstd.data_ptr<double>(), ptr_or_null<double>(w), sum_g.data_ptr<double>(),
        dot.data_ptr<double>(), C, static_cast<double>(N * S), train);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  }
  Tensor gi, gw, gb;
  if (output_mask[0]) {
    gi = at::empty(x.sizes(), shape.ct, dev);
    // gi = g A + x B + K: the affine kernel with alpha = B, beta = K plus g A
    EMBER_DISPATCH_FLOATING_TYPES(x.dtype(), "batch_norm_backward_cuda",
                                  [&] { launch_channel_affine<scalar_t>(gi, x, B, K, g, A, C, S); });
    gi = norm::cast_to(gi, input.dtype());
  }
  if (output_mask[1]) gw = norm::cast_to(gw_d, shape.pt);
  if (output_mask[2]) gb = norm::cast_to(sum_g, shape.pt);
  return {gi, gw, gb};
}

// ================================================================ group norm

namespace {

// alpha[n C + c] = rstd[n G + g] w[c], beta = b[c] - mean[ng] alpha (g = c / (C / G))
__global__ void group_norm_coeffs_kernel(double* __restrict__ alpha, double* __restrict__ beta,
                                         const double* __restrict__ mean, const double* __restrict__ rstd,
                                         const double* __restrict__ w, const double* __restrict__ b, int64_t N,
                                         int64_t C, int64_t G) {
  const int64_t total = N * C, cpg = C / G;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t n = i / C, c = i % C, ng = n * G + c / cpg;
    const double a = rstd[ng] * (w ? w[c] : 1.0);
    alpha[i] = a;
    beta[i] = (b ? b[c] : 0.0) - mean[ng] * a;
  }
}

// Per (n, group): gi = g A + x B + K over the group's channels (db, ds: per (n, c) sums
// of g and x g).
__global__ void group_norm_backward_coeffs_kernel(double* __restrict__ A, double* __restrict__ B,
                                                  double* __restrict__ K, const double* __restrict__ mean,
                                                  const double* __restrict__ rstd, const double* __restrict__ w,
                                                  const double* __restrict__ db, const double* __restrict__ ds,
                                                  int64_t N, int64_t C, int64_t G, double Mg) {
  const int64_t cpg = C / G;
  for (int64_t ng = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; ng < N * G;
       ng += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t n = ng / G, gr = ng % G;
    double s1 = 0, s2 = 0;  // sum of w g, sum of w g x over the group
    for (int64_t c = gr * cpg; c < (gr + 1) * cpg; ++c) {
      const double wc = w ? w[c] : 1.0;
      s1 += wc * db[n * C + c];
      s2 += wc * ds[n * C + c];
    }
    const double rs = rstd[ng], mu = mean[ng];
    const double bb = -rs * rs * rs / Mg * (s2 - mu * s1);
    const double k = -rs / Mg * s1 - mu * bb;
    for (int64_t c = gr * cpg; c < (gr + 1) * cpg; ++c) {
      A[n * C + c] = rs * (w ? w[c] : 1.0);
      B[n * C + c] = bb;
      K[n * C + c] = k;
    }
  }
}

// gw[c] = sum over n of (ds - mean db) rstd; gb[c] = sum over n of db
__global__ void group_norm_param_grads_kernel(double* __restrict__ gw, double* __restrict__ gb,
                                              const double* __restrict__ mean, const double* __restrict__ rstd,
                                              const double* __restrict__ db, const double* __restrict__ ds, int64_t N,
                                              int64_t C, int64_t G) {
  const int64_t cpg = C / G;
  for (int64_t c = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; c < C;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    double sw = 0, sb = 0;
    for (int64_t n = 0; n < N; ++n) {
      const int64_t ng = n * G + c / cpg;
      sw += (ds[n * C + c] - mean[ng] * db[n * C + c]) * rstd[ng];
      sb += db[n * C + c];
    }
    if (gw) gw[c] = sw;
    if (gb) gb[c] = sb;
  }
}

}  // namespace

Tensors3 group_norm_cuda(const Tensor& input, const std::optional<Tensor>& weight_opt,
                         const std::optional<Tensor>& bias_opt, int64_t N, int64_t C, int64_t HxW, int64_t group,
                         double eps) {
  const Tensor weight = norm::opt(weight_opt), bias = norm::opt(bias_opt);
  norm::check_floating(input, "GroupNormKernelImpl");
  norm::check_group_norm(input, weight, bias, N, C, HxW, group);
  for (const Tensor* p : {&weight, &bias})
    if (p->defined()) check_same_device("group_norm", input, *p);
  const ScalarType pt = norm::param_dtype(input, {&weight, &bias});
  const ScalarType ct = norm::compute_dtype(input.dtype());
  c10::DeviceGuard guard(input.device());
  const cudaStream_t stream = cuda::current_stream();
  const Device dev = input.device();
  const int64_t G = group, D = C / G * HxW;
  const Tensor x = norm::as_compute(input, ct);
  Tensor out = at::empty(x.sizes(), ct, dev);
  Tensor mean = at::empty({N, G}, ct, dev), rstd = at::empty({N, G}, ct, dev);
  if (N > 0 && D > 0) {
    EMBER_DISPATCH_FLOATING_TYPES(ct, "group_norm_cuda", [&] {
      row_norm_kernel<scalar_t><<<rows_grid(N * G), row_block_threads(D), 0, stream>>>(
          nullptr, mean.data_ptr<scalar_t>(), rstd.data_ptr<scalar_t>(), x.data_ptr<scalar_t>(), nullptr, nullptr,
          N * G, D, eps, false);
      EMBER_CUDA_KERNEL_LAUNCH_CHECK();
    });
    const Tensor m = doubles_of(mean), r = doubles_of(rstd);
    const Tensor w = weight.defined() ? doubles_of(weight) : Tensor();
    const Tensor b = bias.defined() ? doubles_of(bias) : Tensor();
    Tensor alpha = empty_doubles(N * C, dev), beta = empty_doubles(N * C, dev);
    group_norm_coeffs_kernel<<<cuda::grid_size(N * C), cuda::kNumThreads, 0, stream>>>(
        alpha.data_ptr<double>(), beta.data_ptr<double>(), m.data_ptr<double>(), r.data_ptr<double>(),
        ptr_or_null<double>(w), ptr_or_null<double>(b), N, C, G);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
    EMBER_DISPATCH_FLOATING_TYPES(ct, "group_norm_cuda", [&] {
      launch_channel_affine<scalar_t>(out, x, alpha, beta, Tensor(), Tensor(), N * C, HxW);
    });
  } else if (N > 0) {
    mean.fill_(Scalar(std::numeric_limits<double>::quiet_NaN()));
    rstd.fill_(Scalar(std::numeric_limits<double>::quiet_NaN()));
  }
  return {norm::cast_to(out, input.dtype()), norm::cast_to(mean, pt), norm::cast_to(rstd, pt)};
}

Tensors3 group_norm_backward_cuda(const Tensor& grad_out, const Tensor& input, const Tensor& mean, const Tensor& rstd,
                                  const std::optional<Tensor>& weight_opt, int64_t N, int64_t C, int64_t HxW,
                                  int64_t group, const std::vector<bool>& output_mask) {
  const Tensor weight = norm::opt(weight_opt);
  norm::check_floating(input, "GroupNormBackwardKernelImpl");
  norm::check_group_norm(input, weight, Tensor(), N, C, HxW, group);
  EMBER_CHECK(grad_out.sizes() == input.sizes(), "group_norm_backward: grad_out of shape ", shape_str(grad_out.sizes()),
              " does not match the input of shape ", shape_str(input.sizes()));
  const int64_t G = group;
  EMBER_CHECK(mean.numel() == N * G && rstd.numel() == N * G, "group_norm_backward: mean and rstd must have ", N * G,
              " elements");
  for (const Tensor* p : {&grad_out, &mean, &rstd, &weight})
    if (p->defined()) check_same_device("group_norm_backward", input, *p);
  const ScalarType ct = norm::compute_dtype(input.dtype());
  const ScalarType pt = weight.defined() ? weight.dtype() : mean.dtype();
  c10::DeviceGuard guard(input.device());
  const cudaStream_t stream = cuda::current_stream();
  const Device dev = input.device();
  const Tensor x = norm::as_compute(input, ct), g = norm::as_compute(grad_out, ct);
  const Tensor m = doubles_of(mean), r = doubles_of(rstd);
  const Tensor w = weight.defined() ? doubles_of(weight) : Tensor();
  // per (n, c): db = sum of g, ds = sum of x g
  Tensor db = at::zeros({N * C}, ScalarType::Double, dev), ds = at::zeros({N * C}, ScalarType::Double, dev);
  if (input.numel() > 0) {
    EMBER_DISPATCH_FLOATING_TYPES(ct, "group_norm_backward_cuda", [&] {
      channel_backward_reduce_kernel<scalar_t><<<rows_grid(N * C), row_block_threads(HxW), 0, stream>>>(
          db.data_ptr<double>(), ds.data_ptr<double>(), g.data_ptr<scalar_t>(), x.data_ptr<scalar_t>(), nullptr, 1,
          N * C, HxW);
      EMBER_CUDA_KERNEL_LAUNCH_CHECK();
    });
  }
  Tensor gi, gw, gb;
  if (output_mask[0]) {
    gi = at::empty(x.sizes(), ct, dev);
    if (input.numel() > 0) {
      Tensor A = empty_doubles(N * C, dev), B = empty_doubles(N * C, dev), K = empty_doubles(N * C, dev);
      group_norm_backward_coeffs_kernel<<<cuda::grid_size(N * G), cuda::kNumThreads, 0, stream>>>(
          A.data_ptr<double>(), B.data_ptr<double>(), K.data_ptr<double>(), m.data_ptr<double>(), r.data_ptr<double>(),
          ptr_or_null<double>(w), db.data_ptr<double>(), ds.data_ptr<double>(), N, C, G,
          static_cast<double>(C / G * HxW));
      EMBER_CUDA_KERNEL_LAUNCH_CHECK();
      EMBER_DISPATCH_FLOATING_TYPES(ct, "group_norm_backward_cuda",
                                    [&] { launch_channel_affine<scalar_t>(gi, x, B, K, g, A, N * C, HxW); });
    }
    gi = norm::cast_to(gi, input.dtype());
  }
  if (output_mask[1] || output_mask[2]) {
    Tensor gw_d = empty_doubles(C, dev), gb_d = empty_doubles(C, dev);
    if (C > 0) {
      group_norm_param_grads_kernel<<<cuda::grid_size(C), cuda::kNumThreads, 0, stream>>>(
          gw_d.data_ptr<double>(), gb_d.data_ptr<double>(), m.data_ptr<double>(), r.data_ptr<double>(),
          db.data_ptr<double>(), ds.data_ptr<double>(), N, C, G);
      EMBER_CUDA_KERNEL_LAUNCH_CHECK();
    }
    if (output_mask[1]) gw = norm::cast_to(gw_d, pt);
    if (output_mask[2]) gb = norm::cast_to(gb_d, pt);
  }
  return {gi, gw, gb};
}

REGISTER_CUDA_DISPATCH(row_norm_stub, &row_norm_kernel_cuda);
REGISTER_CUDA_DISPATCH(row_norm_backward_stub, &row_norm_backward_kernel_cuda);

}  // namespace ember::at::native
