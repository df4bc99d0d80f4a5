// Convolutions of integer tensors on the CPU (uint8, int8, int16, int32, int64), which PyTorch
// accepts through its slow path: direct loops over ConvShape's geometry, accumulating in the
// tensors' own type and wrapping on overflow as PyTorch's integer GEMM does (the sums are done
// in the unsigned type of the same width, where wrapping is defined). Integers never require
// grad, so there is no backward. The floating-point convolution is Convolution.cpp's.
//
// Both directions are one relation between a "big" and a "small" image (Convolution.cpp's
// terms): small[n, g*Ms + m, o] = sum over c < Cb and kernel offsets k of
// big[n, g*Cb + c, o * stride - padding + k * dilation] * weight[g*Ms + m, c, k].
// A convolution computes small (its output) from big; a transposed convolution computes big
// (its output) from small, scattering each product.
#include <type_traits>

#include <ember/aten/Parallel.h>

#include "Convolution.h"
#include "ConvolutionInteger.h"

namespace ember::at::native {

namespace {

// in / out: the operator's input and output images (big / small for a convolution, small /
// big for a transposed one), weight (G * Ms, Cb, kernel...), bias per output channel or null.
template <typename T>
void integer_conv(const ConvShape& s, const T* in, const T* w, const T* bias, T* out, int64_t N) {
  using U = std::make_unsigned_t<T>;
  const ConvGeometry& g = s.geometry;
  const bool transposed = s.transposed;
  const int64_t G = s.groups, Ms = s.Ms, Cb = s.Cb;
  const int64_t big_image = g.input_numel(), small_image = g.output_numel(), kernel = g.kernel_numel();
  // One (n, group) pair per task: a transposed task scatters only into its own image's group.
  parallel_for(0, N * G, 1, [&](int64_t b, int64_t e) {
    for (int64_t ng = b; ng < e; ++ng) {
      const int64_t n = ng / G, grp = ng % G;
      for (int64_t m = 0; m < Ms; ++m) {
        const int64_t small_ch = (n * G + grp) * Ms + m;
        const T* wm = w + (grp * Ms + m) * Cb * kernel;
        for (int64_t o0 = 0; o0 < g.output[0]; ++o0)
          for (int64_t o1 = 0; o1 < g.output[1]; ++o1)
            for (int64_t o2 = 0; o2 < g.output[2]; ++o2) {
              const int64_t small_at = small_ch * small_image + (o0 * g.output[1] + o1) * g.output[2] + o2;
              const U small_value = transposed ? static_cast<U>(in[small_at]) : U(0);
              U acc = 0;
              for (int64_t c = 0; c < Cb; ++c) {
                const int64_t big_ch = (n * G + grp) * Cb + c;
                const T* wc = wm + c * kernel;
                for (int64_t k0 = 0; k0 < g.kernel[0]; ++k0) {
                  const int64_t i0 = o0 * g.stride[0] - g.padding[0] + k0 * g.dilation[0];
                  if (i0 < 0 || i0 >= g.input[0]) continue;
                  for (int64_t k1 = 0; k1 < g.kernel[1]; ++k1) {
                    const int64_t i1 = o1 * g.stride[1] - g.padding[1] + k1 * g.dilation[1];
                    if (i1 < 0 || i1 >= g.input[1]) continue;
                    for (int64_t k2 = 0; k2 < g.kernel[2]; ++k2) {
                      const int64_t i2 = o2 * g.stride[2] - g.padding[2] + k2 * g.dilation[2];
                      if (i2 < 0 || i2 >= g.input[2]) continue;
                      const int64_t big_at = big_ch * big_image + (i0 * g.input[1] + i1) * g.input[2] + i2;
                      const U wv = static_cast<U>(wc[(k0 * g.kernel[1] + k1) * g.kernel[2] + k2]);
                      if (transposed) {
                        out[big_at] = static_cast<T>(static_cast<U>(out[big_at]) + small_value * wv);
                      } else {
                        acc += static_cast<U>(in[big_at]) * wv;
                      }
                    }
                  }
                }
              }
              if (!transposed) out[small_at] = static_cast<T>(bias ? acc + static_cast<U>(bias[grp * Ms + m]) : acc);
            }
      }
    }
  });
  if (transposed && bias) {
    const int64_t channels = G * Cb;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < channels; ++c) {
        T* image = out + (n * channels + c) * big_image;
        for (int64_t i = 0; i < big_image; ++i)
          image[i] = static_cast<T>(static_cast<U>(image[i]) + static_cast<U>(bias[c]));
      }
  }
}

}  // namespace

Tensor convolution_integer(const ConvShape& s, const Tensor& input, const Tensor& weight, const Tensor* bias) {
  const Tensor x = input.contiguous(), w = weight.contiguous();
  const Tensor b = bias != nullptr ? bias->contiguous() : Tensor();
  // a transposed convolution scatters into its output: start from zeros
  Tensor out = s.transposed ? zeros(s.output_sizes, input.dtype(), input.device())
                            : empty(s.output_sizes, input.dtype(), input.device());
  if (out.numel() == 0) return out;
  const int64_t N = input.size(0);
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const T* bp = b.defined() ? b.data_ptr<T>() : nullptr;
    integer_conv<T>(s, x.data_ptr<T>(), w.data_ptr<T>(), bp, out.data_ptr<T>(), N);
  };
  switch (input.dtype()) {
    case ScalarType::Byte:
      run(uint8_t{});
      break;
    case ScalarType::Char:
      run(int8_t{});
      break;
    case ScalarType::Short:
      run(int16_t{});
      break;
    case ScalarType::Int:
      run(int32_t{});
      break;
    case ScalarType::Long:
      run(int64_t{});
      break;
    default:
      EMBER_CHECK_NOT_IMPLEMENTED(false, "convolution: not implemented for dtype ", c10::toPythonName(input.dtype()));
  }
  return out;
}

}  // namespace ember::at::native
