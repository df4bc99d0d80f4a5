#include <ember/c10/CPUAllocator.h>

#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

namespace ember::c10 {

namespace {

// Every block starts with one 64-byte header holding its size class, so freeing
// needs no lookup table; the user's data starts right after it, still 64-byte aligned.
constexpr size_t kHeader = kCPUAlignment;

size_t default_cap() {
  if (const char* env = std::getenv("EMBER_CPU_CACHE_MB")) {
    try {
      return static_cast<size_t>(std::stoull(env)) << 20;
    } catch (...) {
    }
  }
  return size_t{1} << 30;
}

class CPUCachingAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    if (nbytes == 0) return DataPtr(nullptr, Device(DeviceType::CPU));
    const size_t cls = cpu_allocator_round_size(nbytes);
    void* base = nullptr;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = free_.find(cls);
      if (it != free_.end() && !it->second.empty()) {
        base = it->second.back();
        it->second.pop_back();
        stats_.cached_bytes -= static_cast<int64_t>(cls);
        stats_.num_cache_hits++;
      }
      if (base) note_alloc(cls, /*new_memory=*/false);
    }
    if (!base) {
      if (posix_memalign(&base, kCPUAlignment, cls + kHeader) != 0 || base == nullptr) {
        // Give the cache back and try once more before failing.
        empty_cache();
        if (posix_memalign(&base, kCPUAlignment, cls + kHeader) != 0 || base == nullptr) {
          throw OutOfMemoryError(str("CPU out of memory: tried to allocate ", nbytes, " bytes"));
        }
      }
      *static_cast<size_t*>(base) = cls;
      std::lock_guard<std::mutex> lock(mu_);
      note_alloc(cls, /*new_memory=*/true);
    }
    return DataPtr(static_cast<char*>(base) + kHeader, base, &CPUCachingAllocator::deleter, Device(DeviceType::CPU));
  }

  DeviceType device_type() const override { return DeviceType::CPU; }

  void copy_data(void* dst, const void* src, size_t n) const override {
    if (n) std::memcpy(dst, src, n);
  }

  AllocatorStats stats(int) const override {
    std::lock_guard<std::mutex> lock(mu_);
    return stats_;
  }

  void reset_peak_stats(int) override {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.peak_allocated_bytes = stats_.allocated_bytes;
    stats_.peak_reserved_bytes = stats_.reserved_bytes;
  }

  void empty_cache() override {
    std::vector<void*> to_free;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto& [cls, blocks] : free_) {
        for (void* b : blocks) to_free.push_back(b);
        stats_.reserved_bytes -= static_cast<int64_t>(cls * blocks.size());
        blocks.clear();
      }
      stats_.cached_bytes = 0;
    }
    for (void* b : to_free) std::free(b);
  }

  void set_max_cached(size_t n) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      max_cached_ = n;
      if (static_cast<size_t>(stats_.cached_bytes) <= n) return;
    }
    empty_cache();
  }
  size_t max_cached() const {
    std::lock_guard<std::mutex> lock(mu_);
    return max_cached_;
  }

  void free_block(void* base) {
    const size_t cls = *static_cast<size_t*>(base);
    {
      std::lock_guard<std::mutex> lock(mu_);
      stats_.allocated_bytes -= static_cast<int64_t>(cls);
      stats_.num_frees++;
      if (static_cast<size_t>(stats_.cached_bytes) + cls <= max_cached_) {
        free_[cls].push_back(base);
        stats_.cached_bytes += static_cast<int64_t>(cls);
        return;
      }
      stats_.reserved_bytes -= static_cast<int64_t>(cls);
    }
    std::free(base);
  }

  static CPUCachingAllocator& instance() {
    // Leaked on purpose: storages may be freed during interpreter shutdown.
    static auto* a = new CPUCachingAllocator();
    return *a;
  }

 private:
  static void deleter(void* base) { instance().free_block(base); }

  void note_alloc(size_t cls, bool new_memory) {
    stats_.allocated_bytes += static_cast<int64_t>(cls);
    stats_.num_allocs++;
    if (new_memory) {
      stats_.reserved_bytes += static_cast<int64_t>(cls);
      stats_.num_device_allocs++;
    }
    if (stats_.allocated_bytes > stats_.peak_allocated_bytes) stats_.peak_allocated_bytes = stats_.allocated_bytes;
    if (stats_.reserved_bytes > stats_.peak_reserved_bytes) stats_.peak_reserved_bytes = stats_.reserved_bytes;
  }

  mutable std::mutex mu_;
  std::unordered_map<size_t, std::vector<void*>> free_;
  AllocatorStats stats_;
  size_t max_cached_ = default_cap();
};

const bool registered = [] {
  SetAllocator(DeviceType::CPU, &CPUCachingAllocator::instance());
  return true;
}();

}  // namespace

size_t cpu_allocator_round_size(size_t n) {
  if (n <= kCPUAlignment) return kCPUAlignment;
  // four classes per power of two: step is a quarter of the power of two below n
  const int log2 = 63 - __builtin_clzll(static_cast<unsigned long long>(n));
  size_t step = log2 >= 2 ? (size_t{1} << (log2 - 2)) : 1;
  if (step < kCPUAlignment) step = kCPUAlignment;
  // Near SIZE_MAX the rounded size (plus the block header) would wrap to a small number.
  if (n > std::numeric_limits<size_t>::max() - step - kHeader) {
    throw OutOfMemoryError(str("CPU out of memory: tried to allocate ", n, " bytes"));
  }
  return (n + step - 1) / step * step;
}

Allocator* GetCPUAllocator() {
  (void)registered;
  return &CPUCachingAllocator::instance();
}

void cpu_allocator_set_max_cached_bytes(size_t n) { CPUCachingAllocator::instance().set_max_cached(n); }
size_t cpu_allocator_max_cached_bytes() { return CPUCachingAllocator::instance().max_cached(); }

}  // namespace ember::c10
