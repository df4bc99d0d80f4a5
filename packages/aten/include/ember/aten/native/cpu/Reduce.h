#pragma once
// The CPU reduction framework: reduce any set of dims of an any-strided input.
//
// ReduceOps.cpp (device-generic, compiled once) turns a call into a ReductionPlan:
// size-1 dims dropped, the kept (output) dims and the reduced dims each sorted by
// input stride (innermost first) and coalesced, outputs allocated contiguous. A
// kernel file (compiled once per CPU capability) then runs
//
//     run_reduction(plan, ops)
//
// where `ops` says how to reduce (see SumOps in ReduceOpsKernel.cpp for an example):
//
//   using input_t (the element type read), acc_t;
//   acc_t identity() const;
//   acc_t reduce_1d(const scalar_t* x, int64_t n, int64_t stride, acc_t acc, int64_t idx0) const;
//         -- folds x[0], x[stride], ... x[(n-1)*stride] into acc; idx0 is the logical
//            index of x[0] along the reduced range (used by arg-reductions only);
//   void reduce_cols(const scalar_t* x, int64_t nrows, int64_t row_stride, int64_t ncols,
//                    acc_t* acc, int64_t idx0) const;
//         -- for j < ncols: folds column j (x[j], x[j + row_stride], ...) into acc[j]
//            (ColumnReduceDefault implements it with reduce_1d);
//   acc_t combine(acc_t a, acc_t b) const;   -- a covers lower indices than b
//   void project(acc_t a, int64_t out_offset) const;   -- writes the output element(s)
//
// Layouts and parallelism, chosen by run_reduction:
//   inner:   the innermost reduced dim is the fastest in memory -> reduce_1d over runs
//            (contiguous runs are vectorised by the op); parallel over outputs.
//   columns: the innermost kept dim is contiguous in the input and the output and the
//            reduced dims are outer -> reduce_cols over blocks of kColBlock outputs,
//            vectorised across the kept dim; parallel over blocks.
//   split:   few outputs, long reductions (a full sum): the reduced range of each
//            output is cut into chunks whose number depends only on its length, the
//            chunks run on all threads, and the per-chunk partials are combined
//            pairwise in chunk order -- the result does not depend on the number of
//            threads.
// Arg-reductions (whose acc carries an index) are planned with at most one reduced dim.

#include <algorithm>
#include <memory>

#include <ember/aten/Parallel.h>
#include <ember/aten/Tensor.h>
#include <ember/aten/native/ReductionPlan.h>
#include <ember/aten/vec/Vectorized.h>

namespace ember::at::native {
inline namespace CPU_CAPABILITY {

// Multi-index over `sizes` (innermost first) tracking two offsets, started at a linear index.
class IndexWalker {
 public:
  IndexWalker(IntArrayRef sizes, IntArrayRef s0, IntArrayRef s1, int64_t linear)
      : sizes_(sizes), s0_(s0), s1_(s1), idx_(sizes.size(), 0) {
    for (size_t d = 0; d < sizes.size(); ++d) {
      const int64_t i = sizes[d] > 0 ? linear % sizes[d] : 0;
      linear = sizes[d] > 0 ? linear / sizes[d] : 0;
      idx_[d] = i;
      off0_ += i * s0[d];
      off1_ += i * s1[d];
    }
  }
  int64_t off0() const { return off0_; }
  int64_t off1() const { return off1_; }
  void next() {
    for (size_t d = 0; d < sizes_.size(); ++d) {
      off0_ += s0_[d];
      off1_ += s1_[d];
      if (++idx_[d] < sizes_[d]) return;
      off0_ -= s0_[d] * sizes_[d];
      off1_ -= s1_[d] * sizes_[d];
      idx_[d] = 0;
    }
  }

 private:
  IntArrayRef sizes_, s0_, s1_;
  c10::SmallVector<int64_t, 8> idx_;
  int64_t off0_ = 0, off1_ = 0;
};

// reduce_cols through reduce_1d, one column at a time (ops without a vector column loop).
template <typename Derived, typename scalar_t, typename acc_t>
struct ColumnReduceDefault {
  void reduce_cols(const scalar_t* x, int64_t nrows, int64_t row_stride, int64_t ncols, acc_t* acc,
                   int64_t idx0) const {
    const auto& self = static_cast<const Derived&>(*this);
    for (int64_t j = 0; j < ncols; ++j) acc[j] = self.reduce_1d(x + j, nrows, row_stride, acc[j], idx0);
  }
};

namespace reduce_detail {

constexpr int64_t kColBlock = 64;     // outputs per column block
constexpr int64_t kMinChunk = 16384;  // smallest chunk of a split reduction (elements)
constexpr int64_t kMaxChunks = 64;
constexpr int64_t kSplitOutputs = 16;  // fewer outputs than this: split long reductions

// Pairwise combination of p[0], p[stride], ... p[(n-1)*stride], keeping their order.
template <typename Ops, typename acc_t>
acc_t combine_tree(const Ops& ops, acc_t* p, int64_t n, int64_t stride) {
  for (int64_t step = 1; step < n; step *= 2)
    for (int64_t i = 0; i + step < n; i += 2 * step) p[i * stride] = ops.combine(p[i * stride], p[(i + step) * stride]);
  return p[0];
}

// Chunks of [0, n): their number depends only on n (determinism across thread counts).
inline int64_t chunk_length(int64_t n) {
  int64_t nchunks = std::clamp<int64_t>(n / kMinChunk, 1, kMaxChunks);
  int64_t chunk = divup(n, nchunks);
  return divup(chunk, 64) * 64;
}

}  // namespace reduce_detail

// How run_reduction cuts a plan into tasks. A unit is one output (inner layout) or a
// block of up to kColBlock adjacent outputs (column layout); a task is a unit, or one
// chunk of a unit's reduced range when the reduction is split.
struct ReduceGeometry {
  int64_t K, N;          // outputs, reduced elements per output
  int64_t n0, s0;        // innermost reduced dim: size and input stride
  IntArrayRef rsz, rst;  // the outer reduced dims
  bool columns;
  int64_t M = 1;               // columns: outputs along the contiguous kept dim
  int64_t nblk = 1;            // column blocks per row of outputs
  IntArrayRef wsz, win, wout;  // kept dims walked from unit to unit
  int64_t units, chunks = 1, chunk, grain;

  explicit ReduceGeometry(const ReductionPlan& p) : K(p.num_outputs), N(p.num_reduced) {
    using namespace reduce_detail;
    const size_t R = p.red_sizes.size();
    n0 = R ? p.red_sizes[0] : 1;
    s0 = R ? p.red_strides[0] : 1;
    rsz = R ? IntArrayRef(p.red_sizes).slice(1) : IntArrayRef();
    rst = R ? IntArrayRef(p.red_strides).slice(1) : IntArrayRef();
    const IntArrayRef ksz(p.out_sizes), kin(p.out_in_strides), kout(p.out_strides);
    columns = !ksz.empty() && R > 0 && kin[0] == 1 && kout[0] == 1 && s0 != 1;
    if (columns) {
      M = ksz[0];
      nblk = divup(M, kColBlock);
      wsz = ksz.slice(1);
      win = kin.slice(1);
      wout = kout.slice(1);
      units = K == 0 ? 0 : (K / M) * nblk;
    } else {
      wsz = ksz;
      win = kin;
      wout = kout;
      units = K;
    }
    chunk = N;
    if (N > 0) {
      const int64_t c = chunk_length(N);
      // Split when a few units could not keep the threads busy. The choice (and so the
      // order of every sum) does not depend on the number of threads.
      if (divup(N, c) > 1 && units < kSplitOutputs) {
        chunk = c;
        chunks = divup(N, c);
      }
    }
    const int64_t cost = std::max<int64_t>(1, chunk * (columns ? std::min(M, kColBlock) : 1));
    grain = std::max<int64_t>(1, GRAIN_SIZE / cost);
  }
};

template <typename Ops>
void run_reduction(const ReductionPlan& p, const Ops& ops) {
  using scalar_t = typename Ops::input_t;
  using acc_t = typename Ops::acc_t;
  using reduce_detail::kColBlock;
  const ReduceGeometry g(p);
  if (g.units == 0) return;
  const scalar_t* in = static_cast<const scalar_t*>(p.in);
  const int64_t width = g.columns ? kColBlock : 1;  // accumulators per unit
  // per-chunk partials of split reductions (not a vector: acc_t may be bool)
  std::unique_ptr<acc_t[]> partial(g.chunks > 1 ? new acc_t[g.units * g.chunks * width] : nullptr);

  // Folds the flat reduced range [b, e) of the unit whose input starts at x into acc.
  auto fold = [&](const scalar_t* x, int64_t b, int64_t e, int64_t m, acc_t* acc) {
    if (b >= e) return;  // (an empty reduced dim: n0 may be 0)
    int64_t j = b / g.n0, i = b % g.n0;
    IndexWalker w(g.rsz, g.rst, g.rst, j);
    while (b < e) {
      const int64_t len = std::min(g.n0 - i, e - b);
      const scalar_t* at = x + w.off0() + i * g.s0;
      if (g.columns) {
        ops.reduce_cols(at, len, g.s0, m, acc, j * g.n0 + i);
      } else {
        acc[0] = ops.reduce_1d(at, len, g.s0, acc[0], j * g.n0 + i);
      }
      b += len;
      i = 0;
      ++j;
      w.next();
    }
  };
  parallel_for(0, g.units * g.chunks, g.grain, [&](int64_t tb, int64_t te) {
    acc_t acc[kColBlock];
    int64_t ko = tb / g.chunks / g.nblk;
    IndexWalker w(g.wsz, g.win, g.wout, ko);
    for (int64_t t = tb; t < te; ++t) {
      const int64_t u = t / g.chunks, c = t % g.chunks;
      for (; ko < u / g.nblk; ++ko) w.next();
      const int64_t c0 = (u % g.nblk) * kColBlock;
      const int64_t m = g.columns ? std::min(kColBlock, g.M - c0) : 1;
      for (int64_t q = 0; q < m; ++q) acc[q] = ops.identity();
      fold(in + w.off0() + c0, c * g.chunk, std::min(g.N, (c + 1) * g.chunk), m, acc);
      if (g.chunks == 1) {
        for (int64_t q = 0; q < m; ++q) ops.project(acc[q], w.off1() + c0 + q);
      } else {
        acc_t* dst = partial.get() + (u * g.chunks + c) * width;
        for (int64_t q = 0; q < m; ++q) dst[q] = acc[q];
      }
    }
  });
  if (g.chunks == 1) return;
  IndexWalker w(g.wsz, g.win, g.wout, 0);
  for (int64_t u = 0, ko = 0; u < g.units; ++u) {
    for (; ko < u / g.nblk; ++ko) w.next();
    const int64_t c0 = (u % g.nblk) * kColBlock;
    const int64_t m = g.columns ? std::min(kColBlock, g.M - c0) : 1;
    for (int64_t q = 0; q < m; ++q) {
      ops.project(reduce_detail::combine_tree(ops, partial.get() + u * g.chunks * width + q, g.chunks, width),
                  w.off1() + c0 + q);
    }
  }
}

}  // namespace CPU_CAPABILITY
}  // namespace ember::at::native
