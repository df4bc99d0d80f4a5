// The CPU copy and fill kernels: any dtype to any dtype, any strides.
#include <cstring>

#include <ember/aten/Dispatch.h>
#include <ember/aten/native/cpu/Loops.h>

#include "../Copy.h"

namespace ember::at::native {
inline namespace CPU_CAPABILITY {

// C-style conversion, but well defined: float -> integer goes through int64
// (so -1.0 -> uint8 gives 255 as in PyTorch, not undefined behaviour), anything
// -> bool is `!= 0`, half types go through float.
template <typename To, typename From>
inline To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, bool>) {
    return static_cast<double>(static_cast<opmath_t<From>>(v)) != 0.0;
  } else if constexpr (std::is_integral_v<To>) {
    if constexpr (std::is_integral_v<From>) {
      return static_cast<To>(v);
    } else {
      const double d = static_cast<double>(static_cast<opmath_t<From>>(v));
      if (!(d == d)) return static_cast<To>(std::numeric_limits<int64_t>::min());  // NaN
      if (d >= 9.2233720368547758e18) return static_cast<To>(std::numeric_limits<int64_t>::min());
      if (d <= -9.2233720368547758e18) return static_cast<To>(std::numeric_limits<int64_t>::min());
      return static_cast<To>(static_cast<int64_t>(d));
    }
  } else if constexpr (std::is_same_v<To, c10::Half> || std::is_same_v<To, c10::BFloat16>) {
    return To(static_cast<float>(static_cast<opmath_t<From>>(v)));
  } else {
    return static_cast<To>(static_cast<opmath_t<From>>(v));
  }
}

// A 2-d tile where one side is strided along dim 0 (a transpose): copy it in
// square blocks, so the strided side's cache lines are reused across the block
// instead of being fetched once per element.
template <typename T>
void copy_2d_blocked(char* out, const char* in, int64_t n, int64_t m, const int64_t* strides) {
  constexpr int64_t B = 32;
  const int64_t os0 = strides[0], is0 = strides[1], os1 = strides[2], is1 = strides[3];
  for (int64_t j0 = 0; j0 < m; j0 += B) {
    const int64_t j1 = std::min(m, j0 + B);
    for (int64_t i0 = 0; i0 < n; i0 += B) {
      const int64_t i1 = std::min(n, i0 + B);
      for (int64_t j = j0; j < j1; ++j) {
        char* o = out + j * os1;
        const char* s = in + j * is1;
        for (int64_t i = i0; i < i1; ++i) *reinterpret_cast<T*>(o + i * os0) = *reinterpret_cast<const T*>(s + i * is0);
      }
    }
  }
}

void copy_kernel(TensorIterator& iter, bool /*non_blocking*/) {
  const ScalarType dst = iter.dtype(0);
  const ScalarType src = iter.dtype(1);
  // bool -> bool is not a byte move: the source may hold bytes 2..255 (a uint8 viewed as
  // bool), and the copy writes them as 0/1 (as PyTorch's clone): see below.
  if (dst == src && dst != ScalarType::Bool) {
    // Same dtype: byte moves, memcpy on contiguous runs.
    const int64_t isz = static_cast<int64_t>(c10::elementSize(dst));
    iter.for_each([isz](char** data, const int64_t* strides, int64_t n, int64_t m) {
      const bool transposed = m > 1 && n > 1 &&
                              ((strides[0] == isz && strides[3] == isz && strides[1] != isz) ||
                               (strides[1] == isz && strides[2] == isz && strides[0] != isz));
      if (transposed) {
        switch (isz) {
          case 1:
            return copy_2d_blocked<uint8_t>(data[0], data[1], n, m, strides);
          case 2:
            return copy_2d_blocked<uint16_t>(data[0], data[1], n, m, strides);
          case 4:
            return copy_2d_blocked<uint32_t>(data[0], data[1], n, m, strides);
          default:
            return copy_2d_blocked<uint64_t>(data[0], data[1], n, m, strides);
        }
      }
      for (int64_t j = 0; j < m; ++j) {
        char* out = data[0] + j * strides[2];
        const char* in = data[1] + j * strides[3];
        if (strides[0] == isz && strides[1] == isz) {
          std::memcpy(out, in, static_cast<size_t>(n * isz));
        } else if (strides[1] == 0) {
          for (int64_t i = 0; i < n; ++i) std::memcpy(out + i * strides[0], in, isz);
        } else {
          switch (isz) {
            case 1:
              for (int64_t i = 0; i < n; ++i) out[i * strides[0]] = in[i * strides[1]];
              break;
            case 2:
              for (int64_t i = 0; i < n; ++i)
                *reinterpret_cast<uint16_t*>(out + i * strides[0]) =
                    *reinterpret_cast<const uint16_t*>(in + i * strides[1]);
              break;
            case 4:
              for (int64_t i = 0; i < n; ++i)
                *reinterpret_cast<uint32_t*>(out + i * strides[0]) =
                    *reinterpret_cast<const uint32_t*>(in + i * strides[1]);
              break;
            default:
              for (int64_t i = 0; i < n; ++i)
                *reinterpret_cast<uint64_t*>(out + i * strides[0]) =
                    *reinterpret_cast<const uint64_t*>(in + i * strides[1]);
          }
        }
      }
    });
    return;
  }
  if (src == ScalarType::Bool) {
    // A bool is read as its byte != 0 (PyTorch's c10::load<bool>): a bool tensor may view
    // bytes 2..255 (uint8.view(bool), a file), and reading those as a C++ bool is undefined
    // (.float() gave 2.0 and 255.0, sums 258).
    EMBER_DISPATCH_ALL_TYPES(dst, "copy_", [&] {
      using dst_t = scalar_t;
      cpu_kernel(iter, [](uint8_t byte) -> dst_t { return convert<dst_t, bool>(byte != 0); });
    });
    return;
  }
  EMBER_DISPATCH_ALL_TYPES(dst, "copy_", [&] {
    using dst_t = scalar_t;
    EMBER_DISPATCH_ALL_TYPES(src, "copy_", [&] {
      using src_t = scalar_t;
      cpu_kernel(iter, [](src_t v) -> dst_t { return convert<dst_t, src_t>(v); });
    });
  });
}

void fill_kernel(TensorIterator& iter, const Scalar& value) {
  EMBER_DISPATCH_ALL_TYPES(iter.dtype(0), "fill_", [&] {
    const scalar_t v = value.to<scalar_t>();
    cpu_kernel(iter, [v]() -> scalar_t { return v; });
  });
}

}  // namespace CPU_CAPABILITY

REGISTER_DISPATCH(copy_stub, &copy_kernel);
REGISTER_DISPATCH(fill_stub, &fill_kernel);

}  // namespace ember::at::native
