#pragma once
// Separable resampling: padding (reflect / replicate), nearest and bilinear upsampling.
//
// Each is a map from output to input positions that factors over the spatial dims: along
// a dim of size `in` -> `out`, output position o reads `taps` input positions index[o * taps
// + t] with weights weight[o * taps + t] (reflect / replicate / nearest: 1 tap of weight 1;
// linear interpolation: 2 taps). Forward sums the products of the three dims' weights over
// their taps; backward scatters the gradient back the same way. Every kernel works on
// `planes` contiguous (D, H, W) planes (1-d / 2-d: leading size-1 dims with the identity
// map) in parallel over planes, so a backward pass never races: it only writes the plane
// its gradient came from.

#include <ember/aten/Tensor.h>
#include <ember/aten/native/DispatchStub.h>

namespace ember::at::native {

struct ResampleDim {
  int64_t in = 1, out = 1, taps = 1;
  const int64_t* index = nullptr;  // out * taps input positions
  const double* weight = nullptr;  // out * taps weights; nullptr: one tap of weight 1
};

// One tap per dim, no weights: a copy of elements of `elem_size` bytes (any dtype).
using resample_gather_fn = void (*)(int64_t elem_size, const void* in, void* out, int64_t planes,
                                    const ResampleDim* dims);
// Weighted taps, float32 / float64.
using resample_fn = void (*)(ScalarType dtype, const void* in, void* out, int64_t planes, const ResampleDim* dims);
// grad_in (zero-filled by the caller) += the transposed map of grad_out; float32 / float64.
using resample_backward_fn = void (*)(ScalarType dtype, const void* grad_out, void* grad_in, int64_t planes,
                                      const ResampleDim* dims);

DECLARE_DISPATCH(resample_gather_fn, resample_gather_stub);
DECLARE_DISPATCH(resample_fn, resample_stub);
DECLARE_DISPATCH(resample_backward_fn, resample_backward_stub);

}  // namespace ember::at::native
