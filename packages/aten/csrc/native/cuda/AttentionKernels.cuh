#pragma once
// The block code of the fused attention kernels (Attention.cu): __host__ __device__ functions
// of one thread block (BlockCtx). Attention.cu's __global__ wrappers run them on the GPU; the
// test-only module ember_aten_testing (packages/aten/testing) runs every block with one
// thread on the host, where a barrier is a no-op and an atomicAdd a plain add.
#include <cmath>
#include <cstdint>
#include <limits>

#include <ember/aten/Dispatch.h>

#include "../Attention.h"
#include "CUDAUtils.cuh"

namespace ember::at::native::cuda_sdpa {

struct BlockCtx {
  int64_t bx, by;   // blockIdx.x, blockIdx.y
  int64_t tid, nt;  // threadIdx.x, blockDim.x
};

__host__ __device__ inline void block_sync() {
#ifdef __CUDA_ARCH__
  __syncthreads();
#endif
}

template <typename T>
__host__ __device__ inline void add_to(T* p, T v) {
#ifdef __CUDA_ARCH__
  atomicAdd(p, v);
#else
  *p += v;
#endif
}

template <typename T>
__host__ __device__ inline T neg_inf() {
  return -std::numeric_limits<T>::infinity();
}

__host__ __device__ inline float exp_(float x) { return expf(x); }
__host__ __device__ inline double exp_(double x) { return exp(x); }
__host__ __device__ inline float log_(float x) { return logf(x); }
__host__ __device__ inline double log_(double x) { return log(x); }
__host__ __device__ inline float max_(float a, float b) { return fmaxf(a, b); }
__host__ __device__ inline double max_(double a, double b) { return fmax(a, b); }
__host__ __device__ inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

template <typename T>
struct Ptrs {
  const T* q;
  const T* k;
  const T* v;
  const T* mask;       // additive mask of T, or null
  const bool* mask_b;  // boolean mask (True: take part), or null
};

// The mask term of score (b, h, i, j): 0, -inf or the additive value.
template <typename T>
__host__ __device__ inline T mask_term(const AttentionParams& p, const Ptrs<T>& P, int64_t b, int64_t h, int64_t i,
                                       int64_t j) {
  const int64_t off = b * p.mask_stride[0] + h * p.mask_stride[1] + i * p.mask_stride[2] + j * p.mask_stride[3];
  if (P.mask_b != nullptr) return P.mask_b[off] ? T(0) : neg_inf<T>();
  if (P.mask != nullptr) return P.mask[off];
  return T(0);
}

// Shared memory of the forward: Q[BQ][E], K[BK][E], V[BK][Ev], S[BQ][BK], m, l, alpha [BQ].
inline size_t fwd_smem(int64_t bq, int64_t bk, int64_t E, int64_t Ev, size_t elt) {
  return elt * static_cast<size_t>(bq * E + bk * E + bk * Ev + bq * bk + 3 * bq);
}

template <typename T>
__host__ __device__ void sdpa_fwd_block(const BlockCtx& ctx, unsigned char* smem_raw, const AttentionParams& p,
                                        const Ptrs<T>& P, T* out, T* lse, int BQ, int BK) {
  T* Qs = reinterpret_cast<T*>(smem_raw);
  T* Ks = Qs + BQ * p.E;
  T* Vs = Ks + BK * p.E;
  T* Ss = Vs + BK * p.Ev;
  T* row_m = Ss + BQ * BK;
  T* row_l = row_m + BQ;
  T* row_a = row_l + BQ;
  const T ninf = neg_inf<T>();

  const int64_t bh = ctx.bx;
  const int64_t b = bh / p.q_heads, h = bh % p.q_heads;
  const int64_t hk = h / (p.q_heads / p.kv_heads);
  const int64_t q0 = ctx.by * BQ;
  const int64_t rows = min64(static_cast<int64_t>(BQ), p.L - q0);
  const T* qb = P.q + b * p.q_stride[0] + h * p.q_stride[1];
  const T* kb = P.k + b * p.k_stride[0] + hk * p.k_stride[1];
  const T* vb = P.v + b * p.v_stride[0] + hk * p.v_stride[1];
  T* ob = out + (bh * p.L + q0) * p.Ev;
  const T scale = static_cast<T>(p.scale);

  for (int64_t x = ctx.tid; x < BQ * p.E; x += ctx.nt) {
    const int64_t r = x / p.E, c = x % p.E;
    Qs[x] = r < rows ? qb[(q0 + r) * p.q_stride[2] + c] : T(0);
  }
  for (int64_t x = ctx.tid; x < rows * p.Ev; x += ctx.nt) ob[x] = T(0);
  for (int64_t r = ctx.tid; r < BQ; r += ctx.nt) {
    row_m[r] = ninf;
    row_l[r] = T(0);
  }
  block_sync();

  const int64_t kend = p.is_causal ? min64(p.S, q0 + rows) : p.S;
  for (int64_t k0 = 0; k0 < kend; k0 += BK) {
    const int64_t cols = min64(static_cast<int64_t>(BK), p.S - k0);
    for (int64_t x = ctx.tid; x < cols * p.E; x += ctx.nt) {
      const int64_t j = x / p.E, c = x % p.E;
      Ks[x] = kb[(k0 + j) * p.k_stride[2] + c];
    }
    for (int64_t x = ctx.tid; x < cols * p.Ev; x += ctx.nt) {
      const int64_t j = x / p.Ev, c = x % p.Ev;
      Vs[x] = vb[(k0 + j) * p.v_stride[2] + c];
    }
    block_sync();
    // scores
    for (int64_t x = ctx.tid; x < BQ * BK; x += ctx.nt) {
      const int64_t r = x / BK, j = x % BK;
      T s = ninf;
      if (r < rows && j < cols && !(p.is_causal && k0 + j > q0 + r)) {
        T acc = T(0);
        for (int64_t c = 0; c < p.E; ++c) acc += Qs[r * p.E + c] * Ks[j * p.E + c];
        s = acc * scale + mask_term(p, P, b, h, q0 + r, k0 + j);
      }
      Ss[x] = s;
    }
    block_sync();
    // online softmax, one thread per row
    for (int64_t r = ctx.tid; r < BQ; r += ctx.nt) {
      T mx = row_m[r];
      for (int j = 0; j < BK; ++j) mx = max_(mx, Ss[r * BK + j]);
      if (mx == ninf) {  // nothing taken part yet in this row
        for (int j = 0; j < BK; ++j) Ss[r * BK + j] = T(0);
        row_a[r] = T(1);
      } else {
        T sum = T(0);
        for (int j = 0; j < BK; ++j) {
          const T e = exp_(Ss[r * BK + j] - mx);
          Ss[r * BK + j] = e;
          sum += e;
        }
        const T alpha = row_m[r] == ninf ? T(0) : exp_(row_m[r] - mx);
        row_a[r] = alpha;
        row_l[r] = row_l[r] * alpha + sum;
        row_m[r] = mx;
      }
    }
    block_sync();
    // acc = acc * alpha + P V
    for (int64_t x = ctx.tid; x < rows * p.Ev; x += ctx.nt) {
      const int64_t r = x / p.Ev, c = x % p.Ev;
      T acc = ob[x] * row_a[r];
      for (int64_t j = 0; j < cols; ++j) acc += Ss[r * BK + j] * Vs[j * p.Ev + c];
      ob[x] = acc;
    }
    block_sync();
  }
  for (int64_t x = ctx.tid; x < rows * p.Ev; x += ctx.nt) {
    const T l = row_l[x / p.Ev];
    ob[x] = l > T(0) ? ob[x] / l : T(0);
  }
  for (int64_t r = ctx.tid; r < rows; r += ctx.nt) {
    lse[bh * p.L + q0 + r] = row_l[r] > T(0) ? row_m[r] + log_(row_l[r]) : ninf;
  }
}

// Tile sizes whose shared memory (bytes) fits in optin.
template <typename T>
void tiles_for(size_t optin, int64_t E, int64_t Ev, int& bq, int& bk, size_t& smem, bool fwd) {
  for (bq = 32, bk = 32;;) {
    smem = fwd ? fwd_smem(bq, bk, E, Ev, sizeof(T)) : sizeof(T) * static_cast<size_t>(2 * bq * bk + bq);
    if (smem <= optin) break;
    if (bk > 8)
      bk /= 2;
    else if (bq > 4)
      bq /= 2;
    else if (bk > 1)
      bk /= 2;
    else if (bq > 1)
      bq /= 2;
    else {
      EMBER_CHECK(false, "scaled_dot_product_attention: head dimension ", E, " / ", Ev,
                  " is too large for the CUDA kernel's shared memory");
    }
  }
}

template <typename T>
Ptrs<T> make_ptrs(const AttentionParams& p, const void* q, const void* k, const void* v) {
  Ptrs<T> P{static_cast<const T*>(q), static_cast<const T*>(k), static_cast<const T*>(v), nullptr, nullptr};
  if (p.mask != nullptr) {
    if (p.mask_is_bool)
      P.mask_b = static_cast<const bool*>(p.mask);
    else
      P.mask = static_cast<const T*>(p.mask);
  }
  return P;
}

// ---- backward ----
template <typename T>
__host__ __device__ void sdpa_bwd_block(const BlockCtx& ctx, unsigned char* smem_raw, const AttentionParams& p,
                                        const Ptrs<T>& P, const T* out, const T* lse, const T* gout, T* gq, T* gk,
                                        T* gv, int BQ, int BK) {
  T* Ps = reinterpret_cast<T*>(smem_raw);  // [BQ][BK]
  T* dSs = Ps + BQ * BK;                   // [BQ][BK]
  T* Drow = dSs + BQ * BK;                 // [BQ]
  const T ninf = neg_inf<T>();

  const int64_t bh = ctx.bx;
  const int64_t b = bh / p.q_heads, h = bh % p.q_heads;
  const int64_t hk = h / (p.q_heads / p.kv_heads);
  const int64_t q0 = ctx.by * BQ;
  const int64_t rows = min64(static_cast<int64_t>(BQ), p.L - q0);
  const T* qb = P.q + b * p.q_stride[0] + h * p.q_stride[1];
  const T* kb = P.k + b * p.k_stride[0] + hk * p.k_stride[1];
  const T* vb = P.v + b * p.v_stride[0] + hk * p.v_stride[1];
  const T* ob = out + (bh * p.L + q0) * p.Ev;
  const T* gob = gout + (bh * p.L + q0) * p.Ev;
  const T* lb = lse + bh * p.L + q0;
  T* gqb = gq + (bh * p.L + q0) * p.E;
  const int64_t kvh = b * p.kv_heads + hk;
  T* gkb = gk + kvh * p.S * p.E;
  T* gvb = gv + kvh * p.S * p.Ev;
  const T scale = static_cast<T>(p.scale);

  for (int64_t r = ctx.tid; r < BQ; r += ctx.nt) {
    T d = T(0);
    if (r < rows) {
      for (int64_t c = 0; c < p.Ev; ++c) d += gob[r * p.Ev + c] * ob[r * p.Ev + c];
    }
    Drow[r] = d;
  }
  block_sync();

  const int64_t kend = p.is_causal ? min64(p.S, q0 + rows) : p.S;
  for (int64_t k0 = 0; k0 < kend; k0 += BK) {
    const int64_t cols = min64(static_cast<int64_t>(BK), p.S - k0);
    for (int64_t x = ctx.tid; x < BQ * BK; x += ctx.nt) {
      const int64_t r = x / BK, j = x % BK;
      T pv = T(0), ds = T(0);
      if (r < rows && j < cols && !(p.is_causal && k0 + j > q0 + r) && lb[r] != ninf) {
        const T* qr = qb + (q0 + r) * p.q_stride[2];
        const T* kj = kb + (k0 + j) * p.k_stride[2];
        T s = T(0);
        for (int64_t c = 0; c < p.E; ++c) s += qr[c] * kj[c];
        s = s * scale + mask_term(p, P, b, h, q0 + r, k0 + j);
        pv = s == ninf ? T(0) : exp_(s - lb[r]);
        const T* vj = vb + (k0 + j) * p.v_stride[2];
        T dp = T(0);
        for (int64_t c = 0; c < p.Ev; ++c) dp += gob[r * p.Ev + c] * vj[c];
        ds = pv * (dp - Drow[r]);
      }
      Ps[x] = pv;
      dSs[x] = ds;
    }
    block_sync();
    // dV[j] += sum_r P[r][j] dO[r];  dK[j] += scale sum_r dS[r][j] Q[r]
    for (int64_t x = ctx.tid; x < cols * p.Ev; x += ctx.nt) {
      const int64_t j = x / p.Ev, c = x % p.Ev;
      T acc = T(0);
      for (int64_t r = 0; r < rows; ++r) acc += Ps[r * BK + j] * gob[r * p.Ev + c];
      if (acc != T(0)) add_to(gvb + (k0 + j) * p.Ev + c, acc);
    }
    for (int64_t x = ctx.tid; x < cols * p.E; x += ctx.nt) {
      const int64_t j = x / p.E, c = x % p.E;
      T acc = T(0);
      for (int64_t r = 0; r < rows; ++r) acc += dSs[r * BK + j] * qb[(q0 + r) * p.q_stride[2] + c];
      if (acc != T(0)) add_to(gkb + (k0 + j) * p.E + c, acc * scale);
    }
    // dQ[r] += scale sum_j dS[r][j] K[j]  (rows owned by this block)
    for (int64_t x = ctx.tid; x < rows * p.E; x += ctx.nt) {
      const int64_t r = x / p.E, c = x % p.E;
      T acc = T(0);
      for (int64_t j = 0; j < cols; ++j) acc += dSs[r * BK + j] * kb[(k0 + j) * p.k_stride[2] + c];
      gqb[x] += acc * scale;
    }
    block_sync();
  }
}

}  // namespace ember::at::native::cuda_sdpa
