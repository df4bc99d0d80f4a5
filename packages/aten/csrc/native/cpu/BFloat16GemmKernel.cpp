// bfloat16 GEMM on the CPU (see ../BFloat16Gemm.h): float32 sums, C rounded once.
//
// The blocking of Goto's GEMM (as BLIS and OpenBLAS do it), per thread panel of C:
//
//   for each NC columns of C
//     for each KC of the inner dimension      pack B's KC x NC block: NR-column micro-panels
//       for each MC rows of C                 pack A's MC x KC block: MR-row micro-panels
//         for each NR columns, MR rows        micro-kernel: one MR x NR tile of sums in registers
//
// A micro-panel is k-major, so the micro-kernel reads both operands front to back: one
// B micro-panel stays in L1 while the A micro-panels of the block stream from L2. Packing
// is where op(A) / op(B)'s strides, transposes and edges are handled (zero rows / columns
// pad the last micro-panels), so one micro-kernel serves every layout.
//
// The two micro-kernels differ in what a packed panel holds:
//   Avx512Bf16  32-bit words, each a pair of bfloat16 (p, p + 1) of one row of A or one
//               column of B (p even in the low half). vdpbf16ps multiplies 16 such pairs
//               of B by one broadcast pair of A and adds both products into 16 float32
//               sums. An odd K's last pair is (p, 0).
//   Fallback    float32, converted while packing (bfloat16 -> float32 is exact), and
//               fused multiply-adds on Vectorized<float>.
// A K longer than KC keeps the sums of its blocks in a float32 workspace of whole tiles (the
// micro-kernel starts from them); the last block's sums go to a small buffer, and store_tile
// applies alpha and beta and writes C, so every element of C is rounded once.
#include <algorithm>
#include <cstring>
#include <memory>

#if defined(CPU_CAPABILITY_AVX512)
#include <immintrin.h>
#endif

#include <ember/aten/Parallel.h>
#include <ember/aten/vec/Vectorized.h>

#include "../BFloat16Gemm.h"
#include "../Blas.h"

namespace ember::at::native {
inline namespace CPU_CAPABILITY {
namespace {

using vec::Vectorized;

struct GemmArgs {
  bool ta, tb;
  int64_t m, n, k;
  float alpha;
  const uint16_t* a;
  int64_t lda;
  const uint16_t* b;
  int64_t ldb;
  float beta;
  void* c;
  int64_t ldc;
  bool c_float;

  // op(A)[i, p] and op(B)[p, j], as bfloat16 bits
  uint16_t a_at(int64_t i, int64_t p) const { return ta ? a[p * lda + i] : a[i * lda + p]; }
  uint16_t b_at(int64_t p, int64_t j) const { return tb ? b[j * ldb + p] : b[p * ldb + j]; }
};

inline float bf16_bits_to_float(uint16_t h) {
  const uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

#if defined(CPU_CAPABILITY_AVX512)
// sum[0 .. count) rounded to bfloat16 as c10::BFloat16 does (to nearest, ties to even, every
// NaN the canonical 0x7fc0), 16 at a time
void round_to_bf16(const float* sum, uint16_t* out, int64_t count) {
  const __m512i bias = _mm512_set1_epi32(0x7fff), one = _mm512_set1_epi32(1), qnan = _mm512_set1_epi32(0x7fc0);
  for (int64_t j = 0; j < count; j += 16) {
    const __mmask16 live = count - j >= 16 ? __mmask16(0xffff) : __mmask16((1u << (count - j)) - 1u);
    const __m512 v = _mm512_maskz_loadu_ps(live, sum + j);
    const __m512i x = _mm512_castps_si512(v);
    const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(x, 16), one);
    __m512i r = _mm512_srli_epi32(_mm512_add_epi32(x, _mm512_add_epi32(bias, odd)), 16);
    r = _mm512_mask_mov_epi32(r, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), qnan);
    _mm256_mask_storeu_epi16(out + j, live, _mm512_cvtepi32_epi16(r));
  }
}
#else
void round_to_bf16(const float* sum, uint16_t* out, int64_t count) {
  for (int64_t j = 0; j < count; ++j) out[j] = c10::detail::fp32_to_bf16(sum[j]);
}
#endif

// Finishes one mr x nr tile of sums (rows i0.., columns j0.. of C): alpha, beta C, C written.
void store_tile(const GemmArgs& g, const float* tile, int64_t ldt, int64_t i0, int64_t j0, int64_t mr, int64_t nr) {
  for (int64_t r = 0; r < mr; ++r) {
    const float* t = tile + r * ldt;
    float sum[64];  // nr <= 64 (the widest tile)
    for (int64_t j = 0; j < nr; ++j) sum[j] = g.alpha * t[j];
    if (g.c_float) {
      float* cr = static_cast<float*>(g.c) + (i0 + r) * g.ldc + j0;
      if (g.beta == 0.0f) {
        std::memcpy(cr, sum, static_cast<size_t>(nr) * sizeof(float));
      } else {
        for (int64_t j = 0; j < nr; ++j) cr[j] = sum[j] + g.beta * cr[j];
      }
    } else {
      uint16_t* cr = static_cast<uint16_t*>(g.c) + (i0 + r) * g.ldc + j0;
      if (g.beta != 0.0f) {
        for (int64_t j = 0; j < nr; ++j) sum[j] += g.beta * bf16_bits_to_float(cr[j]);
      }
      round_to_bf16(sum, cr, nr);
    }
  }
}

// ---- fallback: float32 panels, Vectorized<float> fused multiply-adds ------------------------
struct Fallback {
  using Packed = float;
  static constexpr int kLanes = Vectorized<float>::size();
  static constexpr int64_t MR = kLanes >= 16 ? 14 : 6;  // 2 * MR sums + 2 of B in the registers
  static constexpr int64_t NR = 2 * kLanes;
  static constexpr int64_t KC = 256, MC = MR * 12, NC = 2048;

  static int64_t packed_k(int64_t kc) { return kc; }

  // rows r0 .. r0 + n, columns p0 .. p0 + kc of a panel of an operand, as float32:
  // dst[p * width + r], zero past n. Element (r, p) is at m[(p0 + p) * ld + r0 + r] when
  // k_major (the panel's rows contiguous), else at m[(r0 + r) * ld + p0 + p].
  static void pack_panel(const uint16_t* m, int64_t ld, bool k_major, int64_t r0, int64_t n, int64_t p0, int64_t kc,
                         int64_t width, float* dst) {
    if (n < width) std::fill(dst, dst + kc * width, 0.0f);
    if (k_major) {
      for (int64_t p = 0; p < kc; ++p) {
        const uint16_t* src = m + (p0 + p) * ld + r0;
        for (int64_t r = 0; r < n; ++r) dst[p * width + r] = bf16_bits_to_float(src[r]);
      }
    } else {
      for (int64_t r = 0; r < n; ++r) {
        const uint16_t* src = m + (r0 + r) * ld + p0;
        for (int64_t p = 0; p < kc; ++p) dst[p * width + r] = bf16_bits_to_float(src[p]);
      }
    }
  }

  // rows i0 .. i0 + mr of op(A), columns p0 .. p0 + kc: dst[p * MR + r]
  static void pack_a(const GemmArgs& g, int64_t i0, int64_t mr, int64_t p0, int64_t kc, float* dst) {
    pack_panel(g.a, g.lda, g.ta, i0, mr, p0, kc, MR, dst);
  }

  // rows p0 .. p0 + kc of op(B), columns j0 .. j0 + nr: dst[p * NR + j]
  static void pack_b(const GemmArgs& g, int64_t p0, int64_t kc, int64_t j0, int64_t nr, float* dst) {
    pack_panel(g.b, g.ldb, !g.tb, j0, nr, p0, kc, NR, dst);
  }

  // out (MR x NR, leading dimension ldo) = init (or 0 where null) + the panels' products
  static void micro(int64_t kc, const float* a, const float* b, const float* init, int64_t ldi, float* out,
                    int64_t ldo) {
    using Vec = Vectorized<float>;
    Vec c0[MR], c1[MR];
    for (int64_t r = 0; r < MR; ++r) {
      c0[r] = init ? Vec::loadu(init + r * ldi) : Vec(0.0f);
      c1[r] = init ? Vec::loadu(init + r * ldi + kLanes) : Vec(0.0f);
    }
    for (int64_t p = 0; p < kc; ++p, a += MR, b += NR) {
      const Vec b0 = Vec::loadu(b), b1 = Vec::loadu(b + kLanes);
#pragma GCC unroll 16
      for (int64_t r = 0; r < MR; ++r) {
        const Vec av(a[r]);
        c0[r] = vec::fmadd(av, b0, c0[r]);
        c1[r] = vec::fmadd(av, b1, c1[r]);
      }
    }
    for (int64_t r = 0; r < MR; ++r) {
      c0[r].store(out + r * ldo);
      c1[r].store(out + r * ldo + kLanes);
    }
  }
};

#if defined(CPU_CAPABILITY_AVX512)
// ---- avx512_bf16: bfloat16 pairs, vdpbf16ps ---------------------------------------------------
struct Avx512Bf16 {
  using Packed = uint32_t;
  static constexpr int64_t MR = 14, NR = 32;                   // 28 sums + 2 of B + the broadcast: 31 of 32 zmm
  static constexpr int64_t KC = 512, MC = MR * 12, NC = 2048;  // KC even: blocks start on a pair

  static int64_t packed_k(int64_t kc) { return (kc + 1) / 2; }
  static uint32_t pair(uint16_t lo, uint16_t hi) { return static_cast<uint32_t>(lo) | static_cast<uint32_t>(hi) << 16; }

  // rows i0 .. i0 + mr of op(A), columns p0 .. p0 + kc: dst[q * MR + r] = (p0 + 2q, p0 + 2q + 1)
  static void pack_a(const GemmArgs& g, int64_t i0, int64_t mr, int64_t p0, int64_t kc, uint32_t* dst) {
    const int64_t kp = packed_k(kc), even = kc / 2;
    if (mr < MR) std::fill(dst, dst + kp * MR, 0u);
    if (g.ta) {  // rows p of A^T are contiguous over i
      for (int64_t q = 0; q < even; ++q) {
        const uint16_t* lo = g.a + (p0 + 2 * q) * g.lda + i0;
        const uint16_t* hi = lo + g.lda;
        for (int64_t r = 0; r < mr; ++r) dst[q * MR + r] = pair(lo[r], hi[r]);
      }
      if (kc & 1) {
        const uint16_t* lo = g.a + (p0 + kc - 1) * g.lda + i0;
        for (int64_t r = 0; r < mr; ++r) dst[even * MR + r] = lo[r];
      }
    } else {  // a pair is one 32-bit word of A's row; the rows are read side by side
      const uint16_t* src[MR];
      for (int64_t r = 0; r < mr; ++r) src[r] = g.a + (i0 + r) * g.lda + p0;
      if (mr == MR) {
        for (int64_t q = 0; q < even; ++q) {
#pragma GCC unroll 14
          for (int64_t r = 0; r < MR; ++r) std::memcpy(dst + q * MR + r, src[r] + 2 * q, sizeof(uint32_t));
        }
      } else {
        for (int64_t q = 0; q < even; ++q)
          for (int64_t r = 0; r < mr; ++r) std::memcpy(dst + q * MR + r, src[r] + 2 * q, sizeof(uint32_t));
      }
      if (kc & 1) {
        for (int64_t r = 0; r < mr; ++r) dst[even * MR + r] = src[r][kc - 1];
      }
    }
  }

  // rows p0 .. p0 + kc of op(B), columns j0 .. j0 + nr: dst[q * NR + j] = (p0 + 2q, p0 + 2q + 1)
  static void pack_b(const GemmArgs& g, int64_t p0, int64_t kc, int64_t j0, int64_t nr, uint32_t* dst) {
    const int64_t kp = packed_k(kc), even = kc / 2;
    if (nr < NR) std::fill(dst, dst + kp * NR, 0u);
    if (!g.tb) {  // two rows of B interleaved
      for (int64_t q = 0; q < even; ++q) {
        const uint16_t* lo = g.b + (p0 + 2 * q) * g.ldb + j0;
        const uint16_t* hi = lo + g.ldb;
        for (int64_t j = 0; j < nr; ++j) dst[q * NR + j] = pair(lo[j], hi[j]);
      }
      if (kc & 1) {
        const uint16_t* lo = g.b + (p0 + kc - 1) * g.ldb + j0;
        for (int64_t j = 0; j < nr; ++j) dst[even * NR + j] = lo[j];
      }
    } else {  // a pair is one 32-bit word of B^T's row
      for (int64_t j = 0; j < nr; ++j) {
        const uint16_t* src = g.b + (j0 + j) * g.ldb + p0;
        for (int64_t q = 0; q < even; ++q) {
          uint32_t w;
          std::memcpy(&w, src + 2 * q, sizeof w);
          dst[q * NR + j] = w;
        }
        if (kc & 1) dst[even * NR + j] = src[kc - 1];
      }
    }
  }

  // out (MR x NR, leading dimension ldo) = init (or 0 where null) + the panels' products
  __attribute__((target("avx512f,avx512bf16"))) static void micro(int64_t kp, const uint32_t* a, const uint32_t* b,
                                                                  const float* init, int64_t ldi, float* out,
                                                                  int64_t ldo) {
    __m512 c0[MR], c1[MR];
#pragma GCC unroll 14
    for (int64_t r = 0; r < MR; ++r) {
      c0[r] = init ? _mm512_loadu_ps(init + r * ldi) : _mm512_setzero_ps();
      c1[r] = init ? _mm512_loadu_ps(init + r * ldi + 16) : _mm512_setzero_ps();
    }
    for (int64_t q = 0; q < kp; ++q, a += MR, b += NR) {
      const __m512bh b0 = (__m512bh)_mm512_loadu_si512(b);
      const __m512bh b1 = (__m512bh)_mm512_loadu_si512(b + 16);
#pragma GCC unroll 14
      for (int64_t r = 0; r < MR; ++r) {
        const __m512bh av = (__m512bh)_mm512_set1_epi32(static_cast<int>(a[r]));
        c0[r] = _mm512_dpbf16_ps(c0[r], av, b0);
        c1[r] = _mm512_dpbf16_ps(c1[r], av, b1);
      }
    }
#pragma GCC unroll 14
    for (int64_t r = 0; r < MR; ++r) {
      _mm512_storeu_ps(out + r * ldo, c0[r]);
      _mm512_storeu_ps(out + r * ldo + 16, c1[r]);
    }
  }
};
#endif

// Rows r0 .. r1 and columns c0 .. c1 of C, on the calling thread.
template <typename K>
void gemm_panel(const GemmArgs& g, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
  using P = typename K::Packed;
  constexpr int64_t MR = K::MR, NR = K::NR;
  const int64_t kp_max = K::packed_k(std::min(K::KC, g.k));
  const int64_t mc_max = std::min(K::MC, r1 - r0), nc_max = std::min(K::NC, c1 - c0);
  std::unique_ptr<P[]> pa(new P[round_up(mc_max, MR) * kp_max]);
  std::unique_ptr<P[]> pb(new P[round_up(nc_max, NR) * kp_max]);
  // the sums of the K blocks before the last, in whole tiles
  const bool blocks_k = g.k > K::KC;
  const int64_t ldw = round_up(nc_max, NR);
  std::unique_ptr<float[]> w(blocks_k ? new float[round_up(r1 - r0, MR) * ldw] : nullptr);
  alignas(64) float tile[MR * NR];
  for (int64_t jc = c0; jc < c1; jc += K::NC) {
    const int64_t nc = std::min(K::NC, c1 - jc);
    for (int64_t pc = 0; pc < g.k; pc += K::KC) {
      const int64_t kc = std::min(K::KC, g.k - pc), kp = K::packed_k(kc);
      const bool first = pc == 0, last = pc + kc >= g.k;
      for (int64_t jr = 0; jr < nc; jr += NR) {
        K::pack_b(g, pc, kc, jc + jr, std::min(NR, nc - jr), pb.get() + jr / NR * kp * NR);
      }
      for (int64_t ic = r0; ic < r1; ic += K::MC) {
        const int64_t mc = std::min(K::MC, r1 - ic);
        for (int64_t ir = 0; ir < mc; ir += MR) {
          K::pack_a(g, ic + ir, std::min(MR, mc - ir), pc, kc, pa.get() + ir / MR * kp * MR);
        }
        for (int64_t jr = 0; jr < nc; jr += NR) {
          for (int64_t ir = 0; ir < mc; ir += MR) {
            const P* ap = pa.get() + ir / MR * kp * MR;
            const P* bp = pb.get() + jr / NR * kp * NR;
            float* wt = blocks_k ? w.get() + (ic + ir - r0) * ldw + jr : nullptr;
            if (!last) {
              K::micro(kp, ap, bp, first ? nullptr : wt, ldw, wt, ldw);
            } else {
              K::micro(kp, ap, bp, first ? nullptr : wt, ldw, tile, NR);
              store_tile(g, tile, NR, ic + ir, jc + jr, std::min(MR, mc - ir), std::min(NR, nc - jr));
            }
          }
        }
      }
    }
  }
}

// One panel of C per thread (gemm_cpu's policy, Blas.h): rows when C is taller than wide,
// else columns, in whole tiles; the panels depend on the shape and the threads only.
template <typename K>
void gemm_threads(const GemmArgs& g) {
  const int64_t threads = get_num_threads();
  if (threads <= 1 || in_parallel_region() || g.m * g.n * g.k <= kBlasSerialWork) {
    gemm_panel<K>(g, 0, g.m, 0, g.n);
    return;
  }
  const bool by_rows = g.m > g.n;
  const int64_t extent = by_rows ? g.m : g.n, align = by_rows ? K::MR : K::NR;
  const int64_t panels = std::min<int64_t>(threads, std::max<int64_t>(1, extent / align));
  const int64_t step = round_up((extent + panels - 1) / panels, align);
  parallel_for(0, panels, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t lo = p * step, hi = std::min(extent, lo + step);
      if (lo >= hi) continue;
      if (by_rows) {
        gemm_panel<K>(g, lo, hi, 0, g.n);
      } else {
        gemm_panel<K>(g, 0, g.m, lo, hi);
      }
    }
  });
}

void bf16_gemm_kernel(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const c10::BFloat16* a,
                      int64_t lda, const c10::BFloat16* b, int64_t ldb, float beta, void* c, int64_t ldc,
                      bool c_float) {
  if (m == 0 || n == 0) return;
  const GemmArgs g{
      ta,  tb,   m, n,   k,      alpha, reinterpret_cast<const uint16_t*>(a), lda, reinterpret_cast<const uint16_t*>(b),
      ldb, beta, c, ldc, c_float};
  if (k == 0) {  // C = beta C (beta == 0: zeros)
    const float zero[64] = {};
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; j += 64) store_tile(g, zero, 0, i, j, 1, std::min<int64_t>(64, n - j));
    return;
  }
#if defined(CPU_CAPABILITY_AVX512)
  if (bf16_gemm_may_use_avx512_bf16()) {
    gemm_threads<Avx512Bf16>(g);
    return;
  }
#endif
  gemm_threads<Fallback>(g);
}

}  // namespace
}  // namespace CPU_CAPABILITY

REGISTER_DISPATCH(bf16_gemm_stub, &bf16_gemm_kernel);

}  // namespace ember::at::native
