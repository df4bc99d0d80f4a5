// CPU sort kernel: each row is mapped to unsigned keys whose integer order is the
// value order (NaN largest, -0.0 == 0.0; descending = the complemented keys), then
// sorted with a stable LSD radix sort (8-bit digits, passes whose digit is the same
// for every key skipped) carrying 32-bit positions; short rows use insertion sort.
// Values are gathered from the input by the sorted positions, so they keep their
// exact bits. Rows run in parallel; one long row runs its radix passes on all
// threads (per-thread digit counts give each thread its own output ranges, so the
// order stays stable).
#include <cstring>
#include <memory>
#include <type_traits>

#include <ember/aten/Dispatch.h>
#include <ember/aten/Parallel.h>
#include <ember/aten/native/cpu/Reduce.h>

#include "../Sorting.h"

namespace ember::at::native {
inline namespace CPU_CAPABILITY {

inline uint32_t sort_key(float v) {
  if (v != v) return 0xFFFFFFFFu;
  if (v == 0.0f) v = 0.0f;  // -0.0 sorts with 0.0
  uint32_t u;
  std::memcpy(&u, &v, sizeof(u));
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
inline uint64_t sort_key(double v) {
  if (v != v) return ~uint64_t{0};
  if (v == 0.0) v = 0.0;
  uint64_t u;
  std::memcpy(&u, &v, sizeof(u));
  return (u >> 63) ? ~u : (u | (uint64_t{1} << 63));
}
inline uint32_t sort_key(c10::Half v) { return sort_key(static_cast<float>(v)); }
inline uint32_t sort_key(c10::BFloat16 v) { return sort_key(static_cast<float>(v)); }
inline uint8_t sort_key(uint8_t v) { return v; }
inline uint8_t sort_key(int8_t v) { return static_cast<uint8_t>(v) ^ 0x80u; }
inline uint16_t sort_key(int16_t v) { return static_cast<uint16_t>(static_cast<uint16_t>(v) ^ 0x8000u); }
inline uint32_t sort_key(int32_t v) { return static_cast<uint32_t>(v) ^ 0x80000000u; }
inline uint64_t sort_key(int64_t v) { return static_cast<uint64_t>(v) ^ (uint64_t{1} << 63); }

// Stable insertion sort of (keys, pos) by key.
template <typename K>
void insertion_sort(K* keys, uint32_t* pos, int64_t n) {
  for (int64_t i = 1; i < n; ++i) {
    const K k = keys[i];
    const uint32_t p = pos[i];
    int64_t j = i - 1;
    while (j >= 0 && keys[j] > k) {
      keys[j + 1] = keys[j];
      pos[j + 1] = pos[j];
      --j;
    }
    keys[j + 1] = k;
    pos[j + 1] = p;
  }
}

// Stable LSD radix sort of (keys, pos); tk/tp are scratch of the same length. Returns
// the array holding the sorted positions (pos or tp). `parallel`: passes run on all threads.
template <typename K>
uint32_t* radix_sort(K* keys, uint32_t* pos, K* tk, uint32_t* tp, int64_t n, bool parallel) {
  constexpr int kPasses = sizeof(K);
  const int64_t nthreads = parallel ? std::min<int64_t>(get_num_threads(), 64) : 1;
  // digit counts of every pass over all keys (to skip passes with a single digit)
  int64_t total[kPasses][256] = {};
  for (int64_t i = 0; i < n; ++i) {
    const K k = keys[i];
    for (int b = 0; b < kPasses; ++b) ++total[b][(k >> (8 * b)) & 0xFF];
  }
  K* src = keys;
  K* dst = tk;
  uint32_t* psrc = pos;
  uint32_t* pdst = tp;
  for (int b = 0; b < kPasses; ++b) {
    bool single = false;
    for (int d = 0; d < 256; ++d) single |= total[b][d] == n;
    if (single) continue;
    const int shift = 8 * b;
    if (nthreads <= 1) {
      int64_t off[256];
      int64_t acc = 0;
      for (int d = 0; d < 256; ++d) {
        off[d] = acc;
        acc += total[b][d];
      }
      for (int64_t i = 0; i < n; ++i) {
        const K k = src[i];
        const int64_t o = off[(k >> shift) & 0xFF]++;
        dst[o] = k;
        pdst[o] = psrc[i];
      }
    } else {
      const int64_t chunk = divup(n, nthreads);
      std::unique_ptr<int64_t[]> hist(new int64_t[nthreads * 256]());
      parallel_for(0, nthreads, 1, [&](int64_t tb, int64_t te) {
        for (int64_t t = tb; t < te; ++t) {
          int64_t* h = hist.get() + t * 256;
          const int64_t e = std::min(n, (t + 1) * chunk);
          for (int64_t i = t * chunk; i < e; ++i) ++h[(src[i] >> shift) & 0xFF];
        }
      });
      // thread t's digit d goes after all smaller digits and after threads < t's digit d
      int64_t acc = 0;
      for (int d = 0; d < 256; ++d) {
        for (int64_t t = 0; t < nthreads; ++t) {
          const int64_t c = hist[t * 256 + d];
          hist[t * 256 + d] = acc;
          acc += c;
        }
      }
      parallel_for(0, nthreads, 1, [&](int64_t tb, int64_t te) {
        for (int64_t t = tb; t < te; ++t) {
          int64_t* off = hist.get() + t * 256;
          const int64_t e = std::min(n, (t + 1) * chunk);
          for (int64_t i = t * chunk; i < e; ++i) {
            const K k = src[i];
            const int64_t o = off[(k >> shift) & 0xFF]++;
            dst[o] = k;
            pdst[o] = psrc[i];
          }
        }
      });
    }
    std::swap(src, dst);
    std::swap(psrc, pdst);
  }
  return psrc;
}

template <typename scalar_t>
void sort_kernel_impl(const SortPlan& p) {
  using K = decltype(sort_key(scalar_t()));
  const scalar_t* in = static_cast<const scalar_t*>(p.in);
  scalar_t* values = static_cast<scalar_t*>(p.values);
  const int64_t n = p.n;
  if (p.rows == 0 || n == 0) return;
  const K flip = p.descending ? static_cast<K>(~K{0}) : K{0};
  const IntArrayRef bs(p.batch_sizes), bin(p.batch_in_strides), bout(p.batch_out_strides);
  const int64_t nthreads = get_num_threads();
  const bool parallel_rows = p.rows >= nthreads;
  const bool parallel_row = !parallel_rows && n >= (int64_t{1} << 16) && !in_parallel_region();
  auto run_rows = [&](int64_t rb, int64_t re) {
    std::unique_ptr<K[]> keys(new K[2 * n]);
    std::unique_ptr<uint32_t[]> pos(new uint32_t[2 * n]);
    IndexWalker w(bs, bin, bout, rb);
    for (int64_t r = rb; r < re; ++r, w.next()) {
      const scalar_t* x = in + w.off0();
      for (int64_t j = 0; j < n; ++j) {
        keys[j] = static_cast<K>(sort_key(x[j * p.in_stride]) ^ flip);
        pos[j] = static_cast<uint32_t>(j);
      }
      const uint32_t* sorted = pos.get();
      if (n <= 32) {
        insertion_sort(keys.get(), pos.get(), n);
      } else {
        sorted = radix_sort(keys.get(), pos.get(), keys.get() + n, pos.get() + n, n, parallel_row);
      }
      int64_t* ind = p.indices + w.off1();
      for (int64_t j = 0; j < n; ++j) ind[j * p.out_stride] = sorted[j];
      if (values) {
        scalar_t* v = values + w.off1();
        for (int64_t j = 0; j < n; ++j) v[j * p.out_stride] = x[static_cast<int64_t>(sorted[j]) * p.in_stride];
      }
    }
  };
  if (parallel_rows) {
    parallel_for(0, p.rows, std::max<int64_t>(1, GRAIN_SIZE / std::max<int64_t>(n, 1)), run_rows);
  } else {
    run_rows(0, p.rows);
  }
}

void sort_kernel(const SortPlan& p) {
  // bool data is 0/1 bytes: sorted as uint8
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(p.dtype == ScalarType::Bool ? ScalarType::Byte : p.dtype, "sort",
                                    [&] { sort_kernel_impl<scalar_t>(p); });
}

}  // namespace CPU_CAPABILITY

REGISTER_DISPATCH(sort_stub, &sort_kernel);

}  // namespace ember::at::native
