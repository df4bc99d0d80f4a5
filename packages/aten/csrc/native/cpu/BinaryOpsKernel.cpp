// CPU kernels of add/sub (with alpha), mul and the three divisions.
#include <cmath>

#include <ember/aten/Dispatch.h>
#include <ember/aten/native/cpu/Loops.h>

#include "../BinaryOps.h"

namespace ember::at::native {
inline namespace CPU_CAPABILITY {

using vec::Vectorized;

template <typename T>
constexpr bool kVectorizable = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                               (std::is_integral_v<T> && !std::is_same_v<T, bool>);

// Integer division by zero raises, as in PyTorch ("ZeroDivisionError").
template <typename T>
inline void check_int_divisor(T b) {
  if constexpr (std::is_integral_v<T>) {
    if (b == 0) throw c10::Error("ZeroDivisionError");
  }
}

// Each kernel body is a template over scalar_t so that `if constexpr` discards the
// branches a dtype cannot compile (a dispatch lambda is not a template).
template <typename scalar_t>
void add_impl(TensorIterator& iter, const Scalar& alpha_scalar) {
  using opmath = opmath_t<scalar_t>;
  const opmath alpha = alpha_scalar.to<opmath>();
  if constexpr (kVectorizable<scalar_t>) {
    if (alpha == opmath(1)) {
      cpu_kernel_vec(
          iter, [](scalar_t a, scalar_t b) -> scalar_t { return a + b; },
          [](Vectorized<scalar_t> a, Vectorized<scalar_t> b) { return a + b; });
    } else {
      const Vectorized<scalar_t> valpha(alpha);
      cpu_kernel_vec(
          iter, [alpha](scalar_t a, scalar_t b) -> scalar_t { return static_cast<scalar_t>(a + alpha * b); },
          [valpha](Vectorized<scalar_t> a, Vectorized<scalar_t> b) { return a + valpha * b; });
    }
  } else {
    cpu_kernel(iter, [alpha](scalar_t a, scalar_t b) -> scalar_t {
      return static_cast<scalar_t>(static_cast<opmath>(a) + alpha * static_cast<opmath>(b));
    });
  }
}

void add_kernel(TensorIterator& iter, const Scalar& alpha_scalar) {
  const ScalarType dtype = iter.common_dtype();
  if (dtype == ScalarType::Bool) {
    const bool alpha = alpha_scalar.toBool();
    cpu_kernel(iter, [alpha](bool a, bool b) -> bool { return a || (alpha && b); });
    return;
  }
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(dtype, "add", [&] { add_impl<scalar_t>(iter, alpha_scalar); });
}

template <typename scalar_t>
void mul_impl(TensorIterator& iter) {
  if constexpr (kVectorizable<scalar_t>) {
    cpu_kernel_vec(
        iter, [](scalar_t a, scalar_t b) -> scalar_t { return a * b; },
        [](Vectorized<scalar_t> a, Vectorized<scalar_t> b) { return a * b; });
  } else {
    cpu_kernel(iter, [](scalar_t a, scalar_t b) -> scalar_t {
      return static_cast<scalar_t>(static_cast<float>(a) * static_cast<float>(b));
    });
  }
}

void mul_kernel(TensorIterator& iter) {
  const ScalarType dtype = iter.common_dtype();
  if (dtype == ScalarType::Bool) {
    cpu_kernel(iter, [](bool a, bool b) -> bool { return a && b; });
    return;
  }
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(dtype, "mul", [&] { mul_impl<scalar_t>(iter); });
}

template <typename scalar_t>
void div_true_impl(TensorIterator& iter) {
  if constexpr (std::is_same_v<scalar_t, float> || std::is_same_v<scalar_t, double>) {
    cpu_kernel_vec(
        iter, [](scalar_t a, scalar_t b) -> scalar_t { return a / b; },
        [](Vectorized<scalar_t> a, Vectorized<scalar_t> b) { return a / b; });
  } else {
    cpu_kernel(iter, [](scalar_t a, scalar_t b) -> scalar_t {
      return static_cast<scalar_t>(static_cast<float>(a) / static_cast<float>(b));
    });
  }
}

void div_true_kernel(TensorIterator& iter) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(iter.common_dtype(), "div", [&] { div_true_impl<scalar_t>(iter); });
}

template <typename scalar_t>
scalar_t div_trunc_op(scalar_t a, scalar_t b) {
  if constexpr (std::is_integral_v<scalar_t>) {
    check_int_divisor(b);
    return static_cast<scalar_t>(a / b);
  } else {
    using opmath = opmath_t<scalar_t>;
    return static_cast<scalar_t>(std::trunc(static_cast<opmath>(a) / static_cast<opmath>(b)));
  }
}

void div_trunc_kernel(TensorIterator& iter) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(iter.common_dtype(), "div", [&] {
    cpu_kernel(iter, [](scalar_t a, scalar_t b) -> scalar_t { return div_trunc_op<scalar_t>(a, b); });
  });
}

// Python's floor division: the quotient rounded toward -inf (as PyTorch's div_floor).
template <typename scalar_t>
scalar_t div_floor_op(scalar_t a, scalar_t b) {
  if constexpr (std::is_integral_v<scalar_t>) {
    check_int_divisor(b);
    if constexpr (std::is_signed_v<scalar_t>) {
      const scalar_t q = a / b;
      return static_cast<scalar_t>(((a % b != 0) && ((a < 0) != (b < 0))) ? q - 1 : q);
    } else {
      return static_cast<scalar_t>(a / b);
    }
  } else {
    using opmath = opmath_t<scalar_t>;
    const opmath x = static_cast<opmath>(a), y = static_cast<opmath>(b);
    if (y == 0) return static_cast<scalar_t>(x / y);
    const opmath mod = std::fmod(x, y);
    opmath div = (x - mod) / y;
    if (mod != 0 && ((y < 0) != (mod < 0))) div -= 1;
    opmath floordiv;
    if (div != 0) {
      floordiv = std::floor(div);
      if (div - floordiv > opmath(0.5)) floordiv += 1;
    } else {
      floordiv = std::copysign(opmath(0), x / y);
    }
    return static_cast<scalar_t>(floordiv);
  }
}

void div_floor_kernel(TensorIterator& iter) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(iter.common_dtype(), "div", [&] {
    cpu_kernel(iter, [](scalar_t a, scalar_t b) -> scalar_t { return div_floor_op<scalar_t>(a, b); });
  });
}

}  // namespace CPU_CAPABILITY

REGISTER_DISPATCH(add_stub, &add_kernel);
REGISTER_DISPATCH(mul_stub, &mul_kernel);
REGISTER_DISPATCH(div_true_stub, &div_true_kernel);
REGISTER_DISPATCH(div_trunc_stub, &div_trunc_kernel);
REGISTER_DISPATCH(div_floor_stub, &div_floor_kernel);

}  // namespace ember::at::native
