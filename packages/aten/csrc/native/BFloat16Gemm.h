#pragma once
// bfloat16 matrix products on the CPU: C = alpha op(A) op(B) + beta C with bfloat16 A and
// B, every product accumulated in float32 and C rounded once at the end (to nearest, ties
// to even, as c10::BFloat16) -- or written as float32 (c_float). Row-major operands as
// gemm_cpu's (Blas.h): op(A)[i, p] is a[i * lda + p] or, transposed, a[p * lda + i].
// beta == 0: C is only written (NaN in it does not propagate). k == 0: C = beta C.
//
// The kernel (cpu/BFloat16GemmKernel.cpp) is blocked and packed as BLAS's are, with two
// micro-kernels:
//   avx512_bf16  the AVX512 copy on a CPU with avx512_bf16: vdpbf16ps, 16 float32 sums
//                per instruction, each adding two bfloat16 products;
//   fallback     every other CPU and capability: the panels are converted to float32
//                while packing, and float32 fused multiply-adds do the rest.
// EMBER_BF16_GEMM_KERNEL=fallback (read once) or _C._set_bf16_gemm_kernel("fallback")
// forces the fallback on every CPU (tests compare both); "auto" restores the choice.
// Splits itself over the OpenMP threads; on the calling thread inside a parallel region.

#include <string>

#include <ember/aten/Tensor.h>
#include <ember/aten/native/DispatchStub.h>

namespace ember::at::native {

using bf16_gemm_fn = void (*)(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                              const c10::BFloat16* a, int64_t lda, const c10::BFloat16* b, int64_t ldb, float beta,
                              void* c, int64_t ldc, bool c_float);
DECLARE_DISPATCH(bf16_gemm_fn, bf16_gemm_stub);

// Whether the CPU has avx512_bf16 (cpuid, once).
bool cpu_has_avx512_bf16();
// Whether the vdpbf16ps micro-kernel may run: the CPU has it and the fallback is not forced.
bool bf16_gemm_may_use_avx512_bf16();
// The micro-kernel bfloat16 products use now ("avx512_bf16" or "fallback"), and the switch.
std::string bf16_gemm_kernel_name();
void set_bf16_gemm_kernel(const std::string& name);  // "auto" or "fallback"

}  // namespace ember::at::native
