// CRC-32 (Crc32.h). Notation: a message is a polynomial over GF(2) whose first bit is
// the highest power; CRC-32's register is the remainder of message * x^32 modulo
// P = 0x104C11DB7, in reflected bit order (bit 0 of the first byte is the highest
// power). The folding path works on 128-bit blocks in that order: a register R with
// bits r_0..r_127 (r_0 the lowest bit of the first byte) stands for sum r_i x^(127-i),
// so its low quadword holds the upper half of the powers. A carry-less multiply of two
// quadwords read that way yields x * Q * C (one spare power: bit 0 of the product stays
// clear), which is why every fold constant below is x^(n-1) mod P.
#include <ember/aten/Crc32.h>

#include <array>
#include <cstring>

#if defined(__x86_64__) || defined(_M_X64)
#define EMBER_CRC32_CLMUL 1
#include <immintrin.h>
#endif

namespace ember::at {
namespace {

constexpr uint32_t kReflectedPoly = 0xEDB88320u;

// kTables[k][b]: the register after the byte b followed by k zero bytes (slice-by-8)
struct Tables {
  std::array<std::array<uint32_t, 256>, 8> t{};
  Tables() {
    for (uint32_t b = 0; b < 256; ++b) {
      uint32_t c = b;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kReflectedPoly : c >> 1;
      t[0][b] = c;
    }
    for (uint32_t b = 0; b < 256; ++b)
      for (int k = 1; k < 8; ++k) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xff];
  }
};
const Tables& tables() {
  static const Tables tb;
  return tb;
}

// The register (without the initial/final inversion) after the bytes p[0, n).
uint32_t crc_tables(uint32_t reg, const unsigned char* p, size_t n) {
  const auto& t = tables().t;
  for (; n >= 8; n -= 8, p += 8) {
    uint32_t lo, hi;
    std::memcpy(&lo, p, 4);  // little-endian hosts (every target ember builds for)
    std::memcpy(&hi, p + 4, 4);
    lo ^= reg;
    reg = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^ t[3][hi & 0xff] ^
          t[2][(hi >> 8) & 0xff] ^ t[1][(hi >> 16) & 0xff] ^ t[0][hi >> 24];
  }
  for (; n > 0; --n, ++p) reg = (reg >> 8) ^ t[0][(reg ^ *p) & 0xff];
  return reg;
}

#ifdef EMBER_CRC32_CLMUL

// x^n mod P as a quadword in the reflected reading above (the coefficient of x^d at bit 63 - d).
uint64_t xpow_mod_p(int n) {
  uint64_t r = 1;  // bit d = coefficient of x^d
  for (int i = 0; i < n; ++i) {
    r <<= 1;
    if (r & (uint64_t{1} << 32)) r ^= 0x104C11DB7ull;
  }
  uint64_t q = 0;
  for (int d = 0; d < 32; ++d)
    if (r & (uint64_t{1} << d)) q |= uint64_t{1} << (63 - d);
  return q;
}

// Multiplying a block by x^(128 k): its upper half (low quadword) by x^(64 + 128 k) and
// its lower half by x^(128 k), both mod P; each product has degree < 96, so it fits.
struct FoldConstants {
  uint64_t hi[9], lo[9];  // for k = 1..8
  FoldConstants() {
    for (int k = 1; k <= 8; ++k) {
      hi[k] = xpow_mod_p(64 + 128 * k - 1);
      lo[k] = xpow_mod_p(128 * k - 1);
    }
  }
};
const FoldConstants& fold_constants() {
  static const FoldConstants c;
  return c;
}

__attribute__((target("pclmul,sse4.1"))) inline __m128i fold(__m128i a, __m128i k) {
  return _mm_xor_si128(_mm_clmulepi64_si128(a, k, 0x00), _mm_clmulepi64_si128(a, k, 0x11));
}

// The register after p[0, n), n >= 64 (copied to dst on the way when dst is not null:
// one pass over the bytes instead of a copy and a checksum pass). The running register
// enters as an xor into the first four bytes (what a register holds is exactly that),
// the 128-bit blocks are folded four at a time into four accumulators, then into one,
// and the remainder of x^32 times the last one is taken with the byte tables; the tail
// after it too.
__attribute__((target("pclmul,sse4.1"))) uint32_t crc_clmul(uint32_t reg, const unsigned char* p, size_t n,
                                                            unsigned char* dst) {
  const FoldConstants& c = fold_constants();
  auto load = [&](size_t at) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + at));
    if (dst != nullptr) _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + at), v);
    return v;
  };
  auto consts = [&](int k) { return _mm_set_epi64x(static_cast<long long>(c.lo[k]), static_cast<long long>(c.hi[k])); };
  __m128i a0 = _mm_xor_si128(load(0), _mm_cvtsi32_si128(static_cast<int>(reg)));
  __m128i a1 = load(16), a2 = load(32), a3 = load(48);
  size_t i = 64;
  const __m128i k4 = consts(4);
  for (; i + 64 <= n; i += 64) {
    a0 = _mm_xor_si128(fold(a0, k4), load(i));
    a1 = _mm_xor_si128(fold(a1, k4), load(i + 16));
    a2 = _mm_xor_si128(fold(a2, k4), load(i + 32));
    a3 = _mm_xor_si128(fold(a3, k4), load(i + 48));
  }
  __m128i a =
      _mm_xor_si128(_mm_xor_si128(fold(a0, consts(3)), fold(a1, consts(2))), _mm_xor_si128(fold(a2, consts(1)), a3));
  const __m128i k1 = consts(1);
  for (; i + 16 <= n; i += 16) a = _mm_xor_si128(fold(a, k1), load(i));
  if (dst != nullptr) std::memcpy(dst + i, p + i, n - i);
  unsigned char last[16];
  _mm_storeu_si128(reinterpret_cast<__m128i*>(last), a);
  return crc_tables(crc_tables(0, last, 16), p + i, n - i);
}

// The same with 256-bit carry-less multiplies (VPCLMULQDQ on AVX2 registers: two blocks per
// instruction), 128 bytes a step in eight accumulators (two per register), n >= 128: twice
// the 128-bit path's throughput, enough that copy_crc32 runs at the speed of a copy.
__attribute__((target("vpclmulqdq,avx2,pclmul,sse4.1"))) inline __m256i fold256(__m256i a, __m256i k) {
  return _mm256_xor_si256(_mm256_clmulepi64_epi128(a, k, 0x00), _mm256_clmulepi64_epi128(a, k, 0x11));
}

inline unsigned char* dst_at(unsigned char* dst, size_t at) { return dst == nullptr ? nullptr : dst + at; }

// 32 bytes at p (also stored at dst when dst is not null)
__attribute__((target("vpclmulqdq,avx2,pclmul,sse4.1"))) inline __m256i load_copy256(const unsigned char* p,
                                                                                     unsigned char* dst) {
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  if (dst != nullptr) _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), v);
  return v;
}

__attribute__((target("vpclmulqdq,avx2,pclmul,sse4.1"))) uint32_t crc_vclmul(uint32_t reg, const unsigned char* p,
                                                                             size_t n, unsigned char* dst) {
  const FoldConstants& c = fold_constants();
  auto consts = [&](int k) { return _mm_set_epi64x(static_cast<long long>(c.lo[k]), static_cast<long long>(c.hi[k])); };
  const __m256i k8 = _mm256_broadcastsi128_si256(consts(8));
  __m256i a0 = _mm256_xor_si256(load_copy256(p + 0, dst_at(dst, 0)),
                                _mm256_set_m128i(_mm_setzero_si128(), _mm_cvtsi32_si128(static_cast<int>(reg))));
  __m256i a1 = load_copy256(p + 32, dst_at(dst, 32)), a2 = load_copy256(p + 64, dst_at(dst, 64)),
          a3 = load_copy256(p + 96, dst_at(dst, 96));
  size_t i = 128;
  for (; i + 128 <= n; i += 128) {
    a0 = _mm256_xor_si256(fold256(a0, k8), load_copy256(p + i, dst_at(dst, i)));
    a1 = _mm256_xor_si256(fold256(a1, k8), load_copy256(p + i + 32, dst_at(dst, i + 32)));
    a2 = _mm256_xor_si256(fold256(a2, k8), load_copy256(p + i + 64, dst_at(dst, i + 64)));
    a3 = _mm256_xor_si256(fold256(a3, k8), load_copy256(p + i + 96, dst_at(dst, i + 96)));
  }
  // blocks b0..b7 in message order (the low lane first), block j folded by 7 - j blocks
  const __m128i b[8] = {_mm256_castsi256_si128(a0), _mm256_extracti128_si256(a0, 1),
                        _mm256_castsi256_si128(a1), _mm256_extracti128_si256(a1, 1),
                        _mm256_castsi256_si128(a2), _mm256_extracti128_si256(a2, 1),
                        _mm256_castsi256_si128(a3), _mm256_extracti128_si256(a3, 1)};
  __m128i a = b[7];
  for (int j = 0; j < 7; ++j) a = _mm_xor_si128(a, fold(b[j], consts(7 - j)));
  const __m128i k1 = consts(1);
  for (; i + 16 <= n; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
    if (dst != nullptr) _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), v);
    a = _mm_xor_si128(fold(a, k1), v);
  }
  if (dst != nullptr) std::memcpy(dst + i, p + i, n - i);
  unsigned char last[16];
  _mm_storeu_si128(reinterpret_cast<__m128i*>(last), a);
  return crc_tables(crc_tables(0, last, 16), p + i, n - i);
}

bool has_clmul() {
  static const bool yes = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
  return yes;
}

bool has_vclmul() {
  static const bool yes = has_clmul() && __builtin_cpu_supports("vpclmulqdq") && __builtin_cpu_supports("avx2");
  return yes;
}

#endif

}  // namespace

uint32_t crc32(const void* data, size_t n, uint32_t crc) {
  const auto* p = static_cast<const unsigned char*>(data);
#ifdef EMBER_CRC32_CLMUL
  if (n >= 128 && has_vclmul()) return ~crc_vclmul(~crc, p, n, nullptr);
  if (n >= 64 && has_clmul()) return ~crc_clmul(~crc, p, n, nullptr);
#endif
  return ~crc_tables(~crc, p, n);
}

uint32_t copy_crc32(void* dst, const void* src, size_t n, uint32_t crc) {
  const auto* p = static_cast<const unsigned char*>(src);
  auto* d = static_cast<unsigned char*>(dst);
#ifdef EMBER_CRC32_CLMUL
  if (n >= 128 && has_vclmul()) return ~crc_vclmul(~crc, p, n, d);
  if (n >= 64 && has_clmul()) return ~crc_clmul(~crc, p, n, d);
#endif
  // without the folding path the table loop is the bottleneck anyway: copy, then sum
  // the copy (in cache when it is small, as both are per chunk for the loader)
  if (n > 0) std::memcpy(d, p, n);
  return ~crc_tables(~crc, d, n);
}

}  // namespace ember::at
