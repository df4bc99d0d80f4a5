// CUDA ctc_loss forward and backward: the recursions of LossCTC.cpp (which see), one
// block per batch element in log space. The threads of a block share the extended-target
// positions s of one time step and synchronise between steps. The checks are
// LossCTC.cpp's check_ctc (lengths and target values read on the host).
//
// Forward: alpha_t(s) into log_alpha [N, T, 2 L_max + 1] (-inf where unused, as on the
// CPU), nll = -lse(alpha_{T_b-1}(S-1), alpha_{T_b-1}(S-2)).
// Backward: beta_t(s) (in double, a scratch tensor of log_alpha's shape), then one thread
// per (t, c): grad = (exp(lp) - exp(lse_{s: l'_s = c}(alpha + beta) + nll - lp)) * grad_b;
// times t >= T_b and (zero_infinity) infinite losses get zeros.
#include <ember/aten/Dispatch.h>

#include "../LossCTC.h"
#include "CUDAUtils.cuh"

namespace ember::at::native {
namespace {

// The kernels' bodies are __host__ __device__ functions of one block (BlockCtx): the
// __global__ wrappers run them on the GPU; the host emulation (tests without a GPU:
// _C._cuda_emulated_ctc_loss*) runs every block with one thread, a barrier being a no-op.
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
__global__ void ctc_forward_kernel(T* __restrict__ nll, T* __restrict__ la, const T* __restrict__ lp, CtcArgs a) {
  ctc_forward_block<T>(BlockCtx{blockIdx.x, threadIdx.x, blockDim.x}, nll, la, lp, a);
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

template <typename T>
__global__ void ctc_backward_kernel(T* __restrict__ out, double* __restrict__ beta, const T* __restrict__ grad,
                                    const T* __restrict__ lp, const T* __restrict__ nll, const T* __restrict__ la,
                                    CtcArgs a, bool zero_infinity) {
  ctc_backward_block<T>(BlockCtx{blockIdx.x, threadIdx.x, blockDim.x}, out, beta, grad, lp, nll, la, a, zero_infinity);
}

// Host emulation switch (tests): while set, the launches below run their blocks on the host.
bool g_emulation = false;

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

Tensor host_longs(const std::vector<int64_t>& v, Device device) {
  Tensor t = at::empty({static_cast<int64_t>(v.size())}, ScalarType::Long, Device(DeviceType::CPU));
  int64_t* p = t.data_ptr<int64_t>();
  for (size_t i = 0; i < v.size(); ++i) p[i] = v[i];
  return t.to(device);
}

CtcDevice to_device(const CtcProblem& p, Device device) {
  // an empty targets tensor still needs a valid pointer
  Tensor tg = p.targets.numel() ? p.targets : at::zeros({1}, ScalarType::Long, device);
  return CtcDevice{tg, host_longs(p.target_offsets, device), host_longs(p.input_lengths, device),
                   host_longs(p.target_lengths, device)};
}

constexpr int kCtcThreads = 256;

}  // namespace

std::tuple<Tensor, Tensor> ctc_loss_cuda(const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths,
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
    if (g_emulation) {
      for (int64_t b = 0; b < p.N; ++b)
        ctc_forward_block<scalar_t>(BlockCtx{b, 0, 1}, nll.data_ptr<scalar_t>(), log_alpha.data_ptr<scalar_t>(),
                                    lp.data_ptr<scalar_t>(), d.args(p, Smax, blank));
      return;
    }
    ctc_forward_kernel<scalar_t><<<static_cast<unsigned int>(p.N), kCtcThreads, 0, cuda::current_stream()>>>(
        nll.data_ptr<scalar_t>(), log_alpha.data_ptr<scalar_t>(), lp.data_ptr<scalar_t>(), d.args(p, Smax, blank));
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return {nll, log_alpha};
}

std::tuple<Tensor, Tensor> ctc_loss_tensor_cuda(const Tensor& log_probs, const Tensor& targets,
                                                const Tensor& input_lengths, const Tensor& target_lengths,
                                                int64_t blank, bool zero_infinity) {
  const std::vector<int64_t> il = ctc_lengths_of(input_lengths, "input_lengths");
  const std::vector<int64_t> tl = ctc_lengths_of(target_lengths, "target_lengths");
  return ctc_loss_cuda(log_probs, targets, il, tl, blank, zero_infinity);
}

Tensor ctc_loss_backward_cuda(const Tensor& grad, const Tensor& log_probs, const Tensor& targets,
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
    if (g_emulation) {
      for (int64_t b = 0; b < p.N; ++b)
        ctc_backward_block<scalar_t>(BlockCtx{b, 0, 1}, out.data_ptr<scalar_t>(), beta.data_ptr<double>(),
                                     g.data_ptr<scalar_t>(), lp.data_ptr<scalar_t>(), nll.data_ptr<scalar_t>(),
                                     la.data_ptr<scalar_t>(), d.args(p, Smax, blank), zero_infinity);
      return;
    }
    ctc_backward_kernel<scalar_t><<<static_cast<unsigned int>(p.N), kCtcThreads, 0, cuda::current_stream()>>>(
        out.data_ptr<scalar_t>(), beta.data_ptr<double>(), g.data_ptr<scalar_t>(), lp.data_ptr<scalar_t>(),
        nll.data_ptr<scalar_t>(), la.data_ptr<scalar_t>(), d.args(p, Smax, blank), zero_infinity);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return out;
}

Tensor ctc_loss_backward_tensor_cuda(const Tensor& grad, const Tensor& log_probs, const Tensor& targets,
                                     const Tensor& input_lengths, const Tensor& target_lengths,
                                     const Tensor& neg_log_likelihood, const Tensor& log_alpha, int64_t blank,
                                     bool zero_infinity) {
  const std::vector<int64_t> il = ctc_lengths_of(input_lengths, "input_lengths");
  const std::vector<int64_t> tl = ctc_lengths_of(target_lengths, "target_lengths");
  return ctc_loss_backward_cuda(grad, log_probs, targets, il, tl, neg_log_likelihood, log_alpha, blank, zero_infinity);
}

// _C._cuda_emulated_ctc_loss / _cuda_emulated_ctc_loss_backward: the CUDA host code above on
// CPU tensors, its kernels' blocks run on the host (for tests without a GPU).
std::tuple<Tensor, Tensor> cuda_emulated_ctc_loss(const Tensor& log_probs, const Tensor& targets,
                                                  IntArrayRef input_lengths, IntArrayRef target_lengths, int64_t blank,
                                                  bool zero_infinity) {
  EMBER_CHECK(log_probs.is_cpu() && targets.is_cpu(), "the CTC host emulation takes CPU tensors");
  g_emulation = true;
  try {
    auto r = ctc_loss_cuda(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity);
    g_emulation = false;
    return r;
  } catch (...) {
    g_emulation = false;
    throw;
  }
}

Tensor cuda_emulated_ctc_loss_backward(const Tensor& grad, const Tensor& log_probs, const Tensor& targets,
                                       IntArrayRef input_lengths, IntArrayRef target_lengths,
                                       const Tensor& neg_log_likelihood, const Tensor& log_alpha, int64_t blank,
                                       bool zero_infinity) {
  EMBER_CHECK(log_probs.is_cpu() && targets.is_cpu(), "the CTC host emulation takes CPU tensors");
  g_emulation = true;
  try {
    Tensor r = ctc_loss_backward_cuda(grad, log_probs, targets, input_lengths, target_lengths, neg_log_likelihood,
                                      log_alpha, blank, zero_infinity);
    g_emulation = false;
    return r;
  } catch (...) {
    g_emulation = false;
    throw;
  }
}

}  // namespace ember::at::native
