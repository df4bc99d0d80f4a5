#pragma once
// parallel_for over [begin, end) in chunks of at least `grain_size` elements,
// on OpenMP threads. Work smaller than one grain, or started from inside another
// parallel region, runs inline on the calling thread.
//
// Never call BLAS from inside f: the pthreads OpenBLAS warns ("Detect OpenMP Loop")
// and may hang when called from an OpenMP region.

#include <algorithm>
#include <cstdint>
#include <exception>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace ember::at {

// PyTorch's grain: below this many elements, threads cost more than they save.
constexpr int64_t GRAIN_SIZE = 32768;

inline int64_t divup(int64_t x, int64_t y) { return (x + y - 1) / y; }

inline bool in_parallel_region() {
#ifdef _OPENMP
  return omp_in_parallel();
#else
  return false;
#endif
}

int get_num_threads();

template <typename F>
inline void parallel_for(int64_t begin, int64_t end, int64_t grain_size, const F& f) {
  if (begin >= end) return;
  const int64_t n = end - begin;
#ifdef _OPENMP
  const int max_threads = get_num_threads();
  if (n > grain_size && max_threads > 1 && !in_parallel_region()) {
    const int64_t num_threads = std::min<int64_t>(max_threads, divup(n, std::max<int64_t>(grain_size, 1)));
    std::exception_ptr eptr;
#pragma omp parallel num_threads(static_cast<int>(num_threads))
    {
      const int64_t tid = omp_get_thread_num();
      const int64_t nt = omp_get_num_threads();
      const int64_t chunk = divup(n, nt);
      const int64_t b = begin + tid * chunk;
      if (b < end) {
        try {
          f(b, std::min(end, b + chunk));
        } catch (...) {
#pragma omp critical(ember_parallel_for_exception)
          if (!eptr) eptr = std::current_exception();
        }
      }
    }
    if (eptr) std::rethrow_exception(eptr);
    return;
  }
#endif
  (void)grain_size;
  f(begin, end);
}

// Reduces [begin, end) in chunks: each chunk's partial comes from f(b, e), then
// partials are combined left to right with combine (deterministic for a fixed
// thread count).
template <typename T, typename F, typename C>
inline T parallel_reduce(int64_t begin, int64_t end, int64_t grain_size, T ident, const F& f, const C& combine) {
  if (begin >= end) return ident;
  const int64_t n = end - begin;
  const int64_t max_threads = get_num_threads();
  if (n <= grain_size || max_threads <= 1 || in_parallel_region()) return f(begin, end);
  const int64_t nchunks = std::min<int64_t>({max_threads, divup(n, std::max<int64_t>(grain_size, 1)), 64});
  const int64_t chunk = divup(n, nchunks);
  T partial[64];
  const int64_t used = nchunks;
  for (int64_t i = 0; i < used; ++i) partial[i] = ident;
  parallel_for(0, used, 1, [&](int64_t cb, int64_t ce) {
    for (int64_t c = cb; c < ce; ++c) {
      const int64_t b = begin + c * chunk;
      if (b < end) partial[c] = f(b, std::min(end, b + chunk));
    }
  });
  T acc = ident;
  for (int64_t i = 0; i < used; ++i) acc = combine(acc, partial[i]);
  return acc;
}

}  // namespace ember::at
