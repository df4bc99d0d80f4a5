// softmax and log_softmax over one dim (PyTorch's _softmax / _log_softmax) and their
// backward (_softmax_backward_data / _log_softmax_backward_data). The kernels are
// numerically stable: the row maximum is subtracted before exp, so +-1e4 inputs give
// finite results; a NaN in a row makes that row NaN, as in PyTorch.
//
// The public softmax(x, dim, dtype=None) / log_softmax are composites
// (ember/aten/native/nn_ops.py): cast to `dtype` first, then these kernels.
#include "SoftMax.h"

#include <ember/c10/ScalarType.h>

namespace ember::at::native {

DEFINE_DISPATCH(softmax_stub);
DEFINE_DISPATCH(softmax_backward_stub);

namespace {

struct SoftmaxGeometry {
  int64_t outer = 1, dim_size = 1, inner = 1;
};

SoftmaxGeometry geometry(IntArrayRef sizes, int64_t dim) {
  SoftmaxGeometry g;
  if (sizes.empty()) return g;  // a 0-dim tensor is one row of one element
  for (int64_t d = 0; d < dim; ++d) g.outer *= sizes[d];
  g.dim_size = sizes[dim];
  for (size_t d = dim + 1; d < sizes.size(); ++d) g.inner *= sizes[d];
  return g;
}

bool is_reduced_float(ScalarType t) { return t == ScalarType::Half || t == ScalarType::BFloat16; }

void check_floating(const Tensor& t, const char* name, bool lastdim) {
  EMBER_CHECK_NOT_IMPLEMENTED(c10::isFloatingType(t.dtype()), "\"", name,
                              lastdim ? "_lastdim_kernel_impl" : "_kernel_impl", "\" not implemented for '",
                              c10::toString(t.dtype()), "'");
}

Tensor host_softmax(const Tensor& self, int64_t dim_, bool half_to_float, bool log, const char* name) {
  // half_to_float (CUDA only, as PyTorch): a float16 input gives a float32 result
  EMBER_CHECK(!half_to_float || self.is_cuda(), "softmax with half to float conversion is not supported on CPU");
  EMBER_CHECK(!half_to_float || self.dtype() == ScalarType::Half, "conversion is supported for Half type only");
  const int64_t dim = c10::maybe_wrap_dim(dim_, self.dim());
  check_floating(self, name, self.dim() == 0 || dim == self.dim() - 1);
  if (self.numel() == 0) return at::empty(self.sizes(), self.dtype(), self.device());
  Tensor x = self.contiguous();
  if (is_reduced_float(x.dtype())) x = x.to(ScalarType::Float);
  Tensor out = at::empty(x.sizes(), x.dtype(), x.device());
  const SoftmaxGeometry g = geometry(x.sizes(), dim);
  softmax_stub(x.device().type, out, x, g.outer, g.dim_size, g.inner, log);
  return half_to_float || out.dtype() == self.dtype() ? out : out.to(self.dtype());
}

Tensor host_softmax_backward(const Tensor& grad_output, const Tensor& output, int64_t dim_, ScalarType input_dtype,
                             bool log, const char* name) {
  EMBER_CHECK(grad_output.dtype() == output.dtype(), "expected scalar type ", c10::toString(output.dtype()),
              " but found ", c10::toString(grad_output.dtype()));
  // a float32 output of a float16 input (half_to_float, CUDA only) gives a float16 gradient
  const bool half_to_float = output.is_cuda() && input_dtype == ScalarType::Half && output.dtype() == ScalarType::Float;
  EMBER_CHECK(input_dtype == output.dtype() || half_to_float, "expected scalar type ", c10::toString(output.dtype()),
              " but found ", c10::toString(input_dtype),
              " (softmax with half to float conversion is not supported on CPU)");
  EMBER_CHECK(grad_output.sizes() == output.sizes(), name, ": grad_output of shape ", shape_str(grad_output.sizes()),
              " does not match the output of shape ", shape_str(output.sizes()));
  check_same_device(name, grad_output, output);
  const int64_t dim = c10::maybe_wrap_dim(dim_, output.dim());
  check_floating(output, name, output.dim() == 0 || dim == output.dim() - 1);
  if (output.numel() == 0) return at::empty(output.sizes(), output.dtype(), output.device());
  Tensor g = grad_output.contiguous(), y = output.contiguous();
  if (is_reduced_float(y.dtype())) {
    g = g.to(ScalarType::Float);
    y = y.to(ScalarType::Float);
  }
  Tensor grad_input = at::empty(y.sizes(), y.dtype(), y.device());
  const SoftmaxGeometry geo = geometry(y.sizes(), dim);
  softmax_backward_stub(y.device().type, grad_input, g, y, geo.outer, geo.dim_size, geo.inner, log);
  return grad_input.dtype() == input_dtype ? grad_input : grad_input.to(input_dtype);
}

}  // namespace

Tensor softmax_cpu(const Tensor& self, int64_t dim, bool half_to_float) {
  return host_softmax(self, dim, half_to_float, /*log=*/false, "softmax");
}

Tensor log_softmax_cpu(const Tensor& self, int64_t dim, bool half_to_float) {
  return host_softmax(self, dim, half_to_float, /*log=*/true, "log_softmax");
}

Tensor softmax_backward_cpu(const Tensor& grad_output, const Tensor& output, int64_t dim, ScalarType input_dtype) {
  return host_softmax_backward(grad_output, output, dim, input_dtype, /*log=*/false, "softmax_backward");
}

Tensor log_softmax_backward_cpu(const Tensor& grad_output, const Tensor& output, int64_t dim, ScalarType input_dtype) {
  return host_softmax_backward(grad_output, output, dim, input_dtype, /*log=*/true, "log_softmax_backward");
}

}  // namespace ember::at::native
