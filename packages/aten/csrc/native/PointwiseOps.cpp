// Ternary pointwise operators: lerp, addcmul, addcdiv, clamp (and clamp_min /
// clamp_max; clip is an alias), where. One out kernel each; the functional and
// in-place variants delegate to it (native_functions.yaml).
#include "PointwiseOps.h"

#include <cmath>
#include <limits>
#include <string>

#include "BinaryOps.h"

namespace ember::at::native {

DEFINE_DISPATCH(lerp_scalar_stub);
DEFINE_DISPATCH(lerp_tensor_stub);
DEFINE_DISPATCH(addcmul_stub);
DEFINE_DISPATCH(addcdiv_stub);
DEFINE_DISPATCH(clamp_scalar_stub);
DEFINE_DISPATCH(clamp_min_scalar_stub);
DEFINE_DISPATCH(clamp_max_scalar_stub);
DEFINE_DISPATCH(clamp_tensor_stub);
DEFINE_DISPATCH(where_stub);

namespace {

// PyTorch's build_ternary_op: inputs promoted to their common dtype, the result
// cast to out= if that is a safe cast.
TensorIterator ternary_op(const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& c, const char* name) {
  return TensorIteratorConfig()
      .name(name)
      .add_output(out)
      .add_input(a)
      .add_input(b)
      .add_input(c)
      .allow_cpu_scalars(true)
      .promote_inputs_to_common_dtype(true)
      .cast_common_dtype_to_outputs(true)
      .enforce_safe_casting_to_output(true)
      .build();
}

// The C++ type PyTorch names when a Scalar does not fit a dtype.
const char* cpp_type_name(ScalarType t) {
  switch (t) {
    case ScalarType::Bool:
      return "bool";
    case ScalarType::Byte:
      return "uint8_t";
    case ScalarType::Char:
      return "int8_t";
    case ScalarType::Short:
      return "int16_t";
    case ScalarType::Int:
      return "int";
    case ScalarType::Long:
      return "int64_t";
    case ScalarType::Half:
      return "c10::Half";
    case ScalarType::BFloat16:
      return "c10::BFloat16";
    case ScalarType::Float:
      return "float";
    case ScalarType::Double:
      return "double";
    default:
      return c10::toString(t);
  }
}

void check_fits(const Scalar& s, ScalarType t) {
  EMBER_CHECK(s.fits(t), "value cannot be converted to type ", cpp_type_name(t), " without overflow");
}

void check_lerp_dtypes(const Tensor& self, const Tensor& end) {
  EMBER_CHECK(self.dtype() == end.dtype(), "expected dtype ", c10::toString(self.dtype()), " for `end` but got dtype ",
              c10::toString(end.dtype()));
}

constexpr const char* kClampNone = "torch.clamp: At least one of 'min' or 'max' must not be None";

}  // namespace

// ---- lerp: self + weight * (end - self) -------------------------------------------------

Tensor lerp_scalar_out(const Tensor& self, const Tensor& end, const Scalar& weight, const Tensor& out) {
  check_lerp_dtypes(self, end);
  auto iter = TensorIteratorConfig().name("lerp").add_output(out).add_input(self).add_input(end).build();
  lerp_scalar_stub(iter.device_type(), iter, weight);
  return iter.output();
}

Tensor lerp_tensor_out(const Tensor& self, const Tensor& end, const Tensor& weight, const Tensor& out) {
  check_lerp_dtypes(self, end);
  EMBER_CHECK(self.dtype() == weight.dtype(), "expected dtype ", c10::toString(self.dtype()),
              " for `weight` but got dtype ", c10::toString(weight.dtype()));
  auto iter =
      TensorIteratorConfig().name("lerp").add_output(out).add_input(self).add_input(end).add_input(weight).build();
  lerp_tensor_stub(iter.device_type(), iter);
  return iter.output();
}

// ---- addcmul / addcdiv: self + value * tensor1 (* or /) tensor2 -----------------------------

Tensor addcmul_out(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value,
                   const Tensor& out) {
  auto iter = ternary_op(out, self, tensor1, tensor2, "addcmul");
  addcmul_stub(iter.device_type(), iter, value);
  return iter.output();
}

Tensor addcdiv_out(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value,
                   const Tensor& out) {
  EMBER_CHECK(!(c10::isIntegralType(tensor1.dtype(), /*includeBool=*/true) &&
                c10::isIntegralType(tensor2.dtype(), /*includeBool=*/true)),
              "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform "
              "a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as "
              "(input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as "
              "(input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter "
              "implementation: (input + value * tensor1 / tensor2), for all dtypes.");
  auto iter = ternary_op(out, self, tensor1, tensor2, "addcdiv");
  addcdiv_stub(iter.device_type(), iter, value);
  return iter.output();
}

// ---- clamp with Python-number bounds ---------------------------------------------------------
// The result dtype promotes self with the bounds (an integer tensor clamped to 0.5 is
// float); in place, that dtype must be self's.

Tensor clamp_out(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max,
                 const Tensor& out) {
  EMBER_CHECK(min || max, kClampNone);
  ScalarType dtype = self.dtype();
  if (!c10::isFloatingType(dtype)) {
    std::vector<Tensor> operands{self};
    if (min) operands.push_back(wrapped_scalar_tensor(*min));
    if (max) operands.push_back(wrapped_scalar_tensor(*max));
    dtype = result_type(operands);
  }
  if (min) check_fits(*min, dtype);
  if (max) check_fits(*max, dtype);
  auto iter = TensorIterator::unary_op(out, self.to(dtype), "clamp");
  // a NaN bound makes every element NaN (PyTorch: clamp(x, min=nan) and clamp_min(x, nan) are all NaN)
  if ((min && std::isnan(min->toDouble())) || (max && std::isnan(max->toDouble()))) {
    iter.output().fill_(Scalar(std::numeric_limits<double>::quiet_NaN()));
  } else if (min && max) {
    clamp_scalar_stub(iter.device_type(), iter, *min, *max);
  } else if (min) {
    clamp_min_scalar_stub(iter.device_type(), iter, *min);
  } else {
    clamp_max_scalar_stub(iter.device_type(), iter, *max);
  }
  return iter.output();
}

Tensor clamp_min_out(const Tensor& self, const Scalar& min, const Tensor& out) {
  return clamp_out(self, min, std::nullopt, out);
}

Tensor clamp_max_out(const Tensor& self, const Scalar& max, const Tensor& out) {
  return clamp_out(self, std::nullopt, max, out);
}

// ---- clamp with tensor bounds (broadcast; NaN in a bound propagates) -----------------------------

namespace {
Tensor clamp_tensor_impl(const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max,
                         const Tensor& out, const char* name) {
  EMBER_CHECK(min || max, kClampNone);
  if (min && max) {
    auto iter = ternary_op(out, self, *min, *max, name);
    clamp_tensor_stub(iter.device_type(), iter);
    return iter.output();
  }
  auto iter = TensorIterator::binary_op(out, self, min ? *min : *max, name);
  // clamp with one tensor bound is maximum / minimum (bool included, as PyTorch);
  // clamp_min / clamp_max have their own kernel, without bool
  EMBER_CHECK(std::string(name) == "clamp" || iter.common_dtype() != ScalarType::Bool, name,
              ": not implemented for dtype bool");
  if (min) {
    maximum_stub(iter.device_type(), iter);
  } else {
    minimum_stub(iter.device_type(), iter);
  }
  return iter.output();
}
}  // namespace

Tensor clamp_tensor_out(const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max,
                        const Tensor& out) {
  return clamp_tensor_impl(self, min, max, out, "clamp");
}

Tensor clamp_min_tensor_out(const Tensor& self, const Tensor& min, const Tensor& out) {
  return clamp_tensor_impl(self, min, std::nullopt, out, "clamp_min");
}

Tensor clamp_max_tensor_out(const Tensor& self, const Tensor& max, const Tensor& out) {
  return clamp_tensor_impl(self, std::nullopt, max, out, "clamp_max");
}

// ---- where(condition, self, other): self where condition else other ------------------------------

Tensor where_self_out(const Tensor& condition, const Tensor& self, const Tensor& other, const Tensor& out) {
  EMBER_CHECK(condition.dtype() == ScalarType::Bool,
              "where expected condition to be a boolean tensor, but got a tensor with dtype ",
              c10::toString(condition.dtype()));
  const ScalarType dtype = result_type({self, other});
  EMBER_CHECK(!out.defined() || out.dtype() == dtype, "Expected out type to be ", c10::toString(dtype), " but got ",
              c10::toString(out.dtype()));
  auto iter = TensorIteratorConfig()
                  .name("where")
                  .add_output(out)
                  .add_input(condition)
                  .add_input(self.to(dtype))
                  .add_input(other.to(dtype))
                  .allow_cpu_scalars(true)
                  .check_all_same_dtype(false)
                  .declare_static_dtype(dtype)
                  .build();
  where_stub(iter.device_type(), iter);
  return iter.output();
}

}  // namespace ember::at::native
