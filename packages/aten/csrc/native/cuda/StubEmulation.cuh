#pragma once
// Host emulation of CUDA kernels (IndexingTesting.cu, Distributions.cu, SoftMax.cu, ...): puts a
// function into every CPU slot of a DispatchStub, so that the CPU tests run it on CPU
// tensors, and puts the CPU kernels back.

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
