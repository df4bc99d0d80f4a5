// CUDA kernels of fused scaled dot product attention (the stubs of ../Attention.h).
//
// Forward (FlashAttention's online softmax): one thread block per (batch * query head,
// tile of BQ query rows). The Q tile stays in shared memory; the keys are visited in
// blocks of BK whose K and V rows are loaded into shared memory, giving the BQ x BK
// scores, then per row
//
//     m' = max(m, rowmax S);  P = exp(S - m');  l = l * exp(m - m') + rowsum P
//     acc = acc * exp(m - m') + P V_blk
//
// accumulated in the compute dtype (float32 for float32/16/bf16 inputs, which
// Attention.cpp converts; float64 for float64). The accumulator is the block's own tile
// of `out` (contiguous, written by this block only). At the end out = acc / l and
// logsumexp = m + log l; a row whose keys are all masked gives 0 and -inf (safe
// softmax). Causal key blocks entirely past the tile's last row are skipped.
//
// Backward (a straightforward recompute, FlashAttention-2's formulas): one block per
// (batch * query head, query tile) walks the key blocks, recomputes P = exp(S - lse) and
// dS = P * (dO V^T - D), D = rowsum(dO * out); dQ rows are the block's own, dK / dV
// (shared by query tiles and by the query heads of one key/value head) are atomicAdd-ed.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <ember/aten/Dispatch.h>

#include "../Attention.h"
#include "CUDAUtils.cuh"
#include "StubEmulation.cuh"

namespace ember::at::native {
namespace {

using cuda::current_stream;

constexpr int kThreads = 256;

// The kernels' bodies are __host__ __device__ functions of a block (BlockCtx): the
// __global__ wrappers run them on the GPU; the host emulation (_C._cuda_sdpa_emulation,
// for tests without a GPU) runs every block with one thread, where a barrier is a no-op
// and an atomicAdd a plain add.
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
size_t fwd_smem(int64_t bq, int64_t bk, int64_t E, int64_t Ev, size_t elt) {
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

template <typename T>
__global__ void sdpa_fwd_kernel(AttentionParams p, Ptrs<T> P, T* out, T* lse, int BQ, int BK) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const BlockCtx ctx{blockIdx.x, blockIdx.y, threadIdx.x, blockDim.x};
  sdpa_fwd_block<T>(ctx, smem_raw, p, P, out, lse, BQ, BK);
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

// Tile sizes whose shared memory fits the device (opting in above 48 KiB where needed).
template <typename T>
void pick_tiles(const void* kernel, int64_t E, int64_t Ev, int& bq, int& bk, size_t& smem, bool fwd) {
  int dev = 0, optin = 48 * 1024;
  EMBER_CUDA_CHECK(cudaGetDevice(&dev));
  EMBER_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  tiles_for<T>(static_cast<size_t>(optin), E, Ev, bq, bk, smem, fwd);
  if (smem > 48 * 1024) {
    EMBER_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
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

template <typename T>
void sdpa_fwd_launch(const AttentionParams& p, const void* q, const void* k, const void* v, void* out, void* lse) {
  if (p.L == 0 || p.batch * p.q_heads == 0) return;
  int bq, bk;
  size_t smem;
  pick_tiles<T>(reinterpret_cast<const void*>(&sdpa_fwd_kernel<T>), p.E, p.Ev, bq, bk, smem, true);
  const int64_t tiles = (p.L + bq - 1) / bq;
  EMBER_CHECK(tiles <= 65535, "scaled_dot_product_attention: ", p.L, " query rows exceed the CUDA kernel's grid");
  const dim3 grid(static_cast<unsigned>(p.batch * p.q_heads), static_cast<unsigned>(tiles));
  sdpa_fwd_kernel<T><<<grid, kThreads, smem, current_stream()>>>(p, make_ptrs<T>(p, q, k, v), static_cast<T*>(out),
                                                                 static_cast<T*>(lse), bq, bk);
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
}

void sdpa_forward_cuda(ScalarType dtype, const AttentionParams& p, const void* q, const void* k, const void* v,
                       void* out, void* lse) {
  if (dtype == ScalarType::Double)
    sdpa_fwd_launch<double>(p, q, k, v, out, lse);
  else
    sdpa_fwd_launch<float>(p, q, k, v, out, lse);
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

template <typename T>
__global__ void sdpa_bwd_kernel(AttentionParams p, Ptrs<T> P, const T* out, const T* lse, const T* gout, T* gq, T* gk,
                                T* gv, int BQ, int BK) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const BlockCtx ctx{blockIdx.x, blockIdx.y, threadIdx.x, blockDim.x};
  sdpa_bwd_block<T>(ctx, smem_raw, p, P, out, lse, gout, gq, gk, gv, BQ, BK);
}

template <typename T>
void sdpa_bwd_launch(const AttentionParams& p, const void* q, const void* k, const void* v, const void* out,
                     const void* lse, const void* gout, void* gq, void* gk, void* gv) {
  if (p.L == 0 || p.S == 0 || p.batch * p.q_heads == 0) return;
  int bq, bk;
  size_t smem;
  pick_tiles<T>(reinterpret_cast<const void*>(&sdpa_bwd_kernel<T>), p.E, p.Ev, bq, bk, smem, false);
  const int64_t tiles = (p.L + bq - 1) / bq;
  EMBER_CHECK(tiles <= 65535, "scaled_dot_product_attention backward: ", p.L,
              " query rows exceed the CUDA kernel's grid");
  const dim3 grid(static_cast<unsigned>(p.batch * p.q_heads), static_cast<unsigned>(tiles));
  sdpa_bwd_kernel<T><<<grid, kThreads, smem, current_stream()>>>(
      p, make_ptrs<T>(p, q, k, v), static_cast<const T*>(out), static_cast<const T*>(lse), static_cast<const T*>(gout),
      static_cast<T*>(gq), static_cast<T*>(gk), static_cast<T*>(gv), bq, bk);
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
}

void sdpa_backward_cuda(ScalarType dtype, const AttentionParams& p, const void* q, const void* k, const void* v,
                        const void* out, const void* lse, const void* gout, void* gq, void* gk, void* gv) {
  if (dtype == ScalarType::Double)
    sdpa_bwd_launch<double>(p, q, k, v, out, lse, gout, gq, gk, gv);
  else
    sdpa_bwd_launch<float>(p, q, k, v, out, lse, gout, gq, gk, gv);
}

// ---- host emulation (tests without a GPU) ----
// Every block of the launch the CUDA path would make, one after another, with one thread
// and 48 KiB of "shared memory" (so large heads shrink the tiles as on a GPU without the
// opt-in), on host pointers.
constexpr size_t kEmulatedSmem = 48 * 1024;

template <typename T>
void sdpa_fwd_emulated_t(const AttentionParams& p, const void* q, const void* k, const void* v, void* out, void* lse) {
  if (p.L == 0 || p.batch * p.q_heads == 0) return;
  int bq, bk;
  size_t smem;
  tiles_for<T>(kEmulatedSmem, p.E, p.Ev, bq, bk, smem, true);
  std::vector<double> shared((smem + sizeof(double) - 1) / sizeof(double));
  const Ptrs<T> P = make_ptrs<T>(p, q, k, v);
  for (int64_t by = 0; by < (p.L + bq - 1) / bq; ++by)
    for (int64_t bx = 0; bx < p.batch * p.q_heads; ++bx)
      sdpa_fwd_block<T>(BlockCtx{bx, by, 0, 1}, reinterpret_cast<unsigned char*>(shared.data()), p, P,
                        static_cast<T*>(out), static_cast<T*>(lse), bq, bk);
}

template <typename T>
void sdpa_bwd_emulated_t(const AttentionParams& p, const void* q, const void* k, const void* v, const void* out,
                         const void* lse, const void* gout, void* gq, void* gk, void* gv) {
  if (p.L == 0 || p.S == 0 || p.batch * p.q_heads == 0) return;
  int bq, bk;
  size_t smem;
  tiles_for<T>(kEmulatedSmem, p.E, p.Ev, bq, bk, smem, false);
  std::vector<double> shared((smem + sizeof(double) - 1) / sizeof(double));
  const Ptrs<T> P = make_ptrs<T>(p, q, k, v);
  for (int64_t by = 0; by < (p.L + bq - 1) / bq; ++by)
    for (int64_t bx = 0; bx < p.batch * p.q_heads; ++bx)
      sdpa_bwd_block<T>(BlockCtx{bx, by, 0, 1}, reinterpret_cast<unsigned char*>(shared.data()), p, P,
                        static_cast<const T*>(out), static_cast<const T*>(lse), static_cast<const T*>(gout),
                        static_cast<T*>(gq), static_cast<T*>(gk), static_cast<T*>(gv), bq, bk);
}

void sdpa_forward_emulated(ScalarType dtype, const AttentionParams& p, const void* q, const void* k, const void* v,
                           void* out, void* lse) {
  if (dtype == ScalarType::Double)
    sdpa_fwd_emulated_t<double>(p, q, k, v, out, lse);
  else
    sdpa_fwd_emulated_t<float>(p, q, k, v, out, lse);
}

void sdpa_backward_emulated(ScalarType dtype, const AttentionParams& p, const void* q, const void* k, const void* v,
                            const void* out, const void* lse, const void* gout, void* gq, void* gk, void* gv) {
  if (dtype == ScalarType::Double)
    sdpa_bwd_emulated_t<double>(p, q, k, v, out, lse, gout, gq, gk, gv);
  else
    sdpa_bwd_emulated_t<float>(p, q, k, v, out, lse, gout, gq, gk, gv);
}

}  // namespace

// true: the CPU slots of sdpa_forward_stub / sdpa_backward_stub run the host emulation of
// the CUDA kernels above, so the CPU attention tests check their logic; returns the
// previous state.
bool cuda_sdpa_emulation(bool on) {
  static bool active = false;
  static cuda_emulation::SlotSwap<sdpa_forward_stub_DECLARE_DISPATCH_type> s_fwd;
  static cuda_emulation::SlotSwap<sdpa_backward_stub_DECLARE_DISPATCH_type> s_bwd;
  const bool was = active;
  if (on == active) return was;
  s_fwd.swap(sdpa_forward_stub, &sdpa_forward_emulated, on);
  s_bwd.swap(sdpa_backward_stub, &sdpa_backward_emulated, on);
  active = on;
  return was;
}

REGISTER_CUDA_DISPATCH(sdpa_forward_stub, &sdpa_forward_cuda);
REGISTER_CUDA_DISPATCH(sdpa_backward_stub, &sdpa_backward_cuda);

}  // namespace ember::at::native
