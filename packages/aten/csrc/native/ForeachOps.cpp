// The _foreach_ operators (PyTorch's names, overloads and semantics): each applies its
// per-tensor operator to the tensors of its Tensor[] arguments in one call --
// _foreach_add(self, other) is [add(s, o) for s, o in zip(self, other)], and
// _foreach_add_ the same in place.
//
// Lists of dense floating tensors of one dtype, each operand laid out as self[i], run
// as one parallel vectorised loop over all their elements (the fast path, ForeachOps.h).
// Anything else (integer tensors, mixed dtypes, broadcasting, strided views, results
// of another dtype) goes tensor by tensor through the per-tensor out kernels, so it
// gets exactly their dtype rules and errors. On CUDA the fast path is one multi-tensor
// launch (cuda/Foreach.cu); the rest runs the per-tensor CUDA kernels.
#include "ForeachOps.h"

#include <ember/aten/TensorIterator.h>
#include <ember/c10/DeviceGuard.h>

#include <algorithm>
#include <optional>
#include <string>

namespace ember::at::native {

DEFINE_DISPATCH(foreach_stub);

// The per-tensor out kernels (defined with their operators): an undefined `out` is
// allocated, `out` = self writes in place.
Tensor add_out(const Tensor& self, const Tensor& other, const Scalar& alpha, const Tensor& out);
Tensor sub_out(const Tensor& self, const Tensor& other, const Scalar& alpha, const Tensor& out);
Tensor mul_out(const Tensor& self, const Tensor& other, const Tensor& out);
Tensor div_out(const Tensor& self, const Tensor& other, const std::optional<std::string>& rounding_mode,
               const Tensor& out);
Tensor addcmul_out(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value,
                   const Tensor& out);
Tensor addcdiv_out(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value,
                   const Tensor& out);
Tensor sqrt_out(const Tensor& self, const Tensor& out);
Tensor neg_out(const Tensor& self, const Tensor& out);
Tensor abs_out(const Tensor& self, const Tensor& out);
Tensor exp_out(const Tensor& self, const Tensor& out);
Tensor reciprocal_out(const Tensor& self, const Tensor& out);
Tensor sign_out(const Tensor& self, const Tensor& out);
Tensor maximum_out(const Tensor& self, const Tensor& other, const Tensor& out);
Tensor minimum_out(const Tensor& self, const Tensor& other, const Tensor& out);
Tensor clamp_min_out(const Tensor& self, const Scalar& min, const Tensor& out);
Tensor clamp_max_out(const Tensor& self, const Scalar& max, const Tensor& out);
Tensor clamp_min_tensor_out(const Tensor& self, const Tensor& min, const Tensor& out);
Tensor clamp_max_tensor_out(const Tensor& self, const Tensor& max, const Tensor& out);
Tensor lerp_scalar_out(const Tensor& self, const Tensor& end, const Scalar& weight, const Tensor& out);
Tensor lerp_tensor_out(const Tensor& self, const Tensor& end, const Tensor& weight, const Tensor& out);
Tensor pow_out(const Tensor& self, const Tensor& exponent, const Tensor& out);
Tensor linalg_vector_norm_out(const Tensor& self, const Scalar& ord, const std::optional<DimVector>& dim, bool keepdim,
                              std::optional<ScalarType> dtype, const Tensor& out);

bool same_layout(const Tensor& a, const Tensor& b) {
  if (a.dim() != b.dim()) return false;
  for (int64_t d = 0; d < a.dim(); ++d) {
    if (a.size(d) != b.size(d) || (a.size(d) > 1 && a.stride(d) != b.stride(d))) return false;
  }
  return true;
}

namespace {

using ScalarList = std::vector<Scalar>;
using Lists = std::initializer_list<const TensorList*>;

// ---- argument checks (PyTorch's ForeachUtils messages) --------------------------------------

void check_nonempty(const TensorList& self) {
  EMBER_CHECK(!self.empty(), "Tensor list must have at least one tensor.");
}

void check_lengths(const TensorList& self, const TensorList& other) {
  check_nonempty(self);
  EMBER_CHECK(self.size() == other.size(), "Tensor lists must have the same number of tensors, got ", self.size(),
              " and ", other.size());
}

void check_scalars(const TensorList& self, const ScalarList& scalars) {
  check_nonempty(self);
  EMBER_CHECK(self.size() == scalars.size(), "Tensor list must have same number of elements as scalar list.");
}

// The .Tensor overloads of the binary ops take a 0-dim tensor where .Scalar takes a number.
void check_scalar_tensor(const Tensor& t) {
  EMBER_CHECK(t.dim() == 0 && t.numel() == 1, "scalar tensor expected to be 0 dim but it has ", t.dim(),
              " dimensions and ", t.numel(), " elements.");
}

// addcmul/addcdiv.Tensor: a 1-d tensor holding one scalar per tensor of the list.
ScalarList scalars_of(const Tensor& scalars, size_t n) {
  EMBER_CHECK(scalars.dim() == 1, "Expected packed scalar Tensor to be of dimension 1. Got ", scalars.dim(),
              " instead.");
  EMBER_CHECK(scalars.numel() == static_cast<int64_t>(n), "Expected length of scalars to match input of length ", n,
              " but got ", scalars.numel(), " instead.");
  Tensor host = scalars.to(ScalarType::Double).contiguous();
  if (!host.is_cpu()) host = host.to(Device(DeviceType::CPU));
  const double* p = host.data_ptr<double>();
  return ScalarList(p, p + n);
}

std::vector<double> as_doubles(const ScalarList& s, double scale = 1.0) {
  std::vector<double> out(s.size());
  for (size_t i = 0; i < s.size(); ++i) out[i] = scale * s[i].toDouble();
  return out;
}

// ---- the fast path --------------------------------------------------------------------------

// All tensors of one floating dtype on one device (the CPU, or a CUDA device when the
// stub has a CUDA kernel), self[i] dense, the other operands of tensor i laid out as
// self[i]; in place, no tensor written twice (two threads would race).
bool can_use_fast_path(const TensorList& self, Lists others, bool inplace) {
  const ScalarType dt = self[0].dtype();
  if (!c10::isFloatingType(dt)) return false;
  const Device dev = self[0].device();
  if (!dev.is_cpu() && !(dev.is_cuda() && foreach_stub.has_cuda_kernel())) return false;
  for (size_t i = 0; i < self.size(); ++i) {
    const Tensor& t = self[i];
    if (t.dtype() != dt || t.device() != dev || !t.is_non_overlapping_and_dense()) return false;
    for (const TensorList* l : others) {
      const Tensor& o = (*l)[i];
      if (o.dtype() != dt || o.device() != dev || !same_layout(t, o)) return false;
    }
  }
  if (inplace && self.size() > 1) {
    std::vector<const c10::StorageImpl*> storages;
    storages.reserve(self.size());
    for (const Tensor& t : self) storages.push_back(t.storage());
    std::sort(storages.begin(), storages.end());
    if (std::adjacent_find(storages.begin(), storages.end()) != storages.end()) return false;
  }
  return true;
}

// outs[i] = op(ins[0][i], ins[1][i], ..., scalars[i]) for every i, in one parallel loop.
void launch(ForeachOp op, const TensorList& outs, const std::vector<const TensorList*>& ins,
            std::vector<double> scalars) {
  ForeachArgs args;
  const size_t n = outs.size();
  args.ptrs.resize(n);
  args.offsets.assign(n + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    std::array<char*, 4>& p = args.ptrs[i];
    p.fill(nullptr);
    p[0] = static_cast<char*>(outs[i].data_ptr());
    size_t k = 1;
    for (const TensorList* l : ins) p[k++] = static_cast<char*>((*l)[i].data_ptr());
    args.offsets[i + 1] = args.offsets[i] + outs[i].numel();
  }
  args.scalars = std::move(scalars);
  args.scalars.resize(n, 0.0);
  c10::DeviceGuard guard(outs[0].device());
  foreach_stub(outs[0].device().type, op, outs[0].dtype(), args);
}

// The driver of every op: the fast path when it applies (and `fast` allows it), else
// slow(i, out) for each tensor, out being self[i] in place and undefined otherwise.
template <typename Slow>
TensorList foreach_run(ForeachOp op, const TensorList& self, Lists others, bool fast, std::vector<double> scalars,
                       bool inplace, const Slow& slow) {
  if (fast && can_use_fast_path(self, others, inplace)) {
    TensorList outs;
    if (inplace) {
      outs = self;
    } else {
      outs.reserve(self.size());
      for (const Tensor& t : self) outs.push_back(empty_like(t));
    }
    std::vector<const TensorList*> ins{&self};
    ins.insert(ins.end(), others.begin(), others.end());
    launch(op, outs, ins, std::move(scalars));
    return outs;
  }
  TensorList outs;
  outs.reserve(self.size());
  for (size_t i = 0; i < self.size(); ++i) outs.push_back(slow(i, inplace ? self[i] : Tensor()));
  return outs;
}

// ---- families -------------------------------------------------------------------------------

// f(self[i])
template <typename Out>
TensorList unary(ForeachOp op, const TensorList& self, bool inplace, Out out_kernel) {
  check_nonempty(self);
  return foreach_run(op, self, {}, true, {}, inplace,
                     [&](size_t i, const Tensor& out) { return out_kernel(self[i], out); });
}

// f(self[i], s_i) with a number s_i; slow(x, s, out).
template <typename Slow>
TensorList with_scalars(ForeachOp op, const TensorList& self, const ScalarList& s, double scale, bool inplace,
                        const Slow& slow) {
  return foreach_run(op, self, {}, true, as_doubles(s, scale), inplace,
                     [&](size_t i, const Tensor& out) { return slow(self[i], s[i], out); });
}

// f(self[i], other) with a 0-dim tensor `other`; its value, times scale, is the fast path's s.
template <typename Slow>
TensorList with_scalar_tensor(ForeachOp op, const TensorList& self, const Tensor& other, double scale, bool inplace,
                              const Slow& slow) {
  check_nonempty(self);
  check_scalar_tensor(other);
  // the fast path keeps self's dtype; a 0-dim self[i] promotes with a 0-dim `other` of
  // another floating dtype (both are dimensionless), so those go tensor by tensor
  bool fast = other.is_cpu() && c10::isFloatingType(self[0].dtype());
  if (fast && other.dtype() != self[0].dtype() && c10::isFloatingType(other.dtype())) {
    for (const Tensor& t : self) fast = fast && (t.dim() > 0 || result_type({t, other}) == t.dtype());
  }
  const double s = fast ? scale * other.item().toDouble() : 0.0;
  return foreach_run(op, self, {}, fast, std::vector<double>(self.size(), s), inplace,
                     [&](size_t i, const Tensor& out) { return slow(self[i], other, out); });
}

// f(self[i], other[i]) (s = scale for every tensor); slow(x, y, out).
template <typename Slow>
TensorList with_list(ForeachOp op, const TensorList& self, const TensorList& other, double scale, bool inplace,
                     const Slow& slow) {
  check_lengths(self, other);
  return foreach_run(op, self, {&other}, true, std::vector<double>(self.size(), scale), inplace,
                     [&](size_t i, const Tensor& out) { return slow(self[i], other[i], out); });
}

ScalarList repeat(const Scalar& s, size_t n) { return ScalarList(n, s); }

Tensor wrap(const Scalar& s) { return wrapped_scalar_tensor(s); }

// ---- the ops, each with an `inplace` flag -----------------------------------------------------

TensorList add_scalars(const TensorList& self, const ScalarList& s, bool inplace) {
  return with_scalars(
      ForeachOp::AddScalar, self, s, 1.0, inplace,
      [](const Tensor& x, const Scalar& v, const Tensor& o) { return add_out(x, wrap(v), Scalar(1), o); });
}
TensorList sub_scalars(const TensorList& self, const ScalarList& s, bool inplace) {
  // x - s is x + (-s) exactly (IEEE subtraction is the addition of the negation)
  return with_scalars(
      ForeachOp::AddScalar, self, s, -1.0, inplace,
      [](const Tensor& x, const Scalar& v, const Tensor& o) { return sub_out(x, wrap(v), Scalar(1), o); });
}
TensorList mul_scalars(const TensorList& self, const ScalarList& s, bool inplace) {
  return with_scalars(ForeachOp::MulScalar, self, s, 1.0, inplace,
                      [](const Tensor& x, const Scalar& v, const Tensor& o) { return mul_out(x, wrap(v), o); });
}
TensorList div_scalars(const TensorList& self, const ScalarList& s, bool inplace) {
  return with_scalars(
      ForeachOp::DivScalar, self, s, 1.0, inplace,
      [](const Tensor& x, const Scalar& v, const Tensor& o) { return div_out(x, wrap(v), std::nullopt, o); });
}
// maximum/minimum with a number are clamp_min/clamp_max, as in PyTorch
TensorList clamp_min_scalars(const TensorList& self, const ScalarList& s, bool inplace) {
  return with_scalars(ForeachOp::MaxScalar, self, s, 1.0, inplace,
                      [](const Tensor& x, const Scalar& v, const Tensor& o) { return clamp_min_out(x, v, o); });
}
TensorList clamp_max_scalars(const TensorList& self, const ScalarList& s, bool inplace) {
  return with_scalars(ForeachOp::MinScalar, self, s, 1.0, inplace,
                      [](const Tensor& x, const Scalar& v, const Tensor& o) { return clamp_max_out(x, v, o); });
}
TensorList pow_scalars(const TensorList& self, const ScalarList& s, bool inplace) {
  return with_scalars(ForeachOp::PowScalar, self, s, 1.0, inplace,
                      [](const Tensor& x, const Scalar& v, const Tensor& o) { return pow_out(x, wrap(v), o); });
}

TensorList add_list(const TensorList& self, const TensorList& other, const Scalar& alpha, bool inplace) {
  return with_list(ForeachOp::AddList, self, other, alpha.toDouble(), inplace,
                   [&](const Tensor& x, const Tensor& y, const Tensor& o) { return add_out(x, y, alpha, o); });
}
TensorList sub_list(const TensorList& self, const TensorList& other, const Scalar& alpha, bool inplace) {
  return with_list(ForeachOp::AddList, self, other, -alpha.toDouble(), inplace,
                   [&](const Tensor& x, const Tensor& y, const Tensor& o) { return sub_out(x, y, alpha, o); });
}
TensorList mul_list(const TensorList& self, const TensorList& other, bool inplace) {
  return with_list(ForeachOp::MulList, self, other, 1.0, inplace,
                   [](const Tensor& x, const Tensor& y, const Tensor& o) { return mul_out(x, y, o); });
}
TensorList div_list(const TensorList& self, const TensorList& other, bool inplace) {
  return with_list(ForeachOp::DivList, self, other, 1.0, inplace,
                   [](const Tensor& x, const Tensor& y, const Tensor& o) { return div_out(x, y, std::nullopt, o); });
}
TensorList maximum_list(const TensorList& self, const TensorList& other, bool inplace) {
  return with_list(ForeachOp::MaxList, self, other, 1.0, inplace,
                   [](const Tensor& x, const Tensor& y, const Tensor& o) { return maximum_out(x, y, o); });
}
TensorList minimum_list(const TensorList& self, const TensorList& other, bool inplace) {
  return with_list(ForeachOp::MinList, self, other, 1.0, inplace,
                   [](const Tensor& x, const Tensor& y, const Tensor& o) { return minimum_out(x, y, o); });
}
TensorList clamp_min_list(const TensorList& self, const TensorList& other, bool inplace) {
  return with_list(ForeachOp::MaxList, self, other, 1.0, inplace,
                   [](const Tensor& x, const Tensor& y, const Tensor& o) { return clamp_min_tensor_out(x, y, o); });
}
TensorList clamp_max_list(const TensorList& self, const TensorList& other, bool inplace) {
  return with_list(ForeachOp::MinList, self, other, 1.0, inplace,
                   [](const Tensor& x, const Tensor& y, const Tensor& o) { return clamp_max_tensor_out(x, y, o); });
}
TensorList pow_list(const TensorList& self, const TensorList& exponent, bool inplace) {
  return with_list(ForeachOp::PowList, self, exponent, 1.0, inplace,
                   [](const Tensor& x, const Tensor& y, const Tensor& o) { return pow_out(x, y, o); });
}

TensorList add_tensor(const TensorList& self, const Tensor& other, const Scalar& alpha, bool inplace) {
  return with_scalar_tensor(ForeachOp::AddScalar, self, other, alpha.toDouble(), inplace,
                            [&](const Tensor& x, const Tensor& y, const Tensor& o) { return add_out(x, y, alpha, o); });
}
TensorList mul_tensor(const TensorList& self, const Tensor& other, bool inplace) {
  return with_scalar_tensor(ForeachOp::MulScalar, self, other, 1.0, inplace,
                            [](const Tensor& x, const Tensor& y, const Tensor& o) { return mul_out(x, y, o); });
}
TensorList div_tensor(const TensorList& self, const Tensor& other, bool inplace) {
  return with_scalar_tensor(
      ForeachOp::DivScalar, self, other, 1.0, inplace,
      [](const Tensor& x, const Tensor& y, const Tensor& o) { return div_out(x, y, std::nullopt, o); });
}

// addcmul / addcdiv: self[i] + s_i * tensor1[i] (* or /) tensor2[i]
template <typename Out>
TensorList pointwise(ForeachOp op, const TensorList& self, const TensorList& t1, const TensorList& t2,
                     const ScalarList& s, bool inplace, Out out_kernel) {
  check_lengths(self, t1);
  check_lengths(self, t2);
  check_scalars(self, s);
  return foreach_run(op, self, {&t1, &t2}, true, as_doubles(s), inplace,
                     [&](size_t i, const Tensor& out) { return out_kernel(self[i], t1[i], t2[i], s[i], out); });
}
TensorList addcmul(const TensorList& self, const TensorList& t1, const TensorList& t2, const ScalarList& s,
                   bool inplace) {
  return pointwise(ForeachOp::Addcmul, self, t1, t2, s, inplace, addcmul_out);
}
TensorList addcdiv(const TensorList& self, const TensorList& t1, const TensorList& t2, const ScalarList& s,
                   bool inplace) {
  return pointwise(ForeachOp::Addcdiv, self, t1, t2, s, inplace, addcdiv_out);
}

TensorList lerp_scalars(const TensorList& self, const TensorList& end, const ScalarList& w, bool inplace) {
  check_lengths(self, end);
  check_scalars(self, w);
  return foreach_run(ForeachOp::LerpScalar, self, {&end}, true, as_doubles(w), inplace,
                     [&](size_t i, const Tensor& out) { return lerp_scalar_out(self[i], end[i], w[i], out); });
}
TensorList lerp_list(const TensorList& self, const TensorList& end, const TensorList& w, bool inplace) {
  check_lengths(self, end);
  check_lengths(self, w);
  return foreach_run(ForeachOp::LerpList, self, {&end, &w}, true, {}, inplace,
                     [&](size_t i, const Tensor& out) { return lerp_tensor_out(self[i], end[i], w[i], out); });
}

}  // namespace

// ---- kernels (native_functions.yaml) ----------------------------------------------------------

std::vector<Tensor> foreach_add_scalar_cpu(const std::vector<Tensor>& self, const Scalar& scalar) {
  check_nonempty(self);
  return add_scalars(self, repeat(scalar, self.size()), false);
}
void foreach_add_scalar_cpu_(const std::vector<Tensor>& self, const Scalar& scalar) {
  check_nonempty(self);
  add_scalars(self, repeat(scalar, self.size()), true);
}
std::vector<Tensor> foreach_add_scalarlist_cpu(const std::vector<Tensor>& self, const std::vector<Scalar>& scalars) {
  check_scalars(self, scalars);
  return add_scalars(self, scalars, false);
}
void foreach_add_scalarlist_cpu_(const std::vector<Tensor>& self, const std::vector<Scalar>& scalars) {
  check_scalars(self, scalars);
  add_scalars(self, scalars, true);
}
std::vector<Tensor> foreach_add_list_cpu(const std::vector<Tensor>& self, const std::vector<Tensor>& other,
                                         const Scalar& alpha) {
  return add_list(self, other, alpha, false);
}
void foreach_add_list_cpu_(const std::vector<Tensor>& self, const std::vector<Tensor>& other, const Scalar& alpha) {
  add_list(self, other, alpha, true);
}
std::vector<Tensor> foreach_add_tensor_cpu(const std::vector<Tensor>& self, const Tensor& other, const Scalar& alpha) {
  return add_tensor(self, other, alpha, false);
}
void foreach_add_tensor_cpu_(const std::vector<Tensor>& self, const Tensor& other, const Scalar& alpha) {
  add_tensor(self, other, alpha, true);
}

std::vector<Tensor> foreach_sub_scalar_cpu(const std::vector<Tensor>& self, const Scalar& scalar) {
  check_nonempty(self);
  return sub_scalars(self, repeat(scalar, self.size()), false);
}
void foreach_sub_scalar_cpu_(const std::vector<Tensor>& self, const Scalar& scalar) {
  check_nonempty(self);
  sub_scalars(self, repeat(scalar, self.size()), true);
}
std::vector<Tensor> foreach_sub_scalarlist_cpu(const std::vector<Tensor>& self, const std::vector<Scalar>& scalars) {
  check_scalars(self, scalars);
  return sub_scalars(self, scalars, false);
}
void foreach_sub_scalarlist_cpu_(const std::vector<Tensor>& self, const std::vector<Scalar>& scalars) {
  check_scalars(self, scalars);
  sub_scalars(self, scalars, true);
}
std::vector<Tensor> foreach_sub_list_cpu(const std::vector<Tensor>& self, const std::vector<Tensor>& other,
                                         const Scalar& alpha) {
  return sub_list(self, other, alpha, false);
}
void foreach_sub_list_cpu_(const std::vector<Tensor>& self, const std::vector<Tensor>& other, const Scalar& alpha) {
  sub_list(self, other, alpha, true);
}

std::vector<Tensor> foreach_mul_scalar_cpu(const std::vector<Tensor>& self, const Scalar& scalar) {
  check_nonempty(self);
  return mul_scalars(self, repeat(scalar, self.size()), false);
}
void foreach_mul_scalar_cpu_(const std::vector<Tensor>& self, const Scalar& scalar) {
  check_nonempty(self);
  mul_scalars(self, repeat(scalar, self.size()), true);
}
std::vector<Tensor> foreach_mul_scalarlist_cpu(const std::vector<Tensor>& self, const std::vector<Scalar>& scalars) {
  check_scalars(self, scalars);
  return mul_scalars(self, scalars, false);
}
void foreach_mul_scalarlist_cpu_(const std::vector<Tensor>& self, const std::vector<Scalar>& scalars) {
  check_scalars(self, scalars);
  mul_scalars(self, scalars, true);
}
std::vector<Tensor> foreach_mul_list_cpu(const std::vector<Tensor>& self, const std::vector<Tensor>& other) {
  return mul_list(self, other, false);
}
void foreach_mul_list_cpu_(const std::vector<Tensor>& self, const std::vector<Tensor>& other) {
  mul_list(self, other, true);
}
std::vector<Tensor> foreach_mul_tensor_cpu(const std::vector<Tensor>& self, const Tensor& other) {
  return mul_tensor(self, other, false);
}
void foreach_mul_tensor_cpu_(const std::vector<Tensor>& self, const Tensor& other) { mul_tensor(self, other, true); }

std::vector<Tensor> foreach_div_scalar_cpu(const std::vector<Tensor>& self, const Scalar& scalar) {
  check_nonempty(self);
  return div_scalars(self, repeat(scalar, self.size()), false);
}
void foreach_div_scalar_cpu_(const std::vector<Tensor>& self, const Scalar& scalar) {
  check_nonempty(self);
  div_scalars(self, repeat(scalar, self.size()), true);
}
std::vector<Tensor> foreach_div_scalarlist_cpu(const std::vector<Tensor>& self, const std::vector<Scalar>& scalars) {
  check_scalars(self, scalars);
  return div_scalars(self, scalars, false);
}
void foreach_div_scalarlist_cpu_(const std::vector<Tensor>& self, const std::vector<Scalar>& scalars) {
  check_scalars(self, scalars);
  div_scalars(self, scalars, true);
}
std::vector<Tensor> foreach_div_list_cpu(const std::vector<Tensor>& self, const std::vector<Tensor>& other) {
  return div_list(self, other, false);
}
void foreach_div_list_cpu_(const std::vector<Tensor>& self, const std::vector<Tensor>& other) {
  div_list(self, other, true);
}
std::vector<Tensor> foreach_div_tensor_cpu(const std::vector<Tensor>& self, const Tensor& other) {
  return div_tensor(self, other, false);
}
void foreach_div_tensor_cpu_(const std::vector<Tensor>& self, const Tensor& other) { div_tensor(self, other, true); }

std::vector<Tensor> foreach_addcmul_scalar_cpu(const std::vector<Tensor>& self, const std::vector<Tensor>& tensor1,
                                               const std::vector<Tensor>& tensor2, const Scalar& value) {
  return addcmul(self, tensor1, tensor2, repeat(value, self.size()), false);
}
void foreach_addcmul_scalar_cpu_(const std::vector<Tensor>& self, const std::vector<Tensor>& tensor1,
                                 const std::vector<Tensor>& tensor2, const Scalar& value) {
  addcmul(self, tensor1, tensor2, repeat(value, self.size()), true);
}
std::vector<Tensor> foreach_addcmul_scalarlist_cpu(const std::vector<Tensor>& self, const std::vector<Tensor>& tensor1,
                                                   const std::vector<Tensor>& tensor2,
                                                   const std::vector<Scalar>& scalars) {
  return addcmul(self, tensor1, tensor2, scalars, false);
}
void foreach_addcmul_scalarlist_cpu_(const std::vector<Tensor>& self, const std::vector<Tensor>& tensor1,
                                     const std::vector<Tensor>& tensor2, const std::vector<Scalar>& scalars) {
  addcmul(self, tensor1, tensor2, scalars, true);
}
std::vector<Tensor> foreach_addcmul_tensor_cpu(const std::vector<Tensor>& self, const std::vector<Tensor>& tensor1,
                                               const std::vector<Tensor>& tensor2, const Tensor& scalars) {
  return addcmul(self, tensor1, tensor2, scalars_of(scalars, self.size()), false);
}
void foreach_addcmul_tensor_cpu_(const std::vector<Tensor>& self, const std::vector<Tensor>& tensor1,
                                 const std::vector<Tensor>& tensor2, const Tensor& scalars) {
  addcmul(self, tensor1, tensor2, scalars_of(scalars, self.size()), true);
}

std::vector<Tensor> foreach_addcdiv_scalar_cpu(const std::vector<Tensor>& self, const std::vector<Tensor>& tensor1,
                                               const std::vector<Tensor>& tensor2, const Scalar& value) {
  return addcdiv(self, tensor1, tensor2, repeat(value, self.size()), false);
}
void foreach_addcdiv_scalar_cpu_(const std::vector<Tensor>& self, const std::vector<Tensor>& tensor1,
                                 const std::vector<Tensor>& tensor2, const Scalar& value) {
  addcdiv(self, tensor1, tensor2, repeat(value, self.size()), true);
}
std::vector<Tensor> foreach_addcdiv_scalarlist_cpu(const std::vector<Tensor>& self, const std::vector<Tensor>& tensor1,
                                                   const std::vector<Tensor>& tensor2,
                                                   const std::vector<Scalar>& scalars) {
  return addcdiv(self, tensor1, tensor2, scalars, false);
}
void foreach_addcdiv_scalarlist_cpu_(const std::vector<Tensor>& self, const std::vector<Tensor>& tensor1,
                                     const std::vector<Tensor>& tensor2, const std::vector<Scalar>& scalars) {
  addcdiv(self, tensor1, tensor2, scalars, true);
}
std::vector<Tensor> foreach_addcdiv_tensor_cpu(const std::vector<Tensor>& self, const std::vector<Tensor>& tensor1,
                                               const std::vector<Tensor>& tensor2, const Tensor& scalars) {
  return addcdiv(self, tensor1, tensor2, scalars_of(scalars, self.size()), false);
}
void foreach_addcdiv_tensor_cpu_(const std::vector<Tensor>& self, const std::vector<Tensor>& tensor1,
                                 const std::vector<Tensor>& tensor2, const Tensor& scalars) {
  addcdiv(self, tensor1, tensor2, scalars_of(scalars, self.size()), true);
}

std::vector<Tensor> foreach_sqrt_cpu(const std::vector<Tensor>& self) {
  return unary(ForeachOp::Sqrt, self, false, sqrt_out);
}
void foreach_sqrt_cpu_(const std::vector<Tensor>& self) { unary(ForeachOp::Sqrt, self, true, sqrt_out); }
std::vector<Tensor> foreach_neg_cpu(const std::vector<Tensor>& self) {
  return unary(ForeachOp::Neg, self, false, neg_out);
}
void foreach_neg_cpu_(const std::vector<Tensor>& self) { unary(ForeachOp::Neg, self, true, neg_out); }
std::vector<Tensor> foreach_abs_cpu(const std::vector<Tensor>& self) {
  return unary(ForeachOp::Abs, self, false, abs_out);
}
void foreach_abs_cpu_(const std::vector<Tensor>& self) { unary(ForeachOp::Abs, self, true, abs_out); }
std::vector<Tensor> foreach_exp_cpu(const std::vector<Tensor>& self) {
  return unary(ForeachOp::Exp, self, false, exp_out);
}
void foreach_exp_cpu_(const std::vector<Tensor>& self) { unary(ForeachOp::Exp, self, true, exp_out); }
std::vector<Tensor> foreach_reciprocal_cpu(const std::vector<Tensor>& self) {
  return unary(ForeachOp::Reciprocal, self, false, reciprocal_out);
}
void foreach_reciprocal_cpu_(const std::vector<Tensor>& self) {
  unary(ForeachOp::Reciprocal, self, true, reciprocal_out);
}
std::vector<Tensor> foreach_sign_cpu(const std::vector<Tensor>& self) {
  return unary(ForeachOp::Sign, self, false, sign_out);
}
void foreach_sign_cpu_(const std::vector<Tensor>& self) { unary(ForeachOp::Sign, self, true, sign_out); }

std::vector<Tensor> foreach_maximum_scalar_cpu(const std::vector<Tensor>& self, const Scalar& scalar) {
  check_nonempty(self);
  return clamp_min_scalars(self, repeat(scalar, self.size()), false);
}
void foreach_maximum_scalar_cpu_(const std::vector<Tensor>& self, const Scalar& scalar) {
  check_nonempty(self);
  clamp_min_scalars(self, repeat(scalar, self.size()), true);
}
std::vector<Tensor> foreach_maximum_scalarlist_cpu(const std::vector<Tensor>& self,
                                                   const std::vector<Scalar>& scalars) {
  check_scalars(self, scalars);
  return clamp_min_scalars(self, scalars, false);
}
void foreach_maximum_scalarlist_cpu_(const std::vector<Tensor>& self, const std::vector<Scalar>& scalars) {
  check_scalars(self, scalars);
  clamp_min_scalars(self, scalars, true);
}
std::vector<Tensor> foreach_maximum_list_cpu(const std::vector<Tensor>& self, const std::vector<Tensor>& other) {
  return maximum_list(self, other, false);
}
void foreach_maximum_list_cpu_(const std::vector<Tensor>& self, const std::vector<Tensor>& other) {
  maximum_list(self, other, true);
}

std::vector<Tensor> foreach_minimum_scalar_cpu(const std::vector<Tensor>& self, const Scalar& scalar) {
  check_nonempty(self);
  return clamp_max_scalars(self, repeat(scalar, self.size()), false);
}
void foreach_minimum_scalar_cpu_(const std::vector<Tensor>& self, const Scalar& scalar) {
  check_nonempty(self);
  clamp_max_scalars(self, repeat(scalar, self.size()), true);
}
std::vector<Tensor> foreach_minimum_scalarlist_cpu(const std::vector<Tensor>& self,
                                                   const std::vector<Scalar>& scalars) {
  check_scalars(self, scalars);
  return clamp_max_scalars(self, scalars, false);
}
void foreach_minimum_scalarlist_cpu_(const std::vector<Tensor>& self, const std::vector<Scalar>& scalars) {
  check_scalars(self, scalars);
  clamp_max_scalars(self, scalars, true);
}
std::vector<Tensor> foreach_minimum_list_cpu(const std::vector<Tensor>& self, const std::vector<Tensor>& other) {
  return minimum_list(self, other, false);
}
void foreach_minimum_list_cpu_(const std::vector<Tensor>& self, const std::vector<Tensor>& other) {
  minimum_list(self, other, true);
}

std::vector<Tensor> foreach_clamp_min_scalar_cpu(const std::vector<Tensor>& self, const Scalar& scalar) {
  check_nonempty(self);
  return clamp_min_scalars(self, repeat(scalar, self.size()), false);
}
void foreach_clamp_min_scalar_cpu_(const std::vector<Tensor>& self, const Scalar& scalar) {
  check_nonempty(self);
  clamp_min_scalars(self, repeat(scalar, self.size()), true);
}
std::vector<Tensor> foreach_clamp_min_scalarlist_cpu(const std::vector<Tensor>& self,
                                                     const std::vector<Scalar>& scalars) {
  check_scalars(self, scalars);
  return clamp_min_scalars(self, scalars, false);
}
void foreach_clamp_min_scalarlist_cpu_(const std::vector<Tensor>& self, const std::vector<Scalar>& scalars) {
  check_scalars(self, scalars);
  clamp_min_scalars(self, scalars, true);
}
std::vector<Tensor> foreach_clamp_min_list_cpu(const std::vector<Tensor>& self, const std::vector<Tensor>& other) {
  return clamp_min_list(self, other, false);
}
void foreach_clamp_min_list_cpu_(const std::vector<Tensor>& self, const std::vector<Tensor>& other) {
  clamp_min_list(self, other, true);
}

std::vector<Tensor> foreach_clamp_max_scalar_cpu(const std::vector<Tensor>& self, const Scalar& scalar) {
  check_nonempty(self);
  return clamp_max_scalars(self, repeat(scalar, self.size()), false);
}
void foreach_clamp_max_scalar_cpu_(const std::vector<Tensor>& self, const Scalar& scalar) {
  check_nonempty(self);
  clamp_max_scalars(self, repeat(scalar, self.size()), true);
}
std::vector<Tensor> foreach_clamp_max_scalarlist_cpu(const std::vector<Tensor>& self,
                                                     const std::vector<Scalar>& scalars) {
  check_scalars(self, scalars);
  return clamp_max_scalars(self, scalars, false);
}
void foreach_clamp_max_scalarlist_cpu_(const std::vector<Tensor>& self, const std::vector<Scalar>& scalars) {
  check_scalars(self, scalars);
  clamp_max_scalars(self, scalars, true);
}
std::vector<Tensor> foreach_clamp_max_list_cpu(const std::vector<Tensor>& self, const std::vector<Tensor>& other) {
  return clamp_max_list(self, other, false);
}
void foreach_clamp_max_list_cpu_(const std::vector<Tensor>& self, const std::vector<Tensor>& other) {
  clamp_max_list(self, other, true);
}

std::vector<Tensor> foreach_lerp_list_cpu(const std::vector<Tensor>& self, const std::vector<Tensor>& tensors1,
                                          const std::vector<Tensor>& weights) {
  return lerp_list(self, tensors1, weights, false);
}
void foreach_lerp_list_cpu_(const std::vector<Tensor>& self, const std::vector<Tensor>& tensors1,
                            const std::vector<Tensor>& weights) {
  lerp_list(self, tensors1, weights, true);
}
std::vector<Tensor> foreach_lerp_scalar_cpu(const std::vector<Tensor>& self, const std::vector<Tensor>& tensors1,
                                            const Scalar& weight) {
  return lerp_scalars(self, tensors1, repeat(weight, self.size()), false);
}
void foreach_lerp_scalar_cpu_(const std::vector<Tensor>& self, const std::vector<Tensor>& tensors1,
                              const Scalar& weight) {
  lerp_scalars(self, tensors1, repeat(weight, self.size()), true);
}
std::vector<Tensor> foreach_lerp_scalarlist_cpu(const std::vector<Tensor>& self, const std::vector<Tensor>& tensors1,
                                                const std::vector<Scalar>& weight) {
  return lerp_scalars(self, tensors1, weight, false);
}
void foreach_lerp_scalarlist_cpu_(const std::vector<Tensor>& self, const std::vector<Tensor>& tensors1,
                                  const std::vector<Scalar>& weight) {
  lerp_scalars(self, tensors1, weight, true);
}

std::vector<Tensor> foreach_pow_list_cpu(const std::vector<Tensor>& self, const std::vector<Tensor>& exponent) {
  return pow_list(self, exponent, false);
}
void foreach_pow_list_cpu_(const std::vector<Tensor>& self, const std::vector<Tensor>& exponent) {
  pow_list(self, exponent, true);
}
std::vector<Tensor> foreach_pow_scalar_cpu(const std::vector<Tensor>& self, const Scalar& exponent) {
  check_nonempty(self);
  return pow_scalars(self, repeat(exponent, self.size()), false);
}
void foreach_pow_scalar_cpu_(const std::vector<Tensor>& self, const Scalar& exponent) {
  check_nonempty(self);
  pow_scalars(self, repeat(exponent, self.size()), true);
}
std::vector<Tensor> foreach_pow_scalarlist_cpu(const std::vector<Tensor>& self, const std::vector<Scalar>& exponent) {
  check_scalars(self, exponent);
  return pow_scalars(self, exponent, false);
}
void foreach_pow_scalarlist_cpu_(const std::vector<Tensor>& self, const std::vector<Scalar>& exponent) {
  check_scalars(self, exponent);
  pow_scalars(self, exponent, true);
}
// s ** exponent[i]
std::vector<Tensor> foreach_scalar_pow_list_cpu(const Scalar& self, const std::vector<Tensor>& exponent) {
  check_nonempty(exponent);
  return foreach_run(ForeachOp::ScalarPow, exponent, {}, true, std::vector<double>(exponent.size(), self.toDouble()),
                     false, [&](size_t i, const Tensor& out) { return pow_out(wrap(self), exponent[i], out); });
}

void foreach_zero_cpu_(const std::vector<Tensor>& self) {
  check_nonempty(self);
  foreach_run(ForeachOp::Zero, self, {}, true, {}, true, [&](size_t i, const Tensor&) {
    self[i].zero_();
    return self[i];
  });
}

void foreach_copy_cpu_(const std::vector<Tensor>& self, const std::vector<Tensor>& src, bool non_blocking) {
  (void)non_blocking;
  check_lengths(self, src);
  foreach_run(ForeachOp::Copy, self, {&src}, true, {}, true, [&](size_t i, const Tensor&) {
    self[i].copy_(src[i]);
    return self[i];
  });
}

// One 0-dim norm per tensor: linalg.vector_norm of each (in `dtype` when given), each a
// parallel reduction of its own.
std::vector<Tensor> foreach_norm_cpu(const std::vector<Tensor>& self, const Scalar& ord,
                                     std::optional<ScalarType> dtype) {
  check_nonempty(self);
  std::vector<Tensor> out;
  out.reserve(self.size());
  for (const Tensor& t : self) out.push_back(linalg_vector_norm_out(t, ord, std::nullopt, false, dtype, Tensor()));
  return out;
}

}  // namespace ember::at::native
