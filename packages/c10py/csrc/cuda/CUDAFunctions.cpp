// Device queries, error checking, the CUDA DeviceGuardImpl and memcpy.
//
// Plain C++ against the CUDA runtime API (no device code), so the host compiler
// builds it. Nothing here talks to the driver before a function is called: the
// module must import on a machine without a GPU or without a driver.
#include <chrono>
#include <cstdio>
#include <mutex>
#include <optional>
#include <thread>

#include <ember/c10/DeviceGuard.h>
#include <ember/c10/cuda/CUDAMemInfo.h>

#include "CUDAInternal.h"

namespace ember::c10::cuda {

namespace {

// The first cudaGetDeviceCount, kept for the life of the process (as PyTorch does):
// the device count cannot change under a running CUDA context anyway.
struct DeviceQuery {
  int count = 0;
  std::string error;  // why count is 0, "" when devices were found
};

const DeviceQuery& device_query() noexcept {
  static const DeviceQuery q = [] {
    DeviceQuery r;
    int n = 0;
    const cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess) {
      // 35 (insufficient driver: no or an old driver), 100 (no device), 999 ...:
      // all mean "no CUDA here", never an exception.
      (void)cudaGetLastError();
      r.error = str("cudaGetDeviceCount: ", cudaGetErrorString(err), " (error ", static_cast<int>(err), ", ",
                    cudaGetErrorName(err), ")");
      return r;
    }
    r.count = n;
    if (n == 0) r.error = "cudaGetDeviceCount found no CUDA device";
    return r;
  }();
  return q;
}

// DeviceGuard(device('cuda:1')) goes through here. Registered at load; it touches
// the driver only when a guard is actually made.
class CUDAGuardImpl final : public DeviceGuardImpl {
 public:
  DeviceType type() const override { return DeviceType::CUDA; }
  Device getDevice() const override {
    if (!is_available()) detail::throw_no_device("DeviceGuard(cuda)");
    int d = 0;
    EMBER_CUDA_CHECK(cudaGetDevice(&d));
    return Device(DeviceType::CUDA, static_cast<int8_t>(d));
  }
  void setDevice(Device d) const override {
    EMBER_CHECK(d.is_cuda(), "DeviceGuard(cuda): cannot switch to device ", d);
    set_device(d.index);
  }
  int deviceCount() const noexcept override { return device_count(); }
};

const bool guard_registered = [] {
  static CUDAGuardImpl impl;
  RegisterDeviceGuardImpl(DeviceType::CUDA, &impl);
  return true;
}();

void CUDART_CB sleep_host_fn(void* arg) {
  // Runs on the runtime's callback thread; it must not call CUDA, only wait.
  const int64_t us = *static_cast<int64_t*>(arg);
  delete static_cast<int64_t*>(arg);
  std::this_thread::sleep_for(std::chrono::microseconds(us));
}

}  // namespace

namespace detail {

void throw_no_device(const char* what) {
  throw Error(str(what, ": no CUDA device is available; ", availability_error()));
}

int check_device(int device, const char* what) {
  (void)guard_registered;
  if (!is_available()) throw_no_device(what);
  if (device < 0) {
    EMBER_CHECK_VALUE(device == -1, what, ": invalid CUDA device index ", device);
    EMBER_CUDA_CHECK(cudaGetDevice(&device));
    return device;
  }
  const int n = device_count();
  EMBER_CHECK_VALUE(device < n, what, ": invalid CUDA device index ", device, " (", n,
                    n == 1 ? " device is" : " devices are", " available)");
  return device;
}

std::string format_size(int64_t nbytes) {
  const double v = static_cast<double>(nbytes);
  char buf[64];
  if (nbytes < 1024) {
    std::snprintf(buf, sizeof(buf), "%lld bytes", static_cast<long long>(nbytes));
  } else if (nbytes < (int64_t{1} << 20)) {
    std::snprintf(buf, sizeof(buf), "%.2f KiB", v / 1024.0);
  } else if (nbytes < (int64_t{1} << 30)) {
    std::snprintf(buf, sizeof(buf), "%.2f MiB", v / (1024.0 * 1024.0));
  } else {
    std::snprintf(buf, sizeof(buf), "%.2f GiB", v / (1024.0 * 1024.0 * 1024.0));
  }
  return buf;
}

}  // namespace detail

bool is_compiled() noexcept { return true; }
int device_count() noexcept { return device_query().count; }
bool is_available() noexcept { return device_count() > 0; }
std::string availability_error() { return device_query().error; }

int current_device() { return detail::check_device(-1, "current_device"); }

void set_device(int device) {
  EMBER_CHECK_VALUE(device >= 0, "set_device: invalid CUDA device index ", device);
  device = detail::check_device(device, "set_device");
  EMBER_CUDA_CHECK(cudaSetDevice(device));
}

void synchronize(int device) {
  device = detail::check_device(device, "synchronize");
  detail::CUDADeviceScope scope(device);
  EMBER_CUDA_CHECK(cudaDeviceSynchronize());
}

DeviceProperties get_device_properties(int device) {
  device = detail::check_device(device, "get_device_properties");
  // cudaGetDeviceProperties fills ~1 KB and is slow-ish: cache per device.
  static std::mutex mu;
  static std::vector<std::optional<DeviceProperties>> cache;
  std::lock_guard<std::mutex> lock(mu);
  if (cache.empty()) cache.resize(static_cast<size_t>(device_count()));
  auto& slot = cache[static_cast<size_t>(device)];
  if (!slot) {
    cudaDeviceProp p{};
    EMBER_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
    DeviceProperties r;
    r.name = p.name;
    r.major = p.major;
    r.minor = p.minor;
    r.total_memory = p.totalGlobalMem;
    r.multi_processor_count = p.multiProcessorCount;
    r.warp_size = p.warpSize;
    r.shared_memory_per_block = p.sharedMemPerBlock;
    slot = std::move(r);
  }
  return *slot;
}

std::pair<size_t, size_t> mem_get_info(int device) {
  device = detail::check_device(device, "mem_get_info");
  detail::CUDADeviceScope scope(device);
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  EMBER_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  return {free_bytes, total_bytes};
}

void check_runtime_error(int err, const char* what) {
  if (err == cudaSuccess) return;
  const auto e = static_cast<cudaError_t>(err);
  // Clears a non-sticky error so the next, unrelated check does not see it.
  (void)cudaGetLastError();
  if (e == cudaErrorMemoryAllocation) {
    throw OutOfMemoryError(str("CUDA error: out of memory (", what, ")"));
  }
  throw Error(str("CUDA error: ", cudaGetErrorString(e), " (", cudaGetErrorName(e), " from ", what,
                  "). CUDA kernel errors may be reported asynchronously at a later API call; "
                  "set CUDA_LAUNCH_BLOCKING=1 to see where they happen."));
}

void memcpy(void* dst, const void* src, size_t n, CopyKind kind, const CUDAStream& s, bool non_blocking) {
  if (n == 0) return;
  const int device = detail::check_device(s.device, "memcpy");
  detail::CUDADeviceScope scope(device);
  cudaMemcpyKind k = cudaMemcpyDeviceToDevice;
  const void* host = nullptr;
  switch (kind) {
    case CopyKind::HostToDevice:
      k = cudaMemcpyHostToDevice;
      host = src;
      break;
    case CopyKind::DeviceToHost:
      k = cudaMemcpyDeviceToHost;
      host = dst;
      break;
    case CopyKind::DeviceToDevice:
      break;
  }
  EMBER_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, k, detail::to_cuda(s)));
  if (non_blocking) {
    // The copy may still be reading/writing the host buffer: a pinned block must
    // not be handed out again before it is done. (Pageable memory is staged by the
    // runtime before cudaMemcpyAsync returns, so it needs nothing.)
    if (host) record_pinned_event(host, s);
  } else {
    EMBER_CUDA_CHECK(cudaStreamSynchronize(detail::to_cuda(s)));
  }
}

void sleep_on_stream(const CUDAStream& s, int64_t microseconds) {
  EMBER_CHECK_VALUE(microseconds >= 0, "sleep_on_stream: microseconds must be non-negative, got ", microseconds);
  const int device = detail::check_device(s.device, "sleep_on_stream");
  detail::CUDADeviceScope scope(device);
  auto* arg = new int64_t(microseconds);
  const cudaError_t err = cudaLaunchHostFunc(detail::to_cuda(s), &sleep_host_fn, arg);
  if (err != cudaSuccess) delete arg;
  EMBER_CUDA_CHECK(err);
}

}  // namespace ember::c10::cuda
