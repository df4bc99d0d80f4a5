// randperm: a Fisher-Yates shuffle driven by the Philox stream (layout in
// cpu/DistributionsKernel.cpp): step k = 0..n-2 swaps perm[n-1-k] with perm[j], j the
// k-th value of the draw, uniform in [0, n-k). O(n) and deterministic for a given state.
#include <algorithm>
#include <numeric>

#include <ember/aten/Parallel.h>

#include "Distributions.h"
#include "TensorFactories.h"  // pin_memory=

namespace ember::at::native {

namespace {

// PyTorch's check that the largest value, n - 1, is exact in the result's dtype.
void check_supported_max_int_with_precision(int64_t n, const Tensor& t) {
  switch (t.dtype()) {
    case ScalarType::Half:
      EMBER_CHECK(n <= (int64_t{1} << 11) + 1, "n cannot be greater than 2049 for Half type.");
      return;
    case ScalarType::BFloat16:
      EMBER_CHECK(n <= (int64_t{1} << 8) + 1, "n cannot be greater than 257 for BFloat16 type.");
      return;
    case ScalarType::Float:
      EMBER_CHECK(n <= (int64_t{1} << 24) + 1, "n cannot be greater than 2^24+1 for Float type.");
      return;
    case ScalarType::Double:
      EMBER_CHECK(n <= (int64_t{1} << 53) + 1, "n cannot be greater than 2^53+1 for Double type.");
      return;
    default:
      break;
  }
  int64_t max = 0;
  switch (t.dtype()) {
    case ScalarType::Bool:
      max = 1;
      break;
    case ScalarType::Byte:
      max = 255;
      break;
    case ScalarType::Char:
      max = 127;
      break;
    case ScalarType::Short:
      max = 32767;
      break;
    case ScalarType::Int:
      max = 2147483647;
      break;
    default:
      max = std::numeric_limits<int64_t>::max();
      break;
  }
  EMBER_CHECK(n - 1 <= max, "n is too large for result tensor type: '", c10::toPythonName(t.dtype()), "'");
}

void shuffle(int64_t* perm, int64_t n, PhiloxDraw d) {
  const uint64_t range = static_cast<uint64_t>(n);
  const int64_t V = int_values_per_block(range);
  PhiloxBlock blk{};
  for (int64_t k = 0; k + 1 < n; ++k) {
    const int l = static_cast<int>(k % V);
    if (l == 0) blk = philox4x32_10(d.seed, d.offset + static_cast<uint64_t>(k / V));
    const uint64_t bound = static_cast<uint64_t>(n - k);
    uint64_t j;
    if (V == 4)
      j = dist::scale32(blk.x[l], bound);
    else if (V == 2)
      j = dist::scale64(blk.x[2 * l], blk.x[2 * l + 1], bound);
    else
      j = dist::scale128(blk, bound);
    std::swap(perm[n - 1 - k], perm[j]);
  }
}

}  // namespace

Tensor randperm_out(int64_t n, const std::optional<Generator>& generator, const Tensor& out) {
  EMBER_CHECK(n >= 0, "n must be non-negative, got ", n);
  check_supported_max_int_with_precision(n, out);
  const DimVector shape{n};
  resize_output(out, shape);
  Generator gen = get_generator_or_default(generator, out.device());
  if (n == 0) return out;
  // A CUDA result is shuffled on the host (Fisher-Yates is sequential) with the CUDA
  // generator's counters -- the CPU's numbers for the same seed -- and copied over.
  const bool direct = out.is_cpu() && out.dtype() == ScalarType::Long && out.is_contiguous();
  Tensor perm = direct ? out : at::empty(shape, ScalarType::Long);
  int64_t* p = perm.data_ptr<int64_t>();
  parallel_for(0, n, GRAIN_SIZE, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) p[i] = i;
  });
  if (n >= 2) {
    const auto [seed, offset] = gen.philox_reserve(static_cast<uint64_t>(divup(n - 1, int_values_per_block(n))));
    shuffle(p, n, PhiloxDraw{seed, offset});
  }
  if (!direct) out.copy_(perm);
  return out;
}

Tensor randperm(int64_t n, const std::optional<Generator>& generator, std::optional<ScalarType> dtype,
                std::optional<Device> device, std::optional<bool> pin_memory) {
  const DimVector empty_shape{0};
  // a pinned storage grows from the pinned allocator when randperm_out resizes it
  Tensor out = factory_empty(empty_shape, dtype.value_or(ScalarType::Long), device ? *device : Device(DeviceType::CPU),
                             pin_memory);
  return randperm_out(n, generator, out);
}

}  // namespace ember::at::native
