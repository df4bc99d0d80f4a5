// CPU kernels of the fused LSTM / GRU cells (RNN.h): the gate arithmetic of one time step
// in one pass over the step's rows. The math is written once over a type V that is either
// one opmath_t value (double, half and bfloat16, and the tail of a float row) or a
// Vectorized<float> (the body of a float row: vec::sigmoid / vec::tanh).
#include <algorithm>
#include <cmath>
#include <type_traits>

#include <ember/aten/Dispatch.h>
#include <ember/aten/Parallel.h>
#include <ember/aten/vec/Vectorized.h>

#include "../RNN.h"

namespace ember::at::native {
inline namespace CPU_CAPABILITY {
namespace {

using VecF = vec::Vectorized<float>;

template <typename A>
inline A sigmoid_(A x) {
  return A(1) / (A(1) + std::exp(-x));
}
inline VecF sigmoid_(VecF x) { return vec::sigmoid(x); }
template <typename A>
inline A tanh_(A x) {
  return std::tanh(x);
}
inline VecF tanh_(VecF x) { return vec::tanh(x); }

// ---- the per-element math, shared by the vector body and the scalar tail ----------------------

template <typename V>
struct LstmForward {
  V i, f, g, o, c, h;
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

// Runs row(r) over [0, rows): in parallel when the step is large enough to pay for a
// region (each element costs a few transcendental functions: ~8 flops of GRAIN_SIZE's).
template <typename F>
void for_rows(int64_t rows, int64_t H, const F& row) {
  const int64_t grain = std::max<int64_t>(1, GRAIN_SIZE / (8 * std::max<int64_t>(H, 1)));
  parallel_for(0, rows, grain, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) row(r);
  });
}

// The vector body of a row (float only): columns [0, stop) in VecF steps; returns stop.
template <typename T>
inline int64_t vec_stop(int64_t H) {
  if constexpr (std::is_same_v<T, float>) return H - H % VecF::size();
  return 0;
}

template <typename T>
void lstm_cell_impl(const Tensor& ws, const Tensor& h, const Tensor& c, const Tensor& out) {
  const int64_t rows = h.size(0), H = h.size(1);
  T* w0 = ws.data_ptr<T>();
  T* h0 = h.data_ptr<T>();
  T* c0 = c.data_ptr<T>();
  T* o0 = out.data_ptr<T>();
  const int64_t lw = ws.stride(0), lh = h.stride(0), lc = c.stride(0), lo = out.stride(0);
  const int64_t stop = vec_stop<T>(H);
  for_rows(rows, H, [&](int64_t r) {
    T* w = w0 + r * lw;
    T* hr = h0 + r * lh;
    T* cr = c0 + r * lc;
    T* orow = o0 + r * lo;
    int64_t j = 0;
    if constexpr (std::is_same_v<T, float>) {
      for (; j < stop; j += VecF::size()) {
        const VecF hp = ldv(hr + j), cp = ldv(cr + j);
        LstmForward<VecF> s(ldv(w + j), ldv(w + H + j), ldv(w + 2 * H + j), ldv(w + 3 * H + j), cp);
        stv(w + j, s.i);
        stv(w + H + j, s.f);
        stv(w + 2 * H + j, s.g);
        stv(w + 3 * H + j, s.o);
        stv(w + 4 * H + j, hp);
        stv(w + 5 * H + j, cp);
        stv(cr + j, s.c);
        stv(hr + j, s.h);
        stv(orow + j, s.h);
      }
    }
    for (; j < H; ++j) {
      const auto hp = ld(hr + j), cp = ld(cr + j);
      LstmForward<opmath_t<T>> s(ld(w + j), ld(w + H + j), ld(w + 2 * H + j), ld(w + 3 * H + j), cp);
      st(w + j, s.i);
      st(w + H + j, s.f);
      st(w + 2 * H + j, s.g);
      st(w + 3 * H + j, s.o);
      st(w + 4 * H + j, hp);
      st(w + 5 * H + j, cp);
      st(cr + j, s.c);
      st(hr + j, s.h);
      st(orow + j, s.h);
    }
  });
}

template <typename T>
void lstm_cell_backward_impl(const Tensor& ws, const Tensor& grad_out, const Tensor& dh, const Tensor& dc,
                             const Tensor& dgates) {
  const int64_t rows = dh.size(0), H = dh.size(1);
  const T* w0 = ws.data_ptr<T>();
  const T* g0 = grad_out.defined() ? grad_out.data_ptr<T>() : nullptr;
  T* dh0 = dh.data_ptr<T>();
  T* dc0 = dc.data_ptr<T>();
  T* dg0 = dgates.data_ptr<T>();
  const int64_t lw = ws.stride(0), lg = g0 ? grad_out.stride(0) : 0, ldh = dh.stride(0), ldc = dc.stride(0),
                ldg = dgates.stride(0);
  const int64_t stop = vec_stop<T>(H);
  for_rows(rows, H, [&](int64_t r) {
    const T* w = w0 + r * lw;
    const T* go = g0 ? g0 + r * lg : nullptr;
    T* dhr = dh0 + r * ldh;
    T* dcr = dc0 + r * ldc;
    T* dg = dg0 + r * ldg;
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
  });
}

template <typename T>
void gru_cell_impl(const Tensor& gi, const Tensor& gh, const Tensor& b_hh, const Tensor& h, const Tensor& out,
                   const Tensor& ws) {
  using A = opmath_t<T>;
  const int64_t rows = h.size(0), H = h.size(1);
  const T* i0 = gi.data_ptr<T>();
  const T* gh0 = gh.data_ptr<T>();
  const T* b = b_hh.defined() ? b_hh.data_ptr<T>() : nullptr;
  T* h0 = h.data_ptr<T>();
  T* o0 = out.data_ptr<T>();
  T* w0 = ws.data_ptr<T>();
  const int64_t li = gi.stride(0), lgh = gh.stride(0), lh = h.stride(0), lo = out.stride(0), lw = ws.stride(0);
  const int64_t stop = vec_stop<T>(H);
  for_rows(rows, H, [&](int64_t r) {
    const T* x = i0 + r * li;
    const T* y = gh0 + r * lgh;
    T* hr = h0 + r * lh;
    T* orow = o0 + r * lo;
    T* w = w0 + r * lw;
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
        stv(w + j, s.r);
        stv(w + H + j, s.z);
        stv(w + 2 * H + j, s.n);
        stv(w + 3 * H + j, s.hn);
        stv(w + 4 * H + j, hp);
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
      st(w + j, s.r);
      st(w + H + j, s.z);
      st(w + 2 * H + j, s.n);
      st(w + 3 * H + j, s.hn);
      st(w + 4 * H + j, hp);
      st(hr + j, s.h);
      st(orow + j, s.h);
    }
  });
}

template <typename T>
void gru_cell_backward_impl(const Tensor& ws, const Tensor& grad_out, const Tensor& dh, const Tensor& dgi,
                            const Tensor& dgh) {
  const int64_t rows = dh.size(0), H = dh.size(1);
  const T* w0 = ws.data_ptr<T>();
  const T* g0 = grad_out.defined() ? grad_out.data_ptr<T>() : nullptr;
  T* dh0 = dh.data_ptr<T>();
  T* di0 = dgi.data_ptr<T>();
  T* dgh0 = dgh.data_ptr<T>();
  const int64_t lw = ws.stride(0), lg = g0 ? grad_out.stride(0) : 0, ldh = dh.stride(0), ldi = dgi.stride(0),
                ldgh = dgh.stride(0);
  const int64_t stop = vec_stop<T>(H);
  for_rows(rows, H, [&](int64_t r) {
    const T* w = w0 + r * lw;
    const T* go = g0 ? g0 + r * lg : nullptr;
    T* dhr = dh0 + r * ldh;
    T* di = di0 + r * ldi;
    T* dy = dgh0 + r * ldgh;
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
  });
}

void lstm_cell_kernel(const Tensor& ws, const Tensor& h, const Tensor& c, const Tensor& out) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(h.dtype(), "lstm_cell", [&] { lstm_cell_impl<scalar_t>(ws, h, c, out); });
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

}  // namespace
}  // namespace CPU_CAPABILITY

REGISTER_DISPATCH(lstm_cell_stub, &lstm_cell_kernel);
REGISTER_DISPATCH(lstm_cell_backward_stub, &lstm_cell_backward_kernel);
REGISTER_DISPATCH(gru_cell_stub, &gru_cell_kernel);
REGISTER_DISPATCH(gru_cell_backward_stub, &gru_cell_backward_kernel);

}  // namespace ember::at::native
