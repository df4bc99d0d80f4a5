// Host emulation of the fused attention kernels (Attention.cu), for tests without a GPU:
// every block of the launch the CUDA path would make, one after another, with one thread and
// 48 KiB of "shared memory" (so large heads shrink the tiles as on a GPU without the
// opt-in), on host pointers. The block code is AttentionKernels.cuh's, the shipped kernels'.
#include <vector>

#include "../../csrc/native/cuda/AttentionKernels.cuh"
#include "Emulation.h"
#include "StubEmulation.h"

namespace ember::at::native::cuda_emulation {
namespace {

using namespace cuda_sdpa;

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
// the CUDA kernels of Attention.cu, so the CPU attention tests check their logic; returns the
// previous state.
bool cuda_sdpa_emulation(bool on) {
  static bool active = false;
  static SlotSwap<sdpa_forward_stub_DECLARE_DISPATCH_type> s_fwd;
  static SlotSwap<sdpa_backward_stub_DECLARE_DISPATCH_type> s_bwd;
  const bool was = active;
  if (on == active) return was;
  s_fwd.swap(sdpa_forward_stub, &sdpa_forward_emulated, on);
  s_bwd.swap(sdpa_backward_stub, &sdpa_backward_emulated, on);
  active = on;
  return was;
}

}  // namespace ember::at::native::cuda_emulation
