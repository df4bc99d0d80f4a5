// Connectionist temporal classification loss (PyTorch's _ctc_loss / _ctc_loss_backward),
// computed in log space (Graves et al. 2006, section 4.1).
//
// For batch element b with input length T_b and target l of length L, the extended
// target l' = (blank, l_1, blank, l_2, ..., l_L, blank) has S = 2L + 1 symbols, and
//     alpha_0(0) = lp_0(blank), alpha_0(1) = lp_0(l'_1)
//     alpha_t(s) = lse(alpha_{t-1}(s), alpha_{t-1}(s-1), [alpha_{t-1}(s-2)]) + lp_t(l'_s)
// where the third term is taken when l'_s is not blank and differs from l'_{s-2}; the
// loss is -lse(alpha_{T_b-1}(S-1), alpha_{T_b-1}(S-2)). beta is the same recursion run
// backwards (beta_t(s) includes lp_t(l'_s)), and the gradient with respect to
// log_probs[t, b, c] is, as in PyTorch,
//     (exp(lp_t(c)) - exp(lse_{s: l'_s = c}(alpha_t(s) + beta_t(s)) + nll - lp_t(c))) * grad_b
// -- the exp(lp) term makes it the gradient of the logits through a log_softmax, which
// is what log_probs are expected to be (it sums to zero over c at every t < T_b).
// Times t >= T_b get no gradient; with zero_infinity, an infinite loss gets none either.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <ember/aten/Dispatch.h>
#include <ember/aten/Parallel.h>
#include <ember/aten/Tensor.h>
#include <ember/c10/ScalarType.h>

#include "LossCTC.h"

namespace ember::at::native {

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

inline double lse2(double a, double b) {
  const double m = std::max(a, b);
  if (m == kNegInf) return kNegInf;
  return m + std::log(std::exp(a - m) + std::exp(b - m));
}

inline double lse3(double a, double b, double c) {
  const double m = std::max(a, std::max(b, c));
  if (m == kNegInf) return kNegInf;
  return m + std::log(std::exp(a - m) + std::exp(b - m) + std::exp(c - m));
}

std::string ctc_where() { return " (while checking arguments for ctc_loss_cpu)"; }

}  // namespace

CtcProblem check_ctc(const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths,
                     IntArrayRef target_lengths, int64_t blank) {
  EMBER_CHECK(c10::isFloatingType(log_probs.dtype()) && log_probs.dtype() != ScalarType::Half &&
                  log_probs.dtype() != ScalarType::BFloat16,
              "\"ctc_loss_", log_probs.is_cpu() ? "cpu" : "cuda", "\" not implemented for '",
              c10::toString(log_probs.dtype()), "'");
  EMBER_CHECK(log_probs.dim() == 3, "Expected 3-dimensional tensor, but got ", log_probs.dim(),
              "-dimensional tensor for argument #1 'log_probs'", ctc_where());
  EMBER_CHECK(
      targets.dtype() == ScalarType::Long || targets.dtype() == ScalarType::Int,
      "Expected tensor for argument #2 'targets' to have one of the following scalar types: Long, Int; but got ",
      c10::toString(targets.dtype()), " instead", ctc_where());
  check_same_device("ctc_loss", log_probs, targets);
  CtcProblem p;
  p.T = log_probs.size(0);
  p.N = log_probs.size(1);
  p.C = log_probs.size(2);
  EMBER_CHECK(blank >= 0 && blank < p.C, "blank must be in label range");
  EMBER_CHECK(static_cast<int64_t>(input_lengths.size()) == p.N, "input_lengths must be of size batch_size");
  EMBER_CHECK(static_cast<int64_t>(target_lengths.size()) == p.N, "target_lengths must be of size batch_size");
  p.input_lengths.assign(input_lengths.begin(), input_lengths.end());
  p.target_lengths.assign(target_lengths.begin(), target_lengths.end());
  p.targets = (targets.dtype() == ScalarType::Long ? targets : targets.to(ScalarType::Long)).contiguous();
  p.max_target = 0;
  int64_t total = 0;
  for (int64_t b = 0; b < p.N; ++b) {
    const int64_t il = p.input_lengths[b], tl = p.target_lengths[b];
    EMBER_CHECK(il >= 0, "Expected input_lengths to have value at least 0, but got value ", il, ctc_where());
    EMBER_CHECK(il <= p.T, "Expected input_lengths to have value at most ", p.T, ", but got value ", il, ctc_where());
    EMBER_CHECK(tl >= 0, "Expected target_lengths to have value at least 0, but got value ", tl, ctc_where());
    p.max_target = std::max(p.max_target, tl);
    total += tl;
  }
  p.target_offsets.resize(p.N);
  if (targets.dim() == 1) {
    // concatenated targets
    EMBER_CHECK(targets.size(0) >= total, "Expected tensor to have size at least ", total,
                " at dimension 0, but got size ", targets.size(0), " for argument #2 'targets'", ctc_where());
    int64_t off = 0;
    for (int64_t b = 0; b < p.N; ++b) {
      p.target_offsets[b] = off;
      off += p.target_lengths[b];
    }
    p.target_stride = 1;
  } else {
    EMBER_CHECK(targets.dim() == 2,
                "Expected 1-dimensional or 2-dimensional tensor for argument #2 'targets', but got ", targets.dim(),
                "-dimensional tensor", ctc_where());
    EMBER_CHECK(targets.size(0) == p.N, "Expected tensor to have size ", p.N, " at dimension 0, but got size ",
                targets.size(0), " for argument #2 'targets'", ctc_where());
    EMBER_CHECK(targets.size(1) >= p.max_target, "Expected tensor to have size at least ", p.max_target,
                " at dimension 1, but got size ", targets.size(1), " for argument #2 'targets'", ctc_where());
    for (int64_t b = 0; b < p.N; ++b) p.target_offsets[b] = b * targets.size(1);
    p.target_stride = 1;
  }
  // the target values are checked on the host (CUDA: a device-to-host copy)
  const Tensor host_targets = p.targets.is_cpu() ? p.targets : p.targets.to(Device(DeviceType::CPU));
  const int64_t* tg = host_targets.data_ptr<int64_t>();
  for (int64_t b = 0; b < p.N; ++b)
    for (int64_t i = 0; i < p.target_lengths[b]; ++i) {
      const int64_t v = tg[p.target_offsets[b] + i];
      EMBER_CHECK_INDEX(v >= 0 && v < p.C, "ctc_loss: target value ", v, " of batch element ", b,
                        " is out of range for ", p.C, " classes");
    }
  return p;
}

namespace {

// symbol s of the extended target of element b
inline int64_t ext_symbol(const CtcProblem& p, const int64_t* tg, int64_t b, int64_t s, int64_t blank) {
  return (s & 1) ? tg[p.target_offsets[b] + (s >> 1) * p.target_stride] : blank;
}

template <typename T>
void ctc_forward_impl(const CtcProblem& p, const Tensor& lp_t, const Tensor& nll_t, const Tensor& la_t, int64_t blank) {
  const T* lp = lp_t.data_ptr<T>();
  T* nll = nll_t.data_ptr<T>();
  T* la = la_t.data_ptr<T>();
  const int64_t* tg = p.targets.data_ptr<int64_t>();
  const int64_t Smax = 2 * p.max_target + 1;
  std::fill(la, la + la_t.numel(), static_cast<T>(kNegInf));
  parallel_for(0, p.N, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t Tb = p.input_lengths[b], L = p.target_lengths[b], S = 2 * L + 1;
      if (Tb == 0) {
        nll[b] = static_cast<T>(L == 0 ? 0.0 : std::numeric_limits<double>::infinity());
        continue;
      }
      auto LP = [&](int64_t t, int64_t c) { return static_cast<double>(lp[(t * p.N + b) * p.C + c]); };
      T* A = la + b * p.T * Smax;  // A[t * Smax + s]
      A[0] = static_cast<T>(LP(0, blank));
      if (S > 1) A[1] = static_cast<T>(LP(0, ext_symbol(p, tg, b, 1, blank)));
      for (int64_t t = 1; t < Tb; ++t) {
        const T* prev = A + (t - 1) * Smax;
        T* cur = A + t * Smax;
        for (int64_t s = 0; s < S; ++s) {
          const int64_t sym = ext_symbol(p, tg, b, s, blank);
          const double a = prev[s];
          const double b1v = s > 0 ? static_cast<double>(prev[s - 1]) : kNegInf;
          const bool skip = s > 1 && sym != blank && sym != ext_symbol(p, tg, b, s - 2, blank);
          const double c = skip ? static_cast<double>(prev[s - 2]) : kNegInf;
          cur[s] = static_cast<T>(lse3(a, b1v, c) + LP(t, sym));
        }
      }
      const T* last = A + (Tb - 1) * Smax;
      const double ll = lse2(last[S - 1], S > 1 ? static_cast<double>(last[S - 2]) : kNegInf);
      nll[b] = static_cast<T>(-ll);
    }
  });
}

template <typename T>
void ctc_backward_impl(const CtcProblem& p, const Tensor& grad_t, const Tensor& lp_t, const Tensor& nll_t,
                       const Tensor& la_t, const Tensor& out_t, int64_t blank, bool zero_infinity) {
  const T* lp = lp_t.data_ptr<T>();
  const T* gr = grad_t.data_ptr<T>();
  const T* nll = nll_t.data_ptr<T>();
  const T* la = la_t.data_ptr<T>();
  T* out = out_t.data_ptr<T>();
  const int64_t* tg = p.targets.data_ptr<int64_t>();
  const int64_t Smax = la_t.size(2);
  parallel_for(0, p.N, 1, [&](int64_t b0, int64_t b1) {
    std::vector<double> beta, lcab(p.C);
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t Tb = p.input_lengths[b], L = p.target_lengths[b], S = 2 * L + 1;
      const double nllb = static_cast<double>(nll[b]);
      const double g = static_cast<double>(gr[b]);
      auto LP = [&](int64_t t, int64_t c) { return static_cast<double>(lp[(t * p.N + b) * p.C + c]); };
      auto OUT = [&](int64_t t, int64_t c) -> T& { return out[(t * p.N + b) * p.C + c]; };
      for (int64_t t = 0; t < p.T; ++t)
        for (int64_t c = 0; c < p.C; ++c) OUT(t, c) = T(0);
      if (Tb == 0 || (zero_infinity && std::isinf(nllb))) continue;
      beta.assign(Tb * S, kNegInf);
      double* B = beta.data();  // B[t * S + s]
      B[(Tb - 1) * S + S - 1] = LP(Tb - 1, blank);
      if (S > 1) B[(Tb - 1) * S + S - 2] = LP(Tb - 1, ext_symbol(p, tg, b, S - 2, blank));
      for (int64_t t = Tb - 2; t >= 0; --t) {
        for (int64_t s = 0; s < S; ++s) {
          const int64_t sym = ext_symbol(p, tg, b, s, blank);
          const double a = B[(t + 1) * S + s];
          const double b1v = s + 1 < S ? B[(t + 1) * S + s + 1] : kNegInf;
          const bool skip = s + 2 < S && sym != blank && sym != ext_symbol(p, tg, b, s + 2, blank);
          const double c = skip ? B[(t + 1) * S + s + 2] : kNegInf;
          B[t * S + s] = lse3(a, b1v, c) + LP(t, sym);
        }
      }
      const T* A = la + b * p.T * Smax;
      for (int64_t t = 0; t < Tb; ++t) {
        std::fill(lcab.begin(), lcab.end(), kNegInf);
        for (int64_t s = 0; s < S; ++s) {
          const int64_t sym = ext_symbol(p, tg, b, s, blank);
          lcab[sym] = lse2(lcab[sym], static_cast<double>(A[t * Smax + s]) + B[t * S + s]);
        }
        for (int64_t c = 0; c < p.C; ++c) {
          const double l = LP(t, c);
          OUT(t, c) = static_cast<T>((std::exp(l) - std::exp(lcab[c] + nllb - l)) * g);
        }
      }
    }
  });
}

}  // namespace

std::vector<int64_t> ctc_lengths_of(const Tensor& t, const char* name) {
  EMBER_CHECK(!c10::isFloatingType(t.dtype()) && t.dtype() != ScalarType::Bool, "ctc_loss: ", name,
              " must be an integer tensor, but got ", c10::toString(t.dtype()));
  EMBER_CHECK(t.dim() <= 1, "ctc_loss: ", name, " must be a 0-d or 1-d tensor, but got shape ", shape_str(t.sizes()));
  Tensor l = (t.dtype() == ScalarType::Long ? t : t.to(ScalarType::Long)).contiguous();
  if (!l.is_cpu()) l = l.to(Device(DeviceType::CPU));  // read on the host
  const int64_t* p = l.data_ptr<int64_t>();
  return std::vector<int64_t>(p, p + l.numel());
}

std::tuple<Tensor, Tensor> ctc_loss_cpu(const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths,
                                        IntArrayRef target_lengths, int64_t blank, bool zero_infinity) {
  const CtcProblem p = check_ctc(log_probs, targets, input_lengths, target_lengths, blank);
  const Tensor lp = log_probs.contiguous();
  Tensor nll = at::empty({p.N}, lp.dtype(), lp.device());
  Tensor log_alpha = at::empty({p.N, p.T, 2 * p.max_target + 1}, lp.dtype(), lp.device());
  EMBER_DISPATCH_FLOATING_TYPES(lp.dtype(), "ctc_loss_cpu",
                                [&] { ctc_forward_impl<scalar_t>(p, lp, nll, log_alpha, blank); });
  return {nll, log_alpha};
}

std::tuple<Tensor, Tensor> ctc_loss_tensor_cpu(const Tensor& log_probs, const Tensor& targets,
                                               const Tensor& input_lengths, const Tensor& target_lengths, int64_t blank,
                                               bool zero_infinity) {
  const std::vector<int64_t> il = ctc_lengths_of(input_lengths, "input_lengths");
  const std::vector<int64_t> tl = ctc_lengths_of(target_lengths, "target_lengths");
  return ctc_loss_cpu(log_probs, targets, il, tl, blank, zero_infinity);
}

void check_ctc_backward(const CtcProblem& p, const Tensor& grad, const Tensor& neg_log_likelihood,
                        const Tensor& log_alpha) {
  EMBER_CHECK(grad.numel() == p.N && neg_log_likelihood.numel() == p.N,
              "ctc_loss_backward: grad and neg_log_likelihood must have one element per batch element (", p.N, ")");
  EMBER_CHECK(log_alpha.dim() == 3 && log_alpha.size(0) == p.N && log_alpha.size(1) == p.T &&
                  log_alpha.size(2) >= 2 * p.max_target + 1,
              "ctc_loss_backward: log_alpha of shape ", shape_str(log_alpha.sizes()), " does not match the problem");
}

Tensor ctc_loss_backward_cpu(const Tensor& grad, const Tensor& log_probs, const Tensor& targets,
                             IntArrayRef input_lengths, IntArrayRef target_lengths, const Tensor& neg_log_likelihood,
                             const Tensor& log_alpha, int64_t blank, bool zero_infinity) {
  const CtcProblem p = check_ctc(log_probs, targets, input_lengths, target_lengths, blank);
  check_ctc_backward(p, grad, neg_log_likelihood, log_alpha);
  const Tensor lp = log_probs.contiguous();
  auto same = [&](const Tensor& t) { return (t.dtype() == lp.dtype() ? t : t.to(lp.dtype())).contiguous(); };
  const Tensor g = same(grad), nll = same(neg_log_likelihood), la = same(log_alpha);
  Tensor out = at::empty(lp.sizes(), lp.dtype(), lp.device());
  EMBER_DISPATCH_FLOATING_TYPES(lp.dtype(), "ctc_loss_backward_cpu",
                                [&] { ctc_backward_impl<scalar_t>(p, g, lp, nll, la, out, blank, zero_infinity); });
  return out;
}

Tensor ctc_loss_backward_tensor_cpu(const Tensor& grad, const Tensor& log_probs, const Tensor& targets,
                                    const Tensor& input_lengths, const Tensor& target_lengths,
                                    const Tensor& neg_log_likelihood, const Tensor& log_alpha, int64_t blank,
                                    bool zero_infinity) {
  const std::vector<int64_t> il = ctc_lengths_of(input_lengths, "input_lengths");
  const std::vector<int64_t> tl = ctc_lengths_of(target_lengths, "target_lengths");
  return ctc_loss_backward_cpu(grad, log_probs, targets, il, tl, neg_log_likelihood, log_alpha, blank, zero_infinity);
}

}  // namespace ember::at::native
