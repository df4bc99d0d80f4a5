#pragma once
// Stubs of the hot reductions (kernels in cpu/ReduceOpsKernel.cpp; prod, all, any,
// count_nonzero and the other norms run in ReduceOps.cpp). Each takes a
// ReductionPlan (cpu/Reduce.h) built by ReduceOps.cpp; the plan's outputs are
// contiguous and already have the dtype the kernel writes:
//   sum: int64 for integral/bool inputs, else the input dtype; argmax/argmin:
//   out[0] values (optional), out[1] int64 indices; var: out[0] var (or std),
//   out[1] mean (optional).
#include <ember/aten/native/DispatchStub.h>
#include <ember/aten/native/cpu/Reduce.h>

namespace ember::at::native {

using reduce_fn = void (*)(const ReductionPlan&);

// The tensor an op returns (the caller's out=, resized, or a new tensor) and the one
// its kernel writes: the same tensor when that is contiguous, of the kernel's dtype and
// not sharing memory with `self`; else a new contiguous tensor copied over by finish().
struct ReduceOutput {
  Tensor result;
  Tensor buffer;
  void finish() const {
    if (!buffer.is_same(result)) result.copy_(buffer);
  }
};
ReduceOutput prepare_output(const Tensor& out, IntArrayRef shape, ScalarType result_dtype, ScalarType kernel_dtype,
                            const Tensor& self);

// sum; param = divisor (1 for sum, N for mean). Floating types only for mean.
DECLARE_DISPATCH(reduce_fn, sum_stub);
DECLARE_DISPATCH(reduce_fn, nansum_stub);  // floating types
DECLARE_DISPATCH(reduce_fn, amax_stub);
DECLARE_DISPATCH(reduce_fn, amin_stub);
DECLARE_DISPATCH(reduce_fn, argmax_stub);  // first maximal index; NaN counts as the largest
DECLARE_DISPATCH(reduce_fn, argmin_stub);
// param = correction; flags & 1: write the standard deviation instead of the variance.
DECLARE_DISPATCH(reduce_fn, var_stub);
// param = p of the vector norm: 1 or 2 (other orders run in ReduceOps.cpp).
DECLARE_DISPATCH(reduce_fn, norm_stub);
DECLARE_DISPATCH(reduce_fn, logsumexp_stub);

}  // namespace ember::at::native
