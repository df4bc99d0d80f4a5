// CUDA kernels of the fused LSTM / GRU cells (RNN.h): one thread per (row, hidden unit) of
// a time step, the gate arithmetic in opmath_t, the same formulas as cpu/RNNKernel.cpp.
// The recurrence around them (RNN.cpp) is shared with the CPU; its GEMMs go to cuBLAS.
#include <ember/aten/Dispatch.h>

#include "../RNN.h"
#include "CUDAUtils.cuh"

namespace ember::at::native {
namespace {

template <typename A>
__device__ __forceinline__ A sigmoid_(A x) {
  return A(1) / (A(1) + exp(-x));
}

// Row strides of the step's matrices (every row is contiguous).
struct Strides {
  int64_t a, b, c, d, e, f;
};

// gi, gh: the two halves of the gate pre-activations (gh may be ws's gate columns: each
// element is read before it is written); ws null: nothing saved (inference).
template <typename T>
__global__ void lstm_cell_kernel(const T* gi, const T* gh, T* h, T* c, T* out, T* ws, int64_t rows, int64_t H,
                                 Strides ld) {
  using A = opmath_t<T>;
  for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < rows * H;
       idx += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = idx / H, j = idx % H;
    const T* x = gi + r * ld.e;
    const T* y = gh + r * ld.f;
    const A hp = static_cast<A>(h[r * ld.b + j]), cp = static_cast<A>(c[r * ld.c + j]);
    const A i = sigmoid_(static_cast<A>(x[j]) + static_cast<A>(y[j]));
    const A f = sigmoid_(static_cast<A>(x[H + j]) + static_cast<A>(y[H + j]));
    const A g = tanh(static_cast<A>(x[2 * H + j]) + static_cast<A>(y[2 * H + j]));
    const A o = sigmoid_(static_cast<A>(x[3 * H + j]) + static_cast<A>(y[3 * H + j]));
    const A cn = f * cp + i * g;
    const A hn = o * tanh(cn);
    if (ws != nullptr) {
      T* w = ws + r * ld.a;
      w[j] = static_cast<T>(i);
      w[H + j] = static_cast<T>(f);
      w[2 * H + j] = static_cast<T>(g);
      w[3 * H + j] = static_cast<T>(o);
      w[4 * H + j] = static_cast<T>(hp);
      w[5 * H + j] = static_cast<T>(cp);
    }
    c[r * ld.c + j] = static_cast<T>(cn);
    h[r * ld.b + j] = static_cast<T>(hn);
    out[r * ld.d + j] = static_cast<T>(hn);
  }
}

template <typename T>
__global__ void lstm_cell_backward_kernel(const T* ws, const T* go, T* dh, T* dc, T* dgates, int64_t rows, int64_t H,
                                          Strides ld) {
  using A = opmath_t<T>;
  for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < rows * H;
       idx += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = idx / H, j = idx % H;
    const T* w = ws + r * ld.a;
    const A i = static_cast<A>(w[j]), f = static_cast<A>(w[H + j]), g = static_cast<A>(w[2 * H + j]),
            o = static_cast<A>(w[3 * H + j]), cp = static_cast<A>(w[5 * H + j]);
    A dhv = static_cast<A>(dh[r * ld.c + j]);
    if (go != nullptr) dhv += static_cast<A>(go[r * ld.b + j]);
    const A tc = tanh(f * cp + i * g);
    const A dct = static_cast<A>(dc[r * ld.d + j]) + dhv * o * (A(1) - tc * tc);
    T* dg = dgates + r * ld.e;
    dg[j] = static_cast<T>(dct * g * i * (A(1) - i));
    dg[H + j] = static_cast<T>(dct * cp * f * (A(1) - f));
    dg[2 * H + j] = static_cast<T>(dct * i * (A(1) - g * g));
    dg[3 * H + j] = static_cast<T>(dhv * tc * o * (A(1) - o));
    dc[r * ld.d + j] = static_cast<T>(dct * f);
  }
}

template <typename T>
__global__ void gru_cell_kernel(const T* gi, const T* gh, const T* b, T* h, T* out, T* ws, int64_t rows, int64_t H,
                                Strides ld) {
  using A = opmath_t<T>;
  for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < rows * H;
       idx += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = idx / H, j = idx % H;
    const T* x = gi + r * ld.a;
    const T* y = gh + r * ld.b;
    A hr = static_cast<A>(y[j]), hz = static_cast<A>(y[H + j]), hn = static_cast<A>(y[2 * H + j]);
    if (b != nullptr) {
      hr += static_cast<A>(b[j]);
      hz += static_cast<A>(b[H + j]);
      hn += static_cast<A>(b[2 * H + j]);
    }
    const A hp = static_cast<A>(h[r * ld.c + j]);
    const A rg = sigmoid_(static_cast<A>(x[j]) + hr);
    const A z = sigmoid_(static_cast<A>(x[H + j]) + hz);
    const A n = tanh(static_cast<A>(x[2 * H + j]) + rg * hn);
    const A hv = n + z * (hp - n);
    if (ws != nullptr) {  // null: nothing saved (inference)
      T* w = ws + r * ld.e;
      w[j] = static_cast<T>(rg);
      w[H + j] = static_cast<T>(z);
      w[2 * H + j] = static_cast<T>(n);
      w[3 * H + j] = static_cast<T>(hn);
      w[4 * H + j] = static_cast<T>(hp);
    }
    h[r * ld.c + j] = static_cast<T>(hv);
    out[r * ld.d + j] = static_cast<T>(hv);
  }
}

template <typename T>
__global__ void gru_cell_backward_kernel(const T* ws, const T* go, T* dh, T* dgi, T* dgh, int64_t rows, int64_t H,
                                         Strides ld) {
  using A = opmath_t<T>;
  for (int64_t idx = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; idx < rows * H;
       idx += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = idx / H, j = idx % H;
    const T* w = ws + r * ld.a;
    const A rg = static_cast<A>(w[j]), z = static_cast<A>(w[H + j]), n = static_cast<A>(w[2 * H + j]),
            hn = static_cast<A>(w[3 * H + j]), hp = static_cast<A>(w[4 * H + j]);
    A dhv = static_cast<A>(dh[r * ld.c + j]);
    if (go != nullptr) dhv += static_cast<A>(go[r * ld.b + j]);
    const A dn = dhv * (A(1) - z) * (A(1) - n * n);
    const A dz = dhv * (hp - n) * z * (A(1) - z);
    const A dr = dn * hn * rg * (A(1) - rg);
    T* di = dgi + r * ld.d;
    T* dy = dgh + r * ld.e;
    di[j] = static_cast<T>(dr);
    di[H + j] = static_cast<T>(dz);
    di[2 * H + j] = static_cast<T>(dn);
    dy[j] = static_cast<T>(dr);
    dy[H + j] = static_cast<T>(dz);
    dy[2 * H + j] = static_cast<T>(dn * rg);
    dh[r * ld.c + j] = static_cast<T>(dhv * z);
  }
}

template <typename T>
T* ptr(const Tensor& t) {
  return t.defined() ? t.data_ptr<T>() : nullptr;
}
int64_t ld_of(const Tensor& t) { return t.defined() ? t.stride(0) : 0; }

void lstm_cell_cuda(const Tensor& gi, const Tensor& gh, const Tensor& h, const Tensor& c, const Tensor& out,
                    const Tensor& ws) {
  const int64_t rows = h.size(0), H = h.size(1), n = rows * H;
  if (n == 0) return;
  const Strides ld{ld_of(ws), h.stride(0), c.stride(0), out.stride(0), gi.stride(0), gh.stride(0)};
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(h.dtype(), "lstm_cell", [&] {
    lstm_cell_kernel<scalar_t><<<cuda::grid_size(n), cuda::kNumThreads, 0, cuda::current_stream()>>>(
        gi.data_ptr<scalar_t>(), gh.data_ptr<scalar_t>(), h.data_ptr<scalar_t>(), c.data_ptr<scalar_t>(),
        out.data_ptr<scalar_t>(), ptr<scalar_t>(ws), rows, H, ld);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

void lstm_cell_backward_cuda(const Tensor& ws, const Tensor& grad_out, const Tensor& dh, const Tensor& dc,
                             const Tensor& dgates) {
  const int64_t rows = dh.size(0), H = dh.size(1), n = rows * H;
  if (n == 0) return;
  const Strides ld{ws.stride(0), ld_of(grad_out), dh.stride(0), dc.stride(0), dgates.stride(0), 0};
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(dh.dtype(), "lstm_cell_backward", [&] {
    lstm_cell_backward_kernel<scalar_t><<<cuda::grid_size(n), cuda::kNumThreads, 0, cuda::current_stream()>>>(
        ws.data_ptr<scalar_t>(), ptr<scalar_t>(grad_out), dh.data_ptr<scalar_t>(), dc.data_ptr<scalar_t>(),
        dgates.data_ptr<scalar_t>(), rows, H, ld);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

void gru_cell_cuda(const Tensor& gi, const Tensor& gh, const Tensor& b_hh, const Tensor& h, const Tensor& out,
                   const Tensor& ws) {
  const int64_t rows = h.size(0), H = h.size(1), n = rows * H;
  if (n == 0) return;
  const Strides ld{gi.stride(0), gh.stride(0), h.stride(0), out.stride(0), ld_of(ws), 0};
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(h.dtype(), "gru_cell", [&] {
    gru_cell_kernel<scalar_t><<<cuda::grid_size(n), cuda::kNumThreads, 0, cuda::current_stream()>>>(
        gi.data_ptr<scalar_t>(), gh.data_ptr<scalar_t>(), ptr<scalar_t>(b_hh), h.data_ptr<scalar_t>(),
        out.data_ptr<scalar_t>(), ptr<scalar_t>(ws), rows, H, ld);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

void gru_cell_backward_cuda(const Tensor& ws, const Tensor& grad_out, const Tensor& dh, const Tensor& dgi,
                            const Tensor& dgh) {
  const int64_t rows = dh.size(0), H = dh.size(1), n = rows * H;
  if (n == 0) return;
  const Strides ld{ws.stride(0), ld_of(grad_out), dh.stride(0), dgi.stride(0), dgh.stride(0), 0};
  EMBER_DISPATCH_FLOATING_TYPES_AND_HALF(dh.dtype(), "gru_cell_backward", [&] {
    gru_cell_backward_kernel<scalar_t><<<cuda::grid_size(n), cuda::kNumThreads, 0, cuda::current_stream()>>>(
        ws.data_ptr<scalar_t>(), ptr<scalar_t>(grad_out), dh.data_ptr<scalar_t>(), dgi.data_ptr<scalar_t>(),
        dgh.data_ptr<scalar_t>(), rows, H, ld);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

}  // namespace

REGISTER_CUDA_DISPATCH(lstm_cell_stub, &lstm_cell_cuda);
REGISTER_CUDA_DISPATCH(lstm_cell_backward_stub, &lstm_cell_backward_cuda);
REGISTER_CUDA_DISPATCH(gru_cell_stub, &gru_cell_cuda);
REGISTER_CUDA_DISPATCH(gru_cell_backward_stub, &gru_cell_backward_cuda);

}  // namespace ember::at::native
