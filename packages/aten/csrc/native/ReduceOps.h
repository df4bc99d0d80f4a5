#pragma once
// Stubs of the reductions. CPU kernels: the hot ones in cpu/ReduceOpsKernel.cpp (one
// per CPU capability); prod, all, any, count_nonzero, the other norms and nanmean's
// division in ReduceOps.cpp (compiled once). CUDA kernels: cuda/Reduce.cu. Each takes
// a ReductionPlan (ReductionPlan.h) built by ReduceOps.cpp; the plan's outputs are
// contiguous and already have the dtype the kernel writes:
//   sum: int64 for integral/bool inputs, else the input dtype; argmax/argmin:
//   out[0] values (optional), out[1] int64 indices; var: out[0] var (or std),
//   out[1] mean (optional).
#include <ember/aten/native/DispatchStub.h>
#include <ember/aten/native/ReductionPlan.h>

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
// param = p of the vector norm: 1 or 2 (other orders: norm_other_stub).
DECLARE_DISPATCH(reduce_fn, norm_stub);
DECLARE_DISPATCH(reduce_fn, logsumexp_stub);
// param = p of the vector norm: 0, +-inf or any other order but 1 and 2.
DECLARE_DISPATCH(reduce_fn, norm_other_stub);
// out[0]: int64 for integral/bool inputs (wrapping), else the input dtype.
DECLARE_DISPATCH(reduce_fn, prod_stub);
// out[0]: bool or uint8 (0/1) whatever the input dtype.
DECLARE_DISPATCH(reduce_fn, all_stub);
DECLARE_DISPATCH(reduce_fn, any_stub);
// out[0]: int64; flags == 1 (floating inputs): count the non-NaN elements instead.
DECLARE_DISPATCH(reduce_fn, count_nonzero_stub);
// nanmean's last step: out[i] = sum[i] / count[i] (computed in double), all contiguous,
// out and sum of one floating dtype, count int64.
using nanmean_divide_fn = void (*)(const Tensor& sum, const Tensor& count, const Tensor& out);
DECLARE_DISPATCH(nanmean_divide_fn, nanmean_divide_stub);

}  // namespace ember::at::native
