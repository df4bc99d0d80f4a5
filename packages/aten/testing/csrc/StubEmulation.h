#pragma once
// The switch of the host emulations (AttentionEmulation.cu, SoftMaxEmulation.cu, ...): puts a
// function into every CPU slot of one of libember_aten's DispatchStubs, so that the CPU tests
// run it on CPU tensors, and puts the CPU kernels back. The slots are the stubs' static
// members, exported by libember_aten.so, so this module writes the very slots ember.aten reads.

#include <array>

#include <ember/aten/native/DispatchStub.h>

namespace ember::at::native::cuda_emulation {

template <typename StubT>
struct SlotSwap {
  using FnPtr = typename StubT::FnPtr;
  using Base = DispatchStub<FnPtr, StubT>;
  std::array<FnPtr, 3> saved{};

  // on: fn in every CPU slot (the CPU kernels saved); off: the saved kernels back.
  void swap(StubT& stub, FnPtr fn, bool on) {
    if (on) {
      saved = {Base::DEFAULT, Base::AVX2, Base::AVX512};
      Base::DEFAULT = Base::AVX2 = Base::AVX512 = fn;
    } else {
      Base::DEFAULT = saved[0];
      Base::AVX2 = saved[1];
      Base::AVX512 = saved[2];
    }
    stub.reset_cpu();
  }
};

}  // namespace ember::at::native::cuda_emulation
