// Batch, layer, group and RMS normalization: forward and backward (PyTorch's
// native_batch_norm, native_layer_norm, native_group_norm, _fused_rms_norm and their
// *_backward). The composites on top (batch_norm, instance_norm, layer_norm,
// group_norm, rms_norm) are in ember/aten/native/nn_ops.py.
//
// Dtypes (PyTorch's CPU rules): float32 / float64 compute in their own type, float16 /
// bfloat16 in float32 (rounded once on the way out). Parameters (weight, bias, running
// stats) have the input's dtype, or float32 for a float16 / bfloat16 input ("mixed
// type"); the saved statistics take the parameters' dtype.
//
// Batch norm in training normalises with the biased variance and updates the running
// statistics in place with the unbiased one:
//     running_mean = (1 - momentum) running_mean + momentum mean
//     running_var  = (1 - momentum) running_var  + momentum var n / (n - 1)
// (written by the kernel, not an autograd-visible in-place op: their version counters do
// not move, as in PyTorch) and returns save_mean = mean, save_invstd = 1 / sqrt(var + eps); in evaluation it
// normalises with the running statistics and returns empty save_mean / save_invstd.
#include "Normalization.h"

#include <cmath>
#include <limits>
#include <vector>

#include <ember/c10/ScalarType.h>

namespace ember::at::native {

DEFINE_DISPATCH(channel_mean_var_stub);
DEFINE_DISPATCH(channel_affine_stub);
DEFINE_DISPATCH(channel_backward_reduce_stub);
DEFINE_DISPATCH(channel_affine2_stub);
DEFINE_DISPATCH(row_norm_stub);
DEFINE_DISPATCH(row_norm_backward_stub);

namespace norm {

bool is_reduced_float(ScalarType t) { return t == ScalarType::Half || t == ScalarType::BFloat16; }

// float32 for float16 / bfloat16, else the dtype itself
ScalarType compute_dtype(ScalarType t) { return is_reduced_float(t) ? ScalarType::Float : t; }

Tensor opt(const std::optional<Tensor>& t) { return t.has_value() ? *t : Tensor(); }

void check_floating(const Tensor& input, const char* kernel) {
  EMBER_CHECK_NOT_IMPLEMENTED(c10::isFloatingType(input.dtype()), "\"", kernel, "\" not implemented for '",
                              c10::toString(input.dtype()), "'");
}

// The parameters' dtype: the input's, or float32 beside a float16 / bfloat16 input.
ScalarType param_dtype(const Tensor& input, std::initializer_list<const Tensor*> params) {
  std::optional<ScalarType> pt;
  for (const Tensor* p : params) {
    if (!p->defined()) continue;
    if (!pt) pt = p->dtype();
    EMBER_CHECK(p->dtype() == *pt, "mixed dtype (CPU): all inputs must share same datatype.");
  }
  if (!pt) return input.dtype();
  EMBER_CHECK(*pt == input.dtype() || (is_reduced_float(input.dtype()) && *pt == ScalarType::Float),
              "mixed dtype (CPU): all inputs must share same datatype.");
  return *pt;
}

// Contiguous, in dtype t.
Tensor as_compute(const Tensor& x, ScalarType t) {
  Tensor c = x.contiguous();
  return c.dtype() == t ? c : c.to(t);
}

Tensor cast_to(const Tensor& t, ScalarType dtype) { return t.dtype() == dtype ? t : t.to(dtype); }

}  // namespace norm

namespace {

using namespace norm;
using Tensors3 = std::tuple<Tensor, Tensor, Tensor>;

std::vector<double> doubles(const Tensor& t) {
  const Tensor d = as_compute(t, ScalarType::Double);
  const double* p = d.data_ptr<double>();
  return std::vector<double>(p, p + d.numel());
}

Tensor from_doubles(const std::vector<double>& v, ScalarType t, Device device) {
  Tensor d = at::empty({static_cast<int64_t>(v.size())}, ScalarType::Double, device);
  double* p = d.data_ptr<double>();
  for (size_t i = 0; i < v.size(); ++i) p[i] = v[i];
  return t == ScalarType::Double ? d : d.to(t);
}

void check_channels(const Tensor& t, const char* what, int64_t C) {
  if (t.defined()) {
    EMBER_CHECK(t.numel() == C, what, " should contain ", C, " elements not ", t.numel());
  }
}

int64_t prod(IntArrayRef s, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= s[i];
  return p;
}

// Checks normalized_shape / weight / bias of layer_norm and rms_norm; returns the first normalised dim.
int64_t check_layer_norm_inputs(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight,
                                const Tensor& bias, bool rms) {
  const int64_t nd = static_cast<int64_t>(normalized_shape.size());
  EMBER_CHECK(nd >= 1,
              "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one element, "
              "but got normalized_shape = ",
              shape_str(normalized_shape));
  EMBER_CHECK(!weight.defined() || weight.sizes() == normalized_shape,
              "Expected weight to be of same shape as normalized_shape, but got weight of shape ",
              shape_str(weight.defined() ? weight.sizes() : IntArrayRef()),
              " and normalized_shape = ", shape_str(normalized_shape));
  EMBER_CHECK(!bias.defined() || bias.sizes() == normalized_shape,
              "Expected bias to be of same shape as normalized_shape, but got bias of shape ",
              shape_str(bias.defined() ? bias.sizes() : IntArrayRef()),
              " and normalized_shape = ", shape_str(normalized_shape));
  const int64_t axis = input.dim() - nd;
  bool ok = axis >= 0;
  for (int64_t i = 0; ok && i < nd; ++i) ok = input.size(axis + i) == normalized_shape[i];
  if (!ok) {
    std::string expected;
    for (int64_t i = 0; i < nd; ++i) expected += (i ? ", " : "") + std::to_string(normalized_shape[i]);
    EMBER_CHECK(false, "Given normalized_shape=", shape_str(normalized_shape), ", expected input with shape [*",
                rms ? "" : ", ", expected, "], but got input of size", shape_str(input.sizes()));
  }
  return axis;
}

DimVector stat_shape(IntArrayRef sizes, int64_t axis) {
  DimVector s(sizes.begin(), sizes.begin() + axis);
  for (size_t i = axis; i < sizes.size(); ++i) s.push_back(1);
  return s;
}

}  // namespace

// ============================================================ batch norm

norm::ChannelShape norm::check_batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                          const Tensor& running_mean, const Tensor& running_var, bool training) {
  check_floating(input, "batch_norm");
  const int64_t C = input.size(1);
  EMBER_CHECK(input.numel() > 0,
              "input tensor must have at least one element, but got input_sizes = ", shape_str(input.sizes()));
  EMBER_CHECK_VALUE(running_mean.defined() == running_var.defined(),
                    "running_mean and running_var must either both be None or neither be None");
  EMBER_CHECK(training || running_mean.defined(), "running_mean must be defined in evaluation mode");
  check_channels(weight, "weight", C);
  check_channels(bias, "bias", C);
  check_channels(running_mean, "running_mean", C);
  check_channels(running_var, "running_var", C);
  const ScalarType pt = param_dtype(input, {&weight, &bias, &running_mean, &running_var});
  const ScalarType ct = compute_dtype(input.dtype());
  const int64_t N = input.size(0), S = input.numel() / (N * C);
  return {N, C, S, ct, pt};
}

Tensors3 batch_norm_cpu(const Tensor& input, const std::optional<Tensor>& weight_opt,
                        const std::optional<Tensor>& bias_opt, const std::optional<Tensor>& running_mean_opt,
                        const std::optional<Tensor>& running_var_opt, bool training, double momentum, double eps) {
  const Tensor weight = opt(weight_opt), bias = opt(bias_opt);
  const Tensor running_mean = opt(running_mean_opt), running_var = opt(running_var_opt);
  const auto [N, C, S, ct, pt] = check_batch_norm(input, weight, bias, running_mean, running_var, training);
  const Tensor x = as_compute(input, ct);

  std::vector<double> mean(C), var(C), invstd(C);
  if (training) {
    channel_mean_var_stub(x.device().type, x, N, C, S, mean.data(), var.data());
    for (int64_t c = 0; c < C; ++c) invstd[c] = 1.0 / std::sqrt(var[c] + eps);
    if (running_mean.defined()) {
      const double n = static_cast<double>(N * S);
      std::vector<double> rm = doubles(running_mean), rv = doubles(running_var);
      for (int64_t c = 0; c < C; ++c) {
        rm[c] = (1 - momentum) * rm[c] + momentum * mean[c];
        rv[c] = (1 - momentum) * rv[c] + momentum * var[c] * n / (n - 1);
      }
      running_mean.copy_(from_doubles(rm, running_mean.dtype(), running_mean.device()).reshape(running_mean.sizes()));
      running_var.copy_(from_doubles(rv, running_var.dtype(), running_var.device()).reshape(running_var.sizes()));
    }
  } else {
    mean = doubles(running_mean);
    var = doubles(running_var);
    for (int64_t c = 0; c < C; ++c) invstd[c] = 1.0 / std::sqrt(var[c] + eps);
  }
  std::vector<double> alpha(C), beta(C);
  const std::vector<double> w = weight.defined() ? doubles(weight) : std::vector<double>(C, 1.0);
  const std::vector<double> b = bias.defined() ? doubles(bias) : std::vector<double>(C, 0.0);
  for (int64_t c = 0; c < C; ++c) {
    alpha[c] = invstd[c] * w[c];
    beta[c] = b[c] - mean[c] * alpha[c];
  }
  Tensor out = at::empty(x.sizes(), ct, x.device());
  channel_affine_stub(x.device().type, out, x, N, C, S, alpha.data(), beta.data());
  out = cast_to(out, input.dtype());
  if (!training) return {out, at::empty({0}, pt, input.device()), at::empty({0}, pt, input.device())};
  return {out, from_doubles(mean, pt, input.device()), from_doubles(invstd, pt, input.device())};
}

norm::ChannelShape norm::check_batch_norm_backward(const Tensor& grad_out, const Tensor& input, const Tensor& weight,
                                                   const Tensor& running_mean, const Tensor& running_var,
                                                   const Tensor& save_mean, const Tensor& save_invstd, bool train) {
  check_floating(input, "batch_norm_backward");
  EMBER_CHECK(grad_out.sizes() == input.sizes(), "batch_norm_backward: grad_out of shape ", shape_str(grad_out.sizes()),
              " does not match the input of shape ", shape_str(input.sizes()));
  const int64_t C = input.size(1);
  const int64_t N = input.size(0), S = N * C == 0 ? 0 : input.numel() / (N * C);
  check_channels(weight, "weight", C);
  const ScalarType ct = compute_dtype(input.dtype());
  const ScalarType pt = weight.defined()
                            ? weight.dtype()
                            : (save_mean.defined() && save_mean.numel() ? save_mean.dtype() : input.dtype());
  if (train) {
    EMBER_CHECK(save_mean.defined() && save_invstd.defined() && save_mean.numel() == C && save_invstd.numel() == C,
                "batch_norm_backward: training mode needs save_mean and save_invstd of ", C, " elements");
  } else {
    EMBER_CHECK(running_mean.defined() && running_var.defined(),
                "batch_norm_backward: evaluation mode needs running_mean and running_var");
    check_channels(running_mean, "running_mean", C);
    check_channels(running_var, "running_var", C);
  }
  return {N, C, S, ct, pt};
}

Tensors3 batch_norm_backward_cpu(const Tensor& grad_out, const Tensor& input, const std::optional<Tensor>& weight_opt,
                                 const std::optional<Tensor>& running_mean_opt,
                                 const std::optional<Tensor>& running_var_opt,
                                 const std::optional<Tensor>& save_mean_opt,
                                 const std::optional<Tensor>& save_invstd_opt, bool train, double eps,
                                 const std::vector<bool>& output_mask) {
  const Tensor weight = opt(weight_opt), running_mean = opt(running_mean_opt), running_var = opt(running_var_opt);
  const Tensor save_mean = opt(save_mean_opt), save_invstd = opt(save_invstd_opt);
  const auto [N, C, S, ct, pt] =
      check_batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean, save_invstd, train);
  std::vector<double> mean, invstd(C);
  if (train) {
    mean = doubles(save_mean);
    invstd = doubles(save_invstd);
  } else {
    mean = doubles(running_mean);
    const std::vector<double> v = doubles(running_var);
    for (int64_t c = 0; c < C; ++c) invstd[c] = 1.0 / std::sqrt(v[c] + eps);
  }
  const std::vector<double> w = weight.defined() ? doubles(weight) : std::vector<double>(C, 1.0);
  const Tensor x = as_compute(input, ct), g = as_compute(grad_out, ct);
  std::vector<double> sum_g(C, 0.0), dot(C, 0.0);
  if (input.numel() > 0 && (output_mask[1] || output_mask[2] || (output_mask[0] && train))) {
    channel_backward_reduce_stub(x.device().type, g, x, N, C, S, mean.data(), sum_g.data(), dot.data());
  }
  Tensor gi, gw, gb;
  if (output_mask[0]) {
    std::vector<double> A(C), B(C, 0.0), K(C, 0.0);
    const double n = static_cast<double>(N * S);
    for (int64_t c = 0; c < C; ++c) {
      A[c] = invstd[c] * w[c];
      if (train) {
        // (g - sum_g / n - (x - mean) invstd^2 dot / n) invstd w
        B[c] = -invstd[c] * invstd[c] * dot[c] / n * A[c];
        K[c] = -sum_g[c] / n * A[c] - mean[c] * B[c];
      }
    }
    gi = at::empty(x.sizes(), ct, x.device());
    if (input.numel() > 0) channel_affine2_stub(x.device().type, gi, g, x, N, C, S, A.data(), B.data(), K.data());
    gi = cast_to(gi, input.dtype());
  }
  if (output_mask[1]) {
    std::vector<double> v(C);
    for (int64_t c = 0; c < C; ++c) v[c] = dot[c] * invstd[c];
    gw = from_doubles(v, pt, input.device());
  }
  if (output_mask[2]) gb = from_doubles(sum_g, pt, input.device());
  return {gi, gw, gb};
}

// ============================================================ layer norm

Tensors3 layer_norm_cpu(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight_opt,
                        const std::optional<Tensor>& bias_opt, double eps) {
  const Tensor weight = opt(weight_opt), bias = opt(bias_opt);
  const int64_t axis = check_layer_norm_inputs(input, normalized_shape, weight, bias, false);
  check_floating(input, "LayerNormKernelImpl");
  const ScalarType pt = param_dtype(input, {&weight, &bias});
  const ScalarType ct = compute_dtype(input.dtype());
  const int64_t M = prod(input.sizes(), 0, axis), D = prod(input.sizes(), axis, input.dim());
  const Tensor x = as_compute(input, ct);
  Tensor out = at::empty(x.sizes(), ct, x.device());
  Tensor mean = at::empty({M}, ct, x.device()), rstd = at::empty({M}, ct, x.device());
  if (M > 0 && D > 0) {
    row_norm_stub(x.device().type, out, mean, rstd, x, weight.defined() ? as_compute(weight, ct) : Tensor(),
                  bias.defined() ? as_compute(bias, ct) : Tensor(), M, D, eps, false);
  } else if (M > 0) {
    mean.fill_(Scalar(std::numeric_limits<double>::quiet_NaN()));
    rstd.fill_(Scalar(std::numeric_limits<double>::quiet_NaN()));
  }
  const DimVector ss = stat_shape(input.sizes(), axis);
  return {cast_to(out, input.dtype()), cast_to(mean, pt).view(ss), cast_to(rstd, pt).view(ss)};
}

Tensors3 layer_norm_backward_cpu(const Tensor& grad_out, const Tensor& input, IntArrayRef normalized_shape,
                                 const Tensor& mean, const Tensor& rstd, const std::optional<Tensor>& weight_opt,
                                 const std::optional<Tensor>& bias_opt, const std::vector<bool>& output_mask) {
  const Tensor weight = opt(weight_opt), bias = opt(bias_opt);
  const int64_t axis = check_layer_norm_inputs(input, normalized_shape, weight, bias, false);
  check_floating(input, "LayerNormBackwardKernelImpl");
  EMBER_CHECK(grad_out.sizes() == input.sizes(), "layer_norm_backward: grad_out of shape ", shape_str(grad_out.sizes()),
              " does not match the input of shape ", shape_str(input.sizes()));
  const ScalarType ct = compute_dtype(input.dtype());
  const int64_t M = prod(input.sizes(), 0, axis), D = prod(input.sizes(), axis, input.dim());
  EMBER_CHECK(mean.numel() == M && rstd.numel() == M, "layer_norm_backward: mean and rstd must have ", M,
              " elements, but got ", mean.numel(), " and ", rstd.numel());
  const Tensor x = as_compute(input, ct), g = as_compute(grad_out, ct);
  Tensor gi = output_mask[0] ? at::empty(x.sizes(), ct, x.device()) : Tensor();
  Tensor gw = output_mask[1] && weight.defined() ? at::zeros({D}, ct, x.device()) : Tensor();
  Tensor gb = output_mask[2] && bias.defined() ? at::zeros({D}, ct, x.device()) : Tensor();
  if (M > 0 && D > 0) {
    row_norm_backward_stub(x.device().type, gi, gw, gb, g, x, as_compute(mean, ct), as_compute(rstd, ct),
                           weight.defined() ? as_compute(weight, ct) : Tensor(), M, D, false);
  }
  if (gi.defined()) gi = cast_to(gi, input.dtype());
  if (gw.defined()) gw = cast_to(gw, weight.dtype()).view(weight.sizes());
  if (gb.defined()) gb = cast_to(gb, bias.dtype()).view(bias.sizes());
  return {gi, gw, gb};
}

// ============================================================ RMS norm

std::tuple<Tensor, Tensor> fused_rms_norm_cpu(const Tensor& input, IntArrayRef normalized_shape,
                                              const std::optional<Tensor>& weight_opt, std::optional<double> eps) {
  const Tensor weight = opt(weight_opt);
  const int64_t axis = check_layer_norm_inputs(input, normalized_shape, weight, Tensor(), true);
  check_floating(input, "rms_norm");
  param_dtype(input, {&weight});
  const ScalarType ct = compute_dtype(input.dtype());
  // eps=None: the machine epsilon of the type the kernel computes in (float32 for float16 input)
  const double e = eps.has_value()
                       ? *eps
                       : (ct == ScalarType::Double ? std::numeric_limits<double>::epsilon()
                                                   : static_cast<double>(std::numeric_limits<float>::epsilon()));
  const int64_t M = prod(input.sizes(), 0, axis), D = prod(input.sizes(), axis, input.dim());
  const Tensor x = as_compute(input, ct);
  Tensor out = at::empty(x.sizes(), ct, x.device());
  Tensor rstd = at::empty({M}, ct, x.device());
  if (M > 0 && D > 0) {
    row_norm_stub(x.device().type, out, Tensor(), rstd, x, weight.defined() ? as_compute(weight, ct) : Tensor(),
                  Tensor(), M, D, e, true);
  } else if (M > 0) {
    rstd.fill_(Scalar(std::numeric_limits<double>::quiet_NaN()));
  }
  return {cast_to(out, input.dtype()), rstd.view(stat_shape(input.sizes(), axis))};
}

std::tuple<Tensor, Tensor> fused_rms_norm_backward_cpu(const Tensor& grad_out, const Tensor& input,
                                                       IntArrayRef normalized_shape, const Tensor& rstd,
                                                       const std::optional<Tensor>& weight_opt,
                                                       const std::vector<bool>& output_mask) {
  const Tensor weight = opt(weight_opt);
  const int64_t axis = check_layer_norm_inputs(input, normalized_shape, weight, Tensor(), true);
  check_floating(input, "rms_norm_backward");
  EMBER_CHECK(grad_out.sizes() == input.sizes(), "rms_norm_backward: grad_out of shape ", shape_str(grad_out.sizes()),
              " does not match the input of shape ", shape_str(input.sizes()));
  const ScalarType ct = compute_dtype(input.dtype());
  const int64_t M = prod(input.sizes(), 0, axis), D = prod(input.sizes(), axis, input.dim());
  EMBER_CHECK(rstd.numel() == M, "rms_norm_backward: rstd must have ", M, " elements, but got ", rstd.numel());
  const Tensor x = as_compute(input, ct), g = as_compute(grad_out, ct);
  Tensor gi = output_mask[0] ? at::empty(x.sizes(), ct, x.device()) : Tensor();
  Tensor gw = output_mask[1] && weight.defined() ? at::zeros({D}, ct, x.device()) : Tensor();
  if (M > 0 && D > 0) {
    row_norm_backward_stub(x.device().type, gi, gw, Tensor(), g, x, Tensor(), as_compute(rstd, ct),
                           weight.defined() ? as_compute(weight, ct) : Tensor(), M, D, true);
  }
  if (gi.defined()) gi = cast_to(gi, input.dtype());
  if (gw.defined()) gw = cast_to(gw, weight.dtype()).view(weight.sizes());
  return {gi, gw};
}

// ============================================================ group norm

void norm::check_group_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, int64_t N, int64_t C,
                            int64_t HxW, int64_t group) {
  EMBER_CHECK(group > 0, "Expected num_groups to be positive, but got num_groups=", group);
  EMBER_CHECK(C % group == 0,
              "Expected number of channels in input to be divisible by num_groups, but got input of shape ",
              shape_str(input.sizes()), " and num_groups=", group);
  EMBER_CHECK(input.numel() == N * C * HxW, "native_group_norm: input of shape ", shape_str(input.sizes()),
              " does not have N * C * HxW = ", N, " * ", C, " * ", HxW, " elements");
  EMBER_CHECK(
      !weight.defined() || (weight.dim() == 1 && weight.numel() == C),
      "Expected weight to be a vector of size equal to the number of channels in input, but got weight of shape ",
      shape_str(weight.defined() ? weight.sizes() : IntArrayRef()), " and input of shape ", shape_str(input.sizes()));
  EMBER_CHECK(!bias.defined() || (bias.dim() == 1 && bias.numel() == C),
              "Expected bias to be a vector of size equal to the number of channels in input, but got bias of shape ",
              shape_str(bias.defined() ? bias.sizes() : IntArrayRef()), " and input of shape ",
              shape_str(input.sizes()));
}

Tensors3 group_norm_cpu(const Tensor& input, const std::optional<Tensor>& weight_opt,
                        const std::optional<Tensor>& bias_opt, int64_t N, int64_t C, int64_t HxW, int64_t group,
                        double eps) {
  const Tensor weight = opt(weight_opt), bias = opt(bias_opt);
  check_floating(input, "GroupNormKernelImpl");
  check_group_norm(input, weight, bias, N, C, HxW, group);
  const ScalarType pt = param_dtype(input, {&weight, &bias});
  const ScalarType ct = compute_dtype(input.dtype());
  const int64_t G = group, D = C / G * HxW;
  const Tensor x = as_compute(input, ct);
  Tensor out = at::empty(x.sizes(), ct, x.device());
  Tensor mean = at::empty({N, G}, ct, x.device()), rstd = at::empty({N, G}, ct, x.device());
  if (N > 0 && D > 0) {
    row_norm_stub(x.device().type, Tensor(), mean, rstd, x, Tensor(), Tensor(), N * G, D, eps, false);
    const std::vector<double> m = doubles(mean), r = doubles(rstd);
    const std::vector<double> w = weight.defined() ? doubles(weight) : std::vector<double>(C, 1.0);
    const std::vector<double> b = bias.defined() ? doubles(bias) : std::vector<double>(C, 0.0);
    std::vector<double> alpha(N * C), beta(N * C);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c) {
        const int64_t ng = n * G + c / (C / G);
        alpha[n * C + c] = r[ng] * w[c];
        beta[n * C + c] = b[c] - m[ng] * alpha[n * C + c];
      }
    channel_affine_stub(x.device().type, out, x, 1, N * C, HxW, alpha.data(), beta.data());
  } else if (N > 0) {
    mean.fill_(Scalar(std::numeric_limits<double>::quiet_NaN()));
    rstd.fill_(Scalar(std::numeric_limits<double>::quiet_NaN()));
  }
  return {cast_to(out, input.dtype()), cast_to(mean, pt), cast_to(rstd, pt)};
}

Tensors3 group_norm_backward_cpu(const Tensor& grad_out, const Tensor& input, const Tensor& mean, const Tensor& rstd,
                                 const std::optional<Tensor>& weight_opt, int64_t N, int64_t C, int64_t HxW,
                                 int64_t group, const std::vector<bool>& output_mask) {
  const Tensor weight = opt(weight_opt);
  check_floating(input, "GroupNormBackwardKernelImpl");
  check_group_norm(input, weight, Tensor(), N, C, HxW, group);
  EMBER_CHECK(grad_out.sizes() == input.sizes(), "group_norm_backward: grad_out of shape ", shape_str(grad_out.sizes()),
              " does not match the input of shape ", shape_str(input.sizes()));
  const int64_t G = group, cpg = C / G;
  EMBER_CHECK(mean.numel() == N * G && rstd.numel() == N * G, "group_norm_backward: mean and rstd must have ", N * G,
              " elements");
  const ScalarType ct = compute_dtype(input.dtype());
  const ScalarType pt = weight.defined() ? weight.dtype() : mean.dtype();
  const Tensor x = as_compute(input, ct), g = as_compute(grad_out, ct);
  const std::vector<double> m = doubles(mean), r = doubles(rstd);
  const std::vector<double> w = weight.defined() ? doubles(weight) : std::vector<double>(C, 1.0);
  // per (n, c): db = sum of g, ds = sum of x g
  std::vector<double> zeros(N * C, 0.0), db(N * C, 0.0), ds(N * C, 0.0);
  if (input.numel() > 0) {
    channel_backward_reduce_stub(x.device().type, g, x, 1, N * C, HxW, zeros.data(), db.data(), ds.data());
  }
  Tensor gi, gw, gb;
  if (output_mask[0]) {
    const double Mg = static_cast<double>(cpg * HxW);
    std::vector<double> A(N * C), B(N * C), K(N * C);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t gr = 0; gr < G; ++gr) {
        const int64_t ng = n * G + gr;
        double s1 = 0, s2 = 0;  // sum of w g, sum of w g x over the group
        for (int64_t c = gr * cpg; c < (gr + 1) * cpg; ++c) {
          s1 += w[c] * db[n * C + c];
          s2 += w[c] * ds[n * C + c];
        }
        const double rs = r[ng], mu = m[ng];
        const double b = -rs * rs * rs / Mg * (s2 - mu * s1);
        const double k = -rs / Mg * s1 - mu * b;
        for (int64_t c = gr * cpg; c < (gr + 1) * cpg; ++c) {
          A[n * C + c] = rs * w[c];
          B[n * C + c] = b;
          K[n * C + c] = k;
        }
      }
    gi = at::empty(x.sizes(), ct, x.device());
    if (input.numel() > 0) channel_affine2_stub(x.device().type, gi, g, x, 1, N * C, HxW, A.data(), B.data(), K.data());
    gi = cast_to(gi, input.dtype());
  }
  if (output_mask[1]) {
    std::vector<double> v(C, 0.0);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c) {
        const int64_t ng = n * G + c / cpg;
        v[c] += (ds[n * C + c] - m[ng] * db[n * C + c]) * r[ng];
      }
    gw = from_doubles(v, pt, input.device());
  }
  if (output_mask[2]) {
    std::vector<double> v(C, 0.0);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c) v[c] += db[n * C + c];
    gb = from_doubles(v, pt, input.device());
  }
  return {gi, gw, gb};
}

}  // namespace ember::at::native
