// Activation functions: relu, threshold, hardtanh/relu6, the ELU family (elu, selu,
// celu), gelu, silu, mish, softplus, leaky_relu, hardsigmoid, hardswish.
// Each has one out kernel (or, like relu, one functional kernel and its in-place
// twin); selu, celu and relu6 are elu and hardtanh with fixed parameters.
// All keep the input dtype (TensorIterator::unary_op): integer tensors are accepted
// by relu, threshold and hardtanh only.
#include "Activation.h"

#include <string>

namespace ember::at::native {

DEFINE_DISPATCH(relu_stub);
DEFINE_DISPATCH(threshold_stub);
DEFINE_DISPATCH(threshold_backward_stub);
DEFINE_DISPATCH(hardtanh_stub);
DEFINE_DISPATCH(elu_stub);
DEFINE_DISPATCH(gelu_stub);
DEFINE_DISPATCH(gelu_backward_stub);
DEFINE_DISPATCH(silu_stub);
DEFINE_DISPATCH(mish_stub);
DEFINE_DISPATCH(softplus_stub);
DEFINE_DISPATCH(leaky_relu_stub);
DEFINE_DISPATCH(hardsigmoid_stub);
DEFINE_DISPATCH(hardswish_stub);

namespace {
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

template <typename Stub, typename... Args>
Tensor unary_activation(Stub& stub, const Tensor& self, const Tensor& out, const char* name, const Args&... args) {
  auto iter = TensorIterator::unary_op(out, self, name);
  stub(iter.device_type(), iter, args...);
  return iter.output();
}

void check_celu_alpha(const Scalar& alpha) {
  EMBER_CHECK(alpha.toDouble() != 0, "ZeroDivisionError: alpha cannot be 0 for CELU");
}
}  // namespace

// relu(x) = max(x, 0) (NaN and -0.0 pass through, as PyTorch's clamp_min).
Tensor relu(const Tensor& self) {
  EMBER_CHECK(self.dtype() != ScalarType::Bool, "Boolean inputs not supported for relu");
  return unary_activation(relu_stub, self, Tensor(), "relu");
}

Tensor relu_(const Tensor& self) {
  EMBER_CHECK(self.dtype() != ScalarType::Bool, "Boolean inputs not supported for relu");
  unary_activation(relu_stub, self, self, "relu");
  return self;
}

// threshold(x, threshold, value) = x > threshold ? x : value.
Tensor threshold_out(const Tensor& self, const Scalar& threshold, const Scalar& value, const Tensor& out) {
  return unary_activation(threshold_stub, self, out, "threshold", threshold, value);
}

// threshold_backward(grad_output, self, threshold) = self <= threshold ? 0 : grad_output,
// in one pass (relu's and threshold's backward; dtype: the two tensors' promoted type).
Tensor threshold_backward_out(const Tensor& grad_output, const Tensor& self, const Scalar& threshold,
                              const Tensor& grad_input) {
  auto iter = TensorIterator::binary_op(grad_input, self, grad_output, "threshold_backward");
  threshold_backward_stub(iter.device_type(), iter, threshold);
  return iter.output();
}

// hardtanh(x, min_val, max_val) = clamp(x, min_val, max_val); integer tensors use
// the limits truncated to integers.
Tensor hardtanh_out(const Tensor& self, const Scalar& min_val, const Scalar& max_val, const Tensor& out) {
  EMBER_CHECK(self.dtype() != ScalarType::Bool, "Bool inputs not supported for hardtanh");
  if (c10::isIntegralType(self.dtype(), /*includeBool=*/false)) {
    const int64_t lo = min_val.toLong(), hi = max_val.toLong();
    EMBER_CHECK(self.dtype() != ScalarType::Byte || (lo >= 0 && hi >= 0),
                "cannot do hardtanh on an unsigned type with negative limits");
    return unary_activation(hardtanh_stub, self, out, "hardtanh", Scalar(lo), Scalar(hi));
  }
  return unary_activation(hardtanh_stub, self, out, "hardtanh", min_val, max_val);
}

Tensor relu6(const Tensor& self) { return hardtanh_out(self, Scalar(int64_t{0}), Scalar(int64_t{6}), Tensor()); }

Tensor relu6_(const Tensor& self) {
  hardtanh_out(self, Scalar(int64_t{0}), Scalar(int64_t{6}), self);
  return self;
}

// elu(x) = x > 0 ? scale * x : alpha * scale * (exp(input_scale * x) - 1).
Tensor elu_out(const Tensor& self, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale,
               const Tensor& out) {
  return unary_activation(elu_stub, self, out, "elu", alpha, scale, input_scale);
}

Tensor selu(const Tensor& self) { return elu_out(self, Scalar(kSeluAlpha), Scalar(kSeluScale), Scalar(1.0), Tensor()); }

Tensor selu_(const Tensor& self) {
  elu_out(self, Scalar(kSeluAlpha), Scalar(kSeluScale), Scalar(1.0), self);
  return self;
}

// celu(x, alpha) = elu(x, alpha, scale=1, input_scale=1/alpha).
Tensor celu(const Tensor& self, const Scalar& alpha) {
  check_celu_alpha(alpha);
  return elu_out(self, alpha, Scalar(1.0), Scalar(1.0 / alpha.toDouble()), Tensor());
}

Tensor celu_(const Tensor& self, const Scalar& alpha) {
  check_celu_alpha(alpha);
  elu_out(self, alpha, Scalar(1.0), Scalar(1.0 / alpha.toDouble()), self);
  return self;
}

// gelu(x) = x * Phi(x), or with approximate='tanh'
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
Tensor gelu_out(const Tensor& self, const std::string& approximate, const Tensor& out) {
  EMBER_CHECK(approximate == "none" || approximate == "tanh", "approximate argument must be either none or tanh.");
  return unary_activation(gelu_stub, self, out, "gelu", approximate == "tanh");
}

// gelu_backward(grad, x) = grad * d gelu / dx in one pass: grad * (Phi(x) + x phi(x)), or the
// derivative of the tanh form (the gradient of gelu; its own gradient is in derivatives.yaml).
Tensor gelu_backward(const Tensor& grad_output, const Tensor& self, const std::string& approximate) {
  EMBER_CHECK(approximate == "none" || approximate == "tanh", "approximate argument must be either none or tanh.");
  auto iter = TensorIterator::binary_op(Tensor(), grad_output, self, "gelu_backward");
  gelu_backward_stub(iter.device_type(), iter, approximate == "tanh");
  return iter.output();
}

// silu(x) = x * sigmoid(x)
Tensor silu_out(const Tensor& self, const Tensor& out) { return unary_activation(silu_stub, self, out, "silu"); }

// mish(x) = x * tanh(softplus(x))
Tensor mish_out(const Tensor& self, const Tensor& out) { return unary_activation(mish_stub, self, out, "mish"); }

// softplus(x) = log(1 + exp(beta x)) / beta, or x where beta x > threshold.
Tensor softplus_out(const Tensor& self, const Scalar& beta, const Scalar& threshold, const Tensor& out) {
  return unary_activation(softplus_stub, self, out, "softplus", beta, threshold);
}

// leaky_relu(x) = x > 0 ? x : negative_slope * x
Tensor leaky_relu_out(const Tensor& self, const Scalar& negative_slope, const Tensor& out) {
  return unary_activation(leaky_relu_stub, self, out, "leaky_relu", negative_slope);
}

// hardsigmoid(x) = clamp(x + 3, 0, 6) / 6
Tensor hardsigmoid_out(const Tensor& self, const Tensor& out) {
  return unary_activation(hardsigmoid_stub, self, out, "hardsigmoid");
}

// hardswish(x) = x * clamp(x + 3, 0, 6) / 6
Tensor hardswish_out(const Tensor& self, const Tensor& out) {
  return unary_activation(hardswish_stub, self, out, "hardswish");
}

}  // namespace ember::at::native
