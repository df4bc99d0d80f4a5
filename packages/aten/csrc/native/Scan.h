#pragma once
// Scans along one dim (kernels in cpu/ScanKernel.cpp and cuda/Scan.cu): cumsum,
// cumprod, logcumsumexp, cummax, cummin.
#include <ember/aten/Tensor.h>
#include <ember/aten/native/DispatchStub.h>

namespace ember::at::native {

struct ScanPlan {
  const void* in = nullptr;
  ScalarType in_dtype = ScalarType::Undefined;
  void* out = nullptr;         // cumsum/cumprod of integral inputs: int64; else the input dtype
  int64_t* indices = nullptr;  // cummax / cummin
  int64_t n = 1;               // length of the scanned dim
  int64_t in_stride = 1, out_stride = 1;
  // the other dims, smallest input stride first (out and indices share strides)
  DimVector batch_sizes, batch_in_strides, batch_out_strides;
  int64_t rows = 1;
  Device device;  // the input's device (CUDA kernels make it current)
};

using scan_fn = void (*)(const ScanPlan&);
DECLARE_DISPATCH(scan_fn, cumsum_stub);
DECLARE_DISPATCH(scan_fn, cumprod_stub);
DECLARE_DISPATCH(scan_fn, logcumsumexp_stub);
DECLARE_DISPATCH(scan_fn, cummax_stub);
DECLARE_DISPATCH(scan_fn, cummin_stub);

}  // namespace ember::at::native
