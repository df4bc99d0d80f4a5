#pragma once
// SmallVector<T, N>: a vector that keeps up to N elements inline, so the sizes
// and strides of ordinary tensors (up to 5 dims) never touch the heap.
// Only for trivially copyable T (int64_t sizes and strides, pointers).

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <type_traits>

#include <ember/c10/util/ArrayRef.h>

namespace ember::c10 {

template <typename T, size_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T>, "SmallVector holds trivially copyable types only");

 public:
  using value_type = T;
  using iterator = T*;
  using const_iterator = const T*;

  SmallVector() = default;
  explicit SmallVector(size_t n, const T& v = T()) { assign(n, v); }
  SmallVector(std::initializer_list<T> il) { assign(il.begin(), il.end()); }
  SmallVector(ArrayRef<T> a) { assign(a.begin(), a.end()); }
  template <typename It, typename = decltype(*std::declval<It>())>
  SmallVector(It first, It last) {
    assign(first, last);
  }
  SmallVector(const SmallVector& o) { assign(o.begin(), o.end()); }
  SmallVector(SmallVector&& o) noexcept { take(std::move(o)); }
  ~SmallVector() { free_heap(); }

  SmallVector& operator=(const SmallVector& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  SmallVector& operator=(SmallVector&& o) noexcept {
    if (this != &o) {
      free_heap();
      take(std::move(o));
    }
    return *this;
  }

  operator ArrayRef<T>() const { return ArrayRef<T>(data_, size_); }

  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T& back() { return data_[size_ - 1]; }
  const T& back() const { return data_[size_ - 1]; }
  T& front() { return data_[0]; }

  void reserve(size_t n) {
    if (n <= cap_) return;
    T* p = static_cast<T*>(std::malloc(n * sizeof(T)));
    if (!p) throw std::bad_alloc();
    if (size_) std::memcpy(p, data_, size_ * sizeof(T));
    const size_t size = size_;  // free_heap() resets size_
    free_heap();
    data_ = p;
    cap_ = n;
    size_ = size;
  }
  void resize(size_t n, const T& v = T()) {
    reserve(n);
    for (size_t i = size_; i < n; ++i) data_[i] = v;
    size_ = n;
  }
  void clear() { size_ = 0; }
  void push_back(const T& v) {
    if (size_ == cap_) reserve(cap_ * 2);
    data_[size_++] = v;
  }
  void emplace_back(const T& v) { push_back(v); }
  void pop_back() { --size_; }
  void insert(T* pos, const T& v) {
    size_t i = pos - data_;
    push_back(v);
    std::rotate(data_ + i, data_ + size_ - 1, data_ + size_);
  }
  void erase(T* pos) {
    std::copy(pos + 1, end(), pos);
    --size_;
  }
  void assign(size_t n, const T& v) {
    clear();
    resize(n, v);
  }
  template <typename It>
  void assign(It first, It last) {
    size_t n = static_cast<size_t>(std::distance(first, last));
    clear();
    reserve(n);
    std::copy(first, last, data_);
    size_ = n;
  }
  ArrayRef<T> ref() const { return ArrayRef<T>(data_, size_); }

  friend bool operator==(const SmallVector& a, const SmallVector& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator!=(const SmallVector& a, const SmallVector& b) { return !(a == b); }

 private:
  bool is_inline() const { return data_ == inline_; }
  void free_heap() {
    if (!is_inline()) std::free(data_);
    data_ = inline_;
    cap_ = N;
    size_ = 0;
  }
  void take(SmallVector&& o) {
    if (o.is_inline()) {
      data_ = inline_;
      cap_ = N;
      std::memcpy(inline_, o.inline_, o.size_ * sizeof(T));
    } else {
      data_ = o.data_;
      cap_ = o.cap_;
      o.data_ = o.inline_;
      o.cap_ = N;
    }
    size_ = o.size_;
    o.size_ = 0;
  }

  T inline_[N];
  T* data_ = inline_;
  size_t size_ = 0;
  size_t cap_ = N;
};

// Sizes and strides of one tensor.
using DimVector = SmallVector<int64_t, 5>;

}  // namespace ember::c10
