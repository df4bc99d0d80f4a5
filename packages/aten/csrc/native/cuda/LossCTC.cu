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
//
// The block code and the host code around the launches are LossCTCKernels.cuh's (the
// test-only module ember_aten_testing runs the same blocks on the host).
#include <ember/aten/Dispatch.h>

#include "../LossCTC.h"
#include "CUDAUtils.cuh"
#include "LossCTCKernels.cuh"

namespace ember::at::native {
namespace {

using namespace cuda_ctc;

template <typename T>
__global__ void ctc_forward_kernel(T* __restrict__ nll, T* __restrict__ la, const T* __restrict__ lp, CtcArgs a) {
  ctc_forward_block<T>(BlockCtx{blockIdx.x, threadIdx.x, blockDim.x}, nll, la, lp, a);
}

template <typename T>
__global__ void ctc_backward_kernel(T* __restrict__ out, double* __restrict__ beta, const T* __restrict__ grad,
                                    const T* __restrict__ lp, const T* __restrict__ nll, const T* __restrict__ la,
                                    CtcArgs a, bool zero_infinity) {
  ctc_backward_block<T>(BlockCtx{blockIdx.x, threadIdx.x, blockDim.x}, out, beta, grad, lp, nll, la, a, zero_infinity);
}

constexpr int kCtcThreads = 256;

// One block of kCtcThreads threads per batch element, on the current stream.
struct DeviceLaunch {
  template <typename T>
  static void forward(int64_t N, T* nll, T* la, const T* lp, const CtcArgs& a) {
    ctc_forward_kernel<T><<<static_cast<unsigned int>(N), kCtcThreads, 0, cuda::current_stream()>>>(nll, la, lp, a);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  }
  template <typename T>
  static void backward(int64_t N, T* out, double* beta, const T* grad, const T* lp, const T* nll, const T* la,
                       const CtcArgs& a, bool zero_infinity) {
    ctc_backward_kernel<T><<<static_cast<unsigned int>(N), kCtcThreads, 0, cuda::current_stream()>>>(
        out, beta, grad, lp, nll, la, a, zero_infinity);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  }
};

}  // namespace

std::tuple<Tensor, Tensor> ctc_loss_cuda(const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths,
                                         IntArrayRef target_lengths, int64_t blank, bool zero_infinity) {
  return ctc_loss_run<DeviceLaunch>(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity);
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
  return ctc_loss_backward_run<DeviceLaunch>(grad, log_probs, targets, input_lengths, target_lengths,
                                             neg_log_likelihood, log_alpha, blank, zero_infinity);
}

Tensor ctc_loss_backward_tensor_cuda(const Tensor& grad, const Tensor& log_probs, const Tensor& targets,
                                     const Tensor& input_lengths, const Tensor& target_lengths,
                                     const Tensor& neg_log_likelihood, const Tensor& log_alpha, int64_t blank,
                                     bool zero_infinity) {
  const std::vector<int64_t> il = ctc_lengths_of(input_lengths, "input_lengths");
  const std::vector<int64_t> tl = ctc_lengths_of(target_lengths, "target_lengths");
  return ctc_loss_backward_cuda(grad, log_probs, targets, il, tl, neg_log_likelihood, log_alpha, blank, zero_infinity);
}

}  // namespace ember::at::native
