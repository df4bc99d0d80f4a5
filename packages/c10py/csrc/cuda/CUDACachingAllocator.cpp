// The CUDA caching allocator (PyTorch's CUDACachingAllocator, without expandable
// segments, graphs or IPC).
//
// cudaMalloc is slow and cudaFree synchronises the whole device, so memory a tensor
// gives back is kept and handed to the next request that fits. The protocol, whose
// invariants span the functions below:
//
// - Sizes are rounded up to a multiple of 512 bytes. Requests up to 1 MiB come
//   from the small pool, whose segments (the regions cudaMalloc returned) are
//   2 MiB; larger ones from the large pool, whose segments are 20 MiB for requests
//   under 10 MiB and the request rounded up to 2 MiB otherwise.
// - The blocks of one segment form a doubly linked list in address order
//   (prev/next). A cached block larger than the request is split: the request
//   takes the front and the rest stays cached, if at least 512 bytes remain (small
//   pool) or more than 1 MiB remains (large pool, so large segments are not
//   shredded into small pieces). A freed block merges with its free neighbours, so
//   a segment whose blocks are all free is one block again and empty_cache() (or
//   the out-of-memory retry) can cudaFree it.
// - A pool is ordered by (stream, size, address) and a block is only reused by an
//   allocation on the stream it was allocated on: work on one stream runs in
//   order, so the next user cannot start before the previous user finished, with
//   no synchronisation. Best fit is a lower_bound.
// - record_stream(p, s): the block is also used on stream s. When it is freed an
//   event is recorded on each such stream, and the block returns to its pool only
//   when all of them have completed (polled at every allocation; waited for by
//   empty_cache() and before the out-of-memory retry).
// - Stats count rounded block sizes: allocated = blocks handed out; reserved =
//   segments held; cached = reserved - allocated (free blocks, the unused tails of
//   split segments and blocks waiting for their events).
// - Locking: one mutex per device guards its pools, blocks, events and stats. A
//   DataPtr's context is its Block, so freeing needs no global lookup table.
#include <algorithm>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>

#include <ember/c10/cuda/CUDAAllocatorSizes.h>

#include "CUDAInternal.h"

namespace ember::c10::cuda {

namespace {

constexpr size_t kMinBlockSize = 512;            // every size is a multiple of this
constexpr size_t kSmallSize = 1 << 20;           // largest request served by the small pool
constexpr size_t kSmallBuffer = 2 << 20;         // small-pool segment size
constexpr size_t kLargeBuffer = 20 << 20;        // large-pool segment size for requests < kMinLargeAlloc
constexpr size_t kMinLargeAlloc = 10 << 20;      // from here on a segment is the rounded request
constexpr size_t kRoundLarge = 2 << 20;          // rounding of such segments
constexpr size_t kMaxRequest = size_t{1} << 50;  // 1 PiB: anything larger cannot succeed (and would overflow rounding)

size_t round_size(size_t n) {
  return n < kMinBlockSize ? kMinBlockSize : (n + kMinBlockSize - 1) / kMinBlockSize * kMinBlockSize;
}

size_t segment_size(size_t size) {
  if (size <= kSmallSize) return kSmallBuffer;
  if (size < kMinLargeAlloc) return kLargeBuffer;
  return (size + kRoundLarge - 1) / kRoundLarge * kRoundLarge;
}

// Whether the `remaining` bytes after a request are split off as a free block of
// their own (see the protocol above).
bool worth_splitting(size_t remaining, bool small_pool) {
  return small_pool ? remaining >= kMinBlockSize : remaining > kSmallSize;
}

struct BlockPool;

struct Block {
  Block(int device, cudaStream_t stream, size_t size, BlockPool* pool, void* ptr)
      : device(device), stream(stream), size(size), pool(pool), ptr(ptr) {}
  int device;
  cudaStream_t stream;  // the stream it was allocated on (its pool key)
  size_t size;          // rounded
  BlockPool* pool;
  void* ptr;
  size_t requested_size = 0;  // what the caller asked for
  bool allocated = false;
  int event_count = 0;                  // events still pending before it may be reused
  std::vector<CUDAStream> stream_uses;  // other streams it was used on (record_stream)
  Block* prev = nullptr;                // address neighbours within the segment
  Block* next = nullptr;

  bool is_segment() const { return prev == nullptr && next == nullptr; }
};

struct BlockOrder {
  bool operator()(const Block* a, const Block* b) const {
    if (a->stream != b->stream) {
      return reinterpret_cast<uintptr_t>(a->stream) < reinterpret_cast<uintptr_t>(b->stream);
    }
    if (a->size != b->size) return a->size < b->size;
    return reinterpret_cast<uintptr_t>(a->ptr) < reinterpret_cast<uintptr_t>(b->ptr);
  }
};

struct BlockPool {
  explicit BlockPool(bool small) : is_small(small) {}
  const bool is_small;
  std::set<Block*, BlockOrder> blocks;  // free blocks only
  int64_t segments = 0;                 // segments cudaMalloc'd for this pool
  int64_t segment_bytes = 0;
};

struct PendingEvent {
  cudaEvent_t event;
  int device;  // the event's device (that of the stream it was recorded on)
  Block* block;
};

class DeviceCachingAllocator {
 public:
  explicit DeviceCachingAllocator(int device) : device_(device), large_(false), small_(true) {}

  Block* malloc(size_t nbytes, cudaStream_t stream) {
    std::lock_guard<std::mutex> lock(mu_);
    process_events();
    if (nbytes > kMaxRequest) throw OutOfMemoryError(oom_message(nbytes));
    const size_t size = round_size(nbytes);
    BlockPool& pool = size <= kSmallSize ? small_ : large_;
    Block* block = take_free_block(pool, stream, size);
    const bool cache_hit = block != nullptr;
    if (!block) block = new_segment(pool, stream, size, nbytes);
    if (should_split(*block, size)) {
      auto* rest = new Block(device_, stream, block->size - size, &pool, static_cast<char*>(block->ptr) + size);
      rest->prev = block;
      rest->next = block->next;
      if (rest->next) rest->next->prev = rest;
      block->next = rest;
      block->size = size;
      pool.blocks.insert(rest);
    }
    block->allocated = true;
    block->requested_size = nbytes;
    ++num_active_;
    stats_.allocated_bytes += static_cast<int64_t>(block->size);
    stats_.peak_allocated_bytes = std::max(stats_.peak_allocated_bytes, stats_.allocated_bytes);
    stats_.num_allocs++;
    if (cache_hit) stats_.num_cache_hits++;
    return block;
  }

  // Called from DataPtr's deleter, so it must not throw.
  void free(Block* block) noexcept {
    std::lock_guard<std::mutex> lock(mu_);
    block->allocated = false;
    --num_active_;
    stats_.allocated_bytes -= static_cast<int64_t>(block->size);
    stats_.num_frees++;
    if (block->stream_uses.empty()) {
      free_block(block);
      return;
    }
    try {
      insert_events(block);
    } catch (...) {
      // Could not learn when the other streams are done with it (the runtime may
      // be shutting down): never reuse the block rather than risk a race.
      block->allocated = true;
    }
  }

  void record_stream(Block* block, const CUDAStream& s) {
    std::lock_guard<std::mutex> lock(mu_);
    EMBER_CHECK(block->allocated, "record_stream: the block was already freed");
    // Work on the allocation stream is ordered with the next reuse already.
    if (s.handle == block->stream && s.device == block->device) return;
    for (const CUDAStream& u : block->stream_uses) {
      if (u == s) return;
    }
    block->stream_uses.push_back(s);
  }

  void empty_cache() {
    std::lock_guard<std::mutex> lock(mu_);
    synchronize_and_free_events();
    release_cached_blocks();
  }

  AllocatorStats stats() {
    std::lock_guard<std::mutex> lock(mu_);
    AllocatorStats s = stats_;
    s.cached_bytes = s.reserved_bytes - s.allocated_bytes;
    return s;
  }

  void reset_peak_stats() {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.peak_allocated_bytes = stats_.allocated_bytes;
    stats_.peak_reserved_bytes = stats_.reserved_bytes;
  }

  std::string summary() {
    std::lock_guard<std::mutex> lock(mu_);
    using detail::format_size;
    std::set<cudaStream_t> streams;
    for (const BlockPool* p : {&large_, &small_}) {
      for (const Block* b : p->blocks) streams.insert(b->stream);
    }
    std::ostringstream os;
    os << "ember CUDA caching allocator, cuda:" << device_ << "\n"
       << "  allocated      " << format_size(stats_.allocated_bytes) << " (peak "
       << format_size(stats_.peak_allocated_bytes) << ")\n"
       << "  reserved       " << format_size(stats_.reserved_bytes) << " (peak "
       << format_size(stats_.peak_reserved_bytes) << ")\n"
       << "  cached         " << format_size(stats_.reserved_bytes - stats_.allocated_bytes) << "\n"
       << "  segments       large pool " << large_.segments << " (" << format_size(large_.segment_bytes)
       << "), small pool " << small_.segments << " (" << format_size(small_.segment_bytes) << ")\n"
       << "  blocks         " << num_active_ << " allocated, " << large_.blocks.size() + small_.blocks.size()
       << " cached on " << streams.size() << " stream(s), " << pending_.size()
       << " event(s) pending for record_stream\n"
       << "  calls          " << stats_.num_allocs << " allocs (" << stats_.num_cache_hits << " from the cache, "
       << stats_.num_device_allocs << " cudaMalloc), " << stats_.num_frees << " frees\n";
    return os.str();
  }

 private:
  Block* take_free_block(BlockPool& pool, cudaStream_t stream, size_t size) {
    Block key(device_, stream, size, &pool, nullptr);
    auto it = pool.blocks.lower_bound(&key);
    if (it == pool.blocks.end() || (*it)->stream != stream) return nullptr;
    Block* b = *it;
    pool.blocks.erase(it);
    return b;
  }

  static bool should_split(const Block& b, size_t size) { return worth_splitting(b.size - size, b.pool->is_small); }

  Block* new_segment(BlockPool& pool, cudaStream_t stream, size_t size, size_t nbytes) {
    const size_t bytes = segment_size(size);
    detail::CUDADeviceScope scope(device_);
    void* ptr = nullptr;
    cudaError_t err = cudaMalloc(&ptr, bytes);
    if (err == cudaErrorMemoryAllocation) {
      // Give every cached segment back to the driver, then try once more.
      (void)cudaGetLastError();
      synchronize_and_free_events();
      release_cached_blocks();
      err = cudaMalloc(&ptr, bytes);
    }
    if (err == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      throw OutOfMemoryError(oom_message(nbytes));
    }
    EMBER_CUDA_CHECK(err);
    pool.segments++;
    pool.segment_bytes += static_cast<int64_t>(bytes);
    stats_.reserved_bytes += static_cast<int64_t>(bytes);
    stats_.peak_reserved_bytes = std::max(stats_.peak_reserved_bytes, stats_.reserved_bytes);
    stats_.num_device_allocs++;
    return new Block(device_, stream, bytes, &pool, ptr);
  }

  // Returns a block whose events have all completed to its pool, merged with its
  // free neighbours.
  void free_block(Block* block) {
    BlockPool& pool = *block->pool;
    merge(block, block->prev, pool);
    merge(block, block->next, pool);
    pool.blocks.insert(block);
  }

  void merge(Block* dst, Block* src, BlockPool& pool) {
    if (!src || src->allocated || src->event_count > 0 || !src->stream_uses.empty()) return;
    pool.blocks.erase(src);  // by key: src's fields are still unchanged
    if (dst->prev == src) {
      dst->ptr = src->ptr;
      dst->prev = src->prev;
      if (dst->prev) dst->prev->next = dst;
    } else {
      dst->next = src->next;
      if (dst->next) dst->next->prev = dst;
    }
    dst->size += src->size;
    delete src;
  }

  void insert_events(Block* block) {
    std::vector<CUDAStream> streams;
    streams.swap(block->stream_uses);
    for (const CUDAStream& s : streams) {
      cudaEvent_t e = detail::acquire_event(s.device);
      detail::CUDADeviceScope scope(s.device);  // the legacy stream is per device
      const cudaError_t err = cudaEventRecord(e, detail::to_cuda(s));
      if (err != cudaSuccess) {
        detail::release_event(s.device, e);
        EMBER_CUDA_CHECK(err);
      }
      block->event_count++;
      pending_.push_back({e, s.device, block});
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
        // Keep the rest consistent before reporting the (probably sticky) error.
        for (size_t j = i; j < pending_.size(); ++j) pending_[kept++] = pending_[j];
        pending_.resize(kept);
        check_runtime_error(err, "cudaEventQuery");
      }
      complete(p);
    }
    pending_.resize(kept);
  }

  void synchronize_and_free_events() {
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
  }

  void complete(const PendingEvent& p) {
    detail::release_event(p.device, p.event);
    // allocated here means free() gave up on the block (see there): keep it out.
    if (--p.block->event_count == 0 && !p.block->allocated) free_block(p.block);
  }

  // cudaFrees every cached block that spans a whole segment. (cudaFree waits for
  // the device, so work still queued on those blocks finishes first.)
  void release_cached_blocks() {
    for (BlockPool* pool : {&large_, &small_}) {
      for (auto it = pool->blocks.begin(); it != pool->blocks.end();) {
        Block* b = *it;
        if (!b->is_segment()) {
          ++it;
          continue;
        }
        detail::CUDADeviceScope scope(device_);
        EMBER_CUDA_CHECK(cudaFree(b->ptr));
        pool->segments--;
        pool->segment_bytes -= static_cast<int64_t>(b->size);
        stats_.reserved_bytes -= static_cast<int64_t>(b->size);
        it = pool->blocks.erase(it);
        delete b;
      }
    }
  }

  std::string oom_message(size_t nbytes) const {
    using detail::format_size;
    size_t free_bytes = 0, total_bytes = 0;
    std::string capacity;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) {
      capacity = str(" cuda:", device_, " has a total capacity of ", format_size(static_cast<int64_t>(total_bytes)),
                     " of which ", format_size(static_cast<int64_t>(free_bytes)), " is free.");
    } else {
      (void)cudaGetLastError();
    }
    return str("CUDA out of memory. Tried to allocate ", format_size(static_cast<int64_t>(nbytes)), " (", nbytes,
               " bytes) on device cuda:", device_, ".", capacity, " ember has ", format_size(stats_.allocated_bytes),
               " allocated and ", format_size(stats_.reserved_bytes), " reserved by its caching allocator (",
               format_size(stats_.reserved_bytes - stats_.allocated_bytes), " reserved but unallocated).");
  }

  std::mutex mu_;
  const int device_;
  BlockPool large_;
  BlockPool small_;
  std::vector<PendingEvent> pending_;
  AllocatorStats stats_;
  int64_t num_active_ = 0;
};

class CUDACachingAllocator final : public Allocator {
 public:
  DataPtr allocate(size_t nbytes) override {
    if (!is_available()) detail::throw_no_device("CUDA caching allocator");
    const int device = current_device();
    const Device where(DeviceType::CUDA, static_cast<int8_t>(device));
    if (nbytes == 0) return DataPtr(nullptr, where);
    const CUDAStream stream = current_stream(device);
    Block* b = device_allocator(device).malloc(nbytes, detail::to_cuda(stream));
    return DataPtr(b->ptr, b, &CUDACachingAllocator::deleter, where);
  }

  DeviceType device_type() const override { return DeviceType::CUDA; }

  void copy_data(void* dst, const void* src, size_t n) const override {
    // Stream-ordered on the current stream: the kernels that follow see the copy,
    // and the host need not wait.
    memcpy(dst, src, n, CopyKind::DeviceToDevice, current_stream(-1), /*non_blocking=*/true);
  }

  // Nothing was ever allocated without a device, so the counters are all zero.
  AllocatorStats stats(int device) const override {
    if (!is_available()) return {};
    return device_allocator(detail::check_device(device, "memory_stats")).stats();
  }

  void reset_peak_stats(int device) override {
    if (!is_available()) return;
    device_allocator(detail::check_device(device, "reset_peak_memory_stats")).reset_peak_stats();
  }

  void empty_cache() override {
    if (!is_available()) return;
    for (int d = 0; d < device_count(); ++d) device_allocator(d).empty_cache();
  }

  void record_stream(const DataPtr& p, const CUDAStream& s) {
    if (!p) return;
    EMBER_CHECK(p.get_deleter() == &CUDACachingAllocator::deleter,
                "record_stream: the memory was not allocated by ember's CUDA caching allocator");
    detail::check_device(s.device, "record_stream");
    auto* b = static_cast<Block*>(p.get_context());
    device_allocator(b->device).record_stream(b, s);
  }

  std::string summary(int device) {
    if (!is_available()) {
      return str("ember CUDA caching allocator: no CUDA device is available; ", availability_error(), "\n");
    }
    return device_allocator(detail::check_device(device, "memory_summary")).summary();
  }

  static CUDACachingAllocator& instance() {
    // Leaked on purpose: storages may be freed during interpreter shutdown.
    static auto* a = new CUDACachingAllocator();
    return *a;
  }

 private:
  static void deleter(void* ctx) {
    auto* b = static_cast<Block*>(ctx);
    instance().device_allocator(b->device).free(b);
  }

  // One per device, made on first use; making one touches no driver state.
  DeviceCachingAllocator& device_allocator(int device) const {
    std::call_once(init_, [this] {
      const int n = device_count();
      for (int d = 0; d < n; ++d) devices_.push_back(std::make_unique<DeviceCachingAllocator>(d));
    });
    return *devices_[static_cast<size_t>(device)];
  }

  mutable std::once_flag init_;
  mutable std::vector<std::unique_ptr<DeviceCachingAllocator>> devices_;
};

// Registering constructs the allocator only: no CUDA call happens before the
// first allocation, so importing on a machine without a GPU works.
const bool registered = [] {
  SetAllocator(DeviceType::CUDA, &CUDACachingAllocator::instance());
  return true;
}();

}  // namespace

AllocationSizes allocation_sizes(size_t nbytes) {
  EMBER_CHECK_VALUE(nbytes <= kMaxRequest, "allocation_sizes: ", nbytes, " bytes is more than any device holds");
  AllocationSizes r;
  r.block = round_size(nbytes);
  r.segment = segment_size(r.block);
  r.small_pool = r.block <= kSmallSize;
  const size_t rest = r.segment - r.block;
  r.remainder = worth_splitting(rest, r.small_pool) ? rest : 0;
  return r;
}

Allocator* GetCUDAAllocator() {
  (void)registered;
  return &CUDACachingAllocator::instance();
}

void record_stream(const DataPtr& p, const CUDAStream& s) { CUDACachingAllocator::instance().record_stream(p, s); }

std::string memory_summary(int device) { return CUDACachingAllocator::instance().summary(device); }

}  // namespace ember::c10::cuda
