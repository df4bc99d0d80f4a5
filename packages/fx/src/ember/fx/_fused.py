"""Backend "fused": runs of pointwise nodes (and a sum/mean they feed) become generated C++ loops.

Grouping (:func:`fuse`) walks the graph in order and grows one group at a time over one
iteration shape, on CPU, float32 or float64. Members: pointwise ops of the table below
(operands broadcast to their output; smaller-shaped values are computed per element, and a
group grows to a bigger shape its own broadcasts into), comparisons and masks (bool values
in the loop: masked_fill, where, isfinite, logical ops), fills, views that only broadcast
(a new name for the same register), one ``sum``/``mean`` over every dim (it does not end
the group: what does not read it goes on in the same loop), any number of ``amax``/``sum``/
``mean`` over the last dim, softmax-like nodes and layer norms over the last dim (a *row
kernel*: one pass per level over each row, see :func:`row_kernel_source`), and in-place forms
of the pointwise ops plus ``copy_``/``fill_``/``zero_`` (loaded once, renamed after each
write, stored at the end). Other nodes that read nothing the group made or wrote run
before the group's kernel, exactly where they were; a node that reads it, or writes any
tensor, closes the group. Then a member that cannot be one after all (a view or smaller
value read after the kernel; an in-place write into memory another operand also sees, by
the capture-time ``Value.storage``) is excluded and the graph grouped again. In place
into a function argument is never fused: a later call may pass two that alias.
A kernel's operands: ``inputs``, ``inplace`` (written), ``outputs`` (values it makes that
are read after it; the replay program allocates them, see ember.fx._replay's plan).

Code generation (:func:`kernel_source`): shapes and strides are constants in the
source (the graph is specialised to them; guards check them), dims are ordered by the
first output's strides and those contiguous in every operand merged, the outermost loop
is an OpenMP parallel loop for large sizes, the innermost is ``#pragma omp simd``; a 2-D
iteration where an operand is transposed is tiled (256 x 64 floats) so both sides stay in cache, the
transposed operand staged through register transposes;
outputs of STREAM_MIN_BYTES and more are staged per inner run and written with
non-temporal stores (a plain store reads the line first: a third of the traffic). Each value lives in
a register: one read of each input and one write of each output per element.

Numerics: float32 arithmetic in float32, in the eager op order, without
``-ffast-math`` (NaN and inf behave as in eager). Differences from eager come from
libm's exp/log/tanh vs ember's vectorised kernels (a few ulp) and from reductions,
which accumulate in double in one pass (eager: float, blocked): the tests allow
rtol 1e-5 / atol 1e-6 for float32, 1e-12 for float64.

Compilation (:func:`build`): every kernel of a graph goes into one translation unit,
compiled once by the system C++ compiler (``$CXX``, else ``g++``/``c++``) with
``-O3 -march=native -fopenmp -fno-trapping-math`` into ``<cache>/<sha256 of source+flags>.so``
and loaded with ctypes (``void kernel(char** pointers)``). The cache directory is
``$EMBER_FX_CACHE_DIR``, else ``$XDG_CACHE_HOME/ember/fx``, else ``~/.cache/ember/fx``.
No compiler, or a source that fails to compile: a warning, and those nodes run by the
replay backend instead.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ember import aten as ea

from .graph import Graph, Node, Value

# ---------------------------------------------------------------------------
# the pointwise table: op -> C++ expression of its operands (strings) and scalar args
# ---------------------------------------------------------------------------

Lower = Callable[[list[Any], Callable[[Any], str]], "str | None"]


def _alpha(args: list[Any], i: int) -> Any:
    return args[i] if len(args) > i else 1


def _add(a: list[Any], e: Callable[[Any], str]) -> str:
    al = _alpha(a, 2)
    return f"({e(a[0])} + {e(a[1])})" if al == 1 else f"({e(a[0])} + {e(al)} * {e(a[1])})"


def _sub(a: list[Any], e: Callable[[Any], str]) -> str:
    al = _alpha(a, 2)
    return f"({e(a[0])} - {e(a[1])})" if al == 1 else f"({e(a[0])} - {e(al)} * {e(a[1])})"


def _div(a: list[Any], e: Callable[[Any], str]) -> str | None:
    return None if a[2] is not None else f"({e(a[0])} / {e(a[1])})"


POINTWISE: dict[str, Lower] = {
    "aten::add.Tensor": _add,
    "aten::sub.Tensor": _sub,
    "aten::rsub.Tensor": lambda a, e: _sub([a[1], a[0], a[2]], e),
    "aten::mul.Tensor": lambda a, e: f"({e(a[0])} * {e(a[1])})",
    "aten::div.Tensor": _div,
    "aten::neg": lambda a, e: f"(-{e(a[0])})",
    "aten::exp": lambda a, e: f"std::exp({e(a[0])})",
    "aten::log": lambda a, e: f"std::log({e(a[0])})",
    "aten::tanh": lambda a, e: f"std::tanh({e(a[0])})",
    "aten::sqrt": lambda a, e: f"std::sqrt({e(a[0])})",
    "aten::rsqrt": lambda a, e: f"(T(1) / std::sqrt({e(a[0])}))",
    "aten::abs": lambda a, e: f"std::abs({e(a[0])})",
    "aten::reciprocal": lambda a, e: f"(T(1) / {e(a[0])})",
    "aten::sigmoid": lambda a, e: f"(T(1) / (T(1) + std::exp(-{e(a[0])})))",
    "aten::silu": lambda a, e: f"({e(a[0])} / (T(1) + std::exp(-{e(a[0])})))",
    "aten::relu": lambda a, e: f"relu_({e(a[0])})",
    "aten::maximum": lambda a, e: f"maximum_({e(a[0])}, {e(a[1])})",
    "aten::minimum": lambda a, e: f"minimum_({e(a[0])}, {e(a[1])})",
    "aten::pow.Tensor_Tensor": lambda a, e: (
        f"({e(a[0])} * {e(a[0])})" if a[1] == 2 and not isinstance(a[1], Value) else f"std::pow({e(a[0])}, {e(a[1])})"
    ),
    "aten::lerp.Scalar": lambda a, e: f"({e(a[0])} + {e(a[2])} * ({e(a[1])} - {e(a[0])}))",
    "aten::addcmul": lambda a, e: f"({e(a[0])} + {e(a[3])} * {e(a[1])} * {e(a[2])})",
    "aten::addcdiv": lambda a, e: f"({e(a[0])} + {e(a[3])} * ({e(a[1])} / {e(a[2])}))",
    "aten::threshold": lambda a, e: f"({e(a[0])} <= {e(a[1])} ? {e(a[2])} : {e(a[0])})",
    "aten::clone": lambda a, e: None if a[1] is not None else e(a[0]),
    "aten::ones_like": lambda a, e: "T(1)",
    "aten::zeros_like": lambda a, e: "T(0)",
    "aten::full_like": lambda a, e: e(a[1]),
}
# comparisons make bool values (kept as C++ bool in the loop, stored as one byte); a bool
# operand is only ever a mask (masked_fill, where), so a kernel's arithmetic stays in T
COMPARES = {"le": "<=", "lt": "<", "ge": ">=", "gt": ">", "eq": "==", "ne": "!="}


def _compare(op: str) -> Lower:
    return lambda a, e: f"({e(a[0])} {op} {e(a[1])})"


for _name, _op in COMPARES.items():
    for _overload in ("Tensor", "Scalar"):
        POINTWISE[f"aten::{_name}.{_overload}"] = _compare(_op)
BOOL_OUT = {f"aten::{n}.{o}" for n in COMPARES for o in ("Tensor", "Scalar")}
POINTWISE["aten::masked_fill.Scalar"] = lambda a, e: f"({e(a[1])} ? {e(a[2])} : {e(a[0])})"
POINTWISE["aten::where.self"] = lambda a, e: f"({e(a[0])} ? {e(a[1])} : {e(a[2])})"
MASK_ARGS = {"aten::masked_fill.Scalar": 1, "aten::where.self": 0}  # the argument that is a bool mask
POINTWISE["aten::isfinite"] = lambda a, e: f"std::isfinite({e(a[0])})"
POINTWISE["aten::isnan"] = lambda a, e: f"({e(a[0])} != {e(a[0])})"
BOOL_OUT |= {"aten::isfinite", "aten::isnan"}
# bool -> bool: no dtype of their own (they join a group of any float dtype, never open one)
LOGICAL: dict[str, Lower] = {
    "aten::logical_not": lambda a, e: f"(!{e(a[0])})",
    "aten::logical_and": lambda a, e: f"({e(a[0])} && {e(a[1])})",
    "aten::logical_or": lambda a, e: f"({e(a[0])} || {e(a[1])})",
}
POINTWISE.update(LOGICAL)
# fills: the value does not depend on any tensor's data (``self`` gives dtype and device only)
FILLS: dict[str, Lower] = {
    "aten::ones_like": lambda a, e: "T(1)",
    "aten::zeros_like": lambda a, e: "T(0)",
    "aten::full_like": lambda a, e: e(a[1]),
    "aten::new_ones": lambda a, e: "T(1)",
    "aten::new_zeros": lambda a, e: "T(0)",
    "aten::new_full": lambda a, e: e(a[2]),
}
# views that, broadcast into the group's shape, read the same elements as their source does
# (they only add or drop leading size-1 dims, or expand): inside a kernel they are a new name
BROADCAST_VIEWS = (
    "aten::expand",
    "aten::unsqueeze",
    "aten::view",
    "aten::reshape",
    "aten::_unsafe_view",
    "aten::squeeze.dims",
    "aten::alias",
    "aten::detach",
)
# in-place ops: the out-of-place lowering, stored back into the first argument
INPLACE: dict[str, Lower] = {
    **{
        f"aten::{b}_.{o}": POINTWISE[f"aten::{b}.{o}"]
        for b, o in (("add", "Tensor"), ("sub", "Tensor"), ("mul", "Tensor"))
    },
    "aten::div_.Tensor": _div,
    **{f"aten::{b}_": POINTWISE[f"aten::{b}"] for b in ("neg", "exp", "sqrt", "relu", "addcmul", "addcdiv")},
    "aten::lerp_.Scalar": POINTWISE["aten::lerp.Scalar"],
    "aten::copy_": lambda a, e: e(a[1]),
    "aten::fill_.Scalar": lambda a, e: e(a[1]),
    "aten::zero_": lambda a, e: "T(0)",
}
REDUCTIONS = ("aten::sum", "aten::mean", "aten::amax")
# softmax-like nodes over the last dim: reductions and pointwise lines inside a row kernel
SOFTMAXES = ("aten::_softmax", "aten::softmax.int")
LOG_SOFTMAXES = ("aten::_log_softmax", "aten::log_softmax.int")
# layer norm over the last dim: its mean, the mean of the squared deviations, then the affine
# map (native_layer_norm also returns the per-row mean and rstd that its backward reads)
LAYER_NORMS = ("aten::native_layer_norm", "aten::layer_norm")
ROW_OPS = (
    *SOFTMAXES,
    *LOG_SOFTMAXES,
    "aten::_softmax_backward_data",
    "aten::_log_softmax_backward_data",
    *LAYER_NORMS,
)
FUSED_DTYPES = {"float32": "float", "float64": "double"}
LOWERINGS: dict[str, Lower] = {**POINTWISE, **FILLS, **INPLACE}

_PRELUDE = """\
#include <cmath>
#include <cstdint>
#include <limits>
#if defined(__AVX__)
#include <immintrin.h>
#endif
// Streaming (non-temporal) stores of a staged run of a large output: its cache lines are
// written without first being read, as a large memcpy does (a plain store reads each line).
static inline void stream_(float* d, const float* s, int64_t n) {
  int64_t i = 0;
#if defined(__AVX__)
  for (; i < n && (reinterpret_cast<uintptr_t>(d + i) & 31); ++i) d[i] = s[i];
  for (; i + 8 <= n; i += 8) _mm256_stream_ps(d + i, _mm256_loadu_ps(s + i));
#endif
  for (; i < n; ++i) d[i] = s[i];
}
static inline void stream_(double* d, const double* s, int64_t n) {
  int64_t i = 0;
#if defined(__AVX__)
  for (; i < n && (reinterpret_cast<uintptr_t>(d + i) & 31); ++i) d[i] = s[i];
  for (; i + 4 <= n; i += 4) _mm256_stream_pd(d + i, _mm256_loadu_pd(s + i));
#endif
  for (; i < n; ++i) d[i] = s[i];
}
static inline void fence_() {
#if defined(__AVX__)
  _mm_sfence();  // streamed stores are weakly ordered: visible before the kernel returns
#endif
}
// A transposed input's block staged in the loop's order: d[i][j] = s[i + j * ld] for
// i < ni, j < nj (rows of d `dld` apart). Whole blocks go through a register transpose
// (8 x 8 floats, 4 x 4 doubles: W source lines read side by side, W rows written), the
// edges element by element. Read element by element in the loop's order, each element
// would be a load from another line.
#if defined(__AVX__)
static inline void tr_block_(const float* s, int64_t ld, float* d, int64_t dld) {
  __m256 r0 = _mm256_loadu_ps(s), r1 = _mm256_loadu_ps(s + ld), r2 = _mm256_loadu_ps(s + 2 * ld);
  __m256 r3 = _mm256_loadu_ps(s + 3 * ld), r4 = _mm256_loadu_ps(s + 4 * ld), r5 = _mm256_loadu_ps(s + 5 * ld);
  __m256 r6 = _mm256_loadu_ps(s + 6 * ld), r7 = _mm256_loadu_ps(s + 7 * ld);
  __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1), t2 = _mm256_unpacklo_ps(r2, r3);
  __m256 t3 = _mm256_unpackhi_ps(r2, r3), t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
  __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
  __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  _mm256_storeu_ps(d, _mm256_permute2f128_ps(u0, u4, 0x20));
  _mm256_storeu_ps(d + dld, _mm256_permute2f128_ps(u1, u5, 0x20));
  _mm256_storeu_ps(d + 2 * dld, _mm256_permute2f128_ps(u2, u6, 0x20));
  _mm256_storeu_ps(d + 3 * dld, _mm256_permute2f128_ps(u3, u7, 0x20));
  _mm256_storeu_ps(d + 4 * dld, _mm256_permute2f128_ps(u0, u4, 0x31));
  _mm256_storeu_ps(d + 5 * dld, _mm256_permute2f128_ps(u1, u5, 0x31));
  _mm256_storeu_ps(d + 6 * dld, _mm256_permute2f128_ps(u2, u6, 0x31));
  _mm256_storeu_ps(d + 7 * dld, _mm256_permute2f128_ps(u3, u7, 0x31));
}
static inline void tr_block_(const double* s, int64_t ld, double* d, int64_t dld) {
  __m256d r0 = _mm256_loadu_pd(s), r1 = _mm256_loadu_pd(s + ld);
  __m256d r2 = _mm256_loadu_pd(s + 2 * ld), r3 = _mm256_loadu_pd(s + 3 * ld);
  __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
  __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
  _mm256_storeu_pd(d, _mm256_permute2f128_pd(t0, t2, 0x20));
  _mm256_storeu_pd(d + dld, _mm256_permute2f128_pd(t1, t3, 0x20));
  _mm256_storeu_pd(d + 2 * dld, _mm256_permute2f128_pd(t0, t2, 0x31));
  _mm256_storeu_pd(d + 3 * dld, _mm256_permute2f128_pd(t1, t3, 0x31));
}
template <typename T> static constexpr int64_t tr_width_() { return 32 / sizeof(T); }
#else
template <typename T> static inline void tr_block_(const T* s, int64_t ld, T* d, int64_t dld) {
  for (int64_t j = 0; j < 4; ++j)
    for (int64_t i = 0; i < 4; ++i) d[i * dld + j] = s[i + j * ld];
}
template <typename T> static constexpr int64_t tr_width_() { return 4; }
#endif
template <typename T>
static inline void stage_transposed_(T* d, int64_t dld, const T* s, int64_t ld, int64_t ni, int64_t nj) {
  constexpr int64_t W = tr_width_<T>();
  const int64_t fi = ni - ni % W, fj = nj - nj % W;
  for (int64_t j = 0; j < fj; j += W) {
    for (int64_t i = 0; i < fi; i += W) tr_block_(s + i + j * ld, ld, d + i * dld + j, dld);
    for (int64_t i = fi; i < ni; ++i)
      for (int64_t jj = j; jj < j + W; ++jj) d[i * dld + jj] = s[i + jj * ld];
  }
  for (int64_t j = fj; j < nj; ++j)
    for (int64_t i = 0; i < ni; ++i) d[i * dld + j] = s[i + j * ld];
}
template <typename T> static inline T relu_(T a) { return a != a ? a : (a > T(0) ? a : T(0)); }
template <typename T> static inline T maximum_(T a, T b) {
  return (a != a || b != b) ? std::numeric_limits<T>::quiet_NaN() : (a > b ? a : b); }
template <typename T> static inline T minimum_(T a, T b) {
  return (a != a || b != b) ? std::numeric_limits<T>::quiet_NaN() : (a < b ? a : b); }
"""


def _dtype_name(dt: Any) -> str:
    return str(dt).rsplit(".", 1)[-1]


def _broadcastable(shape: tuple[int, ...], to: tuple[int, ...]) -> bool:
    if len(shape) > len(to):
        return False
    return all(s == 1 or s == t for s, t in zip(reversed(shape), reversed(to), strict=False))


def _strip(shape: tuple[int, ...]) -> tuple[int, ...]:
    i = 0
    while i < len(shape) and shape[i] == 1:
        i += 1
    return shape[i:]


def data_inputs(node: Node) -> list[Value]:
    """The values whose elements the node's lowering reads."""
    name = node.op.full_name
    if name in FILLS or name in ("aten::fill_.Scalar", "aten::zero_"):
        return []
    if name == "aten::copy_":
        return [node.args[1]] if isinstance(node.args[1], Value) else []
    return list(node.input_values())


# ---------------------------------------------------------------------------
# grouping
# ---------------------------------------------------------------------------


class FusedKernel:
    """A group of nodes run as one generated C++ function over one iteration shape.

    ``inputs`` are read, ``inplace`` (values made outside the group, written by an in-place
    member) are read and written through their own memory, ``outputs`` are values the group
    makes that are read after it (the program allocates them: see ember.fx._replay's plan).
    The call is ``kernel(inputs + inplace + outputs)``.
    """

    def __init__(self, nodes: list[Node], shape: tuple[int, ...], dtype: Any) -> None:
        self.nodes = nodes
        self.shape = shape
        self.dtype = dtype
        self.inputs: list[Value] = []
        self.inplace: list[Value] = []
        self.outputs: list[Value] = []
        self.symbol = ""
        self.source = ""
        self._fn: Any = None
        self._ptr_array: Any = None
        self._numel = 0
        self._lib: Any = None

    def input_values(self) -> list[Value]:
        return self.inputs + self.inplace

    def summary(self) -> str:
        names = [n.op.name for n in self.nodes]
        text = " -> ".join(names[:6]) + (f" ... ({len(names)} ops)" if len(names) > 6 else "")
        return f"{self.symbol} [{', '.join(str(s) for s in self.shape)}] {text}"

    def members(self) -> set[Value]:
        """The values the group's nodes make (not the in-place destinations made before it)."""
        return {v for n in self.nodes for v in n.outputs if v is not None and v.node is n}

    def reduction(self) -> Node | None:
        return next((n for n in self.nodes if n.op.full_name in REDUCTIONS), None)

    def __call__(self, tensors: tuple[Any, ...]) -> None:
        if self._numel:
            self._fn(self._ptr_array(*[t._impl.data_ptr for t in tensors]))


def _cpu_dtype(v: Value, dtype: Any = None) -> bool:
    m = v.meta
    if m.device.type != "cpu" or _dtype_name(m.dtype) not in FUSED_DTYPES:
        return False
    return dtype is None or m.dtype == dtype


def _scalar_args_ok(node: Node) -> bool:
    for a in node.args:
        if isinstance(a, (list, tuple)) or (a is not None and not isinstance(a, (Value, int, float, bool))):
            return False
    return LOWERINGS[node.op.full_name](list(node.args), lambda x: "x") is not None


def _reduction_dims(node: Node, shape: tuple[int, ...], dtype: Any) -> str | None:
    """'all' or 'last' when this sum/mean reduces a value of the group's shape and dtype."""
    if node.op.full_name not in REDUCTIONS or node.returns != "one":
        return None
    src = node.args[0]
    if not isinstance(src, Value) or src.meta.shape != shape or src.meta.dtype != dtype:
        return None
    if node.op.full_name != "aten::amax" and len(node.args) > 3 and node.args[3] is not None:
        return None  # dtype=
    dims = node.args[1] if len(node.args) > 1 else None
    if dims is not None and len(dims) == 0:
        dims = None  # an empty dim list reduces every dim
    nd = len(shape)
    if nd == 0:
        return None
    if dims is None or (isinstance(dims, (list, tuple)) and sorted(d % nd for d in dims) == list(range(nd))):
        return "all"
    if isinstance(dims, (list, tuple)) and len(dims) == 1 and dims[0] % nd == nd - 1 and nd > 1:
        return "last"
    return None


def _is_bool(v: Value) -> bool:
    return v.meta.device.type == "cpu" and _dtype_name(v.meta.dtype) == "bool"


def compute_dtype(node: Node) -> Any:
    """The dtype a member computes in (a comparison: its operands'); None for a view of a mask."""
    name = node.op.full_name
    if name in BOOL_OUT:
        a = node.args[0]
        return a.meta.dtype if isinstance(a, Value) else None
    out = result(node)
    if (name in BROADCAST_VIEWS or name in LOGICAL) and _is_bool(out):
        return None
    return out.meta.dtype


def _dtypes_ok(node: Node, out: Value) -> bool:
    """CPU values of one float dtype, except a comparison's bool result and a mask operand."""
    name = node.op.full_name
    if name in BROADCAST_VIEWS and _is_bool(out):
        src = node.args[0]
        return isinstance(src, Value) and _is_bool(src)
    if name in LOGICAL:
        ins = data_inputs(node)
        return _is_bool(out) and bool(ins) and all(_is_bool(v) for v in ins)
    ct = compute_dtype(node)
    if ct is None or out.meta.device.type != "cpu" or _dtype_name(ct) not in FUSED_DTYPES:
        return False
    if name in BOOL_OUT:
        if not _is_bool(out) or not isinstance(node.args[0], Value):
            return False
    elif not _cpu_dtype(out, ct):
        return False
    mask = MASK_ARGS.get(name)
    for i, a in enumerate(node.args):
        if isinstance(a, Value) and a in data_inputs(node):
            if not (_is_bool(a) if i == mask else _cpu_dtype(a, ct)):
                return False
    return True


def _layer_norm_ok(node: Node, out: Value) -> bool:
    """Layer norm over the last dim only, of non-empty rows (eager writes NaN statistics for
    empty ones), with a [D] weight and bias or none, statistics of shape [..., 1]."""
    shape = out.meta.shape
    x, normalized, w, b, eps = node.args[:5]
    if not shape or shape[-1] == 0 or not isinstance(x, Value) or x.meta.shape != shape:
        return False
    if list(normalized) != [shape[-1]] or isinstance(eps, bool) or not isinstance(eps, (int, float)):
        return False
    if any(p is not None and (not isinstance(p, Value) or p.meta.shape != (shape[-1],)) for p in (w, b)):
        return False
    stats = node.outputs[1:] if node.op.full_name == "aten::native_layer_norm" else []
    per_row = (*shape[:-1], 1)
    return all(v.meta.shape == per_row and v.meta.dtype == out.meta.dtype for v in stats)


def _row_op_ok(node: Node, out: Value) -> bool:
    """A softmax-like node over the last dim, computed in its inputs' dtype, of full rows."""
    if node.op.full_name in LAYER_NORMS:
        return _layer_norm_ok(node, out)
    nd = len(out.meta.shape)
    dim, flag = node.args[-2], node.args[-1]
    if nd == 0 or not isinstance(dim, int) or dim % nd != nd - 1:
        return False
    if node.op.full_name in ("aten::softmax.int", "aten::log_softmax.int"):
        if flag is not None:
            return False  # dtype=
    elif node.op.full_name in ("aten::_softmax", "aten::_log_softmax"):
        if flag is not False:
            return False  # half_to_float
    elif flag != out.meta.dtype:
        return False  # input_dtype
    return all(v.meta.shape == out.meta.shape for v in data_inputs(node))


def result(node: Node) -> Value:
    """The value a member makes, or (in place) the argument it writes."""
    if node.op.full_name in INPLACE:
        return node.args[0]  # type: ignore[no-any-return]
    return node.outputs[0]  # type: ignore[no-any-return]


def results(node: Node) -> list[Value]:
    """Every value a member makes (native_layer_norm: its output, mean and rstd)."""
    if node.op.full_name == "aten::native_layer_norm":
        return list(node.outputs)
    return [result(node)]


def classify(node: Node) -> str | None:
    """How a node can be a member of a group: pointwise, fill, view, inplace, reduction, or None."""
    name = node.op.full_name
    if name in INPLACE:  # returns self, or (some kernels) nothing
        if not isinstance(node.args[0], Value) or node.outputs not in ([], [node.args[0]]):
            return None
    elif name == "aten::native_layer_norm":
        if len(node.outputs) != 3 or any(v is None or v.node is not node for v in node.outputs):
            return None
    elif node.returns != "one" or not node.outputs or node.outputs[0] is None:
        return None
    out = result(node)
    if not _dtypes_ok(node, out):
        return None
    if name in REDUCTIONS:
        return "reduction"
    if name in ROW_OPS:
        return "rowop" if _row_op_ok(node, out) else None
    if name in BROADCAST_VIEWS:
        src = node.args[0]
        if not isinstance(src, Value) or out.node is not node:
            return None
        if name == "aten::expand" or _strip(out.meta.shape) == _strip(src.meta.shape):
            return "view"
        return None
    if name in INPLACE:
        if node.mutated != (0,) or out.kind == "input":
            return None  # an argument may alias another one at a later call: left to eager kernels
        if any(st == 0 for sz, st in zip(out.meta.shape, out.meta.stride, strict=True) if sz > 1):
            return None
        if not all(_broadcastable(v.meta.shape, out.meta.shape) for v in data_inputs(node)):
            return None
        return "inplace" if _scalar_args_ok(node) else None
    if name in FILLS:
        return "fill" if out.node is node and not node.mutated else None
    if name in POINTWISE:
        if node.mutated or out.node is not node:
            return None
        if not all(_broadcastable(v.meta.shape, out.meta.shape) for v in data_inputs(node)):
            return None
        return "pointwise" if _scalar_args_ok(node) else None
    return None


class _Group:
    """The open group while :func:`fuse` walks the graph."""

    def __init__(self, node: Node, kind: str) -> None:
        out = result(node)
        self.nodes = [node]
        # a group may open with a reduction over the last dim of an input: it iterates the input
        self.shape: tuple[int, ...] = node.args[0].meta.shape if kind == "reduction" else out.meta.shape
        self.dtype = compute_dtype(node)
        self.made: set[Value] = set()  # values the members make
        self.written: set[int] = set()  # storages written in place
        self.pending: set[Value] = set()  # results of a reduction over every dim: not known inside the loop
        self.has_reduction = False
        self.row_reductions = 0  # reductions over the last dim: known to the passes after theirs
        self.rowdep: set[Value] = set()  # values that depend on a row reduction's result
        self.has_inplace = False
        self._note(node, kind)

    def _note(self, node: Node, kind: str) -> None:
        out = result(node)
        if kind == "inplace":
            self.has_inplace = True
            self.written.add(out.storage)
        elif kind == "rowop":
            self.row_reductions += 1
            self.rowdep.update(results(node))
            self.made.update(results(node))
        elif kind == "reduction":
            self.has_reduction = True
            if _reduction_dims(node, self.shape, self.dtype) == "last":
                self.row_reductions += 1
                self.rowdep.add(out)
            else:
                self.pending.add(out)
            self.made.add(out)
        else:
            self.made.add(out)
            if any(v in self.rowdep for v in data_inputs(node)) or (kind == "view" and node.args[0] in self.rowdep):
                self.rowdep.add(out)

    def read_by(self, node: Node) -> bool:
        """Does `node` read (even only the metadata of) what the group makes or writes?"""
        return any(v in self.made or v.storage in self.written for v in node.input_values())

    def accepts(self, node: Node, kind: str) -> bool:
        out = result(node)
        ct = compute_dtype(node)
        if (ct is not None and ct != self.dtype) or any(v in self.pending for v in data_inputs(node)):
            return False
        if kind == "reduction":
            src = node.args[0]
            dims = _reduction_dims(node, self.shape, self.dtype)
            if dims is None or (src not in self.made and (dims != "last" or self.has_inplace)):
                return False
            if dims == "all":
                return not self.has_reduction and node.op.full_name != "aten::amax"
            # several row reductions (softmax: amax, then a sum of exps): passes over each row;
            # an in-place member would be read back by a later pass after its store
            return not self.pending and not (self.has_inplace and self.row_reductions)
        rows = [v for v in data_inputs(node) if v in self.rowdep]
        if rows:
            if self.has_inplace:
                return False
            per_row = (*self.shape[:-1], 1)
            if any(v.meta.shape not in (self.shape, per_row) for v in rows):
                return False  # a row result without keepdim aligns with the wrong dims
        if kind == "inplace":
            return out.meta.shape == self.shape and not self.row_reductions
        if kind == "rowop":
            return out.meta.shape == self.shape and not self.pending and not self.has_inplace
        if kind == "view" and node.args[0] not in self.made:
            return False
        if _broadcastable(out.meta.shape, self.shape):
            return True
        # a bigger value the group's broadcasts into: the group grows to its shape
        if not self.has_reduction and not self.has_inplace and _broadcastable(self.shape, out.meta.shape):
            self.shape = out.meta.shape
            return True
        return False

    def add(self, node: Node, kind: str) -> None:
        self.nodes.append(node)
        self._note(node, kind)


_LONE = ("aten::clone", "aten::copy_", *FILLS, "aten::fill_.Scalar", "aten::zero_")


def _is_reduction_result(v: Value) -> bool:
    return v.node is not None and v.node.op.full_name in REDUCTIONS


def _rowwise(k: FusedKernel) -> bool:
    """Does the kernel reduce over the last dim (then it is a row kernel)?"""
    return any(n.op.full_name in ROW_OPS or _reduction_dims(n, tuple(k.shape), k.dtype) == "last" for n in k.nodes)


def _opens_row_group(node: Node) -> bool:
    """A reduction over the last dim of a value made before (softmax's amax of its input)."""
    src = node.args[0]
    return isinstance(src, Value) and _reduction_dims(node, src.meta.shape, src.meta.dtype) == "last"


def _group(graph: Graph, exclude: set[Node]) -> list[Any]:
    plan: list[Any] = []
    g: _Group | None = None

    def close() -> None:
        nonlocal g
        if g is not None:
            if len(g.nodes) == 1 and g.nodes[0].op.full_name in _LONE:
                plan.append(g.nodes[0])  # a lone copy or fill: aten's kernel is as good
            else:
                plan.append(FusedKernel(g.nodes, g.shape, g.dtype))
        g = None

    for node in graph.nodes:
        kind = None if node in exclude else classify(node)
        if g is not None and kind is not None and g.accepts(node, kind):
            g.add(node, kind)
            continue
        if g is not None and (g.read_by(node) or node.mutated):
            close()  # it must see the group's results: the kernel runs first
        opens = (
            kind is not None
            and kind != "view"
            and (kind != "reduction" or _opens_row_group(node))
            and compute_dtype(node) is not None
        )
        if opens:
            assert kind is not None
            close()  # fusable, but not into the open group: a new group
            g = _Group(node, kind)
            continue
        plan.append(node)  # reads nothing of the open group: it runs before the group's kernel
    close()
    return plan


def fuse(graph: Graph) -> list[Any]:
    """The plan: the graph's nodes, with fusable runs replaced by FusedKernels (not yet built).

    Grouping is greedy (:func:`_group`); then each kernel's operands are fixed
    (:func:`_assign_io`), and a member that cannot be a kernel's member after all -- a view
    or a smaller-shaped value read after the kernel, an in-place write whose memory is seen
    through another operand -- is excluded and the graph grouped again.
    """
    exclude: set[Node] = set()
    while True:
        plan = _group(graph, exclude)
        bad = _assign_io(graph, plan)
        if not bad:
            return plan
        exclude |= bad


def _assign_io(graph: Graph, plan: list[Any]) -> set[Node]:
    """Sets each kernel's inputs / inplace / outputs; returns the members that must not be members."""
    kernels = [s for s in plan if isinstance(s, FusedKernel)]
    for k in kernels:
        made = k.members()
        ins: list[Value] = []
        inplace: list[Value] = []
        for n in k.nodes:
            for v in data_inputs(n):
                if v not in made and v not in ins:
                    ins.append(v)
            if n.op.full_name in INPLACE and n.args[0] not in made and n.args[0] not in inplace:
                inplace.append(n.args[0])
        k.inplace = inplace
        k.inputs = [v for v in ins if v not in inplace]
    read_outside: set[Value] = set(graph.output_values) | {v for _, v in graph.grad_effects if v is not None}
    for step in plan:
        read_outside.update(step.input_values())
    bad: set[Node] = set()
    for k in kernels:
        made = k.members()
        rowwise = _rowwise(k)
        outs = []
        for n in k.nodes:
            for v in results(n):
                if v.node is not n or v not in read_outside:
                    continue
                kind = classify(n)
                # a row kernel stores a per-row value (softmax's sum, for backward) once per row
                per_row = rowwise and v.meta.shape == (*k.shape[:-1], 1) and k.shape[-1] > 0
                if kind == "view" or (kind != "reduction" and v.meta.shape != k.shape and not per_row):
                    bad.add(n)  # it would be stored more than once per element, or lose its aliasing
                outs.append(v)
        k.outputs = sorted(outs, key=_is_reduction_result)  # the reductions' last
        # in place: no other operand (nor a member's view) may share the written memory
        for n in k.nodes:
            if n.op.full_name not in INPLACE:
                continue
            dst = n.args[0]
            others = [v for v in (*k.inputs, *k.inplace, *made) if v is not dst]
            if any(v.storage == dst.storage for v in others) or dst.storage == 0:
                bad.add(n)
    return bad


# ---------------------------------------------------------------------------
# code generation
# ---------------------------------------------------------------------------


def _strides_for(v: Value, shape: tuple[int, ...]) -> list[int]:
    """v's element strides over the iteration shape (0 where it broadcasts)."""
    nd, vd = len(shape), len(v.meta.shape)
    out = [0] * nd
    for i in range(vd):
        j = nd - vd + i
        out[j] = 0 if v.meta.shape[i] == 1 and shape[j] != 1 else v.meta.stride[i]
    return out


def _coalesce(shape: list[int], strides: list[list[int]]) -> tuple[list[int], list[list[int]]]:
    """Drop size-1 dims and merge neighbours that are contiguous in every operand."""
    keep = [i for i, s in enumerate(shape) if s != 1]
    shape = [shape[i] for i in keep]
    strides = [[st[i] for i in keep] for st in strides]
    i = len(shape) - 2
    while i >= 0:
        if all(st[i] == st[i + 1] * shape[i + 1] for st in strides):
            shape[i] *= shape[i + 1]
            del shape[i + 1]
            for st in strides:
                st[i] = st[i + 1]
                del st[i + 1]
        i -= 1
    return shape, strides


PARALLEL_MIN = 1 << 16  # elements: below this a kernel runs on one thread (no OpenMP fork)
STREAM_MIN_BYTES = 8 << 20  # outputs this large do not stay in cache anyway: streamed stores
BLOCK = 4096
# a transposed nest's tile, rows (mid dim) x columns (inner dim), in bytes per side: the rows
# are the runs the transposed input is read in, 1 KiB (256 floats, 128 doubles: sixteen lines
# each, read eight side by side; shorter runs leave the memory system idle between lines),
# the columns 256 B (four lines of each row of the other operands and the output), 64 KiB in
# all. Measured in C++ (2048^2 float32 a.t() + b, best of 200 calls, alternated in one
# process): 64 x 64 floats half the bandwidth of 128 x 128; 256 x 64 1.07x of 128 x 128 on
# one thread and on two, 512 x 32 and 256 x 32 slower
TILE_ROW_BYTES = 1024
TILE_COL_BYTES = 256


def _tile(T: str) -> tuple[int, int]:
    size = 4 if T == "float" else 8
    return TILE_ROW_BYTES // size, TILE_COL_BYTES // size


def kernel_source(k: FusedKernel, symbol: str) -> str:
    if _rowwise(k):
        return row_kernel_source(k, symbol)
    T = FUSED_DTYPES[_dtype_name(k.dtype)]
    shape = tuple(k.shape)
    numel = 1
    for s in shape:
        numel *= s
    red_node = k.reduction()
    if red_node is not None and red_node.outputs[0] not in k.outputs:
        red_node = None  # nobody reads the sum: not accumulated
    red = _reduction_dims(red_node, shape, k.dtype) if red_node is not None else None
    point_outs = [v for v in k.outputs if red_node is None or v is not red_node.outputs[0]]
    operands = k.inputs + k.inplace + point_outs
    strides = [_strides_for(v, shape) for v in operands]
    n_in, n_io = len(k.inputs), len(k.inplace)

    names: dict[Value, str] = {}
    body: list[str] = []
    for i, v in enumerate(k.inputs):
        names[v] = f"x{i}"
    read = {v for n in k.nodes for v in data_inputs(n)}
    for i, v in enumerate(k.inplace):
        names[v] = f"z{i}"

    def expr(a: Any) -> str:
        return names[a] if isinstance(a, Value) else _literal(a)

    for j, n in enumerate(k.nodes):
        v = result(n)
        name = n.op.full_name
        if name in REDUCTIONS:
            continue
        if name in BROADCAST_VIEWS:  # the same elements under a new name
            names[v] = names[n.args[0]]
            continue
        ty = "bool" if _is_bool(v) else "T"
        body.append(f"const {ty} y{j} = {LOWERINGS[name](list(n.args), expr)};  // {n.op.name}")
        names[v] = f"y{j}"  # an in-place member renames its destination: later reads see the new value

    lines = [f'extern "C" void {symbol}(char** p) {{', f"  using T = {T};"]
    is_bool = {i for i, v in enumerate(operands) if _is_bool(v)}  # masks: one byte per element
    for i, _ in enumerate(k.inputs):
        ct = "uint8_t" if i in is_bool else "T"
        lines.append(f"  const {ct}* __restrict__ in{i} = reinterpret_cast<const {ct}*>(p[{i}]);")
    for i, _ in enumerate(k.inplace):  # read and written: no other operand shares its memory
        lines.append(f"  T* io{i} = reinterpret_cast<T*>(p[{n_in + i}]);")
    for i, _ in enumerate(point_outs):
        ct = "uint8_t" if n_in + n_io + i in is_bool else "T"
        lines.append(f"  {ct}* __restrict__ out{i} = reinterpret_cast<{ct}*>(p[{n_in + n_io + i}]);")
    if red is not None:
        lines.append(f"  T* __restrict__ red = reinterpret_cast<T*>(p[{len(operands)}]);")

    def loads(offs: list[str], tiles: dict[int, str] | None = None) -> list[str]:
        """Reads of every input at `offs`; `tiles`: input -> a staged tile element read instead."""
        tiles = tiles or {}
        out = [
            f"const bool x{i} = in{i}[{offs[i]}] != 0;"
            if i in is_bool
            else f"const T x{i} = {tiles[i] if i in tiles else f'in{i}[{offs[i]}]'};"
            for i in range(n_in)
        ]
        out += [f"const T z{i} = io{i}[{offs[n_in + i]}];" for i, v in enumerate(k.inplace) if v in read]
        return out

    def stores(offs: list[str], staged: dict[int, str] | None = None) -> list[str]:
        """Stores of the in-place and output values; `staged`: operand -> index into its staging row."""
        staged = staged or {}
        out = [f"io{i}[{offs[n_in + i]}] = {names[v]};" for i, v in enumerate(k.inplace)]
        for i, v in enumerate(point_outs):
            o = n_in + n_io + i
            out.append(f"s{o}[{staged[o]}] = {names[v]};" if o in staged else f"out{i}[{offs[o]}] = {names[v]};")
        return out

    def out_ptr(o: int) -> str:
        return f"out{o - n_in - n_io}"

    red_expr = names[red_node.args[0]] if red_node is not None else ""
    mean = red_node is not None and red_node.op.full_name == "aten::mean"

    # iterate in the memory order of the first output (else of what is written, else read),
    # as TensorIterator orders dims: its stores, at least, are then contiguous
    driver = n_in + n_io if point_outs else (n_in if n_io else 0)
    order = list(range(len(shape)))
    if operands:  # (a kernel of fills feeding a sum has none: its loop is just the count)
        order.sort(key=lambda d: -strides[driver][d])
    pshape = [shape[d] for d in order]
    cshape, cstrides = _coalesce(pshape, [[st[d] for d in order] for st in strides])
    acc = red is not None
    if acc:
        lines.append("  double acc = 0;")
    inner_lines = body + ([f"acc += {red_expr};"] if acc else [])
    itemsize = 4 if T == "float" else 8
    big = numel * itemsize * max(len(point_outs), 1) >= STREAM_MIN_BYTES
    streamed = [o for o in range(n_in + n_io, len(operands)) if o not in is_bool] if big else []
    tileable = [i for i in range(n_in) if i not in is_bool]
    lines += _loops(cshape, cstrides, loads, stores, inner_lines, acc, numel, streamed, out_ptr, tileable, _tile(T))
    if acc:
        lines.append(f"  red[0] = T(acc{f' / {numel}' if mean else ''});")
    lines.append("}")
    return "\n".join(lines)


def _literal(a: Any) -> str:
    """A Python scalar argument as a C++ expression of type T."""
    if isinstance(a, bool):
        return f"T({int(a)})"
    if isinstance(a, (int, float)):
        f = float(a)
        if f != f:
            return "std::numeric_limits<T>::quiet_NaN()"
        if f in (float("inf"), float("-inf")):
            return ("-" if f < 0 else "") + "std::numeric_limits<T>::infinity()"
        return f"T({f!r})"
    raise TypeError(a)


def row_kernel_source(k: FusedKernel, symbol: str) -> str:
    """A group with reductions over the last dim: one parallel loop over rows, and in each row
    one pass per level. Level 0 is what the inputs give; a reduction of a level-L value is
    accumulated in pass L and its result (a register per row) is known from pass L + 1 on.
    Each pass loads the inputs again and recomputes what it needs of the earlier levels (a row
    is in cache; recomputing costs arithmetic, not memory traffic) and stores the outputs of its
    own level. Softmax is three passes: max, then the sum of exps, then the quotients."""
    T = FUSED_DTYPES[_dtype_name(k.dtype)]
    shape = tuple(k.shape)
    n = shape[-1]
    # the members as steps: a pointwise line or a reduction; softmax-like nodes are several
    steps = _row_steps(k.nodes)
    reds = [st for st in steps if isinstance(st, _RowReduction)]
    red_vals = [st.out for st in reds]
    point_outs = [v for v in k.outputs if v not in red_vals]
    red_outs = [v for v in k.outputs if v in red_vals]
    operands = k.inputs + k.inplace + point_outs + red_outs
    n_in, n_io, n_pt = len(k.inputs), len(k.inplace), len(point_outs)

    def strides_of(v: Value) -> list[int]:
        if v in red_vals and len(v.meta.shape) == len(shape) - 1:  # keepdim=False: [rows...]
            return [*v.meta.stride, 0]
        return _strides_for(v, shape)

    strides = [strides_of(v) for v in operands]
    is_bool = {i for i, v in enumerate(operands) if _is_bool(v)}
    level: dict[Any, int] = {v: 0 for v in operands[: n_in + n_io]}
    red_level: dict[int, int] = {}
    for st in steps:
        lv = max((level.get(x, 0) for x in st.reads), default=0)
        if isinstance(st, _RowReduction):
            red_level[id(st)] = lv
            lv += 1
        level[st.out] = max(lv, level.get(st.out, 0))
    passes = max([*red_level.values(), *(level[v] for v in point_outs), 0]) + 1

    names: dict[Any, str] = {}
    for i, v in enumerate(k.inputs):
        names[v] = f"x{i}"
    for i, v in enumerate(k.inplace):
        names[v] = f"z{i}"
    for i, st in enumerate(reds):
        names[st.out] = f"red{i}"

    def expr(a: Any) -> str:
        return names[a] if isinstance(a, (Value, _Tmp)) else _literal(a)

    # every member's line, and the level it belongs to (a pass emits those at or below its own)
    body: list[tuple[int, str]] = []
    for j, st in enumerate(steps):
        if isinstance(st, _RowReduction):
            continue
        if st.alias is not None:  # a view: the same elements under a new name
            names[st.out] = names[st.alias]
            continue
        ty = "bool" if isinstance(st.out, Value) and _is_bool(st.out) else "T"
        body.append((level[st.out], f"const {ty} y{j} = {st.lower(expr)};  // {st.label}"))
        names[st.out] = f"y{j}"

    lines = [f'extern "C" void {symbol}(char** p) {{', f"  using T = {T};"]
    for i in range(len(operands)):
        ct = "uint8_t" if i in is_bool else "T"
        const = "const " if i < n_in else ""
        restrict = "" if n_in <= i < n_in + n_io else "__restrict__ "
        lines.append(
            f"  {const}{ct}* {restrict}{_operand_name(i, n_in, n_io, n_pt)} = reinterpret_cast<{const}{ct}*>(p[{i}]);"
        )
    outer_shape, outer_strides = _coalesce(list(shape[:-1]), [st[:-1] for st in strides])
    inner_st = [st[-1] for st in strides]
    rows = 1
    for sz in outer_shape:
        rows *= sz
    numel = rows * n
    if numel >= PARALLEL_MIN and rows > 1:
        lines.append("  #pragma omp parallel for")
    lines.append(f"  for (int64_t row = 0; row < {rows}; ++row) {{")
    base = _row_offsets(outer_shape, outer_strides, "row") if outer_shape else ["0"] * len(operands)
    lines += [f"    const int64_t b{i} = {b};" for i, b in enumerate(base)]
    for p in range(passes):
        mine = [(i, st) for i, st in enumerate(reds) if red_level[id(st)] == p]
        clauses = []
        for i, st in mine:
            if st.op == "amax":
                lines.append(f"    T mx{i} = -std::numeric_limits<T>::infinity();")
                lines.append(f"    int nan{i} = 0;")
                clauses += [f"reduction(max:mx{i})", f"reduction(|:nan{i})"]
            else:
                lines.append(f"    double acc{i} = 0;")
                clauses.append(f"reduction(+:acc{i})")
        lines.append(f"    #pragma omp simd{''.join(' ' + c for c in clauses)}")
        lines.append(f"    for (int64_t j = 0; j < {n}; ++j) {{")
        loads = [
            f"const bool x{i} = in{i}[b{i} + j * {inner_st[i]}] != 0;"
            if i in is_bool
            else f"const T x{i} = in{i}[b{i} + j * {inner_st[i]}];"
            for i in range(n_in)
        ]
        loads += [f"const T z{i} = io{i}[b{n_in + i} + j * {inner_st[n_in + i]}];" for i in range(n_io)]
        inner = loads + [line for lv, line in body if lv <= p]
        for i, st in mine:
            src = names[st.src]
            if st.op == "amax":
                inner += [f"mx{i} = {src} > mx{i} ? {src} : mx{i};", f"nan{i} |= {src} != {src};"]
            else:
                inner.append(f"acc{i} += {src};")
        if p == 0:
            inner += [f"io{i}[b{n_in + i} + j * {inner_st[n_in + i]}] = {names[v]};" for i, v in enumerate(k.inplace)]
        for i, v in enumerate(point_outs):
            if level[v] == p:
                o = n_in + n_io + i
                if v.meta.shape != shape:  # a per-row value: stored once
                    inner.append(f"if (j == 0) out{i}[b{o}] = {names[v]};")
                else:
                    inner.append(f"out{i}[b{o} + j * {inner_st[o]}] = {names[v]};")
        lines += ["      " + x for x in inner]
        lines.append("    }")
        for i, st in mine:
            if st.op == "amax":
                lines.append(f"    const T red{i} = nan{i} ? std::numeric_limits<T>::quiet_NaN() : mx{i};")
            else:
                mean = f" / {n}" if st.op == "mean" else ""
                lines.append(f"    const T red{i} = T(acc{i}{mean});")
            v = st.out
            if v in red_outs:
                o = n_in + n_io + n_pt + red_outs.index(v)
                lines.append(f"    {_operand_name(o, n_in, n_io, n_pt)}[b{o}] = red{i};")
    lines.append("  }")
    lines.append("}")
    return "\n".join(lines)


class _Tmp:
    """A value inside a row kernel that no graph node names (softmax's max, its sum of exps)."""


class _RowStep:
    """One line of a row kernel: ``out = lower(expr)`` over the values in `reads`."""

    def __init__(self, out: Any, reads: list[Any], lower: Callable[[Callable[[Any], str]], str], label: str) -> None:
        self.out, self.reads, self.lower, self.label = out, reads, lower, label
        self.alias: Any = None


class _RowReduction:
    """A reduction over the last dim: `op` is amax, sum or mean."""

    def __init__(self, op: str, src: Any, out: Any) -> None:
        self.op, self.src, self.out, self.reads = op, src, out, [src]


def _fmt(template: str, *vals: Any) -> Callable[[Callable[[Any], str]], str]:
    """A row step's C++ expression: `template` with the expressions of `vals` filled in."""
    return lambda e: template.format(*(e(v) for v in vals))


def _row_steps(nodes: list[Node]) -> list[Any]:
    steps: list[Any] = []

    def pw(out: Any, reads: list[Any], lower: Callable[[Callable[[Any], str]], str], label: str) -> None:
        steps.append(_RowStep(out, reads, lower, label))

    for nd in nodes:
        name, v = nd.op.full_name, result(nd)
        if name in REDUCTIONS:
            steps.append(_RowReduction(name.split("::")[1], nd.args[0], v))
        elif name in BROADCAST_VIEWS:
            st = _RowStep(v, [nd.args[0]], _fmt(""), nd.op.name)
            st.alias = nd.args[0]
            steps.append(st)
        elif name in SOFTMAXES or name in LOG_SOFTMAXES:
            x, m, z, ez, s = nd.args[0], _Tmp(), _Tmp(), _Tmp(), _Tmp()
            steps.append(_RowReduction("amax", x, m))
            pw(z, [x, m], _fmt("({} - {})", x, m), "softmax: x - max")
            pw(ez, [z], _fmt("std::exp({})", z), "softmax: exp")
            steps.append(_RowReduction("sum", ez, s))
            if name in SOFTMAXES:
                pw(v, [ez, s], _fmt("({} / {})", ez, s), nd.op.name)
            else:
                pw(v, [z, s], _fmt("({} - std::log({}))", z, s), nd.op.name)
        elif name in LAYER_NORMS:
            steps += _layer_norm_steps(nd)
        elif name == "aten::_log_softmax_backward_data":  # g - exp(out) * sum(g)
            g, o, s = nd.args[0], nd.args[1], _Tmp()
            steps.append(_RowReduction("sum", g, s))
            pw(v, [g, o, s], _fmt("({} - std::exp({}) * {})", g, o, s), nd.op.name)
        elif name == "aten::_softmax_backward_data":  # out * (g - sum(g * out))
            g, o, go, s = nd.args[0], nd.args[1], _Tmp(), _Tmp()
            pw(go, [g, o], _fmt("({} * {})", g, o), "softmax backward: g * out")
            steps.append(_RowReduction("sum", go, s))
            pw(v, [g, o, s], _fmt("({} * ({} - {}))", o, g, s), nd.op.name)
        else:
            pw(v, data_inputs(nd), _lowering(name, list(nd.args)), nd.op.name)
    return steps


def _layer_norm_steps(nd: Node) -> list[Any]:
    """Layer norm as eager's row_norm kernel computes it: m = mean(x), var = mean((x - m)^2),
    rstd = 1 / sqrt(var + eps) in double, out = fma(x, rstd, -m * rstd), then * w, + b."""
    x, w, b, eps = nd.args[0], nd.args[2], nd.args[3], float(nd.args[4])
    native = nd.op.full_name == "aten::native_layer_norm"
    mu, dev, sq, var, shift = _Tmp(), _Tmp(), _Tmp(), _Tmp(), _Tmp()
    rstd = nd.outputs[2] if native else _Tmp()
    out = nd.outputs[0]
    steps: list[Any] = [
        _RowReduction("mean", x, mu),
        _RowStep(dev, [x, mu], _fmt("({} - {})", x, mu), "layer_norm: x - mean"),
        _RowStep(sq, [dev], _fmt("({0} * {0})", dev), "layer_norm: squared"),
        _RowReduction("mean", sq, var),
        _RowStep(rstd, [var], _fmt(f"T(1.0 / std::sqrt(double({{}}) + {eps!r}))", var), "layer_norm: rstd"),
        # in double, as eager's: with a row of one element x * rstd and mean * rstd are equal and
        # large (rstd = 1 / sqrt(eps)), and only an exact fma of them leaves the exact 0
        _RowStep(shift, [mu, var], _fmt(f"T(-double({{}}) / std::sqrt(double({{}}) + {eps!r}))", mu, var), "shift"),
    ]
    if native:  # the mean is a per-row output too
        steps.append(_RowStep(nd.outputs[1], [mu], _fmt("{}", mu), "layer_norm: mean"))
    affine, reads = "std::fma({}, {}, {})", [x, rstd, shift]
    if w is not None:
        affine, reads = f"({affine} * {{}})", [*reads, w]
    if b is not None:
        affine, reads = f"({affine} + {{}})", [*reads, b]
    steps.append(_RowStep(out, reads, _fmt(affine, *reads), nd.op.name))
    return steps


def _lowering(name: str, args: list[Any]) -> Callable[[Callable[[Any], str]], str]:
    return lambda e: LOWERINGS[name](args, e) or ""


def _operand_name(i: int, n_in: int, n_io: int, n_pt: int) -> str:
    if i < n_in:
        return f"in{i}"
    if i < n_in + n_io:
        return f"io{i - n_in}"
    if i < n_in + n_io + n_pt:
        return f"out{i - n_in - n_io}"
    return f"rout{i - n_in - n_io - n_pt}"


def _row_offsets(shape: list[int], strides: list[list[int]], idx: str) -> list[str]:
    """Offsets of each operand for a flat index over `shape` (div/mod by constants)."""
    out = []
    for st in strides:
        terms = []
        rest = 1
        for d in range(len(shape) - 1, -1, -1):
            if st[d]:
                terms.append(f"(({idx} / {rest}) % {shape[d]}) * {st[d]}")
            rest *= shape[d]
        out.append(" + ".join(terms) or "0")
    return out


def _loops(
    shape: list[int],
    strides: list[list[int]],
    loads: Callable[..., list[str]],
    stores: Callable[..., list[str]],
    body: list[str],
    acc: bool,
    numel: int,
    streamed: list[int],
    out_ptr: Callable[[int], str],
    tileable: list[int] | None = None,
    tile: tuple[int, int] = (256, 64),
) -> list[str]:
    """The loop nest over the coalesced iteration space. Outputs in `streamed` whose innermost
    stride is 1 are staged per inner run in a local array and written with stream_().
    Operands in `tileable` are read-only T inputs (they may be staged through a transposed tile)."""
    n_ops = len(strides)

    def staging(
        st: list[int], run: int, start: list[str], n: str, pad: str
    ) -> tuple[list[str], dict[int, str], list[str]]:
        """Declarations, staging indices and the stream_() calls for one inner run."""
        live = [o for o in streamed if st[o] == 1]
        decl = [f"{pad}alignas(64) T s{o}[{run}];" for o in live]
        flush = [f"{pad}stream_({out_ptr(o)} + {start[o]}, s{o}, {n});" for o in live]
        return decl, {o: "" for o in live}, flush

    red = " reduction(+:acc)" if acc else ""
    # small kernels stay on the calling thread: an OpenMP fork costs more than they do
    par = [f"  #pragma omp parallel for{red}"] if numel >= PARALLEL_MIN else []
    out: list[str] = []
    if len(shape) == 0:  # 0-d
        offs = ["0"] * n_ops
        return ["  {"] + ["    " + s for s in loads(offs) + body + stores(offs)] + ["  }"]
    if len(shape) == 1:
        n = shape[0]
        st = [s[0] for s in strides]
        out += par
        out.append(f"  for (int64_t b = 0; b < {n}; b += {BLOCK}) {{")
        out.append(f"    const int64_t e = b + {BLOCK} < {n} ? b + {BLOCK} : {n};")
        decl, staged, flush = staging(st, BLOCK, [f"b * {s}" for s in st], "e - b", "    ")
        out += decl
        out.append(f"    #pragma omp simd{red}")
        out.append("    for (int64_t i = b; i < e; ++i) {")
        offs = [f"i * {s}" for s in st]
        out += ["      " + s for s in loads(offs) + body + stores(offs, {o: "i - b" for o in staged})]
        out.append("    }")
        out += flush + (["    fence_();"] if flush else [])
        out.append("  }")
        return out
    # 2-D and more: outer dims flattened into rows; the last two dims tiled when some operand is
    # transposed (its stride along the last dim is not 1 while another's is)
    inner = shape[-1]
    inner_st = [s[-1] for s in strides]
    transposed = len(shape) >= 2 and any(s not in (0, 1) for s in inner_st) and any(s[-2] == 1 for s in strides)
    if transposed:
        rows_shape = shape[:-2]
        rows = 1
        for s in rows_shape:
            rows *= s
        m = shape[-2]
        mid_st = [s[-2] for s in strides]
        base = _row_offsets(rows_shape, [s[:-2] for s in strides], "r") if rows_shape else ["0"] * n_ops
        # schedule(static, 1): the two threads take neighbouring rows of tiles, so at any time
        # they read neighbouring runs of a transposed input (the same pages, one longer run)
        out += [p.replace("parallel for", "parallel for collapse(2) schedule(static, 1)") for p in par]
        out.append(f"  for (int64_t r = 0; r < {rows}; ++r)")
        tm, tn = tile
        out.append(f"  for (int64_t ib = 0; ib < {m}; ib += {tm}) {{")
        out += [f"    const int64_t b{i} = {b};" for i, b in enumerate(base)]
        out.append(f"    const int64_t ni = ib + {tm} < {m} ? {tm} : {m} - ib;")
        out.append(f"    for (int64_t jb = 0; jb < {inner}; jb += {tn}) {{")
        out.append(f"      const int64_t nj = jb + {tn} < {inner} ? {tn} : {inner} - jb;")
        # an input contiguous along the tile's rows (mid stride 1) but not along its columns is
        # staged into a local tile first, read in its own memory order through register
        # transposes (stage_transposed_): read in place, the lines of a tile column lie a
        # large power-of-two stride apart and evict each other from L1 before they are reused
        tiled = [k for k in tileable or [] if mid_st[k] == 1 and inner_st[k] not in (0, 1)]
        for k in tiled:
            out.append(f"      alignas(64) T tile{k}[{tm}][{tn}];")
            src = f"in{k} + b{k} + ib + jb * {inner_st[k]}"
            out.append(f"      stage_transposed_(&tile{k}[0][0], {tn}, {src}, {inner_st[k]}, ni, nj);")
        tiles = {k: f"tile{k}[i][j]" for k in tiled}
        offs = [f"b{k} + (ib + i) * {mid_st[k]} + (jb + j) * {inner_st[k]}" for k in range(n_ops)]
        starts = [f"b{k} + (ib + i) * {mid_st[k]} + jb" for k in range(n_ops)]

        def tile_rows(ni: str, nj: str, pad: str) -> list[str]:
            decl, staged, flush = staging(inner_st, tn, starts, nj, pad + "  ")
            nest = [f"{pad}for (int64_t i = 0; i < {ni}; ++i) {{", *decl, f"{pad}  #pragma omp simd{red}"]
            nest.append(f"{pad}  for (int64_t j = 0; j < {nj}; ++j) {{")
            nest += [pad + "    " + s for s in loads(offs, tiles) + body + stores(offs, {o: "j" for o in staged})]
            return [*nest, f"{pad}  }}", *flush, f"{pad}}}"]

        # whole tiles with constant trip counts (the loops unroll and vectorise without
        # remainders); the last tile of a row or column, when the sizes do not divide, apart
        if m % tm == 0 and inner % tn == 0:
            out += tile_rows(str(tm), str(tn), "      ")
        else:
            out.append(f"      if (ni == {tm} && nj == {tn}) {{")
            out += tile_rows(str(tm), str(tn), "        ")
            out.append("      } else {")
            out += tile_rows("ni", "nj", "        ")
            out.append("      }")
        fenced = any(inner_st[o] == 1 for o in streamed)  # streamed stores: a fence per row of tiles
        out += ["    }"] + (["    fence_();"] if fenced else []) + ["  }"]
        return out
    rows_shape = shape[:-1]
    rows = 1
    for s in rows_shape:
        rows *= s
    base = _row_offsets(rows_shape, [s[:-1] for s in strides], "r")
    out += par
    out.append(f"  for (int64_t r = 0; r < {rows}; ++r) {{")
    out += [f"    const int64_t b{i} = {b};" for i, b in enumerate(base)]
    if inner <= BLOCK:
        decl, staged, flush = staging(inner_st, inner, [f"b{k}" for k in range(n_ops)], str(inner), "    ")
    else:
        decl, staged, flush = [], {}, []
    out += decl
    out.append(f"    #pragma omp simd{red}")
    out.append(f"    for (int64_t j = 0; j < {inner}; ++j) {{")
    offs = [f"b{k} + j * {inner_st[k]}" for k in range(n_ops)]
    out += ["      " + s for s in loads(offs) + body + stores(offs, {o: "j" for o in staged})]
    out.append("    }")
    out += flush + (["    fence_();"] if flush else [])
    out.append("  }")
    return out


# ---------------------------------------------------------------------------
# compiling and loading
# ---------------------------------------------------------------------------

# -fno-trapping-math: without it GCC may not turn a comparison into a select (a compare can
# raise FE_INVALID on NaN), so no loop with relu, maximum, a mask or amax was vectorised;
# ember never reads the floating-point exception flags, and no value changes
CXX_FLAGS = [
    "-O3",
    "-march=native",
    "-fopenmp",
    "-fPIC",
    "-shared",
    "-fno-math-errno",
    "-fno-trapping-math",
    "-std=c++17",
]


def cache_dir() -> Path:
    d = os.environ.get("EMBER_FX_CACHE_DIR")
    if d:
        return Path(d)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ember" / "fx"


def find_compiler() -> str | None:
    cxx = os.environ.get("CXX")
    if cxx:
        return shutil.which(cxx) or (cxx if os.path.exists(cxx) else None)
    return shutil.which("g++") or shutil.which("c++")


class CompileError(RuntimeError):
    pass


def compile_source(source: str) -> Path:
    """The shared library of `source`, from the cache or compiled now (CompileError if it fails)."""
    cxx = find_compiler()
    if cxx is None:
        raise CompileError("no C++ compiler found (set CXX, or install g++)")
    key = hashlib.sha256("\0".join([source, cxx, *CXX_FLAGS]).encode()).hexdigest()[:32]
    d = cache_dir()
    lib = d / f"{key}.so"
    if lib.exists():
        return lib
    d.mkdir(parents=True, exist_ok=True)
    src = d / f"{key}.cpp"
    src.write_text(source)
    fd, tmp = tempfile.mkstemp(suffix=".so", dir=d)
    os.close(fd)
    try:
        done = subprocess.run([cxx, *CXX_FLAGS, str(src), "-o", tmp], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise CompileError(f"{cxx} failed on {src}:\n{done.stderr[-2000:]}")
        os.replace(tmp, lib)  # atomic: a concurrent process sees the whole library or none
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return lib


def translation_unit(kernels: list[FusedKernel], graph_name: str) -> str:
    parts = [f"// ember.fx fused kernels of graph {graph_name!r} (generated)", _PRELUDE]
    for i, k in enumerate(kernels):
        k.symbol = f"fused_{i}"
        k.source = kernel_source(k, k.symbol)
        parts.append(f"// {k.summary()}\n{k.source}")
    return "\n".join(parts) + "\n"


def build(graph: Graph, plan: list[Any]) -> tuple[list[Any], str | None]:
    """Compiles the plan's FusedKernels; on failure (with a warning) they become their nodes again."""
    kernels = [s for s in plan if isinstance(s, FusedKernel)]
    if not kernels:
        return plan, None
    source = translation_unit(kernels, graph.name)
    try:
        lib = ctypes.CDLL(str(compile_source(source)))
    except (CompileError, OSError) as e:
        warnings.warn(
            f"ember.fx: fused kernels of {graph.name!r} unavailable ({e}); running those nodes by replay",
            RuntimeWarning,
            stacklevel=3,
        )
        return unfuse(plan), None
    for k in kernels:
        fn = getattr(lib, k.symbol)
        fn.argtypes = [ctypes.c_void_p]
        fn.restype = None
        k._fn = fn
        k._ptr_array = ctypes.c_void_p * (len(k.inputs) + len(k.inplace) + len(k.outputs))
        n = 1
        for s in k.shape:
            n *= s
        # a sum over no elements still writes its zeros: only a kernel with nothing to do is skipped
        k._numel = n or int(any(_is_reduction_result(v) for v in k.outputs))
        k._lib = lib
    return plan, source


def unfuse(plan: list[Any]) -> list[Any]:
    out: list[Any] = []
    for s in plan:
        out.extend(s.nodes if isinstance(s, FusedKernel) else [s])
    return out


_ = ea  # ember.aten must be imported (dtypes) before kernels are built
