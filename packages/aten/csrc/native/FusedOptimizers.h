#pragma once
// Fused optimizer steps (PyTorch's _fused_sgd_, _fused_adam_, _fused_adamw_): one
// parallel pass over the elements of every parameter of the call updates the parameter
// and its state together (kernels in cpu/FusedOptimizerKernel.cpp). As in the foreach
// fast path (ForeachOps.h) the elements of all the tensors form one index space, and
// the tensors of parameter i (param, grad, states) share one dense layout. On CUDA
// (cuda/FusedOptimizers.cu) the call is one multi-tensor kernel launch over chunks.

#include <array>
#include <cstdint>
#include <vector>

#include <ember/aten/Tensor.h>
#include <ember/aten/native/DispatchStub.h>

namespace ember::at::native {

struct FusedAdamArgs {
  // param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq (null without amsgrad)
  std::vector<std::array<char*, 5>> ptrs;
  std::vector<int64_t> offsets;  // prefix sums of the numels (size + 1)
  // per parameter, from its step: lr / (1 - beta1^step) and sqrt(1 - beta2^step)
  std::vector<double> step_size;
  std::vector<double> bias_correction2_sqrt;
  double lr = 0, beta1 = 0, beta2 = 0, weight_decay = 0, eps = 0;
  bool amsgrad = false, maximize = false;
  bool adamw = false;  // decoupled weight decay: param *= 1 - lr * weight_decay
  bool has_grad_scale = false;
  float grad_scale = 1.0f;  // grads are divided by it (and written back) first
  // CUDA only (null on the CPU): per parameter, its step tensor on the device (float32 or
  // float64, step_is_double) to read the step from instead of step_size /
  // bias_correction2_sqrt; grad_scale / found_inf as float32 on the device (no host sync).
  std::vector<const void*> step_ptrs;
  std::vector<char> step_is_double;
  const float* grad_scale_ptr = nullptr;
  const float* found_inf_ptr = nullptr;
};

struct FusedSgdArgs {
  std::vector<std::array<char*, 3>> ptrs;  // param, grad, momentum_buffer (null without momentum)
  std::vector<int64_t> offsets;
  double weight_decay = 0, momentum = 0, lr = 0, dampening = 0;
  bool nesterov = false, maximize = false, is_first_step = false;
  bool has_grad_scale = false;
  float grad_scale = 1.0f;
  // CUDA only, as in FusedAdamArgs
  const float* grad_scale_ptr = nullptr;
  const float* found_inf_ptr = nullptr;
};

using fused_adam_fn = void (*)(ScalarType dtype, const FusedAdamArgs& args);
using fused_sgd_fn = void (*)(ScalarType dtype, const FusedSgdArgs& args);
DECLARE_DISPATCH(fused_adam_fn, fused_adam_stub);
DECLARE_DISPATCH(fused_sgd_fn, fused_sgd_stub);

}  // namespace ember::at::native
