#pragma once
// TensorIterator: everything an elementwise (or reduction) kernel should not have
// to think about, done once -- as PyTorch's TensorIterator.
//
//   build():  broadcast the input shapes; check or allocate/resize the outputs;
//             compute the common dtype (PyTorch's result_type: bool < integer <
//             floating; dimensioned tensors > 0-dim tensors > wrapped Python
//             numbers) and cast inputs/outputs to it where asked; check devices
//             and memory overlap; reorder dims so the fastest-moving one is first;
//             coalesce dims that are contiguous with each other.
//   for_each(loop): call loop(data, strides, size0, size1) over 2-d tiles of the
//             iteration space, splitting it across OpenMP threads above GRAIN_SIZE.
//
// Iteration dims are stored innermost first: shape()[0] is the fastest dimension.
// Strides are in bytes.

#include <functional>

#include <ember/aten/Parallel.h>
#include <ember/aten/Tensor.h>
#include <ember/c10/util/SmallVector.h>

namespace ember::at {

struct OperandInfo {
  OperandInfo() = default;
  explicit OperandInfo(Tensor t) : tensor(std::move(t)) {}

  Tensor tensor;           // what the kernel reads or writes (maybe a cast copy)
  Tensor original;         // the caller's tensor when `tensor` is a cast copy
  DimVector stride_bytes;  // per iteration dim, innermost first
  char* data = nullptr;
  ScalarType target_dtype = ScalarType::Undefined;  // dtype the kernel sees
  bool is_output = false;
  bool will_resize = false;
  bool is_read_write = false;  // an output that is also an input (in-place)
};

class TensorIterator;

class TensorIteratorConfig {
 public:
  TensorIteratorConfig& add_output(const Tensor& t);  // undefined Tensor -> allocated
  TensorIteratorConfig& add_input(const Tensor& t);
  TensorIteratorConfig& add_const_input(const Tensor& t) { return add_input(t); }

  TensorIteratorConfig& check_mem_overlap(bool v) {
    check_mem_overlap_ = v;
    return *this;
  }
  TensorIteratorConfig& check_all_same_dtype(bool v) {
    check_all_same_dtype_ = v;
    return *this;
  }
  TensorIteratorConfig& check_all_same_device(bool v) {
    check_all_same_device_ = v;
    return *this;
  }
  TensorIteratorConfig& enforce_safe_casting_to_output(bool v) {
    enforce_safe_casting_to_output_ = v;
    return *this;
  }
  TensorIteratorConfig& promote_inputs_to_common_dtype(bool v) {
    promote_inputs_to_common_dtype_ = v;
    if (v) check_all_same_dtype_ = false;
    return *this;
  }
  TensorIteratorConfig& promote_integer_inputs_to_float(bool v) {
    promote_integer_inputs_to_float_ = v;
    return *this;
  }
  TensorIteratorConfig& cast_common_dtype_to_outputs(bool v) {
    cast_common_dtype_to_outputs_ = v;
    if (v) check_all_same_dtype_ = false;
    return *this;
  }
  TensorIteratorConfig& allow_cpu_scalars(bool v) {
    allow_cpu_scalars_ = v;
    return *this;
  }
  TensorIteratorConfig& resize_outputs(bool v) {
    resize_outputs_ = v;
    return *this;
  }
  TensorIteratorConfig& is_reduction(bool v) {
    is_reduction_ = v;
    return *this;
  }
  // The outputs get this dtype (and device), whatever the inputs are.
  TensorIteratorConfig& declare_static_dtype_and_device(ScalarType t, Device d) {
    static_dtype_ = t;
    static_device_ = d;
    return *this;
  }
  TensorIteratorConfig& declare_static_dtype(ScalarType t) {
    static_dtype_ = t;
    return *this;
  }
  // The name used in error messages ("add: ...").
  TensorIteratorConfig& name(const char* n) {
    name_ = n;
    return *this;
  }

  TensorIterator build();

 private:
  friend class TensorIterator;
  std::vector<Tensor> tensors_;
  int num_outputs_ = 0;
  int num_inputs_ = 0;
  bool check_mem_overlap_ = true;
  bool check_all_same_dtype_ = true;
  bool check_all_same_device_ = true;
  bool enforce_safe_casting_to_output_ = false;
  bool promote_inputs_to_common_dtype_ = false;
  bool promote_integer_inputs_to_float_ = false;
  bool cast_common_dtype_to_outputs_ = false;
  bool allow_cpu_scalars_ = false;
  bool resize_outputs_ = true;
  bool is_reduction_ = false;
  std::optional<ScalarType> static_dtype_;
  std::optional<Device> static_device_;
  const char* name_ = "op";
};

class TensorIterator {
 public:
  // loop(data, strides, size0, size1): data[i] points at operand i's first element
  // of the tile; strides[i] is operand i's byte stride along dim 0 and
  // strides[ntensors + i] along dim 1; the tile is size0 x size1 elements.
  using loop2d_t = std::function<void(char** data, const int64_t* strides, int64_t size0, int64_t size1)>;

  // The common configurations (PyTorch's TensorIterator::binary_op etc.).
  static TensorIterator binary_op(const Tensor& out, const Tensor& a, const Tensor& b, const char* name = "op");
  // Integer inputs are promoted to the default float dtype (true division, atan2, ...).
  static TensorIterator binary_float_op(const Tensor& out, const Tensor& a, const Tensor& b, const char* name = "op");
  // Inputs promoted to their common dtype; the output is bool unless `out` says otherwise.
  static TensorIterator comparison_op(const Tensor& out, const Tensor& a, const Tensor& b, const char* name = "op");
  static TensorIterator unary_op(const Tensor& out, const Tensor& a, const char* name = "op");
  static TensorIterator unary_float_op(const Tensor& out, const Tensor& a, const char* name = "op");
  static TensorIterator nullary_op(const Tensor& out, const char* name = "op");

  // ---- shape ----
  int ndim() const { return static_cast<int>(shape_.size()); }
  IntArrayRef shape() const { return shape_; }
  int64_t numel() const;
  int ntensors() const { return static_cast<int>(operands_.size()); }
  int noutputs() const { return num_outputs_; }
  int ninputs() const { return ntensors() - num_outputs_; }
  // The broadcast shape in the user's dim order (before reordering/coalescing).
  IntArrayRef full_shape() const { return full_shape_; }

  // ---- operands (outputs first, then inputs) ----
  const Tensor& output(int i = 0) const;  // the caller's output (after casting back)
  const Tensor& input(int i = 0) const { return operands_[num_outputs_ + i].tensor; }
  const Tensor& tensor(int i) const { return operands_[i].tensor; }
  ScalarType dtype(int i = 0) const { return operands_[i].target_dtype; }
  ScalarType input_dtype(int i = 0) const { return operands_[num_outputs_ + i].target_dtype; }
  ScalarType common_dtype() const { return common_dtype_; }
  Device device(int i = 0) const { return operands_[i].tensor.device(); }
  DeviceType device_type(int i = 0) const { return device(i).type; }
  void* data_ptr(int i) const { return operands_[i].data; }
  IntArrayRef strides(int i) const { return operands_[i].stride_bytes; }
  bool is_scalar(int i) const;       // every stride is 0 (a broadcast single value)
  bool is_cpu_scalar(int i) const;   // a 0-dim CPU tensor (possibly among CUDA ones)
  Scalar scalar_value(int i) const;  // the value of a 0-dim operand
  // True if every operand is contiguous along the single (coalesced) dim.
  bool is_contiguous() const;
  bool is_trivial_1d() const { return ndim() == 1; }
  bool can_use_32bit_indexing() const;

  // ---- running ----
  void for_each(const loop2d_t& loop, int64_t grain_size = GRAIN_SIZE);
  void serial_for_each(const loop2d_t& loop, int64_t begin, int64_t end) const;
  // Copies outputs computed in a temporary of the common dtype back into the
  // caller's tensors. for_each does it when it finishes; a kernel that runs the
  // iteration another way (CUDA) calls it itself. Idempotent.
  void cast_outputs();

  // Splits off the outermost dims until 32-bit offsets suffice (CUDA kernels).
  std::vector<TensorIterator> with_32bit_indexing() const;

 private:
  friend class TensorIteratorConfig;
  void build(TensorIteratorConfig& config);
  void compute_shape(const TensorIteratorConfig& config);
  void compute_types(const TensorIteratorConfig& config);
  void check_devices(const TensorIteratorConfig& config);
  void check_mem_overlaps(const TensorIteratorConfig& config);
  void compute_strides();
  void reorder_dimensions();
  void allocate_or_resize_outputs();
  void coalesce_dimensions();
  void get_data_ptrs(char** ptrs, IntArrayRef counter) const;

  std::vector<OperandInfo> operands_;
  int num_outputs_ = 0;
  DimVector shape_;       // iteration shape, innermost first (after reorder/coalesce)
  DimVector full_shape_;  // broadcast shape, user order
  DimVector perm_;        // perm_[i] = user dim of iteration dim i (before coalescing)
  ScalarType common_dtype_ = ScalarType::Undefined;
  std::optional<Device> static_device_;  // where new outputs are allocated
  bool is_reduction_ = false;
  bool has_coalesced_ = false;
  bool outputs_cast_ = false;
  const char* name_ = "op";
};

// PyTorch's result_type over tensors (wrapped numbers and 0-dim tensors are weak).
ScalarType result_type(const std::vector<Tensor>& tensors);
// PyTorch's canCast: no float -> integral, no non-bool -> bool.
bool can_cast(ScalarType from, ScalarType to);
// Broadcast two shapes (RuntimeError naming both on mismatch).
DimVector infer_size(IntArrayRef a, IntArrayRef b, const char* op = "op");

}  // namespace ember::at
