// GradScaler's fused kernels (AmpKernels.h): the argument checks (PyTorch's messages),
// the CPU kernels, and the entries native_functions.yaml names for both devices.
#include "AmpKernels.h"

#include <cmath>

#include <ember/aten/Dispatch.h>
#include <ember/aten/Parallel.h>
#include <ember/c10/DeviceGuard.h>
#include <ember/c10/ScalarType.h>

namespace ember::at::native {

namespace {

// grad *= inv_scale, in opmath_t; returns whether any element (before scaling) was inf/NaN.
template <typename T>
bool unscale_one(T* data, int64_t n, float inv_scale) {
  using A = opmath_t<T>;
  const A s = static_cast<A>(inv_scale);
  bool non_finite = false;
  // chunks keep their own flag: no shared write inside the parallel loop
  const int64_t nchunks = (n + GRAIN_SIZE - 1) / GRAIN_SIZE;
  std::vector<char> flags(static_cast<size_t>(nchunks), 0);
  parallel_for(0, nchunks, 1, [&](int64_t cb, int64_t ce) {
    for (int64_t c = cb; c < ce; ++c) {
      const int64_t b = c * GRAIN_SIZE, e = std::min(n, b + GRAIN_SIZE);
      bool bad = false;
      for (int64_t i = b; i < e; ++i) {
        const A v = static_cast<A>(data[i]);
        bad |= !std::isfinite(v);
        data[i] = static_cast<T>(v * s);
      }
      flags[static_cast<size_t>(c)] = bad;
    }
  });
  for (char f : flags) non_finite |= f != 0;
  return non_finite;
}

void amp_unscale_cpu(const std::vector<AmpGrad>& grads, float* found_inf, const float* inv_scale) {
  bool non_finite = false;
  for (const AmpGrad& g : grads) {
    EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(g.dtype, "_amp_foreach_non_finite_check_and_unscale_", [&] {
      non_finite |= unscale_one<scalar_t>(static_cast<scalar_t*>(g.data), g.numel, *inv_scale);
    });
  }
  if (non_finite) *found_inf = 1.0f;
}

void amp_update_scale_cpu(float* current_scale, int32_t* growth_tracker, const float* found_inf, double growth_factor,
                          double backoff_factor, int64_t growth_interval) {
  if (*found_inf != 0.0f) {
    *current_scale = static_cast<float>(*current_scale * backoff_factor);
    *growth_tracker = 0;
    return;
  }
  // growth only after growth_interval consecutive clean steps, and only to a finite scale
  const int32_t successful = *growth_tracker + 1;
  if (successful == growth_interval) {
    const float grown = static_cast<float>(*current_scale * growth_factor);
    if (std::isfinite(grown)) *current_scale = grown;
    *growth_tracker = 0;
  } else {
    *growth_tracker = successful;
  }
}

void check_one_float(const char* what, const Tensor& t) {
  EMBER_CHECK(t.numel() == 1, what, " must be a 1-element tensor.");
  EMBER_CHECK(t.dtype() == ScalarType::Float, what, " must be a float tensor.");
}

}  // namespace

DEFINE_DISPATCH(amp_unscale_stub);
DEFINE_DISPATCH(amp_update_scale_stub);
REGISTER_BASELINE_DISPATCH(amp_unscale_stub, &amp_unscale_cpu);
REGISTER_BASELINE_DISPATCH(amp_update_scale_stub, &amp_update_scale_cpu);

void _amp_foreach_non_finite_check_and_unscale_(const std::vector<Tensor>& self, const Tensor& found_inf,
                                                const Tensor& inv_scale) {
  const char* op = "_amp_foreach_non_finite_check_and_unscale_";
  check_one_float("inv_scale", inv_scale);
  check_one_float("found_inf", found_inf);
  EMBER_CHECK(found_inf.device() == inv_scale.device(), op, ": found_inf (on ", found_inf.device(),
              ") must be on the same device as inv_scale (on ", inv_scale.device(), ")");
  if (self.empty()) return;
  std::vector<AmpGrad> grads;
  std::vector<std::pair<Tensor, Tensor>> copy_back;  // (grad, its contiguous working copy)
  grads.reserve(self.size());
  for (size_t i = 0; i < self.size(); ++i) {
    const Tensor& g = self[i];
    EMBER_CHECK(g.device() == inv_scale.device(), op, ": scaled_grads[", i, "] is on ", g.device(),
                " but inv_scale is on ", inv_scale.device(), "; every tensor must be on one device");
    EMBER_CHECK(c10::isFloatingType(g.dtype()), op, ": scaled_grads[", i, "] must be a floating point tensor, got ",
                c10::toPythonName(g.dtype()));
    Tensor work = g;
    if (!g.is_contiguous()) {
      work = g.contiguous();
      copy_back.emplace_back(g, work);
    }
    if (work.numel() > 0) grads.push_back({work.data_ptr(), work.numel(), work.dtype()});
  }
  c10::DeviceGuard guard(inv_scale.device());
  amp_unscale_stub(inv_scale.device().type, grads, found_inf.data_ptr<float>(), inv_scale.data_ptr<float>());
  for (auto& [g, work] : copy_back) g.copy_(work);
}

Tensor _amp_update_scale_(const Tensor& self, const Tensor& growth_tracker, const Tensor& found_inf,
                          double scale_growth_factor, double scale_backoff_factor, int64_t growth_interval) {
  const char* op = "_amp_update_scale_";
  EMBER_CHECK(growth_tracker.numel() == 1, "growth_tracker must be a 1-element tensor.");
  EMBER_CHECK(self.numel() == 1, "current_scale must be a 1-element tensor.");
  EMBER_CHECK(found_inf.numel() == 1, "found_inf must be a 1-element tensor.");
  EMBER_CHECK(growth_tracker.dtype() == ScalarType::Int, "growth_tracker must be an int tensor.");
  EMBER_CHECK(self.dtype() == ScalarType::Float, "current_scale must be a float tensor.");
  EMBER_CHECK(found_inf.dtype() == ScalarType::Float, "found_inf must be a float tensor.");
  EMBER_CHECK(growth_interval > 0, op, ": growth_interval must be positive, got ", growth_interval);
  EMBER_CHECK(growth_tracker.device() == self.device() && found_inf.device() == self.device(), op,
              ": current_scale (on ", self.device(), "), growth_tracker (on ", growth_tracker.device(),
              ") and found_inf (on ", found_inf.device(), ") must be on one device");
  c10::DeviceGuard guard(self.device());
  amp_update_scale_stub(self.device().type, self.data_ptr<float>(), growth_tracker.data_ptr<int32_t>(),
                        found_inf.data_ptr<float>(), scale_growth_factor, scale_backoff_factor, growth_interval);
  return self;
}

}  // namespace ember::at::native
