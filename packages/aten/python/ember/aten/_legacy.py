"""PyTorch APIs older scripts still call: ember.aten imports the names, ``install`` adds the methods.

- The typed constructors ``FloatTensor``, ``LongTensor``, ... (and their
  ``cuda.FloatTensor`` twins): called with sizes they allocate, with data (a list, a
  NumPy array) they copy into their dtype; ``isinstance(t, ea.FloatTensor)`` asks
  whether ``t`` is a CPU float32 tensor, and ``t.type(ea.LongTensor)`` converts.
- ``Tensor.type_as(other)``, and ``Tensor.is_xpu`` / ``is_mps`` (always False: ember
  has neither device), which device-picking code probes.
- ``set_default_tensor_type``, the pre-``set_default_dtype`` spelling.
"""

from __future__ import annotations

import builtins
from typing import Any

from ember.c10py import device as _device_cls

from . import _dtypes
from ._factories import _TYPE_NAMES, _to_device, tensor
from ._generated import _ops as ops
from ._tensor import Tensor


class _LegacyTensorType(type):
    """The metaclass of FloatTensor & co.: isinstance checks dtype and device type."""

    dtype: Any
    is_cuda: builtins.bool

    def __instancecheck__(cls, obj: Any) -> builtins.bool:
        return (
            isinstance(obj, Tensor) and obj.dtype == cls.dtype and obj.device.type == ("cuda" if cls.is_cuda else "cpu")
        )

    def __call__(cls, *args: Any, device: Any = None) -> Tensor:  # type: ignore[override]
        name = cls.__qualname__
        dev = _to_device(device)
        if cls.is_cuda:
            if dev is not None and dev.type != "cuda":
                raise RuntimeError(f"{name}(): expected a cuda device, but got: {dev}")
            dev = dev or _device_cls("cuda")
        elif dev is not None and dev.type != "cpu":
            raise RuntimeError(f"{name}(): expected a cpu device, but got: {dev}")
        dtype = cls.dtype
        if not args:
            return ops._call_empty_memory_format((0,), dtype, None, dev, None, None)
        # Sizes: FloatTensor(2, 3) or FloatTensor(ea.Size([2, 3])); a tuple or list is data.
        from ._tensor import Size

        sizes = tuple(args[0]) if len(args) == 1 and isinstance(args[0], Size) else args
        if all(isinstance(a, builtins.int) and not isinstance(a, builtins.bool) for a in sizes):
            for a in sizes:
                if a < 0:
                    raise RuntimeError(f"{name}(): Trying to create tensor with negative dimension {a}: {list(sizes)}")
            return ops._call_empty_memory_format(tuple(sizes), dtype, None, dev, None, None)
        if len(args) != 1:
            raise TypeError(f"{name}(): expected sizes (ints) or one sequence of data, got {len(args)} arguments")
        data = args[0]
        if isinstance(data, Tensor):
            # A tensor of this very type is returned as an alias (PyTorch's legacy rule).
            if data.dtype != dtype:
                raise TypeError(f"{name}(): expected a tensor of dtype {dtype} (got {data.dtype})")
            return data.detach()  # type: ignore[attr-defined]
        if isinstance(data, (str, bytes)):
            raise TypeError(f"{name}(): new(): invalid data type '{type(data).__name__}'")
        return tensor(data, dtype=dtype, device=dev)


def _typed_constructor(name: str, dtype: Any, is_cuda: builtins.bool) -> type:
    module = "ember.aten.cuda" if is_cuda else "ember.aten"
    doc = (
        f"{name}(*sizes) / {name}(data): a {'CUDA ' if is_cuda else ''}{dtype} tensor "
        f"(PyTorch's legacy typed constructor). ``isinstance(t, {name})`` checks dtype and device."
    )
    cls = _LegacyTensorType(name, (), {"__module__": module, "__doc__": doc, "dtype": dtype, "is_cuda": is_cuda})
    return cls


def _type(original: Any) -> Any:
    def type(self: Tensor, dtype: Any = None, non_blocking: builtins.bool = False, **kwargs: Any) -> Any:
        """type(dtype=None, non_blocking=False): the type name, or self converted to ``dtype``
        (a dtype, a name like ``"ember.aten.LongTensor"``, or a typed constructor)."""
        if isinstance(dtype, _LegacyTensorType):
            dev = _device_cls("cuda") if dtype.is_cuda and not self.is_cuda else None
            if not dtype.is_cuda and self.is_cuda:
                dev = _device_cls("cpu")
            if self.dtype == dtype.dtype and dev is None:
                return self
            return self.to(device=dev, dtype=dtype.dtype, non_blocking=non_blocking)
        return original(self, dtype, non_blocking, **kwargs)

    return type


def type_as(self: Tensor, other: Tensor) -> Tensor:
    """type_as(other) -> Tensor: self with other's dtype and device (self itself when they match)."""
    if not isinstance(other, Tensor):
        raise TypeError(f"type_as(): argument 'other' (position 1) must be Tensor, not {type(other).__name__}")
    if self.dtype == other.dtype and self.device == other.device:
        return self
    return self.to(device=other.device, dtype=other.dtype)


def _constructors(is_cuda: builtins.bool) -> dict[str, Any]:
    return {
        cls_name: _typed_constructor(cls_name, getattr(_dtypes, dtype_name), is_cuda)
        for dtype_name, cls_name in _TYPE_NAMES.items()
    }


# ember.aten.FloatTensor, ... (imported by ember/aten/__init__.py) and ember.aten.cuda.FloatTensor, ...
# (imported by ember/aten/cuda/__init__.py); _TYPE_NAMES lists the ten, tests/aten/test_legacy_api.py
# checks both lists.
_CPU = _constructors(False)
CUDA_CONSTRUCTORS = _constructors(True)
FloatTensor = _CPU["FloatTensor"]
DoubleTensor = _CPU["DoubleTensor"]
HalfTensor = _CPU["HalfTensor"]
BFloat16Tensor = _CPU["BFloat16Tensor"]
LongTensor = _CPU["LongTensor"]
IntTensor = _CPU["IntTensor"]
ShortTensor = _CPU["ShortTensor"]
CharTensor = _CPU["CharTensor"]
ByteTensor = _CPU["ByteTensor"]
BoolTensor = _CPU["BoolTensor"]


def set_default_tensor_type(t: Any) -> None:
    """set_default_tensor_type(FloatTensor | DoubleTensor | name): the default floating dtype.

    Deprecated in PyTorch in favour of ``set_default_dtype``; ember has no default
    device, so a CUDA type is refused."""
    if isinstance(t, str):
        key = t.rsplit(".", 1)[-1]
        if key not in _CPU or ".cuda." in t:
            raise TypeError(f"set_default_tensor_type(): invalid type string: {t!r}")
        t = _CPU[key]
    if not isinstance(t, _LegacyTensorType):
        raise TypeError(f"set_default_tensor_type(): expected a tensor type, got {type(t).__name__}")
    if t.is_cuda:
        raise TypeError("set_default_tensor_type(): ember has no default device: use .to('cuda') instead")
    _dtypes.set_default_dtype(t.dtype)


def install() -> None:
    """Adds the Tensor methods above to Tensor."""
    Tensor.type_as = type_as  # type: ignore[attr-defined]
    Tensor.type = _type(Tensor.type)  # type: ignore[method-assign]
    Tensor.is_xpu = property(lambda self: False, doc="False: ember has no XPU device.")  # type: ignore[attr-defined]
    if "is_mps" not in Tensor.__dict__:
        Tensor.is_mps = property(lambda self: False, doc="False: ember has no MPS device.")  # type: ignore[attr-defined]
