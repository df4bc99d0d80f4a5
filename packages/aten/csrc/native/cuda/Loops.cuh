#pragma once
// gpu_kernel(iter, f): run a per-element device functor over a TensorIterator on
// the GPU -- the CUDA twin of cpu_kernel (as PyTorch's gpu_kernel).
//
// How a kernel author uses it (in a csrc/native/cuda/*.cu file):
//
//   #include "Loops.cuh"
//   void add_kernel_cuda(TensorIterator& iter, const Scalar& alpha) {
//     EMBER_DISPATCH_ALL_TYPES_AND_HALF(iter.common_dtype(), "add", [&] {
//       using opmath = opmath_t<scalar_t>;
//       const opmath a = alpha.to<opmath>();
//       gpu_kernel(iter, [a] EMBER_GPU_LAMBDA(scalar_t x, scalar_t y) -> scalar_t {
//         return static_cast<opmath>(x) + a * static_cast<opmath>(y);
//       });
//     });
//   }
//   REGISTER_CUDA_DISPATCH(add_stub, &add_kernel_cuda);
//
// - f is a lambda annotated EMBER_GPU_LAMBDA (__host__ __device__, nvcc --extended-lambda)
//   or a functor with a __host__ __device__ operator(). Its parameter types must be
//   the C++ types of the iterator's input dtypes (in order) and its return type that
//   of output 0 -- exactly as for cpu_kernel (checked by element size on the host).
//   Any number of inputs, one output; a nullary f (fill) works too.
// - Captured values must be trivially copyable: they travel as kernel arguments.
// - 0-dim CPU tensors among the inputs (iter.is_cpu_scalar(i), e.g. `x + torch.tensor(2)`)
//   are read on the host and passed to the kernel by value; the kernel never touches
//   host memory.
// - Layout: when every operand is contiguous (CPU scalars aside) and its pointer is
//   aligned to 4 elements, each thread moves 4 elements with aligned vector loads and
//   stores; otherwise each element's byte offsets come from a 32-bit offset calculator
//   over the iterator's (coalesced) dims and byte strides. Both are grid-stride loops.
//   An iteration too large for 32-bit offsets is split with with_32bit_indexing().
// - The launch goes on the current stream of the output's device (under a
//   DeviceGuard); gpu_kernel ends with iter.cast_outputs(), so outputs computed in a
//   temporary of another dtype reach the caller's tensors.
// - Half/BFloat16: take and return scalar_t, compute in opmath_t (float).
// - Keep instantiations lean (one gpu_kernel per dtype the CPU kernel supports).

#include <cstdint>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

#include <ember/aten/Dispatch.h>
#include <ember/aten/TensorIterator.h>
#include <ember/c10/Macros.h>

#include "CUDAUtils.cuh"

// The annotation of a gpu_kernel lambda: __host__ __device__, so that the closure's
// operator() stays visible to host code (function traits); a __device__-only extended
// lambda hides it. The body must therefore also compile for the host (no device
// intrinsics without #ifdef __CUDA_ARCH__).
#define EMBER_GPU_LAMBDA __host__ __device__

namespace ember::at::native {

// ---- function traits of a lambda / functor / function pointer ----
template <typename T>
struct gpu_function_traits : gpu_function_traits<decltype(&T::operator())> {};
template <typename C, typename R, typename... Args>
struct gpu_function_traits<R (C::*)(Args...) const> {
  using result_type = R;
  using args_tuple = std::tuple<std::decay_t<Args>...>;
  static constexpr int arity = sizeof...(Args);
  template <int I>
  using arg = std::tuple_element_t<I, args_tuple>;
};
template <typename C, typename R, typename... Args>
struct gpu_function_traits<R (C::*)(Args...)> : gpu_function_traits<R (C::*)(Args...) const> {};
template <typename R, typename... Args>
struct gpu_function_traits<R (*)(Args...)> {
  using result_type = R;
  using args_tuple = std::tuple<std::decay_t<Args>...>;
  static constexpr int arity = sizeof...(Args);
  template <int I>
  using arg = std::tuple_element_t<I, args_tuple>;
};

namespace cuda_detail {

constexpr int kMaxDims = 25;
constexpr int kVecSize = 4;

// Unsigned 32-bit division by a run-time constant with a multiply and a shift
// (Granlund & Montgomery): for 1 <= d < 2^31 and n < 2^31, with
// shift = ceil(log2 d) and m = floor(2^32 * (2^shift - d) / d) + 1,
// n / d == (umulhi(n, m) + n) >> shift.
struct IntDivider {
  uint32_t divisor = 1;
  uint32_t m1 = 0;
  uint32_t shift = 0;

  IntDivider() = default;
  explicit IntDivider(uint32_t d) : divisor(d) {
    for (shift = 0; shift < 32; ++shift) {
      if ((uint64_t{1} << shift) >= d) break;
    }
    const uint64_t one = 1;
    const uint64_t magic = ((one << 32) * ((one << shift) - d)) / d + 1;
    m1 = static_cast<uint32_t>(magic);  // < 2^32 for d < 2^31
  }
  EMBER_HOST_DEVICE uint32_t div(uint32_t n) const {
#if defined(__CUDA_ARCH__)
    const uint32_t t = __umulhi(n, m1);
#else
    const uint32_t t = static_cast<uint32_t>((static_cast<uint64_t>(n) * m1) >> 32);
#endif
    return (t + n) >> shift;
  }
  EMBER_HOST_DEVICE uint32_t mod(uint32_t n) const { return n - div(n) * divisor; }
};

// Byte offsets of NARGS operands for a linear index into the iteration space
// (dims innermost first, as TensorIterator keeps them). 32-bit: the caller splits
// iterations whose offsets or element count do not fit.
template <int NARGS>
struct OffsetCalculator {
  int dims = 0;
  IntDivider sizes[kMaxDims];
  uint32_t strides[kMaxDims][NARGS > 0 ? NARGS : 1];

  OffsetCalculator() = default;
  // shape: iteration shape (innermost first); strides_of(k)[d]: operand k's byte stride.
  template <typename StridesOf>
  OffsetCalculator(IntArrayRef shape, const StridesOf& strides_of) : dims(static_cast<int>(shape.size())) {
    EMBER_CHECK(dims <= kMaxDims, "CUDA kernels support tensors of at most ", kMaxDims, " dims after coalescing, got ",
                dims);
    for (int d = 0; d < kMaxDims; ++d) {
      sizes[d] = IntDivider(d < dims ? static_cast<uint32_t>(shape[d]) : 1u);
      for (int k = 0; k < NARGS; ++k) {
        strides[d][k] = d < dims ? static_cast<uint32_t>(strides_of(k)[d]) : 0u;
      }
    }
  }

  struct Offsets {
    uint32_t v[NARGS > 0 ? NARGS : 1];
  };

  EMBER_HOST_DEVICE Offsets get(uint32_t linear) const {
    Offsets o;
#pragma unroll
    for (int k = 0; k < NARGS; ++k) o.v[k] = 0;
#pragma unroll
    for (int d = 0; d < kMaxDims; ++d) {
      if (d == dims) break;
      const uint32_t q = sizes[d].div(linear);
      const uint32_t i = linear - q * sizes[d].divisor;
      linear = q;
#pragma unroll
      for (int k = 0; k < NARGS; ++k) o.v[k] += i * strides[d][k];
    }
    return o;
  }
};

// The operands as the kernel sees them: device pointers, and the values of the
// inputs that are 0-dim CPU tensors (raw bytes; every ember dtype fits in 8).
template <int NT>
struct KernelData {
  char* data[NT];
  alignas(8) unsigned char scalar_bytes[NT][8];
  uint32_t scalar_mask = 0;  // bit k: operand k is a CPU scalar
};

template <typename T>
__device__ __forceinline__ T load_bytes(const unsigned char* p) {
  T v;
  memcpy(&v, p, sizeof(T));
  return v;
}

template <typename T, int N>
struct alignas(sizeof(T) * N) aligned_vector {
  T val[N];
};

template <typename traits, int I, int NT>
__device__ __forceinline__ typename traits::template arg<I> load_arg(const KernelData<NT>& d, uint32_t offset) {
  using A = typename traits::template arg<I>;
  if (d.scalar_mask & (1u << (I + 1))) return load_bytes<A>(d.scalar_bytes[I + 1]);
  return *reinterpret_cast<const A*>(d.data[I + 1] + offset);
}

template <typename traits, typename func_t, int NT, std::size_t... I>
__device__ __forceinline__ typename traits::result_type invoke_at(const func_t& f, const KernelData<NT>& d,
                                                                  const typename OffsetCalculator<NT>::Offsets& off,
                                                                  std::index_sequence<I...>) {
  return f(load_arg<traits, static_cast<int>(I)>(d, off.v[I + 1])...);
}

// General case: any strides, 32-bit offsets, grid-stride loop.
template <typename func_t, int NT>
__global__ void elementwise_kernel(int32_t n, func_t f, OffsetCalculator<NT> calc, KernelData<NT> d) {
  using traits = gpu_function_traits<func_t>;
  using R = typename traits::result_type;
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const auto off = calc.get(static_cast<uint32_t>(i));
    *reinterpret_cast<R*>(d.data[0] + off.v[0]) =
        invoke_at<traits>(f, d, off, std::make_index_sequence<traits::arity>{});
  }
}

template <typename traits, int I, int NT>
__device__ __forceinline__ aligned_vector<typename traits::template arg<I>, kVecSize> load_vec(const KernelData<NT>& d,
                                                                                               int64_t base) {
  using A = typename traits::template arg<I>;
  aligned_vector<A, kVecSize> v;
  if (d.scalar_mask & (1u << (I + 1))) {
    const A s = load_bytes<A>(d.scalar_bytes[I + 1]);
#pragma unroll
    for (int j = 0; j < kVecSize; ++j) v.val[j] = s;
  } else {
    v = reinterpret_cast<const aligned_vector<A, kVecSize>*>(d.data[I + 1])[base];
  }
  return v;
}

template <typename traits, typename func_t, int NT, std::size_t... I>
__device__ __forceinline__ void vec_step(const func_t& f, const KernelData<NT>& d, int64_t v,
                                         std::index_sequence<I...>) {
  using R = typename traits::result_type;
  std::tuple<aligned_vector<typename traits::template arg<static_cast<int>(I)>, kVecSize>...> in{
      load_vec<traits, static_cast<int>(I)>(d, v)...};
  (void)in;
  aligned_vector<R, kVecSize> out;
#pragma unroll
  for (int j = 0; j < kVecSize; ++j) out.val[j] = f(std::get<I>(in).val[j]...);
  reinterpret_cast<aligned_vector<R, kVecSize>*>(d.data[0])[v] = out;
}

template <typename traits, typename func_t, int NT, std::size_t... I>
__device__ __forceinline__ void contiguous_step(const func_t& f, const KernelData<NT>& d, int64_t i,
                                                std::index_sequence<I...>) {
  using R = typename traits::result_type;
  reinterpret_cast<R*>(d.data[0])[i] = f(load_arg<traits, static_cast<int>(I)>(
      d, static_cast<uint32_t>(i * sizeof(typename traits::template arg<static_cast<int>(I)>)))...);
}

// Every operand contiguous (or a CPU scalar) and aligned to kVecSize elements:
// kVecSize elements per thread and step, then the tail one by one.
template <typename func_t, int NT>
__global__ void vectorized_elementwise_kernel(int32_t n, func_t f, KernelData<NT> d) {
  using traits = gpu_function_traits<func_t>;
  using Idx = std::make_index_sequence<traits::arity>;
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t nvec = n / kVecSize;
  for (int64_t v = tid; v < nvec; v += step) vec_step<traits>(f, d, v, Idx{});
  for (int64_t i = nvec * kVecSize + tid; i < n; i += step) contiguous_step<traits>(f, d, i, Idx{});
}

template <typename traits, std::size_t... I>
inline bool arg_sizes_match(const TensorIterator& iter, std::index_sequence<I...>) {
  return ((sizeof(typename traits::template arg<static_cast<int>(I)>) ==
           c10::elementSize(iter.dtype(iter.noutputs() + static_cast<int>(I)))) &&
          ... && true);
}
// One launch over an iteration that fits 32-bit offsets.
template <typename func_t>
void launch_32bit(const TensorIterator& iter, const func_t& f) {
  using traits = gpu_function_traits<func_t>;
  constexpr int NT = traits::arity + 1;
  const int64_t numel = iter.numel();
  if (numel == 0) return;
  KernelData<NT> d{};
  std::memset(&d, 0, sizeof(d));
  bool vectorizable = iter.ndim() <= 1;
  for (int k = 0; k < NT; ++k) {
    d.data[k] = static_cast<char*>(iter.data_ptr(k));
    const int64_t isz = static_cast<int64_t>(c10::elementSize(iter.dtype(k)));
    if (k > 0 && iter.is_cpu_scalar(k)) {
      std::memcpy(d.scalar_bytes[k], iter.data_ptr(k), static_cast<size_t>(isz));
      d.scalar_mask |= 1u << k;
      d.data[k] = nullptr;
      continue;
    }
    if (iter.ndim() == 1 && iter.strides(k)[0] != isz) vectorizable = false;
    if (reinterpret_cast<uintptr_t>(iter.data_ptr(k)) % static_cast<uintptr_t>(isz * kVecSize) != 0) {
      vectorizable = false;
    }
  }
  cudaStream_t stream = ember::at::cuda::current_stream();
  const int threads = ember::at::cuda::kNumThreads;
  if (vectorizable && iter.ndim() == 1) {
    const unsigned grid = ember::at::cuda::grid_size(ember::at::cuda::ceil_div<int64_t>(numel, kVecSize), threads);
    vectorized_elementwise_kernel<func_t, NT><<<grid, threads, 0, stream>>>(static_cast<int32_t>(numel), f, d);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
    return;
  }
  OffsetCalculator<NT> calc(iter.shape(), [&](int k) { return iter.strides(k); });
  const unsigned grid = ember::at::cuda::grid_size(numel, threads);
  elementwise_kernel<func_t, NT><<<grid, threads, 0, stream>>>(static_cast<int32_t>(numel), f, calc, d);
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
}

}  // namespace cuda_detail

// Runs f over iter on the GPU (see the top of this file), then casts the outputs.
template <typename func_t>
void gpu_kernel(TensorIterator& iter, const func_t& f) {
  using traits = gpu_function_traits<func_t>;
  EMBER_INTERNAL_ASSERT(iter.noutputs() == 1, "gpu_kernel: expected one output, got ", iter.noutputs());
  EMBER_INTERNAL_ASSERT(iter.ninputs() == traits::arity, "gpu_kernel: the functor takes ", traits::arity,
                        " arguments but the iterator has ", iter.ninputs(), " inputs");
  EMBER_INTERNAL_ASSERT(sizeof(typename traits::result_type) == c10::elementSize(iter.dtype(0)) &&
                            cuda_detail::arg_sizes_match<traits>(iter, std::make_index_sequence<traits::arity>{}),
                        "gpu_kernel: the functor's types do not match the iterator's dtypes");
  if (iter.numel() > 0) {
    c10::DeviceGuard guard(iter.device(0));
    if (iter.can_use_32bit_indexing()) {
      cuda_detail::launch_32bit(iter, f);
    } else {
      for (const TensorIterator& sub : iter.with_32bit_indexing()) cuda_detail::launch_32bit(sub, f);
    }
  }
  iter.cast_outputs();
}

// PyTorch's name for the same thing: CPU scalars are handled by gpu_kernel itself.
template <typename func_t>
void gpu_kernel_with_scalars(TensorIterator& iter, const func_t& f) {
  gpu_kernel(iter, f);
}

}  // namespace ember::at::native
