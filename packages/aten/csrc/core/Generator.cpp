#include <ember/aten/Generator.h>

#include <optional>
#include <random>
#include <vector>

#include <ember/c10/Exception.h>
#include <ember/c10/cuda/CUDAFunctions.h>

namespace ember::at {

namespace {
// "cuda" without an index: the current device, as PyTorch's (which raises without one).
c10::Device with_cuda_index(c10::Device device) {
  if (!device.is_cuda() || device.index >= 0) return device;
  return c10::Device(c10::DeviceType::CUDA, static_cast<int8_t>(c10::cuda::current_device()));
}
}  // namespace

Generator::Generator(c10::Device device) : impl_(std::make_shared<GeneratorImpl>()) {
  impl_->device = with_cuda_index(device);
}

void Generator::manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->seed = seed;
  impl_->offset = 0;
}

uint64_t Generator::initial_seed() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->seed;
}

uint64_t Generator::seed() {
  std::random_device rd;
  const uint64_t s = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  manual_seed(s);
  return s;
}

std::pair<uint64_t, uint64_t> Generator::philox_reserve(uint64_t blocks) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  const uint64_t first = impl_->offset;
  impl_->offset += blocks;
  return {impl_->seed, first};
}

std::pair<uint64_t, uint64_t> Generator::get_state() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return {impl_->seed, impl_->offset};
}

void Generator::set_state(uint64_t seed, uint64_t offset) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->seed = seed;
  impl_->offset = offset;
}

Generator& default_generator(c10::Device device) {
  static Generator cpu{c10::Device(c10::DeviceType::CPU)};
  if (device.is_cpu()) return cpu;
  static std::mutex m;
  static std::vector<std::unique_ptr<Generator>> cuda;
  std::lock_guard<std::mutex> lock(m);
  const int idx = device.index < 0 ? 0 : device.index;
  if (static_cast<int>(cuda.size()) <= idx) cuda.resize(idx + 1);
  if (!cuda[idx]) cuda[idx] = std::make_unique<Generator>(c10::Device(c10::DeviceType::CUDA, static_cast<int8_t>(idx)));
  return *cuda[idx];
}

Generator get_generator_or_default(const std::optional<Generator>& g, c10::Device device) {
  if (g) {
    EMBER_CHECK(g->device().type == device.type, "Expected a '", c10::toString(device.type),
                "' device type for generator but found '", c10::toString(g->device().type), "'");
    return *g;
  }
  return default_generator(device);
}

}  // namespace ember::at
