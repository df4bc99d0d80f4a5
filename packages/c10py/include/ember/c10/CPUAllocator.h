#pragma once
// The CPU allocator: 64-byte aligned blocks with a size-binned cache.
//
// Requests are rounded up to a size class (4 classes per power of two: 1, 1.25,
// 1.5, 1.75 x 2^k, so at most 25% slack). A freed block goes onto its class's free
// list instead of back to the OS while the cache holds less than the cap, so the
// next allocation of that class reuses memory that is already mapped: a training
// loop that allocates the same activations every step stops page-faulting after
// the first step. empty_cache() returns every cached block to the OS.

#include <cstddef>

#include <ember/c10/Allocator.h>

namespace ember::c10 {

// The registered CPU allocator (also what GetAllocator(DeviceType::CPU) returns).
EMBER_C10_API Allocator* GetCPUAllocator();

// Size class that a request of n bytes is served from.
EMBER_C10_API size_t cpu_allocator_round_size(size_t n);

// Cap on bytes held in the cache (default 1 GiB or EMBER_CPU_CACHE_MB); blocks
// freed past the cap go back to the OS. Setting a lower cap trims the cache.
EMBER_C10_API void cpu_allocator_set_max_cached_bytes(size_t n);
EMBER_C10_API size_t cpu_allocator_max_cached_bytes();

constexpr size_t kCPUAlignment = 64;

}  // namespace ember::c10
