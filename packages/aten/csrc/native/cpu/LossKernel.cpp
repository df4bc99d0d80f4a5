// CPU kernels of the pointwise losses (one TensorIterator loop each; float16 and
// bfloat16 compute in float) and the chunked sum used by their reductions.
#include <cmath>
#include <vector>

#include <ember/aten/Dispatch.h>
#include <ember/aten/Parallel.h>
#include <ember/aten/native/cpu/Loops.h>

#include "../Loss.h"

namespace ember::at::native {
inline namespace CPU_CAPABILITY {

namespace {

template <typename A>
inline A sign_of(A d) {
  return d > A(0) ? A(1) : (d < A(0) ? A(-1) : A(0));
}

// log(1 + exp(z)) without overflow: max(z, 0) + log1p(exp(-|z|))
template <typename A>
inline A softplus(A z) {
  return (z > A(0) ? z : A(0)) + std::log1p(std::exp(-std::fabs(z)));
}

template <typename scalar_t>
void pointwise_loss_impl(TensorIterator& iter, PointwiseLoss op, double p0, double p1) {
  using A = opmath_t<scalar_t>;
  using S = scalar_t;
  const A a0 = static_cast<A>(p0), a1 = static_cast<A>(p1);
  switch (op) {
    case PointwiseLoss::MSE:
      cpu_kernel(iter, [](S x, S t) -> S {
        const A d = A(x) - A(t);
        return S(d * d);
      });
      return;
    case PointwiseLoss::MSEBackward:
      cpu_kernel(iter, [a0](S x, S t, S g) -> S { return S(a0 * (A(x) - A(t)) * A(g)); });
      return;
    case PointwiseLoss::SmoothL1:
      cpu_kernel(iter, [a0](S x, S t) -> S {
        const A d = std::fabs(A(x) - A(t));
        return S(d < a0 ? A(0.5) * d * d / a0 : d - A(0.5) * a0);
      });
      return;
    case PointwiseLoss::SmoothL1Backward:
      cpu_kernel(iter, [a0, a1](S x, S t, S g) -> S {
        const A d = A(x) - A(t);
        return S(a0 * A(g) * (std::fabs(d) < a1 ? d / a1 : sign_of(d)));
      });
      return;
    case PointwiseLoss::Huber:
      cpu_kernel(iter, [a0](S x, S t) -> S {
        const A d = std::fabs(A(x) - A(t));
        return S(d < a0 ? A(0.5) * d * d : a0 * (d - A(0.5) * a0));
      });
      return;
    case PointwiseLoss::HuberBackward:
      cpu_kernel(iter, [a0, a1](S x, S t, S g) -> S {
        const A d = A(x) - A(t);
        const A c = d < -a1 ? -a1 : (d > a1 ? a1 : d);
        return S(a0 * A(g) * c);
      });
      return;
    case PointwiseLoss::SoftMargin:
      cpu_kernel(iter, [](S x, S t) -> S { return S(softplus(-A(t) * A(x))); });
      return;
    case PointwiseLoss::SoftMarginBackward:
      cpu_kernel(iter, [a0](S x, S t, S g) -> S {
        const A z = -A(t) * A(x);  // d/dx log(1 + exp(z)) = -t sigmoid(z)
        return S(-a0 * A(g) * A(t) / (A(1) + std::exp(-z)));
      });
      return;
    case PointwiseLoss::BCE:
      cpu_kernel(iter, [](S x, S t, S w) -> S {
        const A xv = A(x), tv = A(t);
        EMBER_CHECK(xv >= A(0) && xv <= A(1), "all elements of input should be between 0 and 1");
        // PyTorch clamps each log at -100, so x = 0 or 1 gives a finite loss
        const A lx = std::max(std::log(xv), A(-100));
        const A l1x = std::max(std::log1p(-xv), A(-100));
        return S(A(w) * ((tv - A(1)) * l1x - tv * lx));
      });
      return;
    case PointwiseLoss::BCEBackward:
      cpu_kernel(iter, [a0](S x, S t, S g, S w) -> S {
        const A xv = A(x);
        const A den = std::max((A(1) - xv) * xv, A(1e-12));
        return S(a0 * A(g) * A(w) * (xv - A(t)) / den);
      });
      return;
    case PointwiseLoss::BCEWithLogits:
      cpu_kernel(iter, [](S x, S t, S pw, S w) -> S {
        const A xv = A(x), tv = A(t);
        // (1 - t) x + (1 + (pw - 1) t) log(1 + exp(-x)), the log in its overflow-free form
        const A log_weight = (A(pw) - A(1)) * tv + A(1);
        return S(A(w) * ((A(1) - tv) * xv + log_weight * softplus(-xv)));
      });
      return;
  }
}

void pointwise_loss_kernel(TensorIterator& iter, PointwiseLoss op, double p0, double p1) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(iter.common_dtype(), "loss",
                                         [&] { pointwise_loss_impl<scalar_t>(iter, op, p0, p1); });
}

constexpr int64_t kSumChunk = 16384;

template <typename scalar_t>
double loss_sum_impl(const Tensor& t) {
  const scalar_t* p = t.data_ptr<scalar_t>();
  const int64_t n = t.numel();
  const int64_t chunks = divup(n, kSumChunk);
  std::vector<double> partial(chunks, 0.0);
  parallel_for(0, chunks, std::max<int64_t>(1, GRAIN_SIZE / kSumChunk), [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      const int64_t i1 = std::min(n, (c + 1) * kSumChunk);
      // four lanes of double partial sums (vectorisable), then one
      double s[4] = {0, 0, 0, 0};
      int64_t i = c * kSumChunk;
      for (; i + 4 <= i1; i += 4)
        for (int l = 0; l < 4; ++l) s[l] += static_cast<double>(static_cast<opmath_t<scalar_t>>(p[i + l]));
      for (; i < i1; ++i) s[0] += static_cast<double>(static_cast<opmath_t<scalar_t>>(p[i]));
      partial[c] = (s[0] + s[1]) + (s[2] + s[3]);
    }
  });
  double total = 0;
  for (double v : partial) total += v;
  return total;
}

void loss_sum_kernel(const Tensor& out, const Tensor& t, double divisor) {
  const double s =
      EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(t.dtype(), "loss", [&] { return loss_sum_impl<scalar_t>(t); });
  out.data_ptr<double>()[0] = divisor == 1.0 ? s : s / divisor;
}

}  // namespace
}  // namespace CPU_CAPABILITY

REGISTER_DISPATCH(pointwise_loss_stub, &pointwise_loss_kernel);
REGISTER_DISPATCH(loss_sum_stub, &loss_sum_kernel);

}  // namespace ember::at::native
