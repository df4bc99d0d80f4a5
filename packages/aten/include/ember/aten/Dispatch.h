#pragma once
// dtype dispatch: turns a runtime ScalarType into a compile-time scalar_t for a
// lambda. ONE list of cases, shared by every kernel; the group macros below only
// choose which cases a kernel supports. Half and BFloat16 kernels compute in float
// (opmath_t) and round once when storing.
//
//   EMBER_DISPATCH_ALL_TYPES_AND_HALF(iter.dtype(), "add", [&] {
//     cpu_kernel(iter, [](scalar_t a, scalar_t b) -> scalar_t { return a + b; });
//   });
//
// The lambda is not a template: `if constexpr (std::is_same_v<scalar_t, float>)`
// inside it still compiles both branches for every dtype. Put dtype-dependent
// code in a function template and call `impl<scalar_t>(iter)` from the lambda.

#include <type_traits>

#include <ember/c10/Exception.h>
#include <ember/c10/ScalarType.h>

namespace ember::at {

using c10::BFloat16;
using c10::Half;

// The type arithmetic on T is carried out in.
template <typename T>
struct OpMathType {
  using type = T;
};
template <>
struct OpMathType<c10::Half> {
  using type = float;
};
template <>
struct OpMathType<c10::BFloat16> {
  using type = float;
};
template <typename T>
using opmath_t = typename OpMathType<T>::type;

}  // namespace ember::at

#define EMBER_PRIVATE_CASE_TYPE(enum_name, ctype, ...) \
  case ::ember::c10::ScalarType::enum_name: {          \
    using scalar_t = ctype;                            \
    (void)sizeof(scalar_t);                            \
    return __VA_ARGS__();                              \
  }

#define EMBER_CASE_BOOL(...) EMBER_PRIVATE_CASE_TYPE(Bool, bool, __VA_ARGS__)
#define EMBER_CASE_HALF(...) EMBER_PRIVATE_CASE_TYPE(Half, ::ember::c10::Half, __VA_ARGS__)
#define EMBER_CASE_BFLOAT16(...) EMBER_PRIVATE_CASE_TYPE(BFloat16, ::ember::c10::BFloat16, __VA_ARGS__)
#define EMBER_CASES_FLOAT_DOUBLE(...)                \
  EMBER_PRIVATE_CASE_TYPE(Float, float, __VA_ARGS__) \
  EMBER_PRIVATE_CASE_TYPE(Double, double, __VA_ARGS__)
#define EMBER_CASES_INTEGRAL(...)                      \
  EMBER_PRIVATE_CASE_TYPE(Byte, uint8_t, __VA_ARGS__)  \
  EMBER_PRIVATE_CASE_TYPE(Char, int8_t, __VA_ARGS__)   \
  EMBER_PRIVATE_CASE_TYPE(Short, int16_t, __VA_ARGS__) \
  EMBER_PRIVATE_CASE_TYPE(Int, int32_t, __VA_ARGS__)   \
  EMBER_PRIVATE_CASE_TYPE(Long, int64_t, __VA_ARGS__)

#define EMBER_DISPATCH_SWITCH(TYPE, NAME, ...)                                                     \
  [&] {                                                                                            \
    const ::ember::c10::ScalarType _st = (TYPE);                                                   \
    switch (_st) {                                                                                 \
      __VA_ARGS__                                                                                  \
      default:                                                                                     \
        break;                                                                                     \
    }                                                                                              \
    throw ::ember::c10::Error(                                                                     \
        ::ember::c10::str(NAME, ": not implemented for dtype ", ::ember::c10::toPythonName(_st))); \
  }()

// float32, float64
#define EMBER_DISPATCH_FLOATING_TYPES(TYPE, NAME, ...) \
  EMBER_DISPATCH_SWITCH(TYPE, NAME, EMBER_CASES_FLOAT_DOUBLE(__VA_ARGS__))
// float32, float64, float16, bfloat16
#define EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(TYPE, NAME, ...) \
  EMBER_DISPATCH_SWITCH(                                        \
      TYPE, NAME, EMBER_CASES_FLOAT_DOUBLE(__VA_ARGS__) EMBER_CASE_HALF(__VA_ARGS__) EMBER_CASE_BFLOAT16(__VA_ARGS__))
// uint8, int8, int16, int32, int64
#define EMBER_DISPATCH_INTEGRAL_TYPES(TYPE, NAME, ...) \
  EMBER_DISPATCH_SWITCH(TYPE, NAME, EMBER_CASES_INTEGRAL(__VA_ARGS__))
#define EMBER_DISPATCH_INTEGRAL_TYPES_AND_BOOL(TYPE, NAME, ...) \
  EMBER_DISPATCH_SWITCH(TYPE, NAME, EMBER_CASES_INTEGRAL(__VA_ARGS__) EMBER_CASE_BOOL(__VA_ARGS__))
// every numeric type (no bool)
#define EMBER_DISPATCH_ALL_TYPES_AND_HALF(TYPE, NAME, ...)                                 \
  EMBER_DISPATCH_SWITCH(TYPE, NAME,                                                        \
                        EMBER_CASES_FLOAT_DOUBLE(__VA_ARGS__) EMBER_CASE_HALF(__VA_ARGS__) \
                            EMBER_CASE_BFLOAT16(__VA_ARGS__) EMBER_CASES_INTEGRAL(__VA_ARGS__))
// all ten dtypes
#define EMBER_DISPATCH_ALL_TYPES_AND_HALF_AND_BOOL(TYPE, NAME, ...)                            \
  EMBER_DISPATCH_SWITCH(TYPE, NAME,                                                            \
                        EMBER_CASES_FLOAT_DOUBLE(__VA_ARGS__) EMBER_CASE_HALF(__VA_ARGS__)     \
                            EMBER_CASE_BFLOAT16(__VA_ARGS__) EMBER_CASES_INTEGRAL(__VA_ARGS__) \
                                EMBER_CASE_BOOL(__VA_ARGS__))
#define EMBER_DISPATCH_ALL_TYPES(TYPE, NAME, ...) EMBER_DISPATCH_ALL_TYPES_AND_HALF_AND_BOOL(TYPE, NAME, __VA_ARGS__)
