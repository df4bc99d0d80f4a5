"""Sparse COO tensors (PyTorch's ``layout=torch.sparse_coo``).

A sparse tensor is an ``ember.aten.Tensor`` whose ``layout`` is ``sparse_coo``: it holds an
int64 ``indices`` tensor (sparse_dim x nnz) and a ``values`` tensor (nnz x *dense_dims), and
has no strided storage of its own. Entries with equal indices add up (an *uncoalesced*
tensor); ``coalesce()`` sorts the indices and sums the duplicates.

How it plugs into the dispatcher. c10py has no SparseCPU/SparseCUDA keys, so a sparse tensor
carries the Python dispatch key beside its values' keys; the operators sparse tensors support
(mm, addmm, add, mul, t, sum, ...) have a kernel registered for that key (``_KERNELS`` below),
so ``ember.aten.mm(s, d)``, ``s @ d`` and ``s.mm(d)`` all arrive here. Every kernel is a
composite of dense aten operators on ``indices`` / ``values`` (index_select, index_add,
unique, ...), which is also how autograd works through sparse tensors: the dense ops record
their backward nodes as usual, so gradients reach the values (and through them the tensor the
values came from) and the dense operands. A sparse tensor's ``requires_grad`` and ``grad`` are
its values' (the gradient w.r.t. a sparse tensor is sparse with its indices, what
torch.sparse.mm gives).

An operator without a sparse kernel cannot silently read a sparse tensor as if it were dense:
a sparse tensor has no ``_impl`` (the TensorImpl every dense kernel reads), and asking for one
raises a RuntimeError naming the sparse layout.

When the Python key is on for the whole thread (ember.fx's capture), these kernels also see
calls without any sparse argument; they hand those on to the Python fallback (or below it).
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Sequence
from typing import Any

from ember.c10py import DispatchKey, DispatchKeySet

from . import _C, _dispatch
from ._factories import layout
from ._tensor import Size, Tensor

__all__ = ["SparseTensor", "sparse_coo", "sparse_coo_tensor"]

sparse_coo = layout("sparse_coo")

PYTHON_KEYS = DispatchKeySet(DispatchKey.Python).raw


def _ea() -> Any:
    # ember.aten's namespace, which ember/aten/__init__.py fills after importing this module
    import ember.aten as ea

    return ea


class SparseTensor(Tensor):
    """A sparse COO tensor: ``indices`` (int64, sparse_dim x nnz), ``values`` (nnz x *dense
    sizes) and ``size``. Made by :func:`sparse_coo_tensor` and ``Tensor.to_sparse()``."""

    # no TensorImpl: the dispatch keys are this slot's (values' keys | the Python key), which
    # shadows TensorBase's `_keys` (a dense tensor's TensorImpl key set)
    __slots__ = ("_coalesced", "_i", "_keys", "_sizes", "_v")

    _i: Tensor
    _v: Tensor
    _sizes: tuple[int, ...]
    _coalesced: bool

    def __new__(cls, *args: Any, **kwargs: Any) -> SparseTensor:
        raise TypeError("ember.aten.SparseTensor is made by ember.aten.sparse_coo_tensor(indices, values, size)")

    @property  # type: ignore[override]
    def _impl(self) -> Any:  # type: ignore[override]
        # what every dense kernel (and Tensor method written over the TensorImpl) reads
        raise RuntimeError(
            "this operation does not support sparse tensors (layout=sparse_coo): convert with .to_dense() first"
        )

    # ---- metadata -------------------------------------------------------------------
    @property
    def layout(self) -> Any:
        return sparse_coo

    @property
    def is_sparse(self) -> bool:
        return True

    @property
    def shape(self) -> Size:
        return Size(self._sizes)

    def size(self, dim: int | None = None) -> Any:
        if dim is None:
            return Size(self._sizes)
        return self._sizes[_wrap_dim(dim, len(self._sizes), "size")]

    @property
    def dtype(self) -> Any:
        return self._v.dtype

    @property
    def device(self) -> Any:
        return self._v.device

    @property
    def is_cuda(self) -> bool:
        return self._v.is_cuda

    @property
    def is_cpu(self) -> bool:
        return self._v.is_cpu

    @property
    def ndim(self) -> int:
        return len(self._sizes)

    def dim(self) -> int:
        return len(self._sizes)

    def ndimension(self) -> int:
        return len(self._sizes)

    def numel(self) -> int:
        return math.prod(self._sizes)

    def nelement(self) -> int:
        return math.prod(self._sizes)

    def __len__(self) -> int:
        if not self._sizes:
            raise TypeError("len() of a 0-d tensor")
        return self._sizes[0]

    def element_size(self) -> int:
        return self._v.element_size()

    def is_floating_point(self) -> bool:
        return self._v.is_floating_point()

    def is_complex(self) -> bool:
        return False

    def sparse_dim(self) -> int:
        return self._i.shape[0]

    def dense_dim(self) -> int:
        return self._v.dim() - 1

    def _nnz(self) -> int:
        return self._v.shape[0]

    def is_coalesced(self) -> bool:
        return self._coalesced

    def is_contiguous(self, memory_format: Any = None) -> bool:
        raise RuntimeError("is_contiguous: sparse tensors do not have is_contiguous")

    # ---- the parts ------------------------------------------------------------------
    def _indices(self) -> Tensor:
        return self._i

    def _values(self) -> Tensor:
        return self._v

    def indices(self) -> Tensor:
        if not self._coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call .coalesce() first")
        return self._i

    def values(self) -> Tensor:
        if not self._coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call .coalesce() first")
        return self._v

    # ---- autograd: the values' ------------------------------------------------------
    @property
    def requires_grad(self) -> bool:  # type: ignore[override]
        return self._v.requires_grad

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        self._v.requires_grad = flag

    def requires_grad_(self, requires_grad: bool = True) -> SparseTensor:
        self._v.requires_grad_(requires_grad)
        return self

    @property
    def is_leaf(self) -> bool:
        return self._v.is_leaf

    @property
    def grad_fn(self) -> Any:
        return self._v.grad_fn

    @property
    def grad(self) -> Any:  # type: ignore[override]
        g = self._v.grad
        return None if g is None else _make(self._i, g, self._sizes, self._coalesced)

    @grad.setter
    def grad(self, value: Any) -> None:
        if value is not None:
            raise RuntimeError("a sparse tensor's .grad can only be set to None (it is its values' gradient)")
        self._v.grad = None

    def backward(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("backward: the output is a sparse tensor; reduce it first (e.g. ember.aten.sparse.sum)")

    def detach(self) -> SparseTensor:
        return _make(self._i, self._v.detach(), self._sizes, self._coalesced)

    def detach_(self) -> SparseTensor:
        self._v = self._v.detach()
        return self

    # ---- in place (methods, not kernels: the generated in-place entry points bump the TensorImpl's
    # version counter, which a sparse tensor does not have) ---------------------------------
    def add_(self, other: Any, *, alpha: Any = 1) -> SparseTensor:
        if not isinstance(other, SparseTensor):
            raise _unsupported("add_", "adding a dense tensor into a sparse one in place")
        r = _sparse_add("add_", self, other, alpha)
        self._i, self._v, self._coalesced = r._i, r._v, False
        return self

    def sub_(self, other: Any, *, alpha: Any = 1) -> SparseTensor:
        return self.add_(other, alpha=-alpha)

    def mul_(self, other: Any) -> SparseTensor:
        c = _scalar_of(other)
        if c is None:
            raise _unsupported("mul_", "an in-place product with a non-scalar")
        self._v = self._v * c
        return self

    def div_(self, other: Any, *, rounding_mode: Any = None) -> SparseTensor:
        c = _scalar_of(other)
        if c is None:
            raise _unsupported("div_", "an in-place division by a non-scalar")
        self._v = self._v.div(c, rounding_mode=rounding_mode)
        return self

    def zero_(self) -> SparseTensor:
        ea = _ea()
        self._i = ea.zeros((self.sparse_dim(), 0), dtype=ea.int64, device=self._i.device)
        self._v = ea.zeros((0, *self._v.shape[1:]), dtype=self._v.dtype, device=self._v.device)
        self._coalesced = True
        return self

    def __iadd__(self, other: Any) -> SparseTensor:  # type: ignore[misc]
        return self.add_(other)

    def __imul__(self, other: Any) -> SparseTensor:  # type: ignore[misc]
        return self.mul_(other)

    # ---- conversions ----------------------------------------------------------------
    def to_dense(self, dtype: Any = None, *, masked_grad: bool | None = None) -> Tensor:
        v = self._v if dtype is None else self._v.to(dtype)
        sd = self.sparse_dim()
        dense_sizes = self._sizes[sd:]
        n = math.prod(self._sizes[:sd])
        ea = _ea()
        flat = ea.zeros((n, *dense_sizes), dtype=v.dtype, device=v.device)
        if self._nnz():
            flat = flat.index_add(0, _linear_index(self._i, self._sizes[:sd]), v)
        return flat.reshape(self._sizes)

    def to_sparse(self, sparse_dim: int | None = None, *, layout: Any = None) -> SparseTensor:
        if sparse_dim is not None and sparse_dim != self.sparse_dim():
            raise RuntimeError(
                f"to_sparse: conversion from Sparse to Sparse with sparse_dim argument != self.sparse_dim() "
                f"is not supported (got {sparse_dim}, tensor has {self.sparse_dim()})"
            )
        return self

    def coalesce(self) -> SparseTensor:
        if self._coalesced:
            return self
        sd = self.sparse_dim()
        if self._nnz() == 0:
            return _make(self._i, self._v, self._sizes, True)
        ea = _ea()
        lin = _linear_index(self._i, self._sizes[:sd])
        uniq, inverse = ea.unique(lin, sorted=True, return_inverse=True)
        values = ea.zeros((uniq.shape[0], *self._v.shape[1:]), dtype=self._v.dtype, device=self._v.device)
        values = values.index_add(0, inverse, self._v)
        return _make(_unravel(uniq, self._sizes[:sd]), values, self._sizes, True)

    def to(self, *args: Any, **kwargs: Any) -> SparseTensor:
        v = self._v.to(*args, **kwargs)
        i = self._i if v.device == self._i.device else self._i.to(v.device)
        return _make(i, v, self._sizes, self._coalesced)

    def cpu(self, memory_format: Any = None) -> SparseTensor:
        return self.to("cpu")

    def cuda(self, device: Any = None, non_blocking: bool = False, memory_format: Any = None) -> SparseTensor:
        return self.to("cuda" if device is None else device, non_blocking=non_blocking)

    def float(self, memory_format: Any = None) -> SparseTensor:
        return self.to(_ea().float32)

    def double(self, memory_format: Any = None) -> SparseTensor:
        return self.to(_ea().float64)

    def type_as(self, other: Any) -> SparseTensor:
        return self.to(other.dtype)

    def __repr__(self, *, tensor_contents: Any = None) -> str:  # type: ignore[override]
        pad = " " * len("tensor(indices=")
        ind = repr(self._i).replace("\n", "\n" + pad)
        pad = " " * len("       values=")
        val = repr(self._v).replace("\n", "\n" + pad)
        grad = ", requires_grad=True" if self.requires_grad else ""
        return (
            f"tensor(indices={ind},\n       values={val},\n       size={tuple(self._sizes)}, nnz={self._nnz()}, "
            f"layout=ember.aten.sparse_coo{grad})"
        )

    def __reduce_ex__(self, protocol: Any) -> Any:
        raise RuntimeError("ember cannot pickle sparse tensors yet: save t._indices() and t._values() instead")

    def __bool__(self) -> bool:
        raise RuntimeError("bool value of a sparse tensor is ambiguous: use .to_dense()")

    def __iter__(self) -> Any:
        raise RuntimeError("iterating over a sparse tensor is not supported: use .to_dense()")


# ---------------------------------------------------------------------------------------
# construction
# ---------------------------------------------------------------------------------------


def _make(indices: Tensor, values: Tensor, sizes: Sequence[int], coalesced: bool) -> SparseTensor:
    """A sparse tensor over `indices` / `values` (trusted: no checks)."""
    # a TensorBase subclass is made by _C (object.__new__ refuses it); then it holds no dense TensorImpl
    t = _C._wrap(values._impl, SparseTensor)
    _C._set_impl(t, None)
    t._i = indices
    t._v = values
    t._sizes = tuple(int(s) for s in sizes)
    t._coalesced = coalesced
    t._keys = values._keys | PYTHON_KEYS
    t._base = None
    t._meta = None
    return t


def sparse_coo_tensor(
    indices: Any,
    values: Any,
    size: Sequence[int] | None = None,
    *,
    dtype: Any = None,
    device: Any = None,
    pin_memory: bool | None = False,
    requires_grad: bool = False,
    check_invariants: bool | None = None,
    is_coalesced: bool | None = None,
) -> SparseTensor:
    """A sparse COO tensor with `values` at `indices` (PyTorch's torch.sparse_coo_tensor).

    ``indices`` (sparse_dim x nnz) is cast to int64; ``values`` has shape (nnz, *dense sizes);
    ``size`` defaults to the smallest that holds every index. Duplicate indices are kept (the
    result is uncoalesced unless ``is_coalesced=True``); out-of-range or negative indices raise.
    Differentiable w.r.t. ``values``."""
    ea = _ea()
    if not isinstance(indices, Tensor):
        indices = ea.tensor(indices, dtype=ea.int64, device=device)
    if not isinstance(values, Tensor):
        values = ea.tensor(values, dtype=dtype, device=device)
    if isinstance(indices, SparseTensor) or isinstance(values, SparseTensor):
        raise TypeError("sparse_coo_tensor: indices and values must be dense tensors")
    if indices.dtype is not ea.int64:
        if indices.is_floating_point() or indices.dtype is ea.bool:
            raise RuntimeError(f"indices must be an int64 tensor, but got {indices.dtype}")
        indices = indices.to(ea.int64)
    if dtype is not None and values.dtype is not dtype:
        values = values.to(dtype)
    if device is not None:
        indices, values = indices.to(device), values.to(device)
    elif indices.device != values.device:
        raise RuntimeError(f"device of indices ({indices.device}) must match device of values ({values.device})")
    if indices.dim() != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(indices.shape)}")
    if values.dim() == 0:
        values = values.reshape(1).expand(indices.shape[1])
    if indices.shape[1] != values.shape[0]:
        raise RuntimeError(
            f"indices and values must have same nnz, but got nnz from indices: {indices.shape[1]}, "
            f"nnz from values: {values.shape[0]}"
        )
    sd = indices.shape[0]
    nnz = indices.shape[1]
    maxes = indices.amax(1).tolist() if nnz else [-1] * sd
    if nnz:
        mins = indices.amin(1).tolist()
        for d, m in enumerate(mins):
            if m < 0:
                raise RuntimeError(f"found negative index {m} for dim {d}")
    if size is None:
        sizes = tuple(m + 1 for m in maxes) + tuple(values.shape[1:])
    else:
        sizes = tuple(int(s) for s in size)
        if len(sizes) != sd + values.dim() - 1:
            raise RuntimeError(
                f"number of dimensions must be sparse_dim ({sd}) + dense_dim ({values.dim() - 1}), but got {len(sizes)}"
            )
        for d, m in enumerate(maxes):
            if m >= sizes[d]:
                raise RuntimeError(
                    f"size is inconsistent with indices: for dim {d}, size is {sizes[d]} but found index {m}"
                )
        if tuple(values.shape[1:]) != sizes[sd:]:
            raise RuntimeError(f"values has incorrect size, expected {[nnz, *sizes[sd:]]}, got {list(values.shape)}")
    if requires_grad:
        values = values.detach().requires_grad_(True)  # a leaf of its own; the caller's tensor is left as it was
    coalesced = bool(is_coalesced) if is_coalesced is not None else nnz <= 1
    return _make(indices, values, sizes, coalesced)


def to_sparse(self: Tensor, sparse_dim: int | None = None, *, layout: Any = None) -> SparseTensor:
    """Tensor.to_sparse(): the non-zero entries of a dense tensor as a coalesced sparse tensor
    (with ``sparse_dim``, the leading dims are sparse and each entry is a dense slice)."""
    if layout is not None and layout is not sparse_coo:
        raise RuntimeError(f"to_sparse: ember supports layout=sparse_coo only, got {layout}")
    ea = _ea()
    nd = self.dim()
    sd = nd if sparse_dim is None else int(sparse_dim)
    if not 0 <= sd <= nd:
        raise RuntimeError(f"sparse_dim must be in [0, {nd}], but got {sd}")
    nz = self != 0
    if sd < nd:
        nz = nz.reshape(*self.shape[:sd], -1).any(-1) if sd else nz.reshape(1, -1).any(-1).reshape(())
    if sd == 0:
        indices = ea.zeros((0, 1), dtype=ea.int64, device=self.device)
        return _make(indices, self.unsqueeze(0), tuple(self.shape), True)
    indices = ea.nonzero(nz).t().contiguous()  # row-major order: already coalesced
    flat = self.reshape(math.prod(self.shape[:sd]), *self.shape[sd:])
    values = flat.index_select(0, _linear_index(indices, tuple(self.shape[:sd])))
    return _make(indices, values, tuple(self.shape), True)


def sparse_mask(self: Tensor, mask: Any) -> SparseTensor:
    """Tensor.sparse_mask(mask): self's entries at the indices of the sparse `mask` (coalesced), as a
    sparse tensor with mask's indices."""
    if isinstance(self, SparseTensor):
        raise _unsupported("sparse_mask", "a sparse self")
    if not isinstance(mask, SparseTensor):
        raise TypeError(f"sparse_mask: mask must be a sparse tensor, got {type(mask).__name__}")
    _check_same_size("sparse_mask", self, mask)
    mask = mask.coalesce()
    return _make(mask._i, _dense_at(self, mask), mask._sizes, True)


def _dense_to_dense(self: Tensor, dtype: Any = None, *, masked_grad: bool | None = None) -> Tensor:
    return self if dtype is None else self.to(dtype)


# ---------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------


def _wrap_dim(dim: int, ndim: int, op: str) -> int:
    if not -ndim <= dim < builtins.max(ndim, 1):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})")
    return dim + ndim if dim < 0 else dim


def _linear_index(indices: Tensor, sizes: Sequence[int]) -> Tensor:
    """Row-major linear position of each column of `indices` in a tensor of `sizes`."""
    lin = indices[len(sizes) - 1]
    stride = 1
    for d in range(len(sizes) - 2, -1, -1):
        stride *= sizes[d + 1]
        lin = lin + indices[d] * stride
    return lin


def _unravel(lin: Tensor, sizes: Sequence[int]) -> Tensor:
    """The inverse of _linear_index: (len(sizes) x n) indices."""
    ea = _ea()
    rows = []
    rest = lin
    for d in range(len(sizes) - 1, -1, -1):
        rows.append(ea.remainder(rest, sizes[d]))
        rest = ea.div(rest, sizes[d], rounding_mode="floor")
    rows.reverse()
    return ea.stack(rows) if rows else ea.zeros((0, lin.shape[0]), dtype=ea.int64, device=lin.device)


def _check_same_size(op: str, a: Any, b: Any) -> None:
    if tuple(a.shape) != tuple(b.shape):
        raise RuntimeError(
            f"{op}: expected 'self' and 'other' to have same size, but self has size {list(a.shape)} while other "
            f"has size {list(b.shape)} (FYI: dense-sparse addition does not currently support broadcasting)"
        )


def _dtype_name(dt: Any) -> str:
    return str(dt).rsplit(".", 1)[-1]


def _check_matrix(op: str, s: SparseTensor) -> None:
    if s.sparse_dim() != 2 or s.dense_dim() != 0:
        raise RuntimeError(
            f"{op}: expected a 2-D sparse matrix (sparse_dim=2, dense_dim=0), but got a tensor with sparse_dim="
            f"{s.sparse_dim()} and dense_dim={s.dense_dim()}"
        )


def _sparse_dense_mm(op: str, s: SparseTensor, d: Tensor) -> Tensor:
    """s @ d for a 2-D sparse s and a 2-D dense d: each stored entry (r, c, v) adds v * d[c] to row r."""
    _check_matrix(op, s)
    if isinstance(d, SparseTensor):
        raise NotImplementedError(f"{op}: sparse @ sparse is not supported by ember; convert one side with .to_dense()")
    if d.dim() != 2:
        raise RuntimeError(f"{op}: matrices expected, got {d.dim()}D tensor")
    n, m = s.shape
    if d.shape[0] != m:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({n}x{m} and {d.shape[0]}x{d.shape[1]})")
    if d.dtype is not s.dtype:
        raise RuntimeError(
            f"expected mat1 and mat2 to have the same dtype, but got: {_dtype_name(s.dtype)} != {_dtype_name(d.dtype)}"
        )
    if d.device != s.device:
        raise RuntimeError(f"{op}: expected mat1 and mat2 on the same device, but got {s.device} and {d.device}")
    ea = _ea()
    out = ea.zeros((n, d.shape[1]), dtype=d.dtype, device=d.device)
    rows, cols = s._i[0], s._i[1]
    return out.index_add(0, rows, s._v.unsqueeze(1) * d.index_select(0, cols))


def _dense_sparse_mm(op: str, d: Tensor, s: SparseTensor) -> Tensor:
    """d @ s as (s^T @ d^T)^T."""
    if d.dim() != 2:
        raise RuntimeError(f"{op}: matrices expected, got {d.dim()}D tensor")
    _check_matrix(op, s)
    if d.shape[1] != s.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({d.shape[0]}x{d.shape[1]} and {s.shape[0]}x{s.shape[1]})"
        )
    return _sparse_dense_mm(op, _transpose(s, 0, 1), d.t()).t()


def _transpose(s: SparseTensor, d0: int, d1: int) -> SparseTensor:
    nd = s.dim()
    d0, d1 = _wrap_dim(d0, nd, "transpose"), _wrap_dim(d1, nd, "transpose")
    sd = s.sparse_dim()
    sizes = list(s._sizes)
    sizes[d0], sizes[d1] = sizes[d1], sizes[d0]
    if d0 < sd and d1 < sd:
        perm = list(range(sd))
        perm[d0], perm[d1] = perm[d1], perm[d0]
        ea = _ea()
        indices = s._i.index_select(0, ea.tensor(perm, dtype=ea.int64, device=s._i.device))
        return _make(indices, s._v, sizes, d0 == d1 and s._coalesced)
    if d0 >= sd and d1 >= sd:
        return _make(s._i, s._v.transpose(d0 - sd + 1, d1 - sd + 1), sizes, s._coalesced)
    raise RuntimeError(
        f"transpose: can't transpose a sparse dimension with a dense one (sparse_dim={sd}, dims {d0} and {d1})"
    )


def _scalar_of(x: Any) -> Any:
    """x as a multiplier of values: a number, or a 0-dim dense tensor; None otherwise."""
    if isinstance(x, (builtins.int, builtins.float, builtins.bool)):
        return x
    if isinstance(x, Tensor) and not isinstance(x, SparseTensor) and x.dim() == 0:
        return x
    return None


def _dense_at(dense: Tensor, s: SparseTensor) -> Tensor:
    """The entries of dense (broadcast to s's shape) at s's indices: (nnz, *dense sizes)."""
    sd = s.sparse_dim()
    full = dense.broadcast_to(s._sizes)
    flat = full.reshape(math.prod(s._sizes[:sd]), *s._sizes[sd:])
    return flat.index_select(0, _linear_index(s._i, s._sizes[:sd]))


def _sparse_add(op: str, a: SparseTensor, b: SparseTensor, alpha: Any) -> SparseTensor:
    _check_same_size(op, a, b)
    if a.sparse_dim() != b.sparse_dim():
        raise RuntimeError(
            f"{op}: expected tensors with the same sparse_dim, but got {a.sparse_dim()} and {b.sparse_dim()}"
        )
    ea = _ea()
    bv = b._v if alpha == 1 else b._v * alpha
    return _make(ea.cat([a._i, b._i], 1), ea.cat([a._v, bv.to(a._v.dtype)]), a._sizes, False)


def _add_into_dense(dense: Tensor, s: SparseTensor, alpha: Any) -> Tensor:
    """dense + alpha * s (out of place, differentiable w.r.t. both)."""
    _check_same_size("add", dense, s)
    sd = s.sparse_dim()
    v = s._v if alpha == 1 else s._v * alpha
    flat = dense.reshape(math.prod(s._sizes[:sd]), *s._sizes[sd:])
    if s._nnz() == 0:
        return dense.clone()
    return flat.index_add(0, _linear_index(s._i, s._sizes[:sd]), v.to(dense.dtype)).reshape(s._sizes)


# ---------------------------------------------------------------------------------------
# the kernels (registered for the Python key)
# ---------------------------------------------------------------------------------------


def _pass_on(op: _dispatch.OpOverload, ks: int, args: tuple[Any, ...]) -> Any:
    """A call without sparse arguments (the Python key was on for the whole thread)."""
    fb = _dispatch.fallback_for(DispatchKey.Python)
    if fb is not None:
        return fb.fn(op, ks, *args)
    return op.redispatch(ks, *args)


def _unsupported(op: str, what: str) -> NotImplementedError:
    return NotImplementedError(f"{op}: {what} is not supported for sparse tensors (layout=sparse_coo) by ember")


def _k_mm(s: Any, d: Any) -> Any:
    if isinstance(s, SparseTensor):
        return _sparse_dense_mm("mm", s, d)
    return _dense_sparse_mm("mm", s, d)


def _k_addmm(inp: Any, m1: Any, m2: Any, beta: Any = 1, alpha: Any = 1) -> Any:
    if isinstance(inp, SparseTensor):
        raise _unsupported("addmm", "a sparse self (the added matrix)")
    prod = _k_mm(m1, m2)
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:
        return prod + _ea().zeros_like(inp)  # PyTorch ignores self's values (NaN included) when beta == 0
    return prod + (inp if beta == 1 else inp * beta)


def _k_matmul(a: Any, b: Any) -> Any:
    if isinstance(a, SparseTensor) and a.dim() == 2 and isinstance(b, Tensor) and b.dim() == 1:
        return _sparse_dense_mm("matmul", a, b.unsqueeze(1)).squeeze(1)
    if a.dim() == 2 and b.dim() == 2:
        return _k_mm(a, b)
    raise _unsupported("matmul", f"a {a.dim()}-D by {b.dim()}-D product")


def _k_mv(s: Any, v: Any) -> Any:
    if not isinstance(s, SparseTensor) or v.dim() != 1:
        raise _unsupported("mv", "a sparse vector")
    return _sparse_dense_mm("mv", s, v.unsqueeze(1)).squeeze(1)


def _k_mul(a: Any, b: Any) -> Any:
    if not isinstance(a, SparseTensor):
        a, b = b, a  # mul is commutative: the sparse one first
    if isinstance(b, SparseTensor):
        raise _unsupported("mul", "sparse * sparse")
    c = _scalar_of(b)
    if c is not None:
        return _make(a._i, a._v * c, a._sizes, a._coalesced)
    # sparse * dense keeps the sparsity pattern (PyTorch: the result is sparse)
    a = a.coalesce()
    return _make(a._i, a._v * _dense_at(b, a), a._sizes, True)


def _k_div(a: Any, b: Any, rounding_mode: Any = None) -> Any:
    c = _scalar_of(b)
    if not isinstance(a, SparseTensor) or c is None:
        raise _unsupported("div", "division other than a sparse tensor by a scalar")
    return _make(a._i, a._v.div(c, rounding_mode=rounding_mode), a._sizes, a._coalesced)


def _k_neg(a: Any) -> Any:
    return _make(a._i, -a._v, a._sizes, a._coalesced)


def _k_add(a: Any, b: Any, alpha: Any = 1) -> Any:
    if isinstance(a, SparseTensor) and isinstance(b, SparseTensor):
        return _sparse_add("add", a, b, alpha)
    if isinstance(b, SparseTensor):
        return _add_into_dense(a, b, alpha)
    if _scalar_of(b) is not None and not isinstance(b, Tensor):
        raise _unsupported("add", "adding a scalar to a sparse tensor (it would be dense)")
    # sparse + dense -> dense
    return _add_into_dense(b * alpha if alpha != 1 else b, a, 1)


def _k_sub(a: Any, b: Any, alpha: Any = 1) -> Any:
    if isinstance(b, SparseTensor):
        return _k_add(a, b, -alpha)
    return _k_add(a, -b, alpha)


def _k_add_(a: Any, b: Any, alpha: Any = 1) -> Any:
    """dense.add_(sparse): the stored entries added into the dense tensor (sparse.add_ is a method)."""
    if isinstance(a, SparseTensor):
        return a.add_(b, alpha=alpha)
    _check_same_size("add_", a, b)
    if b._nnz():
        sd = b.sparse_dim()
        v = b._v if alpha == 1 else b._v * alpha
        a.index_put_(tuple(b._i[d] for d in range(sd)), v.to(a.dtype), accumulate=True)
    return a


def _k_sum(a: Any, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Any:
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return a._v.sum(dtype=dtype)
    return sparse_sum(a, dim, keepdim=keepdim, dtype=dtype)


def _k_t(a: Any) -> Any:
    if a.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {a.dim()}D")
    return a if a.dim() < 2 else _transpose(a, 0, 1)


def _k_transpose(a: Any, d0: int, d1: int) -> Any:
    return _transpose(a, d0, d1)


def _k_clone(a: Any, memory_format: Any = None) -> Any:
    return _make(a._i.clone(), a._v.clone(), a._sizes, a._coalesced)


def _k_detach(a: Any) -> Any:
    return a.detach()


# aten operator -> its kernel for sparse arguments
_KERNELS: dict[str, Any] = {
    "mm": _k_mm,
    "addmm": _k_addmm,
    "matmul": _k_matmul,
    "mv": _k_mv,
    "mul.Tensor": _k_mul,
    "div.Tensor": _k_div,
    "neg": _k_neg,
    "add.Tensor": _k_add,
    "add_.Tensor": _k_add_,
    "sub.Tensor": _k_sub,
    "sum": _k_sum,
    "t": _k_t,
    "transpose.int": _k_transpose,
    "clone": _k_clone,
    "detach": _k_detach,
}


def _python_key_kernel(qualname: str, fn: Any) -> Any:
    op = _dispatch.find_op("aten::" + qualname)

    def kernel(ks: int, *args: Any) -> Any:
        for a in args:
            if a.__class__ is SparseTensor:
                return fn(*args)
        return _pass_on(op, ks, args)

    kernel.__name__ = kernel.__qualname__ = fn.__name__.replace("_k_", "sparse_")
    return kernel


def sparse_sum(s: Any, dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Any:
    """ember.aten.sparse.sum: the sum over `dim` (all dims when None). Summing every sparse dim
    gives a dense tensor; otherwise the result is sparse (coalesced)."""
    if not isinstance(s, SparseTensor):
        return s.sum(dim, keepdim=keepdim, dtype=dtype) if dim is not None else s.sum(dtype=dtype)
    if keepdim:
        raise _unsupported("sparse.sum", "keepdim=True")
    v = s._v if dtype is None else s._v.to(dtype)
    if dim is None:
        return v.sum()
    dims = [dim] if isinstance(dim, builtins.int) else list(dim)
    nd, sd = s.dim(), s.sparse_dim()
    dims = sorted({_wrap_dim(d, nd, "sum") for d in dims})
    sparse_red = [d for d in dims if d < sd]
    dense_red = [d - sd + 1 for d in dims if d >= sd]
    if dense_red:
        v = v.sum(dense_red)
    keep = [d for d in range(sd) if d not in sparse_red]
    sizes = [s._sizes[d] for d in range(nd) if d not in dims]
    if not keep:
        return v.sum(0)
    ea = _ea()
    indices = s._i.index_select(0, ea.tensor(keep, dtype=ea.int64, device=s._i.device))
    return _make(indices, v, sizes, False).coalesce()


def sparse_mm(mat1: Any, mat2: Any, reduce: str | None = None) -> Any:
    """ember.aten.sparse.mm: sparse @ dense -> dense (gradients reach mat2 and mat1's values)."""
    if reduce is not None and reduce != "sum":
        raise _unsupported("sparse.mm", f"reduce={reduce!r}")
    return _k_mm(mat1, mat2)


def sparse_addmm(inp: Any, mat1: Any, mat2: Any, *, beta: Any = 1, alpha: Any = 1) -> Any:
    return _k_addmm(inp, mat1, mat2, beta, alpha)


def spmm(mat1: Any, mat2: Any) -> Any:
    """ember.aten.spmm (PyTorch's torch.spmm): sparse @ dense."""
    return _k_mm(mat1, mat2)


def install(tensor_cls: type) -> None:
    """Registers the sparse kernels for the Python key and adds Tensor.to_sparse / to_dense
    (ember.aten imports sparse_coo_tensor / sparse_coo / spmm / SparseTensor, and ember/aten/sparse.py
    is torch.sparse: mm, sum, addmm)."""
    for qualname, fn in _KERNELS.items():
        _dispatch.register_kernel(
            "aten::" + qualname,
            DispatchKey.Python,
            _python_key_kernel(qualname, fn),
            with_keyset=True,
            name=f"ember.aten._sparse:{fn.__name__}",
            source=_dispatch.python_source(fn),
        )
    tensor_cls.to_sparse = to_sparse  # type: ignore[attr-defined]
    tensor_cls.to_sparse_coo = to_sparse  # type: ignore[attr-defined]
    tensor_cls.to_dense = _dense_to_dense  # type: ignore[attr-defined]
    tensor_cls.sparse_mask = sparse_mask  # type: ignore[attr-defined]
