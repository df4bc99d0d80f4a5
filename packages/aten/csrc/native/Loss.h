#pragma once
// Stubs of the pointwise loss kernels (cpu/LossKernel.cpp) and the reduction helpers
// shared by Loss.cpp, LossCTC.cpp and Embedding.cpp.
#include <ember/aten/TensorIterator.h>
#include <ember/aten/native/DispatchStub.h>

namespace ember::at::native {

// PyTorch's at::Reduction: the `int reduction` argument of every loss.
enum Reduction : int64_t { None = 0, Mean = 1, Sum = 2 };
void check_reduction(int64_t reduction, const char* op);

// The elementwise part of a loss, as one TensorIterator loop. Operands (output first):
//   MSE              out, self, target                         (a - b)^2
//   MSEBackward      out, self, target, grad       p0 = norm:  norm (a - b) g
//   SmoothL1         out, self, target             p0 = beta
//   SmoothL1Backward out, self, target, grad       p0 = norm, p1 = beta
//   Huber            out, self, target             p0 = delta
//   HuberBackward    out, self, target, grad       p0 = norm, p1 = delta
//   SoftMargin       out, self, target                         log(1 + exp(-t x))
//   SoftMarginBackward out, self, target, grad     p0 = norm
//   BCE              out, self, target, weight                 -w (t log x + (1 - t) log(1 - x)), logs >= -100
//   BCEBackward      out, self, target, grad, weight  p0 = norm
//   BCEWithLogits    out, self, target, pos_weight, weight    (stable log-sum-exp form)
enum class PointwiseLoss : int {
  MSE,
  MSEBackward,
  SmoothL1,
  SmoothL1Backward,
  Huber,
  HuberBackward,
  SoftMargin,
  SoftMarginBackward,
  BCE,
  BCEBackward,
  BCEWithLogits,
};
using pointwise_loss_fn = void (*)(TensorIterator& iter, PointwiseLoss op, double p0, double p1);
DECLARE_DISPATCH(pointwise_loss_fn, pointwise_loss_stub);

// out (a 0-dim float64 tensor on t's device) = the sum of every element of the non-empty
// contiguous floating tensor t, divided by `divisor`; accumulated in double in fixed-size
// chunks (the result does not depend on the number of threads).
using loss_sum_fn = void (*)(const Tensor& out, const Tensor& t, double divisor);
DECLARE_DISPATCH(loss_sum_fn, loss_sum_stub);

// none: the tensor; mean / sum: a 0-dim tensor of its dtype (the mean of nothing is NaN).
Tensor apply_loss_reduction(const Tensor& loss, int64_t reduction);

// nll_loss / nll_loss2d (Loss.cpp, cuda/Loss.cu): input viewed as [N, C, S], target as [N, S].
struct NllGeometry {
  int64_t N, C, S;
};
NllGeometry nll_geometry(const Tensor& self, const Tensor& target);    // input (C) or (N, C)
NllGeometry nll2d_geometry(const Tensor& self, const Tensor& target);  // input (N, C, H, W)
DimVector nll_loss_shape(const Tensor& self);                          // nll_loss's reduction='none' shape
// The argument checks; return the class weights (contiguous, self's dtype) or an undefined tensor.
Tensor nll_check_forward(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                         int64_t reduction, NllGeometry g, const char* kernel);
Tensor nll_check_backward(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                          const std::optional<Tensor>& weight, int64_t reduction, const Tensor& total_weight,
                          NllGeometry g, IntArrayRef loss_shape, const char* kernel);

}  // namespace ember::at::native
