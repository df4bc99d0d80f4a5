#pragma once
// Fused scaled dot product attention on CPU (FlashAttention's blocked online softmax).
//
// Forward, per (batch, query head, block of Bq query rows), over blocks of Bk keys:
//
//     S   = scale * Q_blk K_blk^T + mask            (Bq x Bk)
//     m'  = max(m, rowmax S);  P = exp(S - m');  l = l * exp(m - m') + rowsum P
//     acc = acc * exp(m - m') + P V_blk
//
// and at the end out = acc / l, logsumexp = m + log l. Only Bq x Bk scores live at a
// time (per thread), so memory is O(L) however long the sequences are. A row whose keys
// are all masked gives 0 (and logsumexp -inf), as PyTorch's safe softmax.
//
// Backward recomputes P = exp(S - logsumexp) block by block (FlashAttention-2):
//
//     dV += P^T dO,  dP = dO V^T,  dS = P * (dP - D),  D = rowsum(dO * out)
//     dQ += scale dS K,  dK += scale dS^T Q
//
// in parallel over (batch, key/value head): a task owns its dK / dV and the dQ of the
// query heads sharing that key/value head (grouped-query attention: query head h reads
// key/value head h / (Hq / Hkv)), so nothing races.
//
// The forward's block products (128 query rows x 512 keys) are single-threaded BLAS
// GEMMs on each task's thread (gemm_cpu, Blas.h); the backward's (64 x 64) register-tiled
// loops over Vectorized<T>. float32 / float64; Attention.cpp runs
// float16 / bfloat16 in float32. The CUDA kernels (cuda/Attention.cu) implement the same
// two stubs for CUDA tensors (the _for_cpu operators dispatch on the inputs' device).

#include <ember/aten/Tensor.h>
#include <ember/aten/native/DispatchStub.h>

namespace ember::at::native {

struct AttentionParams {
  int64_t batch = 0, q_heads = 0, kv_heads = 0, L = 0, S = 0, E = 0, Ev = 0;
  // element strides (batch, head, row) of q (B, Hq, L, E), k (B, Hkv, S, E), v (B, Hkv, S, Ev);
  // the last dim is contiguous.
  int64_t q_stride[3] = {0, 0, 0}, k_stride[3] = {0, 0, 0}, v_stride[3] = {0, 0, 0};
  // additive mask of the compute dtype, broadcast to (B, Hq, L, S): element strides
  const void* mask = nullptr;
  int64_t mask_stride[4] = {0, 0, 0, 0};
  bool mask_is_bool = false;  // CUDA only: `mask` holds bools (True: take part) instead
  bool is_causal = false;     // key j takes part in query i's row only when j <= i (top-left)
  double scale = 1.0;
};

// out: (B, Hq, L, Ev) contiguous; logsumexp: (B, Hq, L) contiguous, both of `dtype`.
using sdpa_forward_fn = void (*)(ScalarType dtype, const AttentionParams& p, const void* q, const void* k,
                                 const void* v, void* out, void* logsumexp);
// grad_out / out: (B, Hq, L, Ev) contiguous; grads (contiguous, zero-filled by the caller):
// grad_q (B, Hq, L, E), grad_k (B, Hkv, S, E), grad_v (B, Hkv, S, Ev).
using sdpa_backward_fn = void (*)(ScalarType dtype, const AttentionParams& p, const void* q, const void* k,
                                  const void* v, const void* out, const void* logsumexp, const void* grad_out,
                                  void* grad_q, void* grad_k, void* grad_v);

DECLARE_DISPATCH(sdpa_forward_fn, sdpa_forward_stub);
DECLARE_DISPATCH(sdpa_backward_fn, sdpa_backward_stub);

}  // namespace ember::at::native
