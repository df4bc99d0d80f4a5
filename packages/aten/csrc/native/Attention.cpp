// _scaled_dot_product_flash_attention_for_cpu and its backward: argument checks, layouts and
// dtypes around the fused kernels of cpu/AttentionKernel.cpp and, for CUDA inputs,
// cuda/Attention.cu (see Attention.h). The public
// scaled_dot_product_attention (ember/aten/native/attention.py) picks this path or the math
// composite.
#include "Attention.h"

#include <cmath>
#include <limits>
#include <tuple>

#include <ember/c10/DeviceGuard.h>

#include "Blas.h"    // blas_cpp_type_name
#include "Im2Col.h"  // nn_compute_type

namespace ember::at::native {

DEFINE_DISPATCH(sdpa_forward_stub);
DEFINE_DISPATCH(sdpa_backward_stub);

namespace {

constexpr const char* kOp = "scaled_dot_product_flash_attention_cpu";

// q / k / v made usable by the kernel: compute dtype, last dim contiguous, rows apart by at
// least a row (the forward's BLAS products read them with that leading dimension).
Tensor prepare(const Tensor& t, ScalarType ct) {
  Tensor r = t.dtype() == ct ? t : t.to(ct);
  if ((r.size(3) > 1 && r.stride(3) != 1) || (r.size(2) > 1 && r.stride(2) < r.size(3))) r = r.contiguous();
  if (r.stride(3) != 1) r = r.as_strided(r.sizes(), {r.stride(0), r.stride(1), r.stride(2), 1});
  return r;
}

struct Prepared {
  AttentionParams p;
  ScalarType ct = ScalarType::Float;
  Tensor q, k, v, mask;  // kept alive for the kernel
};

Prepared setup(const Tensor& query, const Tensor& key, const Tensor& value, double dropout_p, bool is_causal,
               const std::optional<Tensor>& attn_mask, std::optional<double> scale) {
  EMBER_CHECK(query.dim() == 4 && key.dim() == 4 && value.dim() == 4, kOp,
              ": Accept only 4 dims inputs shape of {B, H, T, K}");
  EMBER_CHECK(dropout_p == 0.0, kOp, ": Currently do not support dropout > 0");
  EMBER_CHECK(query.dtype() == key.dtype() && query.dtype() == value.dtype(),
              "Expected query, key, and value to have the same dtype, but got query.dtype: ",
              blas_cpp_type_name(query.dtype()), " key.dtype: ", blas_cpp_type_name(key.dtype()),
              " and value.dtype: ", blas_cpp_type_name(value.dtype()), " instead.");
  EMBER_CHECK(c10::isFloatingType(query.dtype()), kOp, ": expected a floating point dtype, but got ",
              c10::toString(query.dtype()));
  check_same_device(kOp, query, key);
  check_same_device(kOp, query, value);
  EMBER_CHECK(query.size(3) == key.size(3), kOp, ": Q/K should have the same head size, but got ", query.size(3),
              " and ", key.size(3));
  EMBER_CHECK(query.size(0) == key.size(0) && query.size(0) == value.size(0), kOp,
              ": Q/K/V should have the same batch size");
  EMBER_CHECK(key.size(1) == value.size(1) && key.size(2) == value.size(2), kOp,
              ": K/V should have the same number of heads and the same sequence length");
  EMBER_CHECK(key.size(1) > 0 && query.size(1) % key.size(1) == 0, kOp, ": the number of query heads (", query.size(1),
              ") must be a multiple of the number of key/value heads (", key.size(1), ")");
  Prepared r;
  r.ct = nn_compute_type(query.dtype());
  r.q = prepare(query, r.ct);
  r.k = prepare(key, r.ct);
  r.v = prepare(value, r.ct);
  AttentionParams& p = r.p;
  p.batch = query.size(0);
  p.q_heads = query.size(1);
  p.kv_heads = key.size(1);
  p.L = query.size(2);
  p.S = key.size(2);
  p.E = query.size(3);
  p.Ev = value.size(3);
  for (int i = 0; i < 3; ++i) {
    p.q_stride[i] = r.q.stride(i);
    p.k_stride[i] = r.k.stride(i);
    p.v_stride[i] = r.v.stride(i);
  }
  p.is_causal = is_causal;
  p.scale = scale.has_value() ? *scale : 1.0 / std::sqrt(static_cast<double>(p.E));
  if (attn_mask.has_value() && attn_mask->defined()) {
    const Tensor& m = *attn_mask;
    EMBER_CHECK(m.dtype() == ScalarType::Bool || c10::isFloatingType(m.dtype()),
                "Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: ",
                blas_cpp_type_name(m.dtype()), " and  query.dtype: ", blas_cpp_type_name(query.dtype()), " instead.");
    EMBER_CHECK(m.dim() <= 4, kOp, ": attn_mask must have at most 4 dimensions, but got ", m.dim());
    const int64_t target[4] = {p.batch, p.q_heads, p.L, p.S};
    for (int64_t d = 0; d < m.dim(); ++d) {
      const int64_t td = 4 - m.dim() + d, ms = m.size(d);
      EMBER_CHECK(ms == 1 || ms == target[td], "The size of tensor a (", target[td],
                  ") must match the size of tensor b (", ms, ") at non-singleton dimension ", td);
    }
    check_same_device(kOp, query, m);
    Tensor add;
    if (m.dtype() == ScalarType::Bool && !m.is_cpu()) {  // the CUDA kernel reads the bools
      add = m;
      p.mask_is_bool = true;
    } else if (m.dtype() == ScalarType::Bool) {  // True: take part; False: -inf
      const Tensor mb = m.contiguous();
      add = empty(m.sizes(), r.ct, m.device());
      const bool* src = mb.data_ptr<bool>();
      if (r.ct == ScalarType::Double) {
        double* dst = add.data_ptr<double>();
        for (int64_t i = 0; i < m.numel(); ++i) dst[i] = src[i] ? 0.0 : -std::numeric_limits<double>::infinity();
      } else {
        float* dst = add.data_ptr<float>();
        for (int64_t i = 0; i < m.numel(); ++i) dst[i] = src[i] ? 0.0f : -std::numeric_limits<float>::infinity();
      }
    } else {
      add = m.to(r.ct);
    }
    Tensor e = add;
    while (e.dim() < 4) e = e.unsqueeze(0);
    r.mask = e.expand({p.batch, p.q_heads, p.L, p.S});
    p.mask = r.mask.data_ptr();
    for (int i = 0; i < 4; ++i) p.mask_stride[i] = r.mask.size(i) == 1 ? 0 : r.mask.stride(i);
  }
  return r;
}

}  // namespace

std::tuple<Tensor, Tensor> _scaled_dot_product_flash_attention_for_cpu(const Tensor& query, const Tensor& key,
                                                                       const Tensor& value, double dropout_p,
                                                                       bool is_causal,
                                                                       const std::optional<Tensor>& attn_mask,
                                                                       std::optional<double> scale) {
  Prepared r = setup(query, key, value, dropout_p, is_causal, attn_mask, scale);
  const AttentionParams& p = r.p;
  Tensor out = empty({p.batch, p.q_heads, p.L, p.Ev}, r.ct, query.device());
  Tensor lse = empty({p.batch, p.q_heads, p.L}, r.ct, query.device());
  if (out.numel() > 0 || lse.numel() > 0) {
    c10::DeviceGuard guard(query.device());
    sdpa_forward_stub(query.device().type, r.ct, p, r.q.data_ptr(), r.k.data_ptr(), r.v.data_ptr(), out.data_ptr(),
                      lse.data_ptr());
  }
  return {out.to(query.dtype()), lse};
}

std::tuple<Tensor, Tensor, Tensor> _scaled_dot_product_flash_attention_for_cpu_backward(
    const Tensor& grad_out, const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& out,
    const Tensor& logsumexp, double dropout_p, bool is_causal, const std::optional<Tensor>& attn_mask,
    std::optional<double> scale) {
  Prepared r = setup(query, key, value, dropout_p, is_causal, attn_mask, scale);
  const AttentionParams& p = r.p;
  const DimVector out_shape{p.batch, p.q_heads, p.L, p.Ev};
  EMBER_CHECK(grad_out.sizes() == IntArrayRef(out_shape) && out.sizes() == IntArrayRef(out_shape), kOp,
              "_backward: expected grad_out and out of size ", shape_str(out_shape), ", but got ",
              shape_str(grad_out.sizes()), " and ", shape_str(out.sizes()));
  EMBER_CHECK(logsumexp.sizes() == IntArrayRef({p.batch, p.q_heads, p.L}), kOp,
              "_backward: expected logsumexp of size ", shape_str({p.batch, p.q_heads, p.L}), ", but got ",
              shape_str(logsumexp.sizes()));
  const Tensor go = grad_out.to(r.ct).contiguous();
  const Tensor o = out.to(r.ct).contiguous();
  const Tensor l = logsumexp.to(r.ct).contiguous();
  Tensor gq = zeros({p.batch, p.q_heads, p.L, p.E}, r.ct, query.device());
  Tensor gk = zeros({p.batch, p.kv_heads, p.S, p.E}, r.ct, query.device());
  Tensor gv = zeros({p.batch, p.kv_heads, p.S, p.Ev}, r.ct, query.device());
  if (p.batch * p.q_heads * p.L * p.S > 0) {
    c10::DeviceGuard guard(query.device());
    sdpa_backward_stub(query.device().type, r.ct, p, r.q.data_ptr(), r.k.data_ptr(), r.v.data_ptr(), o.data_ptr(),
                       l.data_ptr(), go.data_ptr(), gq.data_ptr(), gk.data_ptr(), gv.data_ptr());
  }
  return {gq.to(query.dtype()), gk.to(key.dtype()), gv.to(value.dtype())};
}

}  // namespace ember::at::native
