#pragma once
// ReductionPlan: a reduction of any set of dims of an any-strided input, as
// ReduceOps.cpp hands it to a reduction kernel (CPU: cpu/Reduce.h; CUDA:
// csrc/native/cuda/Reduce.cuh). Plain data, no CPU-capability code; plus the dtype
// dispatch that all / any / count_nonzero share on both devices.

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

// Calls f.template operator()<T>() with T the type a nonzero test reads `dtype` as:
// integral (and bool) dtypes as the unsigned integer of their width (nonzero is
// nonzero), so eight instantiations cover the ten dtypes (all, any, count_nonzero).
template <typename F>
void dispatch_nonzero_type(ScalarType dtype, const char* name, const F& f) {
  switch (dtype) {
    case ScalarType::Bool:
    case ScalarType::Byte:
    case ScalarType::Char:
      return f.template operator()<uint8_t>();
    case ScalarType::Short:
      return f.template operator()<uint16_t>();
    case ScalarType::Int:
      return f.template operator()<uint32_t>();
    case ScalarType::Long:
      return f.template operator()<uint64_t>();
    case ScalarType::Half:
      return f.template operator()<c10::Half>();
    case ScalarType::BFloat16:
      return f.template operator()<c10::BFloat16>();
    case ScalarType::Float:
      return f.template operator()<float>();
    case ScalarType::Double:
      return f.template operator()<double>();
    default:
      throw c10::Error(c10::str(name, ": not implemented for dtype ", c10::toPythonName(dtype)));
  }
}

}  // namespace ember::at::native
