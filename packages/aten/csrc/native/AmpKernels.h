#pragma once
// The fused kernels of automatic mixed precision's GradScaler (ember.aten.amp), as
// PyTorch's: _amp_foreach_non_finite_check_and_unscale_ multiplies every gradient by
// inv_scale in place and sets found_inf to 1 if any element was inf or NaN;
// _amp_update_scale_ then backs the scale off (found_inf) or grows it after
// growth_interval clean steps. found_inf, inv_scale and the scale are 1-element float32
// tensors, the growth tracker a 1-element int32 tensor, all on the gradients' device,
// so a CUDA step never reads them on the host. CPU kernels: AmpKernels.cpp (baseline
// slot, these are memory-bound single passes); CUDA: cuda/AmpKernels.cu.

#include <cstdint>
#include <vector>

#include <ember/aten/Tensor.h>
#include <ember/aten/native/DispatchStub.h>

namespace ember::at::native {

// One gradient: contiguous data of `dtype` with `numel` elements.
struct AmpGrad {
  void* data;
  int64_t numel;
  ScalarType dtype;
};

using amp_unscale_fn = void (*)(const std::vector<AmpGrad>& grads, float* found_inf, const float* inv_scale);
using amp_update_scale_fn = void (*)(float* current_scale, int32_t* growth_tracker, const float* found_inf,
                                     double growth_factor, double backoff_factor, int64_t growth_interval);
DECLARE_DISPATCH(amp_unscale_fn, amp_unscale_stub);
DECLARE_DISPATCH(amp_update_scale_fn, amp_update_scale_stub);

}  // namespace ember::at::native
