// CPU kernels of fused scaled dot product attention (see ../Attention.h for the algorithm).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include <ember/aten/Parallel.h>
#include <ember/aten/vec/Vectorized.h>

#include "../Attention.h"
#include "../Blas.h"  // gemm_cpu

namespace ember::at::native {
inline namespace CPU_CAPABILITY {
namespace {

using vec::Vectorized;

constexpr int64_t BQ = 64;  // query rows per block (backward)
constexpr int64_t BK = 64;  // keys per block (backward)

// C[i, j] (+)= sum_p A[i * a_rs + p * a_cs] * B[p * ldb + j] for MR rows of C: MR x 2
// vector registers of accumulators, B's rows contiguous, A read one scalar at a time (so a
// transposed A costs nothing).
template <typename T, int MR>
inline void gemm_rows(int64_t n, int64_t k, const T* a, int64_t a_rs, int64_t a_cs, const T* b, int64_t ldb, T* c,
                      int64_t ldc, bool acc) {
  using Vec = Vectorized<T>;
  constexpr int W = Vec::size();
  int64_t j = 0;
  for (; j + 2 * W <= n; j += 2 * W) {
    Vec c0[MR], c1[MR];
    for (int r = 0; r < MR; ++r) {
      c0[r] = Vec(T(0));
      c1[r] = Vec(T(0));
    }
    for (int64_t p = 0; p < k; ++p) {
      const T* bp = b + p * ldb + j;
      const Vec b0 = Vec::loadu(bp), b1 = Vec::loadu(bp + W);
      for (int r = 0; r < MR; ++r) {
        const Vec ar(a[r * a_rs + p * a_cs]);
        c0[r] = vec::fmadd(ar, b0, c0[r]);
        c1[r] = vec::fmadd(ar, b1, c1[r]);
      }
    }
    for (int r = 0; r < MR; ++r) {
      T* cr = c + r * ldc + j;
      if (acc) {
        c0[r] += Vec::loadu(cr);
        c1[r] += Vec::loadu(cr + W);
      }
      c0[r].store(cr);
      c1[r].store(cr + W);
    }
  }
  for (; j < n; j += W) {
    const int cnt = static_cast<int>(std::min<int64_t>(W, n - j));
    Vec c0[MR];
    for (int r = 0; r < MR; ++r) c0[r] = Vec(T(0));
    for (int64_t p = 0; p < k; ++p) {
      const Vec b0 = cnt == W ? Vec::loadu(b + p * ldb + j) : Vec::loadu(b + p * ldb + j, cnt);
      for (int r = 0; r < MR; ++r) c0[r] = vec::fmadd(Vec(a[r * a_rs + p * a_cs]), b0, c0[r]);
    }
    for (int r = 0; r < MR; ++r) {
      T* cr = c + r * ldc + j;
      if (acc) c0[r] += cnt == W ? Vec::loadu(cr) : Vec::loadu(cr, cnt);
      if (cnt == W) {
        c0[r].store(cr);
      } else {
        c0[r].store(cr, cnt);
      }
    }
  }
}

// The k range [k_lo, k_hi) and the column count n that a strip of rows [i, i + rows) of a
// product needs (under a causal mask a strip sees fewer keys, or fewer query rows).
struct Band {
  int64_t k_lo, k_hi, n;
};

// gemm over strips of rows, each over its band: an empty band writes nothing when
// accumulating (adds zero), zeros otherwise.
template <typename T, typename BandOf>
void gemm_banded(int64_t m, const T* a, int64_t a_rs, int64_t a_cs, const T* b, int64_t ldb, T* c, int64_t ldc,
                 bool acc, const BandOf& band_of) {
  // 8 rows x 2 vectors of accumulators fit AVX-512's 32 registers; 6 rows (12 accumulators, 2 rows of
  // B and a broadcast) the 16 of AVX2; 4 rows SSE's
  constexpr int MR = EMBER_VEC_BYTES >= 64 ? 8 : (EMBER_VEC_BYTES >= 32 ? 6 : 4);
  const auto strip = [&](auto rows, int64_t i) {
    constexpr int R = decltype(rows)::value;
    const Band bd = band_of(i, R);
    const int64_t kl = std::min(bd.k_lo, bd.k_hi);
    if (bd.n <= 0 || (acc && bd.k_hi <= kl)) return;
    gemm_rows<T, R>(bd.n, bd.k_hi - kl, a + i * a_rs + kl * a_cs, a_rs, a_cs, b + kl * ldb, ldb, c + i * ldc, ldc, acc);
  };
  int64_t i = 0;
  for (; i + MR <= m; i += MR) strip(std::integral_constant<int, MR>{}, i);
  for (; i + 4 <= m; i += 4) strip(std::integral_constant<int, 4>{}, i);
  for (; i < m; ++i) strip(std::integral_constant<int, 1>{}, i);
}

// max(init, x[0], ..., x[n - 1]) as std::max folds it (a NaN x[j] is passed over; exp then
// carries it into the row), vectorised.
template <typename T>
inline T row_max(const T* x, int64_t n, T init) {
  using Vec = Vectorized<T>;
  constexpr int W = Vec::size();
  T m = init;
  int64_t j = 0;
  if (n >= W) {
    auto acc = Vec(init).v;
    for (; j + W <= n; j += W) {
      const auto v = Vec::loadu(x + j).v;
      acc = acc < v ? v : acc;
    }
    for (int i = 0; i < W; ++i) m = std::max(m, acc[i]);
  }
  for (; j < n; ++j) m = std::max(m, x[j]);
  return m;
}

// exp of the shifted scores x - m <= 0 (m their row max, or the logsumexp): vec::exp's
// reduction and polynomial (~1 ulp) without its overflow and subnormal handling. Below
// -87 (a weight under 2^-125 of the row's largest) it gives 0, as it does for -inf; NaN
// passes through. 2^n is one exponent field: n >= -126 after the clamp.
inline Vectorized<float> exp_nonpositive(Vectorized<float> x) {
  using V = Vectorized<float>::V;
  typedef int32_t VI __attribute__((vector_size(EMBER_VEC_BYTES)));
  const V xc = x.v < -87.0f ? V{} - 87.0f : x.v;
  const float shifter = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  const V t = xc * 1.44269504088896341f + shifter;
  const V n = t - shifter;
  V r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  V p = vec::exp_reduced(r);
  VI ti, sh;
  std::memcpy(&ti, &t, sizeof(VI));
  sh = VI{} + 0x4B400000;  // the bits of the shifter: t's bits minus these are n
  const VI bits = (ti - sh + 127) << 23;
  V scale;
  std::memcpy(&scale, &bits, sizeof(V));
  const V res = p * scale;
  return Vectorized<float>::make(x.v < -87.0f ? V{} : res);
}

// x[j] = exp(x[j] - m); returns the sum.
inline float exp_shifted_sum(float* x, int64_t n, float m) {
  using Vec = Vectorized<float>;
  constexpr int W = Vec::size();
  Vec s(0.0f);
  const Vec mv(m);
  int64_t j = 0;
  for (; j + W <= n; j += W) {
    const Vec e = exp_nonpositive(Vec::loadu(x + j) - mv);
    e.store(x + j);
    s += e;
  }
  float total = s.reduce_add();
  for (; j < n; ++j) {
    x[j] = std::exp(x[j] - m);
    total += x[j];
  }
  return total;
}

inline double exp_shifted_sum(double* x, int64_t n, double m) {
  double total = 0;
  for (int64_t j = 0; j < n; ++j) {
    x[j] = std::exp(x[j] - m);
    total += x[j];
  }
  return total;
}

// Adds the mask to an nq x nk block of scores (row stride ld) whose top-left element is
// (query i0, key j0) of plane (b, h). The causal mask is not written: the softmax of each
// row stops at causal_keys (the masked scores are never exponentiated, only zeroed).
template <typename T>
void mask_block(const AttentionParams& p, int64_t b, int64_t h, int64_t i0, int64_t j0, int64_t nq, int64_t nk, T* s,
                int64_t ld = BK) {
  if (p.mask != nullptr) {
    const T* mp = static_cast<const T*>(p.mask) + b * p.mask_stride[0] + h * p.mask_stride[1] + i0 * p.mask_stride[2] +
                  j0 * p.mask_stride[3];
    for (int64_t r = 0; r < nq; ++r) {
      const T* mr = mp + r * p.mask_stride[2];
      T* sr = s + r * ld;
      if (p.mask_stride[3] == 1) {
        for (int64_t c = 0; c < nk; ++c) sr[c] += mr[c];
      } else {
        for (int64_t c = 0; c < nk; ++c) sr[c] += mr[c * p.mask_stride[3]];
      }
    }
  }
}

// How many of the nk keys from j0 on query row i may see (all of them without is_causal).
inline int64_t causal_keys(const AttentionParams& p, int64_t i, int64_t j0, int64_t nk) {
  return p.is_causal ? std::clamp<int64_t>(i + 1 - j0, 0, nk) : nk;
}

// causal: the keys a block of rows [i0, i0 + nq) sees end at i0 + nq (exclusive)
inline int64_t key_end(const AttentionParams& p, int64_t i0, int64_t nq) {
  return p.is_causal ? std::min<int64_t>(p.S, i0 + nq) : p.S;
}

// Which query block a task index handles: blocks in the order 0, last, 1, last - 1, ...
// so that the static chunks of parallel_for get similar work under a causal mask.
inline int64_t zigzag(int64_t i, int64_t n) { return (i % 2 == 0) ? i / 2 : n - 1 - i / 2; }

// A row stride BLAS accepts: one row's stride is never read (BLAS still wants ld >= cols).
inline int64_t blas_ld(int64_t stride, int64_t rows, int64_t cols) {
  return rows <= 1 ? std::max<int64_t>({stride, cols, 1}) : stride;
}

// Forward: blocks of kFwdQ query rows x kFwdK keys, both products single-threaded GEMMs on
// the task's thread (gemm_cpu inside the parallel region; Blas.h), reading Q, K and V in
// place (K^T is BLAS's transposed operand). Blocks that large keep the products near BLAS's
// speed; the 128 x 512 scores (256 KiB in float32) stay in the core's L2 between the two
// products. The scale is the first product's alpha.
constexpr int64_t kFwdQ = 128;
constexpr int64_t kFwdK = 512;

template <typename T>
void forward_impl(const AttentionParams& p, const T* q, const T* k, const T* v, T* out, T* lse) {
  const int64_t E = p.E, Ev = p.Ev, L = p.L;
  const int64_t bq = std::min(kFwdQ, L), bk = std::min(kFwdK, p.S);
  const int64_t nqb = divup(L, bq);
  const int64_t group = p.q_heads / p.kv_heads;
  const int64_t tasks = p.batch * p.q_heads * nqb;
  const T scale = static_cast<T>(p.scale);
  constexpr T ninf = -std::numeric_limits<T>::infinity();
  parallel_for(0, tasks, 1, [&](int64_t tb, int64_t te) {
    std::vector<T> s(bq * bk), acc(bq * Ev), m(bq), l(bq);
    for (int64_t t = tb; t < te; ++t) {
      const int64_t bh = t / nqb, b = bh / p.q_heads, h = bh % p.q_heads, hk = h / group;
      const int64_t i0 = zigzag(t % nqb, nqb) * bq, nq = std::min(bq, L - i0);
      const T* qp = q + b * p.q_stride[0] + h * p.q_stride[1] + i0 * p.q_stride[2];
      const T* kp = k + b * p.k_stride[0] + hk * p.k_stride[1];
      const T* vp = v + b * p.v_stride[0] + hk * p.v_stride[1];
      std::fill(m.begin(), m.end(), ninf);
      std::fill(l.begin(), l.end(), T(0));
      const int64_t kend = key_end(p, i0, nq);
      bool first = true;
      for (int64_t j0 = 0; j0 < kend; j0 += bk) {
        const int64_t nk = std::min(bk, kend - j0);
        // S = scale * Q_blk K_blk^T
        gemm_cpu(false, true, nq, nk, E, scale, qp, blas_ld(p.q_stride[2], nq, E), kp + j0 * p.k_stride[2],
                 blas_ld(p.k_stride[2], nk, E), T(0), s.data(), bk);
        mask_block(p, b, h, i0, j0, nq, nk, s.data(), bk);
        for (int64_t r = 0; r < nq; ++r) {
          T* sr = s.data() + r * bk;
          const int64_t nv = causal_keys(p, i0 + r, j0, nk);
          std::fill(sr + nv, sr + nk, T(0));  // causally masked: weight 0 in P V
          const T mnew = row_max(sr, nv, m[r]);
          if (mnew == ninf) {  // every key so far masked: nothing to add
            std::fill(sr, sr + nv, T(0));
            continue;
          }
          const T alpha = std::exp(m[r] - mnew);
          l[r] = l[r] * alpha + exp_shifted_sum(sr, nv, mnew);
          m[r] = mnew;
          if (!first && alpha != T(1)) {
            T* ar = acc.data() + r * Ev;
            for (int64_t e = 0; e < Ev; ++e) ar[e] *= alpha;
          }
        }
        // acc = acc * alpha + P V_blk (the first block writes acc)
        gemm_cpu(false, false, nq, Ev, nk, T(1), s.data(), bk, vp + j0 * p.v_stride[2], blas_ld(p.v_stride[2], nk, Ev),
                 first ? T(0) : T(1), acc.data(), Ev);
        first = false;
      }
      if (first) std::fill(acc.begin(), acc.end(), T(0));  // no keys at all
      T* op = out + (bh * L + i0) * Ev;
      T* lp = lse + bh * L + i0;
      for (int64_t r = 0; r < nq; ++r) {
        const T inv = l[r] > T(0) ? T(1) / l[r] : T(0);
        for (int64_t e = 0; e < Ev; ++e) op[r * Ev + e] = acc[r * Ev + e] * inv;
        lp[r] = l[r] > T(0) ? m[r] + std::log(l[r]) : ninf;
      }
    }
  });
}

template <typename T>
void backward_impl(const AttentionParams& p, const T* q, const T* k, const T* v, const T* out, const T* lse,
                   const T* gout, T* gq, T* gk, T* gv) {
  const int64_t E = p.E, Ev = p.Ev, L = p.L, S = p.S;
  const int64_t group = p.q_heads / p.kv_heads;
  const T scale = static_cast<T>(p.scale);
  constexpr T ninf = -std::numeric_limits<T>::infinity();
  parallel_for(0, p.batch * p.kv_heads, 1, [&](int64_t tb, int64_t te) {
    std::vector<T> qs(BQ * E), kt(E * BK), vt(Ev * BK), s(BQ * BK), dp(BQ * BK), D(L);
    for (int64_t t = tb; t < te; ++t) {
      const int64_t b = t / p.kv_heads, hk = t % p.kv_heads;
      const T* kp = k + b * p.k_stride[0] + hk * p.k_stride[1];
      const T* vp = v + b * p.v_stride[0] + hk * p.v_stride[1];
      T* gkp = gk + t * S * E;
      T* gvp = gv + t * S * Ev;
      for (int64_t h = hk * group; h < (hk + 1) * group; ++h) {
        const int64_t bh = b * p.q_heads + h;
        const T* qp = q + b * p.q_stride[0] + h * p.q_stride[1];
        const T* op = out + bh * L * Ev;
        const T* dop = gout + bh * L * Ev;
        const T* lp = lse + bh * L;
        T* gqp = gq + bh * L * E;
        for (int64_t i = 0; i < L; ++i) {
          T d = 0;
          for (int64_t e = 0; e < Ev; ++e) d += dop[i * Ev + e] * op[i * Ev + e];
          D[i] = d;
        }
        for (int64_t j0 = 0; j0 < S; j0 += BK) {
          const int64_t nk = std::min(BK, S - j0);
          for (int64_t c = 0; c < nk; ++c) {
            const T* kr = kp + (j0 + c) * p.k_stride[2];
            for (int64_t e = 0; e < E; ++e) kt[e * BK + c] = kr[e];
            const T* vr = vp + (j0 + c) * p.v_stride[2];
            for (int64_t e = 0; e < Ev; ++e) vt[e * BK + c] = vr[e];
          }
          // causal: only rows i >= j0 see a key of this block
          const int64_t ifirst = p.is_causal ? (j0 / BQ) * BQ : 0;
          for (int64_t i0 = ifirst; i0 < L; i0 += BQ) {
            const int64_t nq = std::min(BQ, L - i0);
            const int64_t nkk = std::min(nk, key_end(p, i0, nq) - j0);  // keys of the block this row block sees
            if (nkk <= 0) continue;
            for (int64_t r = 0; r < nq; ++r) {
              for (int64_t e = 0; e < E; ++e) qs[r * E + e] = qp[(i0 + r) * p.q_stride[2] + e] * scale;
            }
            // Under is_causal, row r of the block sees the keys before vis(r), key c the rows from
            // first_row(c): each product's strips run over those only (about half of a diagonal block).
            const auto vis = [&](int64_t r) { return causal_keys(p, i0 + r, j0, nkk); };
            const auto first_row = [&](int64_t c) {
              return p.is_causal ? std::clamp<int64_t>(j0 + c - i0, 0, nq) : int64_t{0};
            };
            const auto row_band = [&](int64_t kk) {  // rows x keys products: S, dP
              return [&, kk](int64_t i, int rows) { return Band{0, kk, vis(i + rows - 1)}; };
            };
            gemm_banded<T>(nq, qs.data(), E, 1, kt.data(), BK, s.data(), BK, false, row_band(E));
            mask_block(p, b, h, i0, j0, nq, nkk, s.data());
            for (int64_t r = 0; r < nq; ++r) {
              T* sr = s.data() + r * BK;
              const T m = lp[i0 + r];
              const int64_t nv = causal_keys(p, i0 + r, j0, nkk);
              if (m == ninf) {
                std::fill(sr, sr + nkk, T(0));
              } else {
                exp_shifted_sum(sr, nv, m);
                std::fill(sr + nv, sr + nkk, T(0));
              }
            }
            const T* dor = dop + i0 * Ev;
            const auto key_band = [&](int64_t n) {  // keys x rows products: dV, dK
              return [&, n](int64_t c, int) { return Band{first_row(c), nq, n}; };
            };
            // dV_j += P^T dO_i
            gemm_banded<T>(nkk, s.data(), 1, BK, dor, Ev, gvp + j0 * Ev, Ev, true, key_band(Ev));
            // dP = dO_i V_j^T
            gemm_banded<T>(nq, dor, Ev, 1, vt.data(), BK, dp.data(), BK, false, row_band(Ev));
            // dS = scale * P * (dP - D) over the visible keys (P, and so dS, is 0 beyond them)
            for (int64_t r = 0; r < nq; ++r) {
              T* sr = s.data() + r * BK;
              const T* dr = dp.data() + r * BK;
              const T di = D[i0 + r];
              const int64_t nv = vis(r);
              for (int64_t c = 0; c < nv; ++c) sr[c] = scale * sr[c] * (dr[c] - di);
            }
            // dQ_i += dS K_j, dK_j += dS^T Q_i
            gemm_banded<T>(nq, s.data(), BK, 1, kp + j0 * p.k_stride[2], p.k_stride[2], gqp + i0 * E, E, true,
                           [&](int64_t i, int rows) { return Band{0, vis(i + rows - 1), E}; });
            gemm_banded<T>(nkk, s.data(), 1, BK, qp + i0 * p.q_stride[2], p.q_stride[2], gkp + j0 * E, E, true,
                           key_band(E));
          }
        }
      }
    }
  });
}

void sdpa_forward_kernel(ScalarType dtype, const AttentionParams& p, const void* q, const void* k, const void* v,
                         void* out, void* lse) {
  if (dtype == ScalarType::Double) {
    forward_impl(p, static_cast<const double*>(q), static_cast<const double*>(k), static_cast<const double*>(v),
                 static_cast<double*>(out), static_cast<double*>(lse));
  } else {
    forward_impl(p, static_cast<const float*>(q), static_cast<const float*>(k), static_cast<const float*>(v),
                 static_cast<float*>(out), static_cast<float*>(lse));
  }
}

void sdpa_backward_kernel(ScalarType dtype, const AttentionParams& p, const void* q, const void* k, const void* v,
                          const void* out, const void* lse, const void* gout, void* gq, void* gk, void* gv) {
  if (dtype == ScalarType::Double) {
    backward_impl(p, static_cast<const double*>(q), static_cast<const double*>(k), static_cast<const double*>(v),
                  static_cast<const double*>(out), static_cast<const double*>(lse), static_cast<const double*>(gout),
                  static_cast<double*>(gq), static_cast<double*>(gk), static_cast<double*>(gv));
  } else {
    backward_impl(p, static_cast<const float*>(q), static_cast<const float*>(k), static_cast<const float*>(v),
                  static_cast<const float*>(out), static_cast<const float*>(lse), static_cast<const float*>(gout),
                  static_cast<float*>(gq), static_cast<float*>(gk), static_cast<float*>(gv));
  }
}

}  // namespace
}  // namespace CPU_CAPABILITY

REGISTER_DISPATCH(sdpa_forward_stub, &sdpa_forward_kernel);
REGISTER_DISPATCH(sdpa_backward_stub, &sdpa_backward_kernel);

}  // namespace ember::at::native
