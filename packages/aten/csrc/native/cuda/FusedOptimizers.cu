// CUDA kernels of the fused optimizer steps (../FusedOptimizers.h): one launch per
// call (= per dtype group) updates every parameter and its state (MultiTensorApply.cuh:
// a per-parameter pointer table and a chunk table uploaded in one copy). The arithmetic
// is the CPU kernel's (cpu/FusedOptimizerKernel.cpp), in opmath_t, in the same order.
//
// Differences from the CPU: a step on the device is read by the kernel and the bias
// corrections computed there in double (CUDA's pow may differ from glibc's in the last
// bit of a double, which the float32 rounding hides almost always); nvcc fuses a*b+c
// into FMAs, so float results may differ from the CPU kernel's in the last bits.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include <ember/aten/Dispatch.h>

#include "../FusedOptimizers.h"
#include "CUDAUtils.cuh"
#include "MultiTensorApply.cuh"

namespace ember::at::native {
namespace {

using cuda::current_stream;

using mta::Chunk;
using mta::kChunk;

template <int K>
struct TensorMeta {
  char* ptr[K];
  int64_t numel;
  const void* step;  // CUDA step tensor (Adam), or null: step_size / bc2 below
  int step_is_double;
  double step_size, bc2;
};

template <typename T>
__device__ inline T max_nan(T a, T b) {  // NaN-propagating, as the CPU kernel's max_
  return a != a ? a : (b != b ? b : (a > b ? a : b));
}

// ---- Adam / AdamW ----
template <typename S>
struct AdamConsts {
  S beta2, one_minus_beta2, lerp_w, one_minus_lerp_w, wd, decay, eps;
  double lr, beta1, beta2_d;
  bool small_lerp, amsgrad, maximize, adamw, has_wd, has_grad_scale;
  float grad_scale;
};

template <typename scalar_t>
__global__ void adam_kernel(const TensorMeta<5>* metas, const Chunk* chunks, int64_t nchunks,
                            AdamConsts<opmath_t<scalar_t>> c, const float* grad_scale_ptr, const float* found_inf) {
  using opm = opmath_t<scalar_t>;
  if (found_inf != nullptr && *found_inf == 1.0f) return;
  const opm inv_scale = static_cast<opm>(grad_scale_ptr != nullptr ? *grad_scale_ptr : c.grad_scale);
  for (int64_t ci = blockIdx.x; ci < nchunks; ci += gridDim.x) {
    const Chunk ch = chunks[ci];
    const TensorMeta<5>& m = metas[ch.tensor];
    double step_size = m.step_size, bc2 = m.bc2;
    if (m.step != nullptr) {
      // the step as PyTorch reads it (a float), the bias corrections in double
      const double step = m.step_is_double
                              ? static_cast<double>(static_cast<float>(*static_cast<const double*>(m.step)))
                              : static_cast<double>(*static_cast<const float*>(m.step));
      step_size = c.lr / (1 - pow(c.beta1, step));
      bc2 = sqrt(1 - pow(c.beta2_d, step));
    }
    const opm ss = static_cast<opm>(step_size), bc2s = static_cast<opm>(bc2);
    auto* param = reinterpret_cast<scalar_t*>(m.ptr[0]);
    auto* grad = reinterpret_cast<scalar_t*>(m.ptr[1]);
    auto* exp_avg = reinterpret_cast<scalar_t*>(m.ptr[2]);
    auto* exp_avg_sq = reinterpret_cast<scalar_t*>(m.ptr[3]);
    auto* max_sq = reinterpret_cast<scalar_t*>(m.ptr[4]);
    const int64_t end = ch.start + kChunk < m.numel ? ch.start + kChunk : m.numel;
    for (int64_t i = ch.start + threadIdx.x; i < end; i += blockDim.x) {
      opm p = param[i], g = grad[i], mo = exp_avg[i], v = exp_avg_sq[i];
      if (c.has_grad_scale) {
        g = g / inv_scale;
        grad[i] = static_cast<scalar_t>(g);
      }
      if (c.maximize) g = opm(0) - g;
      if (c.has_wd) {
        if (c.adamw)
          p = p * c.decay;
        else
          g = g + p * c.wd;
      }
      mo = c.small_lerp ? mo + c.lerp_w * (g - mo) : g - (g - mo) * c.one_minus_lerp_w;
      v = v * c.beta2 + c.one_minus_beta2 * g * g;
      opm second = v;
      if (max_sq != nullptr) {
        const opm mx = max_nan<opm>(static_cast<opm>(max_sq[i]), v);
        max_sq[i] = static_cast<scalar_t>(mx);
        second = mx;
      }
      const opm denom = sqrt(second) / bc2s + c.eps;
      p = p - ss * mo / denom;
      param[i] = static_cast<scalar_t>(p);
      exp_avg[i] = static_cast<scalar_t>(mo);
      exp_avg_sq[i] = static_cast<scalar_t>(v);
    }
  }
}

void fused_adam_cuda(ScalarType dtype, const FusedAdamArgs& a) {
  const size_t T = a.ptrs.size();
  if (T == 0 || a.offsets.back() == 0) return;
  std::vector<TensorMeta<5>> metas(T);
  for (size_t t = 0; t < T; ++t) {
    TensorMeta<5>& m = metas[t];
    for (int k = 0; k < 5; ++k) m.ptr[k] = a.ptrs[t][k];
    m.numel = a.offsets[t + 1] - a.offsets[t];
    m.step = t < a.step_ptrs.size() ? a.step_ptrs[t] : nullptr;
    m.step_is_double = t < a.step_is_double.size() ? a.step_is_double[t] : 0;
    m.step_size = a.step_size[t];
    m.bc2 = a.bias_correction2_sqrt[t];
  }
  const std::vector<Chunk> chunks = mta::make_chunks(a.offsets);
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(dtype, a.adamw ? "_fused_adamw_" : "_fused_adam_", [&] {
    using opm = opmath_t<scalar_t>;
    const double lerp_w = 1 - a.beta1;
    AdamConsts<opm> c{};
    c.beta2 = opm(a.beta2);
    c.one_minus_beta2 = opm(1 - a.beta2);
    c.lerp_w = opm(lerp_w);
    c.one_minus_lerp_w = opm(1 - opm(lerp_w));
    c.wd = opm(a.weight_decay);
    c.decay = opm(1 - a.lr * a.weight_decay);
    c.eps = opm(a.eps);
    c.lr = a.lr;
    c.beta1 = a.beta1;
    c.beta2_d = a.beta2;
    c.small_lerp = std::abs(lerp_w) < 0.5;
    c.amsgrad = a.amsgrad;
    c.maximize = a.maximize;
    c.adamw = a.adamw;
    c.has_wd = a.weight_decay != 0;
    c.has_grad_scale = a.has_grad_scale;
    c.grad_scale = a.grad_scale;
    const TensorMeta<5>* dm = nullptr;
    const Chunk* dc = nullptr;
    const Tensor buf = mta::upload_tables(metas, chunks, &dm, &dc);
    adam_kernel<scalar_t><<<mta::chunk_grid(chunks.size()), mta::kThreads, 0, current_stream()>>>(
        dm, dc, static_cast<int64_t>(chunks.size()), c, a.grad_scale_ptr, a.found_inf_ptr);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

// ---- SGD ----
template <typename S>
struct SgdConsts {
  S wd, momentum, one_minus_dampening, lr;
  bool nesterov, maximize, is_first_step, has_wd, has_grad_scale;
  float grad_scale;
};

template <typename scalar_t>
__global__ void sgd_kernel(const TensorMeta<3>* metas, const Chunk* chunks, int64_t nchunks,
                           SgdConsts<opmath_t<scalar_t>> c, const float* grad_scale_ptr, const float* found_inf) {
  using opm = opmath_t<scalar_t>;
  if (found_inf != nullptr && *found_inf == 1.0f) return;
  const opm inv_scale = static_cast<opm>(grad_scale_ptr != nullptr ? *grad_scale_ptr : c.grad_scale);
  for (int64_t ci = blockIdx.x; ci < nchunks; ci += gridDim.x) {
    const Chunk ch = chunks[ci];
    const TensorMeta<3>& m = metas[ch.tensor];
    auto* param = reinterpret_cast<scalar_t*>(m.ptr[0]);
    auto* grad = reinterpret_cast<scalar_t*>(m.ptr[1]);
    auto* bufp = reinterpret_cast<scalar_t*>(m.ptr[2]);
    const int64_t end = ch.start + kChunk < m.numel ? ch.start + kChunk : m.numel;
    for (int64_t i = ch.start + threadIdx.x; i < end; i += blockDim.x) {
      opm p = param[i], g = grad[i];
      if (c.has_grad_scale) {
        g = g / inv_scale;
        grad[i] = static_cast<scalar_t>(g);
      }
      if (c.maximize) g = opm(0) - g;
      if (c.has_wd) g = g + p * c.wd;
      if (bufp != nullptr) {
        const opm b = c.is_first_step ? g : static_cast<opm>(bufp[i]) * c.momentum + c.one_minus_dampening * g;
        bufp[i] = static_cast<scalar_t>(b);
        g = c.nesterov ? g + b * c.momentum : b;
      }
      p = p - g * c.lr;
      param[i] = static_cast<scalar_t>(p);
    }
  }
}

void fused_sgd_cuda(ScalarType dtype, const FusedSgdArgs& a) {
  const size_t T = a.ptrs.size();
  if (T == 0 || a.offsets.back() == 0) return;
  std::vector<TensorMeta<3>> metas(T);
  for (size_t t = 0; t < T; ++t) {
    TensorMeta<3>& m = metas[t];
    for (int k = 0; k < 3; ++k) m.ptr[k] = a.ptrs[t][k];
    m.numel = a.offsets[t + 1] - a.offsets[t];
    m.step = nullptr;
    m.step_is_double = 0;
    m.step_size = m.bc2 = 0;
  }
  const std::vector<Chunk> chunks = mta::make_chunks(a.offsets);
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(dtype, "_fused_sgd_", [&] {
    using opm = opmath_t<scalar_t>;
    SgdConsts<opm> c{};
    c.wd = opm(a.weight_decay);
    c.momentum = opm(a.momentum);
    c.one_minus_dampening = opm(1 - a.dampening);
    c.lr = opm(a.lr);
    c.nesterov = a.nesterov;
    c.maximize = a.maximize;
    c.is_first_step = a.is_first_step;
    c.has_wd = a.weight_decay != 0;
    c.has_grad_scale = a.has_grad_scale;
    c.grad_scale = a.grad_scale;
    const TensorMeta<3>* dm = nullptr;
    const Chunk* dc = nullptr;
    const Tensor buf = mta::upload_tables(metas, chunks, &dm, &dc);
    sgd_kernel<scalar_t><<<mta::chunk_grid(chunks.size()), mta::kThreads, 0, current_stream()>>>(
        dm, dc, static_cast<int64_t>(chunks.size()), c, a.grad_scale_ptr, a.found_inf_ptr);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

}  // namespace

REGISTER_CUDA_DISPATCH(fused_adam_stub, &fused_adam_cuda);
REGISTER_CUDA_DISPATCH(fused_sgd_stub, &fused_sgd_cuda);

}  // namespace ember::at::native
