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
// The tiles run in blocks of output channels whose packed weights stay in L2 (each block
// then streams over the image once); one tile's weights must fit.
constexpr int64_t kWeightBytes = int64_t(160) << 10;
// One output row reads kH rows of every input channel: they must stay in L1 / L2 too.
constexpr int64_t kRowsBytes = int64_t(192) << 10;
// With fewer images than threads (or a batch that does not split evenly), the threads share
// each image's output rows instead of taking whole images, when there are enough rows.
constexpr int64_t kMinRowsPerThread = 4;

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
  if (a.C * a.kH * Wp * static_cast<int64_t>(sizeof(T)) > kRowsBytes) return false;
  if (std::min<int64_t>(a.K, kMR) * kdim * static_cast<int64_t>(sizeof(T)) > kWeightBytes) return false;
  // whole images per thread when they split evenly over the threads (or are many), else
  // each image's rows shared by the threads
  const bool by_images = threads == 1 || a.N % threads == 0 || a.N >= 4 * threads;
  if (!by_images && a.oH < kMinRowsPerThread * threads) return false;
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
  // blocks of consecutive tiles, [first, end) of `rows`, whose packed weights fit kWeightBytes
  std::vector<size_t> block_ends;
  {
    int64_t bytes = 0;
    for (size_t t = 0; t < rows.size(); ++t) {
      const int64_t tb = rows[t] * kdim * static_cast<int64_t>(sizeof(T));
      if (t > 0 && bytes + tb > kWeightBytes) {
        block_ends.push_back(t);
        bytes = 0;
      }
      bytes += tb;
    }
    block_ends.push_back(rows.size());
  }
  const int64_t L = a.oH * a.oW, image_in = a.C * a.H * a.W;
  // output rows [oh0, oh1) of one image from its padded copy, block by block
  auto run_rows = [&](const T* pad, T* out, int64_t oh0, int64_t oh1) {
    const T* wb = packed.data();
    int64_t kb = 0;
    size_t first = 0;
    for (size_t end : block_ends) {
      for (int64_t oh = oh0; oh < oh1; ++oh) {
        for (int64_t ow = 0; ow < a.oW; ow += 2 * W) {
          const int64_t nvalid = std::min(2 * W, a.oW - ow);
          const T* in = pad + oh * Wp + ow;
          const T* w = wb;
          int64_t k0 = kb;
          for (size_t t = first; t < end; ++t) {
            const int mr = rows[t];
            run_tile<T>(mr, w, in, a.C, a.kH, a.kW, plane, Wp, bias != nullptr ? bias + k0 : nullptr,
                        out + k0 * L + oh * a.oW + ow, L, nvalid);
            w += mr * kdim;
            k0 += mr;
          }
        }
      }
      for (size_t t = first; t < end; ++t) {
        wb += rows[t] * kdim;
        kb += rows[t];
      }
      first = end;
    }
  };
  auto pad_image = [&](T* pad, int64_t n) {
    const T* img = x + n * image_in;
    for (int64_t c = 0; c < a.C; ++c) {
      for (int64_t h = 0; h < a.H; ++h) {
        std::memcpy(pad + c * plane + (h + a.pH) * Wp + a.pW, img + (c * a.H + h) * a.W, sizeof(T) * a.W);
      }
    }
  };
  // a tile's last vector may read up to 2 W - 1 elements past its row: slack at the end
  const int64_t padded_size = a.C * plane + 2 * W + a.kW;
  if (by_images) {
    parallel_for(0, a.N, 1, [&](int64_t n0, int64_t n1) {
      std::vector<T> pad(static_cast<size_t>(padded_size), T(0));
      for (int64_t n = n0; n < n1; ++n) {
        pad_image(pad.data(), n);
        run_rows(pad.data(), y + n * a.K * L, 0, a.oH);
      }
    });
    return true;
  }
  std::vector<T> pad(static_cast<size_t>(padded_size), T(0));
  for (int64_t n = 0; n < a.N; ++n) {
    pad_image(pad.data(), n);
    parallel_for(0, a.oH, kMinRowsPerThread,
                 [&](int64_t oh0, int64_t oh1) { run_rows(pad.data(), y + n * a.K * L, oh0, oh1); });
  }
  return true;
}

// ---- weight gradient ----------------------------------------------------------------------

// One tile of the weight gradient: for r < MR, j < NR, gw[r * kdim + t0 + j] += the sum over
// `rows` output rows oh and columns ow < oW of go[r * go_plane + oh * oW + ow] *
// b[j][oh * Wp + ow]. A row's last, partial vector loads only its own elements (the rest
// zero), so nothing past a row's end enters a sum.
template <typename T, int MR, int NR>
void weight_tile(const T* go, int64_t go_plane, const T* const* b, int64_t rows, int64_t oW, int64_t Wp, T* gw,
                 int64_t kdim, int64_t t0) {
  using V = Vectorized<T>;
  constexpr int64_t W = V::size();
  const int64_t full = oW / W * W;
  const int tail = static_cast<int>(oW - full);
  V acc[MR][NR];
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < NR; ++j) acc[r][j] = V(T(0));
  for (int64_t oh = 0; oh < rows; ++oh) {
    const T* g = go + oh * oW;
    const int64_t off = oh * Wp;
    for (int64_t ow = 0; ow < full; ow += W) {
      V p[NR];
      for (int j = 0; j < NR; ++j) p[j] = V::loadu(b[j] + off + ow);
      for (int r = 0; r < MR; ++r) {
        const V gv = V::loadu(g + r * go_plane + ow);
        for (int j = 0; j < NR; ++j) acc[r][j] = vec::fmadd(gv, p[j], acc[r][j]);
      }
    }
    if (tail > 0) {
      V p[NR];
      for (int j = 0; j < NR; ++j) p[j] = V::loadu(b[j] + off + full, tail);
      for (int r = 0; r < MR; ++r) {
        const V gv = V::loadu(g + r * go_plane + full, tail);
        for (int j = 0; j < NR; ++j) acc[r][j] = vec::fmadd(gv, p[j], acc[r][j]);
      }
    }
  }
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < NR; ++j) gw[r * kdim + t0 + j] += acc[r][j].reduce_add();
}

template <typename T, int MR>
void weight_tile_nr(int nr, const T* go, int64_t go_plane, const T* const* b, int64_t rows, int64_t oW, int64_t Wp,
                    T* gw, int64_t kdim, int64_t t0) {
  if (nr == 3) {
    weight_tile<T, MR, 3>(go, go_plane, b, rows, oW, Wp, gw, kdim, t0);
  } else if (nr == 2) {
    weight_tile<T, MR, 2>(go, go_plane, b, rows, oW, Wp, gw, kdim, t0);
  } else {
    weight_tile<T, MR, 1>(go, go_plane, b, rows, oW, Wp, gw, kdim, t0);
  }
}

// 4 x 3 accumulators, 3 image vectors and one of grad_output: 16 registers (AVX2 / SSE).
constexpr int kWeightMR = 4, kWeightNR = 3;
constexpr int64_t kBandBytes = int64_t(16) << 10;  // a tile's grad_output rows of one band, in L1

template <typename T>
bool direct_weight_impl(const DirectConvWeightArgs& a) {
  const int64_t kdim = a.C * a.kH * a.kW;
  if (a.oW < kDirectWeightMinWidth || a.oH <= 0 || a.K <= 0 || kdim <= 0) return false;
  T* gw = static_cast<T*>(a.grad_weight);
  std::fill(gw, gw + a.K * kdim, T(0));
  const int64_t Hp = a.H + 2 * a.pH, Wp = a.W + 2 * a.pW, plane = Hp * Wp;
  const int64_t L = a.oH * a.oW, image_in = a.C * a.H * a.W;
  const T* x = static_cast<const T*>(a.input);
  const T* go_all = static_cast<const T*>(a.grad_output);
  // tiles (k0, mr, t0, nr): output channels k0..k0+mr, taps t0..t0+nr of the flattened
  // (c, kh, kw); k-tile major, so a thread's consecutive tiles share grad_output rows
  struct Tile {
    int64_t k0, t0;
    int mr, nr;
  };
  std::vector<Tile> tiles;
  for (int64_t k0 = 0; k0 < a.K;) {
    const int mr = a.K - k0 >= kWeightMR ? kWeightMR : (a.K - k0 >= 2 ? 2 : 1);
    for (int64_t t0 = 0; t0 < kdim; t0 += kWeightNR) {
      tiles.push_back({k0, t0, mr, static_cast<int>(std::min<int64_t>(kWeightNR, kdim - t0))});
    }
    k0 += mr;
  }
  // tap t = (c, kh, kw) reads the padded image from c * plane + kh * Wp + kw
  std::vector<int64_t> tap_offset(static_cast<size_t>(kdim));
  for (int64_t c = 0, t = 0; c < a.C; ++c)
    for (int64_t kh = 0; kh < a.kH; ++kh)
      for (int64_t kw = 0; kw < a.kW; ++kw) tap_offset[t++] = c * plane + kh * Wp + kw;
  const int64_t band = std::max<int64_t>(1, kBandBytes / (kWeightMR * a.oW * static_cast<int64_t>(sizeof(T))));
  const int64_t ntiles = static_cast<int64_t>(tiles.size());
  const int64_t tile_work = std::max<int64_t>(1, L * kWeightMR * kWeightNR);
  std::vector<T> pad(static_cast<size_t>(a.C * plane), T(0));
  for (int64_t n = 0; n < a.N; ++n) {
    const T* img = x + n * image_in;
    for (int64_t c = 0; c < a.C; ++c) {
      for (int64_t h = 0; h < a.H; ++h) {
        std::memcpy(pad.data() + c * plane + (h + a.pH) * Wp + a.pW, img + (c * a.H + h) * a.W, sizeof(T) * a.W);
      }
    }
    const T* go = go_all + n * a.K * L;
    parallel_for(0, ntiles, std::max<int64_t>(1, GRAIN_SIZE / tile_work), [&](int64_t i0, int64_t i1) {
      for (int64_t oh0 = 0; oh0 < a.oH; oh0 += band) {
        const int64_t rows = std::min(band, a.oH - oh0);
        for (int64_t i = i0; i < i1; ++i) {
          const Tile& t = tiles[i];
          const T* b[kWeightNR];
          for (int j = 0; j < t.nr; ++j) b[j] = pad.data() + tap_offset[t.t0 + j] + oh0 * Wp;
          const T* g = go + t.k0 * L + oh0 * a.oW;
          T* out = gw + t.k0 * kdim;
          if (t.mr == kWeightMR) {
            weight_tile_nr<T, kWeightMR>(t.nr, g, L, b, rows, a.oW, Wp, out, kdim, t.t0);
          } else if (t.mr == 2) {
            weight_tile_nr<T, 2>(t.nr, g, L, b, rows, a.oW, Wp, out, kdim, t.t0);
          } else {
            weight_tile_nr<T, 1>(t.nr, g, L, b, rows, a.oW, Wp, out, kdim, t.t0);
          }
        }
      }
    });
  }
  return true;
}

bool direct_conv_weight_kernel(ScalarType dtype, const DirectConvWeightArgs& args) {
  if (dtype == ScalarType::Double) return direct_weight_impl<double>(args);
  if (dtype == ScalarType::Float) return direct_weight_impl<float>(args);
  return false;
}

bool direct_conv_kernel(ScalarType dtype, const DirectConvArgs& args) {
  if (dtype == ScalarType::Double) return direct_impl<double>(args);
  if (dtype == ScalarType::Float) return direct_impl<float>(args);
  return false;
}

}  // namespace
}  // namespace CPU_CAPABILITY

REGISTER_DISPATCH(direct_conv_stub, &direct_conv_kernel);
REGISTER_DISPATCH(direct_conv_weight_stub, &direct_conv_weight_kernel);

}  // namespace ember::at::native
