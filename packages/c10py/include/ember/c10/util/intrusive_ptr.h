#pragma once
// A reference-counted pointer whose count lives inside the object (as c10's
// intrusive_ptr). StorageImpl, TensorImpl and VersionCounter derive from
// intrusive_ptr_target; a raw pointer to one can always be turned back into an
// owning pointer, which is what lets pybind11 hand the same object to Python and
// C++ without a separate control block.

#include <atomic>
#include <cstddef>
#include <utility>

namespace ember::c10 {

class intrusive_ptr_target {
 public:
  intrusive_ptr_target() = default;
  // Copies of a target start with their own count: the count is not state.
  intrusive_ptr_target(const intrusive_ptr_target&) noexcept : refcount_(0) {}
  intrusive_ptr_target& operator=(const intrusive_ptr_target&) noexcept { return *this; }
  virtual ~intrusive_ptr_target() = default;

  size_t use_count() const noexcept { return refcount_.load(std::memory_order_acquire); }

 private:
  template <typename T>
  friend class intrusive_ptr;
  friend inline void intrusive_incref(intrusive_ptr_target* p) noexcept;
  friend inline void intrusive_decref(intrusive_ptr_target* p) noexcept;
  mutable std::atomic<size_t> refcount_{0};
};

inline void intrusive_incref(intrusive_ptr_target* p) noexcept { p->refcount_.fetch_add(1, std::memory_order_relaxed); }
inline void intrusive_decref(intrusive_ptr_target* p) noexcept {
  if (p->refcount_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    delete p;
  }
}

template <typename T>
class intrusive_ptr {
 public:
  using element_type = T;

  intrusive_ptr() noexcept = default;
  intrusive_ptr(std::nullptr_t) noexcept {}
  // Takes a new reference to `p` (which may already be owned elsewhere).
  explicit intrusive_ptr(T* p) noexcept : ptr_(p) {
    if (ptr_) intrusive_incref(ptr_);
  }
  intrusive_ptr(const intrusive_ptr& o) noexcept : ptr_(o.ptr_) {
    if (ptr_) intrusive_incref(ptr_);
  }
  intrusive_ptr(intrusive_ptr&& o) noexcept : ptr_(o.ptr_) { o.ptr_ = nullptr; }
  template <typename U>
  intrusive_ptr(const intrusive_ptr<U>& o) noexcept : ptr_(o.get()) {
    if (ptr_) intrusive_incref(ptr_);
  }
  ~intrusive_ptr() { reset(); }

  intrusive_ptr& operator=(const intrusive_ptr& o) noexcept {
    intrusive_ptr tmp(o);
    swap(tmp);
    return *this;
  }
  intrusive_ptr& operator=(intrusive_ptr&& o) noexcept {
    intrusive_ptr tmp(std::move(o));
    swap(tmp);
    return *this;
  }

  void reset() noexcept {
    if (ptr_) intrusive_decref(ptr_);
    ptr_ = nullptr;
  }
  void swap(intrusive_ptr& o) noexcept { std::swap(ptr_, o.ptr_); }

  T* get() const noexcept { return ptr_; }
  T& operator*() const noexcept { return *ptr_; }
  T* operator->() const noexcept { return ptr_; }
  explicit operator bool() const noexcept { return ptr_ != nullptr; }
  size_t use_count() const noexcept { return ptr_ ? ptr_->use_count() : 0; }
  bool defined() const noexcept { return ptr_ != nullptr; }

  template <typename... Args>
  static intrusive_ptr make(Args&&... args) {
    return intrusive_ptr(new T(std::forward<Args>(args)...));
  }

  friend bool operator==(const intrusive_ptr& a, const intrusive_ptr& b) { return a.ptr_ == b.ptr_; }
  friend bool operator!=(const intrusive_ptr& a, const intrusive_ptr& b) { return a.ptr_ != b.ptr_; }

 private:
  T* ptr_ = nullptr;
};

template <typename T, typename... Args>
intrusive_ptr<T> make_intrusive(Args&&... args) {
  return intrusive_ptr<T>::make(std::forward<Args>(args)...);
}

}  // namespace ember::c10
