// Padding (reflection_pad1d/2d/3d, replication_pad1d/2d/3d) and upsampling (upsample_nearest1d/2d/3d,
// _upsample_nearest_exact1d/2d/3d, upsample_linear1d / bilinear2d / trilinear3d, upsample_bicubic2d) with their
// backward operators: PyTorch's checks and index rules, turned into per-dim maps for the kernels of
// cpu/ResampleKernel.cpp and cuda/Resample.cu (see Resample.h); the operators serve both devices.
#include "Resample.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <ember/c10/DeviceGuard.h>

#include "CubicConvolution.h"
#include "Im2Col.h"  // nn_compute_type, check_floating, suggest_memory_format

namespace ember::at::native {

DEFINE_DISPATCH(resample_gather_stub);
DEFINE_DISPATCH(resample_stub);
DEFINE_DISPATCH(resample_backward_stub);

namespace {

struct DimMap {
  int64_t in = 1, out = 1, taps = 1;
  std::vector<int64_t> index{0};
  std::vector<double> weight;  // empty: one tap of weight 1
};

const char* dim_letter(int n, int i) {  // spatial dim i of n: "D", "H", "W"
  static const char* letters[3] = {"D", "H", "W"};
  return letters[3 - n + i];
}

// "(H: 3, W: 4)" of the spatial sizes
std::string spatial_str(int n, const std::vector<int64_t>& v) {
  std::string s = "(";
  for (int i = 0; i < n; ++i) s += std::string(i ? ", " : "") + dim_letter(n, i) + ": " + std::to_string(v[i]);
  return s + ")";
}

int64_t planes_of(IntArrayRef sizes, int n) {
  int64_t p = 1;
  for (size_t i = 0; i + n < sizes.size(); ++i) p *= sizes[i];
  return p;
}

void fill_dims(const std::vector<DimMap>& maps, ResampleDim* dims) {
  const int n = static_cast<int>(maps.size());
  static const int64_t zero = 0;
  for (int i = 0; i < 3; ++i) dims[i] = ResampleDim{1, 1, 1, &zero, nullptr};
  for (int i = 0; i < n; ++i) {
    const DimMap& m = maps[i];
    dims[3 - n + i] = ResampleDim{m.in, m.out, m.taps, m.index.data(), m.weight.empty() ? nullptr : m.weight.data()};
  }
}

// out[..., o...] = sum over taps of weight * self[..., index...] over the last maps.size() dims.
Tensor resample_forward(const Tensor& self, const std::vector<DimMap>& maps) {
  c10::DeviceGuard guard(self.device());
  const int n = static_cast<int>(maps.size());
  DimVector shape(self.sizes().begin(), self.sizes().end() - n);
  for (const DimMap& m : maps) shape.push_back(m.out);
  Tensor out = empty(shape, self.dtype(), self.device());
  if (out.numel() == 0) return out;
  ResampleDim dims[3];
  fill_dims(maps, dims);
  const int64_t planes = planes_of(self.sizes(), n);
  bool weighted = false;
  for (const DimMap& m : maps) weighted |= !m.weight.empty();
  if (!weighted) {
    const Tensor x = self.contiguous();
    resample_gather_stub(self.device().type, static_cast<int64_t>(self.itemsize()), x.data_ptr(), out.data_ptr(),
                         planes, dims);
    return out;
  }
  const ScalarType ct = nn_compute_type(self.dtype());
  const Tensor x = self.to(ct).contiguous();
  Tensor o = ct == self.dtype() ? out : empty(shape, ct, self.device());
  resample_stub(self.device().type, ct, x.data_ptr(), o.data_ptr(), planes, dims);
  return ct == self.dtype() ? o : o.to(self.dtype());
}

// The adjoint of resample_forward: grad_input of `input_sizes` from grad_output.
Tensor resample_backward(const char* op, const Tensor& grad_output, IntArrayRef input_sizes,
                         const std::vector<DimMap>& maps) {
  c10::DeviceGuard guard(grad_output.device());
  const int n = static_cast<int>(maps.size());
  DimVector expected(input_sizes.begin(), input_sizes.end() - n);
  for (const DimMap& m : maps) expected.push_back(m.out);
  EMBER_CHECK(grad_output.sizes() == IntArrayRef(expected), op, ": expected grad_output of size ", shape_str(expected),
              ", but got ", shape_str(grad_output.sizes()));
  check_floating(op, grad_output);
  const ScalarType ct = nn_compute_type(grad_output.dtype());
  Tensor gi = zeros(input_sizes, ct, grad_output.device());
  if (gi.numel() > 0 && grad_output.numel() > 0) {
    ResampleDim dims[3];
    fill_dims(maps, dims);
    const Tensor go = grad_output.to(ct).contiguous();
    resample_backward_stub(grad_output.device().type, ct, go.data_ptr(), gi.data_ptr(), planes_of(input_sizes, n),
                           dims);
  }
  return gi.to(grad_output.dtype());
}

// ---- padding ----------------------------------------------------------------------------------

// Checks (PyTorch's, in its order) and maps of reflection_pad{n}d / replication_pad{n}d.
std::vector<DimMap> pad_maps(const char* op, int n, IntArrayRef input_sizes, IntArrayRef padding, bool reflect) {
  const int64_t np = static_cast<int64_t>(padding.size());
  if (reflect) {
    EMBER_CHECK(np == 2 * n, "padding size is expected to be ", 2 * n, ", but got: ", np);
  } else {
    EMBER_CHECK(np == 2 * n, "padding size is expected to be ", 2 * n);
  }
  const int64_t nd = static_cast<int64_t>(input_sizes.size());
  bool ok = nd == n + 1 || nd == n + 2;
  for (int64_t i = nd - n - 1; ok && i < nd; ++i) ok = input_sizes[i] != 0;
  EMBER_CHECK(ok, "Expected ", n + 1, "D or ", n + 2,
              "D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for input, but got: ",
              shape_str(input_sizes));
  std::vector<int64_t> in(n), out(n);
  bool small = false;
  for (int i = 0; i < n; ++i) {
    const int64_t k = 2 * (n - 1 - i);  // padding holds the last dim first
    in[i] = input_sizes[nd - n + i];
    out[i] = in[i] + padding[k] + padding[k + 1];
    small |= out[i] < (reflect ? 1 : 0);  // replication may crop a dim to nothing (as PyTorch)
  }
  if (small) {
    std::string calc;
    for (int i = 0; i < n; ++i) calc += std::string(i ? " " : "") + dim_letter(n, i) + ": " + std::to_string(out[i]);
    EMBER_CHECK(false, "input ", spatial_str(n, in), " is too small. Calculated output ", calc);
  }
  if (reflect) {
    for (int i = n - 1; i >= 0; --i) {  // the last dim first, as PyTorch's
      const int64_t k = 2 * (n - 1 - i);
      EMBER_CHECK(padding[k] < in[i] && padding[k + 1] < in[i], "Argument #", 4 + k,
                  ": Padding size should be less than the corresponding input dimension, but got: padding (",
                  padding[k], ", ", padding[k + 1], ") at dimension ", nd - n + i, " of input ",
                  shape_str(input_sizes));
    }
  }
  std::vector<DimMap> maps(n);
  for (int i = 0; i < n; ++i) {
    const int64_t k = 2 * (n - 1 - i), lo = padding[k], size = in[i];
    DimMap& m = maps[i];
    m.in = size;
    m.out = out[i];
    m.index.resize(out[i]);
    for (int64_t o = 0; o < out[i]; ++o) {
      int64_t j = o - lo;
      if (reflect) {
        if (j < 0) j = -j;
        if (j >= size) j = 2 * (size - 1) - j;
      } else {
        j = std::clamp<int64_t>(j, 0, size - 1);
      }
      m.index[o] = j;
    }
  }
  return maps;
}

void check_pad_dtype(const char* op, const Tensor& self) {
  EMBER_CHECK(self.dtype() != ScalarType::Bool, "\"", op, "\" not implemented for '", c10::toString(self.dtype()), "'");
}

Tensor pad_forward(const char* op, int n, const Tensor& self, IntArrayRef padding, bool reflect) {
  const std::vector<DimMap> maps = pad_maps(op, n, self.sizes(), padding, reflect);
  check_pad_dtype(op, self);
  return resample_forward(self, maps);
}

Tensor pad_backward(const char* op, int n, const Tensor& grad_output, const Tensor& self, IntArrayRef padding,
                    bool reflect) {
  return resample_backward(op, grad_output, self.sizes(), pad_maps(op, n, self.sizes(), padding, reflect));
}

// ---- upsampling -------------------------------------------------------------------------------

// PyTorch's compute_scales_value: 1 / scale when a positive scale is given, else in / out.
template <typename A>
A scales_value(std::optional<double> scale, int64_t in, int64_t out) {
  return scale.has_value() && *scale > 0 ? static_cast<A>(1.0 / *scale) : static_cast<A>(in) / static_cast<A>(out);
}

// nearest: floor(o * scale); nearest-exact: floor((o + 0.5) * scale) (PyTorch's
// nearest_idx / nearest_neighbor_exact_compute_source_index, in float).
DimMap nearest_map(int64_t in, int64_t out, std::optional<double> scale, bool exact) {
  DimMap m;
  m.in = in;
  m.out = out;
  m.index.resize(out);
  const float s = scales_value<float>(scale, in, out);
  for (int64_t o = 0; o < out; ++o) {
    if (exact) {
      m.index[o] = std::min(static_cast<int64_t>(std::floor((static_cast<float>(o) + 0.5f) * s)), in - 1);
    } else if (out == in) {
      m.index[o] = o;
    } else if (out == 2 * in) {
      m.index[o] = o >> 1;
    } else {
      m.index[o] = std::min(static_cast<int64_t>(std::floor(static_cast<float>(o) * s)), in - 1);
    }
  }
  return m;
}

// Linear interpolation along one dim (PyTorch's area_pixel_compute_source_index and
// compute_source_index_and_lambda), computed in A (float, or double for float64).
template <typename A>
DimMap linear_map(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  DimMap m;
  m.in = in;
  m.out = out;
  m.taps = 2;
  m.index.resize(2 * out);
  m.weight.resize(2 * out);
  const A ratio = align_corners ? (out > 1 ? static_cast<A>(in - 1) / static_cast<A>(out - 1) : A(0))
                                : scales_value<A>(scale, in, out);
  for (int64_t o = 0; o < out; ++o) {
    int64_t i0, i1;
    A l0, l1;
    if (out == in && !align_corners) {
      i0 = i1 = o;
      l0 = 1;
      l1 = 0;
    } else {
      A real = align_corners ? ratio * static_cast<A>(o) : ratio * (static_cast<A>(o) + A(0.5)) - A(0.5);
      if (!align_corners && real < 0) real = 0;
      i0 = std::min(static_cast<int64_t>(real), in - 1);
      l1 = std::min(std::max(real - static_cast<A>(i0), A(0)), A(1));
      i1 = i0 + (i0 < in - 1 ? 1 : 0);
      l0 = A(1) - l1;
    }
    m.index[2 * o] = i0;
    m.index[2 * o + 1] = i1;
    m.weight[2 * o] = l0;
    m.weight[2 * o + 1] = l1;
  }
  return m;
}

// Bicubic interpolation along one dim (PyTorch's cubic convolution with A = -0.75 over the 4
// inputs around the source position -- not clamped at 0 -- each index clamped into the input).
template <typename A>
DimMap cubic_map(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  DimMap m;
  m.in = in;
  m.out = out;
  m.taps = 4;
  m.index.resize(4 * out);
  m.weight.resize(4 * out);
  const A ratio = align_corners ? (out > 1 ? static_cast<A>(in - 1) / static_cast<A>(out - 1) : A(0))
                                : scales_value<A>(scale, in, out);
  for (int64_t o = 0; o < out; ++o) {
    const A real = align_corners ? ratio * static_cast<A>(o) : ratio * (static_cast<A>(o) + A(0.5)) - A(0.5);
    const A fl = std::floor(real);
    const A t = real - fl;
    A w[4];
    cubic_weights(t, w);
    for (int k = 0; k < 4; ++k) {
      m.index[4 * o + k] = std::clamp<int64_t>(static_cast<int64_t>(fl) - 1 + k, 0, in - 1);
      m.weight[4 * o + k] = w[k];
    }
  }
  return m;
}

// Checks of upsample_*{n}d (PyTorch's upsample_{n}d_common_check) given the input sizes.
void upsample_check(int n, IntArrayRef input_size, IntArrayRef output_size) {
  EMBER_CHECK(static_cast<int64_t>(output_size.size()) == n, "It is expected output_size equals to ", n,
              ", but got size ", output_size.size());
  EMBER_CHECK(static_cast<int64_t>(input_size.size()) == n + 2, "It is expected input_size equals to ", n + 2,
              ", but got size ", input_size.size());
  std::vector<int64_t> in(n), out(n);
  bool ok = true;
  for (int i = 0; i < n; ++i) {
    in[i] = input_size[2 + i];
    out[i] = output_size[i];
    ok &= in[i] > 0 && out[i] > 0;
  }
  EMBER_CHECK(ok, "Input and output sizes should be greater than 0, but got input ", spatial_str(n, in), " output ",
              spatial_str(n, out));
}

std::vector<DimMap> nearest_maps(int n, IntArrayRef input_size, IntArrayRef output_size,
                                 const std::vector<std::optional<double>>& scales, bool exact) {
  upsample_check(n, input_size, output_size);
  std::vector<DimMap> maps;
  for (int i = 0; i < n; ++i) maps.push_back(nearest_map(input_size[2 + i], output_size[i], scales[i], exact));
  return maps;
}

std::vector<DimMap> linear_maps(int n, IntArrayRef input_size, IntArrayRef output_size, bool align_corners,
                                const std::vector<std::optional<double>>& scales, ScalarType dtype) {
  upsample_check(n, input_size, output_size);
  std::vector<DimMap> maps;
  for (int i = 0; i < n; ++i) {
    maps.push_back(dtype == ScalarType::Double
                       ? linear_map<double>(input_size[2 + i], output_size[i], align_corners, scales[i])
                       : linear_map<float>(input_size[2 + i], output_size[i], align_corners, scales[i]));
  }
  return maps;
}

void check_upsample_dtype(const char* op, const Tensor& self, bool allow_uint8) {
  EMBER_CHECK(c10::isFloatingType(self.dtype()) || (allow_uint8 && self.dtype() == ScalarType::Byte), "\"", op,
              "\" not implemented for '", c10::toString(self.dtype()), "'");
}

// Upsampling keeps a channels-last input channels-last (PyTorch's suggest_memory_format).
Tensor keep_format(const Tensor& out, const Tensor& self) {
  const MemoryFormat fmt = suggest_memory_format(self);
  return fmt == MemoryFormat::Contiguous ? out : out.contiguous(fmt);
}

std::vector<DimMap> cubic_maps(IntArrayRef input_size, IntArrayRef output_size, bool align_corners,
                               const std::vector<std::optional<double>>& scales, ScalarType dtype) {
  upsample_check(2, input_size, output_size);
  std::vector<DimMap> maps;
  for (int i = 0; i < 2; ++i) {
    maps.push_back(dtype == ScalarType::Double
                       ? cubic_map<double>(input_size[2 + i], output_size[i], align_corners, scales[i])
                       : cubic_map<float>(input_size[2 + i], output_size[i], align_corners, scales[i]));
  }
  return maps;
}

Tensor upsample_nearest(const char* op, int n, const Tensor& self, IntArrayRef output_size,
                        const std::vector<std::optional<double>>& scales, bool exact) {
  const std::vector<DimMap> maps = nearest_maps(n, self.sizes(), output_size, scales, exact);
  check_upsample_dtype(op, self, true);
  return keep_format(resample_forward(self, maps), self);
}

Tensor upsample_nearest_backward(const char* op, int n, const Tensor& grad_output, IntArrayRef output_size,
                                 IntArrayRef input_size, const std::vector<std::optional<double>>& scales, bool exact) {
  return resample_backward(op, grad_output, input_size, nearest_maps(n, input_size, output_size, scales, exact));
}

Tensor upsample_linear(const char* op, int n, const Tensor& self, IntArrayRef output_size, bool align_corners,
                       const std::vector<std::optional<double>>& scales) {
  const std::vector<DimMap> maps = linear_maps(n, self.sizes(), output_size, align_corners, scales, self.dtype());
  EMBER_CHECK(self.numel() > 0, "Non-empty ", n + 2, "D data tensor expected but got a tensor with sizes ",
              shape_str(self.sizes()));
  check_upsample_dtype(op, self, false);
  return keep_format(resample_forward(self, maps), self);
}

Tensor upsample_linear_backward(const char* op, int n, const Tensor& grad_output, IntArrayRef output_size,
                                IntArrayRef input_size, bool align_corners,
                                const std::vector<std::optional<double>>& scales) {
  return resample_backward(op, grad_output, input_size,
                           linear_maps(n, input_size, output_size, align_corners, scales, grad_output.dtype()));
}

}  // namespace

Tensor reflection_pad1d(const Tensor& self, IntArrayRef padding) {
  return pad_forward("reflection_pad1d", 1, self, padding, true);
}
Tensor reflection_pad2d(const Tensor& self, IntArrayRef padding) {
  return pad_forward("reflection_pad2d", 2, self, padding, true);
}
Tensor reflection_pad3d(const Tensor& self, IntArrayRef padding) {
  return pad_forward("reflection_pad3d", 3, self, padding, true);
}
Tensor replication_pad1d(const Tensor& self, IntArrayRef padding) {
  return pad_forward("replication_pad1d", 1, self, padding, false);
}
Tensor replication_pad2d(const Tensor& self, IntArrayRef padding) {
  return pad_forward("replication_pad2d", 2, self, padding, false);
}
Tensor replication_pad3d(const Tensor& self, IntArrayRef padding) {
  return pad_forward("replication_pad3d", 3, self, padding, false);
}

Tensor reflection_pad1d_backward(const Tensor& grad_output, const Tensor& self, IntArrayRef padding) {
  return pad_backward("reflection_pad1d_backward", 1, grad_output, self, padding, true);
}
Tensor reflection_pad2d_backward(const Tensor& grad_output, const Tensor& self, IntArrayRef padding) {
  return pad_backward("reflection_pad2d_backward", 2, grad_output, self, padding, true);
}
Tensor reflection_pad3d_backward(const Tensor& grad_output, const Tensor& self, IntArrayRef padding) {
  return pad_backward("reflection_pad3d_backward", 3, grad_output, self, padding, true);
}
Tensor replication_pad1d_backward(const Tensor& grad_output, const Tensor& self, IntArrayRef padding) {
  return pad_backward("replication_pad1d_backward", 1, grad_output, self, padding, false);
}
Tensor replication_pad2d_backward(const Tensor& grad_output, const Tensor& self, IntArrayRef padding) {
  return pad_backward("replication_pad2d_backward", 2, grad_output, self, padding, false);
}
Tensor replication_pad3d_backward(const Tensor& grad_output, const Tensor& self, IntArrayRef padding) {
  return pad_backward("replication_pad3d_backward", 3, grad_output, self, padding, false);
}

Tensor upsample_nearest1d(const Tensor& self, IntArrayRef output_size, std::optional<double> scales) {
  return upsample_nearest("upsample_nearest1d", 1, self, output_size, {scales}, false);
}
Tensor upsample_nearest2d(const Tensor& self, IntArrayRef output_size, std::optional<double> scales_h,
                          std::optional<double> scales_w) {
  return upsample_nearest("upsample_nearest2d", 2, self, output_size, {scales_h, scales_w}, false);
}
Tensor upsample_nearest3d(const Tensor& self, IntArrayRef output_size, std::optional<double> scales_d,
                          std::optional<double> scales_h, std::optional<double> scales_w) {
  return upsample_nearest("upsample_nearest3d", 3, self, output_size, {scales_d, scales_h, scales_w}, false);
}
Tensor upsample_nearest1d_backward(const Tensor& grad_output, IntArrayRef output_size, IntArrayRef input_size,
                                   std::optional<double> scales) {
  return upsample_nearest_backward("upsample_nearest1d_backward", 1, grad_output, output_size, input_size, {scales},
                                   false);
}
Tensor upsample_nearest2d_backward(const Tensor& grad_output, IntArrayRef output_size, IntArrayRef input_size,
                                   std::optional<double> scales_h, std::optional<double> scales_w) {
  return upsample_nearest_backward("upsample_nearest2d_backward", 2, grad_output, output_size, input_size,
                                   {scales_h, scales_w}, false);
}
Tensor upsample_nearest3d_backward(const Tensor& grad_output, IntArrayRef output_size, IntArrayRef input_size,
                                   std::optional<double> scales_d, std::optional<double> scales_h,
                                   std::optional<double> scales_w) {
  return upsample_nearest_backward("upsample_nearest3d_backward", 3, grad_output, output_size, input_size,
                                   {scales_d, scales_h, scales_w}, false);
}

Tensor upsample_bilinear2d(const Tensor& self, IntArrayRef output_size, bool align_corners,
                           std::optional<double> scales_h, std::optional<double> scales_w) {
  return upsample_linear("upsample_bilinear2d", 2, self, output_size, align_corners, {scales_h, scales_w});
}
Tensor upsample_bilinear2d_backward(const Tensor& grad_output, IntArrayRef output_size, IntArrayRef input_size,
                                    bool align_corners, std::optional<double> scales_h,
                                    std::optional<double> scales_w) {
  return upsample_linear_backward("upsample_bilinear2d_backward", 2, grad_output, output_size, input_size,
                                  align_corners, {scales_h, scales_w});
}
Tensor upsample_bicubic2d(const Tensor& self, IntArrayRef output_size, bool align_corners,
                          std::optional<double> scales_h, std::optional<double> scales_w) {
  const std::vector<DimMap> maps =
      cubic_maps(self.sizes(), output_size, align_corners, {scales_h, scales_w}, self.dtype());
  EMBER_CHECK(self.numel() > 0, "Non-empty 4D data tensor expected but got a tensor with sizes ",
              shape_str(self.sizes()));
  check_upsample_dtype("upsample_bicubic2d", self, false);
  return keep_format(resample_forward(self, maps), self);
}
Tensor upsample_bicubic2d_backward(const Tensor& grad_output, IntArrayRef output_size, IntArrayRef input_size,
                                   bool align_corners, std::optional<double> scales_h, std::optional<double> scales_w) {
  return resample_backward(
      "upsample_bicubic2d_backward", grad_output, input_size,
      cubic_maps(input_size, output_size, align_corners, {scales_h, scales_w}, grad_output.dtype()));
}
Tensor upsample_linear1d(const Tensor& self, IntArrayRef output_size, bool align_corners,
                         std::optional<double> scales) {
  return upsample_linear("upsample_linear1d", 1, self, output_size, align_corners, {scales});
}
Tensor upsample_linear1d_backward(const Tensor& grad_output, IntArrayRef output_size, IntArrayRef input_size,
                                  bool align_corners, std::optional<double> scales) {
  return upsample_linear_backward("upsample_linear1d_backward", 1, grad_output, output_size, input_size, align_corners,
                                  {scales});
}
Tensor upsample_trilinear3d(const Tensor& self, IntArrayRef output_size, bool align_corners,
                            std::optional<double> scales_d, std::optional<double> scales_h,
                            std::optional<double> scales_w) {
  return upsample_linear("upsample_trilinear3d", 3, self, output_size, align_corners, {scales_d, scales_h, scales_w});
}
Tensor upsample_trilinear3d_backward(const Tensor& grad_output, IntArrayRef output_size, IntArrayRef input_size,
                                     bool align_corners, std::optional<double> scales_d, std::optional<double> scales_h,
                                     std::optional<double> scales_w) {
  return upsample_linear_backward("upsample_trilinear3d_backward", 3, grad_output, output_size, input_size,
                                  align_corners, {scales_d, scales_h, scales_w});
}

Tensor _upsample_nearest_exact1d(const Tensor& self, IntArrayRef output_size, std::optional<double> scales) {
  return upsample_nearest("_upsample_nearest_exact1d", 1, self, output_size, {scales}, true);
}
Tensor _upsample_nearest_exact2d(const Tensor& self, IntArrayRef output_size, std::optional<double> scales_h,
                                 std::optional<double> scales_w) {
  return upsample_nearest("_upsample_nearest_exact2d", 2, self, output_size, {scales_h, scales_w}, true);
}
Tensor _upsample_nearest_exact3d(const Tensor& self, IntArrayRef output_size, std::optional<double> scales_d,
                                 std::optional<double> scales_h, std::optional<double> scales_w) {
  return upsample_nearest("_upsample_nearest_exact3d", 3, self, output_size, {scales_d, scales_h, scales_w}, true);
}
Tensor _upsample_nearest_exact1d_backward(const Tensor& grad_output, IntArrayRef output_size, IntArrayRef input_size,
                                          std::optional<double> scales) {
  return upsample_nearest_backward("_upsample_nearest_exact1d_backward", 1, grad_output, output_size, input_size,
                                   {scales}, true);
}
Tensor _upsample_nearest_exact2d_backward(const Tensor& grad_output, IntArrayRef output_size, IntArrayRef input_size,
                                          std::optional<double> scales_h, std::optional<double> scales_w) {
  return upsample_nearest_backward("_upsample_nearest_exact2d_backward", 2, grad_output, output_size, input_size,
                                   {scales_h, scales_w}, true);
}
Tensor _upsample_nearest_exact3d_backward(const Tensor& grad_output, IntArrayRef output_size, IntArrayRef input_size,
                                          std::optional<double> scales_d, std::optional<double> scales_h,
                                          std::optional<double> scales_w) {
  return upsample_nearest_backward("_upsample_nearest_exact3d_backward", 3, grad_output, output_size, input_size,
                                   {scales_d, scales_h, scales_w}, true);
}

}  // namespace ember::at::native
