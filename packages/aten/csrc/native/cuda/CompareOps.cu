// CUDA kernels of the comparisons, logical and/or/xor, isclose and equal (the stubs
// of CompareOps.h), as cpu/CompareOpsKernel.cpp: inputs of their common dtype (half
// types compared as float), a bool output. The nine comparison / logical operators
// share one kernel per dtype, the operator being a run-time code.
#include <ember/aten/Dispatch.h>

#include "../CompareOps.h"
#include "../CompareOpsMath.h"
#include "Loops.cuh"

namespace ember::at::native {
namespace {

using cuda_detail::OffsetCalculator;

enum class CmpFn : int { Eq, Ne, Lt, Le, Gt, Ge, And, Or, Xor };

template <typename T>
EMBER_HOST_DEVICE opmath_t<T> up(T x) {
  return static_cast<opmath_t<T>>(x);
}

template <typename scalar_t>
void compare_impl(TensorIterator& iter, CmpFn f) {
  EMBER_INTERNAL_ASSERT(iter.ntensors() == 3 && iter.dtype(0) == ScalarType::Bool,
                        "comparison kernel: expected a bool output and two inputs");
  gpu_kernel(iter, [f] EMBER_GPU_LAMBDA(scalar_t a_, scalar_t b_) -> bool {
    const auto a = up(a_), b = up(b_);
    switch (f) {
      case CmpFn::Eq:
        return a == b;
      case CmpFn::Ne:
        return a != b;
      case CmpFn::Lt:
        return a < b;
      case CmpFn::Le:
        return a <= b;
      case CmpFn::Gt:
        return a > b;
      case CmpFn::Ge:
        return a >= b;
      case CmpFn::And:
        return (a != 0) && (b != 0);
      case CmpFn::Or:
        return (a != 0) || (b != 0);
      default:
        return (a != 0) != (b != 0);
    }
  });
}

void compare_kernel(TensorIterator& iter, CmpFn f, const char* name) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF_AND_BOOL(iter.common_dtype(), name, [&] { compare_impl<scalar_t>(iter, f); });
}

void eq_kernel_cuda(TensorIterator& iter) { compare_kernel(iter, CmpFn::Eq, "eq"); }
void ne_kernel_cuda(TensorIterator& iter) { compare_kernel(iter, CmpFn::Ne, "ne"); }
void lt_kernel_cuda(TensorIterator& iter) { compare_kernel(iter, CmpFn::Lt, "lt"); }
void le_kernel_cuda(TensorIterator& iter) { compare_kernel(iter, CmpFn::Le, "le"); }
void gt_kernel_cuda(TensorIterator& iter) { compare_kernel(iter, CmpFn::Gt, "gt"); }
void ge_kernel_cuda(TensorIterator& iter) { compare_kernel(iter, CmpFn::Ge, "ge"); }
void logical_and_kernel_cuda(TensorIterator& iter) { compare_kernel(iter, CmpFn::And, "logical_and"); }
void logical_or_kernel_cuda(TensorIterator& iter) { compare_kernel(iter, CmpFn::Or, "logical_or"); }
void logical_xor_kernel_cuda(TensorIterator& iter) { compare_kernel(iter, CmpFn::Xor, "logical_xor"); }

// isclose: the formula and compute type of CompareOpsMath.h (as the CPU kernel).
void isclose_kernel_cuda(TensorIterator& iter, double rtol, double atol, bool equal_nan) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF_AND_BOOL(iter.common_dtype(), "isclose", [&] {
    compare_math::with_isclose<scalar_t>(rtol, atol, equal_nan, [&](const auto& op) { gpu_kernel(iter, op); });
  });
}

// equal: a kernel over the two inputs clears a flag in device memory at the first
// unequal pair it meets; the host reads the flag back (a synchronising copy).
template <typename T>
__global__ void equal_kernel(int32_t n, OffsetCalculator<2> calc, const char* a, const char* b, int* flag) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const auto off = calc.get(static_cast<uint32_t>(i));
    if (up(*reinterpret_cast<const T*>(a + off.v[0])) != up(*reinterpret_cast<const T*>(b + off.v[1]))) {
      *flag = 0;
      return;
    }
  }
}

template <typename T>
void launch_equal(const TensorIterator& iter, int* flag) {
  const int64_t n = iter.numel();
  if (n == 0) return;
  OffsetCalculator<2> calc(iter.shape(), [&](int k) { return iter.strides(k); });
  equal_kernel<T>
      <<<ember::at::cuda::grid_size(n), ember::at::cuda::kNumThreads, 0, ember::at::cuda::current_stream()>>>(
          static_cast<int32_t>(n), calc, static_cast<const char*>(iter.data_ptr(0)),
          static_cast<const char*>(iter.data_ptr(1)), flag);
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
}

bool equal_kernel_cuda(TensorIterator& iter) {
  EMBER_INTERNAL_ASSERT(iter.ntensors() == 2 && iter.noutputs() == 0, "equal: expected an iterator of two inputs");
  c10::DeviceGuard guard(iter.device(0));
  const Tensor flag = empty({1}, ScalarType::Int, iter.device(0));
  flag.fill_(Scalar(int64_t{1}));
  int* flag_ptr = static_cast<int*>(flag.data_ptr());
  EMBER_DISPATCH_ALL_TYPES_AND_HALF_AND_BOOL(iter.common_dtype(), "equal", [&] {
    if (iter.can_use_32bit_indexing()) {
      launch_equal<scalar_t>(iter, flag_ptr);
    } else {
      for (const TensorIterator& sub : iter.with_32bit_indexing()) launch_equal<scalar_t>(sub, flag_ptr);
    }
  });
  return flag.item().toLong() != 0;
}

}  // namespace

REGISTER_CUDA_DISPATCH(eq_stub, &eq_kernel_cuda);
REGISTER_CUDA_DISPATCH(ne_stub, &ne_kernel_cuda);
REGISTER_CUDA_DISPATCH(lt_stub, &lt_kernel_cuda);
REGISTER_CUDA_DISPATCH(le_stub, &le_kernel_cuda);
REGISTER_CUDA_DISPATCH(gt_stub, &gt_kernel_cuda);
REGISTER_CUDA_DISPATCH(ge_stub, &ge_kernel_cuda);
REGISTER_CUDA_DISPATCH(logical_and_stub, &logical_and_kernel_cuda);
REGISTER_CUDA_DISPATCH(logical_or_stub, &logical_or_kernel_cuda);
REGISTER_CUDA_DISPATCH(logical_xor_stub, &logical_xor_kernel_cuda);
REGISTER_CUDA_DISPATCH(isclose_stub, &isclose_kernel_cuda);
REGISTER_CUDA_DISPATCH(equal_stub, &equal_kernel_cuda);

}  // namespace ember::at::native
