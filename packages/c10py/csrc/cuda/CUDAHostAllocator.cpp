// Pinned (page-locked) host memory: the source and destination of fast and
// asynchronous host<->device copies (DataLoader's pin_memory).
//
// cudaHostAlloc is far slower than malloc (it maps and locks pages), so blocks are
// cached by size class, as the CPU allocator does (cpu_allocator_round_size), and
// never returned to the driver except by empty_cache(). A block that served a
// non_blocking copy may still be read or written by the device after its storage
// died: memcpy() records the copy's stream on the block (record_pinned_event), an
// event is recorded on each such stream when the block is freed, and the block is
// reused only once they have completed (polled at each allocation).
#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <unordered_map>

#include <ember/c10/CPUAllocator.h>

#include "CUDAInternal.h"

namespace ember::c10::cuda {

namespace {

struct HostBlock {
  void* ptr;
  size_t size;  // the size class
  bool allocated = false;
  int event_count = 0;
  std::vector<CUDAStream> streams;  // streams of async copies since it was handed out
};

struct PendingEvent {
  cudaEvent_t event;
  int device;
  HostBlock* block;
};

class CUDAHostAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    if (nbytes == 0) return DataPtr(nullptr, Device(DeviceType::CPU));
    if (!is_available()) detail::throw_no_device("pinned memory allocator");
    const size_t cls = cpu_allocator_round_size(nbytes);
    HostBlock* block = nullptr;
    {
      std::lock_guard<std::mutex> lock(mu_);
      process_events();
      auto it = free_.find(cls);
      if (it != free_.end() && !it->second.empty()) {
        block = it->second.back();
        it->second.pop_back();
        stats_.num_cache_hits++;
        note_alloc(block);
      }
    }
    if (!block) {
      void* ptr = nullptr;
      // Default flags: with unified addressing the memory is usable from every
      // device, whichever is current now.
      cudaError_t err = cudaHostAlloc(&ptr, cls, cudaHostAllocDefault);
      if (err == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        empty_cache();
        err = cudaHostAlloc(&ptr, cls, cudaHostAllocDefault);
      }
      if (err == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        throw OutOfMemoryError(str("CUDA out of memory: could not allocate ", detail::format_size(cls),
                                   " of pinned host memory (requested ", nbytes, " bytes)"));
      }
      EMBER_CUDA_CHECK(err);
      std::lock_guard<std::mutex> lock(mu_);
      block = new HostBlock{ptr, cls, false, 0, {}};
      blocks_.emplace(reinterpret_cast<uintptr_t>(ptr), block);
      stats_.reserved_bytes += static_cast<int64_t>(cls);
      stats_.peak_reserved_bytes = std::max(stats_.peak_reserved_bytes, stats_.reserved_bytes);
      stats_.num_device_allocs++;
      note_alloc(block);
    }
    return DataPtr(block->ptr, block, &CUDAHostAllocator::deleter, Device(DeviceType::CPU));
  }

  DeviceType device_type() const override { return DeviceType::CPU; }

  void copy_data(void* dst, const void* src, size_t n) const override {
    if (n) std::memcpy(dst, src, n);
  }

  AllocatorStats stats(int) const override {
    std::lock_guard<std::mutex> lock(mu_);
    AllocatorStats s = stats_;
    s.cached_bytes = s.reserved_bytes - s.allocated_bytes;
    return s;
  }

  void reset_peak_stats(int) override {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.peak_allocated_bytes = stats_.allocated_bytes;
    stats_.peak_reserved_bytes = stats_.reserved_bytes;
  }

  // Waits for the copies still pending on freed blocks, then cudaFreeHosts every
  // block that is not in use.
  void empty_cache() override {
    std::lock_guard<std::mutex> lock(mu_);
    size_t done = 0;
    try {
      for (; done < pending_.size(); ++done) {
        EMBER_CUDA_CHECK(cudaEventSynchronize(pending_[done].event));
        complete(pending_[done]);
      }
    } catch (...) {
      pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(done));
      throw;
    }
    pending_.clear();
    for (auto& [cls, blocks] : free_) {
      for (HostBlock* b : blocks) {
        EMBER_CUDA_CHECK(cudaFreeHost(b->ptr));
        blocks_.erase(reinterpret_cast<uintptr_t>(b->ptr));
        stats_.reserved_bytes -= static_cast<int64_t>(b->size);
        delete b;
      }
      blocks.clear();
    }
  }

  // The live block holding p (anywhere inside it), or null.
  HostBlock* find(const void* p) {
    auto it = blocks_.upper_bound(reinterpret_cast<uintptr_t>(p));
    if (it == blocks_.begin()) return nullptr;
    HostBlock* b = (--it)->second;
    const auto addr = reinterpret_cast<uintptr_t>(p);
    return addr < it->first + b->size ? b : nullptr;
  }

  bool owns(const void* p) {
    std::lock_guard<std::mutex> lock(mu_);
    return find(p) != nullptr;
  }

  bool record_event(const void* p, const CUDAStream& s) {
    std::lock_guard<std::mutex> lock(mu_);
    HostBlock* b = find(p);
    if (!b || !b->allocated) return false;
    for (const CUDAStream& u : b->streams) {
      if (u == s) return true;
    }
    b->streams.push_back(s);
    return true;
  }

  static CUDAHostAllocator& instance() {
    static auto* a = new CUDAHostAllocator();  // leaked: see the CPU allocator
    return *a;
  }

 private:
  static void deleter(void* ctx) { instance().free(static_cast<HostBlock*>(ctx)); }

  void note_alloc(HostBlock* b) {
    b->allocated = true;
    stats_.allocated_bytes += static_cast<int64_t>(b->size);
    stats_.peak_allocated_bytes = std::max(stats_.peak_allocated_bytes, stats_.allocated_bytes);
    stats_.num_allocs++;
  }

  // From DataPtr's deleter: must not throw.
  void free(HostBlock* b) noexcept {
    std::lock_guard<std::mutex> lock(mu_);
    b->allocated = false;
    stats_.allocated_bytes -= static_cast<int64_t>(b->size);
    stats_.num_frees++;
    std::vector<CUDAStream> streams;
    streams.swap(b->streams);
    try {
      for (const CUDAStream& s : streams) {
        cudaEvent_t e = detail::acquire_event(s.device);
        detail::CUDADeviceScope scope(s.device);
        const cudaError_t err = cudaEventRecord(e, detail::to_cuda(s));
        if (err != cudaSuccess) {
          detail::release_event(s.device, e);
          EMBER_CUDA_CHECK(err);
        }
        b->event_count++;
        pending_.push_back({e, s.device, b});
      }
    } catch (...) {
      // Unknown whether the copies are done: never reuse it (the bytes stay reserved).
      b->allocated = true;
      return;
    }
    if (b->event_count == 0) cache(b);
  }

  void cache(HostBlock* b) {
    try {
      free_[b->size].push_back(b);
    } catch (...) {
      b->allocated = true;  // out of host memory for the free list itself: leak the block
    }
  }

  void process_events() {
    size_t kept = 0;
    for (size_t i = 0; i < pending_.size(); ++i) {
      PendingEvent& p = pending_[i];
      const cudaError_t err = cudaEventQuery(p.event);
      if (err == cudaErrorNotReady) {
        (void)cudaGetLastError();
        pending_[kept++] = p;
        continue;
      }
      if (err != cudaSuccess) {
        for (size_t j = i; j < pending_.size(); ++j) pending_[kept++] = pending_[j];
        pending_.resize(kept);
        check_runtime_error(err, "cudaEventQuery");
      }
      complete(p);
    }
    pending_.resize(kept);
  }

  void complete(const PendingEvent& p) {
    detail::release_event(p.device, p.event);
    // allocated here means free() gave up on the block: keep it out of the cache.
    if (--p.block->event_count == 0 && !p.block->allocated) cache(p.block);
  }

  mutable std::mutex mu_;
  std::map<uintptr_t, HostBlock*> blocks_;                    // every block, by address: is_pinned, record_event
  std::unordered_map<size_t, std::vector<HostBlock*>> free_;  // cached blocks by size class
  std::vector<PendingEvent> pending_;
  AllocatorStats stats_;
};

}  // namespace

Allocator* GetPinnedHostAllocator() { return &CUDAHostAllocator::instance(); }

bool record_pinned_event(const void* p, const CUDAStream& s) {
  return p != nullptr && CUDAHostAllocator::instance().record_event(p, s);
}

bool is_pinned(const void* p) {
  if (p == nullptr) return false;
  if (CUDAHostAllocator::instance().owns(p)) return true;
  // Memory pinned elsewhere (cudaHostRegister, another library). Asking the driver
  // needs one, so without a device nothing is pinned.
  if (!is_available()) return false;
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return attr.type == cudaMemoryTypeHost;
}

}  // namespace ember::c10::cuda
