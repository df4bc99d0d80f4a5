#pragma once
// Stubs of the comparison and logical operators (kernels in cpu/CompareOpsKernel.cpp).
// Their iterators come from TensorIterator::comparison_op: inputs promoted to their
// common dtype, a bool output.
#include <ember/aten/TensorIterator.h>
#include <ember/aten/native/DispatchStub.h>

namespace ember::at::native {
using comparison_fn = void (*)(TensorIterator&);
using isclose_fn = void (*)(TensorIterator&, double rtol, double atol, bool equal_nan);
// True if every pair of elements of the iterator's two inputs is equal.
using equal_fn = bool (*)(TensorIterator&);

DECLARE_DISPATCH(comparison_fn, eq_stub);
DECLARE_DISPATCH(comparison_fn, ne_stub);
DECLARE_DISPATCH(comparison_fn, lt_stub);
DECLARE_DISPATCH(comparison_fn, le_stub);
DECLARE_DISPATCH(comparison_fn, gt_stub);
DECLARE_DISPATCH(comparison_fn, ge_stub);
DECLARE_DISPATCH(comparison_fn, logical_and_stub);
DECLARE_DISPATCH(comparison_fn, logical_or_stub);
DECLARE_DISPATCH(comparison_fn, logical_xor_stub);
DECLARE_DISPATCH(isclose_fn, isclose_stub);
DECLARE_DISPATCH(equal_fn, equal_stub);
}  // namespace ember::at::native
