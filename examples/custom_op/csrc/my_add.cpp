// myops::my_add(x, y) = 2 * x + y: the operator's definition and its CPU kernel.
#include <ember/aten/library.h>

namespace at = ember::at;

namespace {

void check_inputs(const at::Tensor& x, const at::Tensor& y) {
  EMBER_CHECK(x.sizes() == y.sizes(), "my_add: x and y must have the same shape, got ", x.toString(), " and ",
              y.toString());
  EMBER_CHECK(x.dtype() == y.dtype(), "my_add: x and y must have the same dtype, got ", x.toString(), " and ",
              y.toString());
  EMBER_CHECK(x.dtype() == at::ScalarType::Float || x.dtype() == at::ScalarType::Double,
              "my_add: expected float32 or float64 tensors, got ", x.toString());
}

template <typename T>
void my_add_loop(const T* x, const T* y, T* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = 2 * x[i] + y[i];
}

at::Tensor my_add_cpu(const at::Tensor& x_, const at::Tensor& y_) {
  check_inputs(x_, y_);
  EMBER_CHECK(x_.is_cpu() && y_.is_cpu(), "my_add_cpu: expected CPU tensors, got ", x_.toString());
  const at::Tensor x = x_.contiguous(), y = y_.contiguous();
  at::Tensor out = at::empty(x.sizes(), x.dtype());
  if (x.dtype() == at::ScalarType::Float)
    my_add_loop(x.data_ptr<float>(), y.data_ptr<float>(), out.data_ptr<float>(), x.numel());
  else
    my_add_loop(x.data_ptr<double>(), y.data_ptr<double>(), out.data_ptr<double>(), x.numel());
  return out;
}

}  // namespace

EMBER_LIBRARY(myops, m) { m.def("my_add(Tensor x, Tensor y) -> Tensor"); }

EMBER_LIBRARY_IMPL(myops, CPU, m) { m.impl("my_add", &my_add_cpu, "my_add_cpu"); }

EMBER_EXTENSION_MODULE(_C)
