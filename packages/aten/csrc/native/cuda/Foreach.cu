// CUDA kernel of the _foreach_ fast path (foreach_stub, ../ForeachOps.h): one launch per
// call over every tensor of the lists (MultiTensorApply.cuh). The op is a runtime switch
// inside one kernel per dtype (the same op for all threads, so no divergence), which keeps
// the instantiations at four; each op is the CPU kernel's scalar form
// (cpu/ForeachOpsKernel.cpp) in opmath_t.
#include <cmath>
#include <cstdint>
#include <vector>

#include <ember/aten/Dispatch.h>

#include "../ForeachOps.h"
#include "CUDAUtils.cuh"
#include "MultiTensorApply.cuh"

namespace ember::at::native {
namespace {

using mta::Chunk;
using mta::kChunk;

struct ForeachMeta {
  char* ptr[4];  // out, a, b, c
  int64_t numel;
  double scalar;
};

template <typename T>
__device__ inline T nan_max(T a, T b) {
  return a != a ? a : (b != b ? b : (a > b ? a : b));
}
template <typename T>
__device__ inline T nan_min(T a, T b) {
  return a != a ? a : (b != b ? b : (a < b ? a : b));
}
template <typename T>
__device__ inline T lerp_(T a, T b, T w) {
  return fabs(w) < T(0.5) ? a + w * (b - a) : b - (b - a) * (T(1) - w);
}

template <typename T>
__device__ inline T apply(ForeachOp op, T a, T b, T c, T s) {
  switch (op) {
    case ForeachOp::Sqrt:
      return sqrt(a);
    case ForeachOp::Neg:
      return -a;
    case ForeachOp::Abs:
      return fabs(a);
    case ForeachOp::Exp:
      return exp(a);
    case ForeachOp::Reciprocal:
      return T(1) / a;
    case ForeachOp::Sign:
      return T((T(0) < a) - (a < T(0)));
    case ForeachOp::Zero:
      return T(0);
    case ForeachOp::AddScalar:
      return a + s;
    case ForeachOp::MulScalar:
      return a * s;
    case ForeachOp::DivScalar:
      return a / s;
    case ForeachOp::MaxScalar:
      return nan_max(a, s);
    case ForeachOp::MinScalar:
      return nan_min(a, s);
    case ForeachOp::PowScalar:  // PyTorch's fast exponents
      return s == T(2) ? a * a : (s == T(0.5) ? sqrt(a) : pow(a, s));
    case ForeachOp::ScalarPow:
      return pow(s, a);
    case ForeachOp::Copy:
      return b;
    case ForeachOp::AddList:
      return a + s * b;
    case ForeachOp::MulList:
      return a * b;
    case ForeachOp::DivList:
      return a / b;
    case ForeachOp::MaxList:
      return nan_max(a, b);
    case ForeachOp::MinList:
      return nan_min(a, b);
    case ForeachOp::PowList:
      return pow(a, b);
    case ForeachOp::LerpScalar:
      return lerp_(a, b, s);
    case ForeachOp::Addcmul:
      return a + s * b * c;
    case ForeachOp::Addcdiv:
      return a + s * b / c;
    case ForeachOp::LerpList:
      return lerp_(a, b, c);
  }
  return a;
}

// Inputs the op reads (a, b, c): the rest are not loaded.
int inputs_of(ForeachOp op) {
  switch (op) {
    case ForeachOp::Zero:
      return 0;
    case ForeachOp::Copy:
    case ForeachOp::AddList:
    case ForeachOp::MulList:
    case ForeachOp::DivList:
    case ForeachOp::MaxList:
    case ForeachOp::MinList:
    case ForeachOp::PowList:
    case ForeachOp::LerpScalar:
      return 2;
    case ForeachOp::Addcmul:
    case ForeachOp::Addcdiv:
    case ForeachOp::LerpList:
      return 3;
    default:
      return 1;
  }
}

template <typename scalar_t>
__global__ void foreach_kernel(ForeachOp op, int nin, const ForeachMeta* metas, const Chunk* chunks, int64_t nchunks) {
  using opm = opmath_t<scalar_t>;
  for (int64_t ci = blockIdx.x; ci < nchunks; ci += gridDim.x) {
    const Chunk ch = chunks[ci];
    const ForeachMeta& m = metas[ch.tensor];
    auto* out = reinterpret_cast<scalar_t*>(m.ptr[0]);
    const auto* a = reinterpret_cast<const scalar_t*>(m.ptr[1]);
    const auto* b = reinterpret_cast<const scalar_t*>(m.ptr[2]);
    const auto* c = reinterpret_cast<const scalar_t*>(m.ptr[3]);
    const opm s = static_cast<opm>(m.scalar);
    const int64_t end = ch.start + kChunk < m.numel ? ch.start + kChunk : m.numel;
    for (int64_t i = ch.start + threadIdx.x; i < end; i += blockDim.x) {
      const opm x = nin >= 1 ? static_cast<opm>(a[i]) : opm(0);
      const opm y = nin >= 2 ? static_cast<opm>(b[i]) : opm(0);
      const opm z = nin >= 3 ? static_cast<opm>(c[i]) : opm(0);
      out[i] = static_cast<scalar_t>(apply<opm>(op, x, y, z, s));
    }
  }
}

void foreach_cuda(ForeachOp op, ScalarType dtype, const ForeachArgs& args) {
  const size_t T = args.ptrs.size();
  if (T == 0 || args.offsets.back() == 0) return;
  std::vector<ForeachMeta> metas(T);
  for (size_t t = 0; t < T; ++t) {
    for (int k = 0; k < 4; ++k) metas[t].ptr[k] = args.ptrs[t][k];
    metas[t].numel = args.offsets[t + 1] - args.offsets[t];
    metas[t].scalar = t < args.scalars.size() ? args.scalars[t] : 0.0;
  }
  const std::vector<Chunk> chunks = mta::make_chunks(args.offsets);
  const ForeachMeta* dm = nullptr;
  const Chunk* dc = nullptr;
  const Tensor buf = mta::upload_tables(metas, chunks, &dm, &dc);
  const int nin = inputs_of(op);
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(dtype, "foreach", [&] {
    foreach_kernel<scalar_t><<<mta::chunk_grid(chunks.size()), mta::kThreads, 0, cuda::current_stream()>>>(
        op, nin, dm, dc, static_cast<int64_t>(chunks.size()));
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

}  // namespace

REGISTER_CUDA_DISPATCH(foreach_stub, &foreach_cuda);

}  // namespace ember::at::native
