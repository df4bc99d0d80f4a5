// cumsum, cumprod, logcumsumexp, cummax, cummin: dtype rules and the ScanPlan; the
// loops are in cpu/ScanKernel.cpp and cuda/Scan.cu.
//
// dtype rules (as PyTorch): cumsum/cumprod of integral or bool inputs give int64;
// dtype= casts the input first; an out= (or in-place self) tensor's dtype is the
// dtype computed in. logcumsumexp takes floating inputs. cummax/cummin keep the
// input dtype and return int64 indices.
#include "Scan.h"

#include <ember/aten/TensorIterator.h>

#include "ReduceOps.h"

namespace ember::at::native {

DEFINE_DISPATCH(cumsum_stub);
DEFINE_DISPATCH(cumprod_stub);
DEFINE_DISPATCH(logcumsumexp_stub);
DEFINE_DISPATCH(cummax_stub);
DEFINE_DISPATCH(cummin_stub);

namespace {

// out and indices (if defined) are contiguous tensors of in's shape.
ScanPlan make_scan_plan(const Tensor& in, int64_t d, const Tensor& out, const Tensor& indices) {
  ScanPlan p;
  p.in = in.data_ptr();
  p.in_dtype = in.dtype();
  p.device = in.device();
  p.out = out.data_ptr();
  p.indices = indices.defined() ? indices.data_ptr<int64_t>() : nullptr;
  if (in.dim() > 0) {
    p.n = in.size(d);
    p.in_stride = in.stride(d);
    p.out_stride = out.stride(d);
    struct Dim {
      int64_t size, in_stride, out_stride;
    };
    c10::SmallVector<Dim, 8> dims;
    for (int64_t k = in.dim() - 1; k >= 0; --k) {
      if (k != d && in.size(k) != 1) dims.push_back({in.size(k), in.stride(k), out.stride(k)});
    }
    std::stable_sort(dims.begin(), dims.end(), [](const Dim& a, const Dim& b) { return a.in_stride < b.in_stride; });
    for (const Dim& x : dims) {
      p.batch_sizes.push_back(x.size);
      p.batch_in_strides.push_back(x.in_stride);
      p.batch_out_strides.push_back(x.out_stride);
    }
  }
  p.rows = 1;
  for (int64_t s : p.batch_sizes) p.rows *= s;
  return p;
}

bool is_integral(ScalarType t) { return c10::isIntegralType(t, /*includeBool=*/true); }

Tensor cum_sum_prod(const char* op, bool is_prod, const Tensor& self, int64_t dim, std::optional<ScalarType> dtype,
                    const Tensor& out) {
  const int64_t d = c10::maybe_wrap_dim(dim, self.dim());
  if (out.defined() && dtype) {
    EMBER_CHECK(out.dtype() == *dtype, "provided dtype must match dtype of result in ", op, ". Got ",
                c10::toString(out.dtype()), " and ", c10::toString(*dtype), ".");
  }
  const ScalarType result_dtype =
      out.defined() ? out.dtype() : (dtype ? *dtype : (is_integral(self.dtype()) ? ScalarType::Long : self.dtype()));
  // bool goes through a cast (read as byte != 0: a uint8 viewed as bool may hold 2..255)
  const bool cast = self.dtype() != result_dtype && ((dtype || out.defined()) || self.dtype() == ScalarType::Bool);
  const Tensor in = cast ? self.to(result_dtype) : self;
  const ScalarType kernel_dtype = is_integral(in.dtype()) ? ScalarType::Long : in.dtype();
  auto o = prepare_output(out, self.sizes(), result_dtype, kernel_dtype, self);
  const ScanPlan p = make_scan_plan(in, d, o.buffer, Tensor());
  if (is_prod) {
    cumprod_stub(in.device().type, p);
  } else {
    cumsum_stub(in.device().type, p);
  }
  o.finish();
  return o.result;
}

std::tuple<Tensor, Tensor> cum_extreme(const char* op, bool is_max, const Tensor& self, int64_t dim,
                                       const Tensor& values, const Tensor& indices) {
  const int64_t d = c10::maybe_wrap_dim(dim, self.dim());
  if (values.defined()) {
    EMBER_CHECK(values.dtype() == self.dtype(), op, "(): Expected out tensor to have dtype ",
                c10::toPythonName(self.dtype()), ", but got ", c10::toPythonName(values.dtype()), " instead");
  }
  if (indices.defined()) {
    EMBER_CHECK(indices.dtype() == ScalarType::Long, op, "(): Expected out tensor to have dtype int64, but got ",
                c10::toPythonName(indices.dtype()), " instead");
  }
  auto v = prepare_output(values, self.sizes(), self.dtype(), self.dtype(), self);
  auto i = prepare_output(indices, self.sizes(), ScalarType::Long, ScalarType::Long, self);
  const ScanPlan p = make_scan_plan(self, d, v.buffer, i.buffer);
  if (is_max) {
    cummax_stub(self.device().type, p);
  } else {
    cummin_stub(self.device().type, p);
  }
  v.finish();
  i.finish();
  return {v.result, i.result};
}

}  // namespace

Tensor cumsum_out(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype, const Tensor& out) {
  return cum_sum_prod("cumsum", false, self, dim, dtype, out);
}

Tensor cumprod_out(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype, const Tensor& out) {
  return cum_sum_prod("cumprod", true, self, dim, dtype, out);
}

Tensor logcumsumexp_out(const Tensor& self, int64_t dim, const Tensor& out) {
  EMBER_CHECK(c10::isFloatingType(self.dtype()),
              "logcumsumexp(): expected input to have floating point or complex dtype but got ",
              c10::toString(self.dtype()));
  const int64_t d = c10::maybe_wrap_dim(dim, self.dim());
  if (out.defined()) {
    EMBER_CHECK(can_cast(self.dtype(), out.dtype()), "logcumsumexp(): result type ", c10::toString(self.dtype()),
                " can't be cast to the desired output type ", c10::toString(out.dtype()));
  }
  auto o = prepare_output(out, self.sizes(), self.dtype(), self.dtype(), self);
  const ScanPlan p = make_scan_plan(self, d, o.buffer, Tensor());
  logcumsumexp_stub(self.device().type, p);
  o.finish();
  return o.result;
}

std::tuple<Tensor, Tensor> cummax_out(const Tensor& self, int64_t dim, const Tensor& values, const Tensor& indices) {
  return cum_extreme("cummax", true, self, dim, values, indices);
}

std::tuple<Tensor, Tensor> cummin_out(const Tensor& self, int64_t dim, const Tensor& values, const Tensor& indices) {
  return cum_extreme("cummin", false, self, dim, values, indices);
}

}  // namespace ember::at::native
