// Streams (created, pooled, thread-local current), CUDAEvent and the pool of
// timing-free events the allocators record on streams.
#include <array>
#include <atomic>
#include <memory>
#include <mutex>

#include "CUDAInternal.h"

namespace ember::c10::cuda {

namespace {

// Per device and per priority level, up to kStreamsPerPool streams created on
// first use and handed out round robin (PyTorch's stream pool). Pooled streams
// live as long as the process, so a Python Stream object, a thread's current
// stream and the allocator's per-stream pools never see a destroyed handle.
constexpr int kStreamsPerPool = 32;

struct DeviceStreams {
  std::mutex mu;
  bool have_range = false;
  int least = 0;     // lowest priority (numerically largest, usually 0)
  int greatest = 0;  // highest priority (numerically smallest, e.g. -5)
  // levels[i] holds streams of priority least - i.
  std::vector<std::array<cudaStream_t, kStreamsPerPool>> levels;
  std::vector<uint32_t> next;

  void ensure_range(int device) {
    if (have_range) return;
    detail::CUDADeviceScope scope(device);
    EMBER_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    const size_t n = static_cast<size_t>(least - greatest + 1);
    levels.assign(n, {});
    for (auto& l : levels) l.fill(nullptr);
    next.assign(n, 0);
    have_range = true;
  }
  int clamp(int priority) const { return priority > least ? least : (priority < greatest ? greatest : priority); }
  bool owns(cudaStream_t s) {
    for (auto& l : levels) {
      for (cudaStream_t p : l) {
        if (p == s) return true;
      }
    }
    return false;
  }
};

DeviceStreams& device_streams(int device) {
  static std::unique_ptr<DeviceStreams[]> all;
  static std::once_flag once;
  std::call_once(once, [] { all.reset(new DeviceStreams[static_cast<size_t>(device_count())]); });
  return all[static_cast<size_t>(device)];
}

// The current stream of each device for this thread; empty until first asked.
std::vector<CUDAStream>& tls_current_streams() {
  thread_local std::vector<CUDAStream> current;
  if (current.empty()) {
    const int n = device_count();
    current.resize(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) current[static_cast<size_t>(i)] = CUDAStream{nullptr, i, 0};
  }
  return current;
}

cudaStream_t new_stream(int device, int priority) {
  detail::CUDADeviceScope scope(device);
  cudaStream_t s = nullptr;
  EMBER_CUDA_CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, priority));
  return s;
}

}  // namespace

namespace detail {

// Events the caching allocators record to learn when a stream is done with a block.
// Timing disabled: such events are cheaper to record and query.
struct EventPool {
  std::mutex mu;
  std::vector<std::vector<cudaEvent_t>> free;
};

EventPool& event_pool() {
  static auto* p = new EventPool();  // leaked: blocks may be freed during shutdown
  return *p;
}

cudaEvent_t acquire_event(int device) {
  {
    EventPool& p = event_pool();
    std::lock_guard<std::mutex> lock(p.mu);
    if (p.free.empty()) p.free.resize(static_cast<size_t>(device_count()));
    auto& v = p.free[static_cast<size_t>(device)];
    if (!v.empty()) {
      cudaEvent_t e = v.back();
      v.pop_back();
      return e;
    }
  }
  CUDADeviceScope scope(device);
  cudaEvent_t e = nullptr;
  EMBER_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  return e;
}

void release_event(int device, cudaEvent_t e) {
  EventPool& p = event_pool();
  std::lock_guard<std::mutex> lock(p.mu);
  if (p.free.empty()) p.free.resize(static_cast<size_t>(device_count()));
  p.free[static_cast<size_t>(device)].push_back(e);
}

}  // namespace detail

// ---- streams ------------------------------------------------------------------

bool CUDAStream::query() const {
  const int d = detail::check_device(device, "Stream.query");
  detail::CUDADeviceScope scope(d);  // the legacy default stream is per device
  const cudaError_t err = cudaStreamQuery(detail::to_cuda(*this));
  if (err == cudaSuccess) return true;
  if (err == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  check_runtime_error(err, "cudaStreamQuery");
  return false;
}

void CUDAStream::synchronize() const {
  const int d = detail::check_device(device, "Stream.synchronize");
  detail::CUDADeviceScope scope(d);
  EMBER_CUDA_CHECK(cudaStreamSynchronize(detail::to_cuda(*this)));
}

std::pair<int, int> stream_priority_range(int device) {
  device = detail::check_device(device, "stream_priority_range");
  DeviceStreams& ds = device_streams(device);
  std::lock_guard<std::mutex> lock(ds.mu);
  ds.ensure_range(device);
  return {ds.least, ds.greatest};
}

CUDAStream create_stream(int device, int priority) {
  device = detail::check_device(device, "create_stream");
  const int p = [&] {
    DeviceStreams& ds = device_streams(device);
    std::lock_guard<std::mutex> lock(ds.mu);
    ds.ensure_range(device);
    return ds.clamp(priority);
  }();
  return CUDAStream{new_stream(device, p), device, p};
}

void destroy_stream(const CUDAStream& s) {
  EMBER_CHECK_VALUE(s.handle != nullptr, "destroy_stream: the default stream cannot be destroyed");
  const int device = detail::check_device(s.device, "destroy_stream");
  {
    DeviceStreams& ds = device_streams(device);
    std::lock_guard<std::mutex> lock(ds.mu);
    EMBER_CHECK_VALUE(!ds.owns(detail::to_cuda(s)),
                      "destroy_stream: this stream belongs to the stream pool and must not be destroyed");
  }
  auto& current = tls_current_streams();
  if (current[static_cast<size_t>(device)] == s) current[static_cast<size_t>(device)] = default_stream(device);
  detail::CUDADeviceScope scope(device);
  // Wait for its work first: the caching allocator keys cached blocks by stream
  // handle, and a stream created later may get the same handle.
  EMBER_CUDA_CHECK(cudaStreamSynchronize(detail::to_cuda(s)));
  EMBER_CUDA_CHECK(cudaStreamDestroy(detail::to_cuda(s)));
}

CUDAStream get_stream_from_pool(int device, int priority) {
  device = detail::check_device(device, "get_stream_from_pool");
  DeviceStreams& ds = device_streams(device);
  std::lock_guard<std::mutex> lock(ds.mu);
  ds.ensure_range(device);
  const int p = ds.clamp(priority);
  const size_t level = static_cast<size_t>(ds.least - p);
  const size_t slot = ds.next[level]++ % kStreamsPerPool;
  cudaStream_t& s = ds.levels[level][slot];
  if (s == nullptr) s = new_stream(device, p);
  return CUDAStream{s, device, p};
}

CUDAStream default_stream(int device) {
  device = detail::check_device(device, "default_stream");
  return CUDAStream{nullptr, device, 0};
}

CUDAStream current_stream(int device) {
  device = detail::check_device(device, "current_stream");
  return tls_current_streams()[static_cast<size_t>(device)];
}

void set_current_stream(const CUDAStream& s) {
  EMBER_CHECK_VALUE(s.device >= 0, "set_current_stream: the stream has no device index");
  const int device = detail::check_device(s.device, "set_current_stream");
  tls_current_streams()[static_cast<size_t>(device)] = s;
}

// ---- events -------------------------------------------------------------------

CUDAEvent::CUDAEvent(bool enable_timing, bool blocking, bool interprocess)
    : enable_timing_(enable_timing), blocking_(blocking), interprocess_(interprocess) {
  EMBER_CHECK_VALUE(!(interprocess && enable_timing),
                    "CUDAEvent: an interprocess event cannot have enable_timing=True (a CUDA restriction)");
}

CUDAEvent::~CUDAEvent() {
  // Best effort: at process exit the runtime may already be unloading.
  if (event_ && cudaEventDestroy(static_cast<cudaEvent_t>(event_)) != cudaSuccess) (void)cudaGetLastError();
}

void CUDAEvent::record(const CUDAStream& s) {
  const int d = detail::check_device(s.device, "Event.record");
  detail::CUDADeviceScope scope(d);
  if (!event_) {
    unsigned flags = enable_timing_ ? cudaEventDefault : cudaEventDisableTiming;
    if (blocking_) flags |= cudaEventBlockingSync;
    if (interprocess_) flags |= cudaEventInterprocess;
    cudaEvent_t e = nullptr;
    EMBER_CUDA_CHECK(cudaEventCreateWithFlags(&e, flags));
    event_ = e;
    device_ = d;
  } else {
    EMBER_CHECK_VALUE(d == device_, "Event.record: the event belongs to cuda:", device_,
                      " but the stream is on cuda:", d);
  }
  EMBER_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(event_), detail::to_cuda(s)));
}

void CUDAEvent::wait(const CUDAStream& s) const {
  if (!event_) return;  // never recorded: nothing to wait for (as in PyTorch)
  const int d = detail::check_device(s.device, "Event.wait");
  detail::CUDADeviceScope scope(d);
  EMBER_CUDA_CHECK(cudaStreamWaitEvent(detail::to_cuda(s), static_cast<cudaEvent_t>(event_), 0));
}

bool CUDAEvent::query() const {
  if (!event_) return true;
  const cudaError_t err = cudaEventQuery(static_cast<cudaEvent_t>(event_));
  if (err == cudaSuccess) return true;
  if (err == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  check_runtime_error(err, "cudaEventQuery");
  return false;
}

void CUDAEvent::synchronize() const {
  if (!event_) return;
  EMBER_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(event_)));
}

float CUDAEvent::elapsed_time(const CUDAEvent& end) const {
  EMBER_CHECK(enable_timing_ && end.enable_timing_,
              "elapsed_time: both events must be created with enable_timing=True");
  EMBER_CHECK(event_ && end.event_, "elapsed_time: both events must be recorded before calling elapsed_time");
  detail::CUDADeviceScope scope(device_);
  float ms = 0.0f;
  const cudaError_t err =
      cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(event_), static_cast<cudaEvent_t>(end.event_));
  if (err == cudaErrorNotReady) {
    (void)cudaGetLastError();
    EMBER_ERROR("elapsed_time: the events have not completed yet; call synchronize() on the end event first");
  }
  EMBER_CUDA_CHECK(err);
  return ms;
}

}  // namespace ember::c10::cuda
