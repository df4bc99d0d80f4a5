// Host emulation of the softmax kernels (SoftMax.cu), for tests without a GPU: each kernel's
// block code (SoftMaxKernels.cuh) run as one block of one thread on CPU tensors.
#include <ember/aten/Dispatch.h>

#include "../../csrc/native/SoftMax.h"
#include "../../csrc/native/cuda/SoftMaxKernels.cuh"
#include "Emulation.h"
#include "StubEmulation.h"

namespace ember::at::native::cuda_emulation {
namespace {

using namespace cuda_softmax;

constexpr Ctx kHostCtx{0, 1, 0, 1};

void softmax_kernel_emulated(const Tensor& out, const Tensor& self, int64_t outer, int64_t dim_size, int64_t inner,
                             bool log) {
  EMBER_DISPATCH_FLOATING_TYPES(self.dtype(), "softmax_emulated", [&] {
    const scalar_t* x = self.data_ptr<scalar_t>();
    scalar_t* y = out.data_ptr<scalar_t>();
    if (inner == 1) {
      softmax_rows_block<scalar_t>(kHostCtx, y, x, outer, dim_size, log);
    } else {
      softmax_cols_block<scalar_t>(kHostCtx, y, x, outer, dim_size, inner, log);
    }
  });
}

void softmax_backward_kernel_emulated(const Tensor& grad_input, const Tensor& grad_output, const Tensor& output,
                                      int64_t outer, int64_t dim_size, int64_t inner, bool log) {
  EMBER_DISPATCH_FLOATING_TYPES(output.dtype(), "softmax_backward_emulated", [&] {
    const scalar_t* g = grad_output.data_ptr<scalar_t>();
    const scalar_t* y = output.data_ptr<scalar_t>();
    scalar_t* gi = grad_input.data_ptr<scalar_t>();
    if (inner == 1) {
      softmax_backward_rows_block<scalar_t>(kHostCtx, gi, g, y, outer, dim_size, log);
    } else {
      softmax_backward_cols_block<scalar_t>(kHostCtx, gi, g, y, outer, dim_size, inner, log);
    }
  });
}

}  // namespace

// true: the CPU slots of softmax_stub / softmax_backward_stub run the host emulation of the
// CUDA kernels of SoftMax.cu (their block code, one thread), so the CPU softmax tests check it;
// returns the previous state.
bool cuda_softmax_emulation(bool on) {
  static bool active = false;
  static SlotSwap<softmax_stub_DECLARE_DISPATCH_type> s_fwd;
  static SlotSwap<softmax_backward_stub_DECLARE_DISPATCH_type> s_bwd;
  const bool was = active;
  if (on == active) return was;
  s_fwd.swap(softmax_stub, &softmax_kernel_emulated, on);
  s_bwd.swap(softmax_backward_stub, &softmax_backward_kernel_emulated, on);
  active = on;
  return was;
}

}  // namespace ember::at::native::cuda_emulation
