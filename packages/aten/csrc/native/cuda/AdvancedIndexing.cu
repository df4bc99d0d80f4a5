// CUDA kernels of the accumulating index writes (../Indexing.h): index_reduce_stub
// serves index_put_(accumulate=True), index_add, scatter(reduce=...), scatter_add,
// scatter_reduce, index_reduce and put_(accumulate=True); divide_by_count_stub finishes
// reduce='mean'.
//
// One kernel per dtype, the reduction chosen at run time. Each element updates its
// destination atomically: native atomicAdd for float/double/int32/int64 sums, a
// compare-and-swap loop otherwise (Half/BFloat16 compute in float and round once, as
// the CPU loop does). Determinism: as in PyTorch's CUDA kernels, sums and products of
// floating-point values landing on the same element are combined in whatever order
// the threads arrive, so repeated runs may differ in the last bits (the CPU loop is
// serial and exact); amax/amin and integer results do not depend on the order.
#include <ember/aten/Dispatch.h>

#include "IndexingUtils.cuh"

namespace ember::at::native {
namespace {

namespace ecuda = ::ember::at::cuda;
using cuda_index::IndexGeom;
using cuda_index::kMaxOperands;

// dst = reduce_combine(op, alpha, dst, v), atomically.
template <typename T>
__device__ inline void reduce_at(T* dst, T v, ReduceOp op, opmath_t<T> alpha) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, int32_t>) {
    if (op == ReduceOp::Add) {  // T(x + alpha * y) with one rounding of alpha * y, as the CAS path
      const T add = alpha * v;
      atomicAdd(dst, add);
      return;
    }
  } else if constexpr (std::is_same_v<T, int64_t>) {
    if (op == ReduceOp::Add) {
      const int64_t add = alpha * v;  // two's complement: the unsigned sum wraps the same way
      atomicAdd(reinterpret_cast<unsigned long long*>(dst), static_cast<unsigned long long>(add));
      return;
    }
  }
  cuda_index::atomic_apply(dst, v, [op, alpha](T x, T y) { return cuda_index::reduce_combine<T>(op, alpha, x, y); });
}

template <typename T>
__global__ void index_reduce_kernel(const __grid_constant__ IndexGeom g, int64_t n, ecuda::DeviceError* err, int op_id,
                                    ReduceOp op, opmath_t<T> alpha) {
  int64_t off[kMaxOperands];
  EMBER_GRID_STRIDE_LOOP(i, n) {
    cuda_index::operand_offsets(g, i, off);
    int64_t extra;
    if (!cuda_index::indexed_offset(g, off, err, op_id, extra)) continue;
    reduce_at<T>(reinterpret_cast<T*>(g.data[0] + off[0] + extra), *reinterpret_cast<const T*>(g.data[1] + off[1]), op,
                 alpha);
  }
}

template <typename T>
void launch_index_reduce(const IndexGeom& g, int64_t n, ecuda::DeviceError* err, int op_id, ReduceOp op,
                         const Scalar& alpha) {
  opmath_t<T> a{};
  if constexpr (std::is_same_v<T, bool>) {
    // bool reductions are or / and; x + alpha * y with alpha=False adds nothing
    if (op == ReduceOp::Add && !alpha.to<bool>()) return;
    a = true;
  } else {
    a = alpha.to<opmath_t<T>>();
  }
  index_reduce_kernel<T>
      <<<ecuda::grid_size(n), ecuda::kNumThreads, 0, ecuda::current_stream()>>>(g, n, err, op_id, op, a);
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
}

void index_reduce_kernel_cuda(TensorIterator& iter, const IndexedDims& dims, IndexMode mode, ReduceOp op,
                              const Scalar& alpha, const char* name) {
  EMBER_INTERNAL_ASSERT(op != ReduceOp::Assign, "index_reduce: Assign is index_put_stub's job");
  const int64_t n = iter.numel();
  if (n == 0) return;
  c10::DeviceGuard guard(iter.device(0));
  ecuda::check_device_errors(iter.device(0).index);
  const IndexGeom g = cuda_index::make_geom(iter, &dims, mode, name);
  ecuda::DeviceError* err = ecuda::device_error_slot();
  const int op_id = cuda_index::index_error_id(name, mode);
  EMBER_DISPATCH_ALL_TYPES(iter.dtype(0), "index_reduce",
                           [&] { launch_index_reduce<scalar_t>(g, n, err, op_id, op, alpha); });
}

// ---- reduce='mean': self[i] /= count[i] where count[i] > 0 ----------------------------

template <typename T>
__global__ void divide_by_count_kernel(const __grid_constant__ IndexGeom g, int64_t n) {
  int64_t off[kMaxOperands];
  EMBER_GRID_STRIDE_LOOP(i, n) {
    cuda_index::operand_offsets(g, i, off);
    cuda_index::divide_element<T>(g, off);
  }
}

template <typename T>
void launch_divide_by_count(const IndexGeom& g, int64_t n) {
  divide_by_count_kernel<T><<<ecuda::grid_size(n), ecuda::kNumThreads, 0, ecuda::current_stream()>>>(g, n);
  EMBER_CUDA_KERNEL_LAUNCH_CHECK();
}

// iter = [self, count(int64)]
void divide_by_count_kernel_cuda(TensorIterator& iter) {
  const int64_t n = iter.numel();
  // a bool "mean" stays the logical or of its values
  if (n == 0 || iter.dtype(0) == ScalarType::Bool) return;
  c10::DeviceGuard guard(iter.device(0));
  const IndexGeom g = cuda_index::make_geom(iter, nullptr, IndexMode::NoWrap, "index_reduce");
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(iter.dtype(0), "index_reduce", [&] { launch_divide_by_count<scalar_t>(g, n); });
}

}  // namespace

REGISTER_CUDA_DISPATCH(index_reduce_stub, &index_reduce_kernel_cuda);
REGISTER_CUDA_DISPATCH(divide_by_count_stub, &divide_by_count_kernel_cuda);

}  // namespace ember::at::native
