// Host emulation of linalg_cross's CUDA kernel (Cross.cu), for tests without a GPU: the
// kernel's per-position code (CrossKernel.cuh) over the same 32-bit pieces and offset
// calculator, serially on CPU tensors, in the CPU slot of cross_stub.
#include <ember/aten/Dispatch.h>

#include "../../csrc/native/Cross.h"
#include "../../csrc/native/cuda/CrossKernel.cuh"
#include "Emulation.h"
#include "StubEmulation.h"

namespace ember::at::native::cuda_emulation {
namespace {

using namespace cuda_cross;

void cross_emulated(TensorIterator& iter, int64_t so, int64_t sa, int64_t sb) {
  for_each_32bit_piece(iter, [&](const TensorIterator& piece) {
    const int64_t n = piece.numel();
    if (n == 0) return;
    const cuda_detail::OffsetCalculator<3> calc = cross_offsets(piece);
    char* out = static_cast<char*>(piece.data_ptr(0));
    const char* self = static_cast<const char*>(piece.data_ptr(1));
    const char* other = static_cast<const char*>(piece.data_ptr(2));
    EMBER_DISPATCH_ALL_TYPES_AND_HALF(piece.dtype(0), "cross_cuda", [&] {
      for (int64_t i = 0; i < n; ++i) cross_point<scalar_t>(calc, out, self, other, so, sa, sb, i);
    });
  });
}

}  // namespace

// true: every CPU slot of cross_stub runs the host emulation of Cross.cu's kernel; returns
// the previous state.
bool cuda_cross_emulation(bool on) {
  static bool active = false;
  static SlotSwap<cross_stub_DECLARE_DISPATCH_type> s_cross;
  const bool was = active;
  if (on == active) return was;
  s_cross.swap(cross_stub, &cross_emulated, on);
  active = on;
  return was;
}

}  // namespace ember::at::native::cuda_emulation
