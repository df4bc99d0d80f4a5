#pragma once
// What the CPU kernels of TensorTransformations.cpp and the CUDA kernels of
// cuda/TensorTransformations.cu share: elements moved as unsigned words of their size,
// the out= alias check, and tril / triu's result before the triangle is cleared.
#include <cstdint>

#include <ember/aten/Tensor.h>

#include "TensorFactories.h"

namespace ember::at::native {

// f(T{}) with T an unsigned integer type of `itemsize` bytes (moving elements does not
// depend on their type, only on their size).
template <typename F>
void dispatch_elem_size(int64_t itemsize, const F& f) {
  switch (itemsize) {
    case 1:
      return f(uint8_t{});
    case 2:
      return f(uint16_t{});
    case 4:
      return f(uint32_t{});
    case 8:
      return f(uint64_t{});
    default:
      EMBER_ERROR("unsupported element size ", itemsize);
  }
}

// out= must not share memory with the input it is computed from (it is resized and
// written while the input is read).
inline void check_out_not_alias(const Tensor& out, const Tensor& self) {
  EMBER_CHECK(!out.is_alias_of(self) || self.numel() == 0,
              "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single "
              "memory location. Please clone() the tensor before performing the operation.");
}

// tril / triu (`name`): the tensor they return, holding a copy of self -- a new one, out=
// (checked and resized), or self itself in place; the kernel then clears the elements
// outside the triangle.
inline Tensor triangle_result(const Tensor& self, const Tensor& out, const char* name) {
  EMBER_CHECK(self.dim() >= 2, name, ": input tensor must have at least 2 dimensions");
  Tensor result = out;
  if (!result.defined()) {
    result = empty_like_preserve(self, self.dtype(), self.device());
  } else if (!result.is_same(self)) {
    check_out_not_alias(result, self);
    EMBER_CHECK(result.dtype() == self.dtype(), "Expected out tensor to have dtype ", c10::toString(self.dtype()),
                ", but got ", c10::toString(result.dtype()), " instead");
    resize_output(result, self.sizes());
  }
  if (!result.is_same(self)) result.copy_(self);
  return result;
}

}  // namespace ember::at::native
