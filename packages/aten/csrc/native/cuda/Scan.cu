// CUDA kernels of the scans: cumsum, cumprod, logcumsumexp, cummax, cummin.
//
// Two layouts, chosen from the ScanPlan:
//   thread per row: the scanned dim is outer and the innermost other dim contiguous
//     (adjacent threads read adjacent columns), or rows are short. Each thread scans
//     its row in order, exactly as the CPU kernel does (same accumulation types and
//     order, so the same bits).
//   block per row: the row is scanned in tiles of kThreads elements with CUB's
//     BlockScan; a running carry joins the tiles. Sums may round differently from the
//     CPU's sequential order.
// Accumulation (as the CPU kernels): double for float/double cumsum/cumprod and
// logcumsumexp, float for half/bfloat16, wrapping int64 for integers. cummax/cummin:
// a NaN, or a value >= (<=) the running extreme, becomes the new extreme.
#include <cub/block/block_scan.cuh>

#include "../Scan.h"
#include "Reduce.cuh"

namespace ember::at::native {
namespace {

using cuda_reduce::is_float_like_v;
using cuda_reduce::is_reduced_float_v;
using cuda_reduce::OffsetCalc;

constexpr int kThreads = 256;
constexpr int64_t kShortRow = 32;  // rows up to this long: a thread per row

ScalarType bool_as_byte(ScalarType t) { return t == ScalarType::Bool ? ScalarType::Byte : t; }

// ---- the ops: element -> acc, combine (a before b), write ----

template <typename scalar_t, bool kProd>
struct CumOps {
  static constexpr bool kFloat = is_float_like_v<scalar_t>;
  using input_t = scalar_t;
  using out_t = std::conditional_t<kFloat, scalar_t, int64_t>;
  using acc_t = std::conditional_t<kFloat, std::conditional_t<is_reduced_float_v<scalar_t>, float, double>, uint64_t>;

  // x folded into the empty sum (0 + x: -0.0 becomes 0.0, as on the CPU) or product (1 * x: x)
  __device__ acc_t init(scalar_t x, int64_t) const {
    if constexpr (kFloat) {
      const acc_t v = static_cast<acc_t>(static_cast<opmath_t<scalar_t>>(x));
      return kProd ? v : acc_t(0) + v;
    } else {
      return static_cast<acc_t>(static_cast<int64_t>(x));
    }
  }
  __device__ acc_t combine(acc_t a, acc_t b) const {
    if constexpr (kProd) {
      return a * b;
    } else {
      return a + b;
    }
  }
  __device__ void write(acc_t a, out_t* y, int64_t*) const {
    if constexpr (kFloat) {
      *y = static_cast<scalar_t>(static_cast<opmath_t<scalar_t>>(a));
    } else {
      *y = static_cast<int64_t>(a);
    }
  }
};

template <typename scalar_t>
struct LogCumSumExpOps {
  using input_t = scalar_t;
  using out_t = scalar_t;
  using acc_t = std::conditional_t<is_reduced_float_v<scalar_t>, float, double>;

  // x folded into an empty (-inf) sum, as the CPU kernel starts: x + 0 (-0.0 becomes 0.0)
  __device__ acc_t init(scalar_t x, int64_t) const {
    return static_cast<acc_t>(static_cast<opmath_t<scalar_t>>(x)) + acc_t(0);
  }
  __device__ acc_t combine(acc_t a, acc_t b) const {
    if (a != a || b != b) return a + b;  // NaN
    const acc_t mx = a > b ? a : b;
    const acc_t mn = a > b ? b : a;
    if (mx == cuda_reduce::highest<acc_t>() || mx == cuda_reduce::lowest<acc_t>()) return mx;
    return mx + log1p(exp(mn - mx));
  }
  __device__ void write(acc_t a, out_t* y, int64_t*) const {
    *y = static_cast<scalar_t>(static_cast<opmath_t<scalar_t>>(a));
  }
};

template <typename scalar_t>
struct ExtremeAcc {
  std::conditional_t<is_reduced_float_v<scalar_t>, float, scalar_t> v;
  int64_t i;
};

template <typename scalar_t>
struct CumExtremeOps {
  using input_t = scalar_t;
  using out_t = scalar_t;
  using acc_t = ExtremeAcc<scalar_t>;
  bool is_max;

  __device__ acc_t init(scalar_t x, int64_t i) const { return {static_cast<decltype(acc_t::v)>(x), i}; }
  // b (later) replaces a when it is NaN, or >= (<=) a while a is not NaN
  __device__ acc_t combine(acc_t a, acc_t b) const {
    const bool ge = is_max ? (b.v >= a.v) : (b.v <= a.v);
    bool take = ge;
    if constexpr (is_float_like_v<scalar_t>) take = b.v != b.v || (a.v == a.v && ge);
    return take ? b : a;
  }
  __device__ void write(acc_t a, out_t* y, int64_t* ind) const {
    *y = static_cast<scalar_t>(a.v);
    *ind = a.i;
  }
};

struct ScanArgs {
  OffsetCalc batch;  // s0: input strides, s1: output strides (shared by the indices)
  int64_t rows, n, in_stride, out_stride;
};

template <typename Op>
__global__ void scan_thread_per_row(Op op, const typename Op::input_t* __restrict__ in,
                                    typename Op::out_t* __restrict__ out, int64_t* __restrict__ ind, ScanArgs a) {
  for (int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; r < a.rows;
       r += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t io = 0, oo = 0;
    a.batch.offsets(r, io, oo);
    typename Op::acc_t acc = op.init(in[io], 0);
    op.write(acc, out + oo, ind ? ind + oo : nullptr);
    for (int64_t i = 1; i < a.n; ++i) {
      acc = op.combine(acc, op.init(in[io + i * a.in_stride], i));
      const int64_t o = oo + i * a.out_stride;
      op.write(acc, out + o, ind ? ind + o : nullptr);
    }
  }
}

template <typename Op>
struct Combine {
  Op op;
  __device__ typename Op::acc_t operator()(const typename Op::acc_t& a, const typename Op::acc_t& b) const {
    return op.combine(a, b);
  }
};

template <typename Op>
__global__ void __launch_bounds__(kThreads)
    scan_block_per_row(Op op, const typename Op::input_t* __restrict__ in, typename Op::out_t* __restrict__ out,
                       int64_t* __restrict__ ind, ScanArgs a) {
  using acc_t = typename Op::acc_t;
  using BlockScan = cub::BlockScan<acc_t, kThreads>;
  __shared__ typename BlockScan::TempStorage temp;
  __shared__ acc_t carry;
  const int tid = static_cast<int>(threadIdx.x);
  for (int64_t r = blockIdx.x; r < a.rows; r += gridDim.x) {
    int64_t io = 0, oo = 0;
    a.batch.offsets(r, io, oo);
    for (int64_t t0 = 0; t0 < a.n; t0 += kThreads) {
      const int64_t i = t0 + tid;
      // past the end: any valid value (it only follows the valid ones in the scan)
      acc_t x = op.init(in[io + (i < a.n ? i : a.n - 1) * a.in_stride], i);
      acc_t y;
      BlockScan(temp).InclusiveScan(x, y, Combine<Op>{op});
      if (t0 > 0) y = op.combine(carry, y);
      __syncthreads();  // every thread has read carry (and temp may be reused)
      if (i < a.n) {
        const int64_t o = oo + i * a.out_stride;
        op.write(y, out + o, ind ? ind + o : nullptr);
      }
      if (i == (t0 + kThreads < a.n ? t0 + kThreads : a.n) - 1) carry = y;
      __syncthreads();
    }
  }
}

template <typename Op>
void run_scan_cuda(const ScanPlan& p, const Op& op) {
  if (p.rows == 0 || p.n == 0) return;
  c10::DeviceGuard guard(p.device);
  EMBER_CHECK(p.batch_sizes.size() <= static_cast<size_t>(cuda_reduce::kMaxDims), "CUDA scan: more than ",
              cuda_reduce::kMaxDims, " other dimensions are not supported");
  ScanArgs a;
  a.batch.ndim = static_cast<int>(p.batch_sizes.size());
  for (size_t d = 0; d < p.batch_sizes.size(); ++d) {
    a.batch.sizes[d] = p.batch_sizes[d];
    a.batch.s0[d] = p.batch_in_strides[d];
    a.batch.s1[d] = p.batch_out_strides[d];
  }
  a.rows = p.rows;
  a.n = p.n;
  a.in_stride = p.in_stride;
  a.out_stride = p.out_stride;
  const auto* in = static_cast<const typename Op::input_t*>(p.in);
  auto* out = static_cast<typename Op::out_t*>(p.out);
  const cudaStream_t stream = cuda::current_stream();
  const bool columns = !p.batch_sizes.empty() && p.batch_in_strides[0] == 1 && p.in_stride != 1;
  if (columns || p.n <= kShortRow) {
    scan_thread_per_row<Op><<<cuda::grid_size(p.rows), kThreads, 0, stream>>>(op, in, out, p.indices, a);
  } else {
    const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(p.rows, 0x7fffffff));
    scan_block_per_row<Op><<<blocks, kThreads, 0, stream>>>(op, in, out, p.indices, a);
  }
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
}

void cumsum_kernel_cuda(const ScanPlan& p) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(bool_as_byte(p.in_dtype), "cumsum",
                                    [&] { run_scan_cuda(p, CumOps<scalar_t, false>{}); });
}
void cumprod_kernel_cuda(const ScanPlan& p) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(bool_as_byte(p.in_dtype), "cumprod",
                                    [&] { run_scan_cuda(p, CumOps<scalar_t, true>{}); });
}
void logcumsumexp_kernel_cuda(const ScanPlan& p) {
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(p.in_dtype, "logcumsumexp",
                                         [&] { run_scan_cuda(p, LogCumSumExpOps<scalar_t>{}); });
}
void cum_extreme_cuda(const ScanPlan& p, bool is_max) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(bool_as_byte(p.in_dtype), is_max ? "cummax" : "cummin",
                                    [&] { run_scan_cuda(p, CumExtremeOps<scalar_t>{is_max}); });
}
void cummax_kernel_cuda(const ScanPlan& p) { cum_extreme_cuda(p, true); }
void cummin_kernel_cuda(const ScanPlan& p) { cum_extreme_cuda(p, false); }

}  // namespace

REGISTER_CUDA_DISPATCH(cumsum_stub, &cumsum_kernel_cuda);
REGISTER_CUDA_DISPATCH(cumprod_stub, &cumprod_kernel_cuda);
REGISTER_CUDA_DISPATCH(logcumsumexp_stub, &logcumsumexp_kernel_cuda);
REGISTER_CUDA_DISPATCH(cummax_stub, &cummax_kernel_cuda);
REGISTER_CUDA_DISPATCH(cummin_stub, &cummin_kernel_cuda);

}  // namespace ember::at::native
