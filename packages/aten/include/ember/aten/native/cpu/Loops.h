#pragma once
// cpu_kernel / cpu_kernel_vec: run a scalar (and optionally a Vectorized) lambda
// over a TensorIterator. The loop has three shapes, picked per 1-d run:
//   contiguous  -- every operand steps by its element size: plain pointer loops
//                  (and Vectorized loads for cpu_kernel_vec);
//   one scalar  -- an input with stride 0 (a broadcast number) is loaded once;
//   strided     -- the general case, byte strides.
// Only include from csrc/native/cpu/*_kernel.cpp (compiled per capability).

#include <tuple>
#include <type_traits>
#include <utility>

#include <ember/aten/TensorIterator.h>
#include <ember/aten/vec/Vectorized.h>

namespace ember::at::native {
inline namespace CPU_CAPABILITY {

template <typename T>
struct function_traits : function_traits<decltype(&T::operator())> {};
template <typename C, typename R, typename... Args>
struct function_traits<R (C::*)(Args...) const> {
  using result_type = R;
  using args_tuple = std::tuple<std::decay_t<Args>...>;
  static constexpr int arity = sizeof...(Args);
};
template <typename R, typename... Args>
struct function_traits<R (*)(Args...)> {
  using result_type = R;
  using args_tuple = std::tuple<std::decay_t<Args>...>;
  static constexpr int arity = sizeof...(Args);
};

namespace detail {

template <typename traits, size_t... I>
inline bool all_contiguous(const int64_t* strides, std::index_sequence<I...>) {
  using R = typename traits::result_type;
  return strides[0] == static_cast<int64_t>(sizeof(R)) &&
         ((strides[I + 1] == static_cast<int64_t>(sizeof(std::tuple_element_t<I, typename traits::args_tuple>))) &&
          ...);
}

template <typename traits, size_t... I>
inline int scalar_input(const int64_t* strides, std::index_sequence<I...>) {
  // index (1-based operand) of the only stride-0 input when the rest are contiguous, else 0
  using R = typename traits::result_type;
  if (strides[0] != static_cast<int64_t>(sizeof(R))) return 0;
  int found = 0;
  bool ok = true;
  (([&] {
     const int64_t s = strides[I + 1];
     if (s == 0 && found == 0)
       found = static_cast<int>(I) + 1;
     else if (s != static_cast<int64_t>(sizeof(std::tuple_element_t<I, typename traits::args_tuple>)))
       ok = false;
   }()),
   ...);
  return ok ? found : 0;
}

template <typename func_t, typename traits, size_t... I>
inline void basic_loop(char** data, const int64_t* strides, int64_t n, const func_t& op,
                       std::index_sequence<I...> idx) {
  using R = typename traits::result_type;
  if (all_contiguous<traits>(strides, idx)) {
    R* out = reinterpret_cast<R*>(data[0]);
    std::tuple<const std::tuple_element_t<I, typename traits::args_tuple>*...> in{
        reinterpret_cast<const std::tuple_element_t<I, typename traits::args_tuple>*>(data[I + 1])...};
    for (int64_t i = 0; i < n; ++i) out[i] = op(std::get<I>(in)[i]...);
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    *reinterpret_cast<R*>(data[0] + i * strides[0]) =
        op(*reinterpret_cast<const std::tuple_element_t<I, typename traits::args_tuple>*>(data[I + 1] +
                                                                                          i * strides[I + 1])...);
  }
}

template <typename T>
inline T load_or_broadcast(const char* p, int64_t i, bool scalar) {
  return scalar ? *reinterpret_cast<const T*>(p) : reinterpret_cast<const T*>(p)[i];
}

template <typename func_t, typename vfunc_t, typename traits, size_t... I>
inline void vectorized_loop(char** data, int64_t n, int scalar_idx, const func_t& op, const vfunc_t& vop,
                            std::index_sequence<I...>) {
  using R = typename traits::result_type;
  using Vec = vec::Vectorized<R>;
  constexpr int64_t W = Vec::size();
  // Operand pointers and the broadcast scalar are read once, before the loop: the
  // output may alias any input, so the compiler could not hoist them itself (it
  // reloaded data[k] and rebuilt the broadcast vector on every iteration).
  R* const out = reinterpret_cast<R*>(data[0]);
  const std::tuple<const std::tuple_element_t<I, typename traits::args_tuple>*...> in{
      reinterpret_cast<const std::tuple_element_t<I, typename traits::args_tuple>*>(data[I + 1])...};
  const std::tuple<std::tuple_element_t<I, typename traits::args_tuple>...> scalar{
      (scalar_idx == static_cast<int>(I) + 1 ? *std::get<I>(in)
                                             : std::tuple_element_t<I, typename traits::args_tuple>(0))...};
  int64_t i = 0;
  if (scalar_idx == 0) {
    for (; i + 2 * W <= n; i += 2 * W) {
      Vec r0 = vop(Vec::loadu(std::get<I>(in) + i)...);
      Vec r1 = vop(Vec::loadu(std::get<I>(in) + i + W)...);
      r0.store(out + i);
      r1.store(out + i + W);
    }
    for (; i < n; ++i) out[i] = op(std::get<I>(in)[i]...);
    return;
  }
  const std::tuple<decltype((void)I, Vec())...> bcast{Vec(std::get<I>(scalar))...};
  for (; i + 2 * W <= n; i += 2 * W) {
    Vec r0 = vop((scalar_idx == static_cast<int>(I) + 1 ? std::get<I>(bcast) : Vec::loadu(std::get<I>(in) + i))...);
    Vec r1 = vop((scalar_idx == static_cast<int>(I) + 1 ? std::get<I>(bcast) : Vec::loadu(std::get<I>(in) + i + W))...);
    r0.store(out + i);
    r1.store(out + i + W);
  }
  for (; i < n; ++i) {
    out[i] = op((scalar_idx == static_cast<int>(I) + 1 ? std::get<I>(scalar) : std::get<I>(in)[i])...);
  }
}

}  // namespace detail

// The 2-d loops are functor structs rather than lambdas: GCC 12 crashes on lambdas
// that use the traits of a dependent lambda type inside a function template.
template <typename func_t>
struct BasicLoop2d {
  const func_t& op;
  int nt;
  void operator()(char** base, const int64_t* strides, int64_t size0, int64_t size1) const {
    using traits = function_traits<func_t>;
    constexpr int arity = traits::arity;
    char* data[arity + 1];
    for (int k = 0; k < nt; ++k) data[k] = base[k];
    for (int64_t j = 0; j < size1; ++j) {
      detail::basic_loop<func_t, traits>(data, strides, size0, op, std::make_index_sequence<arity>{});
      for (int k = 0; k < nt; ++k) data[k] += strides[nt + k];
    }
  }
};

template <typename func_t, typename vfunc_t>
struct VectorizedLoop2d {
  const func_t& op;
  const vfunc_t& vop;
  int nt;
  void operator()(char** base, const int64_t* strides, int64_t size0, int64_t size1) const {
    using traits = function_traits<func_t>;
    constexpr int arity = traits::arity;
    using Idx = std::make_index_sequence<arity>;
    char* data[arity + 1];
    for (int k = 0; k < nt; ++k) data[k] = base[k];
    for (int64_t j = 0; j < size1; ++j) {
      if (detail::all_contiguous<traits>(strides, Idx{})) {
        detail::vectorized_loop<func_t, vfunc_t, traits>(data, size0, 0, op, vop, Idx{});
      } else if (int s = detail::scalar_input<traits>(strides, Idx{})) {
        detail::vectorized_loop<func_t, vfunc_t, traits>(data, size0, s, op, vop, Idx{});
      } else {
        detail::basic_loop<func_t, traits>(data, strides, size0, op, Idx{});
      }
      for (int k = 0; k < nt; ++k) data[k] += strides[nt + k];
    }
  }
};

// Applies op(a, b, ...) -> r elementwise. Argument and result types must match the
// iterator's dtypes for each operand.
template <typename func_t>
void cpu_kernel(TensorIterator& iter, const func_t& op, int64_t grain_size = GRAIN_SIZE) {
  EMBER_INTERNAL_ASSERT(iter.ntensors() == function_traits<func_t>::arity + 1,
                        "cpu_kernel: lambda arity does not match the iterator");
  iter.for_each(BasicLoop2d<func_t>{op, iter.ntensors()}, grain_size);
}

// As cpu_kernel, plus vop(Vectorized<T>...) -> Vectorized<T> used on contiguous runs
// (and runs where one input is a broadcast scalar). All operands share one type T.
template <typename func_t, typename vfunc_t>
void cpu_kernel_vec(TensorIterator& iter, const func_t& op, const vfunc_t& vop, int64_t grain_size = GRAIN_SIZE) {
  EMBER_INTERNAL_ASSERT(iter.ntensors() == function_traits<func_t>::arity + 1,
                        "cpu_kernel_vec: lambda arity does not match the iterator");
  iter.for_each(VectorizedLoop2d<func_t, vfunc_t>{op, vop, iter.ntensors()}, grain_size);
}

}  // namespace CPU_CAPABILITY
}  // namespace ember::at::native
