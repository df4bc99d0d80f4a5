"""Typed stubs of ember.c10py._C (the pybind11 module built from csrc/python/*.cpp).

Keep in step with the bindings: one section per binding file, in the same order.
Arguments typed `_DeviceLike` also take a device string ("cuda:1"): the bindings
convert a str to a device implicitly.
"""

import builtins
from collections.abc import Callable, Iterator, Sequence
from typing import Any, ClassVar, Final, Protocol, SupportsIndex, TypeAlias, final, overload

from typing_extensions import Buffer

# The module defines a dtype named `bool`, which hides the builtin inside this file.
_bool: TypeAlias = builtins.bool
_DeviceLike: TypeAlias = device | str
# For classes with a `device` / `dtype` attribute, whose own name hides the class.
_device: TypeAlias = device
_dtype: TypeAlias = dtype
_Sizes: TypeAlias = Sequence[SupportsIndex]

class _ArrayInterface(Protocol):
    @property
    def __array_interface__(self) -> dict[str, Any]: ...

# Objects with the buffer protocol. NumPy's stubs declare ndarray.__buffer__ only for
# Python >= 3.12, so arrays are also matched through __array_interface__.
_BufferLike: TypeAlias = Buffer | _ArrayInterface

_build_info: dict[str, object]
"""How this build was configured: cuda_compiled, nvcc_found, cuda_archs, debug, compiler, cxx_standard."""

# ---- module.cpp: exceptions --------------------------------------------------------

class OutOfMemoryError(RuntimeError, MemoryError):
    """An allocation failed (CPU, CUDA or shared memory). A RuntimeError as PyTorch's."""

class LinAlgError(RuntimeError):
    """A linear-algebra routine failed (singular matrix, no convergence)."""

def _test_throw(kind: str, msg: str) -> None:
    """Raises the C++ error `kind` ("Error", "IndexError", ...) with `msg` (tests the mapping)."""

# ---- dtype.cpp ---------------------------------------------------------------------

@final
class dtype:
    """The element type of a tensor (ember.aten.float32, ...). One immortal object per dtype."""

    @property
    def is_floating_point(self) -> _bool: ...
    @property
    def is_signed(self) -> _bool: ...
    @property
    def is_complex(self) -> _bool: ...
    @property
    def itemsize(self) -> int:
        """Bytes per element."""
    @property
    def _scalar_type(self) -> int: ...
    @property
    def _name(self) -> str: ...
    @property
    def _category(self) -> int:
        """0 bool, 1 integral, 2 floating: the result_type categories."""
    def __reduce__(self) -> tuple[Callable[[str], dtype], tuple[str]]: ...
    def __copy__(self) -> dtype: ...
    def __deepcopy__(self, memo: object, /) -> dtype: ...

bool: Final[dtype]
uint8: Final[dtype]
int8: Final[dtype]
int16: Final[dtype]
int32: Final[dtype]
int64: Final[dtype]
float16: Final[dtype]
bfloat16: Final[dtype]
float32: Final[dtype]
float64: Final[dtype]
_dtype_table: tuple[dtype, ...]
"""The dtypes indexed by ScalarType value."""

def _dtype_from_name(name: str) -> dtype:
    """The dtype named `name` ('float32', 'float', 'torch.float32', ...); ValueError if unknown."""

def promote_types(type1: dtype, type2: dtype) -> dtype:
    """The smallest dtype both can be cast to without losing their category (PyTorch's rule)."""

def _all_dtypes() -> list[dtype]: ...

# ---- device.cpp --------------------------------------------------------------------

class device:
    """A device: device('cpu'), device('cuda', 1), device('cuda:1'); device(1) is cuda:1."""

    @overload
    def __init__(self, type: str, index: SupportsIndex | None = None) -> None: ...
    @overload
    def __init__(self, type: int) -> None: ...
    @overload
    def __init__(self, type: device) -> None: ...
    @property
    def type(self) -> str:
        """'cpu' or 'cuda'."""
    @property
    def index(self) -> int | None: ...
    def __eq__(self, other: object) -> _bool: ...
    def __hash__(self) -> int: ...
    def __reduce__(self) -> tuple[Callable[[str], device], tuple[str]]: ...

class DeviceGuard:
    """Makes `device` current inside a with-block, then restores the previous one."""

    def __init__(self, device: _DeviceLike) -> None: ...
    def __enter__(self) -> DeviceGuard: ...
    def __exit__(self, *args: object) -> _bool: ...
    @property
    def original_device(self) -> device: ...

# ---- dispatch_key.cpp ---------------------------------------------------------------

class DispatchKey:
    """Dispatch keys, lowest priority first (a pybind11 enum)."""

    Undefined: ClassVar[DispatchKey]
    Dense: ClassVar[DispatchKey]
    AutogradOther: ClassVar[DispatchKey]
    AutogradFunctionality: ClassVar[DispatchKey]
    AutocastCPU: ClassVar[DispatchKey]
    AutocastCUDA: ClassVar[DispatchKey]
    Python: ClassVar[DispatchKey]
    Profiler: ClassVar[DispatchKey]
    Tracer: ClassVar[DispatchKey]
    CPU: ClassVar[DispatchKey]
    CUDA: ClassVar[DispatchKey]
    AutogradCPU: ClassVar[DispatchKey]
    AutogradCUDA: ClassVar[DispatchKey]
    Autograd: ClassVar[DispatchKey]
    CompositeImplicitAutograd: ClassVar[DispatchKey]
    CompositeExplicitAutograd: ClassVar[DispatchKey]
    __members__: ClassVar[dict[str, DispatchKey]]

    def __init__(self, value: SupportsIndex) -> None: ...
    @property
    def name(self) -> str: ...
    @property
    def value(self) -> int: ...
    def __int__(self) -> int: ...
    def __index__(self) -> int: ...
    def __eq__(self, other: object) -> _bool: ...
    def __ne__(self, other: object) -> _bool: ...
    def __hash__(self) -> int: ...
    def __getstate__(self) -> int: ...
    def __setstate__(self, state: SupportsIndex, /) -> None: ...
    @property
    def is_alias(self) -> _bool:
        """Only for registering kernels (Autograd, CompositeImplicitAutograd, ...), never in a set."""
    @property
    def is_per_backend_functionality(self) -> _bool: ...
    @property
    def is_runtime_per_backend(self) -> _bool: ...
    @property
    def functionality(self) -> DispatchKey:
        """CPU -> Dense, AutogradCUDA -> AutogradFunctionality, others -> themselves."""

class DispatchKeySet:
    """A set of dispatch keys; the highest-priority key present picks the kernel."""

    @overload
    def __init__(self) -> None: ...
    @overload
    def __init__(self, key: DispatchKey) -> None: ...
    @overload
    def __init__(self, keys: Sequence[DispatchKey]) -> None: ...
    @staticmethod
    def from_raw(raw: SupportsIndex) -> DispatchKeySet: ...
    @property
    def raw(self) -> int:
        """The 64-bit representation (backend bits lowest)."""
    def has(self, key: DispatchKey) -> _bool: ...
    def __contains__(self, key: DispatchKey, /) -> _bool: ...
    def add(self, key: DispatchKey) -> DispatchKeySet: ...
    def remove(self, key: DispatchKey) -> DispatchKeySet:
        """Removes the functionality of `key` (its backend bit stays for other keys)."""
    def highest_priority_key(self) -> DispatchKey: ...
    def highest_functionality_key(self) -> DispatchKey: ...
    def keys(self) -> list[DispatchKey]:
        """Runtime keys, highest priority first."""
    def __iter__(self) -> Iterator[DispatchKey]: ...
    def __len__(self) -> int: ...
    def __bool__(self) -> _bool: ...
    def __or__(self, other: DispatchKeySet, /) -> DispatchKeySet: ...
    def __and__(self, other: DispatchKeySet, /) -> DispatchKeySet: ...
    def __sub__(self, other: DispatchKeySet, /) -> DispatchKeySet: ...
    def __eq__(self, other: object) -> _bool: ...
    def __hash__(self) -> int: ...

def keys_after(key: DispatchKey) -> DispatchKeySet:
    """Every key below `key` in priority (with all backend bits): mask a call's key set with it to redispatch."""

def runtime_keys_for_alias(alias: DispatchKey) -> list[DispatchKey]: ...
def key_set_for_device(device: _DeviceLike) -> DispatchKeySet: ...
def backend_key_for_device(device: _DeviceLike) -> DispatchKey: ...
def autograd_key_for_device(device: _DeviceLike) -> DispatchKey: ...

# ---- storage.cpp ------------------------------------------------------------------

class StorageImpl:
    """Refcounted bytes with an allocator and a device. CPU storages expose the buffer protocol."""

    def __init__(self, nbytes: SupportsIndex, device: _DeviceLike = ..., resizable: _bool = True) -> None: ...
    def __buffer__(self, flags: int, /) -> memoryview: ...
    @staticmethod
    def from_buffer(obj: _BufferLike, writable: _bool = True) -> StorageImpl:
        """Wraps a C-contiguous Python buffer without copying; the object stays alive while the storage does."""
    @staticmethod
    def from_bytes(data: bytes, device: _DeviceLike = ...) -> StorageImpl:
        """A new storage holding a copy of `data`."""
    @property
    def nbytes(self) -> int: ...
    @property
    def device(self) -> _device: ...
    @property
    def data_ptr(self) -> int: ...
    @property
    def resizable(self) -> _bool: ...
    @property
    def use_count(self) -> int: ...
    def resize_(self, nbytes: SupportsIndex) -> None:
        """Grows or shrinks to `nbytes`, keeping the common prefix. RuntimeError if not resizable."""
    def tobytes(self) -> bytes: ...
    def copy_from_bytes(self, data: bytes) -> None: ...
    def share_memory_(self, strategy: str = "file_descriptor") -> None:
        """Moves the bytes into shared memory ("file_descriptor" or "file_system"), in place."""
    def is_shared(self) -> _bool: ...
    def _share_fd(self) -> int:
        """The memfd behind a file_descriptor-shared storage (owned by the storage; dup it to keep it)."""
    def _share_filename(self) -> str: ...
    @staticmethod
    def _new_shared_fd(fd: SupportsIndex, nbytes: SupportsIndex) -> StorageImpl:
        """Maps shared memory received as a file descriptor (which is duplicated)."""
    @staticmethod
    def _new_shared_filename(name: str, nbytes: SupportsIndex) -> StorageImpl: ...
    @staticmethod
    def _new_shared(nbytes: SupportsIndex, strategy: str = "file_descriptor") -> StorageImpl:
        """A new storage allocated directly in shared memory."""

# ---- tensor_impl.cpp -----------------------------------------------------------------

class TensorImpl:
    """Sizes, strides, offset, dtype, device and key set over a StorageImpl."""

    def __init__(
        self,
        storage: StorageImpl,
        dtype: _dtype,
        sizes: _Sizes | None = None,
        strides: _Sizes | None = None,
        storage_offset: SupportsIndex = 0,
    ) -> None:
        """A tensor over `storage`; without sizes it is 1-d and spans the whole storage."""
    @staticmethod
    def empty(sizes: _Sizes, dtype: _dtype, device: _DeviceLike = ...) -> TensorImpl: ...
    @staticmethod
    def empty_strided(sizes: _Sizes, strides: _Sizes, dtype: _dtype, device: _DeviceLike = ...) -> TensorImpl: ...
    @property
    def sizes(self) -> tuple[int, ...]: ...
    @property
    def strides(self) -> tuple[int, ...]: ...
    def size(self, dim: SupportsIndex) -> int: ...
    def stride(self, dim: SupportsIndex) -> int: ...
    @property
    def dim(self) -> int: ...
    @property
    def numel(self) -> int: ...
    @property
    def storage_offset(self) -> int: ...
    @property
    def dtype(self) -> _dtype: ...
    @property
    def itemsize(self) -> int: ...
    @property
    def nbytes(self) -> int: ...
    @property
    def device(self) -> _device: ...
    @property
    def storage(self) -> StorageImpl: ...
    @property
    def data_ptr(self) -> int: ...
    @property
    def is_contiguous(self) -> _bool: ...
    @property
    def is_non_overlapping_and_dense(self) -> _bool: ...
    key_set: DispatchKeySet
    @property
    def _key_bits(self) -> int: ...
    is_wrapped_number: _bool
    @property
    def version(self) -> int: ...
    def bump_version(self) -> None: ...
    def shares_version_counter(self, other: TensorImpl) -> _bool: ...
    def set_version_counter_from(self, other: TensorImpl) -> None:
        """Makes this tensor share `other`'s version counter (detach keeps the counter)."""
    def set_sizes_and_strides(
        self, sizes: _Sizes, strides: _Sizes, storage_offset: SupportsIndex | None = None
    ) -> None: ...
    def set_sizes_contiguous(self, sizes: _Sizes) -> None: ...
    def set_storage_offset(self, storage_offset: SupportsIndex) -> None: ...
    def set_storage(self, storage: StorageImpl) -> None: ...
    def make_view(self, sizes: _Sizes, strides: _Sizes, storage_offset: SupportsIndex) -> TensorImpl:
        """A view with this geometry over the same storage and version counter."""
    def shallow_copy(self) -> TensorImpl: ...

def contiguous_strides(sizes: _Sizes) -> tuple[int, ...]: ...
def maybe_wrap_dim(dim: SupportsIndex, ndim: SupportsIndex, wrap_scalar: _bool = True) -> int: ...

# ---- allocator.cpp -------------------------------------------------------------------

def memory_stats(device: _DeviceLike = ...) -> dict[str, int]:
    """Counters of the allocator of `device`: allocated/reserved/cached bytes, peaks, call counts."""

def reset_peak_memory_stats(device: _DeviceLike = ...) -> None: ...
def empty_cache(device: _DeviceLike = ...) -> None:
    """Returns every cached block of that device's allocator to the system."""

def cpu_allocator_round_size(nbytes: SupportsIndex) -> int:
    """The size class a CPU allocation of `nbytes` is served from."""

def set_cpu_cache_limit(nbytes: SupportsIndex) -> None:
    """Caps the bytes the CPU allocator keeps cached (trimming the cache if it holds more)."""

def cpu_cache_limit() -> int: ...

# ---- cuda.cpp: the submodule _C.cuda ---------------------------------------------------
# A module at run time; a class here so that one stub file can describe it.
# memory_stats / reset_peak_memory_stats / empty_cache of CUDA devices are the generic
# functions above: memory_stats(device("cuda:0")).

_CUDADeviceLike: TypeAlias = SupportsIndex | device | str | None

class cuda:
    """CUDA devices (absent devices read as is_available() == False)."""

    @staticmethod
    def is_compiled() -> _bool:
        """True if this build of ember.c10py includes CUDA."""
    @staticmethod
    def is_available() -> _bool:
        """True if a CUDA device can be used now."""
    @staticmethod
    def device_count() -> int:
        """Number of usable CUDA devices (0 without a GPU or a driver)."""
    @staticmethod
    def availability_error() -> str:
        """Why is_available() is False (the CUDA runtime's message), or ''."""
    @staticmethod
    def current_device() -> int:
        """Index of the current CUDA device of this thread."""
    @staticmethod
    def set_device(device: SupportsIndex) -> None:
        """Makes `device` (an index) current for this thread."""
    @staticmethod
    def synchronize(device: _CUDADeviceLike = None) -> None:
        """Waits for all work on `device` (default: the current one) to finish."""
    @final
    class DeviceProperties:
        """What get_device_properties() returns."""

        @property
        def name(self) -> str: ...
        @property
        def major(self) -> int: ...
        @property
        def minor(self) -> int: ...
        @property
        def total_memory(self) -> int: ...
        @property
        def multi_processor_count(self) -> int: ...
        @property
        def warp_size(self) -> int: ...
        @property
        def shared_memory_per_block(self) -> int: ...

    @staticmethod
    def get_device_properties(device: _CUDADeviceLike = None) -> cuda.DeviceProperties:
        """get_device_properties(0).name -> 'NVIDIA H100 80GB HBM3'"""
    @staticmethod
    def mem_get_info(device: _CUDADeviceLike = None) -> tuple[int, int]:
        """(free, total) bytes of the device's memory now (cudaMemGetInfo)."""

    # ---- streams ----
    @final
    class Stream:
        """A CUDA stream. Stream(device=None, priority=0) takes one from the device's pool
        (lower priority = more urgent; clamped to the device's range)."""

        def __init__(self, device: _CUDADeviceLike = None, priority: SupportsIndex = 0) -> None: ...
        def query(self) -> _bool:
            """True if all work queued on the stream has finished."""
        def synchronize(self) -> None:
            """Waits for all work queued on the stream."""
        def wait_event(self, event: cuda.Event) -> None:
            """Makes future work on this stream wait for `event`."""
        def wait_stream(self, stream: cuda.Stream) -> None:
            """Makes future work on this stream wait for the work queued so far on `stream`."""
        @property
        def handle(self) -> int:
            """The cudaStream_t as an int (0 for the default stream)."""
        @property
        def device(self) -> _device: ...
        @property
        def device_index(self) -> int: ...
        @property
        def priority(self) -> int: ...
        def __eq__(self, other: object) -> _bool: ...
        def __hash__(self) -> int: ...

    @staticmethod
    def current_stream(device: _CUDADeviceLike = None) -> cuda.Stream:
        """This thread's current stream of `device` (the default stream unless set)."""
    @staticmethod
    def default_stream(device: _CUDADeviceLike = None) -> cuda.Stream:
        """The default (legacy, handle 0) stream of `device`."""
    @staticmethod
    def set_current_stream(stream: cuda.Stream) -> None:
        """Makes `stream` the current stream of its device for this thread."""
    @staticmethod
    def stream_priority_range(device: _CUDADeviceLike = None) -> tuple[int, int]:
        """(least, greatest) stream priority of `device`, e.g. (0, -5)."""

    # ---- events ----
    @final
    class Event:
        """A CUDA event, created on the device of the first stream it is recorded on."""

        def __init__(
            self, enable_timing: _bool = False, blocking: _bool = False, interprocess: _bool = False
        ) -> None: ...
        def record(self, stream: cuda.Stream | None = None) -> None:
            """Records the event on `stream` (default: the current stream)."""
        def wait(self, stream: cuda.Stream | None = None) -> None:
            """Makes future work on `stream` (default: current) wait for this event."""
        def query(self) -> _bool:
            """True if the recorded work has finished (True if never recorded)."""
        def synchronize(self) -> None:
            """Waits for the recorded work to finish."""
        def elapsed_time(self, end_event: cuda.Event) -> float:
            """Milliseconds between this event and `end_event` (both timed, recorded and completed)."""
        @property
        def handle(self) -> int: ...
        @property
        def device(self) -> _device | None: ...

    # ---- memory ----
    @staticmethod
    def memory_summary(device: _CUDADeviceLike = None) -> str:
        """A readable report of the caching allocator's state on `device`."""
    @staticmethod
    def _allocation_sizes(nbytes: SupportsIndex) -> tuple[int, int, _bool, int]:
        """(block, segment, small_pool, remainder): the caching allocator's size rules."""
    @staticmethod
    def record_stream(storage: StorageImpl, stream: cuda.Stream) -> None:
        """Marks a CUDA storage as used on `stream`: its memory is not reused before the work
        queued there so far is done (Tensor.record_stream)."""
    @staticmethod
    def is_pinned(ptr: SupportsIndex) -> _bool:
        """True if the host address `ptr` is page-locked (pinned) memory."""
    @staticmethod
    def pinned_storage(nbytes: SupportsIndex) -> StorageImpl:
        """A new CPU StorageImpl of `nbytes` bytes in pinned host memory."""
    @staticmethod
    def host_memory_stats() -> dict[str, int]:
        """Counters of the pinned host allocator (same keys as memory_stats)."""
    @staticmethod
    def host_empty_cache() -> None:
        """Returns every cached pinned block to the driver (cudaFreeHost)."""

    # ---- copies ----
    @final
    class CopyKind:
        HostToDevice: ClassVar[cuda.CopyKind]
        DeviceToHost: ClassVar[cuda.CopyKind]
        DeviceToDevice: ClassVar[cuda.CopyKind]
        @property
        def name(self) -> str: ...
        @property
        def value(self) -> int: ...

    @staticmethod
    def memcpy(
        dst: SupportsIndex,
        src: SupportsIndex,
        nbytes: SupportsIndex,
        kind: cuda.CopyKind,
        stream: cuda.Stream | None = None,
        non_blocking: _bool = False,
    ) -> None:
        """Copies `nbytes` between raw addresses (ints) on `stream` (default: current);
        waits unless non_blocking."""
    @staticmethod
    def _sleep(microseconds: SupportsIndex, stream: cuda.Stream | None = None) -> None:
        """Keeps `stream` (default: current) busy for a while without device code (for tests)."""

# ---- testing.cpp: hooks for the test-suite ---------------------------------------------

def _test_half_from_float(values: _BufferLike) -> bytes:
    """float32 buffer -> bytes of the float16 bit patterns (c10::Half(float))."""

def _test_half_to_float(bits: _BufferLike) -> bytes:
    """uint16 buffer of float16 bit patterns -> bytes of float32 (float(c10::Half))."""

def _test_bfloat16_from_float(values: _BufferLike) -> bytes:
    """float32 buffer -> bytes of the bfloat16 bit patterns (c10::BFloat16(float))."""

def _test_bfloat16_to_float(bits: _BufferLike) -> bytes:
    """uint16 buffer of bfloat16 bit patterns -> bytes of float32 (float(c10::BFloat16))."""
