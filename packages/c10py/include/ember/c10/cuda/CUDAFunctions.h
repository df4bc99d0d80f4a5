#pragma once
// CUDA device API of c10py. Declared for every build; in a build without CUDA
// (EMBER_CUDA=OFF or no nvcc) is_compiled() is false, device_count() is 0 and the
// calls that need a device raise a RuntimeError saying ember was built without CUDA.
// On a machine with no GPU or no driver, device_count() is 0 and is_available()
// false: the CUDA runtime's "no device"/"insufficient driver" errors are absorbed.
//
// Nothing here includes cuda_runtime.h: a stream is passed as an opaque pointer
// (cudaStream_t) so that CPU-only extensions can include this header.

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <ember/c10/Allocator.h>

namespace ember::c10::cuda {

EMBER_C10_API bool is_compiled() noexcept;  // built with CUDA
EMBER_C10_API int device_count() noexcept;  // 0 without a usable driver/GPU
EMBER_C10_API bool is_available() noexcept;
// The runtime's error message from the first device query ("" if none), so that
// is_available() == False can be explained to the user.
EMBER_C10_API std::string availability_error();

EMBER_C10_API int current_device();
EMBER_C10_API void set_device(int device);
EMBER_C10_API void synchronize(int device = -1);

struct DeviceProperties {
  std::string name;
  int major = 0;
  int minor = 0;
  size_t total_memory = 0;
  int multi_processor_count = 0;
  int warp_size = 32;
  size_t shared_memory_per_block = 0;
};
EMBER_C10_API DeviceProperties get_device_properties(int device);

// Raises RuntimeError "CUDA error: <text> (<api call>)" when a call failed
// (OutOfMemoryError for cudaErrorMemoryAllocation) and clears the runtime's
// last-error state so that the next call does not report it again.
EMBER_C10_API void check_runtime_error(int err, const char* what);
// EMBER_CUDA_CHECK(cudaMalloc(&p, n)): the call's text names the failure. Works for
// any cudaError_t without this header needing cuda_runtime.h.
#define EMBER_CUDA_CHECK(expr)                                         \
  do {                                                                 \
    const int ember_cuda_err_ = static_cast<int>(expr);                \
    if (EMBER_UNLIKELY(ember_cuda_err_ != 0)) {                        \
      ::ember::c10::cuda::check_runtime_error(ember_cuda_err_, #expr); \
    }                                                                  \
  } while (0)

// ---- streams and events ----
// A stream handle; handle == nullptr is the default (legacy) stream of `device`.
// Streams ember creates are non-blocking (they do not synchronise implicitly with
// the legacy default stream), as in PyTorch. Priority: lower is more urgent; 0 is
// the default, the most urgent is the device's greatest priority (e.g. -5).
struct EMBER_C10_API CUDAStream {
  void* handle = nullptr;
  int device = 0;
  int priority = 0;
  bool query() const;        // all work done?
  void synchronize() const;  // wait for all work
  bool operator==(const CUDAStream& o) const { return handle == o.handle && device == o.device; }
};
// A new stream owned by the caller, who must destroy_stream() it (which waits for
// the stream's pending work first, so memory cached for it is safe to hand out).
EMBER_C10_API CUDAStream create_stream(int device, int priority = 0);
EMBER_C10_API void destroy_stream(const CUDAStream& s);
// A stream from a per-device pool, handed out round robin and never destroyed
// (PyTorch's getStreamFromPool): what Python's Stream() returns, so that streams
// do not leak and a stream still current somewhere is never freed.
EMBER_C10_API CUDAStream get_stream_from_pool(int device, int priority = 0);
// {least, greatest} priority of `device` (cudaDeviceGetStreamPriorityRange).
EMBER_C10_API std::pair<int, int> stream_priority_range(int device);
EMBER_C10_API CUDAStream default_stream(int device);
// The thread-local current stream of `device` (the default stream unless set).
EMBER_C10_API CUDAStream current_stream(int device = -1);
EMBER_C10_API void set_current_stream(const CUDAStream& s);

class EMBER_C10_API CUDAEvent {
 public:
  explicit CUDAEvent(bool enable_timing = false, bool blocking = false, bool interprocess = false);
  ~CUDAEvent();
  EMBER_DISABLE_COPY_AND_ASSIGN(CUDAEvent);
  void record(const CUDAStream& s);
  void wait(const CUDAStream& s) const;  // make s wait for this event
  bool query() const;
  void synchronize() const;
  float elapsed_time(const CUDAEvent& end) const;  // milliseconds
  void* handle() const { return event_; }
  int device() const { return device_; }  // -1 until first recorded
  bool is_created() const { return event_ != nullptr; }

 private:
  // Created lazily on the device of the first stream it is recorded on, so that an
  // event can be constructed before (or without) touching the driver.
  void* event_ = nullptr;
  int device_ = -1;
  bool enable_timing_;
  bool blocking_;
  bool interprocess_;
};

// ---- memory ----
// The caching device allocator, registered for DeviceType::CUDA: per-stream pools
// of cached blocks, block splitting, stats per device. record_stream() marks a
// block as used on another stream so it is not reused before that stream is done.
EMBER_C10_API Allocator* GetCUDAAllocator();
EMBER_C10_API void record_stream(const DataPtr& p, const CUDAStream& s);
EMBER_C10_API std::string memory_summary(int device = -1);
// Page-locked host memory for fast and asynchronous copies (DataLoader pin_memory).
EMBER_C10_API Allocator* GetPinnedHostAllocator();
EMBER_C10_API bool is_pinned(const void* p);
// Marks pinned block `p` (a pointer returned by the pinned allocator) as used by
// an asynchronous copy on `s`: the block is not reused before that copy is done.
// memcpy() calls this itself for non_blocking copies. Returns false if p is not
// from the pinned allocator.
EMBER_C10_API bool record_pinned_event(const void* p, const CUDAStream& s);

// Copies between host and device or device and device on stream `s` (async when
// `non_blocking`, else synchronised before returning).
enum class CopyKind { HostToDevice, DeviceToHost, DeviceToDevice };
EMBER_C10_API void memcpy(void* dst, const void* src, size_t n, CopyKind kind, const CUDAStream& s, bool non_blocking);

// ---- testing ----
// Keeps stream `s` busy for `microseconds` (a host function enqueued on it, so no
// device code is needed): the stream-ordering tests' stand-in for PyTorch's
// torch.cuda._sleep.
EMBER_C10_API void sleep_on_stream(const CUDAStream& s, int64_t microseconds);

}  // namespace ember::c10::cuda
