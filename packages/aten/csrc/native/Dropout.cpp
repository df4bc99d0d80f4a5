// Dropout: native_dropout (output and keep-mask) and its backward. The composites --
// dropout, feature_dropout, alpha_dropout, feature_alpha_dropout and their in-place
// forms -- are in ember/aten/native/nn_ops.py.
//
// Randomness: the keep-mask is bernoulli_(1 - p) into a bool tensor, i.e. the Philox
// stream of the default generator laid out as bernoulli's (one 53-bit uniform per
// element, element i kept when U_i < 1 - p; see cpu/DistributionsKernel.cpp), so
// manual_seed reproduces it and it equals empty_like(x, dtype=bool).bernoulli_(1 - p)
// drawn from the same state.
#include <ember/aten/Dispatch.h>
#include <ember/aten/Generator.h>
#include <ember/aten/Parallel.h>
#include <ember/aten/Tensor.h>
#include <ember/c10/DeviceGuard.h>
#include <ember/c10/ScalarType.h>

#include "Dropout.h"

namespace ember::at::native {

void check_dropout_input(const Tensor& input, double p) {
  EMBER_CHECK(p >= 0 && p <= 1, "dropout probability has to be between 0 and 1, but got ", p);
  EMBER_CHECK(c10::isFloatingType(input.dtype()), "result type Float can't be cast to the desired output type ",
              c10::toString(input.dtype()));
}

void check_dropout_backward(const Tensor& grad_output, const Tensor& mask) {
  EMBER_CHECK(mask.dtype() == ScalarType::Bool, "Mask should be Bool Scalar Type", " but got ",
              c10::toString(mask.dtype()));
  EMBER_CHECK(grad_output.sizes() == mask.sizes(), "native_dropout_backward: grad_output of shape ",
              shape_str(grad_output.sizes()), " does not match the mask of shape ", shape_str(mask.sizes()));
  EMBER_CHECK(c10::isFloatingType(grad_output.dtype()), "native_dropout_backward: grad_output must be floating, got ",
              c10::toString(grad_output.dtype()));
  check_same_device("native_dropout_backward", grad_output, mask);
}

namespace {

// out = x * mask * scale (all contiguous)
template <typename T>
void masked_scale(const Tensor& out, const Tensor& x, const Tensor& mask, double scale) {
  using A = opmath_t<T>;
  const T* xp = x.data_ptr<T>();
  const bool* mp = mask.data_ptr<bool>();
  T* op = out.data_ptr<T>();
  const A s = static_cast<A>(scale);
  parallel_for(0, x.numel(), GRAIN_SIZE, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) op[i] = static_cast<T>(static_cast<A>(xp[i]) * (mp[i] ? s : A(0)));
  });
}

void masked_scale_cpu(const Tensor& out, const Tensor& x, const Tensor& mask, double scale) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(x.dtype(), "masked_scale",
                                         [&] { masked_scale<scalar_t>(out, x, mask, scale); });
}

// The device's kernel on contiguous copies.
Tensor masked_scale_out(const Tensor& x, const Tensor& mask, double scale) {
  c10::DeviceGuard guard(x.device());
  const Tensor xc = x.contiguous(), mc = mask.contiguous();
  Tensor out = at::empty(xc.sizes(), xc.dtype(), xc.device());
  if (xc.numel() > 0) masked_scale_stub(xc.device().type, out, xc, mc, scale);
  return out;
}

}  // namespace

DEFINE_DISPATCH(masked_scale_stub);
REGISTER_BASELINE_DISPATCH(masked_scale_stub, &masked_scale_cpu);

// (output, mask): in training each element is zeroed with probability p and the
// survivors scaled by 1 / (1 - p) (p = 1: all zero); train=False (or an empty input)
// gives a copy and an all-true mask. train=None counts as training, as in PyTorch.
// One kernel for every device: the mask comes from the device's bernoulli_ kernel, the
// scaling from masked_scale_stub.
std::tuple<Tensor, Tensor> native_dropout(const Tensor& input, double p, std::optional<bool> train) {
  check_dropout_input(input, p);
  if (input.numel() == 0 || (train.has_value() && !*train)) {
    return {input.clone(), at::full(input.sizes(), Scalar(true), ScalarType::Bool, input.device())};
  }
  const double p1m = 1.0 - p;
  const double scale = p1m == 0 ? 0.0 : 1.0 / p1m;
  Tensor mask = at::empty(input.sizes(), ScalarType::Bool, input.device());
  bernoulli_scalar_(mask, p1m, std::nullopt);
  return {masked_scale_out(input, mask, scale), mask};
}

Tensor native_dropout_backward(const Tensor& grad_output, const Tensor& mask, double scale) {
  check_dropout_backward(grad_output, mask);
  return masked_scale_out(grad_output, mask, scale);
}

}  // namespace ember::at::native
