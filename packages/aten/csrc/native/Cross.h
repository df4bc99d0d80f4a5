#pragma once
// linalg_cross's kernel behind a DispatchStub: linalg_cross_out (LinearAlgebra.cpp) checks,
// broadcasts and builds an iterator over every position but the crossed dim (index 0 of it);
// the kernel (CPU: LinearAlgebra.cpp, CUDA: cuda/Cross.cu) reaches the other two components
// through the crossed dim's byte strides of out, self and other. One dtype for all three.
#include <cstdint>

#include <ember/aten/TensorIterator.h>
#include <ember/aten/native/DispatchStub.h>

namespace ember::at::native {

using cross_fn = void (*)(TensorIterator& iter, int64_t out_stride, int64_t self_stride, int64_t other_stride);

DECLARE_DISPATCH(cross_fn, cross_stub);

}  // namespace ember::at::native
