// The small kernels around cuSOLVER (BatchLinearAlgebraKernels.h): grid-stride loops,
// one thread per matrix entry (one per matrix for the determinant), 64-bit indexing.
#include "BatchLinearAlgebraKernels.h"

#include <algorithm>
#include <cmath>

#include <ember/aten/Dispatch.h>

#include "../LinalgDet.h"
#include "CUDAUtils.cuh"

namespace ember::at::native::cuda_linalg {
namespace {

using ember::at::cuda::current_stream;
using ember::at::cuda::grid_size;
using ember::at::cuda::kNumThreads;

// The layout of a Fortran-order batch: rows x cols matrices, leading dimension ld,
// `step` elements from one matrix to the next.
struct Layout {
  int64_t batch, rows, cols, ld, step;
};

Layout layout_of(const Tensor& t) {
  EMBER_CHECK(t.dim() >= 2, "cuda linalg: expected a batch of matrices");
  Layout l{1, t.size(-2), t.size(-1), std::max<int64_t>(t.size(-2), 1), 0};
  for (int64_t d = 0; d + 2 < t.dim(); ++d) l.batch *= t.size(d);
  l.step = l.ld * std::max<int64_t>(l.cols, 1);
  return l;
}

template <typename T>
__global__ void det_kernel(const T* __restrict__ lu, const int* __restrict__ piv, int64_t batch, int64_t n,
                           T* __restrict__ out0, T* __restrict__ out1, bool keep_log) {
  for (int64_t b = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; b < batch;
       b += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    // as the CPU kernel (LinalgDet.h)
    linalg::det_from_lu(lu + b * n * n, piv + b * n, n, keep_log, out0 + b, keep_log ? out1 + b : nullptr);
  }
}

template <typename T>
__global__ void masked_copy_kernel(const T* src, Layout s, T* dst, Layout d, int keep, bool identity) {
  const int64_t per = d.rows * d.cols, total = d.batch * per;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t b = e / per, r = e - b * per;
    const int64_t j = r / d.rows, i = r - j * d.rows;  // column-major: neighbours share a column
    T v = 0;
    if (identity) {
      v = i == j ? T(1) : T(0);
    } else {
      const bool kept = keep == 0 || (keep == 1 ? i >= j : i <= j);
      if (kept && i < s.rows && j < s.cols) v = src[b * s.step + j * s.ld + i];
    }
    dst[b * d.step + j * d.ld + i] = v;
  }
}

template <typename T>
__global__ void nonfinite_kernel(const T* __restrict__ a, int64_t total, int64_t step, int* __restrict__ flags) {
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    if (!isfinite(a[e])) flags[e / step] = 1;  // every writer stores the same value
  }
}

void launch_masked_copy(const Tensor* src, const Tensor& dst, Keep keep) {
  const Layout d = layout_of(dst);
  const int64_t total = d.batch * d.rows * d.cols;
  if (total == 0) return;
  c10::DeviceGuard guard(dst.device());
  const Layout s = src ? layout_of(*src) : d;
  EMBER_CHECK(s.batch == d.batch, "cuda linalg: masked_copy of ", s.batch, " matrices into ", d.batch);
  const int k = keep == Keep::kAll ? 0 : (keep == Keep::kLower ? 1 : 2);
  EMBER_DISPATCH_FLOATING_TYPES(dst.dtype(), "cuda linalg", [&] {
    const scalar_t* sp = src ? static_cast<const scalar_t*>(src->data_ptr()) : nullptr;
    masked_copy_kernel<scalar_t><<<grid_size(total), kNumThreads, 0, current_stream()>>>(
        sp, s, static_cast<scalar_t*>(dst.data_ptr()), d, k, src == nullptr);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

}  // namespace

void det_from_lu(const Tensor& lu, const Tensor& pivots, const Tensor& out0, const Tensor& out1, bool keep_log) {
  const Layout l = layout_of(lu);
  if (l.batch == 0 || l.rows == 0) return;
  c10::DeviceGuard guard(lu.device());
  EMBER_DISPATCH_FLOATING_TYPES(lu.dtype(), "linalg.det", [&] {
    det_kernel<scalar_t><<<grid_size(l.batch), kNumThreads, 0, current_stream()>>>(
        static_cast<const scalar_t*>(lu.data_ptr()), static_cast<const int*>(pivots.data_ptr()), l.batch, l.rows,
        static_cast<scalar_t*>(out0.data_ptr()), keep_log ? static_cast<scalar_t*>(out1.data_ptr()) : nullptr,
        keep_log);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

void masked_copy(const Tensor& src, const Tensor& dst, Keep keep) { launch_masked_copy(&src, dst, keep); }

void fill_identity(const Tensor& dst) { launch_masked_copy(nullptr, dst, Keep::kAll); }

void flag_nonfinite(const Tensor& a, const Tensor& flags) {
  const Layout l = layout_of(a);
  const int64_t total = l.batch * l.rows * l.cols;
  if (total == 0) return;
  c10::DeviceGuard guard(a.device());
  EMBER_DISPATCH_FLOATING_TYPES(a.dtype(), "linalg.svd", [&] {
    nonfinite_kernel<scalar_t><<<grid_size(total), kNumThreads, 0, current_stream()>>>(
        static_cast<const scalar_t*>(a.data_ptr()), total, l.step, static_cast<int*>(flags.data_ptr()));
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

}  // namespace ember::at::native::cuda_linalg
