// Host emulation of the CTC loss kernels (LossCTC.cu), for tests without a GPU:
// cuda_emulated_ctc_loss / cuda_emulated_ctc_loss_backward run the CUDA host code
// (LossCTCKernels.cuh) on CPU tensors, every kernel block on the host with one thread.
#include "../../csrc/native/cuda/LossCTCKernels.cuh"
#include "Emulation.h"

namespace ember::at::native::cuda_emulation {
namespace {

using namespace cuda_ctc;

// Block b = 0 .. N-1 of each launch, one after another, as one thread.
struct HostLaunch {
  template <typename T>
  static void forward(int64_t N, T* nll, T* la, const T* lp, const CtcArgs& a) {
    for (int64_t b = 0; b < N; ++b) ctc_forward_block<T>(BlockCtx{b, 0, 1}, nll, la, lp, a);
  }
  template <typename T>
  static void backward(int64_t N, T* out, double* beta, const T* grad, const T* lp, const T* nll, const T* la,
                       const CtcArgs& a, bool zero_infinity) {
    for (int64_t b = 0; b < N; ++b)
      ctc_backward_block<T>(BlockCtx{b, 0, 1}, out, beta, grad, lp, nll, la, a, zero_infinity);
  }
};

}  // namespace

std::tuple<Tensor, Tensor> cuda_emulated_ctc_loss(const Tensor& log_probs, const Tensor& targets,
                                                  IntArrayRef input_lengths, IntArrayRef target_lengths, int64_t blank,
                                                  bool zero_infinity) {
  EMBER_CHECK(log_probs.is_cpu() && targets.is_cpu(), "the CTC host emulation takes CPU tensors");
  return ctc_loss_run<HostLaunch>(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity);
}

Tensor cuda_emulated_ctc_loss_backward(const Tensor& grad, const Tensor& log_probs, const Tensor& targets,
                                       IntArrayRef input_lengths, IntArrayRef target_lengths,
                                       const Tensor& neg_log_likelihood, const Tensor& log_alpha, int64_t blank,
                                       bool zero_infinity) {
  EMBER_CHECK(log_probs.is_cpu() && targets.is_cpu(), "the CTC host emulation takes CPU tensors");
  return ctc_loss_backward_run<HostLaunch>(grad, log_probs, targets, input_lengths, target_lengths, neg_log_likelihood,
                                           log_alpha, blank, zero_infinity);
}

}  // namespace ember::at::native::cuda_emulation
