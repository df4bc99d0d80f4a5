#pragma once
// Included first by the baseline (DEFAULT) copy of each csrc/native/cpu/ kernel file when
// the build leaves vector capabilities out (not x86-64, or EMBER_CPU_CAPABILITIES): each
// REGISTER_DISPATCH of that copy then also defines the slots of the capabilities not
// built, empty, so that every stub links and DispatchStub runs the baseline there. The
// kernel files themselves, and DispatchStub.h, stay as they are.

#include <ember/aten/native/DispatchStub.h>

#if !defined(CPU_CAPABILITY_DEFAULT)
#error "BaselineOnly.h belongs to the DEFAULT copy of a kernel file"
#endif

#if defined(EMBER_CPU_CAPABILITY_AVX2_EMPTY)
#define EMBER_EMPTY_SLOT_AVX2_(name) \
  template <>                        \
  name##_DECLARE_DISPATCH_type::FnPtr EMBER_STUB_SLOT_(name, AVX2) = nullptr;
#else
#define EMBER_EMPTY_SLOT_AVX2_(name)
#endif
#if defined(EMBER_CPU_CAPABILITY_AVX512_EMPTY)
#define EMBER_EMPTY_SLOT_AVX512_(name) \
  template <>                          \
  name##_DECLARE_DISPATCH_type::FnPtr EMBER_STUB_SLOT_(name, AVX512) = nullptr;
#else
#define EMBER_EMPTY_SLOT_AVX512_(name)
#endif

// DispatchStub.h's REGISTER_DISPATCH, preceded by the empty slots.
#undef REGISTER_DISPATCH
#define REGISTER_DISPATCH(name, fn)                                                                         \
  EMBER_EMPTY_SLOT_AVX2_(name)                                                                              \
  EMBER_EMPTY_SLOT_AVX512_(name)                                                                            \
  template <>                                                                                               \
  name##_DECLARE_DISPATCH_type::FnPtr::ember::at::native::DispatchStub<name##_DECLARE_DISPATCH_type::FnPtr, \
                                                                       name##_DECLARE_DISPATCH_type>::DEFAULT = fn
