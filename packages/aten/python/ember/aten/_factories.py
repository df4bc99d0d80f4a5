"""Tensors from Python data and NumPy, and the Tensor conversions that are not operators.

``tensor()`` copies nested sequences in C++ (``_C._tensor_from_data``) with
PyTorch's dtype inference (bool -> bool, int -> int64, float -> the default
dtype). ``from_numpy``/``Tensor.numpy()`` share memory: a tensor made from an
array keeps the array alive through its storage, and ``numpy()`` views the
storage's buffer with the tensor's strides.
"""

from __future__ import annotations

import builtins
import warnings
from typing import Any

import ember.c10py as _c10
from ember.c10py import StorageImpl, TensorImpl, cuda
from ember.c10py import device as _device_cls
from ember.c10py import dtype as _dtype_cls

from . import _C, _dtypes
from ._generated import _ops as ops
from ._tensor import Tensor, _meta_of, _set_requires_grad, _wrap


class layout:
    """Tensor layouts: ember has one, ``strided``."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"ember.aten.{self.name}"


strided = layout("strided")


def _is_ndarray(x: Any) -> bool:
    # np.ndarray or a subclass of it (np.memmap, np.matrix, ...): a GPT data loader reads
    # its tokens from an np.memmap. Checked by name so that this module needs no NumPy.
    return any(c.__module__ == "numpy" and c.__name__ == "ndarray" for c in type(x).__mro__)


def _to_device(d: Any) -> _device_cls | None:
    if d is None or isinstance(d, _device_cls):
        return d
    return _device_cls(d)


def tensor(
    data: Any,
    *,
    dtype: _dtype_cls | None = None,
    device: Any = None,
    requires_grad: builtins.bool = False,
    pin_memory: builtins.bool = False,
) -> Tensor:
    """A new tensor holding a copy of ``data`` (numbers, nested lists/tuples, NumPy arrays, tensors).

    >>> ember.aten.tensor([[1, 2], [3, 4]])
    tensor([[1, 2],
            [3, 4]])
    """
    dev = _to_device(device)
    if isinstance(data, Tensor):
        warnings.warn(
            "To copy construct from a tensor, it is recommended to use sourceTensor.clone().detach() rather than "
            "ember.aten.tensor(sourceTensor).",
            UserWarning,
            stacklevel=2,
        )
        out = data.detach().clone()
        if dtype is not None or dev is not None:
            out = out.to(device=dev, dtype=dtype)
    elif _is_ndarray(data):
        if data.dtype.kind == "V":
            raise TypeError("tensor(): structured NumPy arrays are not supported")
        out = from_numpy(data.copy()).clone()
        if dtype is not None or dev is not None:
            out = out.to(device=dev, dtype=dtype)
    else:
        if hasattr(data, "__array_interface__") and not isinstance(data, (list, tuple)):
            import numpy as np

            return tensor(
                np.asarray(data), dtype=dtype, device=device, requires_grad=requires_grad, pin_memory=pin_memory
            )
        out = _C._tensor_from_data(data, dtype, dev)
    if pin_memory:
        out = _pinned(out)
    if requires_grad:
        out.requires_grad_(True)
    return out


def _pinned(t: Tensor) -> Tensor:
    """``t`` in page-locked memory, for ``pin_memory=True``: PyTorch's errors for a tensor
    on a device and without CUDA (as the C++ factories, TensorFactories.cpp)."""

    if not t.is_cpu:
        raise RuntimeError("Only dense CPU tensors can be pinned")
    if not cuda.is_available():
        raise RuntimeError(
            "pin_memory=True requires a CUDA or other accelerator backend; "
            "no pinned memory allocator is available on this system."
        )
    return t.pin_memory()


def new_tensor(t: Tensor, data: Any, dtype: Any, device: Any, requires_grad: builtins.bool) -> Tensor:
    """Tensor.new_tensor: tensor(data) with t's dtype and device unless given."""
    return tensor(
        data,
        dtype=t.dtype if dtype is None else dtype,
        device=t.device if device is None else device,
        requires_grad=requires_grad,
    )


def as_tensor(data: Any, dtype: _dtype_cls | None = None, device: Any = None) -> Tensor:
    """Like tensor(), but shares memory with a Tensor or NumPy array when dtype and device allow."""
    dev = _to_device(device)
    if isinstance(data, Tensor):
        return data.to(device=dev, dtype=dtype) if (dtype is not None or dev is not None) else data
    if _is_ndarray(data):
        shareable = data.dtype.kind in "biuf" and data.dtype.byteorder in "=|<" and min(data.strides, default=0) >= 0
        t = from_numpy(data) if shareable else tensor(data)
        return t.to(device=dev, dtype=dtype) if (dtype is not None or dev is not None) else t
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array: Any) -> Tensor:
    """A tensor sharing ``array``'s memory (any non-negative strides; negative ones are PyTorch's ValueError)."""
    if not _is_ndarray(array):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    dt = _dtypes.from_numpy_dtype(array.dtype)
    if not array.dtype.isnative:
        raise ValueError("given numpy array has byte order different from the native byte order")
    itemsize = array.itemsize
    if any(s < 0 for s in array.strides):
        raise ValueError(
            "At least one stride in the given numpy array is negative, and tensors with negative strides are not "
            "currently supported. (You can probably work around this by making a copy of your array  with "
            "array.copy().) "
        )
    if any(s % itemsize for s in array.strides):
        raise ValueError(
            "given numpy array strides not a multiple of the element byte size. "
            "Copy the numpy array to reallocate the memory."
        )
    if not array.flags.writeable:
        warnings.warn(
            "The given NumPy array is not writable, and ember does not support non-writable tensors. This means "
            "writing to this tensor will result in undefined behavior. You may want to copy the array to protect "
            "its data or make it writable before converting it to a tensor.",
            UserWarning,
            stacklevel=2,
        )
    sizes = array.shape
    strides = tuple(s // itemsize for s in array.strides)
    extent = 1
    if array.size == 0:
        extent = 0
    else:
        for n, s in zip(sizes, strides, strict=True):
            extent += (n - 1) * s
    ptr = array.__array_interface__["data"][0]
    storage = _C._storage_from_pointer(ptr, extent * itemsize, array)
    impl = TensorImpl(storage, dt, sizes, strides, 0)
    return _wrap(impl)


def to_numpy(t: Tensor, *, force: builtins.bool = False) -> Any:
    import numpy as np

    if force:
        t = t.detach().cpu()
        if t.dtype == _dtypes.bfloat16:
            t = t.float()
    if t.device.type != "cpu":  # checked first, as in PyTorch
        raise TypeError(
            f"can't convert {t.device} device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host "
            "memory first."
        )
    if t.requires_grad:
        raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
    npd = _dtypes.to_numpy_dtype(t.dtype)
    impl = t._impl
    itemsize = impl.itemsize
    storage = impl.storage
    if impl.numel == 0:
        return np.empty(impl.sizes, dtype=npd)
    buf = np.frombuffer(memoryview(storage), dtype=np.uint8)
    return np.ndarray(
        impl.sizes,
        dtype=npd,
        buffer=buf,
        offset=impl.storage_offset * itemsize,
        strides=tuple(s * itemsize for s in impl.strides),
    )


def _parse_to(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any, builtins.bool, builtins.bool, Any]:
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    non_blocking = kwargs.pop("non_blocking", False)
    copy = kwargs.pop("copy", False)
    memory_format = kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    rest = list(args)
    if rest and isinstance(rest[0], Tensor):
        other = rest.pop(0)
        device, dtype = other.device, other.dtype
    elif rest and isinstance(rest[0], _dtype_cls):
        dtype = rest.pop(0)
    elif rest and (isinstance(rest[0], (str, _device_cls, int)) and not isinstance(rest[0], builtins.bool)):
        device = rest.pop(0)
        if rest and isinstance(rest[0], _dtype_cls):
            dtype = rest.pop(0)
    if rest:
        non_blocking = rest.pop(0)
    if rest:
        copy = rest.pop(0)
    if rest:
        raise TypeError("to() received an invalid combination of arguments")
    return _to_device(device), dtype, non_blocking, copy, memory_format


def tensor_to(t: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    device, dtype, non_blocking, copy, memory_format = _parse_to(args, dict(kwargs))
    if device is not None and device.type == "cuda" and device.index is None and t.is_cuda:
        # "cuda" is the current device (PyTorch's ensure_has_index): a tensor on another
        # GPU is copied there, not returned as it is.
        from ember.c10py import cuda as _c10_cuda

        device = _device_cls("cuda", _c10_cuda.current_device())
    same_device = device is None or (
        device.type == t.device.type and (device.index is None or device.index == t.device.index)
    )
    same_dtype = dtype is None or dtype == t.dtype
    if (
        same_device
        and same_dtype
        and not copy
        and (memory_format is None or t.is_contiguous(memory_format=memory_format))
    ):
        return t

    return ops._call__to_copy(t, dtype, None, device, None, non_blocking, memory_format)


_TYPE_NAMES = {
    "float32": "FloatTensor",
    "float64": "DoubleTensor",
    "float16": "HalfTensor",
    "bfloat16": "BFloat16Tensor",
    "int64": "LongTensor",
    "int32": "IntTensor",
    "int16": "ShortTensor",
    "int8": "CharTensor",
    "uint8": "ByteTensor",
    "bool": "BoolTensor",
}


def tensor_type(t: Tensor, dtype: Any, non_blocking: builtins.bool) -> Any:
    if dtype is None:
        prefix = "ember.aten.cuda." if t.is_cuda else "ember.aten."
        return prefix + _TYPE_NAMES[t.dtype._name]
    if isinstance(dtype, str):
        name = dtype.rsplit(".", 1)[-1]
        inverse = {v: k for k, v in _TYPE_NAMES.items()}
        if name not in inverse:
            raise ValueError(f"invalid type: '{dtype}'")
        dtype = getattr(_dtypes, inverse[name])
    return t.to(dtype=dtype, non_blocking=non_blocking)


def data_alias(t: Tensor) -> Tensor:
    impl = t._impl
    alias = TensorImpl(impl.storage, impl.dtype, impl.sizes, impl.strides, impl.storage_offset)
    return _wrap(alias)


def set_data(t: Tensor, value: Tensor) -> None:
    if not isinstance(value, Tensor):
        raise TypeError("data must be a Tensor")
    impl = value._impl
    _C._set_impl(t, TensorImpl(impl.storage, impl.dtype, impl.sizes, impl.strides, impl.storage_offset))
    if t.requires_grad:  # the new TensorImpl's key set has no Autograd key yet
        _set_requires_grad(t, True)


def reduce_tensor(t: Tensor) -> Any:
    # the bytes go through the host; a CUDA tensor comes back on its device, as in PyTorch
    src = t.detach().cpu().contiguous()
    data = src._impl.storage.tobytes()[src.storage_offset() * src.element_size() :][: src.nbytes]
    args: tuple[Any, ...] = (data, t.dtype._name, tuple(t.shape), t.requires_grad)
    if t.device.type != "cpu":
        args += (str(t.device),)
    return (_rebuild_tensor, args)


def _rebuild_tensor(
    data: bytes, dtype_name: str, shape: tuple[int, ...], requires_grad: builtins.bool, device: str | None = None
) -> Tensor:
    dt = getattr(_dtypes, dtype_name)
    storage = StorageImpl.from_bytes(data)

    strides = _c10.contiguous_strides(shape)
    out = _wrap(TensorImpl(storage, dt, shape, strides, 0))
    if device is not None and device != "cpu":
        out = out.to(device)
    if requires_grad:
        out.requires_grad_(True)
    return out


def deepcopy_tensor(t: Tensor, memo: dict[int, Any]) -> Tensor:
    if id(t) in memo:
        return memo[id(t)]
    out = t.detach().clone()
    if t.requires_grad:
        out.requires_grad_(True)
    if t.grad is not None:
        _meta_of(out).grad = deepcopy_tensor(t.grad, memo)
    if hasattr(t, "__dict__") and t.__dict__:
        import copy

        out.__dict__.update(copy.deepcopy(t.__dict__, memo))
    memo[id(t)] = out
    return out


def legacy_tensor_new(cls: type, *args: Any, **kwargs: Any) -> Tensor:
    device = kwargs.pop("device", None)
    if kwargs:
        raise TypeError(f"Tensor() got an unexpected keyword argument '{next(iter(kwargs))}'")

    if not args:
        return ops._call_empty_memory_format((0,), None, None, _to_device(device), None, None)
    if all(isinstance(a, builtins.int) and not isinstance(a, builtins.bool) for a in args):
        return ops._call_empty_memory_format(args, None, None, _to_device(device), None, None)
    if len(args) == 1:
        return tensor(args[0], dtype=_dtypes.get_default_dtype(), device=device)
    raise TypeError("Tensor(): expected sizes or one sequence of data")
