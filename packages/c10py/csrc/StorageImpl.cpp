#include <ember/c10/StorageImpl.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include <ember/c10/DeviceGuard.h>
#include <ember/c10/SharedMemory.h>

namespace ember::c10 {

StorageImpl::StorageImpl(size_t nbytes, DataPtr data_ptr, Allocator* allocator, bool resizable)
    : data_ptr_(std::move(data_ptr)), nbytes_(nbytes), allocator_(allocator), resizable_(resizable) {
  EMBER_INTERNAL_ASSERT(!resizable_ || allocator_ != nullptr, "a resizable storage needs an allocator");
}

StorageImpl::StorageImpl(size_t nbytes, Allocator* allocator, bool resizable)
    : StorageImpl(nbytes, allocator->allocate(nbytes), allocator, resizable) {}

intrusive_ptr<StorageImpl> StorageImpl::make(size_t nbytes, Device device, bool resizable) {
  // The allocator serves the current device: make `device` current for the call.
  if (device.is_cuda() && device.has_index()) {
    DeviceGuard guard(device);
    return make_intrusive<StorageImpl>(nbytes, GetAllocator(device.type), resizable);
  }
  return make_intrusive<StorageImpl>(nbytes, GetAllocator(device.type), resizable);
}

DataPtr StorageImpl::set_data_ptr(DataPtr&& p) {
  DataPtr old = std::move(data_ptr_);
  data_ptr_ = std::move(p);
  return old;
}

void StorageImpl::resize(size_t nbytes) {
  EMBER_CHECK(resizable_, "Trying to resize storage that is not resizable");
  if (nbytes == nbytes_) return;
  std::optional<DeviceGuard> guard;
  if (device().is_cuda() && device().has_index()) guard.emplace(device());
  DataPtr fresh = allocator_->allocate(nbytes);
  const size_t keep = std::min(nbytes, nbytes_);
  if (keep) allocator_->copy_data(fresh.get(), data_ptr_.get(), keep);
  data_ptr_ = std::move(fresh);
  nbytes_ = nbytes;
}

void StorageImpl::share_memory_(const std::string& strategy) {
  EMBER_CHECK(device().is_cpu(), "share_memory_: only CPU storages can be moved to shared memory, this one is on ",
              device());
  if (is_shared()) return;
  DataPtr shm;
  if (strategy == "file_descriptor") {
    shm = allocate_shared_fd(nbytes_);
  } else if (strategy == "file_system") {
    shm = allocate_shared_filename(nbytes_);
  } else {
    throw ValueError(
        str("share_memory_: unknown sharing strategy '", strategy, "' (expected 'file_descriptor' or 'file_system')"));
  }
  if (nbytes_) std::memcpy(shm.get(), data_ptr_.get(), nbytes_);
  data_ptr_ = std::move(shm);
  // Shared memory cannot grow in place, and the CPU allocator must not free it.
  allocator_ = nullptr;
  resizable_ = false;
}

bool StorageImpl::is_shared() const { return c10::is_shared(data_ptr_); }

}  // namespace ember::c10
