"""ember.aten.Tensor: the tensor users hold.

A Tensor *is* the handle of one c10 ``TensorImpl``, as PyTorch's THPVariable: its
native base ``_C.TensorBase`` (csrc/python_glue/casters.cpp) holds the TensorImpl
reference, and the C++ entries read the key set and the version counter straight from
it. ``_impl`` (the c10py TensorImpl object) and ``_keys`` (the raw key bits) are
read-only views of that one TensorImpl -- the key set is changed with
``_C._add_keys`` / ``_C._remove_keys``, never kept twice; ``_base`` is the tensor a view
was made from; ``_meta`` holds the autograd state (None until a tensor requires grad --
PyTorch's AutogradMeta), which ember.autograd fills. Operator methods (``add``, ``sum``, ...) are
generated from native_functions.yaml and attached in ``ember/aten/__init__.py``;
this file holds what is not an operator: properties, conversions, Python
protocols and the operator dunders.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, SupportsIndex

from ember.c10py import DispatchKey, DispatchKeySet, TensorImpl
from ember.c10py import device as _device_cls
from ember.c10py import dtype as _dtype_cls

from . import _C
from ._typing import TensorStubs


class AutogradMeta:
    """Autograd state of one tensor (filled by ember.autograd).

    The fields every recorded output sets are slots; the rarely used ones (hooks, retains_grad,
    name, the leaf's AccumulateGrad) are class-level defaults, written into the instance
    ``__dict__`` on first use -- a recorded op creates one of these per output."""

    __slots__ = ("__dict__", "grad", "grad_fn", "output_nr", "requires_grad", "view_info")

    hooks: dict[int, Any] | None = None  # hook id -> hook, in registration order
    post_accumulate_hooks: dict[int, Any] | None = None
    retains_grad: bool = False
    name: str | None = None
    grad_accumulator: Any = None  # weak reference to the leaf's AccumulateGrad node

    def __init__(self, requires_grad: bool = False, grad_fn: Any = None) -> None:
        self.requires_grad = requires_grad
        self.grad: Tensor | None = None
        self.grad_fn = grad_fn
        self.output_nr = 0
        self.view_info: Any = None


_NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't be "
    "populated during autograd.backward(). If you indeed want the .grad field to be populated for a non-leaf "
    "Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure "
    "you access the leaf Tensor instead."
)


class Size(tuple):
    """The shape of a tensor: a tuple of ints that prints as ``ember.aten.Size([2, 3])``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"ember.aten.Size({list(self)})"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, i: Any) -> Any:  # type: ignore[override]
        r = tuple.__getitem__(self, i)
        return Size(r) if isinstance(i, slice) else r

    def __add__(self, other: Any) -> Size:  # type: ignore[override]
        return Size(tuple(self) + tuple(other))


# Hooks the autograd layer installs (see ember.autograd).
_autograd_hooks: dict[str, Any] = {}


def _autograd(name: str) -> Any:
    fn = _autograd_hooks.get(name)
    if fn is None:
        raise RuntimeError(
            f"Tensor.{name}() needs the autograd layer: install ember-autograd (pip install ember-autograd)"
        )
    return fn


class Tensor(TensorStubs):
    # TensorStubs is _C.TensorBase at run time: the slots (_impl, _keys, _base, _meta, __dict__,
    # __weakref__) and dtype, ndim, dim(), numel(), is_cuda, _version are its, in C++
    __slots__ = ()

    _impl: TensorImpl
    _keys: int
    _base: Tensor | None
    _meta: AutogradMeta | None

    # Higher than NumPy's, so ndarray <op> Tensor defers to the Tensor.
    __array_priority__ = 1000

    def __new__(cls, *args: Any, **kwargs: Any) -> Tensor:
        # Legacy constructor: Tensor([1, 2]) / Tensor(2, 3) -> default-dtype tensor.
        from . import _factories

        return _factories.legacy_tensor_new(cls, *args, **kwargs)

    # ---- identity and basic metadata -------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._impl.sizes)

    def size(self, dim: int | None = None) -> Any:
        if dim is None:
            return Size(self._impl.sizes)
        return self._impl.size(_index(dim))

    def stride(self, dim: int | None = None) -> Any:
        if dim is None:
            return self._impl.strides
        return self._impl.stride(_index(dim))

    @property
    def device(self) -> _device_cls:
        d = self._impl.device
        if d.type == "cuda" and d.index is None:
            return _device_cls("cuda", 0)
        return d

    def storage_offset(self) -> int:
        return self._impl.storage_offset

    def is_contiguous(self, memory_format: Any = None) -> bool:
        if memory_format is None or memory_format == _C.memory_format.contiguous_format:
            return self._impl.is_contiguous
        from . import _ops_helpers

        return _ops_helpers.is_contiguous_format(self, memory_format)

    def data_ptr(self) -> int:
        return self._impl.data_ptr

    def element_size(self) -> int:
        return self._impl.itemsize

    @property
    def itemsize(self) -> int:
        return self._impl.itemsize

    @property
    def nbytes(self) -> int:
        return self._impl.nbytes

    @property
    def is_cpu(self) -> bool:
        return self._impl.device.type == "cpu"

    @property
    def layout(self) -> Any:
        from . import _factories

        return _factories.strided

    @property
    def is_sparse(self) -> bool:
        return False

    @property
    def is_quantized(self) -> bool:
        return False

    @property
    def is_meta(self) -> bool:
        return False

    def is_floating_point(self) -> bool:
        return self._impl.dtype.is_floating_point

    def is_complex(self) -> bool:
        return False

    def is_signed(self) -> bool:
        return self._impl.dtype.is_signed

    def untyped_storage(self) -> Any:
        return self._impl.storage

    def _is_view(self) -> bool:
        return self._base is not None

    def get_device(self) -> int:
        index = self.device.index if self.is_cuda else -1
        assert index is not None, "a CUDA tensor's device has an index"
        return index

    # ---- autograd slots (ember.autograd fills them) --------------------------------
    @property
    def requires_grad(self) -> bool:
        m = self._meta
        return m is not None and m.requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self.requires_grad_(bool(value))

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        hook = _autograd_hooks.get("requires_grad_")
        if hook is not None:
            hook(self, requires_grad)
            return self
        _set_requires_grad(self, requires_grad)
        return self

    @property
    def grad(self) -> Tensor | None:
        m = self._meta
        if m is None:
            return None
        g = m.grad
        if g is None and m.requires_grad and not m.retains_grad and self.grad_fn is not None:
            import warnings

            warnings.warn(_NON_LEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return g

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        hook = _autograd_hooks.get("set_grad")
        if hook is not None:
            hook(self, value)
            return
        if value is not None:
            _check_grad_assignable(self, value)
        _meta_of(self).grad = value

    @grad.deleter
    def grad(self) -> None:
        if self._meta is not None:
            self._meta.grad = None

    @property
    def grad_fn(self) -> Any:
        m = self._meta
        if m is None:
            return None
        if m.view_info is not None:
            # a view: autograd rebuilds its grad_fn after an in-place change of its base
            return _autograd_hooks["grad_fn"](self)
        return m.grad_fn

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def retains_grad(self) -> bool:
        m = self._meta
        return m is not None and m.retains_grad

    @property
    def output_nr(self) -> int:
        m = self._meta
        return 0 if m is None else m.output_nr

    @property
    def name(self) -> str | None:
        m = self._meta
        return None if m is None else m.name

    def backward(
        self,
        gradient: Tensor | None = None,
        retain_graph: bool | None = None,
        create_graph: bool = False,
        inputs: Any = None,
    ) -> None:
        _autograd("backward")(self, gradient, retain_graph, create_graph, inputs)

    def register_hook(self, hook: Any) -> Any:
        return _autograd("register_hook")(self, hook)

    def register_post_accumulate_grad_hook(self, hook: Any) -> Any:
        return _autograd("register_post_accumulate_grad_hook")(self, hook)

    def retain_grad(self) -> None:
        _autograd("retain_grad")(self)

    def detach_(self) -> Tensor:
        return _autograd("detach_")(self)

    @property
    def data(self) -> Tensor:
        """The same data without autograd history (does not share the version counter)."""
        from . import _factories

        return _factories.data_alias(self)

    @data.setter
    def data(self, value: Tensor) -> None:
        from . import _factories

        _factories.set_data(self, value)

    # ---- Python protocols ----------------------------------------------------------
    def __len__(self) -> int:
        if self._impl.dim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._impl.sizes[0]

    def __iter__(self) -> Any:
        if self._impl.dim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __bool__(self) -> bool:
        if self._impl.numel != 1:
            raise RuntimeError(
                f"Boolean value of Tensor with {'more than one value' if self._impl.numel > 1 else 'no values'}"
                " is ambiguous"
            )
        return bool(self.item())

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self._impl.numel != 1 or self._impl.dtype.is_floating_point or self._impl.dtype._name == "bool":
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __hash__(self) -> int:
        return id(self)

    def __contains__(self, element: Any) -> bool:
        return bool((self == element).any().item())

    def __repr__(self, *, tensor_contents: Any = None) -> str:
        from . import _tensor_str

        return _tensor_str.tensor_repr(self)

    def __str__(self) -> str:
        return self.__repr__()

    def __format__(self, spec: str) -> str:
        if self._impl.dim == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __reduce_ex__(self, protocol: SupportsIndex) -> Any:
        from . import _factories

        return _factories.reduce_tensor(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> Tensor:
        from . import _factories

        return _factories.deepcopy_tensor(self, memo)

    def __copy__(self) -> Tensor:
        raise RuntimeError("Only Tensors created explicitly by the user support the copy protocol; use clone()")

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        # NumPy 2 passes copy=True/False/None; shares memory unless a copy is asked for or needed.
        a = self.numpy()
        if dtype is not None and a.dtype != dtype:
            if copy is False:
                raise ValueError(f"__array__: converting {self.dtype} to {dtype} needs a copy, but copy=False")
            return a.astype(dtype)
        return a.copy() if copy else a

    def __array_wrap__(self, array: Any, context: Any = None, return_scalar: bool = False) -> Any:
        from . import _factories

        if return_scalar:
            return array[()]
        if array.dtype == bool:
            array = array.astype("uint8")
        return _factories.from_numpy(array)

    # ---- conversions -----------------------------------------------------------------
    def item(self) -> Any:
        return _C._item(self)

    def tolist(self) -> Any:
        return _C._tolist(self)

    def numpy(self, *, force: bool = False) -> Any:
        from . import _factories

        return _factories.to_numpy(self, force=force)

    def view(self, *size: Any, **kwargs: Any) -> Tensor:
        """view(*shape) or view(dtype): PyTorch's two signatures, told apart here rather than
        by the overload resolver, because view is on every model's hot path."""
        from ._generated import _ops

        if kwargs:
            key = next(iter(kwargs))
            if (
                size
                or len(kwargs) != 1
                or key not in ("size", "dtype")
                or (key == "dtype") != (type(kwargs[key]) is _dtype_cls)
            ):
                from ._dispatch import invalid_arguments

                raise invalid_arguments("view", size, kwargs, ["(dtype dtype)", "(tuple of ints size)"])
            size = (kwargs[key],)
        if len(size) == 1 and type(size[0]) is _dtype_cls:
            return _ops._call_view_dtype(self, size[0])
        return _ops._call_view(self, _ops._varargs(size))

    def to(self, *args: Any, **kwargs: Any) -> Tensor:
        from . import _factories

        return _factories.tensor_to(self, *args, **kwargs)

    def new_tensor(self, data: Any, *, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
        """A new tensor holding a copy of ``data``, with this tensor's dtype and device unless
        given. PyTorch's signature: keyword-only options, no ``layout=`` / ``pin_memory=``
        (a TypeError, as PyTorch's)."""
        from . import _factories

        return _factories.new_tensor(self, data, dtype, device, requires_grad)

    def cpu(self, memory_format: Any = None) -> Tensor:
        return self.to("cpu")

    def cuda(self, device: Any = None, non_blocking: bool = False, memory_format: Any = None) -> Tensor:
        if device is None:
            device = "cuda"
        elif isinstance(device, int):
            device = f"cuda:{device}"
        return self.to(device, non_blocking=non_blocking)

    def record_stream(self, stream: Any) -> None:
        """Marks this CUDA tensor's memory as used by `stream` (PyTorch's): when the tensor is
        freed, the caching allocator does not hand the memory out again before the work
        queued on `stream` so far is done."""
        from ember.c10py import cuda

        from .cuda.streams import _stream_of

        if not self.is_cuda:
            raise RuntimeError(f"record_stream: expected a CUDA tensor, got one on {self.device}")
        cuda.record_stream(self._impl.storage, _stream_of(stream))

    def is_pinned(self, device: Any = None) -> bool:
        """True if this CPU tensor's memory is page-locked (False without CUDA)."""
        from ember.c10py import cuda

        return self.is_cpu and self.numel() > 0 and cuda.is_available() and bool(cuda.is_pinned(self.data_ptr()))

    def pin_memory(self, device: Any = None) -> Tensor:
        """A copy of this CPU tensor in page-locked memory (itself if already pinned), so that
        ``.to("cuda", non_blocking=True)`` copies asynchronously. Needs a CUDA device. As
        PyTorch's (which allocates like empty_like): a dense, non-overlapping tensor keeps its
        strides (a transposed or channels-last one stays so); any other is made contiguous."""
        from ember.c10py import cuda

        if not self.is_cpu:
            raise RuntimeError(f"cannot pin '{self.type()}' only dense CPU tensors can be pinned")
        if not cuda.is_available():
            raise RuntimeError(f"pin_memory: no CUDA device is available; {cuda.availability_error()}")
        if self.is_pinned():
            return self
        sizes = tuple(self.shape)
        dense = self._impl.is_non_overlapping_and_dense
        strides = tuple(self.stride()) if dense else _C_c10.contiguous_strides(sizes)
        storage = cuda.pinned_storage(self.numel() * self.element_size())
        out = _wrap(TensorImpl(storage, self.dtype, sizes, strides, 0))
        out.copy_(self)
        return out

    def type(self, dtype: Any = None, non_blocking: bool = False) -> Any:
        from . import _factories

        return _factories.tensor_type(self, dtype, non_blocking)

    def float(self, memory_format: Any = None) -> Tensor:
        return self.to(_C_c10.float32)

    def double(self, memory_format: Any = None) -> Tensor:
        return self.to(_C_c10.float64)

    def half(self, memory_format: Any = None) -> Tensor:
        return self.to(_C_c10.float16)

    def bfloat16(self, memory_format: Any = None) -> Tensor:
        return self.to(_C_c10.bfloat16)

    def int(self, memory_format: Any = None) -> Tensor:
        return self.to(_C_c10.int32)

    def long(self, memory_format: Any = None) -> Tensor:
        return self.to(_C_c10.int64)

    def short(self, memory_format: Any = None) -> Tensor:
        return self.to(_C_c10.int16)

    def char(self, memory_format: Any = None) -> Tensor:
        return self.to(_C_c10.int8)

    def byte(self, memory_format: Any = None) -> Tensor:
        return self.to(_C_c10.uint8)

    def bool(self, memory_format: Any = None) -> Tensor:
        return self.to(_C_c10.bool)

    # ---- transposes -------------------------------------------------------------------
    @property
    def T(self) -> Tensor:
        n = self._impl.dim
        return self.permute(tuple(range(n - 1, -1, -1)))

    @property
    def mT(self) -> Tensor:
        if self._impl.dim < 2:
            raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor.")
        return self.transpose(-2, -1)

    @property
    def H(self) -> Tensor:
        return self.T

    @property
    def mH(self) -> Tensor:
        return self.mT

    # ---- indexing ----------------------------------------------------------------------
    if TYPE_CHECKING:  # installed by _indexing.install (aten/__init__.py)

        def __getitem__(self, index: Any) -> Tensor: ...

        def __setitem__(self, index: Any, value: Any) -> None: ...


def _index(d: Any) -> int:
    return d.__index__() if not isinstance(d, int) else d


def _meta_of(t: Tensor) -> AutogradMeta:
    m = t._meta
    if m is None:
        m = t._meta = AutogradMeta()
    return m


_AUTOGRAD_BITS = {
    "cpu": DispatchKeySet(DispatchKey.AutogradCPU).raw,
    "cuda": DispatchKeySet(DispatchKey.AutogradCUDA).raw,
}


_BACKEND_ONLY = DispatchKeySet([DispatchKey.CPU, DispatchKey.CUDA]).raw & ~DispatchKeySet(DispatchKey.Dense).raw


def _set_requires_grad(t: Tensor, flag: bool) -> None:
    """Sets the flag and the Autograd dispatch key (a tensor carries it only while it requires grad)."""
    if flag and not t._impl.dtype.is_floating_point:
        raise RuntimeError("only Tensors of floating point dtype can require gradients")
    _meta_of(t).requires_grad = flag
    functionality = _AUTOGRAD_BITS[t._impl.device.type] & ~_BACKEND_ONLY
    (_C._add_keys if flag else _C._remove_keys)(t, functionality)


def _check_grad_assignable(t: Tensor, g: Tensor) -> None:
    if not isinstance(g, Tensor):
        raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type {type(g).__name__}")
    if g.dtype != t.dtype:
        raise RuntimeError("assigned grad has data of a different type")
    if g.device != t.device:
        raise RuntimeError("assigned grad has data located on a different device")
    if tuple(g.shape) != tuple(t.shape):
        raise RuntimeError("assigned grad has data of a different size")


def _wrap(impl: TensorImpl, cls: type | None = None) -> Tensor:
    """TensorImpl -> new Tensor (or ``cls`` instance, a Tensor subclass) that is its handle, with
    no _base and no _meta. The C++ casters make every operator's output the same way
    (python_glue/casters.cpp, new_tensor_object)."""
    return _C._wrap(impl, cls)  # type: ignore[no-any-return]


import ember.c10py as _C_c10  # noqa: E402

_C._set_tensor_class(Tensor, _wrap)
