#include <ember/aten/TensorIterator.h>

#include <algorithm>
#include <limits>
#include <numeric>

namespace ember::at {

using c10::isFloatingType;
using c10::promoteTypes;

// ---------------------------------------------------------------------------
// type promotion
// ---------------------------------------------------------------------------

namespace {

ScalarType promote_skip_undefined(ScalarType a, ScalarType b) {
  if (a == ScalarType::Undefined) return b;
  if (b == ScalarType::Undefined) return a;
  return promoteTypes(a, b);
}

// `higher` comes from the stronger class of operands (dimensioned > 0-dim > wrapped
// numbers). It wins unless `lower` is of a higher category (a float scalar with
// integer tensors), in which case the two are promoted.
ScalarType combine_categories(ScalarType higher, ScalarType lower) {
  if (isFloatingType(higher)) return higher;
  if (higher == ScalarType::Bool || isFloatingType(lower)) return promote_skip_undefined(higher, lower);
  if (higher != ScalarType::Undefined) return higher;
  return lower;
}

struct ResultTypeState {
  ScalarType dim = ScalarType::Undefined;
  ScalarType zero = ScalarType::Undefined;
  ScalarType wrapped = ScalarType::Undefined;

  void update(const Tensor& t) {
    if (!t.defined()) return;
    ScalarType current = t.dtype();
    if (t.is_wrapped_number()) {
      // A Python float counts as the default dtype, a Python int as int64.
      if (isFloatingType(current)) current = get_default_dtype();
      wrapped = promote_skip_undefined(wrapped, current);
    } else if (t.dim() == 0) {
      zero = promote_skip_undefined(zero, current);
    } else {
      dim = promote_skip_undefined(dim, current);
    }
  }
  ScalarType result() const { return combine_categories(dim, combine_categories(zero, wrapped)); }
};

std::string dtype_name(ScalarType t) {
  // PyTorch spells dtypes in these messages as Float/Long/...
  return c10::toString(t);
}

}  // namespace

ScalarType result_type(const std::vector<Tensor>& tensors) {
  ResultTypeState s;
  for (const auto& t : tensors) s.update(t);
  return s.result();
}

bool can_cast(ScalarType from, ScalarType to) {
  if (isFloatingType(from) && c10::isIntegralType(to, /*includeBool=*/true)) return false;
  if (from != ScalarType::Bool && to == ScalarType::Bool) return false;
  return true;
}

DimVector infer_size(IntArrayRef a, IntArrayRef b, const char* op) {
  const size_t n = std::max(a.size(), b.size());
  DimVector out(n);
  for (int64_t i = static_cast<int64_t>(n) - 1; i >= 0; --i) {
    const int64_t offset = static_cast<int64_t>(n) - 1 - i;
    const int64_t da = static_cast<int64_t>(a.size()) - 1 - offset;
    const int64_t db = static_cast<int64_t>(b.size()) - 1 - offset;
    const int64_t sa = da >= 0 ? a[da] : 1;
    const int64_t sb = db >= 0 ? b[db] : 1;
    EMBER_CHECK(sa == sb || sa == 1 || sb == 1, op, ": the size of tensor a (", sa,
                ") must match the size of tensor b (", sb, ") at non-singleton dimension ", i);
    out[i] = sa == 1 ? sb : sa;
  }
  return out;
}

// ---------------------------------------------------------------------------
// config
// ---------------------------------------------------------------------------

TensorIteratorConfig& TensorIteratorConfig::add_output(const Tensor& t) {
  EMBER_INTERNAL_ASSERT(num_inputs_ == 0, "add outputs before inputs");
  tensors_.push_back(t);
  num_outputs_++;
  return *this;
}

TensorIteratorConfig& TensorIteratorConfig::add_input(const Tensor& t) {
  EMBER_CHECK(t.defined(), name_, ": expected a defined tensor as input");
  tensors_.push_back(t);
  num_inputs_++;
  return *this;
}

TensorIterator TensorIteratorConfig::build() {
  TensorIterator it;
  it.build(*this);
  return it;
}

// ---------------------------------------------------------------------------
// common configurations
// ---------------------------------------------------------------------------

TensorIterator TensorIterator::binary_op(const Tensor& out, const Tensor& a, const Tensor& b, const char* name) {
  return TensorIteratorConfig()
      .name(name)
      .add_output(out)
      .add_input(a)
      .add_input(b)
      .allow_cpu_scalars(true)
      .promote_inputs_to_common_dtype(true)
      .cast_common_dtype_to_outputs(true)
      .enforce_safe_casting_to_output(true)
      .build();
}

TensorIterator TensorIterator::binary_float_op(const Tensor& out, const Tensor& a, const Tensor& b, const char* name) {
  return TensorIteratorConfig()
      .name(name)
      .add_output(out)
      .add_input(a)
      .add_input(b)
      .allow_cpu_scalars(true)
      .promote_inputs_to_common_dtype(true)
      .cast_common_dtype_to_outputs(true)
      .enforce_safe_casting_to_output(true)
      .promote_integer_inputs_to_float(true)
      .build();
}

TensorIterator TensorIterator::comparison_op(const Tensor& out, const Tensor& a, const Tensor& b, const char* name) {
  // The kernel always writes bool; an out= of another dtype receives a cast copy.
  return TensorIteratorConfig()
      .name(name)
      .add_output(out)
      .add_input(a)
      .add_input(b)
      .allow_cpu_scalars(true)
      .promote_inputs_to_common_dtype(true)
      .cast_common_dtype_to_outputs(true)
      .declare_static_dtype(ScalarType::Bool)
      .build();
}

TensorIterator TensorIterator::unary_op(const Tensor& out, const Tensor& a, const char* name) {
  return TensorIteratorConfig()
      .name(name)
      .add_output(out)
      .add_input(a)
      .cast_common_dtype_to_outputs(true)
      .enforce_safe_casting_to_output(true)
      .build();
}

TensorIterator TensorIterator::unary_float_op(const Tensor& out, const Tensor& a, const char* name) {
  return TensorIteratorConfig()
      .name(name)
      .add_output(out)
      .add_input(a)
      .promote_inputs_to_common_dtype(true)
      .cast_common_dtype_to_outputs(true)
      .enforce_safe_casting_to_output(true)
      .promote_integer_inputs_to_float(true)
      .build();
}

TensorIterator TensorIterator::nullary_op(const Tensor& out, const char* name) {
  return TensorIteratorConfig().name(name).add_output(out).check_all_same_dtype(false).resize_outputs(false).build();
}

// ---------------------------------------------------------------------------
// build
// ---------------------------------------------------------------------------

void TensorIterator::build(TensorIteratorConfig& config) {
  name_ = config.name_;
  is_reduction_ = config.is_reduction_;
  operands_.reserve(config.tensors_.size());
  num_outputs_ = config.num_outputs_;
  for (size_t i = 0; i < config.tensors_.size(); ++i) {
    OperandInfo op(config.tensors_[i]);
    op.is_output = static_cast<int>(i) < num_outputs_;
    operands_.push_back(std::move(op));
  }
  // An output that is also an input is read-write (in-place): it must not be resized.
  for (int i = 0; i < num_outputs_; ++i) {
    auto& out = operands_[i];
    if (!out.tensor.defined()) continue;
    for (int j = num_outputs_; j < ntensors(); ++j) {
      if (operands_[j].tensor.is_same(out.tensor)) out.is_read_write = true;
    }
  }
  compute_shape(config);
  check_devices(config);
  compute_types(config);
  if (config.check_mem_overlap_) check_mem_overlaps(config);
  compute_strides();
  reorder_dimensions();
  allocate_or_resize_outputs();
  coalesce_dimensions();
  for (auto& op : operands_) {
    op.data = static_cast<char*>(op.tensor.data_ptr());
  }
}

void TensorIterator::compute_shape(const TensorIteratorConfig& config) {
  bool first = true;
  for (auto& op : operands_) {
    if (!op.tensor.defined()) continue;
    // Outputs that may be resized do not take part in broadcasting.
    if (config.resize_outputs_ && op.is_output && !op.is_read_write) continue;
    if (first) {
      full_shape_ = DimVector(op.tensor.sizes());
      first = false;
    } else if (!op.tensor.sizes().equals(full_shape_)) {
      full_shape_ = infer_size(full_shape_, op.tensor.sizes(), name_);
    }
  }
  for (auto& op : operands_) {
    if (!op.is_output || !op.tensor.defined()) continue;
    if (op.tensor.sizes().equals(full_shape_)) continue;
    if (op.is_read_write) {
      EMBER_CHECK(false, name_, ": output with shape ", shape_str(op.tensor.sizes()),
                  " doesn't match the broadcast shape ", shape_str(full_shape_));
    }
    if (!config.resize_outputs_) {
      if (is_reduction_) continue;  // reduction outputs broadcast over the reduced dims
      EMBER_CHECK(false, name_, ": output with shape ", shape_str(op.tensor.sizes()),
                  " doesn't match the broadcast shape ", shape_str(full_shape_));
    }
    op.will_resize = true;
  }
}

void TensorIterator::check_devices(const TensorIteratorConfig& config) {
  std::optional<Device> common = config.static_device_;
  const Tensor* first = nullptr;
  for (auto& op : operands_) {
    if (!op.tensor.defined()) continue;
    const Tensor& t = op.tensor;
    // 0-dim CPU tensors may join CUDA tensors (they are read as scalars).
    if (config.allow_cpu_scalars_ && !op.is_output && t.is_cpu() && t.dim() == 0) continue;
    if (!common) {
      common = t.device();
      first = &t;
      continue;
    }
    if (config.check_all_same_device_ && t.device() != *common) {
      Device a = first ? first->device() : *common;
      Device b = t.device();
      if (a.is_cpu() && !b.is_cpu()) std::swap(a, b);
      EMBER_CHECK(false, "Expected all tensors to be on the same device, but found at least two devices, ", a, " and ",
                  b, "!");
    }
  }
  if (!common) common = Device(DeviceType::CPU);
  static_device_ = *common;
}

void TensorIterator::compute_types(const TensorIteratorConfig& config) {
  // Common dtype of the inputs.
  std::vector<Tensor> inputs;
  for (int i = num_outputs_; i < ntensors(); ++i) inputs.push_back(operands_[i].tensor);
  ScalarType common = ScalarType::Undefined;
  const bool promoting = config.promote_inputs_to_common_dtype_;
  if (promoting) {
    common = result_type(inputs);
  } else if (!inputs.empty()) {
    common = inputs[0].dtype();
  } else if (num_outputs_ > 0 && operands_[0].tensor.defined()) {
    common = operands_[0].tensor.dtype();
  }
  if (config.check_all_same_dtype_) {
    for (auto& op : operands_) {
      if (!op.tensor.defined()) continue;
      EMBER_CHECK(op.tensor.dtype() == common, name_, ": expected all tensors to have the same dtype, but found ",
                  c10::toPythonName(common), " and ", c10::toPythonName(op.tensor.dtype()));
    }
  }
  if (config.promote_integer_inputs_to_float_ && c10::isIntegralType(common, /*includeBool=*/true)) {
    common = get_default_dtype();
  }
  common_dtype_ = common;

  for (auto& op : operands_) {
    if (op.is_output) {
      ScalarType kernel_dtype = common;
      if (config.static_dtype_) {
        kernel_dtype = *config.static_dtype_;
      } else if (!promoting && !config.cast_common_dtype_to_outputs_ && op.tensor.defined()) {
        kernel_dtype = op.tensor.dtype();  // e.g. copy_: each operand keeps its dtype
      }
      op.target_dtype = kernel_dtype;
      if (!op.tensor.defined() || op.tensor.dtype() == kernel_dtype) continue;
      // A defined output of another dtype: compute into a temporary, cast back after.
      EMBER_CHECK(config.cast_common_dtype_to_outputs_ || config.static_dtype_, name_,
                  ": expected out tensor to have dtype ", c10::toPythonName(kernel_dtype), ", but got ",
                  c10::toPythonName(op.tensor.dtype()), " instead");
      if (config.enforce_safe_casting_to_output_) {
        EMBER_CHECK(can_cast(kernel_dtype, op.tensor.dtype()), name_, ": result type ", dtype_name(kernel_dtype),
                    " can't be cast to the desired output type ", dtype_name(op.tensor.dtype()));
      }
      op.original = op.tensor;
      op.tensor = Tensor();  // allocated in allocate_or_resize_outputs
    } else {
      op.target_dtype = op.tensor.dtype();
      if (promoting && op.tensor.dtype() != common) {
        op.original = op.tensor;
        op.tensor = op.tensor.to(common);
        op.target_dtype = common;
      }
    }
  }
}

namespace {
// [first byte, one past the last byte] touched by t.
std::pair<uintptr_t, uintptr_t> byte_range(const Tensor& t) {
  const uintptr_t start = reinterpret_cast<uintptr_t>(t.data_ptr());
  int64_t extent = 1;
  for (int64_t d = 0; d < t.dim(); ++d) extent += (t.size(d) - 1) * t.stride(d);
  return {start, start + static_cast<uintptr_t>(extent) * t.itemsize()};
}
bool has_internal_overlap(const Tensor& t) {
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.size(d) > 1 && t.stride(d) == 0) return true;
  return false;
}
}  // namespace

void TensorIterator::check_mem_overlaps(const TensorIteratorConfig& config) {
  for (int i = 0; i < num_outputs_; ++i) {
    const Tensor& out = operands_[i].original.defined() ? operands_[i].original : operands_[i].tensor;
    if (!out.defined() || out.numel() == 0 || operands_[i].will_resize) continue;
    if (!is_reduction_) {
      EMBER_CHECK(!has_internal_overlap(out), name_,
                  ": unsupported operation: more than one element of the written-to tensor refers to a single memory "
                  "location. Please clone() the tensor before performing the operation.");
    }
    for (int j = num_outputs_; j < ntensors(); ++j) {
      const Tensor& in = operands_[j].original.defined() ? operands_[j].original : operands_[j].tensor;
      if (in.numel() == 0 || !in.is_alias_of(out)) continue;
      if (in.is_same(out)) continue;
      const bool same_geometry = in.data_ptr() == out.data_ptr() && in.sizes().equals(out.sizes()) &&
                                 in.strides().equals(out.strides()) && in.dtype() == out.dtype();
      if (same_geometry) continue;
      const auto [a0, a1] = byte_range(in);
      const auto [b0, b1] = byte_range(out);
      EMBER_CHECK(a1 <= b0 || b1 <= a0, name_,
                  ": unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
                  "single memory location. Please clone() the tensor before performing the operation.");
    }
  }
  (void)config;
}

void TensorIterator::compute_strides() {
  const int64_t nd = static_cast<int64_t>(full_shape_.size());
  for (auto& op : operands_) {
    if (!op.tensor.defined() || op.will_resize) continue;
    const Tensor& t = op.tensor;
    const int64_t offset = nd - t.dim();
    const int64_t isz = static_cast<int64_t>(t.itemsize());
    op.stride_bytes.assign(static_cast<size_t>(nd), 0);
    for (int64_t d = 0; d < t.dim(); ++d) {
      if (t.size(d) != 1 || full_shape_[offset + d] == 1) op.stride_bytes[offset + d] = t.stride(d) * isz;
    }
    // broadcast dims (size 1 in t, larger in the shape) keep stride 0
  }
  shape_ = full_shape_;
}

void TensorIterator::reorder_dimensions() {
  const int nd = static_cast<int>(shape_.size());
  perm_.resize(nd);
  // Start from the user's order reversed: the last dim is the innermost.
  for (int i = 0; i < nd; ++i) perm_[i] = nd - 1 - i;
  if (nd <= 1) {
    if (nd == 1) perm_[0] = 0;
  } else {
    // 1: dim0 should go after dim1 (it moves slower); -1: keep; 0: no operand decides.
    auto should_swap = [&](int64_t dim0, int64_t dim1) -> int {
      for (const auto& op : operands_) {
        if (op.stride_bytes.empty() || op.will_resize) continue;
        const int64_t s0 = op.stride_bytes[dim0], s1 = op.stride_bytes[dim1];
        if (is_reduction_ && op.is_output && ((s0 == 0) != (s1 == 0))) {
          return s1 == 0 ? 1 : -1;  // reduced dims (stride 0 in the output) go innermost
        }
        if (s0 == 0 || s1 == 0) continue;  // a broadcast dim says nothing about order
        if (s0 < s1) return -1;
        if (s0 > s1) return 1;
        if (full_shape_[dim0] > full_shape_[dim1]) return 1;  // equal strides: smaller size first
      }
      return 0;
    };
    // Insertion sort that tolerates "no opinion" comparisons.
    for (int i = 1; i < nd; ++i) {
      int dim1 = i;
      for (int dim0 = i - 1; dim0 >= 0; --dim0) {
        const int c = should_swap(perm_[dim0], perm_[dim1]);
        if (c > 0) {
          std::swap(perm_[dim0], perm_[dim1]);
          dim1 = dim0;
        } else if (c < 0) {
          break;
        }
      }
    }
  }
  // Apply the permutation to the shape and every operand's strides.
  DimVector new_shape(nd);
  for (int i = 0; i < nd; ++i) new_shape[i] = full_shape_[perm_[i]];
  shape_ = new_shape;
  for (auto& op : operands_) {
    if (op.stride_bytes.empty()) continue;
    DimVector s(nd);
    for (int i = 0; i < nd; ++i) s[i] = op.stride_bytes[perm_[i]];
    op.stride_bytes = s;
  }
}

void TensorIterator::allocate_or_resize_outputs() {
  const int nd = static_cast<int>(shape_.size());
  const Device device = *static_device_;
  for (int i = 0; i < num_outputs_; ++i) {
    auto& op = operands_[i];
    if (op.will_resize && op.tensor.defined()) {
      // out= of the wrong shape: resize it (contiguous), then recompute its strides
      resize_output(op.tensor, full_shape_);
      op.will_resize = false;
    } else if (op.will_resize && op.original.defined()) {
      resize_output(op.original, full_shape_);
      op.will_resize = false;
    }
    if (!op.tensor.defined()) {
      // Lay the new output out in iteration order, so it follows the inputs' memory layout.
      const int64_t isz = static_cast<int64_t>(c10::elementSize(op.target_dtype));
      DimVector user_strides(nd);
      int64_t acc = 1;
      for (int d = 0; d < nd; ++d) {
        user_strides[perm_[d]] = acc;
        acc *= std::max<int64_t>(shape_[d], 1);
      }
      (void)isz;
      op.tensor = empty_strided(full_shape_, user_strides, op.target_dtype, device);
    }
    // (Re)compute this output's byte strides in iteration order.
    const Tensor& t = op.tensor;
    const int64_t isz = static_cast<int64_t>(t.itemsize());
    const int64_t offset = nd - t.dim();
    DimVector user(nd, 0);
    for (int64_t d = 0; d < t.dim(); ++d) {
      if (t.size(d) != 1 || full_shape_[offset + d] == 1) user[offset + d] = t.stride(d) * isz;
    }
    op.stride_bytes.resize(nd);
    for (int d = 0; d < nd; ++d) op.stride_bytes[d] = user[perm_[d]];
  }
}

void TensorIterator::coalesce_dimensions() {
  const int nd = ndim();
  if (nd <= 1) return;
  auto can_coalesce = [&](int d0, int d1) {
    const int64_t s0 = shape_[d0], s1 = shape_[d1];
    if (s0 == 1 || s1 == 1) return true;
    for (const auto& op : operands_) {
      if (op.stride_bytes[d0] * s0 != op.stride_bytes[d1]) return false;
    }
    return true;
  };
  auto replace_stride = [&](int d0, int d1) {
    for (auto& op : operands_) op.stride_bytes[d0] = op.stride_bytes[d1];
  };
  int prev = 0;
  for (int d = 1; d < nd; ++d) {
    if (can_coalesce(prev, d)) {
      if (shape_[prev] == 1) replace_stride(prev, d);
      shape_[prev] *= shape_[d];
    } else {
      prev++;
      if (prev != d) {
        replace_stride(prev, d);
        shape_[prev] = shape_[d];
      }
    }
  }
  shape_.resize(prev + 1);
  for (auto& op : operands_) op.stride_bytes.resize(prev + 1);
  has_coalesced_ = true;
}

// ---------------------------------------------------------------------------
// queries
// ---------------------------------------------------------------------------

int64_t TensorIterator::numel() const {
  int64_t n = 1;
  for (int64_t s : shape_) n *= s;
  return n;
}

const Tensor& TensorIterator::output(int i) const {
  const auto& op = operands_[i];
  return op.original.defined() ? op.original : op.tensor;
}

bool TensorIterator::is_scalar(int i) const {
  for (int64_t s : operands_[i].stride_bytes)
    if (s != 0) return false;
  return true;
}

bool TensorIterator::is_cpu_scalar(int i) const {
  const Tensor& t = operands_[i].tensor;
  return t.is_cpu() && t.dim() == 0;
}

Scalar TensorIterator::scalar_value(int i) const { return operands_[i].tensor.item(); }

bool TensorIterator::is_contiguous() const {
  if (numel() == 1) return true;
  if (ndim() != 1) return false;
  for (const auto& op : operands_) {
    if (op.stride_bytes[0] != static_cast<int64_t>(c10::elementSize(op.target_dtype))) return false;
  }
  return true;
}

bool TensorIterator::can_use_32bit_indexing() const {
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  if (numel() > kMax) return false;
  for (const auto& op : operands_) {
    int64_t max_offset = 1;
    for (int d = 0; d < ndim(); ++d) max_offset += (shape_[d] - 1) * op.stride_bytes[d];
    if (max_offset > kMax) return false;
  }
  return true;
}

std::vector<TensorIterator> TensorIterator::with_32bit_indexing() const {
  std::vector<TensorIterator> out;
  std::vector<TensorIterator> todo{*this};
  while (!todo.empty()) {
    TensorIterator it = std::move(todo.back());
    todo.pop_back();
    if (it.can_use_32bit_indexing()) {
      out.push_back(std::move(it));
      continue;
    }
    // Split the outermost dim with more than one element in two halves.
    int dim = it.ndim() - 1;
    while (dim > 0 && it.shape_[dim] == 1) --dim;
    EMBER_CHECK(it.shape_[dim] > 1, it.name_, ": cannot split an iteration of one element for 32-bit indexing");
    const int64_t half = it.shape_[dim] / 2;
    TensorIterator lo = it, hi = it;
    lo.shape_[dim] = half;
    hi.shape_[dim] = it.shape_[dim] - half;
    for (size_t k = 0; k < hi.operands_.size(); ++k) hi.operands_[k].data += half * hi.operands_[k].stride_bytes[dim];
    todo.push_back(std::move(lo));
    todo.push_back(std::move(hi));
  }
  return out;
}

// ---------------------------------------------------------------------------
// running
// ---------------------------------------------------------------------------

void TensorIterator::get_data_ptrs(char** ptrs, IntArrayRef counter) const {
  for (int k = 0; k < ntensors(); ++k) {
    char* p = operands_[k].data;
    for (int d = 0; d < ndim(); ++d) p += counter[d] * operands_[k].stride_bytes[d];
    ptrs[k] = p;
  }
}

void TensorIterator::serial_for_each(const loop2d_t& loop, int64_t begin, int64_t end) const {
  if (begin >= end) return;
  const int nt = ntensors();
  c10::SmallVector<char*, 8> ptrs(nt);
  c10::SmallVector<int64_t, 16> strides(2 * nt, 0);
  const int nd = ndim();
  if (nd == 0) {
    get_data_ptrs(ptrs.data(), {});
    loop(ptrs.data(), strides.data(), 1, 1);
    return;
  }
  for (int k = 0; k < nt; ++k) {
    strides[k] = operands_[k].stride_bytes[0];
    if (nd > 1) strides[nt + k] = operands_[k].stride_bytes[1];
  }
  // Multi-index of `begin`.
  DimVector counter(nd, 0);
  int64_t rem = begin;
  for (int d = 0; d < nd; ++d) {
    counter[d] = rem % shape_[d];
    rem /= shape_[d];
  }
  int64_t linear = begin;
  while (linear < end) {
    get_data_ptrs(ptrs.data(), counter);
    const int64_t left = end - linear;
    int64_t size0 = shape_[0] - counter[0];
    int64_t size1 = 1;
    if (size0 > left) {
      size0 = left;
    } else if (counter[0] == 0 && nd > 1) {
      size1 = std::max<int64_t>(1, std::min(shape_[1] - counter[1], left / shape_[0]));
    }
    loop(ptrs.data(), strides.data(), size0, size1);
    linear += size0 * size1;
    // advance the counter
    if (size1 > 1) {
      counter[1] += size1;
    } else {
      counter[0] += size0;
    }
    for (int d = 0; d < nd - 1; ++d) {
      if (counter[d] >= shape_[d]) {
        counter[d + 1] += counter[d] / shape_[d];
        counter[d] %= shape_[d];
      }
    }
  }
}

void TensorIterator::for_each(const loop2d_t& loop, int64_t grain_size) {
  const int64_t n = numel();
  if (n > 0) {
    if (n <= grain_size || in_parallel_region()) {
      serial_for_each(loop, 0, n);
    } else {
      parallel_for(0, n, grain_size, [&](int64_t b, int64_t e) { serial_for_each(loop, b, e); });
    }
  }
  cast_outputs();
}

void TensorIterator::cast_outputs() {
  if (outputs_cast_) return;
  outputs_cast_ = true;
  for (int i = 0; i < num_outputs_; ++i) {
    auto& op = operands_[i];
    if (op.original.defined() && op.tensor.defined() && !op.original.is_same(op.tensor)) {
      op.original.copy_(op.tensor);
    }
  }
}

}  // namespace ember::at
