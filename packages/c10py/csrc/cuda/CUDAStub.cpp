// The CUDA API of a build without CUDA: nothing is available, and everything that
// would need a device says why. Compiled instead of the csrc/cuda/*.cpp sources.
#include <ember/c10/cuda/CUDAAllocatorSizes.h>
#include <ember/c10/cuda/CUDAFunctions.h>
#include <ember/c10/cuda/CUDAMemInfo.h>

namespace ember::c10::cuda {

namespace {
[[noreturn]] void not_compiled() {
  throw Error(
      "ember.c10py was built without CUDA support (no CUDA compiler was found, or EMBER_CUDA=OFF); "
      "rebuild with nvcc on PATH to use CUDA devices");
}

// Registered for DeviceType::CUDA so that StorageImpl(n, device('cuda')) says why
// it cannot work instead of "no allocator registered".
class NoCUDAAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t) override { not_compiled(); }
  DeviceType device_type() const override { return DeviceType::CUDA; }
  void copy_data(void*, const void*, size_t) const override { not_compiled(); }
};

const bool registered = [] {
  static NoCUDAAllocator a;
  SetAllocator(DeviceType::CUDA, &a);
  return true;
}();
}  // namespace

bool is_compiled() noexcept { return false; }
int device_count() noexcept { return 0; }
bool is_available() noexcept { return false; }
std::string availability_error() { return "ember was built without CUDA support"; }
int current_device() { not_compiled(); }
void set_device(int) { not_compiled(); }
void synchronize(int) { not_compiled(); }
DeviceProperties get_device_properties(int) { not_compiled(); }
std::pair<size_t, size_t> mem_get_info(int) { not_compiled(); }
void check_runtime_error(int, const char*) { not_compiled(); }

bool CUDAStream::query() const { not_compiled(); }
void CUDAStream::synchronize() const { not_compiled(); }
CUDAStream create_stream(int, int) { not_compiled(); }
void destroy_stream(const CUDAStream&) { not_compiled(); }
CUDAStream get_stream_from_pool(int, int) { not_compiled(); }
std::pair<int, int> stream_priority_range(int) { not_compiled(); }
CUDAStream default_stream(int) { not_compiled(); }
CUDAStream current_stream(int) { not_compiled(); }
void set_current_stream(const CUDAStream&) { not_compiled(); }

CUDAEvent::CUDAEvent(bool enable_timing, bool blocking, bool interprocess)
    : enable_timing_(enable_timing), blocking_(blocking), interprocess_(interprocess) {
  not_compiled();
}
CUDAEvent::~CUDAEvent() = default;
void CUDAEvent::record(const CUDAStream&) { not_compiled(); }
void CUDAEvent::wait(const CUDAStream&) const { not_compiled(); }
bool CUDAEvent::query() const { not_compiled(); }
void CUDAEvent::synchronize() const { not_compiled(); }
float CUDAEvent::elapsed_time(const CUDAEvent&) const { not_compiled(); }

Allocator* GetCUDAAllocator() {
  (void)registered;
  not_compiled();
}
AllocationSizes allocation_sizes(size_t) { not_compiled(); }
void record_stream(const DataPtr&, const CUDAStream&) { not_compiled(); }
std::string memory_summary(int) { not_compiled(); }
Allocator* GetPinnedHostAllocator() { not_compiled(); }
bool is_pinned(const void*) { return false; }
bool record_pinned_event(const void*, const CUDAStream&) { return false; }
void memcpy(void*, const void*, size_t, CopyKind, const CUDAStream&, bool) { not_compiled(); }
void sleep_on_stream(const CUDAStream&, int64_t) { not_compiled(); }

}  // namespace ember::c10::cuda
