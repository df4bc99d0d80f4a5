// Host emulation of the row-norm kernels (Normalization.cu: layer / RMS norm, group norm's
// statistics), for tests without a GPU: their block code (NormalizationKernels.cuh) run as
// blocks of one thread on CPU tensors, with the chunking of row_norm_backward_kernel_cuda.
#include <algorithm>

#include <ember/aten/Dispatch.h>

#include "../../csrc/native/Normalization.h"
#include "../../csrc/native/cuda/CUDAUtils.cuh"
#include "../../csrc/native/cuda/NormalizationKernels.cuh"
#include "Emulation.h"
#include "StubEmulation.h"

namespace ember::at::native::cuda_emulation {
namespace {

using namespace cuda_norm;

constexpr Ctx kHostCtx{0, 1, 0, 0, 1};

void row_norm_kernel_emulated(const Tensor& out, const Tensor& mean, const Tensor& rstd, const Tensor& x,
                              const Tensor& w, const Tensor& b, int64_t M, int64_t D, double eps, bool rms) {
  EMBER_DISPATCH_FLOATING_TYPES(x.dtype(), "row_norm_emulated", [&] {
    row_norm_block<scalar_t>(kHostCtx, mut_ptr_or_null<scalar_t>(out), mut_ptr_or_null<scalar_t>(mean),
                             rstd.data_ptr<scalar_t>(), x.data_ptr<scalar_t>(), ptr_or_null<scalar_t>(w),
                             ptr_or_null<scalar_t>(b), M, D, eps, rms);
  });
}

void row_norm_backward_kernel_emulated(const Tensor& gi, const Tensor& gw, const Tensor& gb, const Tensor& g,
                                       const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& w,
                                       int64_t M, int64_t D, bool rms) {
  EMBER_DISPATCH_FLOATING_TYPES(x.dtype(), "row_norm_backward_emulated", [&] {
    using T = scalar_t;
    if (gi.defined()) {
      row_norm_backward_input_block<T>(kHostCtx, gi.data_ptr<T>(), g.data_ptr<T>(), x.data_ptr<T>(),
                                       ptr_or_null<T>(mean), rstd.data_ptr<T>(), ptr_or_null<T>(w), M, D, rms);
    }
    if (!gw.defined() && !gb.defined()) return;
    // the chunking of row_norm_backward_kernel_cuda, chunk by chunk (blockIdx.y)
    const int64_t nchunks = std::max<int64_t>(1, std::min<int64_t>(M, 64));
    const int64_t rows_per = cuda::ceil_div(M, nchunks);
    Tensor pw = gw.defined() ? at::empty({nchunks, D}, ScalarType::Double, x.device()) : Tensor();
    Tensor pb = gb.defined() ? at::empty({nchunks, D}, ScalarType::Double, x.device()) : Tensor();
    for (int64_t ch = 0; ch < nchunks; ++ch) {
      row_norm_backward_params_block<T>(Ctx{0, 1, ch, 0, 1}, mut_ptr_or_null<double>(pw), mut_ptr_or_null<double>(pb),
                                        g.data_ptr<T>(), x.data_ptr<T>(), ptr_or_null<T>(mean), rstd.data_ptr<T>(), M,
                                        D, rows_per);
    }
    if (gw.defined()) sum_chunks_block<T>(kHostCtx, gw.data_ptr<T>(), pw.data_ptr<double>(), nchunks, D);
    if (gb.defined()) sum_chunks_block<T>(kHostCtx, gb.data_ptr<T>(), pb.data_ptr<double>(), nchunks, D);
  });
}
}  // namespace

// true: the CPU slots of row_norm_stub / row_norm_backward_stub (layer norm, RMS norm and
// group norm's statistics) run the host emulation of the CUDA kernels of Normalization.cu; returns the
// previous state.
bool cuda_row_norm_emulation(bool on) {
  static bool active = false;
  static SlotSwap<row_norm_stub_DECLARE_DISPATCH_type> s_fwd;
  static SlotSwap<row_norm_backward_stub_DECLARE_DISPATCH_type> s_bwd;
  const bool was = active;
  if (on == active) return was;
  s_fwd.swap(row_norm_stub, &row_norm_kernel_emulated, on);
  s_bwd.swap(row_norm_backward_stub, &row_norm_backward_kernel_emulated, on);
  active = on;
  return was;
}

}  // namespace ember::at::native::cuda_emulation
