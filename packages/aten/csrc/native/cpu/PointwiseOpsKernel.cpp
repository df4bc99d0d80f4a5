// CPU kernels of the ternary pointwise operators: lerp, addcmul, addcdiv, clamp, where.
#include <cmath>

#include <ember/aten/Dispatch.h>
#include <ember/aten/native/cpu/Loops.h>

#include "../PointwiseOps.h"
#include "../PointwiseOpsMath.h"

namespace ember::at::native {
inline namespace CPU_CAPABILITY {

using vec::Vectorized;
// the scalar formulas, shared with cuda/PointwiseOps.cu
using pointwise_math::lerp;
using pointwise_math::max_nan;
using pointwise_math::min_nan;

template <typename T>
constexpr bool kVecFloat = std::is_same_v<T, float> || std::is_same_v<T, double>;
template <typename T>
constexpr bool kVectorizable = kVecFloat<T> || (std::is_integral_v<T> && !std::is_same_v<T, bool>);

// ---- lerp -----------------------------------------------------------------------------------
// (the formulas: PointwiseOpsMath.h; the float / double paths are vectorized here)

template <typename scalar_t>
void lerp_scalar_impl(TensorIterator& iter, const Scalar& weight) {
  using opmath = opmath_t<scalar_t>;
  const opmath w = weight.to<opmath>();
  if constexpr (kVecFloat<scalar_t>) {
    using V = Vectorized<scalar_t>;
    const V vw(w), vw1(scalar_t(1) - w);
    if (std::abs(w) < opmath(0.5)) {
      cpu_kernel_vec(
          iter, [w](scalar_t a, scalar_t b) -> scalar_t { return a + w * (b - a); },
          [vw](V a, V b) { return a + vw * (b - a); });
    } else {
      cpu_kernel_vec(
          iter, [w](scalar_t a, scalar_t b) -> scalar_t { return b - (b - a) * (scalar_t(1) - w); },
          [vw1](V a, V b) { return b - (b - a) * vw1; });
    }
  } else {
    cpu_kernel(iter, [w](scalar_t a, scalar_t b) -> scalar_t {
      return static_cast<scalar_t>(lerp<opmath>(static_cast<opmath>(a), static_cast<opmath>(b), w));
    });
  }
}

void lerp_scalar_kernel(TensorIterator& iter, const Scalar& weight) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(iter.common_dtype(), "lerp",
                                         [&] { lerp_scalar_impl<scalar_t>(iter, weight); });
}

template <typename scalar_t>
void lerp_tensor_impl(TensorIterator& iter) {
  using opmath = opmath_t<scalar_t>;
  if constexpr (kVecFloat<scalar_t>) {
    using V = Vectorized<scalar_t>;
    cpu_kernel_vec(
        iter, [](scalar_t a, scalar_t b, scalar_t w) -> scalar_t { return lerp(a, b, w); },
        [](V a, V b, V w) {
          const auto small = (w.v < scalar_t(0.5)) & (w.v > scalar_t(-0.5));
          const auto lo = a.v + w.v * (b.v - a.v);
          const auto hi = b.v - (b.v - a.v) * (scalar_t(1) - w.v);
          return V::make(small ? lo : hi);
        });
  } else {
    cpu_kernel(iter, [](scalar_t a, scalar_t b, scalar_t w) -> scalar_t {
      return static_cast<scalar_t>(
          lerp<opmath>(static_cast<opmath>(a), static_cast<opmath>(b), static_cast<opmath>(w)));
    });
  }
}

void lerp_tensor_kernel(TensorIterator& iter) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(iter.common_dtype(), "lerp", [&] { lerp_tensor_impl<scalar_t>(iter); });
}

// ---- addcmul / addcdiv ------------------------------------------------------------------------

template <typename scalar_t>
void addcmul_impl(TensorIterator& iter, const Scalar& value) {
  using opmath = opmath_t<scalar_t>;
  const opmath v = value.to<opmath>();
  if constexpr (kVectorizable<scalar_t>) {
    const Vectorized<scalar_t> vv(v);
    cpu_kernel_vec(
        iter, [v](scalar_t a, scalar_t b, scalar_t c) -> scalar_t { return static_cast<scalar_t>(a + v * b * c); },
        [vv](Vectorized<scalar_t> a, Vectorized<scalar_t> b, Vectorized<scalar_t> c) { return a + vv * b * c; });
  } else {
    cpu_kernel(iter,
               [v](scalar_t a, scalar_t b, scalar_t c) -> scalar_t { return pointwise_math::addcmul(a, b, c, v); });
  }
}

void addcmul_kernel(TensorIterator& iter, const Scalar& value) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(iter.common_dtype(), "addcmul", [&] { addcmul_impl<scalar_t>(iter, value); });
}

template <typename scalar_t>
void addcdiv_impl(TensorIterator& iter, const Scalar& value) {
  using opmath = opmath_t<scalar_t>;
  const opmath v = value.to<opmath>();
  if constexpr (kVecFloat<scalar_t>) {
    const Vectorized<scalar_t> vv(v);
    cpu_kernel_vec(
        iter, [v](scalar_t a, scalar_t b, scalar_t c) -> scalar_t { return a + v * b / c; },
        [vv](Vectorized<scalar_t> a, Vectorized<scalar_t> b, Vectorized<scalar_t> c) { return a + vv * b / c; });
  } else {
    cpu_kernel(iter,
               [v](scalar_t a, scalar_t b, scalar_t c) -> scalar_t { return pointwise_math::addcdiv(a, b, c, v); });
  }
}

void addcdiv_kernel(TensorIterator& iter, const Scalar& value) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(iter.common_dtype(), "addcdiv", [&] { addcdiv_impl<scalar_t>(iter, value); });
}

// ---- clamp --------------------------------------------------------------------------------------
// With number bounds (never NaN here: clamp_out fills NaN itself), a NaN input stays
// NaN; with tensor bounds, a NaN anywhere gives NaN (maximum/minimum propagate it).

// kMode: 0 both bounds, 1 min only, 2 max only.
template <int kMode, typename scalar_t>
void clamp_scalar_impl(TensorIterator& iter, const Scalar& lo_s, const Scalar& hi_s) {
  using opmath = opmath_t<scalar_t>;
  const opmath lo = lo_s.to<opmath>(), hi = hi_s.to<opmath>();
  auto op = [lo, hi](opmath a) {
    if constexpr (kMode == 0) return min_nan(max_nan(a, lo), hi);
    if constexpr (kMode == 1) return max_nan(a, lo);
    if constexpr (kMode == 2) return min_nan(a, hi);
  };
  if constexpr (kVectorizable<scalar_t>) {
    const Vectorized<scalar_t> vlo(lo), vhi(hi);
    cpu_kernel_vec(
        iter, [op](scalar_t a) -> scalar_t { return op(a); },
        [vlo, vhi](Vectorized<scalar_t> a) {
          if constexpr (kMode == 0) return vec::minimum(vec::maximum(a, vlo), vhi);
          if constexpr (kMode == 1) return vec::maximum(a, vlo);
          if constexpr (kMode == 2) return vec::minimum(a, vhi);
        });
  } else {
    cpu_kernel(iter, [op](scalar_t a) -> scalar_t { return static_cast<scalar_t>(op(static_cast<opmath>(a))); });
  }
}

void clamp_scalar_kernel(TensorIterator& iter, const Scalar& lo, const Scalar& hi) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(iter.common_dtype(), "clamp",
                                    [&] { clamp_scalar_impl<0, scalar_t>(iter, lo, hi); });
}
void clamp_min_scalar_kernel(TensorIterator& iter, const Scalar& lo) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(iter.common_dtype(), "clamp",
                                    [&] { clamp_scalar_impl<1, scalar_t>(iter, lo, lo); });
}
void clamp_max_scalar_kernel(TensorIterator& iter, const Scalar& hi) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(iter.common_dtype(), "clamp",
                                    [&] { clamp_scalar_impl<2, scalar_t>(iter, hi, hi); });
}

template <typename scalar_t>
void clamp_tensor_impl(TensorIterator& iter) {
  using opmath = opmath_t<scalar_t>;
  if constexpr (kVectorizable<scalar_t>) {
    cpu_kernel_vec(
        iter, [](scalar_t a, scalar_t lo, scalar_t hi) -> scalar_t { return min_nan(max_nan(a, lo), hi); },
        [](Vectorized<scalar_t> a, Vectorized<scalar_t> lo, Vectorized<scalar_t> hi) {
          return vec::minimum(vec::maximum(a, lo), hi);
        });
  } else {
    cpu_kernel(iter, [](scalar_t a, scalar_t lo, scalar_t hi) -> scalar_t {
      return static_cast<scalar_t>(
          min_nan(max_nan(static_cast<opmath>(a), static_cast<opmath>(lo)), static_cast<opmath>(hi)));
    });
  }
}

void clamp_tensor_kernel(TensorIterator& iter) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(iter.common_dtype(), "clamp", [&] { clamp_tensor_impl<scalar_t>(iter); });
}

// ---- where -------------------------------------------------------------------------------------
// Selecting moves bytes: one loop per element size serves every dtype. The contiguous
// and broadcast-number shapes are plain loops the compiler turns into SIMD blends.

template <typename T>
struct WhereLoop2d {
  void operator()(char** base, const int64_t* strides, int64_t n, int64_t size1) const {
    char* data[4] = {base[0], base[1], base[2], base[3]};
    const int64_t so = strides[0], sc = strides[1], sa = strides[2], sb = strides[3];
    constexpr int64_t kT = sizeof(T);
    for (int64_t j = 0; j < size1; ++j) {
      T* __restrict__ out = reinterpret_cast<T*>(data[0]);
      const uint8_t* __restrict__ c = reinterpret_cast<const uint8_t*>(data[1]);
      const T* __restrict__ a = reinterpret_cast<const T*>(data[2]);
      const T* __restrict__ b = reinterpret_cast<const T*>(data[3]);
      if (so == kT && sc == 1 && sa == kT && sb == kT) {
        for (int64_t i = 0; i < n; ++i) out[i] = c[i] ? a[i] : b[i];
      } else if (so == kT && sc == 1 && sa == kT && sb == 0) {
        const T bv = *b;
        for (int64_t i = 0; i < n; ++i) out[i] = c[i] ? a[i] : bv;
      } else if (so == kT && sc == 1 && sa == 0 && sb == kT) {
        const T av = *a;
        for (int64_t i = 0; i < n; ++i) out[i] = c[i] ? av : b[i];
      } else if (so == kT && sc == 1 && sa == 0 && sb == 0) {
        const T av = *a, bv = *b;
        for (int64_t i = 0; i < n; ++i) out[i] = c[i] ? av : bv;
      } else {
        for (int64_t i = 0; i < n; ++i) {
          *reinterpret_cast<T*>(data[0] + i * so) = *reinterpret_cast<const uint8_t*>(data[1] + i * sc)
                                                        ? *reinterpret_cast<const T*>(data[2] + i * sa)
                                                        : *reinterpret_cast<const T*>(data[3] + i * sb);
        }
      }
      for (int k = 0; k < 4; ++k) data[k] += strides[4 + k];
    }
  }
};

void where_kernel(TensorIterator& iter) {
  switch (c10::elementSize(iter.dtype(0))) {
    case 1:
      iter.for_each(WhereLoop2d<uint8_t>{});
      return;
    case 2:
      iter.for_each(WhereLoop2d<uint16_t>{});
      return;
    case 4:
      iter.for_each(WhereLoop2d<uint32_t>{});
      return;
    case 8:
      iter.for_each(WhereLoop2d<uint64_t>{});
      return;
    default:
      EMBER_CHECK(false, "where: unsupported dtype ", c10::toPythonName(iter.dtype(0)));
  }
}

}  // namespace CPU_CAPABILITY

REGISTER_DISPATCH(lerp_scalar_stub, &lerp_scalar_kernel);
REGISTER_DISPATCH(lerp_tensor_stub, &lerp_tensor_kernel);
REGISTER_DISPATCH(addcmul_stub, &addcmul_kernel);
REGISTER_DISPATCH(addcdiv_stub, &addcdiv_kernel);
REGISTER_DISPATCH(clamp_scalar_stub, &clamp_scalar_kernel);
REGISTER_DISPATCH(clamp_min_scalar_stub, &clamp_min_scalar_kernel);
REGISTER_DISPATCH(clamp_max_scalar_stub, &clamp_max_scalar_kernel);
REGISTER_DISPATCH(clamp_tensor_stub, &clamp_tensor_kernel);
REGISTER_DISPATCH(where_stub, &where_kernel);

}  // namespace ember::at::native
