#pragma once
// Random numbers: a counter-based Philox4x32-10 generator (as PyTorch's CUDA
// generator). Its whole state is (seed, offset): a kernel that needs N 128-bit
// blocks reserves them with philox_reserve(N) and computes block b as
// philox(seed, offset + b) -- in any order, on any thread, on CPU or GPU, with the
// same result. That is what makes CPU and CUDA draws equal bit for bit. Which block
// and which words give which value of each distribution is written out in
// csrc/native/cpu/DistributionsKernel.cpp.

#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

#include <ember/c10/Device.h>
#include <ember/c10/Macros.h>

namespace ember::at {

struct PhiloxBlock {
  uint32_t x[4];
};

// One Philox4x32-10 block for counter (offset, subsequence) and key `seed`.
EMBER_HOST_DEVICE inline PhiloxBlock philox4x32_10(uint64_t seed, uint64_t counter, uint64_t subsequence = 0) {
  uint32_t c0 = static_cast<uint32_t>(counter), c1 = static_cast<uint32_t>(counter >> 32);
  uint32_t c2 = static_cast<uint32_t>(subsequence), c3 = static_cast<uint32_t>(subsequence >> 32);
  uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
  constexpr uint32_t M0 = 0xD2511F53u, M1 = 0xCD9E8D57u;
  constexpr uint32_t W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = static_cast<uint64_t>(M0) * c0;
    const uint64_t p1 = static_cast<uint64_t>(M1) * c2;
    const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ k0;
    const uint32_t n1 = static_cast<uint32_t>(p1);
    const uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ k1;
    const uint32_t n3 = static_cast<uint32_t>(p0);
    c0 = n0;
    c1 = n1;
    c2 = n2;
    c3 = n3;
    k0 += W0;
    k1 += W1;
  }
  return PhiloxBlock{{c0, c1, c2, c3}};
}

// [0, 1) from 24 random bits (float) or 53 (double): (x >> 8) * 2^-24 and
// ((hi << 32 | lo) >> 11) * 2^-53. The double is assembled from bits -- the top 52 as a
// mantissa, plus 2^-53 (bit pattern 0x3ca0...) when the last bit is set -- giving the
// same number as the product without a 64-bit integer -> double conversion or a 64-bit
// compare, which SSE2/AVX2 vector units lack.
EMBER_HOST_DEVICE inline float uniform_float(uint32_t x) { return static_cast<float>(x >> 8) * (1.0f / 16777216.0f); }
EMBER_HOST_DEVICE inline double uniform_double(uint32_t hi, uint32_t lo) {
  const uint64_t v = (static_cast<uint64_t>(hi) << 32 | lo) >> 11;
  const uint64_t top = 0x3ff0000000000000ull | (v >> 1);
  const uint64_t last = (0 - (v & 1)) & 0x3ca0000000000000ull;
  double d, e;
  std::memcpy(&d, &top, sizeof(d));
  std::memcpy(&e, &last, sizeof(e));
  return (d - 1.0) + e;
}

struct GeneratorImpl {
  std::mutex mutex;
  uint64_t seed = 67280421310721ull;  // PyTorch's default seed
  uint64_t offset = 0;                // next unused Philox counter
  c10::Device device{c10::DeviceType::CPU};
};

class Generator {
 public:
  explicit Generator(c10::Device device = c10::Device(c10::DeviceType::CPU));

  void manual_seed(uint64_t seed);
  uint64_t initial_seed() const;
  // Seeds from std::random_device and returns the seed.
  uint64_t seed();
  c10::Device device() const { return impl_->device; }

  // Reserves `blocks` counters; returns (seed, first counter). Thread-safe.
  std::pair<uint64_t, uint64_t> philox_reserve(uint64_t blocks);

  // (seed, offset) -- the entire state.
  std::pair<uint64_t, uint64_t> get_state() const;
  void set_state(uint64_t seed, uint64_t offset);

  bool operator==(const Generator& o) const { return impl_ == o.impl_; }
  // Same for every copy of this generator (copies share one state).
  uintptr_t identity() const { return reinterpret_cast<uintptr_t>(impl_.get()); }

 private:
  std::shared_ptr<GeneratorImpl> impl_;
};

// The process-wide generator used when generator=None (ember.aten.manual_seed seeds it).
Generator& default_generator(c10::Device device = c10::Device(c10::DeviceType::CPU));
// The generator to use: the given one, or the default for that device.
Generator get_generator_or_default(const std::optional<Generator>& g, c10::Device device);

}  // namespace ember::at
