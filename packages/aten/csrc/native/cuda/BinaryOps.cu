// CUDA kernels of the elementwise binary operators (the stubs of BinaryOps.h), with
// the dtypes of cpu/BinaryOpsKernel.cpp and the formulas both share (BinaryOpsMath.h).
//
// add, mul and true division have a kernel of their own per dtype (they are the hot
// ones); the other operators of one dtype list share a kernel per dtype with the op
// as a run-time code (see UnaryOps.cu), which keeps the number of instantiations --
// and the compile time -- down.
//
// Integer division, remainder and fmod by zero raise "ZeroDivisionError" as on the
// CPU (PyTorch's CUDA kernels do not). A zero CPU-scalar divisor is seen on the host
// and raises at once. A zero in a divisor on the device is reported by the kernel
// through the device-error slot (CUDAUtils.cuh: as device-side index errors), so it
// costs no synchronisation: the error is raised at the next check point -- the next
// launch of a kernel that can report, a device-to-host copy, or
// ember.aten.cuda.synchronize(). The quotient is then -1 (all bits set) and the
// remainder the dividend.
#include <limits>
#include <type_traits>

#include <ember/aten/Dispatch.h>

#include "../BinaryOps.h"
#include "../BinaryOpsMath.h"
#include "../ScalarMath.h"
#include "Loops.cuh"

namespace ember::at::native {
namespace {

namespace m = scalar_math;
namespace bm = binary_math;  // the scalar formulas, shared with cpu/BinaryOpsKernel.cpp

// ---- add / mul / true division ----
template <typename scalar_t>
void add_impl(TensorIterator& iter, const Scalar& alpha_scalar) {
  using opmath = opmath_t<scalar_t>;
  const opmath alpha = alpha_scalar.to<opmath>();
  gpu_kernel(iter, [alpha] EMBER_GPU_LAMBDA(scalar_t a, scalar_t b) -> scalar_t {
    return static_cast<scalar_t>(static_cast<opmath>(a) + alpha * static_cast<opmath>(b));
  });
}

void add_kernel_cuda(TensorIterator& iter, const Scalar& alpha_scalar) {
  const ScalarType dtype = iter.common_dtype();
  if (dtype == ScalarType::Bool) {
    const bool alpha = alpha_scalar.toBool();
    gpu_kernel(iter, [alpha] EMBER_GPU_LAMBDA(bool a, bool b) -> bool { return a || (alpha && b); });
    return;
  }
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(dtype, "add", [&] { add_impl<scalar_t>(iter, alpha_scalar); });
}

void mul_kernel_cuda(TensorIterator& iter) {
  const ScalarType dtype = iter.common_dtype();
  if (dtype == ScalarType::Bool) {
    gpu_kernel(iter, [] EMBER_GPU_LAMBDA(bool a, bool b) -> bool { return a && b; });
    return;
  }
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(dtype, "mul", [&] {
    using opmath = opmath_t<scalar_t>;
    gpu_kernel(iter, [] EMBER_GPU_LAMBDA(scalar_t a, scalar_t b) -> scalar_t {
      return static_cast<scalar_t>(static_cast<opmath>(a) * static_cast<opmath>(b));
    });
  });
}

void div_true_kernel_cuda(TensorIterator& iter) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(iter.common_dtype(), "div", [&] {
    using opmath = opmath_t<scalar_t>;
    gpu_kernel(iter, [] EMBER_GPU_LAMBDA(scalar_t a, scalar_t b) -> scalar_t {
      return static_cast<scalar_t>(static_cast<opmath>(a) / static_cast<opmath>(b));
    });
  });
}

// ---- the arithmetic family: every numeric dtype ----
enum class ArithFn : int { DivTrunc, DivFloor, Remainder, Fmod, Maximum, Minimum, Fmax, Fmin, Pow };

// Where a kernel reports an integer division by zero (slot null: nowhere).
struct ZeroDivisionReport {
  ember::at::cuda::DeviceError* slot = nullptr;
  int op = 0;
};

EMBER_HOST_DEVICE inline void report_zero_division(const ZeroDivisionReport& r) {
#if defined(__CUDA_ARCH__)
  if (r.slot) ember::at::cuda::report_index_error(r.slot, r.op, 0, 0, 0);
#else
  (void)r;
#endif
}

// A zero divisor is reported; the quotient is then -1 (all bits set), the remainder a.
template <typename T>
EMBER_HOST_DEVICE T int_arith(ArithFn f, T a, T b, const ZeroDivisionReport& zr) {
  const bool division =
      f == ArithFn::DivTrunc || f == ArithFn::DivFloor || f == ArithFn::Remainder || f == ArithFn::Fmod;
  if (division && b == 0) {
    report_zero_division(zr);
    return f == ArithFn::DivTrunc || f == ArithFn::DivFloor ? static_cast<T>(~T(0)) : a;
  }
  switch (f) {
    case ArithFn::DivTrunc:
      return bm::div_trunc(a, b);
    case ArithFn::DivFloor:
      return bm::div_floor(a, b);
    case ArithFn::Remainder:
      return bm::remainder(a, b);
    case ArithFn::Fmod:
      return bm::fmod(a, b);
    case ArithFn::Maximum:
    case ArithFn::Fmax:
      return bm::max_min<true>(a, b);
    case ArithFn::Minimum:
    case ArithFn::Fmin:
      return bm::max_min<false>(a, b);
    default:
      return bm::powi(a, b);
  }
}

template <typename scalar_t>
EMBER_HOST_DEVICE scalar_t float_arith(ArithFn f, scalar_t a, scalar_t b) {
  using opmath = opmath_t<scalar_t>;
  const opmath x = static_cast<opmath>(a), y = static_cast<opmath>(b);
  switch (f) {
    case ArithFn::DivTrunc:
      return bm::div_trunc(a, b);
    case ArithFn::DivFloor:
      return bm::div_floor(a, b);
    case ArithFn::Remainder:
      return bm::remainder(a, b);
    case ArithFn::Fmod:
      return bm::fmod(a, b);
    case ArithFn::Maximum:
      return bm::max_min<true>(a, b);
    case ArithFn::Minimum:
      return bm::max_min<false>(a, b);
    case ArithFn::Fmax:
      return static_cast<scalar_t>(m::fmax(x, y));
    case ArithFn::Fmin:
      return static_cast<scalar_t>(m::fmin(x, y));
    default:
      return static_cast<scalar_t>(m::pow(x, y));
  }
}

template <typename scalar_t>
void arith_impl(TensorIterator& iter, ArithFn f, ZeroDivisionReport zr) {
  gpu_kernel(iter, [f, zr] EMBER_GPU_LAMBDA(scalar_t a, scalar_t b) -> scalar_t {
    if constexpr (std::is_integral_v<scalar_t>) {
      return int_arith<scalar_t>(f, a, b, zr);
    } else {
      return float_arith<scalar_t>(f, a, b);
    }
  });
}

// An integer division (div trunc / floor, remainder, fmod) by zero raises
// ZeroDivisionError as on the CPU: at once for a zero CPU-scalar divisor (input 1,
// operand 2); for a divisor on the device, the kernel reports it (see the top of the
// file). Returns where the kernel reports (nowhere for other ops and dtypes).
ZeroDivisionReport prepare_integer_divisor_check(const TensorIterator& iter, ArithFn f) {
  const bool division =
      f == ArithFn::DivTrunc || f == ArithFn::DivFloor || f == ArithFn::Remainder || f == ArithFn::Fmod;
  if (!division || !c10::isIntegralType(iter.common_dtype(), /*includeBool=*/false) || iter.numel() == 0) return {};
  constexpr int kDivisor = 2;
  if (iter.is_cpu_scalar(kDivisor)) {
    if (iter.scalar_value(kDivisor).toLong() == 0) throw c10::Error("ZeroDivisionError");
    return {};
  }
  const int device = iter.device(0).index;
  // errors reported earlier on this device surface first, as before any reporting launch
  ember::at::cuda::check_device_errors(device);
  static const int op = ember::at::cuda::register_error_format("ZeroDivisionError", /*index_error=*/false);
  return {ember::at::cuda::device_error_slot(device), op};
}

void arith_kernel(TensorIterator& iter, ArithFn f, const char* name) {
  const ZeroDivisionReport zr = prepare_integer_divisor_check(iter, f);
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(iter.common_dtype(), name, [&] { arith_impl<scalar_t>(iter, f, zr); });
}

void div_trunc_kernel_cuda(TensorIterator& iter) { arith_kernel(iter, ArithFn::DivTrunc, "div"); }
void div_floor_kernel_cuda(TensorIterator& iter) { arith_kernel(iter, ArithFn::DivFloor, "div"); }
void remainder_kernel_cuda(TensorIterator& iter) { arith_kernel(iter, ArithFn::Remainder, "remainder"); }
void fmod_kernel_cuda(TensorIterator& iter) { arith_kernel(iter, ArithFn::Fmod, "fmod"); }
void pow_tensor_tensor_kernel_cuda(TensorIterator& iter) { arith_kernel(iter, ArithFn::Pow, "pow"); }

// maximum / minimum of bools are or / and.
void max_min_kernel(TensorIterator& iter, bool is_max, ArithFn f, const char* name) {
  if (iter.common_dtype() == ScalarType::Bool) {
    gpu_kernel(iter, [is_max] EMBER_GPU_LAMBDA(bool a, bool b) -> bool { return is_max ? (a || b) : (a && b); });
    return;
  }
  arith_kernel(iter, f, name);
}
void maximum_kernel_cuda(TensorIterator& iter) { max_min_kernel(iter, true, ArithFn::Maximum, "maximum"); }
void minimum_kernel_cuda(TensorIterator& iter) { max_min_kernel(iter, false, ArithFn::Minimum, "minimum"); }
// (integers have no NaN: fmax / fmin are maximum / minimum there)
void fmax_kernel_cuda(TensorIterator& iter) { max_min_kernel(iter, true, ArithFn::Fmax, "fmax"); }
void fmin_kernel_cuda(TensorIterator& iter) { max_min_kernel(iter, false, ArithFn::Fmin, "fmin"); }

// ---- pow with an exponent known on the host ----
// The common float exponents are cheaper than pow (as the CPU kernel).
enum class PowKind : int { Square, Cube, Sqrt, RSqrt, Reciprocal, InvSquare, General };

template <typename scalar_t>
void pow_tensor_scalar_impl(TensorIterator& iter, const Scalar& exp) {
  if constexpr (std::is_integral_v<scalar_t>) {
    const scalar_t e = exp.to<scalar_t>();  // >= 0: negative integer exponents were rejected
    gpu_kernel(iter, [e] EMBER_GPU_LAMBDA(scalar_t a) -> scalar_t { return bm::powi(a, e); });
  } else {
    using opmath = opmath_t<scalar_t>;
    const double ed = exp.toDouble();
    const PowKind kind = ed == 2.0    ? PowKind::Square
                         : ed == 3.0  ? PowKind::Cube
                         : ed == 0.5  ? PowKind::Sqrt
                         : ed == -0.5 ? PowKind::RSqrt
                         : ed == -1.0 ? PowKind::Reciprocal
                         : ed == -2.0 ? PowKind::InvSquare
                                      : PowKind::General;
    const opmath e = static_cast<opmath>(ed);
    gpu_kernel(iter, [kind, e] EMBER_GPU_LAMBDA(scalar_t a) -> scalar_t {
      const opmath x = static_cast<opmath>(a);
      switch (kind) {
        case PowKind::Square:
          return static_cast<scalar_t>(x * x);
        case PowKind::Cube:
          return static_cast<scalar_t>(x * x * x);
        case PowKind::Sqrt:
          return static_cast<scalar_t>(m::sqrt(x));
        case PowKind::RSqrt:
          return static_cast<scalar_t>(opmath(1) / m::sqrt(x));
        case PowKind::Reciprocal:
          return static_cast<scalar_t>(opmath(1) / x);
        case PowKind::InvSquare:
          return static_cast<scalar_t>(opmath(1) / (x * x));
        default:
          return static_cast<scalar_t>(m::pow(x, e));
      }
    });
  }
}

void pow_tensor_scalar_kernel_cuda(TensorIterator& iter, const Scalar& exp) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(iter.common_dtype(), "pow", [&] { pow_tensor_scalar_impl<scalar_t>(iter, exp); });
}

// ---- float-only binary functions ----
enum class FloatBinFn : int { Atan2, Hypot, Copysign, Xlogy, Logaddexp, Logaddexp2, Nextafter };

template <typename scalar_t>
EMBER_HOST_DEVICE scalar_t apply_float_bin(FloatBinFn f, scalar_t a_, scalar_t b_) {
  using opmath = opmath_t<scalar_t>;
  const opmath a = static_cast<opmath>(a_), b = static_cast<opmath>(b_);
  switch (f) {
    case FloatBinFn::Atan2:
      return static_cast<scalar_t>(m::atan2(a, b));
    case FloatBinFn::Hypot:
      return static_cast<scalar_t>(m::hypot(a, b));
    case FloatBinFn::Copysign:
      return static_cast<scalar_t>(m::copysign(a, b));
    case FloatBinFn::Xlogy:
      return bm::xlogy(a_, b_);
    case FloatBinFn::Logaddexp:
      return bm::logaddexp<false>(a_, b_);
    case FloatBinFn::Logaddexp2:
      return bm::logaddexp<true>(a_, b_);
    default:
      return bm::nextafter(a_, b_);
  }
}

void float_bin_kernel(TensorIterator& iter, FloatBinFn f, const char* name) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(iter.common_dtype(), name, [&] {
    gpu_kernel(iter,
               [f] EMBER_GPU_LAMBDA(scalar_t a, scalar_t b) -> scalar_t { return apply_float_bin<scalar_t>(f, a, b); });
  });
}

void atan2_kernel_cuda(TensorIterator& iter) { float_bin_kernel(iter, FloatBinFn::Atan2, "atan2"); }
void hypot_kernel_cuda(TensorIterator& iter) { float_bin_kernel(iter, FloatBinFn::Hypot, "hypot"); }
void copysign_kernel_cuda(TensorIterator& iter) { float_bin_kernel(iter, FloatBinFn::Copysign, "copysign"); }
void xlogy_kernel_cuda(TensorIterator& iter) { float_bin_kernel(iter, FloatBinFn::Xlogy, "xlogy"); }
void logaddexp_kernel_cuda(TensorIterator& iter) { float_bin_kernel(iter, FloatBinFn::Logaddexp, "logaddexp"); }
void logaddexp2_kernel_cuda(TensorIterator& iter) { float_bin_kernel(iter, FloatBinFn::Logaddexp2, "logaddexp2"); }
void nextafter_kernel_cuda(TensorIterator& iter) { float_bin_kernel(iter, FloatBinFn::Nextafter, "nextafter"); }

// ---- bitwise (integers, and bool for and / or / xor), gcd / lcm ----
enum class BitFn : int { And, Or, Xor, Lshift, Rshift, Gcd, Lcm };

template <typename T>
EMBER_HOST_DEVICE T apply_bit_fn(BitFn f, T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    switch (f) {
      case BitFn::And:
        return a && b;
      case BitFn::Or:
        return a || b;
      default:
        return a != b;
    }
  } else {
    switch (f) {
      case BitFn::And:
        return static_cast<T>(a & b);
      case BitFn::Or:
        return static_cast<T>(a | b);
      case BitFn::Xor:
        return static_cast<T>(a ^ b);
      case BitFn::Lshift:
        return bm::lshift(a, b);
      case BitFn::Rshift:
        return bm::rshift(a, b);
      case BitFn::Gcd:
        return bm::gcd(a, b);
      default:
        return bm::lcm(a, b);
    }
  }
}

template <typename scalar_t>
void bit_impl(TensorIterator& iter, BitFn f) {
  gpu_kernel(iter,
             [f] EMBER_GPU_LAMBDA(scalar_t a, scalar_t b) -> scalar_t { return apply_bit_fn<scalar_t>(f, a, b); });
}

void bit_kernel_with_bool(TensorIterator& iter, BitFn f, const char* name) {
  EMBER_DISPATCH_INTEGRAL_TYPES_AND_BOOL(iter.common_dtype(), name, [&] { bit_impl<scalar_t>(iter, f); });
}
void bit_kernel(TensorIterator& iter, BitFn f, const char* name) {
  EMBER_DISPATCH_INTEGRAL_TYPES(iter.common_dtype(), name, [&] { bit_impl<scalar_t>(iter, f); });
}

void bitwise_and_kernel_cuda(TensorIterator& iter) { bit_kernel_with_bool(iter, BitFn::And, "bitwise_and"); }
void bitwise_or_kernel_cuda(TensorIterator& iter) { bit_kernel_with_bool(iter, BitFn::Or, "bitwise_or"); }
void bitwise_xor_kernel_cuda(TensorIterator& iter) { bit_kernel_with_bool(iter, BitFn::Xor, "bitwise_xor"); }
void lshift_kernel_cuda(TensorIterator& iter) { bit_kernel(iter, BitFn::Lshift, "bitwise_left_shift"); }
void rshift_kernel_cuda(TensorIterator& iter) { bit_kernel(iter, BitFn::Rshift, "bitwise_right_shift"); }
void gcd_kernel_cuda(TensorIterator& iter) { bit_kernel(iter, BitFn::Gcd, "gcd"); }
void lcm_kernel_cuda(TensorIterator& iter) { bit_kernel(iter, BitFn::Lcm, "lcm"); }

void heaviside_kernel_cuda(TensorIterator& iter) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF_AND_BOOL(iter.common_dtype(), "heaviside", [&] {
    gpu_kernel(iter, [] EMBER_GPU_LAMBDA(scalar_t a, scalar_t b) -> scalar_t { return bm::heaviside(a, b); });
  });
}

}  // namespace

REGISTER_CUDA_DISPATCH(add_stub, &add_kernel_cuda);
REGISTER_CUDA_DISPATCH(mul_stub, &mul_kernel_cuda);
REGISTER_CUDA_DISPATCH(div_true_stub, &div_true_kernel_cuda);
REGISTER_CUDA_DISPATCH(div_trunc_stub, &div_trunc_kernel_cuda);
REGISTER_CUDA_DISPATCH(div_floor_stub, &div_floor_kernel_cuda);
REGISTER_CUDA_DISPATCH(remainder_stub, &remainder_kernel_cuda);
REGISTER_CUDA_DISPATCH(fmod_stub, &fmod_kernel_cuda);
REGISTER_CUDA_DISPATCH(pow_tensor_tensor_stub, &pow_tensor_tensor_kernel_cuda);
REGISTER_CUDA_DISPATCH(pow_tensor_scalar_stub, &pow_tensor_scalar_kernel_cuda);
REGISTER_CUDA_DISPATCH(atan2_stub, &atan2_kernel_cuda);
REGISTER_CUDA_DISPATCH(hypot_stub, &hypot_kernel_cuda);
REGISTER_CUDA_DISPATCH(copysign_stub, &copysign_kernel_cuda);
REGISTER_CUDA_DISPATCH(maximum_stub, &maximum_kernel_cuda);
REGISTER_CUDA_DISPATCH(minimum_stub, &minimum_kernel_cuda);
REGISTER_CUDA_DISPATCH(fmax_stub, &fmax_kernel_cuda);
REGISTER_CUDA_DISPATCH(fmin_stub, &fmin_kernel_cuda);
REGISTER_CUDA_DISPATCH(bitwise_and_stub, &bitwise_and_kernel_cuda);
REGISTER_CUDA_DISPATCH(bitwise_or_stub, &bitwise_or_kernel_cuda);
REGISTER_CUDA_DISPATCH(bitwise_xor_stub, &bitwise_xor_kernel_cuda);
REGISTER_CUDA_DISPATCH(lshift_stub, &lshift_kernel_cuda);
REGISTER_CUDA_DISPATCH(rshift_stub, &rshift_kernel_cuda);
REGISTER_CUDA_DISPATCH(xlogy_stub, &xlogy_kernel_cuda);
REGISTER_CUDA_DISPATCH(logaddexp_stub, &logaddexp_kernel_cuda);
REGISTER_CUDA_DISPATCH(logaddexp2_stub, &logaddexp2_kernel_cuda);
REGISTER_CUDA_DISPATCH(heaviside_stub, &heaviside_kernel_cuda);
REGISTER_CUDA_DISPATCH(gcd_stub, &gcd_kernel_cuda);
REGISTER_CUDA_DISPATCH(lcm_stub, &lcm_kernel_cuda);
REGISTER_CUDA_DISPATCH(nextafter_stub, &nextafter_kernel_cuda);

}  // namespace ember::at::native
