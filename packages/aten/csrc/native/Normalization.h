#pragma once
// Stubs of the normalization kernels (cpu/NormalizationKernel.cpp): batch, layer,
// group and RMS norm. Every tensor a stub sees is contiguous and float32 or float64
// (float16 / bfloat16 inputs are computed in float32 by Normalization.cpp).
//
// Channel layout [N, C, S] (batch norm; group norm as [1, N*C, S]): per-channel sums
// go to double arrays of C entries, and the elementwise passes take per-channel
// coefficients as double arrays.
// Row layout [M, D] (layer norm, RMS norm; group norm's statistics as [N*G, C/G*S]):
// one row is normalised at a time, in cache.
#include <initializer_list>
#include <optional>

#include <ember/aten/Tensor.h>
#include <ember/aten/native/DispatchStub.h>

namespace ember::at::native {

// mean[c] and biased var[c] of x[:, c, :] (two passes: the var is a sum of squares
// about the mean, so large offsets do not cancel).
using channel_mean_var_fn = void (*)(const Tensor& x, int64_t N, int64_t C, int64_t S, double* mean, double* var);
// out[n, c, s] = x[n, c, s] * alpha[c] + beta[c]
using channel_affine_fn = void (*)(const Tensor& out, const Tensor& x, int64_t N, int64_t C, int64_t S,
                                   const double* alpha, const double* beta);
// sum_g[c] = sum of g[:, c, :]; dot[c] = sum of (x - mean[c]) * g over [:, c, :]
using channel_backward_reduce_fn = void (*)(const Tensor& g, const Tensor& x, int64_t N, int64_t C, int64_t S,
                                            const double* mean, double* sum_g, double* dot);
// out = g * A[c] + x * B[c] + K[c]
using channel_affine2_fn = void (*)(const Tensor& out, const Tensor& g, const Tensor& x, int64_t N, int64_t C,
                                    int64_t S, const double* A, const double* B, const double* K);

// Rows of x [M, D]: mean (0 when rms) and rstd = 1 / sqrt(var + eps) (var: the mean
// square when rms) into mean / rstd (M values, x's dtype; mean undefined when rms);
// when `out` is defined also out = (x - mean) * rstd * w + b (w, b: D values or undefined).
using row_norm_fn = void (*)(const Tensor& out, const Tensor& mean, const Tensor& rstd, const Tensor& x,
                             const Tensor& w, const Tensor& b, int64_t M, int64_t D, double eps, bool rms);
// Backward of row_norm: gi (if defined) = d/dx; gw, gb (if defined) = column sums of
// g * xhat and g. mean is undefined when rms.
using row_norm_backward_fn = void (*)(const Tensor& gi, const Tensor& gw, const Tensor& gb, const Tensor& g,
                                      const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w,
                                      int64_t M, int64_t D, bool rms);

// Argument checks and dtype rules shared by Normalization.cpp and cuda/Normalization.cu.
namespace norm {
bool is_reduced_float(ScalarType t);
ScalarType compute_dtype(ScalarType t);  // float32 for float16 / bfloat16, else t
Tensor opt(const std::optional<Tensor>& t);
void check_floating(const Tensor& input, const char* kernel);
// The parameters' dtype: the input's, or float32 beside a float16 / bfloat16 input.
ScalarType param_dtype(const Tensor& input, std::initializer_list<const Tensor*> params);
Tensor as_compute(const Tensor& x, ScalarType t);  // contiguous, in dtype t
Tensor cast_to(const Tensor& t, ScalarType dtype);

// [N, C, S] with the compute dtype ct and the parameters' dtype pt.
struct ChannelShape {
  int64_t N, C, S;
  ScalarType ct, pt;
};
ChannelShape check_batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                              const Tensor& running_var, bool training);
ChannelShape check_batch_norm_backward(const Tensor& grad_out, const Tensor& input, const Tensor& weight,
                                       const Tensor& running_mean, const Tensor& running_var, const Tensor& save_mean,
                                       const Tensor& save_invstd, bool train);
void check_group_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, int64_t N, int64_t C, int64_t HxW,
                      int64_t group);
}  // namespace norm

DECLARE_DISPATCH(channel_mean_var_fn, channel_mean_var_stub);
DECLARE_DISPATCH(channel_affine_fn, channel_affine_stub);
DECLARE_DISPATCH(channel_backward_reduce_fn, channel_backward_reduce_stub);
DECLARE_DISPATCH(channel_affine2_fn, channel_affine2_stub);
DECLARE_DISPATCH(row_norm_fn, row_norm_stub);
DECLARE_DISPATCH(row_norm_backward_fn, row_norm_backward_stub);

}  // namespace ember::at::native
