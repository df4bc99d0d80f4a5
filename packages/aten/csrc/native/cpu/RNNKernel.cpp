// CPU kernels of the fused LSTM / GRU cells and layers (RNN.h): the gate arithmetic of one
// time step in one pass over the step's rows, and the whole recurrence of a layer for
// float32 / float64 (the per-step GEMM through gemm_cpu, then the cell on raw pointers).
// The math is written once over a type V that is either one opmath_t value (double, half
// and bfloat16, and the tail of a float row) or a Vectorized<float> (the body of a float row).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <type_traits>
#include <vector>

#include <ember/aten/Dispatch.h>
#include <ember/aten/Parallel.h>
#include <ember/aten/vec/Vectorized.h>

#include "../Blas.h"  // gemm_cpu
#include "../RNN.h"

namespace ember::at::native {
inline namespace CPU_CAPABILITY {
namespace {

using VecF = vec::Vectorized<float>;
using VF = VecF::V;
typedef int32_t VI __attribute__((vector_size(EMBER_VEC_BYTES)));

// ---- activations ------------------------------------------------------------------------------
// The cell's float lanes take five exponentials per hidden unit, so their exp is vec::exp
// without its edge handling: on [-87, 88] 2^n stays a normal float, one scaling suffices and
// nothing overflows. sigmoid and tanh clamp their argument into that range first, where the
// result has already rounded to its limit (0 or 1 within float's absolute precision, +-1),
// so they keep vec::sigmoid / vec::tanh's ~1 ulp. NaN passes through every step.

// e^x for x in [-87, 88] (or NaN): x = n ln2 + r, Cephes' degree-6 polynomial for e^r.
inline VF exp_in_range(VF x) {
  const VF t = x * 1.44269504088896341f + 12582912.0f;  // + 1.5 * 2^23 rounds to an integer
  const VF n = t - 12582912.0f;
  VF r = x - n * 0.693359375f;  // ln2 in a part exact in float and the rest
  r = r - n * -2.12194440e-4f;
  VF p = vec::exp_reduced(r);
  const VI bits = (__builtin_convertvector(n, VI) + 127) << 23;  // 2^n, n in [-126, 127]
  VF scale;
  std::memcpy(&scale, &bits, sizeof(VF));
  return p * scale;
}

// (lane selects written as vector ?: compile to min / max / blends; a NaN lane keeps x)
inline VF clamp_(VF x, float lo, float hi) {
  x = x > hi ? VF{} + hi : x;
  return x < lo ? VF{} + lo : x;
}

template <typename A>
inline A sigmoid_(A x) {
  return A(1) / (A(1) + std::exp(-x));
}
// sigmoid(x) for x < -88 is below 6.1e-39 (returned as that bound), for x > 87 it is 1.
inline VecF sigmoid_(VecF x) { return VecF::make(1.0f / (1.0f + exp_in_range(clamp_(-x.v, -87.0f, 88.0f)))); }

template <typename A>
inline A tanh_(A x) {
  return std::tanh(x);
}
// vec::tanh's formulas: Cephes' odd polynomial below |x| = 0.625, 1 - 2 / (e^2|x| + 1) above
// (tanh(10) already rounds to 1), x's sign put back (tanh(-0) = -0).
inline VecF tanh_(VecF x) {
  const VF xin = x.v;
  const VF ax = vec::abs(x).v;
  const VF s = xin * xin;
  VF p = s * -5.70498872745E-3f + 2.06390887954E-2f;
  p = p * s - 5.37397155531E-2f;
  p = p * s + 1.33314422036E-1f;
  p = p * s - 3.33332819422E-1f;
  const VF small = xin + (xin * s) * p;
  const VF e = exp_in_range(clamp_(ax + ax, 0.0f, 20.0f));
  const VF big = 1.0f - 2.0f / (e + 1.0f);
  const VF r = ax < 0.625f ? small : big;
  const VI sign = (VI)xin & static_cast<int32_t>(0x80000000u);
  return VecF::make((VF)(((VI)r & 0x7fffffff) | sign));
}

// ---- the per-element math, shared by the vector body and the scalar tail ----------------------

template <typename V>
struct LstmForward {
  V i, f, g, o, c, h;
  // gi*, gh*: the two halves of each gate's pre-activation (input and hidden projections)
  LstmForward(V gi, V gf, V gg, V go, V c_prev) {
    i = sigmoid_(gi);
    f = sigmoid_(gf);
    g = tanh_(gg);
    o = sigmoid_(go);
    c = f * c_prev + i * g;
    h = o * tanh_(c);
  }
};

template <typename V>
struct LstmBackward {
  V di, df, dg, do_, dc_prev;
  // i, f, g, o: activated gates; dh, dc: gradients of the step's h and c
  LstmBackward(V i, V f, V g, V o, V c_prev, V dh, V dc) {
    const V one(1);
    const V tc = tanh_(f * c_prev + i * g);
    const V dct = dc + dh * o * (one - tc * tc);
    di = dct * g * i * (one - i);
    df = dct * c_prev * f * (one - f);
    dg = dct * i * (one - g * g);
    do_ = dh * tc * o * (one - o);
    dc_prev = dct * f;
  }
};

template <typename V>
struct GruForward {
  V r, z, n, hn, h;
  // i*: input gates (b_ih in); h*: h_prev W_hh^T + b_hh
  GruForward(V ir, V iz, V in, V hr, V hz, V hn_, V h_prev) {
    r = sigmoid_(ir + hr);
    z = sigmoid_(iz + hz);
    hn = hn_;
    n = tanh_(in + r * hn);
    h = n + z * (h_prev - n);
  }
};

template <typename V>
struct GruBackward {
  V dr, dz, dn, dhn, dh_prev;  // dr, dz, dn: pre-activation gradients; dhn: of h_prev W_hn^T + b_hn
  GruBackward(V r, V z, V n, V hn, V h_prev, V dh) {
    const V one(1);
    dn = dh * (one - z) * (one - n * n);
    dz = dh * (h_prev - n) * z * (one - z);
    dr = dn * hn * r * (one - r);
    dhn = dn * r;
    dh_prev = dh * z;
  }
};

// ---- loads and stores: T in memory, V in registers ---------------------------------------------

template <typename T>
inline opmath_t<T> ld(const T* p) {
  return static_cast<opmath_t<T>>(*p);
}
template <typename T, typename A>
inline void st(T* p, A v) {
  *p = static_cast<T>(v);
}
inline VecF ldv(const float* p) { return VecF::loadu(p); }
inline void stv(float* p, VecF v) { v.store(p); }

// The vector body of a row (float only): columns [0, stop) in VecF steps; returns stop.
template <typename T>
inline int64_t vec_stop(int64_t H) {
  if constexpr (std::is_same_v<T, float>) return H - H % VecF::size();
  return 0;
}

// ---- one step over rows [r0, r1): row r of each matrix starts at p + r * l ---------------------
// A null ws saves nothing (inference). gh may be ws itself (its first 4H columns): every
// column is read before it is written.

template <typename T>
struct LstmRows {
  const T* gi;
  int64_t lgi;
  const T* gh;
  int64_t lgh;
  T *h, *c, *out, *ws;
  int64_t lh, lc, lo, lw;
};

template <typename T, bool kSave>
void lstm_rows_saving(const LstmRows<T>& a, int64_t H, int64_t r0, int64_t r1) {
  const int64_t stop = vec_stop<T>(H);
  for (int64_t r = r0; r < r1; ++r) {
    const T* x = a.gi + r * a.lgi;
    const T* y = a.gh + r * a.lgh;
    T* hr = a.h + r * a.lh;
    T* cr = a.c + r * a.lc;
    T* orow = a.out + r * a.lo;
    T* w = kSave ? a.ws + r * a.lw : nullptr;
    int64_t j = 0;
    if constexpr (std::is_same_v<T, float>) {
      for (; j < stop; j += VecF::size()) {
        const VecF hp = ldv(hr + j), cp = ldv(cr + j);
        LstmForward<VecF> s(ldv(x + j) + ldv(y + j), ldv(x + H + j) + ldv(y + H + j),
                            ldv(x + 2 * H + j) + ldv(y + 2 * H + j), ldv(x + 3 * H + j) + ldv(y + 3 * H + j), cp);
        if constexpr (kSave) {
          stv(w + j, s.i);
          stv(w + H + j, s.f);
          stv(w + 2 * H + j, s.g);
          stv(w + 3 * H + j, s.o);
          stv(w + 4 * H + j, hp);
          stv(w + 5 * H + j, cp);
        }
        stv(cr + j, s.c);
        stv(hr + j, s.h);
        stv(orow + j, s.h);
      }
    }
    for (; j < H; ++j) {
      const auto hp = ld(hr + j), cp = ld(cr + j);
      LstmForward<opmath_t<T>> s(ld(x + j) + ld(y + j), ld(x + H + j) + ld(y + H + j),
                                 ld(x + 2 * H + j) + ld(y + 2 * H + j), ld(x + 3 * H + j) + ld(y + 3 * H + j), cp);
      if constexpr (kSave) {
        st(w + j, s.i);
        st(w + H + j, s.f);
        st(w + 2 * H + j, s.g);
        st(w + 3 * H + j, s.o);
        st(w + 4 * H + j, hp);
        st(w + 5 * H + j, cp);
      }
      st(cr + j, s.c);
      st(hr + j, s.h);
      st(orow + j, s.h);
    }
  }
}

template <typename T>
void lstm_rows(const LstmRows<T>& a, int64_t H, int64_t r0, int64_t r1) {
  if (a.ws) {
    lstm_rows_saving<T, true>(a, H, r0, r1);
  } else {
    lstm_rows_saving<T, false>(a, H, r0, r1);
  }
}

template <typename T>
struct LstmBackRows {
  const T* ws;
  const T* go;  // null: no gradient of the outputs
  T *dh, *dc, *dg;
  int64_t lw, lg, ldh, ldc, ldg;
};

template <typename T>
void lstm_back_rows(const LstmBackRows<T>& a, int64_t H, int64_t r0, int64_t r1) {
  const int64_t stop = vec_stop<T>(H);
  for (int64_t r = r0; r < r1; ++r) {
    const T* w = a.ws + r * a.lw;
    const T* go = a.go ? a.go + r * a.lg : nullptr;
    T* dhr = a.dh + r * a.ldh;
    T* dcr = a.dc + r * a.ldc;
    T* dg = a.dg + r * a.ldg;
    int64_t j = 0;
    if constexpr (std::is_same_v<T, float>) {
      for (; j < stop; j += VecF::size()) {
        VecF dhv = ldv(dhr + j);
        if (go) dhv = dhv + ldv(go + j);
        LstmBackward<VecF> s(ldv(w + j), ldv(w + H + j), ldv(w + 2 * H + j), ldv(w + 3 * H + j), ldv(w + 5 * H + j),
                             dhv, ldv(dcr + j));
        stv(dg + j, s.di);
        stv(dg + H + j, s.df);
        stv(dg + 2 * H + j, s.dg);
        stv(dg + 3 * H + j, s.do_);
        stv(dcr + j, s.dc_prev);
      }
    }
    for (; j < H; ++j) {
      auto dhv = ld(dhr + j);
      if (go) dhv += ld(go + j);
      LstmBackward<opmath_t<T>> s(ld(w + j), ld(w + H + j), ld(w + 2 * H + j), ld(w + 3 * H + j), ld(w + 5 * H + j),
                                  dhv, ld(dcr + j));
      st(dg + j, s.di);
      st(dg + H + j, s.df);
      st(dg + 2 * H + j, s.dg);
      st(dg + 3 * H + j, s.do_);
      st(dcr + j, s.dc_prev);
    }
  }
}

template <typename T>
struct GruRows {
  const T *gi, *gh, *b;  // b: b_hh (3H) or null
  T *h, *out, *ws;
  int64_t lgi, lgh, lh, lo, lw;
};

template <typename T, bool kSave>
void gru_rows_saving(const GruRows<T>& a, int64_t H, int64_t r0, int64_t r1) {
  using A = opmath_t<T>;
  const int64_t stop = vec_stop<T>(H);
  const T* b = a.b;
  for (int64_t r = r0; r < r1; ++r) {
    const T* x = a.gi + r * a.lgi;
    const T* y = a.gh + r * a.lgh;
    T* hr = a.h + r * a.lh;
    T* orow = a.out + r * a.lo;
    T* w = kSave ? a.ws + r * a.lw : nullptr;
    int64_t j = 0;
    if constexpr (std::is_same_v<T, float>) {
      for (; j < stop; j += VecF::size()) {
        VecF hr_ = ldv(y + j), hz = ldv(y + H + j), hn = ldv(y + 2 * H + j);
        if (b) {
          hr_ = hr_ + ldv(b + j);
          hz = hz + ldv(b + H + j);
          hn = hn + ldv(b + 2 * H + j);
        }
        const VecF hp = ldv(hr + j);
        GruForward<VecF> s(ldv(x + j), ldv(x + H + j), ldv(x + 2 * H + j), hr_, hz, hn, hp);
        if constexpr (kSave) {
          stv(w + j, s.r);
          stv(w + H + j, s.z);
          stv(w + 2 * H + j, s.n);
          stv(w + 3 * H + j, s.hn);
          stv(w + 4 * H + j, hp);
        }
        stv(hr + j, s.h);
        stv(orow + j, s.h);
      }
    }
    for (; j < H; ++j) {
      A hr_ = ld(y + j), hz = ld(y + H + j), hn = ld(y + 2 * H + j);
      if (b) {
        hr_ += ld(b + j);
        hz += ld(b + H + j);
        hn += ld(b + 2 * H + j);
      }
      const A hp = ld(hr + j);
      GruForward<A> s(ld(x + j), ld(x + H + j), ld(x + 2 * H + j), hr_, hz, hn, hp);
      if constexpr (kSave) {
        st(w + j, s.r);
        st(w + H + j, s.z);
        st(w + 2 * H + j, s.n);
        st(w + 3 * H + j, s.hn);
        st(w + 4 * H + j, hp);
      }
      st(hr + j, s.h);
      st(orow + j, s.h);
    }
  }
}

template <typename T>
void gru_rows(const GruRows<T>& a, int64_t H, int64_t r0, int64_t r1) {
  if (a.ws) {
    gru_rows_saving<T, true>(a, H, r0, r1);
  } else {
    gru_rows_saving<T, false>(a, H, r0, r1);
  }
}

template <typename T>
struct GruBackRows {
  const T* ws;
  const T* go;  // null: no gradient of the outputs
  T *dh, *dgi, *dgh;
  int64_t lw, lg, ldh, ldi, ldgh;
};

template <typename T>
void gru_back_rows(const GruBackRows<T>& a, int64_t H, int64_t r0, int64_t r1) {
  const int64_t stop = vec_stop<T>(H);
  for (int64_t r = r0; r < r1; ++r) {
    const T* w = a.ws + r * a.lw;
    const T* go = a.go ? a.go + r * a.lg : nullptr;
    T* dhr = a.dh + r * a.ldh;
    T* di = a.dgi + r * a.ldi;
    T* dy = a.dgh + r * a.ldgh;
    int64_t j = 0;
    if constexpr (std::is_same_v<T, float>) {
      for (; j < stop; j += VecF::size()) {
        VecF dhv = ldv(dhr + j);
        if (go) dhv = dhv + ldv(go + j);
        GruBackward<VecF> s(ldv(w + j), ldv(w + H + j), ldv(w + 2 * H + j), ldv(w + 3 * H + j), ldv(w + 4 * H + j),
                            dhv);
        stv(di + j, s.dr);
        stv(di + H + j, s.dz);
        stv(di + 2 * H + j, s.dn);
        stv(dy + j, s.dr);
        stv(dy + H + j, s.dz);
        stv(dy + 2 * H + j, s.dhn);
        stv(dhr + j, s.dh_prev);
      }
    }
    for (; j < H; ++j) {
      auto dhv = ld(dhr + j);
      if (go) dhv += ld(go + j);
      GruBackward<opmath_t<T>> s(ld(w + j), ld(w + H + j), ld(w + 2 * H + j), ld(w + 3 * H + j), ld(w + 4 * H + j),
                                 dhv);
      st(di + j, s.dr);
      st(di + H + j, s.dz);
      st(di + 2 * H + j, s.dn);
      st(dy + j, s.dr);
      st(dy + H + j, s.dz);
      st(dy + 2 * H + j, s.dhn);
      st(dhr + j, s.dh_prev);
    }
  }
}

// ---- the cell stubs (RNN.h): one step over Tensors ---------------------------------------------

// Runs f(r0, r1) over [0, rows): in parallel when the step is large enough to pay for a
// region (each element costs a few transcendental functions: ~8 flops of GRAIN_SIZE's).
// Inside a parallel region (a layer's row block) it runs on the calling thread.
template <typename F>
void for_rows(int64_t rows, int64_t H, const F& f) {
  const int64_t grain = std::max<int64_t>(1, GRAIN_SIZE / (8 * std::max<int64_t>(H, 1)));
  parallel_for(0, rows, grain, f);
}

template <typename T>
T* ptr(const Tensor& t) {
  return t.defined() ? t.data_ptr<T>() : nullptr;
}
int64_t ld_of(const Tensor& t) { return t.defined() ? t.stride(0) : 0; }

template <typename T>
void lstm_cell_impl(const Tensor& gi, const Tensor& gh, const Tensor& h, const Tensor& c, const Tensor& out,
                    const Tensor& ws) {
  const int64_t H = h.size(1);
  const LstmRows<T> a{gi.data_ptr<T>(),  gi.stride(0), gh.data_ptr<T>(), gh.stride(0), h.data_ptr<T>(), c.data_ptr<T>(),
                      out.data_ptr<T>(), ptr<T>(ws),   h.stride(0),      c.stride(0),  out.stride(0),   ld_of(ws)};
  for_rows(h.size(0), H, [&](int64_t r0, int64_t r1) { lstm_rows(a, H, r0, r1); });
}

template <typename T>
void lstm_cell_backward_impl(const Tensor& ws, const Tensor& grad_out, const Tensor& dh, const Tensor& dc,
                             const Tensor& dgates) {
  const int64_t H = dh.size(1);
  const LstmBackRows<T> a{ws.data_ptr<T>(), ptr<T>(grad_out), dh.data_ptr<T>(), dc.data_ptr<T>(), dgates.data_ptr<T>(),
                          ws.stride(0),     ld_of(grad_out),  dh.stride(0),     dc.stride(0),     dgates.stride(0)};
  for_rows(dh.size(0), H, [&](int64_t r0, int64_t r1) { lstm_back_rows(a, H, r0, r1); });
}

template <typename T>
void gru_cell_impl(const Tensor& gi, const Tensor& gh, const Tensor& b_hh, const Tensor& h, const Tensor& out,
                   const Tensor& ws) {
  const int64_t H = h.size(1);
  const GruRows<T> a{gi.data_ptr<T>(), gh.data_ptr<T>(), ptr<T>(b_hh), h.data_ptr<T>(), out.data_ptr<T>(), ptr<T>(ws),
                     gi.stride(0),     gh.stride(0),     h.stride(0),  out.stride(0),   ld_of(ws)};
  for_rows(h.size(0), H, [&](int64_t r0, int64_t r1) { gru_rows(a, H, r0, r1); });
}

template <typename T>
void gru_cell_backward_impl(const Tensor& ws, const Tensor& grad_out, const Tensor& dh, const Tensor& dgi,
                            const Tensor& dgh) {
  const int64_t H = dh.size(1);
  const GruBackRows<T> a{ws.data_ptr<T>(), ptr<T>(grad_out), dh.data_ptr<T>(), dgi.data_ptr<T>(), dgh.data_ptr<T>(),
                         ws.stride(0),     ld_of(grad_out),  dh.stride(0),     dgi.stride(0),     dgh.stride(0)};
  for_rows(dh.size(0), H, [&](int64_t r0, int64_t r1) { gru_back_rows(a, H, r0, r1); });
}

// ---- the step's product h_prev W_hh^T, float32: W_hh packed once per layer -------------------
// OpenBLAS packs its operands into panels on every call, i.e. T times per layer for one W_hh,
// and a step's product (rows x G x H, rows <= the batch) is small enough for that to cost a
// quarter of it. Here W_hh^T is packed once into column panels of kPanelCols (kPanelVecs
// vectors) and every step multiplies against the panels: a register tile of kTileRows rows
// x kPanelCols columns accumulates over k in one pass (a broadcast of h_prev's element times
// the panel's row), then is stored. Each column is a plain sum over k in order, so the
// result does not depend on the number of threads or on how the rows are blocked.

constexpr int kPanelVecs = VecF::size() >= 16 ? 2 : 3;  // AVX-512: 8 x 2 zmm tiles; else 4 x 3
constexpr int kTileRows = VecF::size() >= 16 ? 8 : 4;
constexpr int64_t kPanelCols = int64_t{kPanelVecs} * VecF::size();

// op(B) = w^T for w (n, k) row-major, as panels of kPanelCols columns (the last zero-padded):
// panel p holds k rows of kPanelCols floats.
struct PackedWeights {
  std::vector<float> data;
  int64_t n = 0, k = 0, panels = 0;

  PackedWeights(const float* w, int64_t n_, int64_t k_) : n(n_), k(k_), panels(divup(n_, kPanelCols)) {
    data.assign(static_cast<size_t>(panels * k * kPanelCols), 0.0f);
    parallel_for(0, panels, 1, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        float* dst = data.data() + p * k * kPanelCols;
        for (int64_t col = p * kPanelCols; col < std::min(n, (p + 1) * kPanelCols); ++col) {
          const float* src = w + col * k;
          const int64_t c = col - p * kPanelCols;
          for (int64_t kk = 0; kk < k; ++kk) dst[kk * kPanelCols + c] = src[kk];
        }
      }
    });
  }
};

// c[R rows, cols] = a[R rows, k] @ panel (cols <= kPanelCols valid columns)
template <int R>
void packed_tile(const float* a, int64_t lda, const float* panel, int64_t k, float* c, int64_t ldc, int64_t cols) {
  constexpr int L = VecF::size();
  VecF acc[R][kPanelVecs];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < kPanelVecs; ++v) acc[r][v] = VecF(0.0f);
  for (int64_t kk = 0; kk < k; ++kk) {
    const float* pk = panel + kk * kPanelCols;
    VecF b[kPanelVecs];
#pragma GCC unroll 4
    for (int v = 0; v < kPanelVecs; ++v) b[v] = VecF::loadu(pk + v * L);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const VecF x(a[r * lda + kk]);
#pragma GCC unroll 4
      for (int v = 0; v < kPanelVecs; ++v) acc[r][v] = vec::fmadd(x, b[v], acc[r][v]);
    }
  }
  for (int r = 0; r < R; ++r) {
    float* cr = c + r * ldc;
    if (cols == kPanelCols) {
      for (int v = 0; v < kPanelVecs; ++v) acc[r][v].store(cr + v * L);
    } else {
      for (int v = 0; v < kPanelVecs && v * L < cols; ++v) {
        acc[r][v].store(cr + v * L, static_cast<int>(std::min<int64_t>(L, cols - v * L)));
      }
    }
  }
}

// the last m % kTileRows rows: one tile of exactly that many
template <int R>
void packed_tail(int64_t rows, const float* a, int64_t lda, const float* panel, int64_t k, float* c, int64_t ldc,
                 int64_t cols) {
  if constexpr (R > 0) {
    if (rows == R) {
      packed_tile<R>(a, lda, panel, k, c, ldc, cols);
    } else {
      packed_tail<R - 1>(rows, a, lda, panel, k, c, ldc, cols);
    }
  }
}

// c (m, n) = a (m, k) @ w^T, c only written
void packed_gemm(const PackedWeights& w, int64_t m, const float* a, int64_t lda, float* c, int64_t ldc) {
  for (int64_t p = 0; p < w.panels; ++p) {
    const float* panel = w.data.data() + p * w.k * kPanelCols;
    const int64_t col = p * kPanelCols, cols = std::min(kPanelCols, w.n - col);
    int64_t i = 0;
    for (; i + kTileRows <= m; i += kTileRows) {
      packed_tile<kTileRows>(a + i * lda, lda, panel, w.k, c + i * ldc + col, ldc, cols);
    }
    packed_tail<kTileRows - 1>(m - i, a + i * lda, lda, panel, w.k, c + i * ldc + col, ldc, cols);
  }
}

// The step's product c (m, n) = h (m, k) @ w^T: against packed weights for float32 over
// several steps (one step, a cell, would pack W_hh for a single use), else gemm_cpu.
template <typename T>
struct StepProduct {
  const T* w;
  int64_t n, k;
  std::optional<PackedWeights> packed;
  StepProduct(const T* w_, int64_t n_, int64_t k_, int64_t steps) : w(w_), n(n_), k(k_) {
    if constexpr (std::is_same_v<T, float>) {
      if (steps > 1) packed.emplace(w_, n_, k_);
    }
    (void)steps;
  }
  void operator()(int64_t m, const T* h, T* c, int64_t ldc) const {
    if constexpr (std::is_same_v<T, float>) {
      if (packed) {
        packed_gemm(*packed, m, h, k, c, ldc);
        return;
      }
    }
    gemm_cpu(false, true, m, n, k, T(1), h, k, w, k, T(0), c, ldc);
  }
};

// ---- whole layers, float32 / float64 (RNN.h) ---------------------------------------------------

// A layer runs on one thread (its GEMMs and cells then split themselves when large) unless
// each step's GEMM has this many multiply-adds and every thread gets kMinBlockRows rows.
constexpr int64_t kRowBlockWork = int64_t{1} << 16;
constexpr int64_t kMinBlockRows = 4;

// Runs run(r0, r1) -- every step of batch rows [r0, r1) -- for blocks of the B rows.
template <typename F>
void for_row_blocks(int64_t B, int64_t step_work, const F& run) {
  const int64_t threads = in_parallel_region() ? 1 : get_num_threads();
  const int64_t blocks = step_work >= kRowBlockWork ? std::min<int64_t>(threads, B / kMinBlockRows) : 1;
  if (blocks <= 1) {
    run(0, B);
    return;
  }
  const int64_t rows = divup(B, blocks);
  parallel_for(0, blocks, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) run(b * rows, std::min(B, (b + 1) * rows));
  });
}

// Step t's rows of the block [r0, r1): the block's row count there (<= 0: none) and the
// data row of its first one.
struct BlockStep {
  int64_t rows, first;
};
inline BlockStep block_step(const RnnSteps& st, int64_t t, int64_t r0, int64_t r1) {
  return {std::min(r1, st.sizes[t]) - r0, st.offsets[t] + r0};
}
inline int64_t step_at(const RnnSteps& st, int64_t k) {
  const int64_t n = static_cast<int64_t>(st.sizes.size());
  return st.reverse ? n - 1 - k : k;
}

// Runs step(s) for each step where the block [r0, r1) has rows, in the layer's order (the
// backward pass: the reverse of it).
template <typename F>
void for_block_steps(const RnnSteps& st, int64_t r0, int64_t r1, bool backward, const F& step) {
  const int64_t n = static_cast<int64_t>(st.sizes.size());
  for (int64_t i = 0; i < n; ++i) {
    const BlockStep s = block_step(st, step_at(st, backward ? n - 1 - i : i), r0, r1);
    if (s.rows > 0) step(s);
  }
}

template <typename T>
void lstm_layer_impl(const Tensor& input_gates, const Tensor& w_hh, const Tensor& h, const Tensor& c,
                     const Tensor& output, const Tensor& ws, const RnnSteps& st) {
  const int64_t B = h.size(0), H = h.size(1), G = 4 * H, W = 6 * H;
  const T* gi = input_gates.data_ptr<T>();
  const T* w = w_hh.data_ptr<T>();
  T* hs = h.data_ptr<T>();
  T* cs = c.data_ptr<T>();
  T* out = output.data_ptr<T>();
  T* wsp = ptr<T>(ws);
  const StepProduct<T> product(w, G, H, static_cast<int64_t>(st.sizes.size()));
  for_row_blocks(B, B * G * H, [&](int64_t r0, int64_t r1) {
    // h_prev W_hh^T of a step, when there is no workspace to hold it
    std::vector<T> scratch(wsp ? 0 : static_cast<size_t>((r1 - r0) * G));
    for_block_steps(st, r0, r1, false, [&](const BlockStep& s) {
      T* gh = wsp ? wsp + s.first * W : scratch.data();
      const int64_t lgh = wsp ? W : G;
      product(s.rows, hs + r0 * H, gh, lgh);
      const LstmRows<T> a{gi + s.first * G,
                          G,
                          gh,
                          lgh,
                          hs + r0 * H,
                          cs + r0 * H,
                          out + s.first * H,
                          wsp ? wsp + s.first * W : nullptr,
                          H,
                          H,
                          H,
                          W};
      for_rows(s.rows, H, [&](int64_t i0, int64_t i1) { lstm_rows(a, H, i0, i1); });
    });
  });
}

template <typename T>
void lstm_layer_backward_impl(const Tensor& grad_output, const Tensor& w_hh, const Tensor& ws, const Tensor& dh,
                              const Tensor& dc, const Tensor& dgates, const RnnSteps& st) {
  const int64_t B = dh.size(0), H = dh.size(1), G = 4 * H, W = 6 * H;
  const T* go = ptr<T>(grad_output);
  const T* w = w_hh.data_ptr<T>();
  const T* wsp = ws.data_ptr<T>();
  T* dhs = dh.data_ptr<T>();
  T* dcs = dc.data_ptr<T>();
  T* dg = dgates.data_ptr<T>();
  for_row_blocks(B, B * G * H, [&](int64_t r0, int64_t r1) {
    for_block_steps(st, r0, r1, true, [&](const BlockStep& s) {
      const LstmBackRows<T> a{wsp + s.first * W,
                              go ? go + s.first * H : nullptr,
                              dhs + r0 * H,
                              dcs + r0 * H,
                              dg + s.first * G,
                              W,
                              H,
                              H,
                              H,
                              G};
      for_rows(s.rows, H, [&](int64_t i0, int64_t i1) { lstm_back_rows(a, H, i0, i1); });
      gemm_cpu(false, false, s.rows, H, G, T(1), dg + s.first * G, G, w, H, T(0), dhs + r0 * H, H);
    });
  });
}

template <typename T>
void gru_layer_impl(const Tensor& input_gates, const Tensor& w_hh, const Tensor& b_hh, const Tensor& h,
                    const Tensor& output, const Tensor& ws, const RnnSteps& st) {
  const int64_t B = h.size(0), H = h.size(1), G = 3 * H, W = 5 * H;
  const T* gi = input_gates.data_ptr<T>();
  const T* w = w_hh.data_ptr<T>();
  const T* b = ptr<T>(b_hh);
  T* hs = h.data_ptr<T>();
  T* out = output.data_ptr<T>();
  T* wsp = ptr<T>(ws);
  const StepProduct<T> product(w, G, H, static_cast<int64_t>(st.sizes.size()));
  for_row_blocks(B, B * G * H, [&](int64_t r0, int64_t r1) {
    std::vector<T> gh(static_cast<size_t>((r1 - r0) * G));  // h_prev W_hh^T of a step
    for_block_steps(st, r0, r1, false, [&](const BlockStep& s) {
      product(s.rows, hs + r0 * H, gh.data(), G);
      const GruRows<T> a{gi + s.first * G,
                         gh.data(),
                         b,
                         hs + r0 * H,
                         out + s.first * H,
                         wsp ? wsp + s.first * W : nullptr,
                         G,
                         G,
                         H,
                         H,
                         W};
      for_rows(s.rows, H, [&](int64_t i0, int64_t i1) { gru_rows(a, H, i0, i1); });
    });
  });
}

template <typename T>
void gru_layer_backward_impl(const Tensor& grad_output, const Tensor& w_hh, const Tensor& ws, const Tensor& dh,
                             const Tensor& dgi, const Tensor& dgh, const RnnSteps& st) {
  const int64_t B = dh.size(0), H = dh.size(1), G = 3 * H, W = 5 * H;
  const T* go = ptr<T>(grad_output);
  const T* w = w_hh.data_ptr<T>();
  const T* wsp = ws.data_ptr<T>();
  T* dhs = dh.data_ptr<T>();
  T* di = dgi.data_ptr<T>();
  T* dy = dgh.data_ptr<T>();
  for_row_blocks(B, B * G * H, [&](int64_t r0, int64_t r1) {
    for_block_steps(st, r0, r1, true, [&](const BlockStep& s) {
      const GruBackRows<T> a{wsp + s.first * W,
                             go ? go + s.first * H : nullptr,
                             dhs + r0 * H,
                             di + s.first * G,
                             dy + s.first * G,
                             W,
                             H,
                             H,
                             G,
                             G};
      for_rows(s.rows, H, [&](int64_t i0, int64_t i1) { gru_back_rows(a, H, i0, i1); });
      gemm_cpu(false, false, s.rows, H, G, T(1), dy + s.first * G, G, w, H, T(1), dhs + r0 * H, H);
    });
  });
}

// ---- dispatch ----------------------------------------------------------------------------------

void lstm_cell_kernel(const Tensor& gi, const Tensor& gh, const Tensor& h, const Tensor& c, const Tensor& out,
                      const Tensor& ws) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(h.dtype(), "lstm_cell",
                                         [&] { lstm_cell_impl<scalar_t>(gi, gh, h, c, out, ws); });
}
void lstm_cell_backward_kernel(const Tensor& ws, const Tensor& grad_out, const Tensor& dh, const Tensor& dc,
                               const Tensor& dgates) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(dh.dtype(), "lstm_cell_backward",
                                         [&] { lstm_cell_backward_impl<scalar_t>(ws, grad_out, dh, dc, dgates); });
}
void gru_cell_kernel(const Tensor& gi, const Tensor& gh, const Tensor& b_hh, const Tensor& h, const Tensor& out,
                     const Tensor& ws) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(h.dtype(), "gru_cell",
                                         [&] { gru_cell_impl<scalar_t>(gi, gh, b_hh, h, out, ws); });
}
void gru_cell_backward_kernel(const Tensor& ws, const Tensor& grad_out, const Tensor& dh, const Tensor& dgi,
                              const Tensor& dgh) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(dh.dtype(), "gru_cell_backward",
                                         [&] { gru_cell_backward_impl<scalar_t>(ws, grad_out, dh, dgi, dgh); });
}

void lstm_layer_kernel(const Tensor& input_gates, const Tensor& w_hh, const Tensor& h, const Tensor& c,
                       const Tensor& output, const Tensor& ws, const RnnSteps& st) {
  EMBER_DISPATCH_FLOATING_TYPES(h.dtype(), "_lstm_layer",
                                [&] { lstm_layer_impl<scalar_t>(input_gates, w_hh, h, c, output, ws, st); });
}
void lstm_layer_backward_kernel(const Tensor& grad_output, const Tensor& w_hh, const Tensor& ws, const Tensor& dh,
                                const Tensor& dc, const Tensor& dgates, const RnnSteps& st) {
  EMBER_DISPATCH_FLOATING_TYPES(dh.dtype(), "_lstm_layer_backward",
                                [&] { lstm_layer_backward_impl<scalar_t>(grad_output, w_hh, ws, dh, dc, dgates, st); });
}
void gru_layer_kernel(const Tensor& input_gates, const Tensor& w_hh, const Tensor& b_hh, const Tensor& h,
                      const Tensor& output, const Tensor& ws, const RnnSteps& st) {
  EMBER_DISPATCH_FLOATING_TYPES(h.dtype(), "_gru_layer",
                                [&] { gru_layer_impl<scalar_t>(input_gates, w_hh, b_hh, h, output, ws, st); });
}
void gru_layer_backward_kernel(const Tensor& grad_output, const Tensor& w_hh, const Tensor& ws, const Tensor& dh,
                               const Tensor& dgi, const Tensor& dgh, const RnnSteps& st) {
  EMBER_DISPATCH_FLOATING_TYPES(dh.dtype(), "_gru_layer_backward",
                                [&] { gru_layer_backward_impl<scalar_t>(grad_output, w_hh, ws, dh, dgi, dgh, st); });
}

}  // namespace
}  // namespace CPU_CAPABILITY

REGISTER_DISPATCH(lstm_cell_stub, &lstm_cell_kernel);
REGISTER_DISPATCH(lstm_cell_backward_stub, &lstm_cell_backward_kernel);
REGISTER_DISPATCH(gru_cell_stub, &gru_cell_kernel);
REGISTER_DISPATCH(gru_cell_backward_stub, &gru_cell_backward_kernel);
REGISTER_DISPATCH(lstm_layer_cpu_stub, &lstm_layer_kernel);
REGISTER_DISPATCH(lstm_layer_backward_cpu_stub, &lstm_layer_backward_kernel);
REGISTER_DISPATCH(gru_layer_cpu_stub, &gru_layer_kernel);
REGISTER_DISPATCH(gru_layer_backward_cpu_stub, &gru_layer_backward_kernel);

}  // namespace ember::at::native
