// CPU kernel of the direct 2-d convolution (see ../ConvDirect.h), float32 / float64.
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

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

// The first n <= size() lanes of p, the rest zero; nothing past p + n is read (AVX-512's
// masked loads, else Vectorized's partial copy).
template <typename T>
inline Vectorized<T> load_first(const T* p, int n) {
#if defined(__AVX512F__) && EMBER_VEC_BYTES == 64
  using VT = typename Vectorized<T>::V;
  if constexpr (std::is_same_v<T, float>) {
    return Vectorized<T>::make((VT)_mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << n) - 1), p));
  } else {
    return Vectorized<T>::make((VT)_mm512_maskz_loadu_pd(static_cast<__mmask8>((1u << n) - 1), p));
  }
#else
  return n == Vectorized<T>::size() ? Vectorized<T>::loadu(p) : Vectorized<T>::loadu(p, n);
#endif
}

// A run of output rows of one image: rows [oh0, oh0 + rows) of image n (of the images padded
// in this pass).
struct WeightSlab {
  int64_t n, oh0, rows;
};

// Where a weight tile reads: grad_output's (N, K, L) images and the padded images
// (N, C, Hp, Wp), row strides oW and Wp.
template <typename T>
struct WeightSource {
  const T* go;
  int64_t go_image, L, oW;
  const T* pad;
  int64_t pad_image, Wp;
};

// One tile of the weight gradient -- output channels k0 .. k0 + MR, taps t0 .. t0 + NR of the
// flattened (c, kh, kw) -- over a group of slabs: lane-wise sums acc[r][j] += go[k0 + r, oh,
// ow : ow + W] * pad[tap t0 + j, oh + kh, ow + kw : ...] along each slab's rows, kept in
// registers through the group, then reduced across their lanes and added to gw. A row's last,
// partial vector loads only its own elements (the rest zero), so nothing past a row's end
// enters a sum. Each gw element is one tile's, its groups added in order: its sum runs in the
// same order at any thread count.
template <typename T, int MR, int NR>
void weight_tile(const WeightSource<T>& src, const WeightSlab* slabs, int64_t nslabs, const int64_t* taps, int64_t k0,
                 T* gw, int64_t kdim, int64_t t0) {
  using V = Vectorized<T>;
  constexpr int64_t W = V::size();
  const int64_t oW = src.oW, L = src.L, Wp = src.Wp;
  // one body for every vector of a row: the last one may be partial
  const int64_t nvec = (oW + W - 1) / W;
  const int last_lanes = static_cast<int>(oW - (nvec - 1) * W);
  // (every loop over acc fully unrolled: an indexed one keeps acc in memory, a store per FMA)
  V acc[MR][NR];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int j = 0; j < NR; ++j) acc[r][j] = V(T(0));
  for (int64_t s = 0; s < nslabs; ++s) {
    const WeightSlab& sl = slabs[s];
    const T* g = src.go + sl.n * src.go_image + k0 * L + sl.oh0 * oW;
    const T* img = src.pad + sl.n * src.pad_image + sl.oh0 * Wp;
    const T* b[NR];
    for (int j = 0; j < NR; ++j) b[j] = img + taps[j];
    for (int64_t oh = 0; oh < sl.rows; ++oh, g += oW) {
      const int64_t off = oh * Wp;
      for (int64_t v = 0; v < nvec; ++v) {
        const int n = v + 1 < nvec ? static_cast<int>(W) : last_lanes;
        V p[NR];
#pragma GCC unroll 4
        for (int j = 0; j < NR; ++j) p[j] = load_first(b[j] + off + v * W, n);
#pragma GCC unroll 8
        for (int r = 0; r < MR; ++r) {
          const V gv = load_first(g + r * L + v * W, n);
#pragma GCC unroll 4
          for (int j = 0; j < NR; ++j) acc[r][j] = vec::fmadd(gv, p[j], acc[r][j]);
        }
      }
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
    for (int j = 0; j < NR; ++j) gw[(k0 + r) * kdim + t0 + j] += acc[r][j].reduce_add();
}

template <typename T, int MR>
void weight_tile_nr(int nr, const WeightSource<T>& src, const WeightSlab* slabs, int64_t nslabs, const int64_t* taps,
                    int64_t k0, T* gw, int64_t kdim, int64_t t0) {
  if (nr == 3) {
    weight_tile<T, MR, 3>(src, slabs, nslabs, taps, k0, gw, kdim, t0);
  } else if (nr == 2) {
    weight_tile<T, MR, 2>(src, slabs, nslabs, taps, k0, gw, kdim, t0);
  } else {
    weight_tile<T, MR, 1>(src, slabs, nslabs, taps, k0, gw, kdim, t0);
  }
}

// MR x 3 accumulators, 3 image vectors and one of grad_output: 8 x 3 fill AVX-512's 32
// registers (28), 4 x 3 AVX2's / SSE's 16.
constexpr int kWeightMR = EMBER_VEC_BYTES >= 64 ? 8 : 4, kWeightNR = 3;
constexpr int64_t kBandBytes = int64_t(16) << 10;    // a tile's grad_output rows of one slab, in L1
constexpr int64_t kGroupBytes = int64_t(256) << 10;  // a tile's grad_output rows of one group, in L2
constexpr int64_t kPaddedBytes = int64_t(16) << 20;  // the padded images of one pass

template <typename T>
bool direct_weight_impl(const DirectConvWeightArgs& a) {
  const int64_t kdim = a.C * a.kH * a.kW;
  if (a.oW < kDirectWeightMinWidth || a.oH <= 0 || a.K <= 0 || kdim <= 0) return false;
  T* gw = static_cast<T*>(a.grad_weight);
  std::fill(gw, gw + a.K * kdim, T(0));
  const int64_t Hp = a.H + 2 * a.pH, Wp = a.W + 2 * a.pW, plane = Hp * Wp;
  const int64_t L = a.oH * a.oW, image_in = a.C * a.H * a.W, image_pad = a.C * plane;
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
    const int64_t left = a.K - k0;
    const int mr = left >= kWeightMR ? kWeightMR : left >= 4 ? 4 : left >= 2 ? 2 : 1;
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
  const int64_t ntiles = static_cast<int64_t>(tiles.size());
  const int64_t row_bytes = kWeightMR * a.oW * static_cast<int64_t>(sizeof(T));  // a tile's grad_output row
  const int64_t band = std::max<int64_t>(1, kBandBytes / row_bytes);
  const int64_t group_rows = std::max<int64_t>(band, kGroupBytes / row_bytes);
  // passes of whole images whose padded copies fit kPaddedBytes: one parallel region each
  const int64_t pass = std::max<int64_t>(
      1, std::min<int64_t>(a.N, kPaddedBytes / std::max<int64_t>(image_pad * static_cast<int64_t>(sizeof(T)), 1)));
  std::vector<T> pad(static_cast<size_t>(pass * image_pad), T(0));
  const int64_t tile_work = std::max<int64_t>(1, a.N * L * kWeightMR * kWeightNR);
  for (int64_t n0 = 0; n0 < a.N; n0 += pass) {
    const int64_t nb = std::min(pass, a.N - n0);
    parallel_for(0, nb * a.C, std::max<int64_t>(1, GRAIN_SIZE / std::max<int64_t>(a.H * a.W, 1)),
                 [&](int64_t p0, int64_t p1) {
                   for (int64_t p = p0; p < p1; ++p) {
                     const T* src = x + n0 * image_in + p * a.H * a.W;
                     T* dst = pad.data() + p * plane + a.pH * Wp + a.pW;
                     for (int64_t h = 0; h < a.H; ++h) std::memcpy(dst + h * Wp, src + h * a.W, sizeof(T) * a.W);
                   }
                 });
    // slabs of at most `band` rows, image by image; groups of slabs of at most group_rows rows
    std::vector<WeightSlab> slabs;
    std::vector<size_t> group_ends;
    int64_t rows_in_group = 0;
    for (int64_t n = 0; n < nb; ++n) {
      for (int64_t oh0 = 0; oh0 < a.oH; oh0 += band) {
        const int64_t rows = std::min(band, a.oH - oh0);
        if (rows_in_group > 0 && rows_in_group + rows > group_rows) {
          group_ends.push_back(slabs.size());
          rows_in_group = 0;
        }
        slabs.push_back({n, oh0, rows});
        rows_in_group += rows;
      }
    }
    group_ends.push_back(slabs.size());
    const WeightSource<T> src{go_all + n0 * a.K * L, a.K * L, L, a.oW, pad.data(), image_pad, Wp};
    parallel_for(0, ntiles, std::max<int64_t>(1, GRAIN_SIZE / tile_work), [&](int64_t i0, int64_t i1) {
      size_t s0 = 0;
      for (size_t gi = 0; gi < group_ends.size(); ++gi) {
        const size_t s1 = group_ends[gi];
        for (int64_t i = i0; i < i1; ++i) {
          const Tile& t = tiles[i];
          const int64_t* taps = tap_offset.data() + t.t0;
          const WeightSlab* sl = slabs.data() + s0;
          const int64_t ns = static_cast<int64_t>(s1 - s0);
          if (t.mr == kWeightMR) {
            weight_tile_nr<T, kWeightMR>(t.nr, src, sl, ns, taps, t.k0, gw, kdim, t.t0);
          } else if (t.mr == 4) {
            weight_tile_nr<T, 4>(t.nr, src, sl, ns, taps, t.k0, gw, kdim, t.t0);
          } else if (t.mr == 2) {
            weight_tile_nr<T, 2>(t.nr, src, sl, ns, taps, t.k0, gw, kdim, t.t0);
          } else {
            weight_tile_nr<T, 1>(t.nr, src, sl, ns, taps, t.k0, gw, kdim, t.t0);
          }
        }
        s0 = s1;
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
