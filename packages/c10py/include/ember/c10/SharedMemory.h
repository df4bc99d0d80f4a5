#pragma once
// CPU memory that other processes can map: what DataLoader workers put batches in.
//
// Two strategies, as PyTorch's torch.multiprocessing:
//  - "file_descriptor" (default): an anonymous memfd. The creator keeps the fd; a
//    receiver gets a duplicate (over a Unix socket) and maps it. Nothing appears
//    in /dev/shm, and the kernel frees the memory when the last mapping and the
//    last fd are gone, even if a process dies.
//  - "file_system": a named POSIX shared-memory object (/dev/shm/ember_<pid>_<n>)
//    whose first 64 bytes hold a process-shared reference count. Every mapping
//    holds one reference; the one that drops the last reference unlinks the name.
//    A copy inherited through fork() holds none (dropping it there changes nothing).
//    A process killed by a signal leaks its reference (as PyTorch's strategy).
// Sizes are reserved with posix_fallocate up front, so an exhausted shared-memory
// filesystem is an OutOfMemoryError at allocation time, never a SIGBUS later.

#include <cstddef>
#include <string>

#include <ember/c10/Allocator.h>

namespace ember::c10 {

EMBER_C10_API DataPtr allocate_shared_fd(size_t nbytes);
// Maps an fd received from another process; the fd is duplicated, the caller keeps its own.
EMBER_C10_API DataPtr map_shared_fd(int fd, size_t nbytes);

EMBER_C10_API DataPtr allocate_shared_filename(size_t nbytes);
EMBER_C10_API DataPtr map_shared_filename(const std::string& name, size_t nbytes);

// Whether a DataPtr came from the functions above, and its handles.
EMBER_C10_API bool is_shared(const DataPtr& p);
EMBER_C10_API int shared_fd(const DataPtr& p);                // -1 for file_system memory
EMBER_C10_API std::string shared_filename(const DataPtr& p);  // "" for fd memory

}  // namespace ember::c10
