// torch.special's elementwise functions (and torch.i0, torch.sinc, torch.igamma /
// igammac, torch.polygamma): one out kernel each over the stubs of SpecialOps.h; the
// functional and in-place variants reach them through `structured_delegate`. Integer
// and bool inputs compute in the default float dtype (TensorIterator's *_float_op), as
// PyTorch's.
#include "SpecialOps.h"

#include <ember/aten/Tensor.h>

namespace ember::at::native {

DEFINE_DISPATCH(special_unary_stub);
DEFINE_DISPATCH(special_binary_stub);
DEFINE_DISPATCH(polygamma_stub);

Tensor digamma_out(const Tensor& self, const Tensor& out);  // UnaryOps.cpp

namespace {

using special_math::SpecialBinary;
using special_math::SpecialUnary;

Tensor special_unary(const Tensor& self, const Tensor& out, SpecialUnary op, const char* name) {
  auto iter = TensorIterator::unary_float_op(out, self, name);
  special_unary_stub(iter.device_type(), iter, op);
  return iter.output();
}

Tensor special_binary(const Tensor& a, const Tensor& b, const Tensor& out, SpecialBinary op, const char* name) {
  auto iter = TensorIterator::binary_float_op(out, a, b, name);
  special_binary_stub(iter.device_type(), iter, op);
  return iter.output();
}

}  // namespace

Tensor i0_out(const Tensor& self, const Tensor& out) { return special_unary(self, out, SpecialUnary::I0, "i0"); }

Tensor special_i0e_out(const Tensor& self, const Tensor& out) {
  return special_unary(self, out, SpecialUnary::I0e, "special.i0e");
}

Tensor special_i1_out(const Tensor& self, const Tensor& out) {
  return special_unary(self, out, SpecialUnary::I1, "special.i1");
}

Tensor special_i1e_out(const Tensor& self, const Tensor& out) {
  return special_unary(self, out, SpecialUnary::I1e, "special.i1e");
}

Tensor special_modified_bessel_k0_out(const Tensor& self, const Tensor& out) {
  return special_unary(self, out, SpecialUnary::K0, "special.modified_bessel_k0");
}

Tensor special_modified_bessel_k1_out(const Tensor& self, const Tensor& out) {
  return special_unary(self, out, SpecialUnary::K1, "special.modified_bessel_k1");
}

Tensor special_scaled_modified_bessel_k0_out(const Tensor& self, const Tensor& out) {
  return special_unary(self, out, SpecialUnary::K0e, "special.scaled_modified_bessel_k0");
}

Tensor special_scaled_modified_bessel_k1_out(const Tensor& self, const Tensor& out) {
  return special_unary(self, out, SpecialUnary::K1e, "special.scaled_modified_bessel_k1");
}

Tensor special_bessel_j0_out(const Tensor& self, const Tensor& out) {
  return special_unary(self, out, SpecialUnary::J0, "special.bessel_j0");
}

Tensor special_bessel_j1_out(const Tensor& self, const Tensor& out) {
  return special_unary(self, out, SpecialUnary::J1, "special.bessel_j1");
}

Tensor special_bessel_y0_out(const Tensor& self, const Tensor& out) {
  return special_unary(self, out, SpecialUnary::Y0, "special.bessel_y0");
}

Tensor special_bessel_y1_out(const Tensor& self, const Tensor& out) {
  return special_unary(self, out, SpecialUnary::Y1, "special.bessel_y1");
}

Tensor special_spherical_bessel_j0_out(const Tensor& self, const Tensor& out) {
  return special_unary(self, out, SpecialUnary::SphericalJ0, "special.spherical_bessel_j0");
}

Tensor special_erfcx_out(const Tensor& self, const Tensor& out) {
  return special_unary(self, out, SpecialUnary::Erfcx, "special.erfcx");
}

Tensor special_ndtr_out(const Tensor& self, const Tensor& out) {
  return special_unary(self, out, SpecialUnary::Ndtr, "special.ndtr");
}

Tensor special_log_ndtr_out(const Tensor& self, const Tensor& out) {
  return special_unary(self, out, SpecialUnary::LogNdtr, "special.log_ndtr");
}

Tensor special_ndtri_out(const Tensor& self, const Tensor& out) {
  return special_unary(self, out, SpecialUnary::Ndtri, "special.ndtri");
}

Tensor special_entr_out(const Tensor& self, const Tensor& out) {
  return special_unary(self, out, SpecialUnary::Entr, "special.entr");
}

Tensor sinc_out(const Tensor& self, const Tensor& out) { return special_unary(self, out, SpecialUnary::Sinc, "sinc"); }

Tensor special_zeta_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return special_binary(self, other, out, SpecialBinary::Zeta, "special.zeta");
}

Tensor special_xlog1py_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return special_binary(self, other, out, SpecialBinary::Xlog1py, "special.xlog1py");
}

Tensor igamma_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return special_binary(self, other, out, SpecialBinary::Gammainc, "igamma");
}

Tensor igammac_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return special_binary(self, other, out, SpecialBinary::Gammaincc, "igammac");
}

Tensor special_chebyshev_polynomial_t_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return special_binary(self, other, out, SpecialBinary::ChebyshevT, "special.chebyshev_polynomial_t");
}

Tensor special_shifted_chebyshev_polynomial_t_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return special_binary(self, other, out, SpecialBinary::ShiftedChebyshevT, "special.shifted_chebyshev_polynomial_t");
}

Tensor special_chebyshev_polynomial_u_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return special_binary(self, other, out, SpecialBinary::ChebyshevU, "special.chebyshev_polynomial_u");
}

Tensor special_shifted_chebyshev_polynomial_u_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return special_binary(self, other, out, SpecialBinary::ShiftedChebyshevU, "special.shifted_chebyshev_polynomial_u");
}

Tensor special_chebyshev_polynomial_v_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return special_binary(self, other, out, SpecialBinary::ChebyshevV, "special.chebyshev_polynomial_v");
}

Tensor special_shifted_chebyshev_polynomial_v_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return special_binary(self, other, out, SpecialBinary::ShiftedChebyshevV, "special.shifted_chebyshev_polynomial_v");
}

Tensor special_chebyshev_polynomial_w_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return special_binary(self, other, out, SpecialBinary::ChebyshevW, "special.chebyshev_polynomial_w");
}

Tensor special_shifted_chebyshev_polynomial_w_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return special_binary(self, other, out, SpecialBinary::ShiftedChebyshevW, "special.shifted_chebyshev_polynomial_w");
}

Tensor special_hermite_polynomial_h_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return special_binary(self, other, out, SpecialBinary::HermiteH, "special.hermite_polynomial_h");
}

Tensor special_hermite_polynomial_he_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return special_binary(self, other, out, SpecialBinary::HermiteHe, "special.hermite_polynomial_he");
}

Tensor special_laguerre_polynomial_l_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return special_binary(self, other, out, SpecialBinary::LaguerreL, "special.laguerre_polynomial_l");
}

Tensor special_legendre_polynomial_p_out(const Tensor& self, const Tensor& other, const Tensor& out) {
  return special_binary(self, other, out, SpecialBinary::LegendreP, "special.legendre_polynomial_p");
}

// polygamma(0, x) is digamma; n >= 1 through the Hurwitz zeta function.
Tensor polygamma_out(int64_t n, const Tensor& self, const Tensor& out) {
  EMBER_CHECK(n >= 0, "polygamma(n, x) does not support negative n.");
  if (n == 0) return digamma_out(self, out);
  auto iter = TensorIterator::unary_float_op(out, self, "polygamma");
  polygamma_stub(iter.device_type(), iter, n);
  return iter.output();
}

}  // namespace ember::at::native
