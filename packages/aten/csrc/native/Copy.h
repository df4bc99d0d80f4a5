#pragma once
#include <ember/aten/TensorIterator.h>
#include <ember/aten/native/DispatchStub.h>

namespace ember::at::native {
using copy_fn = void (*)(TensorIterator&, bool non_blocking);
DECLARE_DISPATCH(copy_fn, copy_stub);
using fill_fn = void (*)(TensorIterator&, const Scalar&);
DECLARE_DISPATCH(fill_fn, fill_stub);
}  // namespace ember::at::native
