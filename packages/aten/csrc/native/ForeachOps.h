#pragma once
// The multi-tensor ("foreach") fast path shared by the _foreach_ operators and the
// fused optimizers: the elements of all the tensors of one call form one index space,
// split into parallel chunks; a chunk walks the tensors it covers and runs the op on
// each contiguous run with Vectorized<T> (kernels in cpu/ForeachOpsKernel.cpp).
//
// It applies when every operand of tensor i is dense with the layout (sizes and
// strides) of self[i] and all share one floating dtype: element k of each operand is
// then at the same offset from its data pointer. Anything else goes tensor by tensor
// through the per-tensor kernels (ForeachOps.cpp).

#include <array>
#include <cstdint>
#include <vector>

#include <ember/aten/Tensor.h>
#include <ember/aten/native/DispatchStub.h>

namespace ember::at::native {

enum class ForeachOp : int {
  // out = f(a)
  Sqrt,
  Neg,
  Abs,
  Exp,
  Reciprocal,
  Sign,
  // out = f()
  Zero,
  // out = f(a, s)
  AddScalar,  // a + s
  MulScalar,
  DivScalar,
  MaxScalar,  // NaN-propagating max(a, s): maximum and clamp_min
  MinScalar,
  PowScalar,  // a ** s
  ScalarPow,  // s ** a
  // out = f(a, b, s)
  Copy,     // b (a is self)
  AddList,  // a + s * b (sub: s = -alpha)
  MulList,
  DivList,
  MaxList,
  MinList,
  PowList,
  LerpScalar,  // lerp(a, b, s)
  // out = f(a, b, c, s)
  Addcmul,   // a + s * b * c
  Addcdiv,   // a + s * b / c
  LerpList,  // lerp(a, b, c)
};

// One call: for tensor i, ptrs[i][0] is the output and ptrs[i][1..3] its inputs;
// offsets[i] is the index of its first element in the call's index space
// (offsets.size() == ptrs.size() + 1); scalars[i] its scalar (s above).
struct ForeachArgs {
  std::vector<std::array<char*, 4>> ptrs;
  std::vector<int64_t> offsets;
  std::vector<double> scalars;
};

// Element k of b is at the offset of element k of a: equal sizes, and equal strides in
// every dimension of more than one element.
bool same_layout(const Tensor& a, const Tensor& b);

using foreach_fn = void (*)(ForeachOp op, ScalarType dtype, const ForeachArgs& args);
DECLARE_DISPATCH(foreach_fn, foreach_stub);

}  // namespace ember::at::native
