// CPU kernels of separable resampling (see ../Resample.h).
#include <algorithm>
#include <cstdint>
#include <cstring>

#include <ember/aten/Parallel.h>

#include "../Resample.h"

namespace ember::at::native {
inline namespace CPU_CAPABILITY {
namespace {

int64_t grain_planes(int64_t per_plane) { return std::max<int64_t>(1, GRAIN_SIZE / std::max<int64_t>(per_plane, 1)); }

template <typename E>
void gather_impl(const E* in, E* out, int64_t planes, const ResampleDim* d) {
  const int64_t iHW = d[1].in * d[2].in, iW = d[2].in;
  const int64_t oD = d[0].out, oH = d[1].out, oW = d[2].out, on = oD * oH * oW;
  const int64_t* xd = d[0].index;
  const int64_t* xh = d[1].index;
  const int64_t* xw = d[2].index;
  parallel_for(0, planes, grain_planes(on), [&](int64_t pb, int64_t pe) {
    for (int64_t p = pb; p < pe; ++p) {
      const E* src = in + p * d[0].in * iHW;
      E* dst = out + p * on;
      for (int64_t od = 0; od < oD; ++od) {
        for (int64_t oh = 0; oh < oH; ++oh) {
          const E* row = src + xd[od] * iHW + xh[oh] * iW;
          for (int64_t ow = 0; ow < oW; ++ow) *dst++ = row[xw[ow]];
        }
      }
    }
  });
}

void gather_kernel(int64_t elem_size, const void* in, void* out, int64_t planes, const ResampleDim* dims) {
  switch (elem_size) {
    case 1:
      return gather_impl(static_cast<const uint8_t*>(in), static_cast<uint8_t*>(out), planes, dims);
    case 2:
      return gather_impl(static_cast<const uint16_t*>(in), static_cast<uint16_t*>(out), planes, dims);
    case 4:
      return gather_impl(static_cast<const uint32_t*>(in), static_cast<uint32_t*>(out), planes, dims);
    default:
      return gather_impl(static_cast<const uint64_t*>(in), static_cast<uint64_t*>(out), planes, dims);
  }
}

inline double tap_weight(const ResampleDim& d, int64_t i) { return d.weight ? d.weight[i] : 1.0; }

// Visits every (output element, input element, weight) of one plane; Backward: f gets the
// output index first either way.
template <typename T, typename F>
inline void for_each_tap(const ResampleDim* d, const F& f) {
  const int64_t iHW = d[1].in * d[2].in, iW = d[2].in;
  const int64_t oH = d[1].out, oW = d[2].out;
  const int64_t td = d[0].taps, th = d[1].taps, tw = d[2].taps;
  for (int64_t od = 0; od < d[0].out; ++od) {
    for (int64_t oh = 0; oh < oH; ++oh) {
      for (int64_t ow = 0; ow < oW; ++ow) {
        const int64_t o = (od * oH + oh) * oW + ow;
        for (int64_t a = 0; a < td; ++a) {
          const T wa = static_cast<T>(tap_weight(d[0], od * td + a));
          const int64_t ia = d[0].index[od * td + a] * iHW;
          for (int64_t b = 0; b < th; ++b) {
            const T wab = wa * static_cast<T>(tap_weight(d[1], oh * th + b));
            const int64_t iab = ia + d[1].index[oh * th + b] * iW;
            for (int64_t c = 0; c < tw; ++c) {
              f(o, iab + d[2].index[ow * tw + c], wab * static_cast<T>(tap_weight(d[2], ow * tw + c)));
            }
          }
        }
      }
    }
  }
}

template <typename T>
void resample_impl(const T* in, T* out, int64_t planes, const ResampleDim* d) {
  const int64_t in_n = d[0].in * d[1].in * d[2].in, on = d[0].out * d[1].out * d[2].out;
  parallel_for(0, planes, grain_planes(on * d[0].taps * d[1].taps * d[2].taps), [&](int64_t pb, int64_t pe) {
    for (int64_t p = pb; p < pe; ++p) {
      const T* src = in + p * in_n;
      T* dst = out + p * on;
      std::memset(static_cast<void*>(dst), 0, sizeof(T) * on);
      for_each_tap<T>(d, [&](int64_t o, int64_t i, T w) { dst[o] += w * src[i]; });
    }
  });
}

template <typename T>
void resample_backward_impl(const T* gout, T* gin, int64_t planes, const ResampleDim* d) {
  const int64_t in_n = d[0].in * d[1].in * d[2].in, on = d[0].out * d[1].out * d[2].out;
  parallel_for(0, planes, grain_planes(on * d[0].taps * d[1].taps * d[2].taps), [&](int64_t pb, int64_t pe) {
    for (int64_t p = pb; p < pe; ++p) {
      const T* src = gout + p * on;
      T* dst = gin + p * in_n;
      for_each_tap<T>(d, [&](int64_t o, int64_t i, T w) { dst[i] += w * src[o]; });
    }
  });
}

void resample_kernel(ScalarType dtype, const void* in, void* out, int64_t planes, const ResampleDim* dims) {
  if (dtype == ScalarType::Double) {
    resample_impl(static_cast<const double*>(in), static_cast<double*>(out), planes, dims);
  } else {
    resample_impl(static_cast<const float*>(in), static_cast<float*>(out), planes, dims);
  }
}

void resample_backward_kernel(ScalarType dtype, const void* gout, void* gin, int64_t planes, const ResampleDim* dims) {
  if (dtype == ScalarType::Double) {
    resample_backward_impl(static_cast<const double*>(gout), static_cast<double*>(gin), planes, dims);
  } else {
    resample_backward_impl(static_cast<const float*>(gout), static_cast<float*>(gin), planes, dims);
  }
}

}  // namespace
}  // namespace CPU_CAPABILITY

REGISTER_DISPATCH(resample_gather_stub, &gather_kernel);
REGISTER_DISPATCH(resample_stub, &resample_kernel);
REGISTER_DISPATCH(resample_backward_stub, &resample_backward_kernel);

}  // namespace ember::at::native
