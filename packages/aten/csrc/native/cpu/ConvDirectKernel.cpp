// CPU kernel of the direct 2-d convolution (see ../ConvDirect.h), float32 / float64.
#include <algorithm>
#include <cstring>
#include <vector>

#include <ember/aten/Parallel.h>
#include <ember/aten/vec/Vectorized.h>

#include "../ConvDirect.h"

namespace ember::at::native {
inline namespace CPU_CAPABILITY {
namespace {

using vec::Vectorized;

// Output channels per tile: 6 x 2 vector accumulators, two B vectors and a broadcast fit
// AVX2's / SSE's 16 registers; AVX-512's 32 hold 8.
constexpr int kMR = EMBER_VEC_BYTES >= 64 ? 8 : 6;
// The direct path is taken while a padded image and the packed weight stay in L2.
constexpr int64_t kImageBytes = int64_t(320) << 10;
constexpr int64_t kWeightBytes = int64_t(160) << 10;

// One tile: out[r, 0:nvalid] (r < MR, row stride L) = bias[r] + sum over (c, kh, kw) of
// w[(c, kh, kw), r] * in[c, kh, kw + 0:nvalid], the image rows of plane stride `plane`
// and row stride Wp read from `in` (the padded image at the tile's first position).
template <typename T, int MR>
void tile(const T* w, const T* in, int64_t C, int64_t kH, int64_t kW, int64_t plane, int64_t Wp, const T* bias, T* out,
          int64_t L, int64_t nvalid) {
  using V = Vectorized<T>;
  constexpr int64_t W = V::size();
  V c0[MR], c1[MR];
  for (int r = 0; r < MR; ++r) {
    c0[r] = V(bias != nullptr ? bias[r] : T(0));
    c1[r] = c0[r];
  }
  for (int64_t c = 0; c < C; ++c) {
    for (int64_t kh = 0; kh < kH; ++kh) {
      const T* row = in + c * plane + kh * Wp;
      for (int64_t kw = 0; kw < kW; ++kw, w += MR) {
        const V b0 = V::loadu(row + kw), b1 = V::loadu(row + kw + W);
        for (int r = 0; r < MR; ++r) {
          const V a(w[r]);
          c0[r] = vec::fmadd(a, b0, c0[r]);
          c1[r] = vec::fmadd(a, b1, c1[r]);
        }
      }
    }
  }
  for (int r = 0; r < MR; ++r) {
    T* o = out + r * L;
    if (nvalid == 2 * W) {
      c0[r].store(o);
      c1[r].store(o + W);
    } else if (nvalid > W) {
      c0[r].store(o);
      c1[r].store(o + W, static_cast<int>(nvalid - W));
    } else {
      c0[r].store(o, static_cast<int>(nvalid));
    }
  }
}

template <typename T>
void run_tile(int mr, const T* w, const T* in, int64_t C, int64_t kH, int64_t kW, int64_t plane, int64_t Wp,
              const T* bias, T* out, int64_t L, int64_t nvalid) {
  switch (mr) {
    case kMR:
      tile<T, kMR>(w, in, C, kH, kW, plane, Wp, bias, out, L, nvalid);
      break;
    case 4:
      tile<T, 4>(w, in, C, kH, kW, plane, Wp, bias, out, L, nvalid);
      break;
    case 2:
      tile<T, 2>(w, in, C, kH, kW, plane, Wp, bias, out, L, nvalid);
      break;
    default:
      tile<T, 1>(w, in, C, kH, kW, plane, Wp, bias, out, L, nvalid);
      break;
  }
}

// Tile heights covering K output channels: kMR as often as it fits, then 4, 2, 1.
std::vector<int> tile_rows(int64_t K) {
  std::vector<int> rows;
  int64_t left = K;
  for (int mr : {kMR, 4, 2, 1}) {
    while (left >= mr) {
      rows.push_back(mr);
      left -= mr;
    }
  }
  return rows;
}

template <typename T>
bool direct_impl(const DirectConvArgs& a) {
  using V = Vectorized<T>;
  constexpr int64_t W = V::size();
  const int64_t Hp = a.H + 2 * a.pH, Wp = a.W + 2 * a.pW, plane = Hp * Wp;
  const int64_t kdim = a.C * a.kH * a.kW;
  const int64_t threads = in_parallel_region() ? 1 : get_num_threads();
  if (a.oW < 2 * W || a.oH <= 0 || a.K <= 0 || kdim <= 0) return false;
  if (a.C * plane * static_cast<int64_t>(sizeof(T)) > kImageBytes) return false;
  if (a.K * kdim * static_cast<int64_t>(sizeof(T)) > kWeightBytes) return false;
  if (threads > 1 && a.N < threads) return false;  // one image per thread at least
  const T* x = static_cast<const T*>(a.input);
  const T* wt = static_cast<const T*>(a.weight);
  const T* bias = static_cast<const T*>(a.bias);
  T* y = static_cast<T*>(a.output);
  // packed weight: per tile, (c, kh, kw)-major with the tile's output channels interleaved
  const std::vector<int> rows = tile_rows(a.K);
  std::vector<T> packed(static_cast<size_t>(a.K * kdim));
  {
    T* dst = packed.data();
    int64_t k0 = 0;
    for (int mr : rows) {
      for (int64_t c = 0; c < a.C; ++c) {
        for (int64_t kh = 0; kh < a.kH; ++kh) {
          for (int64_t kw = 0; kw < a.kW; ++kw) {
            for (int r = 0; r < mr; ++r) {
              const int64_t k = k0 + r;
              *dst++ = a.flip_weight ? wt[((c * a.K + k) * a.kH + (a.kH - 1 - kh)) * a.kW + (a.kW - 1 - kw)]
                                     : wt[((k * a.C + c) * a.kH + kh) * a.kW + kw];
            }
          }
        }
      }
      k0 += mr;
    }
  }
  const int64_t L = a.oH * a.oW, image_in = a.C * a.H * a.W;
  // a tile's last vector may read up to 2 W - 1 elements past its row: slack at the end
  const int64_t padded_size = a.C * plane + 2 * W + a.kW;
  parallel_for(0, a.N, 1, [&](int64_t n0, int64_t n1) {
    std::vector<T> pad(static_cast<size_t>(padded_size), T(0));
    for (int64_t n = n0; n < n1; ++n) {
      const T* img = x + n * image_in;
      for (int64_t c = 0; c < a.C; ++c) {
        for (int64_t h = 0; h < a.H; ++h) {
          std::memcpy(pad.data() + c * plane + (h + a.pH) * Wp + a.pW, img + (c * a.H + h) * a.W, sizeof(T) * a.W);
        }
      }
      T* out = y + n * a.K * L;
      for (int64_t oh = 0; oh < a.oH; ++oh) {
        for (int64_t ow = 0; ow < a.oW; ow += 2 * W) {
          const int64_t nvalid = std::min(2 * W, a.oW - ow);
          const T* in = pad.data() + oh * Wp + ow;
          const T* w = packed.data();
          int64_t k0 = 0;
          for (int mr : rows) {
            run_tile<T>(mr, w, in, a.C, a.kH, a.kW, plane, Wp, bias != nullptr ? bias + k0 : nullptr,
                        out + k0 * L + oh * a.oW + ow, L, nvalid);
            w += mr * kdim;
            k0 += mr;
          }
        }
      }
    }
  });
  return true;
}

bool direct_conv_kernel(ScalarType dtype, const DirectConvArgs& args) {
  if (dtype == ScalarType::Double) return direct_impl<double>(args);
  if (dtype == ScalarType::Float) return direct_impl<float>(args);
  return false;
}

}  // namespace
}  // namespace CPU_CAPABILITY

REGISTER_DISPATCH(direct_conv_stub, &direct_conv_kernel);

}  // namespace ember::at::native
