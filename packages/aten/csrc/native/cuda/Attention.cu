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
#include <cstdint>

#include <ember/aten/Dispatch.h>

#include "../Attention.h"
#include "AttentionKernels.cuh"
#include "CUDAUtils.cuh"

namespace ember::at::native {
namespace {

using cuda::current_stream;
using namespace cuda_sdpa;

constexpr int kThreads = 256;

// The kernels' bodies are the block functions of AttentionKernels.cuh.

template <typename T>
__global__ void sdpa_fwd_kernel(AttentionParams p, Ptrs<T> P, T* out, T* lse, int BQ, int BK) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const BlockCtx ctx{blockIdx.x, blockIdx.y, threadIdx.x, blockDim.x};
  sdpa_fwd_block<T>(ctx, smem_raw, p, P, out, lse, BQ, BK);
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

}  // namespace

REGISTER_CUDA_DISPATCH(sdpa_forward_stub, &sdpa_forward_cuda);
REGISTER_CUDA_DISPATCH(sdpa_backward_stub, &sdpa_backward_cuda);

}  // namespace ember::at::native