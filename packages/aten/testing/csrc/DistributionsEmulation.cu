// Host emulation of the random distribution kernels (Distributions.cu), for tests without a
// GPU: the stub functions of DistributionsKernels.cuh over a launcher that runs the Philox
// blocks in a serial host loop on CPU tensors, in the CPU slots of the distribution stubs, so
// the CPU tests (tests/aten/cuda/test_distributions.py) check the CUDA stream layout bit for
// bit against the CPU kernels'.
#include <cstdint>

#include "../../csrc/native/cuda/DistributionsKernels.cuh"
#include "Emulation.h"
#include "StubEmulation.h"

namespace ember::at::native::cuda_emulation {
namespace {

using namespace cuda_distributions;

// Every block of the draw, one after another, on the host (value i = self's i-th element).
struct HostLaunch {
  template <int V, typename T, typename Gen>
  static void draw(const Tensor& self, PhiloxDraw d, const Gen& gen) {
    EMBER_CHECK(self.is_cpu(), "the CUDA distributions' host emulation takes CPU tensors");
    const int64_t n = self.numel();
    T* out = self.data_ptr<T>();
    for (int64_t b = 0, blocks = cuda::ceil_div<int64_t>(n, V); b < blocks; ++b) draw_block<V>(out, n, d, gen, b);
  }
};

}  // namespace

// true: the CPU slots of the distribution stubs run the CUDA kernels' code on the host (the
// blocks of DistributionsKernels.cuh in HostLaunch's loop); false: the CPU kernels again.
// Returns whether emulation was on before.
bool cuda_distributions_emulation(bool on) {
  static bool active = false;
  static SlotSwap<uniform_stub_DECLARE_DISPATCH_type> s_uniform;
  static SlotSwap<normal_stub_DECLARE_DISPATCH_type> s_normal;
  static SlotSwap<random_from_to_stub_DECLARE_DISPATCH_type> s_random;
  static SlotSwap<exponential_stub_DECLARE_DISPATCH_type> s_exponential;
  static SlotSwap<cauchy_stub_DECLARE_DISPATCH_type> s_cauchy;
  static SlotSwap<log_normal_stub_DECLARE_DISPATCH_type> s_log_normal;
  static SlotSwap<geometric_stub_DECLARE_DISPATCH_type> s_geometric;
  static SlotSwap<bernoulli_stub_DECLARE_DISPATCH_type> s_bernoulli;
  const bool was = active;
  if (on == active) return was;
  s_uniform.swap(uniform_stub, &uniform_kernel<HostLaunch>, on);
  s_normal.swap(normal_stub, &normal_kernel<HostLaunch>, on);
  s_random.swap(random_from_to_stub, &random_from_to_kernel<HostLaunch>, on);
  s_exponential.swap(exponential_stub, &exponential_kernel<HostLaunch>, on);
  s_cauchy.swap(cauchy_stub, &cauchy_kernel<HostLaunch>, on);
  s_log_normal.swap(log_normal_stub, &log_normal_kernel<HostLaunch>, on);
  s_geometric.swap(geometric_stub, &geometric_kernel<HostLaunch>, on);
  s_bernoulli.swap(bernoulli_stub, &bernoulli_kernel<HostLaunch>, on);
  active = on;
  return was;
}

}  // namespace ember::at::native::cuda_emulation
