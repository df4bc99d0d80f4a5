#pragma once
// Helpers shared by the csrc/cuda/*.cpp files (not installed: it includes
// cuda_runtime.h, which the public CUDAFunctions.h must not).

#include <cuda_runtime_api.h>

#include <ember/c10/cuda/CUDAFunctions.h>

namespace ember::c10::cuda::detail {

// "<what>: no CUDA device is available (<why>)" as a RuntimeError.
[[noreturn]] void throw_no_device(const char* what);

// Raises unless `device` names a present device (RuntimeError without any device,
// ValueError for an index out of range). Returns the index, with -1 resolved to
// the current device.
int check_device(int device, const char* what);

inline cudaStream_t to_cuda(const CUDAStream& s) { return static_cast<cudaStream_t>(s.handle); }

// Makes `device` current for a scope when it is not already (cudaSetDevice is cheap
// but not free, and the runtime's current device is per thread). Never throws from
// its destructor: restoring is best effort, as in PyTorch's CUDAGuard.
class CUDADeviceScope {
 public:
  explicit CUDADeviceScope(int device) {
    EMBER_CUDA_CHECK(cudaGetDevice(&original_));
    if (device >= 0 && device != original_) {
      EMBER_CUDA_CHECK(cudaSetDevice(device));
      switched_ = true;
    }
  }
  ~CUDADeviceScope() {
    if (switched_) {
      if (cudaSetDevice(original_) != cudaSuccess) (void)cudaGetLastError();
    }
  }
  EMBER_DISABLE_COPY_AND_ASSIGN(CUDADeviceScope);

 private:
  int original_ = 0;
  bool switched_ = false;
};

// A timing-free event on `device` from a shared pool (the allocators record these on
// streams that used a block); give it back with release_event once it completed.
cudaEvent_t acquire_event(int device);
void release_event(int device, cudaEvent_t e);

// "512 bytes", "1.50 KiB", "20.00 MiB", "1.25 GiB": sizes in error messages and summaries.
std::string format_size(int64_t nbytes);

}  // namespace ember::c10::cuda::detail
