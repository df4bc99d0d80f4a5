// CPU kernels of the comparisons, logical and/or/xor, isclose and equal.
#include <atomic>
#include <cmath>

#include <ember/aten/Dispatch.h>
#include <ember/aten/native/cpu/Loops.h>

#include "../CompareOps.h"
#include "../CompareOpsMath.h"

namespace ember::at::native {
inline namespace CPU_CAPABILITY {

// (bool out, T a, T b) over a 2-d tile. The three shapes that matter -- both inputs
// contiguous, or one a broadcast number (`x > 0`) -- are plain loops over typed
// pointers that the compiler vectorizes; anything else steps by byte strides.
template <typename T, typename Op>
struct CompareLoop2d {
  Op op;
  // (not inlined: lt/le reuse gt/ge's loop through SwappedInputs, one copy of the code)
  __attribute__((noinline)) void operator()(char** base, const int64_t* strides, int64_t n, int64_t size1) const {
    char* data[3] = {base[0], base[1], base[2]};
    const int64_t so = strides[0], sa = strides[1], sb = strides[2];
    constexpr int64_t kT = sizeof(T);
    for (int64_t j = 0; j < size1; ++j) {
      bool* __restrict__ out = reinterpret_cast<bool*>(data[0]);
      const T* __restrict__ a = reinterpret_cast<const T*>(data[1]);
      const T* __restrict__ b = reinterpret_cast<const T*>(data[2]);
      if (so == 1 && sa == kT && sb == kT) {
        for (int64_t i = 0; i < n; ++i) out[i] = op(a[i], b[i]);
      } else if (so == 1 && sa == kT && sb == 0) {
        const T bv = *b;
        for (int64_t i = 0; i < n; ++i) out[i] = op(a[i], bv);
      } else if (so == 1 && sa == 0 && sb == kT) {
        const T av = *a;
        for (int64_t i = 0; i < n; ++i) out[i] = op(av, b[i]);
      } else {
        for (int64_t i = 0; i < n; ++i) {
          *reinterpret_cast<bool*>(data[0] + i * so) =
              op(*reinterpret_cast<const T*>(data[1] + i * sa), *reinterpret_cast<const T*>(data[2] + i * sb));
        }
      }
      for (int k = 0; k < 3; ++k) data[k] += strides[3 + k];
    }
  }
};

// Runs a loop with its two inputs exchanged: a < b is b > a.
template <typename Loop>
struct SwappedInputs {
  Loop loop;
  void operator()(char** base, const int64_t* strides, int64_t n, int64_t size1) const {
    char* data[3] = {base[0], base[2], base[1]};
    const int64_t s[6] = {strides[0], strides[2], strides[1], strides[3], strides[5], strides[4]};
    loop(data, s, n, size1);
  }
};

inline void check_comparison_iter(const TensorIterator& iter) {
  EMBER_INTERNAL_ASSERT(iter.ntensors() == 3 && iter.dtype(0) == ScalarType::Bool,
                        "comparison kernel: expected a bool output and two inputs");
}

template <typename T, bool kSwap = false, typename Op>
void compare_loop(TensorIterator& iter, Op op) {
  check_comparison_iter(iter);
  if constexpr (kSwap) {
    iter.for_each(SwappedInputs<CompareLoop2d<T, Op>>{CompareLoop2d<T, Op>{op}});
  } else {
    iter.for_each(CompareLoop2d<T, Op>{op});
  }
}

// Half and BFloat16 compare as float.
template <typename T>
inline opmath_t<T> up(T x) {
  return static_cast<opmath_t<T>>(x);
}

struct EqOp {
  template <typename T>
  bool operator()(T a, T b) const {
    return up(a) == up(b);
  }
};
struct NeOp {
  template <typename T>
  bool operator()(T a, T b) const {
    return up(a) != up(b);
  }
};
struct GtOp {
  template <typename T>
  bool operator()(T a, T b) const {
    return up(a) > up(b);
  }
};
struct GeOp {
  template <typename T>
  bool operator()(T a, T b) const {
    return up(a) >= up(b);
  }
};

// A bool input is read as its byte != 0 (PyTorch's c10::load<bool>): a bool tensor may
// view bytes 2..255 (uint8.view(bool)), and `b == True` must still hold for them.
template <typename Op>
struct BoolBytes {
  Op op;
  bool operator()(uint8_t a, uint8_t b) const { return op(a != 0, b != 0); }
};

#define EMBER_COMPARISON_KERNEL_(NAME, OP, SWAP)                                                   \
  void NAME##_kernel(TensorIterator& iter) {                                                       \
    if (iter.common_dtype() == ScalarType::Bool) {                                                 \
      compare_loop<uint8_t, SWAP>(iter, BoolBytes<OP>{OP{}});                                      \
      return;                                                                                      \
    }                                                                                              \
    EMBER_DISPATCH_ALL_TYPES_AND_HALF_AND_BOOL(iter.common_dtype(), #NAME,                         \
                                               [&] { compare_loop<scalar_t, SWAP>(iter, OP{}); }); \
  }
EMBER_COMPARISON_KERNEL_(eq, EqOp, false)
EMBER_COMPARISON_KERNEL_(ne, NeOp, false)
EMBER_COMPARISON_KERNEL_(lt, GtOp, true)
EMBER_COMPARISON_KERNEL_(le, GeOp, true)
EMBER_COMPARISON_KERNEL_(gt, GtOp, false)
EMBER_COMPARISON_KERNEL_(ge, GeOp, false)
#undef EMBER_COMPARISON_KERNEL_

#define EMBER_LOGICAL_KERNEL_(NAME, OP)                                                                    \
  void NAME##_kernel(TensorIterator& iter) {                                                               \
    /* bool inputs as bytes: their value is byte != 0, as below */                                         \
    const ScalarType t = iter.common_dtype() == ScalarType::Bool ? ScalarType::Byte : iter.common_dtype(); \
    EMBER_DISPATCH_ALL_TYPES_AND_HALF_AND_BOOL(t, #NAME, [&] {                                             \
      compare_loop<scalar_t>(iter, [](scalar_t a, scalar_t b) { return (up(a) != 0) OP(up(b) != 0); });    \
    });                                                                                                    \
  }
EMBER_LOGICAL_KERNEL_(logical_and, &&)
EMBER_LOGICAL_KERNEL_(logical_or, ||)
EMBER_LOGICAL_KERNEL_(logical_xor, !=)
#undef EMBER_LOGICAL_KERNEL_

void isclose_kernel(TensorIterator& iter, double rtol, double atol, bool equal_nan) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF_AND_BOOL(iter.common_dtype(), "isclose", [&] {
    compare_math::with_isclose<scalar_t>(rtol, atol, equal_nan,
                                         [&](const auto& op) { compare_loop<scalar_t>(iter, op); });
  });
}

template <typename T>
struct EqualLoop2d {
  std::atomic<bool>* result;
  void operator()(char** base, const int64_t* strides, int64_t n, int64_t size1) const {
    if (!result->load(std::memory_order_relaxed)) return;
    const char* a = base[0];
    const char* b = base[1];
    for (int64_t j = 0; j < size1; ++j) {
      bool same = true;
      for (int64_t i = 0; i < n; ++i) {
        same &=
            up(*reinterpret_cast<const T*>(a + i * strides[0])) == up(*reinterpret_cast<const T*>(b + i * strides[1]));
      }
      if (!same) {
        result->store(false, std::memory_order_relaxed);
        return;
      }
      a += strides[2];
      b += strides[3];
    }
  }
};

bool equal_kernel(TensorIterator& iter) {
  std::atomic<bool> result{true};
  EMBER_DISPATCH_ALL_TYPES_AND_HALF_AND_BOOL(iter.common_dtype(), "equal",
                                             [&] { iter.for_each(EqualLoop2d<scalar_t>{&result}); });
  return result.load();
}

}  // namespace CPU_CAPABILITY

REGISTER_DISPATCH(eq_stub, &eq_kernel);
REGISTER_DISPATCH(ne_stub, &ne_kernel);
REGISTER_DISPATCH(lt_stub, &lt_kernel);
REGISTER_DISPATCH(le_stub, &le_kernel);
REGISTER_DISPATCH(gt_stub, &gt_kernel);
REGISTER_DISPATCH(ge_stub, &ge_kernel);
REGISTER_DISPATCH(logical_and_stub, &logical_and_kernel);
REGISTER_DISPATCH(logical_or_stub, &logical_or_kernel);
REGISTER_DISPATCH(logical_xor_stub, &logical_xor_kernel);
REGISTER_DISPATCH(isclose_stub, &isclose_kernel);
REGISTER_DISPATCH(equal_stub, &equal_kernel);

}  // namespace ember::at::native
