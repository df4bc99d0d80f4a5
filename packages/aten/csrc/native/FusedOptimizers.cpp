// PyTorch's fused optimizer steps: _fused_sgd_, _fused_adam_ and _fused_adamw_ (each
// also with a Tensor lr, the .tensor_lr overloads). Given the lists of one parameter
// group, one call updates every parameter and its state in a single parallel pass
// (FusedOptimizers.h); the math and its order are PyTorch's CPU kernels':
//
//   Adam(W), per element, step = state_steps[i] (already incremented by the caller):
//     grad /= grad_scale (written back)          if grad_scale is given
//     grad = -grad                               if maximize
//     grad += weight_decay * param               Adam;  AdamW: param *= 1 - lr * weight_decay
//     exp_avg.lerp_(grad, 1 - beta1)
//     exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) * grad^2
//     max_exp_avg_sq = max(max_exp_avg_sq, exp_avg_sq)               if amsgrad (used below)
//     param -= lr / (1 - beta1^step) * exp_avg / (sqrt(exp_avg_sq) / sqrt(1 - beta2^step) + eps)
//   SGD:
//     grad /= grad_scale; grad = -grad if maximize; grad += weight_decay * param
//     buf = grad (first step) or momentum * buf + (1 - dampening) * grad   if momentum != 0
//     grad = grad + momentum * buf (nesterov) or buf
//     param -= lr * grad
// found_inf == 1 skips the whole step (AMP's GradScaler found an inf/NaN gradient).
// The *_cpu_ entry points serve CUDA parameters too (the stubs' CUDA kernels are in
// cuda/FusedOptimizers.cu; steps, grad_scale and found_inf on the device are read there).
#include "FusedOptimizers.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include <ember/c10/DeviceGuard.h>

#include "ForeachOps.h"

namespace ember::at::native {

DEFINE_DISPATCH(fused_adam_stub);
DEFINE_DISPATCH(fused_sgd_stub);

namespace {

void check_length(const TensorList& params, const TensorList& other) {
  EMBER_CHECK(params.size() == other.size(), "Tensor lists must have the same number of tensors, got ", params.size(),
              " and ", other.size());
}

bool same_sizes(IntArrayRef a, IntArrayRef b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

// The tensors of parameter i (grad, states) match it in device, dtype and shape.
void check_like(const char* op, const char* what, size_t i, const Tensor& param, const Tensor& t) {
  EMBER_CHECK(t.device() == param.device(), op, ": expected ", what, "[", i, "] on the parameters' device ",
              param.device(), ", got ", t.device());
  EMBER_CHECK(t.dtype() == param.dtype(), op, ": expected ", what, "[", i, "] to have the parameter's dtype ",
              c10::toPythonName(param.dtype()), ", got ", c10::toPythonName(t.dtype()));
  EMBER_CHECK(same_sizes(t.sizes(), param.sizes()), op, ": expected ", what, "[", i, "] to have the parameter's shape ",
              shape_str(param.sizes()), ", got ", shape_str(t.sizes()));
}

void check_params(const char* op, const TensorList& params) {
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& p = params[i];
    EMBER_CHECK(p.device() == params[0].device(), op, ": expected every parameter on ", params[0].device(), ", got ",
                p.device(), " for parameter ", i);
    EMBER_CHECK(c10::isFloatingType(p.dtype()), op, ": not implemented for dtype ", c10::toPythonName(p.dtype()));
    EMBER_CHECK(p.dtype() == params[0].dtype(), op, ": expected every parameter to have dtype ",
                c10::toPythonName(params[0].dtype()), ", got ", c10::toPythonName(p.dtype()), " for parameter ", i);
  }
}

double value_of(const char* op, const char* what, const Tensor& t) {
  EMBER_CHECK(t.numel() == 1, op, ": expected ", what, " to hold one value, got ", t.numel());
  return t.item().toDouble();
}

// A one-value tensor (grad_scale, found_inf) that lives on the parameters' CUDA device:
// float32 there, read by the kernel (no host sync). Undefined where it is on the CPU.
Tensor device_scalar(const char* op, const char* what, const std::optional<Tensor>& t, const Tensor& param) {
  if (!t || !t->defined() || !param.is_cuda() || t->is_cpu()) return Tensor();
  EMBER_CHECK(t->device() == param.device(), op, ": expected ", what, " on the parameters' device ", param.device(),
              ", got ", t->device());
  EMBER_CHECK(t->numel() == 1, op, ": expected ", what, " to hold one value, got ", t->numel());
  return t->dtype() == ScalarType::Float ? t->contiguous() : t->to(ScalarType::Float).contiguous();
}

// Pointers of K tensors per parameter for the kernel. Where they do not share one dense
// layout, the kernel works on contiguous copies, written back afterwards (`written`).
template <size_t K>
struct Operands {
  std::vector<std::array<char*, K>> ptrs;
  std::vector<int64_t> offsets{0};
  std::vector<std::pair<Tensor, Tensor>> copy_back;  // (original, the copy the kernel wrote)

  void add(const std::array<const Tensor*, K>& ts, const std::array<bool, K>& written) {
    const Tensor& first = *ts[0];
    bool dense = first.is_non_overlapping_and_dense();
    for (const Tensor* t : ts) dense = dense && (t == nullptr || same_layout(first, *t));
    std::array<char*, K> p{};
    for (size_t k = 0; k < K; ++k) {
      if (ts[k] == nullptr) continue;
      Tensor use = *ts[k];
      if (!dense) {
        use = ts[k]->contiguous();
        if (written[k] && !use.is_same(*ts[k])) copy_back.emplace_back(*ts[k], use);
      }
      p[k] = static_cast<char*>(use.data_ptr());
      keep_alive.push_back(use);
    }
    ptrs.push_back(p);
    offsets.push_back(offsets.back() + first.numel());
  }

  void finish() const {
    for (const auto& [orig, tmp] : copy_back) orig.copy_(tmp);
  }

 private:
  std::vector<Tensor> keep_alive;
};

// The tensor-list checks of _fused_adam_ / _fused_adamw_ (every overload): list lengths,
// the parameters' device and dtype, and each state tensor like its parameter.
void check_adam_args(const char* op, const TensorList& params, const TensorList& grads, const TensorList& exp_avgs,
                     const TensorList& exp_avg_sqs, const TensorList& max_exp_avg_sqs, const TensorList& state_steps,
                     bool amsgrad) {
  check_length(params, grads);
  check_length(params, exp_avgs);
  check_length(params, exp_avg_sqs);
  check_length(params, state_steps);
  if (amsgrad) {
    check_length(params, max_exp_avg_sqs);
  } else {
    EMBER_CHECK(max_exp_avg_sqs.empty(), op, ": max_exp_avg_sqs must be empty without amsgrad, got ",
                max_exp_avg_sqs.size(), " tensors");
  }
  check_params(op, params);
  for (size_t i = 0; i < params.size(); ++i) {
    check_like(op, "grads", i, params[i], grads[i]);
    check_like(op, "exp_avgs", i, params[i], exp_avgs[i]);
    check_like(op, "exp_avg_sqs", i, params[i], exp_avg_sqs[i]);
    if (amsgrad) check_like(op, "max_exp_avg_sqs", i, params[i], max_exp_avg_sqs[i]);
  }
}

void fused_adam_impl(const char* op, bool adamw, const TensorList& params, const TensorList& grads,
                     const TensorList& exp_avgs, const TensorList& exp_avg_sqs, const TensorList& max_exp_avg_sqs,
                     const TensorList& state_steps, double lr, double beta1, double beta2, double weight_decay,
                     double eps, bool amsgrad, bool maximize, const std::optional<Tensor>& grad_scale,
                     const std::optional<Tensor>& found_inf) {
  check_adam_args(op, params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, amsgrad);
  if (params.empty()) return;
  const Tensor found_inf_dev = device_scalar(op, "found_inf", found_inf, params[0]);
  const Tensor grad_scale_dev = device_scalar(op, "grad_scale", grad_scale, params[0]);
  if (!found_inf_dev.defined() && found_inf && found_inf->defined() && value_of(op, "found_inf", *found_inf) == 1.0)
    return;

  FusedAdamArgs args;
  args.lr = lr;
  args.beta1 = beta1;
  args.beta2 = beta2;
  args.weight_decay = weight_decay;
  args.eps = eps;
  args.amsgrad = amsgrad;
  args.maximize = maximize;
  args.adamw = adamw;
  if (grad_scale && grad_scale->defined()) {
    args.has_grad_scale = true;
    if (grad_scale_dev.defined())
      args.grad_scale_ptr = grad_scale_dev.data_ptr<float>();
    else
      args.grad_scale = static_cast<float>(value_of(op, "grad_scale", *grad_scale));
  }
  if (found_inf_dev.defined()) args.found_inf_ptr = found_inf_dev.data_ptr<float>();
  const bool on_cuda = params[0].is_cuda();
  std::vector<Tensor> steps_dev;  // kept alive for the kernel
  Operands<5> ops;
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& st = state_steps[i];
    if (on_cuda && st.device() == params[0].device()) {
      // a step on the device is read by the kernel (a host read would sync every step)
      EMBER_CHECK(st.numel() == 1, op, ": expected each of state_steps to hold one value, got ", st.numel());
      const bool dbl = st.dtype() == ScalarType::Double;
      steps_dev.push_back(dbl || st.dtype() == ScalarType::Float ? st : st.to(ScalarType::Float));
      args.step_ptrs.push_back(steps_dev.back().data_ptr());
      args.step_is_double.push_back(dbl ? 1 : 0);
      args.step_size.push_back(0.0);
      args.bias_correction2_sqrt.push_back(0.0);
    } else {
      // the step as PyTorch reads it (a float), the bias corrections in double
      const double step = static_cast<float>(value_of(op, "each of state_steps", st));
      args.step_size.push_back(lr / (1 - std::pow(beta1, step)));
      args.bias_correction2_sqrt.push_back(std::sqrt(1 - std::pow(beta2, step)));
      if (on_cuda) {
        args.step_ptrs.push_back(nullptr);
        args.step_is_double.push_back(0);
      }
    }
    ops.add({&params[i], &grads[i], &exp_avgs[i], &exp_avg_sqs[i], amsgrad ? &max_exp_avg_sqs[i] : nullptr},
            {true, args.has_grad_scale, true, true, true});
  }
  args.ptrs = ops.ptrs;
  args.offsets = ops.offsets;
  c10::DeviceGuard guard(params[0].device());
  fused_adam_stub(params[0].device().type, params[0].dtype(), args);
  ops.finish();
}

void fused_sgd_impl(const TensorList& params, const TensorList& grads, const TensorList& momentum_buffer_list,
                    double weight_decay, double momentum, double lr, double dampening, bool nesterov, bool maximize,
                    bool is_first_step, const std::optional<Tensor>& grad_scale,
                    const std::optional<Tensor>& found_inf) {
  const char* op = "_fused_sgd_";
  check_length(params, grads);
  const bool has_buffers = momentum != 0.0;
  if (has_buffers) {
    check_length(params, momentum_buffer_list);
  } else {
    EMBER_CHECK(momentum_buffer_list.empty(), op, ": momentum_buffer_list must be empty when momentum is 0, got ",
                momentum_buffer_list.size(), " tensors");
  }
  check_params(op, params);
  for (size_t i = 0; i < params.size(); ++i) {
    check_like(op, "grads", i, params[i], grads[i]);
    if (has_buffers) check_like(op, "momentum_buffer_list", i, params[i], momentum_buffer_list[i]);
  }
  if (params.empty()) return;
  const Tensor found_inf_dev = device_scalar(op, "found_inf", found_inf, params[0]);
  const Tensor grad_scale_dev = device_scalar(op, "grad_scale", grad_scale, params[0]);
  if (!found_inf_dev.defined() && found_inf && found_inf->defined() && value_of(op, "found_inf", *found_inf) == 1.0)
    return;

  FusedSgdArgs args;
  args.weight_decay = weight_decay;
  args.momentum = momentum;
  args.lr = lr;
  args.dampening = dampening;
  args.nesterov = nesterov;
  args.maximize = maximize;
  args.is_first_step = is_first_step;
  if (grad_scale && grad_scale->defined()) {
    args.has_grad_scale = true;
    if (grad_scale_dev.defined())
      args.grad_scale_ptr = grad_scale_dev.data_ptr<float>();
    else
      args.grad_scale = static_cast<float>(value_of(op, "grad_scale", *grad_scale));
  }
  if (found_inf_dev.defined()) args.found_inf_ptr = found_inf_dev.data_ptr<float>();
  Operands<3> ops;
  for (size_t i = 0; i < params.size(); ++i) {
    ops.add({&params[i], &grads[i], has_buffers ? &momentum_buffer_list[i] : nullptr},
            {true, args.has_grad_scale, true});
  }
  args.ptrs = ops.ptrs;
  args.offsets = ops.offsets;
  c10::DeviceGuard guard(params[0].device());
  fused_sgd_stub(params[0].device().type, params[0].dtype(), args);
  ops.finish();
}

}  // namespace

void fused_adam_cpu_(const std::vector<Tensor>& self, const std::vector<Tensor>& grads,
                     const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                     const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<Tensor>& state_steps, double lr,
                     double beta1, double beta2, double weight_decay, double eps, bool amsgrad, bool maximize,
                     const std::optional<Tensor>& grad_scale, const std::optional<Tensor>& found_inf) {
  fused_adam_impl("_fused_adam_", false, self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1,
                  beta2, weight_decay, eps, amsgrad, maximize, grad_scale, found_inf);
}

void fused_adam_tensor_lr_cpu_(const std::vector<Tensor>& self, const std::vector<Tensor>& grads,
                               const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                               const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<Tensor>& state_steps,
                               const Tensor& lr, double beta1, double beta2, double weight_decay, double eps,
                               bool amsgrad, bool maximize, const std::optional<Tensor>& grad_scale,
                               const std::optional<Tensor>& found_inf) {
  fused_adam_impl("_fused_adam_", false, self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps,
                  value_of("_fused_adam_", "lr", lr), beta1, beta2, weight_decay, eps, amsgrad, maximize, grad_scale,
                  found_inf);
}

void fused_adamw_cpu_(const std::vector<Tensor>& self, const std::vector<Tensor>& grads,
                      const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                      const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<Tensor>& state_steps, double lr,
                      double beta1, double beta2, double weight_decay, double eps, bool amsgrad, bool maximize,
                      const std::optional<Tensor>& grad_scale, const std::optional<Tensor>& found_inf) {
  fused_adam_impl("_fused_adamw_", true, self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, lr, beta1,
                  beta2, weight_decay, eps, amsgrad, maximize, grad_scale, found_inf);
}

void fused_adamw_tensor_lr_cpu_(const std::vector<Tensor>& self, const std::vector<Tensor>& grads,
                                const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                                const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<Tensor>& state_steps,
                                const Tensor& lr, double beta1, double beta2, double weight_decay, double eps,
                                bool amsgrad, bool maximize, const std::optional<Tensor>& grad_scale,
                                const std::optional<Tensor>& found_inf) {
  fused_adam_impl("_fused_adamw_", true, self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps,
                  value_of("_fused_adamw_", "lr", lr), beta1, beta2, weight_decay, eps, amsgrad, maximize, grad_scale,
                  found_inf);
}

void fused_sgd_cpu_(const std::vector<Tensor>& self, const std::vector<Tensor>& grads,
                    const std::vector<Tensor>& momentum_buffer_list, double weight_decay, double momentum, double lr,
                    double dampening, bool nesterov, bool maximize, bool is_first_step,
                    const std::optional<Tensor>& grad_scale, const std::optional<Tensor>& found_inf) {
  fused_sgd_impl(self, grads, momentum_buffer_list, weight_decay, momentum, lr, dampening, nesterov, maximize,
                 is_first_step, grad_scale, found_inf);
}

void fused_sgd_tensor_lr_cpu_(const std::vector<Tensor>& self, const std::vector<Tensor>& grads,
                              const std::vector<Tensor>& momentum_buffer_list, double weight_decay, double momentum,
                              const Tensor& lr, double dampening, bool nesterov, bool maximize, bool is_first_step,
                              const std::optional<Tensor>& grad_scale, const std::optional<Tensor>& found_inf) {
  fused_sgd_impl(self, grads, momentum_buffer_list, weight_decay, momentum, value_of("_fused_sgd_", "lr", lr),
                 dampening, nesterov, maximize, is_first_step, grad_scale, found_inf);
}

}  // namespace ember::at::native
