// Losses with C++ kernels: nll_loss / nll_loss2d (forward and backward), the pointwise
// losses (mse, smooth_l1, huber, soft_margin, binary_cross_entropy and their backward,
// binary_cross_entropy_with_logits) and the reduction they share. The composites
// (cross_entropy_loss, nll_loss_nd, l1_loss, kl_div, the margin / embedding losses,
// poisson / gaussian nll) are in ember/aten/native/nn_ops.py; ctc_loss is LossCTC.cpp.
//
// `reduction` is PyTorch's enum: 0 none, 1 mean, 2 sum.
#include "Loss.h"

#include <cmath>
#include <limits>
#include <vector>

#include <ember/aten/Dispatch.h>
#include <ember/aten/Parallel.h>
#include <ember/c10/ScalarType.h>

#include "CrossEntropy.h"

namespace ember::at::native {

DEFINE_DISPATCH(pointwise_loss_stub);
DEFINE_DISPATCH(loss_sum_stub);

void check_reduction(int64_t reduction, const char* op) {
  EMBER_CHECK_VALUE(reduction >= 0 && reduction <= 2, op, ": reduction must be 0 (none), 1 (mean) or 2 (sum), but got ",
                    reduction);
}

Tensor apply_loss_reduction(const Tensor& loss, int64_t reduction) {
  if (reduction == Reduction::None) return loss;
  const Tensor c = loss.contiguous();
  if (c.numel() == 0) {
    return at::scalar_tensor(Scalar(reduction == Reduction::Mean ? std::nan("") : 0.0), loss.dtype(), loss.device());
  }
  // the sum lands in a float64 tensor on the loss's device (no host round trip on CUDA)
  Tensor s = at::empty({}, ScalarType::Double, c.device());
  loss_sum_stub(c.device().type, s, c, reduction == Reduction::Mean ? static_cast<double>(c.numel()) : 1.0);
  if (s.is_cpu()) return at::scalar_tensor(Scalar(s.data_ptr<double>()[0]), loss.dtype(), loss.device());
  return s.dtype() == loss.dtype() ? s : s.to(loss.dtype());
}

namespace {

const char* reduction_name(int64_t r) { return r == 0 ? "none" : (r == 1 ? "mean" : "sum"); }

void check_floating_loss(ScalarType t, const char* kernel) {
  EMBER_CHECK_NOT_IMPLEMENTED(c10::isFloatingType(t), "\"", kernel, "\" not implemented for '", c10::toString(t), "'");
}

// TensorIterator over the loss operands: broadcast, promoted to their common dtype.
TensorIterator loss_iter(const Tensor& out, std::initializer_list<Tensor> inputs, const char* name) {
  TensorIteratorConfig cfg;
  cfg.name(name)
      .add_output(out)
      .allow_cpu_scalars(true)
      .promote_inputs_to_common_dtype(true)
      .cast_common_dtype_to_outputs(true)
      .enforce_safe_casting_to_output(true)
      .promote_integer_inputs_to_float(false);
  for (const Tensor& t : inputs) cfg.add_input(t);
  return cfg.build();
}

Tensor one() { return at::wrapped_scalar_tensor(Scalar(1.0)); }

Tensor pointwise_loss(PointwiseLoss op, const char* name, const char* kernel, std::initializer_list<Tensor> inputs,
                      int64_t reduction, double p0 = 0, double p1 = 0) {
  check_reduction(reduction, name);
  auto iter = loss_iter(Tensor(), inputs, name);
  check_floating_loss(iter.common_dtype(), kernel);
  pointwise_loss_stub(iter.device_type(), iter, op, p0, p1);
  return apply_loss_reduction(iter.output(), reduction);
}

// d(loss)/d(self) = norm * f'(self, target) * grad, norm = 1/numel for a mean. grad_output
// is 0-dim for mean / sum and broadcasts like the loss for none.
double backward_norm(int64_t reduction, const Tensor& self, const Tensor& target, double factor) {
  if (reduction != Reduction::Mean) return factor;
  const DimVector shape = infer_size(self.sizes(), target.sizes(), "loss");
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n ? factor / static_cast<double>(n) : factor;
}

Tensor pointwise_loss_backward(PointwiseLoss op, const char* name, const char* kernel, const Tensor& grad_output,
                               const Tensor& self, const Tensor& target, std::initializer_list<Tensor> extra,
                               int64_t reduction, double factor, double p1 = 0) {
  check_reduction(reduction, name);
  if (reduction != Reduction::None) {
    EMBER_CHECK(grad_output.numel() == 1, name, ": grad_output must have one element for reduction='",
                reduction_name(reduction), "', but got shape ", shape_str(grad_output.sizes()));
  }
  const Tensor g = reduction == Reduction::None ? grad_output : grad_output.reshape({});
  std::vector<Tensor> ins{self, target, g};
  ins.insert(ins.end(), extra.begin(), extra.end());
  TensorIteratorConfig cfg;
  cfg.name(name)
      .add_output(Tensor())
      .allow_cpu_scalars(true)
      .promote_inputs_to_common_dtype(true)
      .cast_common_dtype_to_outputs(true);
  for (const Tensor& t : ins) cfg.add_input(t);
  auto iter = cfg.build();
  check_floating_loss(iter.common_dtype(), kernel);
  pointwise_loss_stub(iter.device_type(), iter, op, backward_norm(reduction, self, target, factor), p1);
  return iter.output();
}

}  // namespace

// ============================================================ pointwise losses

Tensor mse_loss_cpu(const Tensor& self, const Tensor& target, int64_t reduction) {
  return pointwise_loss(PointwiseLoss::MSE, "mse_loss", "mse_cpu", {self, target}, reduction);
}

Tensor mse_loss_backward_cpu(const Tensor& grad_output, const Tensor& self, const Tensor& target, int64_t reduction) {
  return pointwise_loss_backward(PointwiseLoss::MSEBackward, "mse_loss_backward", "mse_backward_cpu", grad_output, self,
                                 target, {}, reduction, 2.0);
}

Tensor smooth_l1_loss_cpu(const Tensor& self, const Tensor& target, int64_t reduction, double beta) {
  EMBER_CHECK(beta >= 0, "smooth_l1_loss does not support negative values for beta.");
  return pointwise_loss(PointwiseLoss::SmoothL1, "smooth_l1_loss", "smooth_l1_cpu", {self, target}, reduction, beta);
}

Tensor smooth_l1_loss_backward_cpu(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                                   int64_t reduction, double beta) {
  EMBER_CHECK(beta >= 0, "smooth_l1_loss does not support negative values for beta.");
  return pointwise_loss_backward(PointwiseLoss::SmoothL1Backward, "smooth_l1_loss_backward", "smooth_l1_backward_cpu",
                                 grad_output, self, target, {}, reduction, 1.0, beta);
}

Tensor huber_loss_cpu(const Tensor& self, const Tensor& target, int64_t reduction, double delta) {
  EMBER_CHECK(delta > 0, "huber_loss does not support non-positive values for delta.");
  return pointwise_loss(PointwiseLoss::Huber, "huber_loss", "huber_cpu", {self, target}, reduction, delta);
}

Tensor huber_loss_backward_cpu(const Tensor& grad_output, const Tensor& self, const Tensor& target, int64_t reduction,
                               double delta) {
  EMBER_CHECK(delta > 0, "huber_loss does not support non-positive values for delta.");
  return pointwise_loss_backward(PointwiseLoss::HuberBackward, "huber_loss_backward", "huber_backward_cpu", grad_output,
                                 self, target, {}, reduction, 1.0, delta);
}

Tensor soft_margin_loss_cpu(const Tensor& self, const Tensor& target, int64_t reduction) {
  return pointwise_loss(PointwiseLoss::SoftMargin, "soft_margin_loss", "soft_margin_cpu", {self, target}, reduction);
}

Tensor soft_margin_loss_backward_cpu(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                                     int64_t reduction) {
  return pointwise_loss_backward(PointwiseLoss::SoftMarginBackward, "soft_margin_loss_backward",
                                 "soft_margin_backward_cpu", grad_output, self, target, {}, reduction, 1.0);
}

Tensor binary_cross_entropy_cpu(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                                int64_t reduction) {
  // the input's own dtype decides (a float weight must not promote an integer input)
  check_floating_loss(self.dtype(), "binary_cross_entropy");
  const Tensor w = weight.has_value() && weight->defined() ? *weight : one();
  return pointwise_loss(PointwiseLoss::BCE, "binary_cross_entropy", "binary_cross_entropy", {self, target, w},
                        reduction);
}

Tensor binary_cross_entropy_backward_cpu(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                                         const std::optional<Tensor>& weight, int64_t reduction) {
  const Tensor w = weight.has_value() && weight->defined() ? *weight : one();
  return pointwise_loss_backward(PointwiseLoss::BCEBackward, "binary_cross_entropy_backward",
                                 "binary_cross_entropy_backward", grad_output, self, target, {w}, reduction, 1.0);
}

Tensor binary_cross_entropy_with_logits_cpu(const Tensor& self, const Tensor& target,
                                            const std::optional<Tensor>& weight,
                                            const std::optional<Tensor>& pos_weight, int64_t reduction) {
  EMBER_CHECK_VALUE(self.sizes() == target.sizes(), "Target size (", shape_str(target.sizes()),
                    ") must be the same as input size (", shape_str(self.sizes()), ")");
  check_floating_loss(self.dtype(), "binary_cross_entropy_with_logits");
  const Tensor w = weight.has_value() && weight->defined() ? *weight : one();
  const Tensor pw = pos_weight.has_value() && pos_weight->defined() ? *pos_weight : one();
  return pointwise_loss(PointwiseLoss::BCEWithLogits, "binary_cross_entropy_with_logits",
                        "binary_cross_entropy_with_logits", {self, target, pw, w}, reduction);
}

// ============================================================ nll_loss
// Input viewed as [N, C, S], target as [N, S] (nll_loss: S = 1; nll_loss2d: S = H W).
// The loss of element (n, s) is -w[t] x[n, t, s] with t = target[n, s], 0 when t is
// ignore_index; mean divides the sum by the total weight of the non-ignored targets.

namespace {

template <typename target_t>
int64_t checked_target(const target_t* tg, int64_t i, int64_t C, int64_t ignore_index) {
  const int64_t t = static_cast<int64_t>(tg[i]);
  if (t != ignore_index) EMBER_CHECK_INDEX(t >= 0 && t < C, "Target ", t, " is out of bounds.");
  return t;
}

template <typename scalar_t, typename target_t>
void nll_forward_impl(const Tensor& out, const Tensor& total_weight, const Tensor& input, const Tensor& target,
                      const Tensor& weight, int64_t reduction, int64_t ignore_index, NllGeometry g) {
  using A = opmath_t<scalar_t>;
  const scalar_t* x = input.data_ptr<scalar_t>();
  const target_t* tg = target.data_ptr<target_t>();
  const scalar_t* w = weight.defined() ? weight.data_ptr<scalar_t>() : nullptr;
  const int64_t count = g.N * g.S;
  // bounds first, so that nothing is computed from a bad target
  for (int64_t i = 0; i < count; ++i) checked_target(tg, i, g.C, ignore_index);
  auto term = [&](int64_t i, double& wt) -> double {
    const int64_t t = static_cast<int64_t>(tg[i]);
    if (t == ignore_index) {
      wt = 0;
      return 0;
    }
    const int64_t n = i / g.S, s = i % g.S;
    wt = w ? static_cast<double>(static_cast<A>(w[t])) : 1.0;
    return -wt * static_cast<double>(static_cast<A>(x[(n * g.C + t) * g.S + s]));
  };
  double sum = 0, tw = 0;
  if (reduction == Reduction::None) {
    scalar_t* o = out.data_ptr<scalar_t>();
    parallel_for(0, count, GRAIN_SIZE, [&](int64_t b, int64_t e) {
      double wt;
      for (int64_t i = b; i < e; ++i) o[i] = static_cast<scalar_t>(static_cast<A>(term(i, wt)));
    });
    for (int64_t i = 0; i < count; ++i) {
      const int64_t t = static_cast<int64_t>(tg[i]);
      if (t != ignore_index) tw += w ? static_cast<double>(static_cast<A>(w[t])) : 1.0;
    }
  } else {
    for (int64_t i = 0; i < count; ++i) {
      double wt;
      sum += term(i, wt);
      tw += wt;
    }
    const double r = reduction == Reduction::Mean ? sum / tw : sum;  // 0 / 0 = NaN when all are ignored
    out.data_ptr<scalar_t>()[0] = static_cast<scalar_t>(static_cast<A>(r));
  }
  total_weight.data_ptr<scalar_t>()[0] = static_cast<scalar_t>(static_cast<A>(tw));
}

template <typename scalar_t, typename target_t>
void nll_backward_impl(const Tensor& grad_input, const Tensor& grad_output, const Tensor& target, const Tensor& weight,
                       int64_t reduction, int64_t ignore_index, const Tensor& total_weight, NllGeometry g) {
  using A = opmath_t<scalar_t>;
  scalar_t* gi = grad_input.data_ptr<scalar_t>();
  const scalar_t* go = grad_output.data_ptr<scalar_t>();
  const target_t* tg = target.data_ptr<target_t>();
  const scalar_t* w = weight.defined() ? weight.data_ptr<scalar_t>() : nullptr;
  const int64_t count = g.N * g.S;
  for (int64_t i = 0; i < count; ++i) checked_target(tg, i, g.C, ignore_index);
  double scale = 1;
  if (reduction != Reduction::None) {
    scale = static_cast<double>(static_cast<A>(go[0]));
    if (reduction == Reduction::Mean)
      scale /= static_cast<double>(static_cast<A>(total_weight.data_ptr<scalar_t>()[0]));
  }
  parallel_for(0, count, GRAIN_SIZE, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const int64_t t = static_cast<int64_t>(tg[i]);
      if (t == ignore_index) continue;
      const int64_t n = i / g.S, s = i % g.S;
      const double wt = w ? static_cast<double>(static_cast<A>(w[t])) : 1.0;
      const double gv = reduction == Reduction::None ? static_cast<double>(static_cast<A>(go[i])) : scale;
      gi[(n * g.C + t) * g.S + s] = static_cast<scalar_t>(static_cast<A>(-wt * gv));
    }
  });
}

void check_nll_target_dtype(const Tensor& target) {
  EMBER_CHECK(target.dtype() == ScalarType::Long || target.dtype() == ScalarType::Byte,
              "expected target dtype to be Long or Byte, but got ", c10::toString(target.dtype()));
}

Tensor checked_weight(const std::optional<Tensor>& weight, int64_t C, const Tensor& self, const char* prefix = "") {
  if (!weight.has_value() || !weight->defined()) return Tensor();
  EMBER_CHECK(weight->numel() == C, prefix, "weight tensor should be defined either for all ", C,
              " classes or no classes but got weight tensor of shape: ", shape_str(weight->sizes()));
  check_same_device("nll_loss", self, *weight);
  Tensor w = weight->contiguous();
  return w.dtype() == self.dtype() ? w : w.to(self.dtype());
}

}  // namespace

Tensor nll_check_forward(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                         int64_t reduction, NllGeometry g, const char* kernel) {
  check_reduction(reduction, "nll_loss");
  check_floating_loss(self.dtype(), kernel);
  check_nll_target_dtype(target);
  check_same_device("nll_loss", self, target);
  return checked_weight(weight, g.C, self);
}

namespace {

std::tuple<Tensor, Tensor> nll_forward(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                                       int64_t reduction, int64_t ignore_index, NllGeometry g, DimVector out_shape,
                                       const char* kernel) {
  const Tensor w = nll_check_forward(self, target, weight, reduction, g, kernel);
  const Tensor x = self.contiguous(), t = target.contiguous();
  Tensor out = reduction == Reduction::None ? at::empty(out_shape, self.dtype(), self.device())
                                            : at::empty({}, self.dtype(), self.device());
  Tensor total_weight = at::empty({}, self.dtype(), self.device());
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(self.dtype(), kernel, [&] {
    if (t.dtype() == ScalarType::Long) {
      nll_forward_impl<scalar_t, int64_t>(out, total_weight, x, t, w, reduction, ignore_index, g);
    } else {
      nll_forward_impl<scalar_t, uint8_t>(out, total_weight, x, t, w, reduction, ignore_index, g);
    }
  });
  return {out, total_weight};
}

}  // namespace

Tensor nll_check_backward(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                          const std::optional<Tensor>& weight, int64_t reduction, const Tensor& total_weight,
                          NllGeometry g, IntArrayRef loss_shape, const char* kernel) {
  check_reduction(reduction, "nll_loss_backward");
  check_floating_loss(self.dtype(), kernel);
  check_nll_target_dtype(target);
  EMBER_CHECK(total_weight.numel() == 1,
              "expected total_weight to be a single element tensor, got: ", shape_str(total_weight.sizes()), " (",
              total_weight.numel(), " elements)");
  if (reduction == Reduction::None) {
    EMBER_CHECK(grad_output.sizes() == loss_shape, "nll_loss_backward: grad_output of shape ",
                shape_str(grad_output.sizes()), " does not match the loss of shape ", shape_str(loss_shape),
                " (reduction='none')");
  } else {
    EMBER_CHECK(grad_output.numel() == 1, "nll_loss_backward: grad_output must have one element for reduction='",
                reduction_name(reduction), "', but got shape ", shape_str(grad_output.sizes()));
  }
  check_same_device("nll_loss_backward", self, target);
  check_same_device("nll_loss_backward", self, grad_output);
  return checked_weight(weight, g.C, self);
}

namespace {

Tensor nll_backward(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                    const std::optional<Tensor>& weight, int64_t reduction, int64_t ignore_index,
                    const Tensor& total_weight, NllGeometry g, IntArrayRef loss_shape, const char* kernel) {
  const Tensor w =
      nll_check_backward(grad_output, self, target, weight, reduction, total_weight, g, loss_shape, kernel);
  auto same = [&](const Tensor& t) { return (t.dtype() == self.dtype() ? t : t.to(self.dtype())).contiguous(); };
  const Tensor go = same(grad_output), tw = same(total_weight), t = target.contiguous();
  Tensor grad_input = at::zeros(self.sizes(), self.dtype(), self.device());
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(self.dtype(), kernel, [&] {
    if (t.dtype() == ScalarType::Long) {
      nll_backward_impl<scalar_t, int64_t>(grad_input, go, t, w, reduction, ignore_index, tw, g);
    } else {
      nll_backward_impl<scalar_t, uint8_t>(grad_input, go, t, w, reduction, ignore_index, tw, g);
    }
  });
  return grad_input;
}

}  // namespace

// nll_loss: input (C) with a 0-dim target, or (N, C) with target (N).
NllGeometry nll_geometry(const Tensor& self, const Tensor& target) {
  EMBER_CHECK(self.dim() > 0 && self.dim() <= 2, "input tensor should be 1D or 2D");
  EMBER_CHECK(target.dim() <= 1, "0D or 1D target tensor expected, multi-target not supported");
  const bool no_batch_dim = self.dim() == 1 && target.dim() == 0;
  EMBER_CHECK(no_batch_dim || self.size(0) == target.size(0), "size mismatch (got input: ", shape_str(self.sizes()),
              ", target: ", shape_str(target.sizes()), ")");
  return {self.dim() == 2 ? self.size(0) : 1, self.size(-1), 1};
}

// nll_loss2d: input (N, C, H, W), target (N, H, W).
NllGeometry nll2d_geometry(const Tensor& self, const Tensor& target) {
  EMBER_CHECK(target.dim() == 3,
              "only batches of spatial targets supported (3D tensors) but got targets of dimension: ", target.dim());
  EMBER_CHECK(self.dim() == 4,
              "only batches of spatial inputs supported (4D tensors), but got input of dimension: ", self.dim());
  EMBER_CHECK(self.size(0) == target.size(0) && self.size(2) == target.size(1) && self.size(3) == target.size(2),
              "size mismatch (got input: ", shape_str(self.sizes()), " , target: ", shape_str(target.sizes()));
  return {self.size(0), self.size(1), self.size(2) * self.size(3)};
}

DimVector nll_loss_shape(const Tensor& self) { return self.dim() == 2 ? DimVector{self.size(0)} : DimVector{}; }

std::tuple<Tensor, Tensor> nll_loss_forward_cpu(const Tensor& self, const Tensor& target,
                                                const std::optional<Tensor>& weight, int64_t reduction,
                                                int64_t ignore_index) {
  const NllGeometry g = nll_geometry(self, target);
  return nll_forward(self, target, weight, reduction, ignore_index, g, nll_loss_shape(self), "nll_loss_out_frame");
}

Tensor nll_loss_backward_cpu(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                             const std::optional<Tensor>& weight, int64_t reduction, int64_t ignore_index,
                             const Tensor& total_weight) {
  const NllGeometry g = nll_geometry(self, target);
  return nll_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight, g, nll_loss_shape(self),
                      "nll_loss_backward_out_frame");
}

std::tuple<Tensor, Tensor> nll_loss2d_forward_cpu(const Tensor& self, const Tensor& target,
                                                  const std::optional<Tensor>& weight, int64_t reduction,
                                                  int64_t ignore_index) {
  const NllGeometry g = nll2d_geometry(self, target);
  return nll_forward(self, target, weight, reduction, ignore_index, g,
                     DimVector(target.sizes().begin(), target.sizes().end()), "nll_loss2d_forward_out_frame");
}

Tensor nll_loss2d_backward_cpu(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                               const std::optional<Tensor>& weight, int64_t reduction, int64_t ignore_index,
                               const Tensor& total_weight) {
  const NllGeometry g = nll2d_geometry(self, target);
  return nll_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight, g, target.sizes(),
                      "nll_loss2d_backward_out_frame");
}

// ============================================================ cross_entropy (fused)
// _cross_entropy_loss_forward / _backward: cross_entropy_loss with class indices over an
// (N, C) or (C) input, log_softmax and nll_loss (and label smoothing) in one pass over the
// rows each way (cpu/SoftMaxKernel.cpp), called by the cross_entropy_loss composite
// (ember/aten/native/nn_ops.py) for CPU float32 / float64 inputs. With t = target[i],
// logp = log_softmax(x[i]), ls = label_smoothing and W = sum_c w[c]:
//
//   loss[i]       = (1 - ls) w[t] (-logp[t]) + ls / C sum_c w[c] (-logp[c])   (0 if t is ignored)
//   mean          = sum_i loss[i] / total_weight,  total_weight = sum of w[t] over the kept rows
//   d loss[i]/dx  = A_i softmax(x[i]) - (1 - ls) w[t] onehot(t) - ls / C w,  A_i = (1 - ls) w[t] + ls / C W
//
// The gradient is scaled by grad_output (per row for 'none', / total_weight for 'mean').
// The second output holds each row's max and log-sum-exp (log_softmax's (x - max) - logsum),
// (N, 2) -- N = 1 for a (C) input -- so the backward recomputes the probabilities without
// storing them; at label_smoothing 0 both results are bit for bit the unfused chain's.

DEFINE_DISPATCH(cross_entropy_stub);
DEFINE_DISPATCH(cross_entropy_backward_stub);

namespace {

constexpr const char* kCrossEntropy = "_cross_entropy_loss_forward";

struct CrossEntropyArgs {
  NllGeometry g{};
  Tensor x, target, weight;  // contiguous; target int64; weight of x's dtype or undefined
  CrossEntropyRows rows;
};

CrossEntropyArgs cross_entropy_args(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                                    int64_t reduction, int64_t ignore_index, double label_smoothing, const char* op) {
  CrossEntropyArgs a;
  a.g = nll_geometry(self, target);
  a.weight = nll_check_forward(self, target, weight, reduction, a.g, op);
  EMBER_CHECK_NOT_IMPLEMENTED(self.dtype() == ScalarType::Float || self.dtype() == ScalarType::Double, op,
                              ": expected a float32 or float64 input, but got ", c10::toString(self.dtype()));
  EMBER_CHECK(self.is_cpu(), op, ": expected a CPU tensor");
  EMBER_CHECK(label_smoothing >= 0.0 && label_smoothing <= 1.0,
              "label_smoothing must be between 0.0 and 1.0. Got: ", label_smoothing);
  a.x = self.contiguous();
  a.target = target.dtype() == ScalarType::Long ? target.contiguous() : target.to(ScalarType::Long).contiguous();
  const int64_t* tg = a.target.data_ptr<int64_t>();
  for (int64_t i = 0; i < a.g.N; ++i) checked_target(tg, i, a.g.C, ignore_index);
  a.rows.N = a.g.N;
  a.rows.C = a.g.C;
  a.rows.ignore_index = ignore_index;
  a.rows.x = a.x.data_ptr();
  a.rows.target = tg;
  a.rows.weight = a.weight.defined() ? a.weight.data_ptr() : nullptr;
  return a;
}

template <typename T>
double weight_of(const CrossEntropyRows& r, int64_t t) {
  return r.weight != nullptr ? static_cast<double>(static_cast<const T*>(r.weight)[t]) : 1.0;
}

template <typename T>
double weight_sum(const CrossEntropyRows& r) {
  if (r.weight == nullptr) return static_cast<double>(r.C);
  double s = 0;
  for (int64_t c = 0; c < r.C; ++c) s += weight_of<T>(r, c);
  return s;
}

template <typename T>
void store(const Tensor& t, int64_t i, double v) {
  static_cast<T*>(t.data_ptr())[i] = static_cast<T>(v);
}

template <typename T>
double load(const Tensor& t, int64_t i) {
  return static_cast<double>(static_cast<const T*>(t.data_ptr())[i]);
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> cross_entropy_loss_forward_cpu(const Tensor& self, const Tensor& target,
                                                                  const std::optional<Tensor>& weight,
                                                                  int64_t reduction, int64_t ignore_index,
                                                                  double label_smoothing) {
  const CrossEntropyArgs a =
      cross_entropy_args(self, target, weight, reduction, ignore_index, label_smoothing, kCrossEntropy);
  const CrossEntropyRows& r = a.rows;
  const ScalarType dt = self.dtype();
  Tensor out = reduction == Reduction::None ? at::empty(nll_loss_shape(self), dt, self.device())
                                            : at::empty({}, dt, self.device());
  Tensor stats = at::empty({r.N, 2}, dt, self.device());
  Tensor total_weight = at::empty({}, dt, self.device());
  const bool smoothing = label_smoothing > 0.0;
  std::vector<double> nll(static_cast<size_t>(r.N)), smooth(smoothing ? static_cast<size_t>(r.N) : 0);
  if (r.N > 0)
    cross_entropy_stub(DeviceType::CPU, dt, r, stats.data_ptr(), nll.data(), smoothing ? smooth.data() : nullptr);
  EMBER_DISPATCH_FLOATING_TYPES(dt, kCrossEntropy, [&] {
    using T = scalar_t;
    // sums in double, in row order (as nll_loss: the result does not depend on the threads)
    double tw = 0, nll_sum = 0, smooth_sum = 0;
    for (int64_t i = 0; i < r.N; ++i) {
      if (r.target[i] == ignore_index) continue;
      tw += weight_of<T>(r, r.target[i]);
    }
    const double keep = 1.0 - label_smoothing, uni = label_smoothing / static_cast<double>(r.C);
    if (reduction == Reduction::None) {
      for (int64_t i = 0; i < r.N; ++i) store<T>(out, i, smoothing ? keep * nll[i] + uni * smooth[i] : nll[i]);
    } else {
      for (int64_t i = 0; i < r.N; ++i) nll_sum += nll[i];
      for (int64_t i = 0; i < (smoothing ? r.N : 0); ++i) smooth_sum += smooth[i];
      double v = reduction == Reduction::Mean ? nll_sum / tw : nll_sum;  // 0 / 0 = NaN when all are ignored
      if (smoothing) {
        v = v * keep + (reduction == Reduction::Mean ? smooth_sum / tw : smooth_sum) * uni;
      }
      store<T>(out, 0, v);
    }
    store<T>(total_weight, 0, tw);
  });
  return {out, stats, total_weight};
}

Tensor cross_entropy_loss_backward_cpu(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                                       const std::optional<Tensor>& weight, int64_t reduction, int64_t ignore_index,
                                       double label_smoothing, const Tensor& row_stats, const Tensor& total_weight) {
  constexpr const char* op = "_cross_entropy_loss_backward";
  const NllGeometry g = nll_geometry(self, target);
  nll_check_backward(grad_output, self, target, weight, reduction, total_weight, g, nll_loss_shape(self), op);
  const CrossEntropyArgs a = cross_entropy_args(self, target, weight, reduction, ignore_index, label_smoothing, op);
  const CrossEntropyRows& r = a.rows;
  const ScalarType dt = self.dtype();
  EMBER_CHECK(row_stats.dtype() == dt && row_stats.sizes() == IntArrayRef({r.N, 2}), op,
              ": expected row_stats of dtype ", c10::toString(dt), " and size ", shape_str({r.N, 2}), ", but got ",
              c10::toString(row_stats.dtype()), " of size ", shape_str(row_stats.sizes()));
  check_same_device(op, self, row_stats);
  const Tensor stats = row_stats.contiguous();
  const Tensor go = (grad_output.dtype() == dt ? grad_output : grad_output.to(dt)).contiguous();
  const Tensor tw_t = total_weight.dtype() == dt ? total_weight : total_weight.to(dt);
  Tensor grad = at::empty(self.sizes(), dt, self.device());
  if (grad.numel() == 0) return grad;
  std::vector<double> coef(static_cast<size_t>(r.N)), tgt(static_cast<size_t>(r.N)), uni(static_cast<size_t>(r.N));
  EMBER_DISPATCH_FLOATING_TYPES(dt, op, [&] {
    using T = scalar_t;
    double scale = 1;
    if (reduction != Reduction::None) {
      scale = load<T>(go, 0);
      if (reduction == Reduction::Mean) scale /= load<T>(tw_t, 0);
    }
    const double keep = 1.0 - label_smoothing, u = label_smoothing / static_cast<double>(r.C);
    const double wsum = label_smoothing > 0.0 ? weight_sum<T>(r) : 0.0;
    for (int64_t i = 0; i < r.N; ++i) {
      const int64_t t = r.target[i];
      const double s = reduction == Reduction::None ? load<T>(go, i) : scale;
      if (t == ignore_index) {
        coef[i] = tgt[i] = uni[i] = 0;
        continue;
      }
      const double wt = weight_of<T>(r, t);
      if (label_smoothing > 0.0) {
        coef[i] = s * (keep * wt + u * wsum);
        tgt[i] = s * keep * wt;
        uni[i] = s * u;
      } else {  // nll_loss's -w[t] * scale, then log_softmax's backward: the same roundings
        coef[i] = tgt[i] = s * wt;
        uni[i] = 0;
      }
    }
  });
  cross_entropy_backward_stub(DeviceType::CPU, dt, r, stats.data_ptr(), coef.data(), tgt.data(), uni.data(),
                              grad.data_ptr());
  return grad;
}

}  // namespace ember::at::native
