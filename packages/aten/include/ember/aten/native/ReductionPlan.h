#pragma once
// ReductionPlan: a reduction of any set of dims of an any-strided input, as
// ReduceOps.cpp hands it to a reduction kernel (CPU: cpu/Reduce.h; CUDA:
// csrc/native/cuda/Reduce.cuh). Plain data, no CPU-capability code.

#include <ember/aten/Tensor.h>

namespace ember::at::native {

struct ReductionPlan {
  const void* in = nullptr;  // input element 0 (offsets below are in elements)
  ScalarType in_dtype = ScalarType::Undefined;
  void* out[2] = {nullptr, nullptr};  // up to two outputs of one shape, contiguous
  ScalarType out_dtype[2] = {ScalarType::Undefined, ScalarType::Undefined};
  DimVector out_sizes;       // kept dims, smallest input stride first
  DimVector out_in_strides;  // input strides along the kept dims
  DimVector out_strides;     // output strides along the kept dims
  DimVector red_sizes;       // reduced dims, smallest input stride first
  DimVector red_strides;     // input strides along the reduced dims
  int64_t num_outputs = 1;   // product of out_sizes
  int64_t num_reduced = 1;   // product of red_sizes
  double param = 0;          // op parameter (norm's p, var's correction, ...)
  int flags = 0;             // op flags (var: take the square root; ...)
  Device device;             // the input's device (CUDA kernels make it current)
};

}  // namespace ember::at::native
