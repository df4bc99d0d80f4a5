// at::Tensor's methods, allocation helpers and global settings.
#include <ember/aten/Tensor.h>

#include <atomic>

#include <pthread.h>

#include <ember/aten/Parallel.h>
#include <ember/aten/ShapeUtils.h>
#include <ember/aten/TensorIterator.h>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace ember::at {

namespace native {
void set_blas_num_threads(int n);  // native/Blas.cpp
}  // namespace native

// ---- global settings --------------------------------------------------------

namespace {
std::atomic<ScalarType> default_dtype{ScalarType::Float};
std::atomic<int> num_threads{0};  // 0: not set, use OpenMP's default

// Fork safety. GNU OpenMP's thread pool does not survive fork(): the child inherits
// the pool's bookkeeping but not its threads, so its first parallel region waits
// for them forever (a user's multiprocessing 'fork' pool hung on its first op).
// The child handler below makes every parallel_for of a forked child run on the
// calling thread -- libgomp offers no way to start a fresh pool -- which is also
// what DataLoader workers want (one thread each, as in PyTorch). OpenBLAS handles
// fork itself (its own pthread_atfork handlers).
std::atomic<bool> in_forked_child{false};

void mark_forked_child() { in_forked_child.store(true, std::memory_order_relaxed); }

[[maybe_unused]] const bool atfork_registered = [] {
  pthread_atfork(nullptr, nullptr, &mark_forked_child);
  return true;
}();
}  // namespace

ScalarType get_default_dtype() { return default_dtype.load(std::memory_order_relaxed); }

void set_default_dtype(ScalarType t) {
  EMBER_CHECK_TYPE(c10::isFloatingType(t), "only floating-point types are supported as the default type, got ",
                   c10::toPythonName(t));
  default_dtype.store(t);
}

int get_num_threads() {
  if (in_forked_child.load(std::memory_order_relaxed)) return 1;
  int n = num_threads.load(std::memory_order_relaxed);
  if (n > 0) return n;
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

void set_num_threads(int n) {
  EMBER_CHECK_VALUE(n > 0, "set_num_threads: expected a positive number of threads, got ", n);
  num_threads.store(n);
#ifdef _OPENMP
  // (in a forked child parallel_for stays on one thread whatever n is: see above)
  if (!in_forked_child.load(std::memory_order_relaxed)) omp_set_num_threads(n);
#endif
  native::set_blas_num_threads(n);  // keeps OpenBLAS on one thread: products split over OpenMP's
}

// ---- shape utilities ----------------------------------------------------------

std::string shape_str(IntArrayRef sizes) { return c10::str(sizes); }

DimVector infer_size_view(IntArrayRef shape, int64_t numel) {
  DimVector out(shape);
  int64_t known = 1;
  int64_t infer = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      EMBER_CHECK(infer < 0, "only one dimension can be inferred");
      infer = static_cast<int64_t>(i);
    } else {
      EMBER_CHECK(shape[i] >= 0, "invalid shape dimension ", shape[i]);
      known *= shape[i];
    }
  }
  if (infer >= 0) {
    EMBER_CHECK(known != 0, "cannot reshape tensor of ", numel, " elements into shape ", shape,
                " because the unspecified dimension size -1 can be any value and is ambiguous");
    EMBER_CHECK(numel % known == 0, "shape '", shape, "' is invalid for input of size ", numel);
    out[infer] = numel / known;
  } else {
    EMBER_CHECK(known == numel, "shape '", shape, "' is invalid for input of size ", numel);
  }
  return out;
}

std::optional<DimVector> compute_view_strides(IntArrayRef old_sizes, IntArrayRef old_strides, IntArrayRef new_sizes) {
  DimVector new_strides(new_sizes.size());
  if (old_sizes.empty()) {  // 0-dim: every dim of the result has stride 1
    for (auto& s : new_strides) s = 1;
    return new_strides;
  }
  int64_t numel = 1;
  for (int64_t s : old_sizes) numel *= s;
  if (numel == 0 && old_sizes.equals(new_sizes)) return DimVector(old_strides);
  if (numel == 0) return c10::contiguous_strides(new_sizes);
  // Walk both shapes from the back, matching chunks of old dims that are contiguous
  // with each other against runs of new dims with the same element count.
  int64_t view_d = static_cast<int64_t>(new_sizes.size()) - 1;
  int64_t chunk_base_stride = old_strides.back();
  int64_t tensor_numel = 1;
  int64_t view_numel = 1;
  for (int64_t tensor_d = static_cast<int64_t>(old_sizes.size()) - 1; tensor_d >= 0; tensor_d--) {
    tensor_numel *= old_sizes[tensor_d];
    if (tensor_d == 0 ||
        (old_sizes[tensor_d - 1] != 1 && old_strides[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
        new_strides[view_d] = view_numel * chunk_base_stride;
        view_numel *= new_sizes[view_d];
        view_d--;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (tensor_d > 0) {
        chunk_base_stride = old_strides[tensor_d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return new_strides;
}

DimVector wrap_dims(IntArrayRef dims, int64_t ndim, const char* op) {
  DimVector out(dims.size());
  uint64_t seen = 0;
  for (size_t i = 0; i < dims.size(); ++i) {
    out[i] = c10::maybe_wrap_dim(dims[i], ndim);
    EMBER_CHECK(out[i] >= 64 || !(seen & (uint64_t{1} << out[i])), op, ": dim ", out[i],
                " appears multiple times in the list of dims");
    if (out[i] < 64) seen |= uint64_t{1} << out[i];
  }
  return out;
}

DimVector broadcast_shapes(const std::vector<DimVector>& shapes, const char* op) {
  DimVector out;
  for (const auto& s : shapes) out = infer_size(out, s, op);
  return out;
}

// ---- allocation -----------------------------------------------------------------

Tensor empty(IntArrayRef sizes, ScalarType dtype, Device device) {
  return Tensor(TensorImpl::empty(sizes, dtype, device));
}

Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, ScalarType dtype, Device device) {
  return Tensor(TensorImpl::empty_strided(sizes, strides, dtype, device));
}

Tensor empty_like(const Tensor& t, std::optional<ScalarType> dtype, MemoryFormat fmt) {
  const ScalarType dt = dtype.value_or(t.dtype());
  if (fmt == MemoryFormat::Preserve && t.is_non_overlapping_and_dense() && !t.is_contiguous()) {
    return empty_strided(t.sizes(), t.strides(), dt, t.device());
  }
  if (fmt == MemoryFormat::ChannelsLast || fmt == MemoryFormat::ChannelsLast3d) {
    Tensor out = empty(t.sizes(), dt, t.device());
    return out.contiguous(fmt);
  }
  return empty(t.sizes(), dt, t.device());
}

Tensor zeros(IntArrayRef sizes, ScalarType dtype, Device device) {
  Tensor t = empty(sizes, dtype, device);
  t.zero_();
  return t;
}

Tensor full(IntArrayRef sizes, const Scalar& v, ScalarType dtype, Device device) {
  Tensor t = empty(sizes, dtype, device);
  t.fill_(v);
  return t;
}

Tensor scalar_tensor(const Scalar& s, ScalarType t, Device device) {
  Tensor out = empty({}, t, Device(DeviceType::CPU));
  out.fill_(s);
  return device.is_cpu() ? out : out.to(device);
}

Tensor wrapped_scalar_tensor(const Scalar& s, Device device) {
  Tensor out = scalar_tensor(s, s.type(), device);
  out.unsafeGetTensorImpl()->set_wrapped_number(true);
  return out;
}

bool resize_output(const Tensor& out, IntArrayRef shape) {
  if (out.sizes().equals(shape)) return false;
  resize_(out, shape);
  return true;
}

void resize_(const Tensor& t, IntArrayRef sizes) { t.unsafeGetTensorImpl()->set_sizes_contiguous(sizes); }

// ---- views ---------------------------------------------------------------------

Tensor Tensor::as_strided(IntArrayRef sizes, IntArrayRef strides, std::optional<int64_t> offset) const {
  return Tensor(impl_->make_view(sizes, strides, offset.value_or(impl_->storage_offset())));
}

Tensor Tensor::view(IntArrayRef sizes) const {
  DimVector shape = infer_size_view(sizes, numel());
  auto strides = compute_view_strides(this->sizes(), this->strides(), shape);
  EMBER_CHECK(strides.has_value(),
              "view size is not compatible with input tensor's size and stride (at least one dimension spans across "
              "two contiguous subspaces). Use .reshape(...) instead.");
  return as_strided(shape, *strides);
}

Tensor Tensor::reshape(IntArrayRef sizes) const {
  DimVector shape = infer_size_view(sizes, numel());
  if (auto strides = compute_view_strides(this->sizes(), this->strides(), shape)) return as_strided(shape, *strides);
  return contiguous().view(shape);
}

Tensor Tensor::unsqueeze(int64_t dim) const {
  const int64_t d = c10::maybe_wrap_dim(dim, this->dim() + 1);
  DimVector sizes(this->sizes()), strides(this->strides());
  const int64_t st = d >= this->dim() ? 1 : sizes[d] * strides[d];
  sizes.insert(sizes.begin() + d, 1);
  strides.insert(strides.begin() + d, st);
  return as_strided(sizes, strides);
}

Tensor Tensor::squeeze(int64_t dim) const {
  if (this->dim() == 0) return alias();
  const int64_t d = c10::maybe_wrap_dim(dim, this->dim());
  if (size(d) != 1) return alias();
  DimVector sizes(this->sizes()), strides(this->strides());
  sizes.erase(sizes.begin() + d);
  strides.erase(strides.begin() + d);
  return as_strided(sizes, strides);
}

Tensor Tensor::transpose(int64_t a, int64_t b) const {
  const int64_t nd = dim();
  if (nd == 0) return alias();
  a = c10::maybe_wrap_dim(a, nd);
  b = c10::maybe_wrap_dim(b, nd);
  DimVector sizes(this->sizes()), strides(this->strides());
  std::swap(sizes[a], sizes[b]);
  std::swap(strides[a], strides[b]);
  return as_strided(sizes, strides);
}

Tensor Tensor::permute(IntArrayRef dims) const {
  EMBER_CHECK(static_cast<int64_t>(dims.size()) == dim(),
              "permute(sparse_coo): number of dimensions in the tensor "
              "input does not match the length of the desired ordering of dimensions i.e. input.dim() = ",
              dim(), " is not equal to len(dims) = ", dims.size());
  DimVector d = wrap_dims(dims, dim(), "permute");
  DimVector sizes(d.size()), strides(d.size());
  for (size_t i = 0; i < d.size(); ++i) {
    sizes[i] = size(d[i]);
    strides[i] = stride(d[i]);
  }
  return as_strided(sizes, strides);
}

Tensor Tensor::expand(IntArrayRef new_sizes) const {
  const int64_t nd = static_cast<int64_t>(new_sizes.size());
  EMBER_CHECK(nd >= dim(), "expand: the number of sizes provided (", nd,
              ") must be greater or equal to the number of dimensions in the tensor (", dim(), ")");
  DimVector sizes(nd), strides(nd);
  for (int64_t i = nd - 1; i >= 0; --i) {
    const int64_t offset = nd - 1 - i;
    const int64_t d = dim() - 1 - offset;
    const int64_t size = d >= 0 ? this->size(d) : 1;
    const int64_t stride = d >= 0 ? this->stride(d) : (i + 1 < nd ? sizes[i + 1] * strides[i + 1] : 1);
    int64_t target = new_sizes[i];
    if (target == -1) {
      EMBER_CHECK(d >= 0,
                  "expand: the expanded size of the tensor (-1) isn't allowed in a leading, non-existing "
                  "dimension ",
                  i);
      target = size;
    }
    if (size == target) {
      sizes[i] = size;
      strides[i] = stride;
    } else {
      EMBER_CHECK(size == 1, "The expanded size of the tensor (", target, ") must match the existing size (", size,
                  ") at non-singleton dimension ", i, ".  Target sizes: ", new_sizes,
                  ".  Tensor sizes: ", this->sizes());
      sizes[i] = target;
      strides[i] = 0;
    }
  }
  return as_strided(sizes, strides);
}

Tensor Tensor::select(int64_t dim, int64_t index) const {
  EMBER_CHECK_INDEX(this->dim() > 0, "select() cannot be applied to a 0-dim tensor.");
  const int64_t d = c10::maybe_wrap_dim(dim, this->dim());
  const int64_t n = size(d);
  EMBER_CHECK_INDEX(index >= -n && index < n, "select(): index ", index, " out of range for tensor of size ", sizes(),
                    " at dimension ", d);
  if (index < 0) index += n;
  DimVector sizes(this->sizes()), strides(this->strides());
  const int64_t offset = storage_offset() + index * strides[d];
  sizes.erase(sizes.begin() + d);
  strides.erase(strides.begin() + d);
  return as_strided(sizes, strides, offset);
}

Tensor Tensor::narrow(int64_t dim, int64_t start, int64_t length) const {
  EMBER_CHECK_INDEX(this->dim() > 0, "narrow() cannot be applied to a 0-dim tensor.");
  const int64_t d = c10::maybe_wrap_dim(dim, this->dim());
  const int64_t n = size(d);
  EMBER_CHECK_INDEX(start >= -n && start <= n, "start out of range (expected to be in range of [", -n, ", ", n,
                    "], but got ", start, ")");
  if (start < 0) start += n;
  EMBER_CHECK(length >= 0 && start <= n - length, "start (", start, ") + length (", length,
              ") exceeds dimension size (", n, ").");
  DimVector sizes(this->sizes());
  sizes[d] = length;
  return as_strided(sizes, strides(), storage_offset() + start * stride(d));
}

bool Tensor::is_contiguous(MemoryFormat fmt) const {
  if (fmt == MemoryFormat::Contiguous || fmt == MemoryFormat::Preserve) return is_contiguous();
  const int64_t nd = fmt == MemoryFormat::ChannelsLast ? 4 : 5;
  if (dim() != nd) return false;
  // channels-last: C is the innermost dim, then W, H, (D), N
  DimVector order = nd == 4 ? DimVector{1, 3, 2, 0} : DimVector{1, 4, 3, 2, 0};
  int64_t expected = 1;
  for (int64_t d : order) {
    if (size(d) == 0) return true;
    if (size(d) != 1 && stride(d) != expected) return false;
    expected *= size(d);
  }
  return true;
}

std::string Tensor::toString() const {
  if (!defined()) return "UndefinedTensor";
  return c10::str(c10::toPythonName(dtype()), sizes());
}

void check_same_device(const char* op, const Tensor& a, const Tensor& b) {
  if (a.device() == b.device()) return;
  Device x = a.device(), y = b.device();
  if (x.is_cpu() && !y.is_cpu()) std::swap(x, y);
  EMBER_CHECK(false, "Expected all tensors to be on the same device, but found at least two devices, ", x, " and ", y,
              "! (when checking arguments for ", op, ")");
}

}  // namespace ember::at
