"""Composite kernels of the shape family: views built on the primitive views, the
reshape family, splits, joins over cat, and transformations over flip / repeat / diag.

Each function takes its schema's arguments positionally (int lists arrive as
tuples) and calls other operators through their dispatcher entries, so the result
is the same on every backend and autograd follows the operators it calls. Views
returned by these functions get ``_base`` from the operators they call.
"""

from __future__ import annotations

import operator
from typing import Any

import ember.c10py as _c10
from ember.aten import _memory_format as _mf
from ember.aten._generated import _ops as ops

_wrap = _c10.maybe_wrap_dim


def _prod(xs: Any) -> int:
    n = 1
    for x in xs:
        n *= x
    return n


# ---- views ----------------------------------------------------------------------------


def view_as(self: Any, other: Any) -> Any:
    return ops._call_view(self, other.shape)


def reshape(self: Any, shape: Any) -> Any:
    """A view when the strides allow one (PyTorch's computeStride), else a contiguous copy."""
    try:
        return ops._call_view(self, shape)
    except RuntimeError:
        if self._impl.is_contiguous:
            raise  # the shape itself is invalid
    # a copy, then a view of it that is not a view of `self` (no _base)
    return ops._call__unsafe_view(ops._call_clone(self, _mf.contiguous_format), shape)


def reshape_as(self: Any, other: Any) -> Any:
    return reshape(self, tuple(other.shape))


def flatten_using_ints(self: Any, start_dim: int, end_dim: int) -> Any:
    nd = self.dim()
    start = _wrap(start_dim, nd)
    end = _wrap(end_dim, nd)
    if nd == 0:
        return reshape(self, (1,))
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return self
    sizes = tuple(self.shape)
    return reshape(self, (*sizes[:start], _prod(sizes[start : end + 1]), *sizes[end + 1 :]))


def unflatten_int(self: Any, dim: int, sizes: Any) -> Any:
    d = _wrap(dim, self.dim())
    sizes = tuple(sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    n = self.shape[d] if self.dim() else 1
    inferred = [i for i, s in enumerate(sizes) if s == -1]
    if len(inferred) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = _prod(s for s in sizes if s != -1)
    if inferred and known != 0 and n % known == 0:
        sizes = (*sizes[: inferred[0]], n // known, *sizes[inferred[0] + 1 :])
    elif inferred or known != n:
        raise RuntimeError(
            f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {dim} ({n}) in the input "
            "tensor"
        )
    shape = tuple(self.shape)
    return ops._call_view(self, shape[:d] + sizes + shape[d + 1 :])


def swapaxes(self: Any, axis0: int, axis1: int) -> Any:
    return ops._call_transpose_int(self, axis0, axis1)


def swapdims(self: Any, dim0: int, dim1: int) -> Any:
    return ops._call_transpose_int(self, dim0, dim1)


def movedim_intlist(self: Any, source: Any, destination: Any) -> Any:
    nd = self.dim()
    if len(source) != len(destination):
        raise RuntimeError(
            f"movedim: Invalid source or destination dims: source ({list(source)} dims) should contain the same "
            f"number of dims as destination ({list(destination)} dims)"
        )
    src = [_wrap(d, nd) for d in source]
    dst = [_wrap(d, nd) for d in destination]
    if len(set(src)) != len(src):
        raise RuntimeError(f"movedim: repeated dim in `source` ({list(source)})")
    if len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({list(destination)})")
    if nd == 0:
        return ops._call_permute(self, ())
    perm = [-1] * nd
    for s, d in zip(src, dst, strict=True):
        perm[d] = s
    rest = iter(i for i in range(nd) if i not in src)
    perm = [p if p >= 0 else next(rest) for p in perm]
    return ops._call_permute(self, tuple(perm))


def moveaxis_intlist(self: Any, source: Any, destination: Any) -> Any:
    return movedim_intlist(self, source, destination)


def expand_as(self: Any, other: Any) -> Any:
    return ops._call_expand(self, tuple(other.shape), False)


def broadcast_to(self: Any, size: Any) -> Any:
    return ops._call_expand(self, size, False)


def _broadcast_shape(shapes: list[tuple[int, ...]]) -> tuple[int, ...]:
    out: list[int] = []
    for shape in shapes:
        n = max(len(out), len(shape))
        a = [1] * (n - len(out)) + out
        b = [1] * (n - len(shape)) + list(shape)
        for i in range(n):
            if a[i] != b[i] and a[i] != 1 and b[i] != 1:
                raise RuntimeError(
                    f"The size of tensor a ({a[i]}) must match the size of tensor b ({b[i]}) at non-singleton "
                    f"dimension {i}"
                )
            a[i] = b[i] if a[i] == 1 else a[i]
        out = a
    return tuple(out)


def broadcast_tensors(tensors: Any) -> Any:
    shape = _broadcast_shape([tuple(t.shape) for t in tensors])
    return tuple(ops._call_expand(t, shape, False) for t in tensors)


def narrow(self: Any, dim: int, start: Any, length: int) -> Any:
    if hasattr(start, "_impl"):
        if start.dim() != 0 or start.dtype.is_floating_point or start.dtype._name == "bool":
            raise RuntimeError("start must be an 0-dim integral Tensor.")
        start = start.item()
    start = operator.index(start)
    length = operator.index(length)
    if self.dim() == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = _wrap(dim, self.dim())
    n = self.shape[d]
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got {start})")
    if start < 0:
        start += n
    if start > n - length:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return ops._call_slice_Tensor(self, d, start, start + length, 1)


# ---- splits -----------------------------------------------------------------------------


def _pieces(self: Any, d: int, sizes: Any) -> tuple[Any, ...]:
    out = []
    start = 0
    for s in sizes:
        out.append(ops._call_slice_Tensor(self, d, start, start + s, 1))
        start += s
    return tuple(out)


def split_Tensor(self: Any, split_size: int, dim: int) -> Any:
    if self.dim() == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    if split_size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={split_size}")
    d = _wrap(dim, self.dim())
    n = self.shape[d]
    if split_size == 0 and n != 0:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
    if split_size == 0:
        return _pieces(self, d, [0])
    num = max((n + split_size - 1) // split_size, 1)
    return _pieces(self, d, [split_size] * (num - 1) + [n - split_size * (num - 1)])


def split_with_sizes(self: Any, split_sizes: Any, dim: int) -> Any:
    if self.dim() == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = _wrap(dim, self.dim())
    n = self.shape[d]
    sizes = [operator.index(s) for s in split_sizes]
    if any(s < 0 for s in sizes):
        raise RuntimeError(
            f"split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes={sizes}"
        )
    if sum(sizes) != n:
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at dimension {d}), "
            f"but got split_sizes={sizes}"
        )
    return _pieces(self, d, sizes)


def split_sizes(self: Any, split_size: Any, dim: int) -> Any:
    return ops._call_split_with_sizes(self, split_size, dim)


def chunk(self: Any, chunks: int, dim: int) -> Any:
    if self.dim() == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = _wrap(dim, self.dim())
    n = self.shape[d]
    split_size = (n + chunks - 1) // chunks
    if split_size == 0 and n == 0:
        return _pieces(self, d, [0] * chunks)
    return ops._call_split_Tensor(self, split_size, d)


def tensor_split_sections(self: Any, sections: int, dim: int) -> Any:
    if self.dim() == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    if sections <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
    d = _wrap(dim, self.dim())
    n = self.shape[d]
    small, extra = divmod(n, sections)
    return _pieces(self, d, [small + 1] * extra + [small] * (sections - extra))


def tensor_split_indices(self: Any, indices: Any, dim: int) -> Any:
    if self.dim() == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    d = _wrap(dim, self.dim())
    out = []
    start = 0
    for idx in indices:
        out.append(ops._call_slice_Tensor(self, d, start, idx, 1))
        start = idx
    out.append(ops._call_slice_Tensor(self, d, start, None, 1))
    return tuple(out)


def tensor_split_tensor_indices_or_sections(self: Any, tensor_indices_or_sections: Any, dim: int) -> Any:
    t = tensor_indices_or_sections
    if t.device.type != "cpu":
        raise RuntimeError(
            f"tensor_split expected tensor_indices_or_sections to be on cpu, but it's on {t.device.type}"
        )
    if t.dtype._name != "int64":
        raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have dtype of long, but got {t.dtype}")
    if t.dim() == 0:
        return tensor_split_sections(self, t.item(), dim)
    if t.dim() == 1:
        return tensor_split_indices(self, t.tolist(), dim)
    raise RuntimeError(
        "tensor_split expected tensor_indices_or_sections to be a zero-dimensional or one-dimensional tensor, but "
        f"got a tensor with {t.dim()} dims"
    )


def contiguous(self: Any, memory_format: Any) -> Any:
    if memory_format == _mf.preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    if self.is_contiguous(memory_format=memory_format):
        return self
    return ops._call_clone(self, memory_format)


# ---- joins --------------------------------------------------------------------------------


def concat(tensors: Any, dim: int) -> Any:
    return ops._call_cat(tensors, dim)


def concat_out(tensors: Any, dim: int, out: Any) -> Any:
    return ops._call_cat_out(tensors, dim, out)


def concatenate(tensors: Any, dim: int) -> Any:
    return ops._call_cat(tensors, dim)


def concatenate_out(tensors: Any, dim: int, out: Any) -> Any:
    return ops._call_cat_out(tensors, dim, out)


def _atleast(t: Any, n: int) -> Any:
    """t with at least n dims, as atleast_1d/2d/3d (a 1-d v becomes (1, len) then (1, len, 1))."""
    nd = t.dim()
    if nd >= n:
        return t
    if nd == 0:
        return ops._call_view(t, (1,) * n)
    if nd == 1:
        t = ops._call_unsqueeze(t, 0)
        return ops._call_unsqueeze(t, -1) if n == 3 else t
    return ops._call_unsqueeze(t, -1)  # 2-d, n == 3


def _nonempty(tensors: Any, name: str) -> None:
    if len(tensors) == 0:
        raise RuntimeError(f"{name} expects a non-empty TensorList")


def _hstack_parts(tensors: Any) -> tuple[list[Any], int]:
    _nonempty(tensors, "hstack")
    parts = [_atleast(t, 1) for t in tensors]
    return parts, 0 if parts[0].dim() == 1 else 1


def hstack(tensors: Any) -> Any:
    parts, d = _hstack_parts(tensors)
    return ops._call_cat(parts, d)


def hstack_out(tensors: Any, out: Any) -> Any:
    parts, d = _hstack_parts(tensors)
    return ops._call_cat_out(parts, d, out)


def vstack(tensors: Any) -> Any:
    _nonempty(tensors, "vstack")
    return ops._call_cat([_atleast(t, 2) for t in tensors], 0)


def vstack_out(tensors: Any, out: Any) -> Any:
    _nonempty(tensors, "vstack")
    return ops._call_cat_out([_atleast(t, 2) for t in tensors], 0, out)


def row_stack(tensors: Any) -> Any:
    return vstack(tensors)


def row_stack_out(tensors: Any, out: Any) -> Any:
    return vstack_out(tensors, out)


def dstack(tensors: Any) -> Any:
    _nonempty(tensors, "dstack")
    return ops._call_cat([_atleast(t, 3) for t in tensors], 2)


def dstack_out(tensors: Any, out: Any) -> Any:
    _nonempty(tensors, "dstack")
    return ops._call_cat_out([_atleast(t, 3) for t in tensors], 2, out)


def _columns(tensors: Any) -> list[Any]:
    _nonempty(tensors, "column_stack")
    return [reshape(t, (t.numel(), 1)) if t.dim() <= 1 else t for t in tensors]


def column_stack(tensors: Any) -> Any:
    return ops._call_cat(_columns(tensors), 1)


def column_stack_out(tensors: Any, out: Any) -> Any:
    return ops._call_cat_out(_columns(tensors), 1, out)


def meshgrid_indexing(tensors: Any, indexing: str) -> Any:
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    for t in tensors[1:]:
        if t.dtype != tensors[0].dtype:
            raise RuntimeError("torch.meshgrid: Expected all tensors in the tensor list to have the same dtype")
        if t.device != tensors[0].device:
            raise RuntimeError("torch.meshgrid: Expected all tensors in the tensor list to have the same device")
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    # xy is ij with the first two inputs (and outputs) swapped
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        tensors[0], tensors[1] = tensors[1], tensors[0]
    shape = tuple(t.numel() for t in tensors)
    n = len(tensors)
    grids = []
    for i, t in enumerate(tensors):
        view_shape = (1,) * i + (-1,) + (1,) * (n - i - 1)
        grids.append(ops._call_expand(reshape(t, view_shape), shape, False))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def meshgrid(tensors: Any) -> Any:
    return meshgrid_indexing(tensors, "ij")


def cartesian_prod(tensors: Any) -> Any:
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid_indexing(tensors, "ij")
    return ops._call_stack([reshape(g, (-1,)) for g in grids], 1)


# ---- transformations -------------------------------------------------------------------------


def tile(self: Any, dims: Any) -> Any:
    dims = tuple(dims)
    if len(dims) < self.dim():
        dims = (1,) * (self.dim() - len(dims)) + dims
    return ops._call_repeat(self, dims)


def fliplr(self: Any) -> Any:
    if self.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return ops._call_flip(self, (1,))


def flipud(self: Any) -> Any:
    if self.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return ops._call_flip(self, (0,))


def rot90(self: Any, k: int, dims: Any) -> Any:
    nd = self.dim()
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if nd < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {nd}")
    d0, d1 = dims
    if d0 == d1 or abs(d0 - d1) == nd:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    if not -nd <= d0 < nd:
        raise RuntimeError(f"Rotation dim0 out of range, dim0 = {d0}")
    if not -nd <= d1 < nd:
        raise RuntimeError(f"Rotation dim1 out of range, dim1 = {d1}")
    k %= 4
    if k == 1:  # counter-clockwise: reverse the columns, then swap the axes
        return ops._call_transpose_int(ops._call_flip(self, (d1,)), d0, d1)
    if k == 2:
        return ops._call_flip(self, (d0, d1))
    if k == 3:
        return ops._call_transpose_int(ops._call_flip(self, (d0,)), d0, d1)
    return ops._call_clone(self, _mf.contiguous_format)


def diagflat(self: Any, offset: int) -> Any:
    return ops._call_diag(reshape(self, (-1,)), offset)
