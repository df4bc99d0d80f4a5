#pragma once
// Shared by LossCTC.cpp and cuda/LossCTC.cu: the checks of ctc_loss and the problem they
// describe (lengths and target values are read on the host).
#include <cstdint>
#include <vector>

#include <ember/aten/Tensor.h>

namespace ember::at::native {

struct CtcProblem {
  int64_t T, N, C, max_target;
  std::vector<int64_t> input_lengths, target_lengths, target_offsets;
  int64_t target_stride;  // between symbols of one target
  Tensor targets;         // int64, contiguous, on the targets' device
};

// PyTorch's checks of _ctc_loss (targets 1-d concatenated or 2-d padded, every target value in [0, C)).
CtcProblem check_ctc(const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths,
                     IntArrayRef target_lengths, int64_t blank);
// _ctc_loss_backward's extra checks (grad, neg_log_likelihood and log_alpha match the problem).
void check_ctc_backward(const CtcProblem& p, const Tensor& grad, const Tensor& neg_log_likelihood,
                        const Tensor& log_alpha);
// input_lengths / target_lengths given as tensors, read on the host.
std::vector<int64_t> ctc_lengths_of(const Tensor& t, const char* name);

}  // namespace ember::at::native
