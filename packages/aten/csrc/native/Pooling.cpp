// Pooling operators: argument checks (PyTorch's, in its order), output shapes, dtype and
// memory-format handling around the kernels of cpu/PoolingKernel.cpp and cuda/Pooling.cu
// (see Pooling.h): the `*_cpu` operators serve both devices (nothing here touches data).
// The 1-d variants and the public front ends (max_pool2d, adaptive_avg_pool2d, ...)
// are Python composites over these (ember/aten/native/conv.py).
#include "Pooling.h"

#include <string>
#include <tuple>

#include <ember/c10/DeviceGuard.h>

#include "Im2Col.h"  // nn_compute_type, check_floating, suggest_memory_format

namespace ember::at::native {

DEFINE_DISPATCH(max_pool_stub);
DEFINE_DISPATCH(avg_pool_stub);
DEFINE_DISPATCH(avg_pool_backward_stub);
DEFINE_DISPATCH(adaptive_avg_pool_stub);
DEFINE_DISPATCH(adaptive_avg_pool_backward_stub);
DEFINE_DISPATCH(adaptive_max_pool_stub);
DEFINE_DISPATCH(pool_scatter_stub);

namespace {

int64_t div_rtn(int64_t a, int64_t b) {  // division rounding toward negative infinity
  int64_t q = a / b;
  const int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) --q;
  return q;
}

// PyTorch's pooling_output_shape, with its checks.
int64_t pooling_output_shape(int64_t in, int64_t k, int64_t pad, int64_t s, int64_t dil, bool ceil_mode) {
  EMBER_CHECK(s != 0, "stride should not be zero");
  EMBER_CHECK(pad >= 0, "pad must be non-negative, but got pad: ", pad);
  EMBER_CHECK(pad <= ((k - 1) * dil + 1) / 2, "pad should be at most half of effective kernel size, but got pad=", pad,
              ", kernel_size=", k, " and dilation=", dil);
  int64_t out = div_rtn(in + 2 * pad - dil * (k - 1) - 1 + (ceil_mode ? s - 1 : 0), s) + 1;
  // with ceil_mode the last window must start inside the input or its left padding
  if (ceil_mode && (out - 1) * s >= in + pad) --out;
  return out;
}

const char* count_word(int n) { return n == 2 ? "two" : "three"; }

// An int[n] argument given as one int, n ints (or, for stride, nothing: the kernel size).
DimVector pool_param(IntArrayRef v, const char* op, const char* name, int n, bool omittable, IntArrayRef fallback) {
  if (v.empty() && omittable) return DimVector(fallback);
  if (v.size() == 1) return DimVector(static_cast<size_t>(n), v[0]);
  if (static_cast<int>(v.size()) != n) {
    const std::string what = std::string(name) == "dilation" ? " must be either a single int, or a tuple of "
                             : omittable                     ? " must either be omitted, a single int, or a tuple of "
                                                             : " must either be a single int, or a tuple of ";
    EMBER_CHECK(false, op, ": ", name, what, count_word(n), " ints");
  }
  return DimVector(v);
}

std::string joined(IntArrayRef v, const char* sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + std::to_string(v[i]);
  return s;
}

struct PoolArgs {
  PoolGeometry g;
  int64_t planes = 0;
  DimVector out_shape;
};

// Checks and geometry of max_pool{2,3}d / avg_pool{2,3}d (n = 2 or 3 spatial dims).
// dilation empty: average pooling (no dilation, and avg_pool3d's input-size check).
PoolArgs pool_setup(const char* op, int n, const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride_,
                    IntArrayRef padding_, IntArrayRef dilation_, bool ceil_mode, bool is_avg) {
  const DimVector k = pool_param(kernel_size, op, "kernel_size", n, false, {});
  const DimVector s = pool_param(stride_, op, "stride", n, true, k);
  const DimVector p = pool_param(padding_, op, "padding", n, false, {});
  const DimVector d =
      is_avg ? DimVector(static_cast<size_t>(n), 1) : pool_param(dilation_, op, "dilation", n, false, {});
  const int64_t nd = input.dim();
  EMBER_CHECK(nd == n + 1 || nd == n + 2, "non-empty ", n + 1, "D or ", n + 2,
              "D (batch mode) tensor expected for input");
  DimVector in(input.sizes().end() - n, input.sizes().end());
  DimVector out(n);
  for (int i = 0; i < n; ++i) out[i] = pooling_output_shape(in[i], k[i], p[i], s[i], d[i], ceil_mode);

  bool nonempty = true;
  for (int64_t i = nd - n - 1; i < nd; ++i) nonempty &= input.size(i) != 0;
  const int64_t planes_in = input.size(nd - n - 1);
  if (n == 2) {
    EMBER_CHECK(k[0] > 0 && k[1] > 0, "kernel size should be greater than zero, but got kH: ", k[0], " kW: ", k[1]);
    EMBER_CHECK(s[0] > 0 && s[1] > 0, "stride should be greater than zero, but got dH: ", s[0], " dW: ", s[1]);
    EMBER_CHECK(d[0] > 0 && d[1] > 0, "dilation should be greater than zero, but got dilationH: ", d[0],
                " dilationW: ", d[1]);
    EMBER_CHECK(nonempty, "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:",
                shape_str(input.sizes()));
    EMBER_CHECK(k[1] / 2 >= p[1] && k[0] / 2 >= p[0],
                "pad should be smaller than or equal to half of kernel size, but got padW = ", p[1], ", padH = ", p[0],
                ", kW = ", k[1], ", kH = ", k[0]);
    EMBER_CHECK(out[0] >= 1 && out[1] >= 1, "Given input size: (", planes_in, "x", in[0], "x", in[1],
                "). Calculated output size: (", planes_in, "x", out[0], "x", out[1], "). Output size is too small");
  } else {
    EMBER_CHECK(k[0] > 0 && k[1] > 0 && k[2] > 0, "kernel size should be greater than zero, but got kT: ", k[0],
                " kH: ", k[1], " kW: ", k[2]);
    EMBER_CHECK(s[0] > 0 && s[1] > 0 && s[2] > 0, "stride should be greater than zero, but got dT: ", s[0],
                " dH: ", s[1], " dW: ", s[2]);
    EMBER_CHECK(d[0] > 0 && d[1] > 0 && d[2] > 0, "dilation should be greater than zero, but got dilationT: ", d[0],
                " dilationH: ", d[1], " dilationW: ", d[2]);
    EMBER_CHECK(nonempty, "Expected 4D or 5D (batch mode) tensor with optional 0 dim batch size for input, but got:",
                shape_str(input.sizes()));
    EMBER_CHECK(k[0] / 2 >= p[0] && k[2] / 2 >= p[2] && k[1] / 2 >= p[1],
                "pad should be smaller than or equal to half of kernel size, but got kT: ", k[0], " kW: ", k[2],
                " kH: ", k[1], " padT: ", p[0], " padW: ", p[2], " padH: ", p[1]);
    EMBER_CHECK(!is_avg || (in[0] >= k[0] && in[1] >= k[1] && in[2] >= k[2]), "input image (T: ", in[0], " H: ", in[1],
                " W: ", in[2], ") smaller than kernel size (kT: ", k[0], " kH: ", k[1], " kW: ", k[2], ")");
    EMBER_CHECK(out[0] >= 1 && out[1] >= 1 && out[2] >= 1, "Given input size: (", planes_in, "x", in[0], "x", in[1],
                "x", in[2], "). Calculated output size: (", planes_in, "x", out[0], "x", out[1], "x", out[2],
                "). Output size is too small");
  }
  PoolArgs a;
  for (int i = 0; i < n; ++i) {
    const int j = 3 - n + i;
    a.g.input[j] = in[i];
    a.g.output[j] = out[i];
    a.g.kernel[j] = k[i];
    a.g.stride[j] = s[i];
    a.g.padding[j] = p[i];
    a.g.dilation[j] = d[i];
  }
  a.out_shape = DimVector(input.sizes().begin(), input.sizes().end() - n);
  for (int64_t v : out) a.out_shape.push_back(v);
  a.planes = 1;
  for (int64_t i = 0; i < nd - n; ++i) a.planes *= input.size(i);
  return a;
}

// Checks and geometry of the adaptive pools (n = 2 or 3).
PoolArgs adaptive_setup(const char* op, int n, const Tensor& input, IntArrayRef output_size, bool is_max) {
  EMBER_CHECK(static_cast<int>(output_size.size()) == n, op, ": output_size must be ", n);
  bool nonneg = true;
  for (int64_t v : output_size) nonneg &= v >= 0;
  EMBER_CHECK(nonneg, op, ": elements of output_size must be greater than or equal to 0 but received {",
              joined(output_size, ", "), "}");
  const int64_t nd = input.dim();
  EMBER_CHECK(nd == n + 1 || nd == n + 2, op, "(): Expected ", n + 1, "D or ", n + 2, "D tensor, but got",
              is_max ? ": " : " ", shape_str(input.sizes()));
  for (int64_t i = nd - n - 1; i < nd; ++i) {
    EMBER_CHECK(input.size(i) > 0, op,
                "(): Expected input to have non-zero size for non-batch dimensions, but input has sizes ",
                shape_str(input.sizes()), " with dimension ", i, " being empty");
  }
  PoolArgs a;
  for (int i = 0; i < n; ++i) {
    a.g.input[3 - n + i] = input.size(nd - n + i);
    a.g.output[3 - n + i] = output_size[i];
  }
  a.out_shape = DimVector(input.sizes().begin(), input.sizes().end() - n);
  for (int64_t v : output_size) a.out_shape.push_back(v);
  a.planes = 1;
  for (int64_t i = 0; i < nd - n; ++i) a.planes *= input.size(i);
  return a;
}

Tensor finish(const Tensor& t, ScalarType dtype, MemoryFormat fmt) {
  Tensor r = t.to(dtype);
  return fmt == MemoryFormat::Contiguous ? r : r.contiguous(fmt);
}

void check_grad_output(const char* op, const Tensor& grad_output, const Tensor& self, IntArrayRef expected) {
  EMBER_CHECK(grad_output.dtype() == self.dtype(), op, ": expected grad_output of dtype ",
              c10::toPythonName(self.dtype()), ", but got ", c10::toPythonName(grad_output.dtype()));
  EMBER_CHECK(grad_output.sizes() == expected, op, ": expected grad_output of size ", shape_str(expected),
              " (the size of the pooling's output), but got ", shape_str(grad_output.sizes()));
}

void check_indices(const char* op, const Tensor& indices, IntArrayRef expected) {
  EMBER_CHECK(indices.dtype() == ScalarType::Long, op, ": expected indices of dtype int64, but got ",
              c10::toPythonName(indices.dtype()));
  EMBER_CHECK(indices.sizes() == expected, op, ": expected indices of size ", shape_str(expected), ", but got ",
              shape_str(indices.sizes()));
}

// grad_input[plane][indices] += grad_output (max pooling's backward passes).
Tensor scatter_backward(const char* op, const Tensor& grad_output, const Tensor& self, const Tensor& indices,
                        int64_t planes, int64_t in_numel, int64_t out_numel) {
  check_same_device(op, self, grad_output);
  check_same_device(op, self, indices);
  c10::DeviceGuard guard(self.device());
  check_floating(op, self);
  const ScalarType ct = nn_compute_type(self.dtype());
  const Tensor go = grad_output.to(ct).contiguous();
  const Tensor ix = indices.contiguous();
  Tensor gi = empty(self.sizes(), ct, self.device());
  if (gi.numel() > 0) {
    int64_t bad = 0;
    const bool ok = pool_scatter_stub(self.device().type, ct, go.data_ptr(), static_cast<const int64_t*>(ix.data_ptr()),
                                      gi.data_ptr(), planes, out_numel, in_numel, true, &bad);
    EMBER_CHECK(ok, op, ": found an invalid index ", bad, " for input planes of ", in_numel, " elements");
  }
  return finish(gi, self.dtype(), suggest_memory_format(self));
}

// ---- max pooling ----------------------------------------------------------------------------

std::tuple<Tensor, Tensor> max_pool_nd(const char* op, int n, const Tensor& self, IntArrayRef kernel_size,
                                       IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  c10::DeviceGuard guard(self.device());
  const PoolArgs a = pool_setup(op, n, self, kernel_size, stride, padding, dilation, ceil_mode, false);
  EMBER_CHECK_NOT_IMPLEMENTED(self.dtype() != ScalarType::Bool, op, ": not implemented for dtype bool");
  const ScalarType ct = nn_compute_type(self.dtype());
  const MemoryFormat fmt = suggest_memory_format(self);
  const Tensor x = self.to(ct).contiguous();
  Tensor out = empty(a.out_shape, ct, self.device());
  Tensor idx = empty(a.out_shape, ScalarType::Long, self.device());
  if (out.numel() > 0) {
    max_pool_stub(self.device().type, ct, x.data_ptr(), out.data_ptr(), static_cast<int64_t*>(idx.data_ptr()), a.planes,
                  a.g);
  }
  return {finish(out, self.dtype(), fmt), fmt == MemoryFormat::Contiguous ? idx : idx.contiguous(fmt)};
}

Tensor max_pool_nd_backward(const char* op, const char* fwd, int n, const Tensor& grad_output, const Tensor& self,
                            IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                            bool ceil_mode, const Tensor& indices) {
  const PoolArgs a = pool_setup(fwd, n, self, kernel_size, stride, padding, dilation, ceil_mode, false);
  check_grad_output(op, grad_output, self, a.out_shape);
  check_indices(op, indices, a.out_shape);
  return scatter_backward(op, grad_output, self, indices, a.planes, a.g.input_numel(), a.g.output_numel());
}

// ---- average pooling -------------------------------------------------------------------------

int64_t divisor_of(const std::optional<int64_t>& divisor_override) {
  EMBER_CHECK(!divisor_override.has_value() || *divisor_override != 0, "divisor must be not zero");
  return divisor_override.value_or(0);
}

void check_avg_dtype(const char* op, const Tensor& self) {
  EMBER_CHECK_NOT_IMPLEMENTED(self.is_floating_point() || self.dtype() == ScalarType::Long, op,
                              ": not implemented for dtype ", c10::toPythonName(self.dtype()));
}

Tensor avg_pool_nd(const char* op, int n, const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                   IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                   const std::optional<int64_t>& divisor_override) {
  c10::DeviceGuard guard(self.device());
  const int64_t divisor = divisor_of(divisor_override);
  const PoolArgs a = pool_setup(op, n, self, kernel_size, stride, padding, {}, ceil_mode, true);
  check_avg_dtype(op, self);
  const ScalarType ct = nn_compute_type(self.dtype());
  const Tensor x = self.to(ct).contiguous();
  Tensor out = empty(a.out_shape, ct, self.device());
  if (out.numel() > 0) {
    avg_pool_stub(self.device().type, ct, x.data_ptr(), out.data_ptr(), a.planes, a.g, count_include_pad, divisor);
  }
  return finish(out, self.dtype(), suggest_memory_format(self));
}

Tensor avg_pool_nd_backward(const char* op, const char* fwd, int n, const Tensor& grad_output, const Tensor& self,
                            IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding, bool ceil_mode,
                            bool count_include_pad, const std::optional<int64_t>& divisor_override) {
  check_same_device(op, self, grad_output);
  c10::DeviceGuard guard(self.device());
  const int64_t divisor = divisor_of(divisor_override);
  const PoolArgs a = pool_setup(fwd, n, self, kernel_size, stride, padding, {}, ceil_mode, true);
  check_grad_output(op, grad_output, self, a.out_shape);
  check_floating(op, self);
  const ScalarType ct = nn_compute_type(self.dtype());
  const Tensor go = grad_output.to(ct).contiguous();
  Tensor gi = empty(self.sizes(), ct, self.device());
  if (gi.numel() > 0) {
    avg_pool_backward_stub(self.device().type, ct, go.data_ptr(), gi.data_ptr(), a.planes, a.g, count_include_pad,
                           divisor);
  }
  return finish(gi, self.dtype(), suggest_memory_format(self));
}

// ---- adaptive pooling --------------------------------------------------------------------------

Tensor adaptive_avg_nd(const char* op, int n, const Tensor& self, IntArrayRef output_size) {
  c10::DeviceGuard guard(self.device());
  const PoolArgs a = adaptive_setup(op, n, self, output_size, false);
  check_floating(op, self);
  const ScalarType ct = nn_compute_type(self.dtype());
  const Tensor x = self.to(ct).contiguous();
  Tensor out = empty(a.out_shape, ct, self.device());
  if (out.numel() > 0) adaptive_avg_pool_stub(self.device().type, ct, x.data_ptr(), out.data_ptr(), a.planes, a.g);
  return finish(out, self.dtype(), suggest_memory_format(self));
}

// The output size of an adaptive pool's backward: grad_output's last n sizes, its
// leading sizes those of self.
DimVector adaptive_backward_size(const char* op, int n, const Tensor& grad_output, const Tensor& self) {
  bool ok = grad_output.dim() == self.dim() && self.dim() >= n + 1;
  for (int64_t i = 0; ok && i < self.dim() - n; ++i) ok = grad_output.size(i) == self.size(i);
  EMBER_CHECK(ok, op, ": grad_output of size ", shape_str(grad_output.sizes()), " does not match the input of size ",
              shape_str(self.sizes()));
  return DimVector(grad_output.sizes().end() - n, grad_output.sizes().end());
}

Tensor adaptive_avg_nd_backward(const char* op, const char* fwd, int n, const Tensor& grad_output, const Tensor& self) {
  check_same_device(op, self, grad_output);
  c10::DeviceGuard guard(self.device());
  const DimVector osz = adaptive_backward_size(op, n, grad_output, self);
  const PoolArgs a = adaptive_setup(fwd, n, self, osz, false);
  check_grad_output(op, grad_output, self, a.out_shape);
  check_floating(op, self);
  const ScalarType ct = nn_compute_type(self.dtype());
  const Tensor go = grad_output.to(ct).contiguous();
  Tensor gi = empty(self.sizes(), ct, self.device());
  if (gi.numel() > 0) {
    if (go.numel() == 0) {
      gi.zero_();
    } else {
      adaptive_avg_pool_backward_stub(self.device().type, ct, go.data_ptr(), gi.data_ptr(), a.planes, a.g);
    }
  }
  return finish(gi, self.dtype(), suggest_memory_format(self));
}

std::tuple<Tensor, Tensor> adaptive_max_nd(const char* op, int n, const Tensor& self, IntArrayRef output_size) {
  c10::DeviceGuard guard(self.device());
  const PoolArgs a = adaptive_setup(op, n, self, output_size, true);
  check_floating(op, self);
  const ScalarType ct = nn_compute_type(self.dtype());
  const MemoryFormat fmt = suggest_memory_format(self);
  const Tensor x = self.to(ct).contiguous();
  Tensor out = empty(a.out_shape, ct, self.device());
  Tensor idx = empty(a.out_shape, ScalarType::Long, self.device());
  if (out.numel() > 0) {
    adaptive_max_pool_stub(self.device().type, ct, x.data_ptr(), out.data_ptr(), static_cast<int64_t*>(idx.data_ptr()),
                           a.planes, a.g);
  }
  return {finish(out, self.dtype(), fmt), fmt == MemoryFormat::Contiguous ? idx : idx.contiguous(fmt)};
}

Tensor adaptive_max_nd_backward(const char* op, const char* fwd, int n, const Tensor& grad_output, const Tensor& self,
                                const Tensor& indices) {
  const DimVector osz = adaptive_backward_size(op, n, grad_output, self);
  const PoolArgs a = adaptive_setup(fwd, n, self, osz, true);
  check_grad_output(op, grad_output, self, a.out_shape);
  check_indices(op, indices, a.out_shape);
  return scatter_backward(op, grad_output, self, indices, a.planes, a.g.input_numel(), a.g.output_numel());
}

}  // namespace

// ---- the operators ---------------------------------------------------------------------------

std::tuple<Tensor, Tensor> max_pool2d_with_indices_cpu(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                                                       IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  return max_pool_nd("max_pool2d", 2, self, kernel_size, stride, padding, dilation, ceil_mode);
}

Tensor max_pool2d_with_indices_backward_cpu(const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size,
                                            IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                                            bool ceil_mode, const Tensor& indices) {
  return max_pool_nd_backward("max_pool2d_with_indices_backward", "max_pool2d", 2, grad_output, self, kernel_size,
                              stride, padding, dilation, ceil_mode, indices);
}

std::tuple<Tensor, Tensor> max_pool3d_with_indices_cpu(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                                                       IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  return max_pool_nd("max_pool3d", 3, self, kernel_size, stride, padding, dilation, ceil_mode);
}

Tensor max_pool3d_with_indices_backward_cpu(const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size,
                                            IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                                            bool ceil_mode, const Tensor& indices) {
  return max_pool_nd_backward("max_pool3d_with_indices_backward", "max_pool3d", 3, grad_output, self, kernel_size,
                              stride, padding, dilation, ceil_mode, indices);
}

Tensor avg_pool2d_cpu(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                      bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override) {
  return avg_pool_nd("avg_pool2d", 2, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override);
}

Tensor avg_pool2d_backward_cpu(const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size,
                               IntArrayRef stride, IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                               std::optional<int64_t> divisor_override) {
  return avg_pool_nd_backward("avg_pool2d_backward", "avg_pool2d", 2, grad_output, self, kernel_size, stride, padding,
                              ceil_mode, count_include_pad, divisor_override);
}

Tensor avg_pool3d_cpu(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                      bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override) {
  return avg_pool_nd("avg_pool3d", 3, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override);
}

Tensor avg_pool3d_backward_cpu(const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size,
                               IntArrayRef stride, IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                               std::optional<int64_t> divisor_override) {
  return avg_pool_nd_backward("avg_pool3d_backward", "avg_pool3d", 3, grad_output, self, kernel_size, stride, padding,
                              ceil_mode, count_include_pad, divisor_override);
}

Tensor adaptive_avg_pool2d_cpu(const Tensor& self, IntArrayRef output_size) {
  return adaptive_avg_nd("adaptive_avg_pool2d", 2, self, output_size);
}

Tensor adaptive_avg_pool2d_backward_cpu(const Tensor& grad_output, const Tensor& self) {
  return adaptive_avg_nd_backward("adaptive_avg_pool2d_backward", "adaptive_avg_pool2d", 2, grad_output, self);
}

Tensor adaptive_avg_pool3d_cpu(const Tensor& self, IntArrayRef output_size) {
  return adaptive_avg_nd("adaptive_avg_pool3d", 3, self, output_size);
}

Tensor adaptive_avg_pool3d_backward_cpu(const Tensor& grad_output, const Tensor& self) {
  return adaptive_avg_nd_backward("adaptive_avg_pool3d_backward", "adaptive_avg_pool3d", 3, grad_output, self);
}

std::tuple<Tensor, Tensor> adaptive_max_pool2d_cpu(const Tensor& self, IntArrayRef output_size) {
  return adaptive_max_nd("adaptive_max_pool2d", 2, self, output_size);
}

Tensor adaptive_max_pool2d_backward_cpu(const Tensor& grad_output, const Tensor& self, const Tensor& indices) {
  return adaptive_max_nd_backward("adaptive_max_pool2d_backward", "adaptive_max_pool2d", 2, grad_output, self, indices);
}

std::tuple<Tensor, Tensor> adaptive_max_pool3d_cpu(const Tensor& self, IntArrayRef output_size) {
  return adaptive_max_nd("adaptive_max_pool3d", 3, self, output_size);
}

Tensor adaptive_max_pool3d_backward_cpu(const Tensor& grad_output, const Tensor& self, const Tensor& indices) {
  return adaptive_max_nd_backward("adaptive_max_pool3d_backward", "adaptive_max_pool3d", 3, grad_output, self, indices);
}

Tensor max_unpool2d_cpu(const Tensor& self, const Tensor& indices, IntArrayRef output_size) {
  check_same_device("max_unpool2d", self, indices);
  c10::DeviceGuard guard(self.device());
  EMBER_CHECK(indices.dtype() == ScalarType::Long,
              "elements in indices should be type int64 but got: ", c10::toString(indices.dtype()));
  EMBER_CHECK(output_size.size() == 2, "There should be exactly two elements (height, width) in output_size, but got ",
              output_size.size(), " elements.");
  EMBER_CHECK(self.dim() == 3 || self.dim() == 4,
              "Input to max_unpooling2d should be a 3d or 4d Tensor, but got a "
              "tensor with ",
              self.dim(), " dimensions.");
  EMBER_CHECK(self.sizes() == indices.sizes(), "Expected shape of indices to be same as that of the input tensor (",
              shape_str(self.sizes()), ") but got indices tensor with shape: ", shape_str(indices.sizes()));
  for (int64_t i = self.dim() - 3; i < self.dim(); ++i) {
    EMBER_CHECK(self.size(i) > 0,
                "max_unpooling2d_forward_out_cpu(): Expected input to have non-zero size for "
                "non-batch dimensions, but got ",
                shape_str(self.sizes()), " with dimension ", i, " being empty.");
  }
  EMBER_CHECK(output_size[0] >= 0 && output_size[1] >= 0,
              "max_unpool2d: elements of output_size must be non-negative, but got ", shape_str(output_size));
  check_floating("max_unpool2d", self);
  const ScalarType ct = nn_compute_type(self.dtype());
  const int64_t nd = self.dim();
  DimVector shape(self.sizes().begin(), self.sizes().end() - 2);
  shape.push_back(output_size[0]);
  shape.push_back(output_size[1]);
  const int64_t planes = self.numel() / (self.size(nd - 1) * self.size(nd - 2));
  const int64_t out_n = output_size[0] * output_size[1];
  const Tensor x = self.to(ct).contiguous();
  const Tensor ix = indices.contiguous();
  Tensor out = empty(shape, ct, self.device());
  if (planes > 0) {
    int64_t bad = 0;
    const bool ok =
        pool_scatter_stub(self.device().type, ct, x.data_ptr(), static_cast<const int64_t*>(ix.data_ptr()),
                          out.data_ptr(), planes, self.size(nd - 1) * self.size(nd - 2), out_n, false, &bad);
    EMBER_CHECK(ok, "Found an invalid max index: ", bad, " (output volumes are of size ", output_size[0], "x",
                output_size[1], ")");
  }
  return finish(out, self.dtype(), suggest_memory_format(self));
}

}  // namespace ember::at::native
