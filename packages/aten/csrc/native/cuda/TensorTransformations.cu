// CUDA kernels of flip, tril, triu and trace (their CPU kernels in
// TensorTransformations.cpp walk host pointers). flip / tril / triu are one thread per
// element over an N-d index with int64 offsets, elements moving as unsigned words of
// the dtype's size; trace sums the diagonal in one block (int64 for integral and bool
// inputs, double otherwise, as the CPU kernel) and stores it in the result's dtype.
#include <algorithm>

#include <ember/aten/Dispatch.h>
#include <ember/aten/ShapeUtils.h>

#include "../TensorFactories.h"
#include "../TensorTransformations.h"
#include "CUDAUtils.cuh"

namespace ember::at::native {
namespace {

constexpr int kMaxDims = 25;

struct NdGeometry {
  int nd = 0;
  int64_t sizes[kMaxDims];
  int64_t out_strides[kMaxDims];  // elements
  int64_t in_strides[kMaxDims];   // elements
};

// out[idx] = in[idx with the dims in flip_mask reversed]
template <typename word_t>
__global__ void flip_kernel(int64_t n, NdGeometry g, uint32_t flip_mask, word_t* out, const word_t* in) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t rem = i, o = 0, s = 0;
    for (int d = g.nd - 1; d >= 0; --d) {
      const int64_t idx = rem % g.sizes[d];
      rem /= g.sizes[d];
      o += idx * g.out_strides[d];
      s += ((flip_mask >> d) & 1u ? g.sizes[d] - 1 - idx : idx) * g.in_strides[d];
    }
    out[o] = in[s];
  }
}

// Zeroes the elements of every matrix (the last two dims) outside the triangle:
// lower keeps j <= i + diagonal, upper keeps j >= i + diagonal.
template <typename word_t>
__global__ void triangle_kernel(int64_t n, NdGeometry g, bool lower, int64_t diagonal, word_t* out) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; k < n; k += step) {
    int64_t rem = k, o = 0, row = 0, col = 0;
    for (int d = g.nd - 1; d >= 0; --d) {
      const int64_t idx = rem % g.sizes[d];
      rem /= g.sizes[d];
      o += idx * g.out_strides[d];
      if (d == g.nd - 1) col = idx;
      if (d == g.nd - 2) row = idx;
    }
    const bool keep = lower ? col - row <= diagonal : col - row >= diagonal;
    if (!keep) out[o] = word_t(0);
  }
}

NdGeometry geometry(const Tensor& out, const Tensor& in) {
  EMBER_CHECK(out.dim() <= kMaxDims, "CUDA kernels support tensors of at most ", kMaxDims, " dims, got ", out.dim());
  NdGeometry g;
  g.nd = static_cast<int>(out.dim());
  for (int d = 0; d < g.nd; ++d) {
    g.sizes[d] = out.size(d);
    g.out_strides[d] = out.stride(d);
    g.in_strides[d] = in.defined() ? in.stride(d) : 0;
  }
  return g;
}

Tensor triangle_out_cuda(const Tensor& self, const Tensor& out, const char* name, bool lower, int64_t diagonal) {
  Tensor result = triangle_result(self, out, name);
  const int64_t n = result.numel();
  if (n == 0) return result;
  c10::DeviceGuard guard(result.device());
  const NdGeometry g = geometry(result, Tensor());
  dispatch_elem_size(static_cast<int64_t>(result.itemsize()), [&](auto w) {
    using word_t = decltype(w);
    triangle_kernel<word_t>
        <<<ember::at::cuda::grid_size(n), ember::at::cuda::kNumThreads, 0, ember::at::cuda::current_stream()>>>(
            n, g, lower, diagonal, static_cast<word_t*>(result.data_ptr()));
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return result;
}

template <typename scalar_t, typename acc_t, typename out_t>
__global__ void trace_kernel(int64_t n, int64_t step, const scalar_t* in, out_t* out) {
  __shared__ acc_t partial[ember::at::cuda::kNumThreads];
  acc_t acc = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    acc += static_cast<acc_t>(static_cast<opmath_t<scalar_t>>(in[i * step]));
  }
  partial[threadIdx.x] = acc;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (static_cast<int>(threadIdx.x) < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    if constexpr (std::is_same_v<out_t, c10::Half> || std::is_same_v<out_t, c10::BFloat16>) {
      *out = out_t(static_cast<float>(partial[0]));
    } else {
      *out = static_cast<out_t>(partial[0]);
    }
  }
}

}  // namespace

Tensor trace_cuda(const Tensor& self) {
  EMBER_CHECK(self.dim() == 2, "trace: expected a matrix, but got tensor with dim ", self.dim());
  const bool integral = c10::isIntegralType(self.dtype(), /*includeBool=*/true);
  Tensor out = empty({}, integral ? ScalarType::Long : self.dtype(), self.device());
  const int64_t n = std::min(self.size(0), self.size(1));
  const int64_t step = self.stride(0) + self.stride(1);
  c10::DeviceGuard guard(self.device());
  EMBER_DISPATCH_ALL_TYPES(self.dtype(), "trace", [&] {
    const scalar_t* in = static_cast<const scalar_t*>(self.data_ptr());
    cudaStream_t stream = ember::at::cuda::current_stream();
    if constexpr (std::is_integral_v<scalar_t>) {
      trace_kernel<scalar_t, int64_t, int64_t>
          <<<1, ember::at::cuda::kNumThreads, 0, stream>>>(n, step, in, static_cast<int64_t*>(out.data_ptr()));
    } else {
      trace_kernel<scalar_t, double, scalar_t>
          <<<1, ember::at::cuda::kNumThreads, 0, stream>>>(n, step, in, static_cast<scalar_t*>(out.data_ptr()));
    }
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return out;
}

Tensor flip_cuda(const Tensor& self, IntArrayRef dims) {
  const int64_t nd = self.dim();
  const DimVector wrapped = wrap_dims(dims, nd, "flip");
  Tensor out = empty_like_preserve(self, self.dtype(), self.device());
  const int64_t n = self.numel();
  if (n == 0) return out;
  if (nd == 0) {
    out.copy_(self);
    return out;
  }
  uint32_t mask = 0;
  for (int64_t d : wrapped) mask |= 1u << d;
  c10::DeviceGuard guard(self.device());
  const NdGeometry g = geometry(out, self);
  dispatch_elem_size(static_cast<int64_t>(self.itemsize()), [&](auto w) {
    using word_t = decltype(w);
    flip_kernel<word_t>
        <<<ember::at::cuda::grid_size(n), ember::at::cuda::kNumThreads, 0, ember::at::cuda::current_stream()>>>(
            n, g, mask, static_cast<word_t*>(out.data_ptr()), static_cast<const word_t*>(self.data_ptr()));
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
  return out;
}

Tensor tril_out_cuda(const Tensor& self, int64_t diagonal, const Tensor& out) {
  return triangle_out_cuda(self, out, "tril", true, diagonal);
}

Tensor triu_out_cuda(const Tensor& self, int64_t diagonal, const Tensor& out) {
  return triangle_out_cuda(self, out, "triu", false, diagonal);
}

}  // namespace ember::at::native
