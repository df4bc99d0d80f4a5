#pragma once
// The Allocator contract: one allocator registered per device type hands out
// DataPtrs. A DataPtr owns its memory through an opaque context and a deleter, so
// memory from anywhere (the caching allocators, shared memory, a NumPy array, a
// DLPack capsule) can back a StorageImpl.

#include <cstddef>
#include <cstdint>
#include <memory>

#include <ember/c10/Device.h>
#include <ember/c10/Exception.h>

namespace ember::c10 {

using DeleterFnPtr = void (*)(void*);

inline void deleteNothing(void*) {}

class EMBER_C10_API DataPtr {
 public:
  DataPtr() : data_(nullptr), ctx_(nullptr, &deleteNothing), device_(DeviceType::CPU) {}
  DataPtr(void* data, Device device) : data_(data), ctx_(nullptr, &deleteNothing), device_(device) {}
  // `ctx` is passed to `deleter` when the DataPtr dies; `data` is what users see.
  DataPtr(void* data, void* ctx, DeleterFnPtr deleter, Device device)
      : data_(data), ctx_(ctx, deleter ? deleter : &deleteNothing), device_(device) {}

  DataPtr(DataPtr&&) noexcept = default;
  DataPtr& operator=(DataPtr&&) noexcept = default;

  void* get() const { return data_; }
  void* get_context() const { return ctx_.get(); }
  DeleterFnPtr get_deleter() const { return ctx_.get_deleter(); }
  Device device() const { return device_; }
  void unsafe_set_device(Device d) { device_ = d; }
  void clear() {
    ctx_.reset();
    data_ = nullptr;
  }
  explicit operator bool() const { return data_ != nullptr; }

 private:
  void* data_;
  std::unique_ptr<void, DeleterFnPtr> ctx_;
  Device device_;
};

// Byte counters kept by every caching allocator (PyTorch's memory_stats subset).
struct AllocatorStats {
  int64_t allocated_bytes = 0;       // bytes in blocks handed out and not yet freed
  int64_t peak_allocated_bytes = 0;  // max of allocated_bytes since the last reset
  int64_t reserved_bytes = 0;        // allocated + cached (what the process holds)
  int64_t peak_reserved_bytes = 0;
  int64_t cached_bytes = 0;  // freed blocks kept for reuse
  int64_t num_allocs = 0;    // allocate() calls that returned memory
  int64_t num_frees = 0;
  int64_t num_cache_hits = 0;     // allocations served from the cache
  int64_t num_device_allocs = 0;  // allocations that went to the OS / driver
};

class EMBER_C10_API Allocator {
 public:
  virtual ~Allocator() = default;
  virtual DataPtr allocate(size_t nbytes) = 0;
  virtual DeviceType device_type() const = 0;
  // Copies n bytes between two blocks of this allocator's device.
  virtual void copy_data(void* dst, const void* src, size_t n) const = 0;
  virtual AllocatorStats stats(int device = -1) const {
    (void)device;
    return {};
  }
  virtual void reset_peak_stats(int device = -1) { (void)device; }
  virtual void empty_cache() {}
};

// One allocator per device type. Setting replaces (used by tests and by CUDA at load).
EMBER_C10_API void SetAllocator(DeviceType t, Allocator* a);
// Throws a RuntimeError naming the device type when none is registered.
EMBER_C10_API Allocator* GetAllocator(DeviceType t);

}  // namespace ember::c10
