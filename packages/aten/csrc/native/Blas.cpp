// Batched GEMM and DOT for every numeric dtype (see Blas.h for the plan).
#include "Blas.h"
#include "BFloat16Gemm.h"
#include "Im2Col.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include <cblas.h>

#include <ember/aten/Dispatch.h>
#include <ember/aten/Parallel.h>

namespace ember::at::native {

const char* blas_cpp_type_name(ScalarType t) {
  switch (t) {
    case ScalarType::Bool:
      return "bool";
    case ScalarType::Byte:
      return "unsigned char";
    case ScalarType::Char:
      return "signed char";
    case ScalarType::Short:
      return "short int";
    case ScalarType::Int:
      return "int";
    case ScalarType::Long:
      return "long int";
    case ScalarType::Half:
      return "c10::Half";
    case ScalarType::BFloat16:
      return "c10::BFloat16";
    case ScalarType::Float:
      return "float";
    case ScalarType::Double:
      return "double";
    default:
      return c10::toString(t);
  }
}

// OpenBLAS runs on one thread, always: ember parallelises its products itself (gemm_blas
// below) on its own OpenMP threads. Two thread pools on the same cores -- this pthreads
// OpenBLAS's and OpenMP's -- each spinning while the other works, made a small conv
// training step 9x slower at 2 threads than at 1 on a loaded 2-core machine.
void set_blas_num_threads(int /*n*/) { scipy_openblas_set_num_threads(1); }

namespace {
const bool g_blas_single_threaded = [] {
  scipy_openblas_set_num_threads(1);
  return true;
}();
}  // namespace

bool cpu_capability_built(CPUCapability c);  // csrc/core/DispatchStub.cpp

// ---- bfloat16: ember's own GEMM (BFloat16Gemm.h, cpu/BFloat16GemmKernel.cpp) ----------------
DEFINE_DISPATCH(bf16_gemm_stub);

bool cpu_has_avx512_bf16() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16");
  }();
  return has;
#else
  return false;
#endif
}

namespace {
// the fallback forced (EMBER_BF16_GEMM_KERNEL=fallback, or _C._set_bf16_gemm_kernel)
std::atomic<bool> g_bf16_gemm_fallback{[] {
  const char* env = std::getenv("EMBER_BF16_GEMM_KERNEL");
  return env && std::string(env) == "fallback";
}()};
}  // namespace

bool bf16_gemm_may_use_avx512_bf16() { return cpu_has_avx512_bf16() && !g_bf16_gemm_fallback.load(); }

std::string bf16_gemm_kernel_name() {
  // the AVX512 copy of the kernel runs vdpbf16ps; the others always fall back
  const bool avx512 = get_cpu_capability() >= CPUCapability::AVX512 && cpu_capability_built(CPUCapability::AVX512);
  return avx512 && bf16_gemm_may_use_avx512_bf16() ? "avx512_bf16" : "fallback";
}

void set_bf16_gemm_kernel(const std::string& name) {
  EMBER_CHECK(name == "auto" || name == "fallback", "_set_bf16_gemm_kernel: expected 'auto' or 'fallback', got '", name,
              "'");
  g_bf16_gemm_fallback.store(name == "fallback");
}

namespace {
std::atomic<bool> g_cublas_allow_tf32{false};
std::atomic<bool> g_cudnn_allow_tf32{true};
std::atomic<bool> g_cublas_fp16_reduced{true};
std::atomic<bool> g_cublas_bf16_reduced{true};
}  // namespace

bool cublas_allow_tf32() { return g_cublas_allow_tf32.load(); }
void set_cublas_allow_tf32(bool v) { g_cublas_allow_tf32.store(v); }
bool cudnn_allow_tf32() { return g_cudnn_allow_tf32.load(); }
void set_cudnn_allow_tf32(bool v) { g_cudnn_allow_tf32.store(v); }
bool cublas_allow_fp16_reduced_precision_reduction() { return g_cublas_fp16_reduced.load(); }
void set_cublas_allow_fp16_reduced_precision_reduction(bool v) { g_cublas_fp16_reduced.store(v); }
bool cublas_allow_bf16_reduced_precision_reduction() { return g_cublas_bf16_reduced.load(); }
void set_cublas_allow_bf16_reduced_precision_reduction(bool v) { g_cublas_bf16_reduced.store(v); }

BlasOperand blas_operand(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  if ((cols == 1 || cs == 1) && (rows == 1 || rs >= std::max<int64_t>(1, cols))) {
    return {true, false, rows == 1 ? std::max<int64_t>(1, cols) : rs};
  }
  if ((rows == 1 || rs == 1) && (cols == 1 || cs >= std::max<int64_t>(1, rows))) {
    return {true, true, cols == 1 ? std::max<int64_t>(1, rows) : cs};
  }
  return {};
}

namespace {

bool fits_blas_int(int64_t v) { return v <= INT_MAX; }

// ---- one matrix product, row-major: C = alpha * op(A) op(B) + beta * C ------------------------
//
// op(A) is m x k, op(B) is k x n. The element (i, p) of op(A) is a[i * lda + p] (no
// transpose) or a[p * lda + i] (transposed).

template <typename T>
inline T at_op(const T* a, bool trans, int64_t ld, int64_t i, int64_t p) {
  return trans ? a[p * ld + i] : a[i * ld + p];
}

// Products of at most kSmallGemmDim on every side, B not transposed, skip OpenBLAS: its
// fixed cost per call (argument checks, packing into its panels) exceeds such a product's
// own arithmetic, and a batch of them (bmm of 1000 32 x 32 matrices) paid it 1000 times.
// small_gemm_stub (the convolution's register-blocked kernel, cpu/Im2ColKernel.cpp)
// computes c = op(a) b (+ c), i.e. alpha 1 with beta 0 or 1. (With B transposed its rows
// would need a copy first, which costs as much as the product: OpenBLAS keeps those.)
constexpr int64_t kSmallGemmDim = 64;

template <typename T>
bool small_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b,
                int64_t ldb, T beta, T* c, int64_t ldc) {
  if (tb || m > kSmallGemmDim || n > kSmallGemmDim || k > kSmallGemmDim || alpha != T(1) ||
      (beta != T(0) && beta != T(1))) {
    return false;
  }
  small_gemm_stub(DeviceType::CPU, c10::CppTypeToScalarType<T>::value, ta, tb, m, n, k, a, lda, b, ldb, c, ldc,
                  beta == T(1));
  return true;
}

void sgemm_one_thread(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                      const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (small_gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)) return;
  scipy_cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (blasint)m,
                    (blasint)n, (blasint)k, alpha, a, (blasint)lda, b, (blasint)ldb, beta, c, (blasint)ldc);
}

void sgemm_one_thread(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
                      const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  if (small_gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)) return;
  scipy_cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (blasint)m,
                    (blasint)n, (blasint)k, alpha, a, (blasint)lda, b, (blasint)ldb, beta, c, (blasint)ldc);
}

// One product on ember's OpenMP threads. OpenBLAS itself always runs on one thread (see
// set_blas_num_threads): a product above kBlasSerialWork is cut into one panel of C per
// thread -- column panels, or row panels when C is taller than wide -- and each thread
// runs a single-threaded GEMM on its panel. The panels depend only on the shape and the
// number of threads, so a product gives the same bits on every call with the same threads
// (a different number of threads may round some elements differently, as OpenBLAS's own
// threading does).
template <typename T>
void gemm_blas(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b,
               int64_t ldb, T beta, T* c, int64_t ldc) {
  const int64_t threads = get_num_threads();
  if (threads <= 1 || in_parallel_region() || m * n * k <= kBlasSerialWork) {
    sgemm_one_thread(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  constexpr int64_t kPanelAlign = 16;  // whole SIMD tiles of OpenBLAS's micro-kernel per panel
  const bool by_rows = m > n;
  const int64_t extent = by_rows ? m : n;
  const int64_t panels = std::min<int64_t>(threads, std::max<int64_t>(1, extent / kPanelAlign));
  const int64_t step = ((extent + panels - 1) / panels + kPanelAlign - 1) / kPanelAlign * kPanelAlign;
  parallel_for(0, panels, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t lo = p * step, hi = std::min(extent, lo + step);
      if (lo >= hi) continue;
      if (by_rows) {  // rows lo..hi of op(A) and of C
        sgemm_one_thread(ta, tb, hi - lo, n, k, alpha, ta ? a + lo : a + lo * lda, lda, b, ldb, beta, c + lo * ldc,
                         ldc);
      } else {  // columns lo..hi of op(B) and of C
        sgemm_one_thread(ta, tb, m, hi - lo, k, alpha, a, lda, tb ? b + lo * ldb : b + lo, ldb, beta, c + lo, ldc);
      }
    }
  });
}

// float16: op(A) and op(B) as contiguous float32, sgemm, round once. (bfloat16 has its own
// GEMM: BFloat16Gemm.h.)
template <typename T>
void gemm_reduced(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const T* a, int64_t lda, const T* b,
                  int64_t ldb, float beta, T* c, int64_t ldc) {
  std::vector<float> fa(static_cast<size_t>(m * k)), fb(static_cast<size_t>(k * n)), fc(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p) fa[i * k + p] = static_cast<float>(at_op(a, ta, lda, i, p));
  for (int64_t p = 0; p < k; ++p)
    for (int64_t j = 0; j < n; ++j) fb[p * n + j] = static_cast<float>(at_op(b, tb, ldb, p, j));
  if (beta != 0.0f) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) fc[i * n + j] = static_cast<float>(c[i * ldc + j]);
  }
  if (m > 0 && n > 0) {
    if (k > 0) {
      gemm_blas(false, false, m, n, k, alpha, fa.data(), std::max<int64_t>(1, k), fb.data(), std::max<int64_t>(1, n),
                beta, fc.data(), std::max<int64_t>(1, n));
    } else {
      for (auto& v : fc) v = beta == 0.0f ? 0.0f : v * beta;
    }
  }
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = static_cast<T>(fc[i * n + j]);
}

// Integers: blocked i-p-j loops over packed operands, accumulated in uint64 (wrap-around,
// so the low bits equal the dtype's own wrapping arithmetic, with no signed overflow).
template <typename T>
void gemm_integral(bool ta, bool tb, int64_t m, int64_t n, int64_t k, int64_t alpha, const T* a, int64_t lda,
                   const T* b, int64_t ldb, int64_t beta, T* c, int64_t ldc) {
  using acc_t = uint64_t;
  auto widen = [](T v) { return static_cast<acc_t>(static_cast<int64_t>(v)); };
  std::vector<acc_t> pb(static_cast<size_t>(k * n));
  for (int64_t p = 0; p < k; ++p)
    for (int64_t j = 0; j < n; ++j) pb[p * n + j] = widen(at_op(b, tb, ldb, p, j));
  const acc_t ua = static_cast<acc_t>(alpha), ub = static_cast<acc_t>(beta);
  constexpr int64_t kBlockJ = 512, kBlockP = 128;
  const int64_t grain = std::max<int64_t>(1, GRAIN_SIZE / std::max<int64_t>(1, n * k));
  parallel_for(0, m, grain, [&](int64_t i0, int64_t i1) {
    std::vector<acc_t> acc(static_cast<size_t>(std::min(n, kBlockJ)));
    for (int64_t i = i0; i < i1; ++i) {
      for (int64_t j0 = 0; j0 < n; j0 += kBlockJ) {
        const int64_t jn = std::min(n - j0, kBlockJ);
        std::fill(acc.begin(), acc.begin() + jn, acc_t{0});
        for (int64_t p0 = 0; p0 < k; p0 += kBlockP) {
          const int64_t pe = std::min(k, p0 + kBlockP);
          for (int64_t p = p0; p < pe; ++p) {
            const acc_t av = widen(at_op(a, ta, lda, i, p));
            const acc_t* brow = pb.data() + p * n + j0;
            for (int64_t j = 0; j < jn; ++j) acc[j] += av * brow[j];
          }
        }
        T* crow = c + i * ldc + j0;
        for (int64_t j = 0; j < jn; ++j) {
          const acc_t prev = ub == 0 ? 0 : ub * widen(crow[j]);
          crow[j] = static_cast<T>(static_cast<int64_t>(prev + ua * acc[j]));
        }
      }
    }
  });
}

template <typename T>
void gemm_one(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const Scalar& alpha, const T* a, int64_t lda,
              const T* b, int64_t ldb, const Scalar& beta, T* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    if (k == 0) {  // BLAS would still scale C; do it here (beta == 0: zeros, NaN ignored)
      const T bv = beta.to<T>();
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = bv == T(0) ? T(0) : c[i * ldc + j] * bv;
      return;
    }
    gemm_blas(ta, tb, m, n, k, alpha.to<T>(), a, lda, b, ldb, beta.to<T>(), c, ldc);
  } else if constexpr (std::is_same_v<T, c10::BFloat16>) {
    bf16_gemm_stub(DeviceType::CPU, ta, tb, m, n, k, alpha.to<float>(), a, lda, b, ldb, beta.to<float>(), c, ldc,
                   false);
  } else if constexpr (std::is_same_v<T, c10::Half>) {
    gemm_reduced<T>(ta, tb, m, n, k, alpha.to<float>(), a, lda, b, ldb, beta.to<float>(), c, ldc);
  } else {
    gemm_integral<T>(ta, tb, m, n, k, alpha.to<int64_t>(), a, lda, b, ldb, beta.to<int64_t>(), c, ldc);
  }
}

// A 3-d operand that BLAS can read matrix by matrix, or a contiguous copy of it.
struct BatchOperand {
  Tensor t;  // what is read (the caller's tensor or its copy)
  BlasOperand op;
};

BatchOperand batch_operand(const Tensor& t) {
  BlasOperand op = blas_operand(t.size(1), t.size(2), t.stride(1), t.stride(2));
  if (op.ok && fits_blas_int(op.ld)) return {t, op};
  Tensor c = t.contiguous();
  return {c, blas_operand(c.size(1), c.size(2), c.stride(1), c.stride(2))};
}

template <typename T>
void gemm_batched_impl(const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& beta, const Scalar& alpha) {
  const int64_t batch = out.size(0), m = out.size(1), n = out.size(2), k = a.size(2);
  BatchOperand A = batch_operand(a), B = batch_operand(b);
  // C must be row-major; a column-major C is computed as C^T = op(B)^T op(A)^T.
  BlasOperand C = blas_operand(m, n, out.stride(1), out.stride(2));
  Tensor c_tmp;
  if (!C.ok || !fits_blas_int(C.ld)) {
    c_tmp = beta.toDouble() == 0.0 && !beta.isBoolean() ? empty(out.sizes(), out.dtype()) : out.contiguous();
    C = blas_operand(m, n, c_tmp.stride(1), c_tmp.stride(2));
  }
  const Tensor& c_t = c_tmp.defined() ? c_tmp : out;
  const T* pa = static_cast<const T*>(A.t.data_ptr());
  const T* pb = static_cast<const T*>(B.t.data_ptr());
  T* pc = static_cast<T*>(c_t.data_ptr());
  const int64_t sa = A.t.stride(0), sb = B.t.stride(0), sc = c_t.stride(0);
  auto one = [&](int64_t i) {
    if (!C.trans) {
      gemm_one<T>(A.op.trans, B.op.trans, m, n, k, alpha, pa + i * sa, A.op.ld, pb + i * sb, B.op.ld, beta, pc + i * sc,
                  C.ld);
    } else {
      // (op(A) op(B))^T = op(B)^T op(A)^T: swap the operands and flip their transposes
      gemm_one<T>(!B.op.trans, !A.op.trans, n, m, k, alpha, pb + i * sb, B.op.ld, pa + i * sa, A.op.ld, beta,
                  pc + i * sc, C.ld);
    }
  };
  // Products too small to split themselves (gemm_blas: at most kBlasSerialWork multiply-adds):
  // one single-threaded GEMM per thread over the batch. Larger ones split over the threads.
  const int64_t work = std::max<int64_t>(1, m * n * std::max<int64_t>(k, 1));
  if (batch > 1 && work <= kBlasSerialWork && get_num_threads() > 1 && !in_parallel_region()) {
    const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / work);
    parallel_for(0, batch, grain, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) one(i);
    });
  } else {
    for (int64_t i = 0; i < batch; ++i) one(i);  // each product splits itself over the threads
  }
  if (c_tmp.defined()) out.copy_(c_tmp);
}

template <typename T>
Tensor dot_impl(const Tensor& x, const Tensor& y) {
  const int64_t n = x.numel();
  Tensor xs = x.stride(0) == 0 && n > 1 ? x.contiguous() : x;
  Tensor ys = y.stride(0) == 0 && n > 1 ? y.contiguous() : y;
  const T* px = static_cast<const T*>(xs.data_ptr());
  const T* py = static_cast<const T*>(ys.data_ptr());
  const int64_t ix = xs.stride(0), iy = ys.stride(0);
  T r{};
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    if (n > 0 && fits_blas_int(n) && fits_blas_int(ix) && fits_blas_int(iy)) {
      if constexpr (std::is_same_v<T, float>) {
        r = scipy_cblas_sdot((blasint)n, px, (blasint)ix, py, (blasint)iy);
      } else {
        r = scipy_cblas_ddot((blasint)n, px, (blasint)ix, py, (blasint)iy);
      }
    } else {
      for (int64_t i = 0; i < n; ++i) r += px[i * ix] * py[i * iy];
    }
  } else if constexpr (std::is_same_v<T, c10::Half> || std::is_same_v<T, c10::BFloat16>) {
    float acc = 0.0f;
    for (int64_t i = 0; i < n; ++i) acc += static_cast<float>(px[i * ix]) * static_cast<float>(py[i * iy]);
    r = static_cast<T>(acc);
  } else {
    uint64_t acc = 0;
    for (int64_t i = 0; i < n; ++i) {
      acc += static_cast<uint64_t>(static_cast<int64_t>(px[i * ix])) *
             static_cast<uint64_t>(static_cast<int64_t>(py[i * iy]));
    }
    r = static_cast<T>(static_cast<int64_t>(acc));
  }
  return scalar_tensor(Scalar(r), x.dtype());
}

template <typename T>
void gemm_cpu_impl(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b,
                   int64_t ldb, T beta, T* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == T(0) ? T(0) : c[i * ldc + j] * beta;
    return;
  }
  gemm_blas(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace

void gemm_cpu(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
              const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  gemm_cpu_impl(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void gemm_cpu(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
              const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  gemm_cpu_impl(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void gemm_batched(const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& beta, const Scalar& alpha) {
  if (out.is_cuda()) {
#ifdef EMBER_WITH_CUDA
    gemm_batched_cuda(out, a, b, beta, alpha);
    return;
#else
    EMBER_CHECK(false, "matrix product: ember.aten was built without CUDA");
#endif
  }
  // a clear error rather than OpenBLAS's "Detect OpenMP Loop" warning and a possible hang
  EMBER_CHECK(!in_parallel_region(),
              "matrix product: called from inside an OpenMP parallel region (OpenBLAS must not be entered from "
              "OpenMP threads); run it outside parallel_for");
  EMBER_CHECK(fits_blas_int(out.size(1)) && fits_blas_int(out.size(2)) && fits_blas_int(a.size(2)),
              "matrix product: dimensions of ", a.toString(), " and ", b.toString(), " are too large for BLAS");
  if (out.numel() == 0) return;
  EMBER_DISPATCH_ALL_TYPES_AND_HALF(out.dtype(), "addmm_impl_cpu_",
                                    [&] { gemm_batched_impl<scalar_t>(out, a, b, beta, alpha); });
}

Tensor dot_blas(const Tensor& x, const Tensor& y) {
  if (x.is_cuda()) {
#ifdef EMBER_WITH_CUDA
    return dot_cuda(x, y);
#else
    EMBER_CHECK(false, "dot: ember.aten was built without CUDA");
#endif
  }
  EMBER_CHECK(!in_parallel_region(),
              "dot: called from inside an OpenMP parallel region (OpenBLAS must not be "
              "entered from OpenMP threads)");
  return EMBER_DISPATCH_ALL_TYPES_AND_HALF(x.dtype(), "dot", [&] { return dot_impl<scalar_t>(x, y); });
}

}  // namespace ember::at::native
