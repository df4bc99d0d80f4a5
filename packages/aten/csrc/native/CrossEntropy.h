#pragma once
// Stubs of cross_entropy's fused CPU path (kernels in cpu/SoftMaxKernel.cpp, next to the
// log_softmax rows they reuse; operators in Loss.cpp).
#include <ember/aten/Tensor.h>
#include <ember/aten/native/DispatchStub.h>

namespace ember::at::native {

// cross_entropy with class indices, log_softmax and nll_loss fused over the rows of a
// contiguous (N, C) input of float32 / float64 (Loss.cpp: _cross_entropy_loss_forward and
// its backward). The log-probabilities are never stored: row i keeps only its max and the
// log of its sum of exps, stats[2 i] and stats[2 i + 1], from which
// logp = (x - max) - logsum is recomputed exactly as log_softmax computes it.
//
// forward: stats, nll[i] = -w[t_i] logp[i, t_i] and, when smooth is not null,
//   smooth[i] = -sum_c w[c] logp[i, c] (w = 1 without weights); rows whose target is
//   ignore_index get 0 in both. The targets are in [0, C) or ignore_index (checked by the caller).
// backward: grad[i, c] = coef[i] p[i, c] - (c == t_i ? tgt[i] : 0) - uni[i] w[c] with
//   p = exp(logp): the softmax minus the (smoothed, weighted) one-hot target, scaled, in one pass.
struct CrossEntropyRows {
  int64_t N = 0, C = 0, ignore_index = -100;
  const void* x = nullptr;          // (N, C), contiguous
  const int64_t* target = nullptr;  // (N)
  const void* weight = nullptr;     // (C) of x's dtype, or null
};
using cross_entropy_fn = void (*)(ScalarType dtype, const CrossEntropyRows& rows, void* stats, double* nll,
                                  double* smooth);
using cross_entropy_backward_fn = void (*)(ScalarType dtype, const CrossEntropyRows& rows, const void* stats,
                                           const double* coef, const double* tgt, const double* uni, void* grad);

DECLARE_DISPATCH(cross_entropy_fn, cross_entropy_stub);
DECLARE_DISPATCH(cross_entropy_backward_fn, cross_entropy_backward_stub);

}  // namespace ember::at::native
