#pragma once
// ctc_loss on CUDA without its launches (LossCTC.cu): the block code of the forward and
// backward recursions, __host__ __device__ functions of one block (BlockCtx), and the host
// code around them as templates over how the blocks run -- `Launch::forward<T>(N, ...)` /
// `Launch::backward<T>(N, ...)` run one block per batch element. LossCTC.cu launches the
// kernels; the test-only module ember_aten_testing (packages/aten/testing) runs every block
// with one thread on the host, a barrier being a no-op.
#include <cmath>
#include <cstdint>
#include <tuple>
#include <vector>

#include <ember/aten/Dispatch.h>

#include "../LossCTC.h"
#include "CUDAUtils.cuh"

namespace ember::at::native::cuda_ctc {

struct BlockCtx {
  int64_t bx;       // blockIdx.x
  int64_t tid, nt;  // threadIdx.x, blockDim.x
};

__host__ __device__ inline void block_sync() {
#ifdef __CUDA_ARCH__
  __syncthreads();
#endif
}

__host__ __device__ inline double neg_inf_d() { return -static_cast<double>(INFINITY); }

__host__ __device__ inline double lse2(double a, double b) {
  const double m = a > b ? a : b;
  if (m == neg_inf_d()) return neg_inf_d();
  return m + log(exp(a - m) + exp(b - m));
}

__host__ __device__ inline double lse3(double a, double b, double c) {
  double m = a > b ? a : b;
  m = m > c ? m : c;
  if (m == neg_inf_d()) return neg_inf_d();
  return m + log(exp(a - m) + exp(b - m) + exp(c - m));
}

struct CtcArgs {
  int64_t T, N, C, Smax, blank;
  const int64_t* targets;         // int64 device pointer
  const int64_t* target_offsets;  // [N]
  const int64_t* input_lengths;   // [N]
  const int64_t* target_lengths;  // [N]
};

__host__ __device__ inline int64_t ext_symbol(const CtcArgs& a, int64_t b, int64_t s) {
  return (s & 1) ? a.targets[a.target_offsets[b] + (s >> 1)] : a.blank;
}

template <typename T>
__host__ __device__ void ctc_forward_block(const BlockCtx& ctx, T* __restrict__ nll, T* __restrict__ la,
                                           const T* __restrict__ lp, const CtcArgs& a) {
  const int64_t b = ctx.bx;
  const int64_t Tb = a.input_lengths[b], L = a.target_lengths[b], S = 2 * L + 1;
  T* A = la + b * a.T * a.Smax;  // A[t * Smax + s]
  for (int64_t k = ctx.tid; k < a.T * a.Smax; k += ctx.nt) A[k] = static_cast<T>(neg_inf_d());
  block_sync();
  if (Tb == 0) {
    if (ctx.tid == 0) nll[b] = static_cast<T>(L == 0 ? 0.0 : static_cast<double>(INFINITY));
    return;
  }
  auto LP = [&](int64_t t, int64_t c) { return static_cast<double>(lp[(t * a.N + b) * a.C + c]); };
  for (int64_t s = ctx.tid; s < S && s < 2; s += ctx.nt) A[s] = static_cast<T>(LP(0, ext_symbol(a, b, s)));
  block_sync();
  for (int64_t t = 1; t < Tb; ++t) {
    const T* prev = A + (t - 1) * a.Smax;
    T* cur = A + t * a.Smax;
    for (int64_t s = ctx.tid; s < S; s += ctx.nt) {
      const int64_t sym = ext_symbol(a, b, s);
      const double x = static_cast<double>(prev[s]);
      const double y = s > 0 ? static_cast<double>(prev[s - 1]) : neg_inf_d();
      const bool skip = s > 1 && sym != a.blank && sym != ext_symbol(a, b, s - 2);
      const double z = skip ? static_cast<double>(prev[s - 2]) : neg_inf_d();
      cur[s] = static_cast<T>(lse3(x, y, z) + LP(t, sym));
    }
    block_sync();
  }
  if (ctx.tid == 0) {
    const T* last = A + (Tb - 1) * a.Smax;
    const double ll = lse2(static_cast<double>(last[S - 1]), S > 1 ? static_cast<double>(last[S - 2]) : neg_inf_d());
    nll[b] = static_cast<T>(-ll);
  }
}

template <typename T>
__host__ __device__ void ctc_backward_block(const BlockCtx& ctx, T* __restrict__ out, double* __restrict__ beta,
                                            const T* __restrict__ grad, const T* __restrict__ lp,
                                            const T* __restrict__ nll, const T* __restrict__ la, const CtcArgs& a,
                                            bool zero_infinity) {
  const int64_t b = ctx.bx;
  const int64_t Tb = a.input_lengths[b], L = a.target_lengths[b], S = 2 * L + 1;
  const double nllb = static_cast<double>(nll[b]);
  const double g = static_cast<double>(grad[b]);
  auto LP = [&](int64_t t, int64_t c) { return static_cast<double>(lp[(t * a.N + b) * a.C + c]); };
  // zeros first: times past T_b, and everything when nothing flows back
  for (int64_t k = ctx.tid; k < a.T * a.C; k += ctx.nt) {
    const int64_t t = k / a.C, c = k % a.C;
    out[(t * a.N + b) * a.C + c] = T(0);
  }
  if (Tb == 0 || (zero_infinity && nllb == static_cast<double>(INFINITY) || nllb == neg_inf_d())) return;
  double* B = beta + b * a.T * a.Smax;  // B[t * Smax + s]
  for (int64_t k = ctx.tid; k < Tb * a.Smax; k += ctx.nt) B[k] = neg_inf_d();
  block_sync();
  for (int64_t s = ctx.tid; s < S; s += ctx.nt) {
    if (s == S - 1 || s == S - 2) B[(Tb - 1) * a.Smax + s] = LP(Tb - 1, ext_symbol(a, b, s));
  }
  block_sync();
  for (int64_t t = Tb - 2; t >= 0; --t) {
    const double* next = B + (t + 1) * a.Smax;
    double* cur = B + t * a.Smax;
    for (int64_t s = ctx.tid; s < S; s += ctx.nt) {
      const int64_t sym = ext_symbol(a, b, s);
      const double x = next[s];
      const double y = s + 1 < S ? next[s + 1] : neg_inf_d();
      const bool skip = s + 2 < S && sym != a.blank && sym != ext_symbol(a, b, s + 2);
      const double z = skip ? next[s + 2] : neg_inf_d();
      cur[s] = lse3(x, y, z) + LP(t, sym);
    }
    block_sync();
  }
  const T* A = la + b * a.T * a.Smax;
  for (int64_t k = ctx.tid; k < Tb * a.C; k += ctx.nt) {
    const int64_t t = k / a.C, c = k % a.C;
    double lcab = neg_inf_d();
    // blank sits at every even position and at odd ones whose target is the blank value
    // (allowed, as on the CPU); any other c only at odd ones. In s order, as the CPU kernel.
    const int64_t step = c == a.blank ? 1 : 2;
    for (int64_t s = (c == a.blank ? 0 : 1); s < S; s += step) {
      if (ext_symbol(a, b, s) == c) lcab = lse2(lcab, static_cast<double>(A[t * a.Smax + s]) + B[t * a.Smax + s]);
    }
    const double l = LP(t, c);
    out[(t * a.N + b) * a.C + c] = static_cast<T>((exp(l) - exp(lcab + nllb - l)) * g);
  }
}

// Device copies of the problem's host vectors; they live as long as the struct.
struct CtcDevice {
  Tensor targets, offsets, input_lengths, target_lengths;
  CtcArgs args(const CtcProblem& p, int64_t Smax, int64_t blank) const {
    return CtcArgs{p.T,
                   p.N,
                   p.C,
                   Smax,
                   blank,
                   targets.data_ptr<int64_t>(),
                   offsets.data_ptr<int64_t>(),
                   input_lengths.data_ptr<int64_t>(),
                   target_lengths.data_ptr<int64_t>()};
  }
};

inline Tensor host_longs(const std::vector<int64_t>& v, Device device) {
  Tensor t = at::empty({static_cast<int64_t>(v.size())}, ScalarType::Long, Device(DeviceType::CPU));
  int64_t* p = t.data_ptr<int64_t>();
  for (size_t i = 0; i < v.size(); ++i) p[i] = v[i];
  return t.to(device);
}

inline CtcDevice to_device(const CtcProblem& p, Device device) {
  // an empty targets tensor still needs a valid pointer
  Tensor tg = p.targets.numel() ? p.targets : at::zeros({1}, ScalarType::Long, device);
  return CtcDevice{tg, host_longs(p.target_offsets, device), host_longs(p.input_lengths, device),
                   host_longs(p.target_lengths, device)};
}

template <typename Launch>
std::tuple<Tensor, Tensor> ctc_loss_run(const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths,
                                        IntArrayRef target_lengths, int64_t blank, bool zero_infinity) {
  const CtcProblem p = check_ctc(log_probs, targets, input_lengths, target_lengths, blank);
  c10::DeviceGuard guard(log_probs.device());
  const Tensor lp = log_probs.contiguous();
  const int64_t Smax = 2 * p.max_target + 1;
  Tensor nll = at::empty({p.N}, lp.dtype(), lp.device());
  Tensor log_alpha = at::empty({p.N, p.T, Smax}, lp.dtype(), lp.device());
  if (p.N == 0) return {nll, log_alpha};
  const CtcDevice d = to_device(p, lp.device());
  EMBER_DISPATCH_FLOATING_TYPES(lp.dtype(), "ctc_loss_cuda", [&] {
    Launch::template forward<scalar_t>(p.N, nll.data_ptr<scalar_t>(), log_alpha.data_ptr<scalar_t>(),
                                       lp.data_ptr<scalar_t>(), d.args(p, Smax, blank));
  });
  return {nll, log_alpha};
}

template <typename Launch>
Tensor ctc_loss_backward_run(const Tensor& grad, const Tensor& log_probs, const Tensor& targets,
                             IntArrayRef input_lengths, IntArrayRef target_lengths, const Tensor& neg_log_likelihood,
                             const Tensor& log_alpha, int64_t blank, bool zero_infinity) {
  const CtcProblem p = check_ctc(log_probs, targets, input_lengths, target_lengths, blank);
  check_ctc_backward(p, grad, neg_log_likelihood, log_alpha);
  check_same_device("ctc_loss_backward", log_probs, grad);
  check_same_device("ctc_loss_backward", log_probs, log_alpha);
  c10::DeviceGuard guard(log_probs.device());
  const Tensor lp = log_probs.contiguous();
  auto same = [&](const Tensor& t) { return (t.dtype() == lp.dtype() ? t : t.to(lp.dtype())).contiguous(); };
  const Tensor g = same(grad), nll = same(neg_log_likelihood), la = same(log_alpha);
  Tensor out = at::empty(lp.sizes(), lp.dtype(), lp.device());
  if (p.N == 0) return out;
  const int64_t Smax = la.size(2);
  Tensor beta = at::empty({p.N, p.T, Smax}, ScalarType::Double, lp.device());
  const CtcDevice d = to_device(p, lp.device());
  EMBER_DISPATCH_FLOATING_TYPES(lp.dtype(), "ctc_loss_backward_cuda", [&] {
    Launch::template backward<scalar_t>(p.N, out.data_ptr<scalar_t>(), beta.data_ptr<double>(), g.data_ptr<scalar_t>(),
                                        lp.data_ptr<scalar_t>(), nll.data_ptr<scalar_t>(), la.data_ptr<scalar_t>(),
                                        d.args(p, Smax, blank), zero_infinity);
  });
  return out;
}

}  // namespace ember::at::native::cuda_ctc
