"""Python kernels of the linear-algebra composites: matmul, outer/ger, kron, cross,
einsum, tensordot, det, linalg.norm / linalg.matrix_norm, linalg.svd / svdvals.

Each takes its schema's arguments positionally (native_functions.yaml, section
"linear algebra") and calls operators through their dispatcher entries, so autograd
differentiates it through the operators it calls (mm, bmm, dot, mv, mul, sum, ...).
The products themselves are C++ (csrc/native/LinearAlgebra.cpp over OpenBLAS).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import ember.c10py as _c10
from ember.aten._generated import _ops as ops

_wrap = _c10.maybe_wrap_dim

# The names PyTorch's messages use for dtypes: C++ types ("float") and ScalarType names ("Float").
_CPP_NAMES = {
    "bool": "bool",
    "uint8": "unsigned char",
    "int8": "signed char",
    "int16": "short int",
    "int32": "int",
    "int64": "long int",
    "float16": "c10::Half",
    "bfloat16": "c10::BFloat16",
    "float32": "float",
    "float64": "double",
}
_ST_NAMES = {
    "bool": "Bool",
    "uint8": "Byte",
    "int8": "Char",
    "int16": "Short",
    "int32": "Int",
    "int64": "Long",
    "float16": "Half",
    "bfloat16": "BFloat16",
    "float32": "Float",
    "float64": "Double",
}


def _prod(xs: Any) -> int:
    n = 1
    for x in xs:
        n *= x
    return n


def _shape(t: Any) -> tuple[int, ...]:
    return tuple(t._impl.sizes)


def _broadcast_shapes(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """PyTorch's infer_size, with its message."""
    n = max(len(a), len(b))
    out = []
    for i in range(n):
        da = a[i - n + len(a)] if i - n + len(a) >= 0 else 1
        db = b[i - n + len(b)] if i - n + len(b) >= 0 else 1
        if da != db and da != 1 and db != 1:
            raise RuntimeError(
                f"The size of tensor a ({da}) must match the size of tensor b ({db}) at non-singleton dimension {i}"
            )
        out.append(db if da == 1 else da)
    return tuple(out)


def _resize_output(out: Any, shape: tuple[int, ...]) -> None:
    """PyTorch's resize_output: an out= tensor of another shape is resized (with a warning
    when it held elements)."""
    if _shape(out) == shape:
        return
    if out.numel() != 0:
        warnings.warn(
            f"An output with one or more elements was resized since it had shape {list(_shape(out))}, which does not "
            f"match the required output shape {list(shape)}. This behavior is deprecated, and in a future PyTorch "
            "release outputs will not be resized unless they have zero elements. You can explicitly reuse an out "
            "tensor t by resizing it, inplace, to zero elements with t.resize_(0).",
            UserWarning,
            stacklevel=4,
        )
    out._impl.set_sizes_contiguous(list(shape))


def _set_out(out: Any, result: Any, name: str = "op") -> Any:
    """Writes `result` into out= (same dtype required, as PyTorch's linalg outs) and returns out."""
    if getattr(result, "requires_grad", False):
        raise RuntimeError(
            f"{name}(): functions with out=... arguments don't support automatic differentiation, but one of the "
            "arguments requires grad."
        )
    if out.dtype != result.dtype:
        raise RuntimeError(
            f"Expected out tensor to have dtype {_CPP_NAMES[result.dtype._name]}, but got "
            f"{_CPP_NAMES[out.dtype._name]} instead"
        )
    _resize_output(out, _shape(result))
    ops._call_copy_(out, result, False)
    return out


def _squeeze(t: Any, dim: int) -> Any:
    return ops._call_squeeze_dims(t, (dim,))


def _reduced_shape(t: Any, dims: Any, keepdim: bool) -> tuple[int, ...]:
    nd = t.dim()
    ds = {_wrap(d, nd) for d in dims}
    return tuple(1 if i in ds else s for i, s in enumerate(_shape(t)) if keepdim or i not in ds)


def _sum(t: Any, dims: Any, keepdim: bool = False) -> Any:
    """sum over dims; a sum over nothing (a zero-size dim) is 0, computed here without a reduction."""
    if any(_shape(t)[_wrap(d, t.dim())] == 0 for d in dims):
        dtype = t.dtype if t.dtype.is_floating_point else _c10.int64
        return ops._call_new_zeros(t, _reduced_shape(t, dims, keepdim), dtype, None, None, None)
    return ops._call_sum(t, tuple(dims), keepdim, None)


def _vector_norm(t: Any, ord: Any, dims: Any, keepdim: bool, dtype: Any = None) -> Any:
    """linalg.vector_norm (ord > 0); the norm of an empty vector is 0."""
    dims_all = tuple(range(t.dim())) if dims is None else tuple(dims)
    if ord > 0 and t.numel() == 0 and (dims is None or any(_shape(t)[_wrap(d, t.dim())] == 0 for d in dims_all)):
        out_dtype = dtype if dtype is not None else t.dtype
        return ops._call_new_zeros(t, _reduced_shape(t, dims_all, keepdim), out_dtype, None, None, None)
    return ops._call_linalg_vector_norm(t, ord, dims, keepdim, dtype)


# ---- matmul ---------------------------------------------------------------------------------
#
# PyTorch's rules: 1-D . 1-D -> dot (0-dim); 2-D . 1-D -> mv; 1-D . 2-D -> the vector as a
# one-row matrix; 2-D . 2-D -> mm; an N-D (N >= 3) left operand with a 1-D/2-D right one is
# folded into one mm over its leading dims; everything else broadcasts the batch dims and
# runs one bmm (a 1-D operand gets a unit dim that is removed from the result).


def _check_tensor(x: Any, name: str, pos: int, op: str) -> None:
    if not hasattr(x, "_impl"):
        raise TypeError(f"{op}(): argument '{name}' (position {pos}) must be Tensor, not {type(x).__name__}")


def _matmul(a: Any, b: Any, out: Any) -> Any:
    _check_tensor(a, "input", 1, "matmul")
    _check_tensor(b, "other", 2, "matmul")
    da, db = a._impl.dim, b._impl.dim
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D")
    if da == 1 and db == 1:
        return ops._call_dot(a, b) if out is None else ops._call_dot_out(a, b, out)
    if da == 2 and db == 1:
        return ops._call_mv(a, b) if out is None else ops._call_mv_out(a, b, out)
    if da == 2 and db == 2:
        return ops._call_mm(a, b) if out is None else ops._call_mm_out(a, b, out)
    if da == 1 and db == 2:
        r = _squeeze(ops._call_mm(ops._call_unsqueeze(a, 0), b), 0)
    elif da >= 3 and db <= 2:
        # fold the batch into the rows: (..., n, k) -> (B*n, k), one mm
        sa = _shape(a)
        folded = ops._call_reshape(a, (_prod(sa[:-1]), sa[-1]))  # not -1: a may have 0 elements
        if db == 1:
            r = ops._call_reshape(ops._call_mv(folded, b), sa[:-1])
        else:
            r = ops._call_reshape(ops._call_mm(folded, b), (*sa[:-1], _shape(b)[-1]))
    else:
        sa, sb = _shape(a), _shape(b)
        n, k1 = (sa[-2], sa[-1]) if da > 1 else (1, sa[-1])
        k2, p = (sb[-2], sb[-1]) if db > 1 else (sb[-1], 1)
        batch = _broadcast_shapes(sa[:-2], sb[:-2])
        bs = _prod(batch)
        a2 = ops._call_unsqueeze(a, 0) if da == 1 else a
        b2 = ops._call_unsqueeze(b, -1) if db == 1 else b
        a3 = ops._call_reshape(ops._call_expand(a2, (*batch, n, k1), False), (bs, n, k1))
        b3 = ops._call_reshape(ops._call_expand(b2, (*batch, k2, p), False), (bs, k2, p))
        r = ops._call_reshape(ops._call_bmm(a3, b3), (*batch, n, p))
        if da == 1:
            r = _squeeze(r, -2)
        if db == 1:
            r = _squeeze(r, -1)
    return r if out is None else _set_out(out, r, "matmul")


def matmul(self: Any, other: Any) -> Any:
    # the common 2-D @ 2-D case first: this is on the path of every `a @ b`
    impl_a, impl_b = getattr(self, "_impl", None), getattr(other, "_impl", None)
    if impl_a is not None and impl_b is not None and impl_a.dim == 2 and impl_b.dim == 2:
        return ops._call_mm(self, other)
    return _matmul(self, other, None)


def matmul_out(self: Any, other: Any, out: Any) -> Any:
    return _matmul(self, other, out)


# ---- outer / ger / kron ----------------------------------------------------------------------


def _check_outer(self: Any, vec2: Any) -> None:
    for name, t in (("self", self), ("vec2", vec2)):
        if t.dim() != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.dim()}-D")


def outer(self: Any, vec2: Any) -> Any:
    _check_outer(self, vec2)
    return ops._call_mul_Tensor(ops._call_unsqueeze(self, 1), vec2)


def outer_out(self: Any, vec2: Any, out: Any) -> Any:
    _check_outer(self, vec2)
    return ops._call_mul_out(ops._call_unsqueeze(self, 1), vec2, out)


def ger(self: Any, vec2: Any) -> Any:
    return outer(self, vec2)


def ger_out(self: Any, vec2: Any, out: Any) -> Any:
    return outer_out(self, vec2, out)


def kron(self: Any, other: Any) -> Any:
    """Kronecker product: both shapes padded to one ndim; the result's dim i is a_i * b_i,
    a's index varying slowest. (a[i, 1, j, 1] * b[1, k, 1, l]).reshape(a_i*b_k, a_j*b_l)."""
    nd = max(self.dim(), other.dim())
    sa = (1,) * (nd - self.dim()) + _shape(self)
    sb = (1,) * (nd - other.dim()) + _shape(other)
    a = ops._call_reshape(self, tuple(x for s in sa for x in (s, 1)))
    b = ops._call_reshape(other, tuple(x for s in sb for x in (1, s)))
    return ops._call_reshape(ops._call_mul_Tensor(a, b), tuple(x * y for x, y in zip(sa, sb, strict=True)))


def kron_out(self: Any, other: Any, out: Any) -> Any:
    return _set_out(out, kron(self, other), "kron")


# ---- cross ----------------------------------------------------------------------------------


def _cross_dim(self: Any, other: Any, dim: int | None) -> int:
    if dim is not None:
        return dim
    warnings.warn(
        "Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim explicitly or "
        "simply use torch.linalg.cross.\nThe default value of dim will change to agree with that of linalg.cross in "
        "a future release.",
        UserWarning,
        stacklevel=4,
    )
    for d, s in enumerate(_shape(self)):
        if s == 3:
            return d
    raise RuntimeError("no dimension of size 3 in input")


def cross(self: Any, other: Any, dim: int | None) -> Any:
    return ops._call_linalg_cross(self, other, _cross_dim(self, other, dim))


def cross_out(self: Any, other: Any, dim: int | None, out: Any) -> Any:
    return ops._call_linalg_cross_out(self, other, _cross_dim(self, other, dim), out)


# ---- det --------------------------------------------------------------------------------------


def det(self: Any) -> Any:
    return ops._call_linalg_det(self)


# ---- SVD --------------------------------------------------------------------------------------


def linalg_svd(A: Any, full_matrices: bool, driver: str | None) -> Any:
    return ops._call__linalg_svd(A, full_matrices, True, driver)


def linalg_svd_U(A: Any, full_matrices: bool, driver: str | None, U: Any, S: Any, Vh: Any) -> Any:
    u, s, vh = ops._call__linalg_svd(A, full_matrices, True, driver)
    return _set_out(U, u, "linalg_svd"), _set_out(S, s, "linalg_svd"), _set_out(Vh, vh, "linalg_svd")


def linalg_svdvals(A: Any, driver: str | None) -> Any:
    # the singular vectors are only needed for the gradient
    return ops._call__linalg_svd(A, False, bool(getattr(A, "requires_grad", False)), driver)[1]


def linalg_svdvals_out(A: Any, driver: str | None, out: Any) -> Any:
    return _set_out(out, linalg_svdvals(A, driver), "linalg_svdvals")


# ---- norms ------------------------------------------------------------------------------------

_MATRIX_ORDS = (2, -2, 1, -1, math.inf, -math.inf)


def _check_norm_input(A: Any, dtype: Any, name: str) -> Any:
    if not A.dtype.is_floating_point:
        got = _ST_NAMES[A.dtype._name]
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got {got}")
    if dtype is not None:
        if not dtype.is_floating_point or _c10.promote_types(A.dtype, dtype) != dtype:
            raise RuntimeError(
                f"{name}: the dtype of the input ({_ST_NAMES[A.dtype._name]}) should be convertible without "
                f"narrowing to the specified dtype ({_ST_NAMES[dtype._name]})"
            )
        A = A.to(dtype)
    return A


def _ord_str(ord: Any) -> str:
    if isinstance(ord, float) and ord.is_integer():
        return str(int(ord))
    return str(ord)


def _max_or_min(t: Any, dim: int, is_max: bool, keepdim: bool) -> Any:
    """amax / amin over one dim; the max over an empty dim of norms is 0 (as PyTorch's)."""
    if is_max:
        if _shape(t)[dim] == 0:
            return ops._call_new_zeros(t, _reduced_shape(t, (dim,), keepdim), None, None, None, None)
        return ops._call_amax(t, (dim,), keepdim)
    return ops._call_amin(t, (dim,), keepdim)


def _matrix_norm(A: Any, ord: Any, dim: Any, keepdim: bool, dtype: Any) -> Any:
    name = "linalg.matrix_norm"
    if A.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    A = _check_norm_input(A, dtype, name)
    dim = tuple(dim)
    if len(dim) != 2:
        raise RuntimeError(f"{name}: dim must be a 2-tuple. Got {' '.join(str(d) for d in dim)}")
    d0, d1 = _wrap(dim[0], A.dim()), _wrap(dim[1], A.dim())
    if d0 == d1:
        raise RuntimeError(f"{name}: dims must be different. Got ({dim[0]}, {dim[1]})")
    if isinstance(ord, str):
        if ord == "fro":
            return _vector_norm(A, 2, (d0, d1), keepdim)
        if ord != "nuc":
            raise RuntimeError(f"{name}: Order {ord} not supported.")
    elif ord not in _MATRIX_ORDS:
        raise RuntimeError(f"{name}: Order {_ord_str(ord)} not supported.")
    if ord in ("nuc", 2, -2):
        # singular values of the matrices spanned by (d0, d1)
        moved = ops._call_movedim_intlist(A, (d0, d1), (-2, -1))
        s = linalg_svdvals(moved, None)
        if ord == "nuc":
            r = _sum(s, (-1,))
        else:
            r = _max_or_min(s, -1, ord == 2, False)
        if keepdim:
            for d in sorted((d0, d1)):
                r = ops._call_unsqueeze(r, d)
        return r
    # 1 / -1: max / min column sum; inf / -inf: max / min row sum
    sum_dim, pick_dim = (d0, d1) if ord in (1, -1) else (d1, d0)
    sums = _vector_norm(A, 1, (sum_dim,), keepdim)
    if not keepdim and pick_dim > sum_dim:
        pick_dim -= 1
    return _max_or_min(sums, pick_dim, ord > 0, keepdim)


def linalg_matrix_norm(self: Any, ord: Any, dim: Any, keepdim: bool, dtype: Any) -> Any:
    return _matrix_norm(self, ord, dim, keepdim, dtype)


def linalg_matrix_norm_str_ord(self: Any, ord: str, dim: Any, keepdim: bool, dtype: Any) -> Any:
    return _matrix_norm(self, ord, dim, keepdim, dtype)


def linalg_matrix_norm_out(self: Any, ord: Any, dim: Any, keepdim: bool, dtype: Any, out: Any) -> Any:
    return _set_out(out, _matrix_norm(self, ord, dim, keepdim, dtype), "linalg_matrix_norm")


def linalg_matrix_norm_str_ord_out(self: Any, ord: str, dim: Any, keepdim: bool, dtype: Any, out: Any) -> Any:
    return _set_out(out, _matrix_norm(self, ord, dim, keepdim, dtype), "linalg_matrix_norm")


def _norm(A: Any, ord: Any, dim: Any, keepdim: bool, dtype: Any) -> Any:
    """linalg.norm: a vector norm over one dim (or all, flattened), a matrix norm over two."""
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) == 1:
            if isinstance(ord, str):
                raise RuntimeError(f"linalg.vector_norm: ord must be a number, but got {ord}")
            return _vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype)
        if len(dims) == 2:
            return _matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype)
        raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dims)}")
    if ord is None:
        return _vector_norm(A, 2, None, keepdim, dtype)
    if A.dim() not in (1, 2):
        raise RuntimeError(
            f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got {A.dim()}D."
        )
    if isinstance(ord, str) or A.dim() == 2:
        return _matrix_norm(A, ord, (-2, -1), keepdim, dtype)
    return _vector_norm(A, ord, None, keepdim, dtype)


def linalg_norm(self: Any, ord: Any, dim: Any, keepdim: bool, dtype: Any) -> Any:
    return _norm(self, ord, dim, keepdim, dtype)


def linalg_norm_ord_str(self: Any, ord: str, dim: Any, keepdim: bool, dtype: Any) -> Any:
    return _norm(self, ord, dim, keepdim, dtype)


def linalg_norm_out(self: Any, ord: Any, dim: Any, keepdim: bool, dtype: Any, out: Any) -> Any:
    return _set_out(out, _norm(self, ord, dim, keepdim, dtype), "linalg_norm")


def linalg_norm_ord_str_out(self: Any, ord: str, dim: Any, keepdim: bool, dtype: Any, out: Any) -> Any:
    return _set_out(out, _norm(self, ord, dim, keepdim, dtype), "linalg_norm")


# ---- tensordot ----------------------------------------------------------------------------------


def _tensordot(a: Any, b: Any, dims_a: Any, dims_b: Any) -> Any:
    """Contracts dims_a of a with dims_b of b: a permuted to (free, contracted) and b to
    (contracted, free), both as matrices, one mm."""
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    if a.dtype != b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    sa, sb = _shape(a), _shape(b)
    ca = [_wrap(d, a.dim()) for d in dims_a]
    cb = [_wrap(d, b.dim()) for d in dims_b]
    if len(set(ca)) != len(ca) or len(set(cb)) != len(cb):
        raise RuntimeError("tensordot: a dimension appears more than once in the dims list")
    for i, (x, y) in enumerate(zip(ca, cb, strict=True)):
        if sa[x] == sb[y]:
            continue
        # a contracted dim of size 1 broadcasts: sum the other side over it first (as PyTorch)
        if sb[y] == 1:
            a = _sum(a, (x,), True)
        elif sa[x] == 1:
            b = _sum(b, (y,), True)
        else:
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size {sa[x]} in dim {dims_a[i]} and second has "
                f"size {sb[y]} in dim {dims_b[i]}"
            )
    sa, sb = _shape(a), _shape(b)
    fa = [d for d in range(a.dim()) if d not in ca]
    fb = [d for d in range(b.dim()) if d not in cb]
    k = _prod(sa[d] for d in ca)
    am = ops._call_reshape(ops._call_permute(a, tuple(fa + ca)), (_prod(sa[d] for d in fa), k))
    bm = ops._call_reshape(ops._call_permute(b, tuple(cb + fb)), (k, _prod(sb[d] for d in fb)))
    return ops._call_reshape(ops._call_mm(am, bm), tuple(sa[d] for d in fa) + tuple(sb[d] for d in fb))


def tensordot(self: Any, other: Any, dims_self: Any, dims_other: Any) -> Any:
    return _tensordot(self, other, tuple(dims_self), tuple(dims_other))


def tensordot_out(self: Any, other: Any, dims_self: Any, dims_other: Any, out: Any) -> Any:
    return _set_out(out, _tensordot(self, other, tuple(dims_self), tuple(dims_other)), "tensordot")


# ---- einsum ----------------------------------------------------------------------------------
#
# The equation is parsed into one list of labels per operand (a label is a letter, or
# ("...", j) for the j-th of the E broadcast dims an ellipsis stands for, aligned to the
# right). Each operand first takes the diagonal of a repeated label and sums out the
# labels no one else needs; then the operands are contracted left to right, each pair as
# one bmm: A permuted to (batch, A-only, contracted), B to (batch, contracted, B-only).
# Dims of size 1 broadcast against the same label's size elsewhere.

_ELL = "..."


def _einsum_parse(equation: str, n_ops: int) -> tuple[list[list[Any]], list[Any] | None]:
    arrow = equation.find("->")
    lhs_end = arrow if arrow >= 0 else len(equation)
    terms: list[list[Any]] = [[]]
    i = 0
    while i < lhs_end:
        c = equation[i]
        if c == " ":
            i += 1
        elif c == ",":
            terms.append([])
            i += 1
        elif c == ".":
            if _ELL in terms[-1]:
                raise RuntimeError(
                    f"einsum(): found '.' for operand {len(terms) - 1} for which an ellipsis was already found"
                )
            if equation[i : i + 3] != "...":
                raise RuntimeError(f"einsum(): found '.' for operand {len(terms) - 1} that is not part of any ellipsis")
            terms[-1].append(_ELL)
            i += 3
        elif c.isascii() and c.isalpha():
            terms[-1].append(c)
            i += 1
        else:
            raise RuntimeError(
                f"einsum(): invalid subscript given at index {i} in the equation string, subscripts must be in [a-zA-Z]"
            )
    if n_ops > len(terms):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    if n_ops < len(terms):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if arrow < 0:
        return terms, None
    out: list[Any] = []
    i = arrow + 2
    while i < len(equation):
        c = equation[i]
        if c == " ":
            i += 1
        elif c == ".":
            if _ELL in out:
                raise RuntimeError("einsum(): found '.' for output but an ellipsis was already found")
            if equation[i : i + 3] != "...":
                raise RuntimeError("einsum(): found '.' for output that is not part of any ellipsis")
            out.append(_ELL)
            i += 3
        elif c.isascii() and c.isalpha():
            if c in out:
                raise RuntimeError(f"einsum(): output subscript {c} appears more than once in the output")
            out.append(c)
            i += 1
        else:
            raise RuntimeError(
                f"einsum(): invalid subscript given at index {i} in the equation string, subscripts must be in [a-zA-Z]"
            )
    return terms, out


def _einsum_labels(
    terms: list[list[Any]], operands: list[Any], out: list[Any] | None
) -> tuple[list[list[Any]], list[Any]]:
    """Expands ellipses into ("...", j) labels; returns per-operand labels and the output labels."""
    n_ell = 0
    for k, (term, t) in enumerate(zip(terms, operands, strict=True)):
        n_named = len(term) - (1 if _ELL in term else 0)
        if _ELL not in term and n_named != t.dim():
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({n_named}) does not match the number of "
                f"dimensions ({t.dim()}) for operand {k} and no ellipsis was given"
            )
        if _ELL in term and n_named > t.dim():
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({n_named}) is more than the number of "
                f"dimensions ({t.dim()}) for operand {k}"
            )
        if _ELL in term:
            n_ell = max(n_ell, t.dim() - n_named)
    labels: list[list[Any]] = []
    for term, t in zip(terms, operands, strict=True):
        if _ELL in term:
            e = t.dim() - (len(term) - 1)
            pos = term.index(_ELL)
            labels.append(term[:pos] + [(_ELL, j) for j in range(n_ell - e, n_ell)] + term[pos + 1 :])
        else:
            labels.append(list(term))
    ell = [(_ELL, j) for j in range(n_ell)]
    if out is None:
        counts: dict[str, int] = {}
        for term in terms:
            for c in term:
                if c != _ELL:
                    counts[c] = counts.get(c, 0) + 1
        out_labels = ell + sorted(c for c, n in counts.items() if n == 1)
    else:
        seen = {c for term in terms for c in term}
        for c in out:
            if c != _ELL and c not in seen:
                raise RuntimeError(
                    f"einsum(): output subscript {c} does not appear in the equation for any input operand"
                )
        out_labels = []
        for c in out:
            out_labels.extend(ell if c == _ELL else [c])
    return labels, out_labels


def _label_name(lab: Any) -> str:
    return lab if isinstance(lab, str) else "..."


def _einsum_diagonals(t: Any, labs: list[Any], k: int) -> tuple[Any, list[Any]]:
    while True:
        dup = next((lab for i, lab in enumerate(labs) if lab in labs[i + 1 :]), None)
        if dup is None:
            return t, labs
        i = labs.index(dup)
        j = labs.index(dup, i + 1)
        si, sj = _shape(t)[i], _shape(t)[j]
        if si != sj:
            raise RuntimeError(
                f"einsum(): subscript {_label_name(dup)} is repeated for operand {k} but the sizes don't match, "
                f"{sj} != {si}"
            )
        t = ops._call_diagonal(t, 0, i, j)  # the diagonal becomes the last dim
        labs = [lab for n, lab in enumerate(labs) if n not in (i, j)] + [dup]


def _sum_labels(t: Any, labs: list[Any], drop: set[Any]) -> tuple[Any, list[Any]]:
    dims = tuple(i for i, lab in enumerate(labs) if lab in drop)
    if not dims:
        return t, labs
    return _sum(t, dims), [lab for lab in labs if lab not in drop]


def _contract(a: Any, la: list[Any], b: Any, lb: list[Any], keep: set[Any]) -> tuple[Any, list[Any]]:
    """a (labels la) and b (labels lb) -> their product over the shared labels not in keep."""
    sa = dict(zip(la, _shape(a), strict=True))
    sb = dict(zip(lb, _shape(b), strict=True))
    shared = [lab for lab in la if lab in sb]
    # a contracted label of size 1 on one side is summed out of the other side first
    a_sum = {lab for lab in shared if lab not in keep and sb[lab] == 1 and sa[lab] != 1}
    b_sum = {lab for lab in shared if lab not in keep and sa[lab] == 1 and sb[lab] != 1}
    if a_sum or b_sum:
        a, la = _sum_labels(a, la, a_sum)
        b, lb = _sum_labels(b, lb, b_sum)
        a, la = _sum_labels(a, la, b_sum)  # the size-1 dims
        b, lb = _sum_labels(b, lb, a_sum)
        sa = dict(zip(la, _shape(a), strict=True))
        sb = dict(zip(lb, _shape(b), strict=True))
        shared = [lab for lab in la if lab in sb]
    batch = [lab for lab in shared if lab in keep]
    contracted = [lab for lab in shared if lab not in keep]
    a_only = [lab for lab in la if lab not in sb]
    b_only = [lab for lab in lb if lab not in sa]
    bsizes = tuple(max(sa[lab], sb[lab]) for lab in batch)
    ksize = _prod(sa[lab] for lab in contracted)
    msizes = tuple(sa[lab] for lab in a_only)
    nsizes = tuple(sb[lab] for lab in b_only)
    a_perm = ops._call_permute(a, tuple(la.index(lab) for lab in batch + a_only + contracted))
    b_perm = ops._call_permute(b, tuple(lb.index(lab) for lab in batch + contracted + b_only))
    if batch:
        a_perm = ops._call_expand(a_perm, bsizes + msizes + tuple(sa[lab] for lab in contracted), False)
        b_perm = ops._call_expand(b_perm, bsizes + tuple(sb[lab] for lab in contracted) + nsizes, False)
        a3 = ops._call_reshape(a_perm, (_prod(bsizes), _prod(msizes), ksize))
        b3 = ops._call_reshape(b_perm, (_prod(bsizes), ksize, _prod(nsizes)))
        r = ops._call_bmm(a3, b3)
    else:
        a2 = ops._call_reshape(a_perm, (_prod(msizes), ksize))
        r = ops._call_mm(a2, ops._call_reshape(b_perm, (ksize, _prod(nsizes))))
    return ops._call_reshape(r, bsizes + msizes + nsizes), batch + a_only + b_only


def einsum(equation: str, tensors: Any, path: Any) -> Any:
    operands = list(tensors)
    terms, out = _einsum_parse(equation, len(operands))
    labels, out_labels = _einsum_labels(terms, operands, out)
    ops_l = []
    for k, (t, labs) in enumerate(zip(operands, labels, strict=True)):
        ops_l.append(_einsum_diagonals(t, labs, k))
    # every label's size must broadcast across operands
    sizes: dict[Any, int] = {}
    for k, (t, labs) in enumerate(ops_l):
        for lab, s in zip(labs, _shape(t), strict=True):
            prev = sizes.get(lab)
            if prev is not None and prev != s and prev != 1 and s != 1:
                raise RuntimeError(
                    f"einsum(): subscript {_label_name(lab)} has size {s} for operand {k} which does not broadcast "
                    f"with previously seen size {prev}"
                )
            if prev is None or prev == 1:
                sizes[lab] = s
    out_set = set(out_labels)
    # sum out what only one operand has and the output does not need
    for k, (t, labs) in enumerate(ops_l):
        others = {lab for j, (_, lb) in enumerate(ops_l) if j != k for lab in lb}
        ops_l[k] = _sum_labels(t, labs, {lab for lab in labs if lab not in others and lab not in out_set})
    r, lr = ops_l[0]
    for k in range(1, len(ops_l)):
        later = out_set | {lab for _, lb in ops_l[k + 1 :] for lab in lb}
        b, lb = ops_l[k]
        r, lr = _sum_labels(r, lr, {lab for lab in lr if lab not in later and lab not in lb})
        b, lb = _sum_labels(b, lb, {lab for lab in lb if lab not in later and lab not in lr})
        r, lr = _contract(r, lr, b, lb, later)
    r, lr = _sum_labels(r, lr, {lab for lab in lr if lab not in out_set})
    r = ops._call_permute(r, tuple(lr.index(lab) for lab in out_labels))
    # a label seen only with size 1 in the result but larger elsewhere (only possible through
    # a summed-out partner) keeps the broadcast size
    target = tuple(sizes[lab] for lab in out_labels)
    if _shape(r) != target:
        r = ops._call_expand(r, target, False)
    return r
