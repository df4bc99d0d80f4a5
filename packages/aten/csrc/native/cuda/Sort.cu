// CUDA sort kernel (sort_stub) and the read-off of sorted rows for kthvalue, median,
// nanmedian and mode (pick_sorted_stub).
//
// Sort: each element becomes an unsigned key whose integer order is the value order
// (NaN largest, -0.0 == 0.0; descending = the complemented keys, as the CPU kernel),
// paired with its position along the row; CUB's segmented radix sort (stable) sorts
// every row; then the positions become the indices and gather the values (which so
// keep their exact bits). Keys are 32-bit (64-bit for double/int64), and only the
// key bits the dtype uses are sorted.
#include <cub/device/device_segmented_radix_sort.cuh>

#include <climits>

#include <ember/aten/Dispatch.h>

#include "../SortedPick.h"
#include "../Sorting.h"
#include "Reduce.cuh"

namespace ember::at::native {
namespace {

using cuda_reduce::OffsetCalc;

ScalarType bool_as_byte(ScalarType t) { return t == ScalarType::Bool ? ScalarType::Byte : t; }

__device__ __forceinline__ uint32_t sort_key(float v) {
  if (v != v) return 0xFFFFFFFFu;
  if (v == 0.0f) v = 0.0f;  // -0.0 sorts with 0.0
  const uint32_t u = __float_as_uint(v);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
__device__ __forceinline__ uint64_t sort_key(double v) {
  if (v != v) return ~0ull;
  if (v == 0.0) v = 0.0;
  const uint64_t u = static_cast<uint64_t>(__double_as_longlong(v));
  return (u >> 63) ? ~u : (u | (1ull << 63));
}
__device__ __forceinline__ uint32_t sort_key(c10::Half v) { return sort_key(static_cast<float>(v)); }
__device__ __forceinline__ uint32_t sort_key(c10::BFloat16 v) { return sort_key(static_cast<float>(v)); }
__device__ __forceinline__ uint32_t sort_key(uint8_t v) { return v; }
__device__ __forceinline__ uint32_t sort_key(int8_t v) { return static_cast<uint8_t>(v) ^ 0x80u; }
__device__ __forceinline__ uint32_t sort_key(int16_t v) { return static_cast<uint16_t>(v) ^ 0x8000u; }
__device__ __forceinline__ uint32_t sort_key(int32_t v) { return static_cast<uint32_t>(v) ^ 0x80000000u; }
__device__ __forceinline__ uint64_t sort_key(int64_t v) { return static_cast<uint64_t>(v) ^ (1ull << 63); }

// Key bits a dtype's keys use (the radix sort skips the rest).
template <typename scalar_t>
constexpr int key_bits() {
  if constexpr (sizeof(scalar_t) == 1) {
    return 8;
  } else if constexpr (std::is_same_v<scalar_t, int16_t>) {
    return 16;
  } else if constexpr (sizeof(scalar_t) == 8) {
    return 64;
  } else {
    return 32;
  }
}

template <typename scalar_t>
using sort_key_t = std::conditional_t<sizeof(scalar_t) == 8, uint64_t, uint32_t>;

struct SortArgs {
  OffsetCalc batch;  // s0: input strides, s1: output strides
  int64_t row0;      // first row of this launch
  int64_t rows, n, in_stride, out_stride;
};

// keys[r * n + j], pos[r * n + j] = j for the launch's rows; offsets[r] = r * n.
template <typename scalar_t>
__global__ void make_keys(const scalar_t* __restrict__ in, sort_key_t<scalar_t>* __restrict__ keys,
                          int64_t* __restrict__ pos, int* __restrict__ offsets, SortArgs a, sort_key_t<scalar_t> flip) {
  const int64_t total = a.rows * a.n;
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < total;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = t / a.n, j = t % a.n;
    const int64_t io = a.batch.offset0(a.row0 + r);
    keys[t] = static_cast<sort_key_t<scalar_t>>(sort_key(in[io + j * a.in_stride])) ^ flip;
    pos[t] = j;
    if (j == 0) offsets[r] = static_cast<int>(t);
    if (t == total - 1) offsets[a.rows] = static_cast<int>(total);
  }
}

template <typename scalar_t>
__global__ void write_sorted(const scalar_t* __restrict__ in, const int64_t* __restrict__ pos,
                             scalar_t* __restrict__ values, int64_t* __restrict__ indices, SortArgs a) {
  const int64_t total = a.rows * a.n;
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; t < total;
       t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = t / a.n, j = t % a.n;
    int64_t io = 0, oo = 0;
    a.batch.offsets(a.row0 + r, io, oo);
    const int64_t p = pos[t];
    const int64_t o = oo + j * a.out_stride;
    indices[o] = p;
    if (values) values[o] = in[io + p * a.in_stride];
  }
}

Tensor device_buffer(int64_t bytes, Device device) {
  return empty({std::max<int64_t>(bytes, 1)}, ScalarType::Byte, device);
}

template <typename scalar_t>
void sort_impl(const SortPlan& p) {
  using K = sort_key_t<scalar_t>;
  const int64_t n = p.n;
  if (p.rows == 0 || n == 0) return;
  c10::DeviceGuard guard(p.device);
  EMBER_CHECK(p.batch_sizes.size() <= static_cast<size_t>(cuda_reduce::kMaxDims), "CUDA sort: more than ",
              cuda_reduce::kMaxDims, " other dimensions are not supported");
  EMBER_CHECK(n <= INT_MAX / 2, "sort: a dimension of size ", n, " is too long to sort on CUDA");
  SortArgs a;
  a.batch.ndim = static_cast<int>(p.batch_sizes.size());
  for (size_t d = 0; d < p.batch_sizes.size(); ++d) {
    a.batch.sizes[d] = p.batch_sizes[d];
    a.batch.s0[d] = p.batch_in_strides[d];
    a.batch.s1[d] = p.batch_out_strides[d];
  }
  a.n = n;
  a.in_stride = p.in_stride;
  a.out_stride = p.out_stride;
  const K flip = p.descending ? static_cast<K>(~K(0)) : K(0);
  const int end_bit = key_bits<scalar_t>();
  const cudaStream_t stream = cuda::current_stream();
  const auto* in = static_cast<const scalar_t*>(p.in);
  // rows per launch: CUB counts items in int
  const int64_t batch_rows = std::min<int64_t>(p.rows, std::max<int64_t>(1, (INT_MAX / 2) / n));
  const int64_t items = batch_rows * n;
  Tensor keys = device_buffer(2 * items * static_cast<int64_t>(sizeof(K)), p.device);
  Tensor pos = device_buffer(2 * items * static_cast<int64_t>(sizeof(int64_t)), p.device);
  Tensor offsets = device_buffer((batch_rows + 1) * static_cast<int64_t>(sizeof(int)), p.device);
  K* k_in = static_cast<K*>(keys.data_ptr());
  K* k_out = k_in + items;
  int64_t* p_in = static_cast<int64_t*>(pos.data_ptr());
  int64_t* p_out = p_in + items;
  int* offs = static_cast<int*>(offsets.data_ptr());
  size_t temp_bytes = 0;
  EMBER_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairs(nullptr, temp_bytes, k_in, k_out, p_in, p_out,
                                                            static_cast<int>(items), static_cast<int>(batch_rows), offs,
                                                            offs + 1, 0, end_bit, stream));
  Tensor temp = device_buffer(static_cast<int64_t>(temp_bytes), p.device);
  for (int64_t r0 = 0; r0 < p.rows; r0 += batch_rows) {
    a.row0 = r0;
    a.rows = std::min(batch_rows, p.rows - r0);
    const int64_t total = a.rows * n;
    make_keys<scalar_t><<<cuda::grid_size(total), cuda::kNumThreads, 0, stream>>>(in, k_in, p_in, offs, a, flip);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
    size_t bytes = temp_bytes;
    EMBER_CUDA_CHECK(cub::DeviceSegmentedRadixSort::SortPairs(temp.data_ptr(), bytes, k_in, k_out, p_in, p_out,
                                                              static_cast<int>(total), static_cast<int>(a.rows), offs,
                                                              offs + 1, 0, end_bit, stream));
    write_sorted<scalar_t><<<cuda::grid_size(total), cuda::kNumThreads, 0, stream>>>(
        in, p_out, static_cast<scalar_t*>(p.values), p.indices, a);
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  }
}

void sort_kernel_cuda(const SortPlan& p) {
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(bool_as_byte(p.dtype), "sort", [&] { sort_impl<scalar_t>(p); });
}

// ---- kthvalue / median / nanmedian / mode: one thread per row (sorted; kthvalue's unsorted) ----

template <typename scalar_t>
__global__ void pick_kernel(SortedPick kind, const scalar_t* __restrict__ vals, const int64_t* __restrict__ idxs,
                            int64_t rows, int64_t n, int64_t k, scalar_t* __restrict__ out_v,
                            int64_t* __restrict__ out_i) {
  for (int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; r < rows;
       r += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const scalar_t* v = vals + r * n;
    const int64_t* ix = idxs + r * n;
    int64_t pos = k;
    if (kind == SortedPick::Kth) {  // unsorted scratch rows (Sorting.cpp's select_rows)
      sorted_pick::select_kth(const_cast<scalar_t*>(v), const_cast<int64_t*>(ix), n, k);
    } else {
      pos = sorted_pick::position(kind, v, n, k);
    }
    out_v[r] = v[pos];
    out_i[r] = ix[pos];
  }
}

void pick_sorted_cuda(SortedPick kind, const SortedRows& s, int64_t k, const Tensor& out_values,
                      const Tensor& out_indices) {
  if (s.rows == 0) return;
  c10::DeviceGuard guard(out_values.device());
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(bool_as_byte(s.values.dtype()), "sort", [&] {
    pick_kernel<scalar_t><<<cuda::grid_size(s.rows), cuda::kNumThreads, 0, cuda::current_stream()>>>(
        kind, static_cast<const scalar_t*>(s.values.data_ptr()), s.indices.data_ptr<int64_t>(), s.rows, s.n, k,
        static_cast<scalar_t*>(out_values.data_ptr()), out_indices.data_ptr<int64_t>());
    EMBER_CUDA_KERNEL_LAUNCH_CHECK();
  });
}

}  // namespace

REGISTER_CUDA_DISPATCH(sort_stub, &sort_kernel_cuda);
REGISTER_CUDA_DISPATCH(pick_sorted_stub, &pick_sorted_cuda);

}  // namespace ember::at::native
