#pragma once
// The frame of the headers that hold one formula for the CPU kernel and the CUDA kernel
// (ScalarMath.h, IntPow.h, BinaryOpsMath.h, ...): EMBER_HOST_DEVICE functions, compiled
// by the C++ compiler for the CPU and by nvcc for host and device.
//
// A CPU kernel file (cpu/*.cpp) is compiled once per capability (DispatchStub.h), each
// copy with its own -m flags and its code inside `inline namespace CPU_CAPABILITY`. A
// shared formula that such a file includes must sit in that namespace too: an inline
// function outside it would exist once per copy under one name, and the linker could
// let the AVX-512 copy serve the baseline kernel. EMBER_FORMULAS_BEGIN / _END open and
// close the capability's namespace in a CPU kernel and nothing elsewhere.
#include <ember/c10/Macros.h>

#if defined(CPU_CAPABILITY)
#define EMBER_FORMULAS_BEGIN inline namespace CPU_CAPABILITY {
#define EMBER_FORMULAS_END }
#else
#define EMBER_FORMULAS_BEGIN
#define EMBER_FORMULAS_END
#endif
