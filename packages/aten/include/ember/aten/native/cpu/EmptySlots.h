#pragma once
// Included first by the lowest copy of each csrc/native/cpu/ kernel file in a build without
// the baseline (EMBER_CPU_BASELINE=OFF, e.g. the demo's AVX2-only build): each
// REGISTER_DISPATCH of that copy then also defines the slots of the capabilities not built
// -- DEFAULT among them -- empty, so that every stub links and DispatchStub runs the copy
// built. BaselineOnly.h does the same for the DEFAULT copy of a build with the baseline
// (kept byte for byte as it was, so that the compiler cache of those builds stays valid).

#include <ember/aten/native/DispatchStub.h>

#if !defined(CPU_CAPABILITY)
#error "EmptySlots.h belongs to a CPU-capability copy of a kernel file"
#endif

#define EMBER_EMPTY_SLOT_(name, arch) \
  template <>                         \
  name##_DECLARE_DISPATCH_type::FnPtr EMBER_STUB_SLOT_(name, arch) = nullptr;
#if defined(EMBER_CPU_CAPABILITY_DEFAULT_EMPTY)
#define EMBER_EMPTY_SLOT_DEFAULT_(name) EMBER_EMPTY_SLOT_(name, DEFAULT)
#else
#define EMBER_EMPTY_SLOT_DEFAULT_(name)
#endif
#if defined(EMBER_CPU_CAPABILITY_AVX2_EMPTY)
#define EMBER_EMPTY_SLOT_AVX2_(name) EMBER_EMPTY_SLOT_(name, AVX2)
#else
#define EMBER_EMPTY_SLOT_AVX2_(name)
#endif
#if defined(EMBER_CPU_CAPABILITY_AVX512_EMPTY)
#define EMBER_EMPTY_SLOT_AVX512_(name) EMBER_EMPTY_SLOT_(name, AVX512)
#else
#define EMBER_EMPTY_SLOT_AVX512_(name)
#endif

// DispatchStub.h's REGISTER_DISPATCH, preceded by the empty slots.
#undef REGISTER_DISPATCH
#define REGISTER_DISPATCH(name, fn)                                                                                    \
  EMBER_EMPTY_SLOT_DEFAULT_(name)                                                                                      \
  EMBER_EMPTY_SLOT_AVX2_(name)                                                                                         \
  EMBER_EMPTY_SLOT_AVX512_(name)                                                                                       \
  template <>                                                                                                          \
  name##_DECLARE_DISPATCH_type::FnPtr::ember::at::native::DispatchStub<name##_DECLARE_DISPATCH_type::FnPtr,            \
                                                                       name##_DECLARE_DISPATCH_type>::CPU_CAPABILITY = \
      fn
