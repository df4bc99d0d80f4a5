"""save/load in PyTorch's zip checkpoint format (``torch.save`` / ``torch.load``).

The archive (an uncompressed zip; every record's bytes start on a 64-byte boundary,
padded with a local-header extra field, so that ``mmap=True`` can map storages)::

    <prefix>/data.pkl            the object, pickle protocol 2; storages out of band
    <prefix>/.format_version     "1"
    <prefix>/.storage_alignment  "64"
    <prefix>/byteorder           "little" or "big"
    <prefix>/data/<key>          the raw bytes of one storage
    <prefix>/version             "3"

A storage is a persistent id ``('storage', torch.<Type>Storage, key, location, numel)``
and a tensor is ``torch._utils._rebuild_tensor_v2(storage, storage_offset, size,
stride, requires_grad, backward_hooks)``. ember writes PyTorch's names (``torch.float32``,
``torch.device``, ``torch.Size``) so that ``torch.load(weights_only=True)`` reads ember's
files, and maps them back to ember objects when reading. Tensors that share a storage
are saved with one record and share one storage again after loading.

Loading never trusts the archive: records must be stored (not compressed: no zip
bombs), lie inside the file and match the sizes the pickle claims before anything is
allocated, and the pickle goes through the weights-only unpickler unless the caller
passes ``weights_only=False``.
"""

from __future__ import annotations

import builtins
import collections
import io
import itertools
import mmap as _mmap
import os
import pickle
import struct
import sys
import warnings
import zipfile
from collections.abc import Callable
from typing import IO, Any, ClassVar

from ember.c10py import StorageImpl, TensorImpl, cuda
from ember.c10py import device as _device_cls
from ember.c10py import dtype as _dtype_cls

from . import _C, _dtypes, _weights_only_unpickler
from ._tensor import Size, Tensor, _wrap
from ._weights_only_unpickler import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals

__all__ = [
    "add_safe_globals",
    "clear_safe_globals",
    "get_safe_globals",
    "get_unsafe_globals_in_checkpoint",
    "load",
    "safe_globals",
    "save",
]

UnpicklingError = pickle.UnpicklingError

STORAGE_ALIGNMENT = 64
FILE_FORMAT_VERSION = 3  # what torch 2.x writes to <prefix>/version
_MAX_READ_VERSION = 10

# One table: ember dtype name -> PyTorch's legacy typed-storage class name.
_STORAGE_NAMES = {
    "bool": "BoolStorage",
    "uint8": "ByteStorage",
    "int8": "CharStorage",
    "int16": "ShortStorage",
    "int32": "IntStorage",
    "int64": "LongStorage",
    "float16": "HalfStorage",
    "bfloat16": "BFloat16Storage",
    "float32": "FloatStorage",
    "float64": "DoubleStorage",
}
# PyTorch dtypes/storages ember has no dtype for: named in the error instead of "unsupported global".
_UNSUPPORTED_DTYPES = (
    "complex32", "complex64", "complex128", "uint16", "uint32", "uint64", "float8_e5m2", "float8_e4m3fn",
    "float8_e5m2fnuz", "float8_e4m3fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2", "quint8", "qint8", "qint32",
    "quint4x2", "quint2x4", "bits1x8", "bits2x4", "bits4x2", "bits8", "bits16",
)  # fmt: skip
_UNSUPPORTED_STORAGES = (
    "ComplexFloatStorage", "ComplexDoubleStorage", "QUInt8Storage", "QInt8Storage", "QInt32Storage",
    "QUInt4x2Storage", "QUInt2x4Storage",
)  # fmt: skip


# ---- stand-ins for PyTorch's globals ---------------------------------------------------
class _TorchGlobal:
    """A PyTorch global that ember writes by name (GLOBAL 'module name') and never imports."""

    __slots__ = ("module", "name")

    def __init__(self, module: str, name: str) -> None:
        self.module = module
        self.name = name

    def __repr__(self) -> str:
        return f"<{self.module}.{self.name}>"

    def __call__(self, *args: Any) -> Any:  # pickle's save_reduce wants a callable; only the name is written
        raise RuntimeError(f"{self.module}.{self.name} is a PyTorch name ember writes into checkpoints")


class StorageType(_TorchGlobal):
    """``torch.FloatStorage`` & co.: the dtype of a storage in a persistent id (None: UntypedStorage)."""

    __slots__ = ("dtype",)

    def __init__(self, module: str, name: str, dtype: Any) -> None:
        super().__init__(module, name)
        self.dtype = dtype


_TYPED_STORAGE_TYPES = {
    d: StorageType("torch", _STORAGE_NAMES[d._name], d) for d in _dtypes.ALL
}  # ember dtype -> torch.<X>Storage
_UNTYPED_STORAGE = StorageType("torch.storage", "UntypedStorage", None)
_REBUILD_TENSOR_V2 = _TorchGlobal("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = _TorchGlobal("torch._utils", "_rebuild_parameter")
_REBUILD_PARAMETER_WITH_STATE = _TorchGlobal("torch._utils", "_rebuild_parameter_with_state")
_REBUILD_FROM_TYPE_V2 = _TorchGlobal("torch._tensor", "_rebuild_from_type_v2")
_TORCH_TENSOR = _TorchGlobal("torch", "Tensor")
_TORCH_DEVICE = _TorchGlobal("torch", "device")
_TORCH_SIZE = _TorchGlobal("torch", "Size")


class _TypedStorage:
    """A storage read from the archive together with the dtype its persistent id names."""

    __slots__ = ("dtype", "storage")

    def __init__(self, storage: StorageImpl, dtype: Any) -> None:
        self.storage = storage
        self.dtype = dtype

    def __repr__(self) -> str:
        return f"TypedStorage(dtype={self.dtype}, nbytes={self.storage.nbytes})"


# ---- rebuild functions (the targets of torch._utils._rebuild_*) --------------------------
def _check_int(x: Any, what: str) -> int:
    if type(x) is not builtins.int:
        raise UnpicklingError(f"_rebuild_tensor: {what} must be an int, got {type(x).__name__}")
    return x


def _check_int_tuple(x: Any, what: str) -> tuple[int, ...]:
    if type(x) not in (tuple, list, Size) or not all(type(v) is builtins.int for v in x):
        raise UnpicklingError(f"_rebuild_tensor: {what} must be a tuple of ints, got {x!r:.80}")
    return tuple(x)


def _tensor_over(storage: StorageImpl, dtype: Any, offset: Any, size: Any, stride: Any) -> Tensor:
    offset = _check_int(offset, "storage_offset")
    size = _check_int_tuple(size, "size")
    stride = _check_int_tuple(stride, "stride")
    if len(size) != len(stride):
        raise RuntimeError(f"_rebuild_tensor: size {list(size)} and stride {list(stride)} differ in length")
    if len(size) > 64:
        raise RuntimeError(f"_rebuild_tensor: {len(size)} dimensions (at most 64 are supported)")
    if offset < 0 or any(s < 0 for s in size) or any(s < 0 for s in stride):
        raise RuntimeError(
            f"_rebuild_tensor: negative size, stride or storage offset (size {list(size)}, stride {list(stride)}, "
            f"storage offset {offset})"
        )
    itemsize = dtype.itemsize
    # PyTorch's computeStorageNbytes: the bytes the view reaches must lie inside the storage.
    if 0 in size:
        needed = 0
    else:
        needed = itemsize * (offset + 1 + sum((n - 1) * s for n, s in zip(size, stride, strict=True)))
    if needed > storage.nbytes:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and itemsize "
            f"{itemsize} requiring a storage size of {needed} are out of bounds for storage of size {storage.nbytes}"
        )
    if max([offset, *size, *stride]) >= 2**63:
        raise RuntimeError("_rebuild_tensor: size, stride or storage offset does not fit in int64")
    return _wrap(TensorImpl(storage, dtype, size, stride, offset))


def _rebuild_tensor(storage: Any, storage_offset: Any, size: Any, stride: Any) -> Tensor:
    if not isinstance(storage, _TypedStorage):
        raise UnpicklingError(f"_rebuild_tensor: expected a typed storage, got {type(storage).__name__}")
    return _tensor_over(storage.storage, storage.dtype, storage_offset, size, stride)


def _set_rebuilt_requires_grad(t: Tensor, requires_grad: Any) -> Tensor:
    if type(requires_grad) is not builtins.bool:
        raise UnpicklingError(f"_rebuild_tensor: requires_grad must be a bool, got {type(requires_grad).__name__}")
    if requires_grad:
        t.requires_grad_(True)
    return t


def _check_hooks(backward_hooks: Any) -> None:
    # PyTorch saves an empty OrderedDict; hooks are never restored from a file.
    if backward_hooks is not None and not isinstance(backward_hooks, dict):
        raise UnpicklingError("_rebuild_tensor: backward_hooks must be a dict")


def _rebuild_tensor_v2(
    storage: Any,
    storage_offset: Any,
    size: Any,
    stride: Any,
    requires_grad: Any,
    backward_hooks: Any,
    metadata: Any = None,
) -> Tensor:
    _check_hooks(backward_hooks)
    if metadata:
        raise UnpicklingError(f"_rebuild_tensor_v2: tensor metadata {metadata!r:.80} is not supported by ember")
    t = _rebuild_tensor(storage, storage_offset, size, stride)
    return _set_rebuilt_requires_grad(t, requires_grad)


def _rebuild_tensor_v3(
    storage: Any,
    storage_offset: Any,
    size: Any,
    stride: Any,
    requires_grad: Any,
    backward_hooks: Any,
    dtype: Any,
    metadata: Any = None,
) -> Tensor:
    _check_hooks(backward_hooks)
    if metadata:
        raise UnpicklingError(f"_rebuild_tensor_v3: tensor metadata {metadata!r:.80} is not supported by ember")
    if not isinstance(dtype, _dtype_cls):
        raise UnpicklingError(f"_rebuild_tensor_v3: expected a dtype, got {type(dtype).__name__}")
    raw = storage.storage if isinstance(storage, _TypedStorage) else storage
    if not isinstance(raw, StorageImpl):
        raise UnpicklingError(f"_rebuild_tensor_v3: expected a storage, got {type(storage).__name__}")
    if dtype is _dtypes.bool:
        _normalize_bool_bytes(raw)
    t = _tensor_over(raw, dtype, storage_offset, size, stride)
    return _set_rebuilt_requires_grad(t, requires_grad)


# ember.nn registers its Parameter class here (a lower layer never imports a higher one).
_parameter_class: list[Any] = []


def _register_parameter_class(cls: Any) -> None:
    """Called by ember.nn: tensors saved as ``nn.Parameter`` load as ``cls(data, requires_grad)``."""
    _parameter_class[:] = [cls]


def _rebuild_parameter(data: Any, requires_grad: Any, backward_hooks: Any) -> Tensor:
    if not isinstance(data, Tensor):
        raise UnpicklingError(f"_rebuild_parameter: expected a tensor, got {type(data).__name__}")
    _check_hooks(backward_hooks)
    if type(requires_grad) is not builtins.bool:
        raise UnpicklingError("_rebuild_parameter: requires_grad must be a bool")
    if _parameter_class:
        return _parameter_class[0](data, requires_grad)
    return _set_rebuilt_requires_grad(data, requires_grad)


def _rebuild_parameter_with_state(data: Any, requires_grad: Any, backward_hooks: Any, state: Any) -> Tensor:
    p = _rebuild_parameter(data, requires_grad, backward_hooks)
    _set_tensor_state(p, state)
    return p


def _set_tensor_state(t: Tensor, state: Any) -> None:
    if state is None:
        return
    if isinstance(state, tuple) and len(state) == 2:  # (dict state, slot state)
        state, slots = state
        if slots:
            raise UnpicklingError("tensor slot state is not supported")
    if not isinstance(state, dict) or not all(type(k) is str for k in state):
        raise UnpicklingError("tensor state must be a dict of attribute names")
    for k in state:
        if k.startswith("__") or k in ("_impl", "_keys", "_base", "_meta"):
            raise UnpicklingError(f"tensor state may not set the attribute {k!r}")
    t.__dict__.update(state)


def _rebuild_from_type_v2(func: Any, new_type: Any, args: Any, state: Any) -> Tensor:
    if func not in (_rebuild_tensor_v2, _rebuild_tensor, _rebuild_tensor_v3, _rebuild_parameter):
        raise UnpicklingError(f"_rebuild_from_type_v2: unsupported rebuild function {func!r}")
    if new_type is not Tensor and not (_parameter_class and new_type is _parameter_class[0]):
        raise UnpicklingError(f"_rebuild_from_type_v2: unsupported tensor type {new_type!r}")
    if type(args) is not tuple:
        raise UnpicklingError("_rebuild_from_type_v2: args must be a tuple")
    t = func(*args)
    _set_tensor_state(t, state)
    return t


def _device(*args: Any) -> _device_cls:
    if not 1 <= len(args) <= 2 or type(args[0]) is not str or (len(args) == 2 and type(args[1]) is not builtins.int):
        raise UnpicklingError(f"torch.device called with unsupported arguments {args!r:.80}")
    try:
        return _device_cls(*args)
    except Exception as e:
        raise UnpicklingError(f"torch.device{args!r:.80}: {e}") from None


def _size(*args: Any) -> Size:
    if len(args) > 1 or (args and not all(type(v) is builtins.int for v in args[0])):
        raise UnpicklingError("torch.Size expects a tuple of ints")
    return Size(*args)


_STORAGE_BY_NAME = {st.name: st for st in _TYPED_STORAGE_TYPES.values()}


def _allowed_globals() -> dict[str, Any]:
    """PyTorch's weights-only allowlist, each name mapped to the ember object it stands for."""
    rc: dict[str, Any] = {
        "torch._utils._rebuild_tensor": _rebuild_tensor,
        "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
        "torch._utils._rebuild_tensor_v3": _rebuild_tensor_v3,
        "torch._utils._rebuild_parameter": _rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_with_state,
        "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
        "torch.device": _device,
        "torch.Size": _size,
        "torch.Tensor": Tensor,
        "torch.storage.UntypedStorage": _UNTYPED_STORAGE,
        "torch.UntypedStorage": _UNTYPED_STORAGE,
    }
    for d in _dtypes.ALL:
        rc[f"torch.{d._name}"] = d
        rc[f"torch.{_STORAGE_NAMES[d._name]}"] = _TYPED_STORAGE_TYPES[d]
    if _parameter_class:
        rc["torch.nn.parameter.Parameter"] = _parameter_class[0]
    return rc


def _unsupported_globals() -> dict[str, str]:
    rc = {f"torch.{n}": f"ember has no dtype torch.{n}" for n in _UNSUPPORTED_DTYPES}
    rc.update(
        {f"torch.{n}": f"ember cannot load a {n} (its dtype has no ember counterpart)" for n in _UNSUPPORTED_STORAGES}
    )
    for fn in (
        "_rebuild_sparse_tensor", "_rebuild_qtensor", "_rebuild_meta_tensor_no_storage", "_rebuild_nested_tensor",
        "_rebuild_wrapper_subclass", "_rebuild_device_tensor_from_numpy", "_rebuild_device_tensor_from_cpu_tensor",
    ):  # fmt: skip
        rc[f"torch._utils.{fn}"] = (
            "this kind of tensor (sparse, quantized, meta, nested or subclass) is not supported by ember"
        )
    return rc


def _newobj(cls: Any, args: tuple[Any, ...]) -> Any:
    """NEWOBJ on nn.Parameter (old checkpoints): a tensor that requires grad."""
    if _parameter_class and cls is _parameter_class[0]:
        return cls(*args)
    return None


def _build_tensor_state(inst: Any, state: Any) -> bool:
    if isinstance(inst, Tensor):
        _set_tensor_state(inst, state)
        return True
    return False


# ---- the zip archive ---------------------------------------------------------------------
_LOCAL_HEADER = struct.Struct("<4sHHHHHIIIHH")  # 30 bytes
_PAD_EXTRA_ID = 0x4246  # "FB": PyTorch's padding extra field
_READ_CHUNK = 1 << 17  # bytes read (then checksummed while in the core's L2) at a time


class _ArchiveReader:
    """Reads the records of a checkpoint zip without trusting any name or size it claims.

    Every record's name and span is checked once, when the archive is opened: names are
    ``<prefix>/<record>`` with one plain prefix (no ``..``, no absolute path, no NUL
    byte), no name appears twice (PyTorch reads the first of two ``data.pkl`` entries,
    Python's zipfile the last: a file must not mean two things), every record is stored
    (not compressed) and lies inside the file, and no two records overlap (a thousand
    directory entries pointing at one record would make the loader allocate its bytes a
    thousand times).
    """

    def __init__(self, f: IO[bytes]) -> None:
        self.f = f
        f.seek(0, os.SEEK_END)
        self.file_size = f.tell()
        f.seek(0)
        try:
            zf = zipfile.ZipFile(f)
        except Exception as e:  # BadZipFile, struct.error, ValueError, ... on a damaged directory
            raise RuntimeError(
                f"PytorchStreamReader failed reading zip archive: failed finding central directory ({e})"
            ) from None
        infos = zf.infolist()
        if not infos:
            raise RuntimeError("PytorchStreamReader failed reading zip archive: the archive holds no records")
        for info in infos:
            _check_record_name(info.orig_filename)
        first = infos[0].orig_filename
        if "/" not in first:
            raise RuntimeError(
                f"PytorchStreamReader failed reading zip archive: file in archive is not in a subdirectory: {first}"
            )
        self.prefix = first.split("/", 1)[0]
        self.records: dict[str, zipfile.ZipInfo] = {}
        self.spans: dict[str, tuple[int, int]] = {}
        for info in infos:
            name = info.orig_filename
            if not name.startswith(self.prefix + "/"):
                raise RuntimeError(
                    f"PytorchStreamReader failed reading zip archive: file in archive is not in a subdirectory "
                    f"{self.prefix}/: {name}"
                )
            record = name[len(self.prefix) + 1 :]
            if record in self.records:
                raise RuntimeError(
                    f"PytorchStreamReader failed reading zip archive: the archive holds two entries named {name} "
                    "(a corrupt or tampered file: refusing to pick one)"
                )
            self.records[record] = info
        self._check_spans(infos)

    def _check_spans(self, infos: list[zipfile.ZipInfo]) -> None:
        taken: list[tuple[int, int, str]] = []
        for record, info in self.records.items():
            if info.compress_type != zipfile.ZIP_STORED:
                continue  # refused when read (span); compressed records are never inflated
            start, n = self._locate(record, info)
            self.spans[record] = (start, n)
            taken.append((info.header_offset, start + n, record))
        taken.sort()
        for (_, end, a), (begin, _, b) in itertools.pairwise(taken):
            if begin < end:
                raise RuntimeError(
                    f"PytorchStreamReader failed reading zip archive: records {a} and {b} overlap in the file (a "
                    "corrupt or tampered archive)"
                )

    def _locate(self, name: str, info: zipfile.ZipInfo) -> tuple[int, int]:
        if info.flag_bits & 0x1:
            raise RuntimeError(f"PytorchStreamReader: record {name} is encrypted")
        if info.compress_size != info.file_size:
            raise RuntimeError(f"PytorchStreamReader: record {name} has inconsistent sizes")
        self.f.seek(info.header_offset)
        header = self.f.read(_LOCAL_HEADER.size)
        if len(header) != _LOCAL_HEADER.size or header[:4] != b"PK\x03\x04":
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: bad local file header")
        fields = _LOCAL_HEADER.unpack(header)
        start = info.header_offset + _LOCAL_HEADER.size + fields[9] + fields[10]
        if start + info.file_size > self.file_size:
            raise RuntimeError(
                f"PytorchStreamReader failed reading file {name}: the record claims {info.file_size} bytes at offset "
                f"{start}, past the end of the {self.file_size}-byte archive (truncated file?)"
            )
        return start, info.file_size

    def has_record(self, name: str) -> bool:
        return name in self.records

    def span(self, name: str) -> tuple[int, int]:
        """(offset of the record's bytes in the file, their length), checked against the file."""
        info = self.records.get(name)
        if info is None:
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not found")
        if info.compress_type != zipfile.ZIP_STORED:
            raise RuntimeError(
                f"PytorchStreamReader: record {name} is compressed (method {info.compress_type}); checkpoints hold "
                "stored (uncompressed) records only"
            )
        return self.spans[name]

    def check_crc(self, name: str, data: Any) -> None:
        self._check_crc_value(name, _C._crc32(data))

    def _check_crc_value(self, name: str, crc: int) -> None:
        if crc != self.records[name].CRC:
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: invalid crc (the data is corrupt)")

    def read_into(self, name: str, buf: Any) -> None:
        """Reads the record straight into ``buf`` (a storage's memory), checking its CRC on the way.

        The bytes arrive in chunks of ``_READ_CHUNK`` (readinto: one copy from the file, or from
        an ``io.BytesIO``'s own buffer) and each chunk is checksummed while still in the core's
        cache, so the check costs no second trip through memory. (``BytesIO.getbuffer()`` would
        give one fused copy + CRC pass, but on a BytesIO made from bytes it first copies the
        whole file out of the shared bytes object: a 64 MB checkpoint paid a 64 MB copy and its
        page faults per load.)
        """
        start, n = self.span(name)
        view = memoryview(buf).cast("B")
        if n != len(view):
            raise RuntimeError(f"PytorchStreamReader: record {name} holds {n} bytes, the storage {len(view)}")
        self.f.seek(start)
        crc = 0
        got = 0
        readinto = getattr(self.f, "readinto", None)
        while got < n:
            chunk = view[got : min(n, got + _READ_CHUNK)]
            if readinto is not None:
                k = readinto(chunk)
            else:  # a file-like object with read() only
                data = self.f.read(len(chunk))
                k = len(data)
                chunk[:k] = data
            if not k:
                raise RuntimeError(f"PytorchStreamReader failed reading file {name}: unexpected end of file")
            crc = _C._crc32(chunk[:k], crc)
            got += k
        self._check_crc_value(name, crc)

    def get_record(self, name: str) -> bytes:
        start, n = self.span(name)
        self.f.seek(start)
        data = self.f.read(n)
        if len(data) != n:
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: unexpected end of file")
        self.check_crc(name, data)
        return data


def _check_record_name(name: str) -> None:
    """A record name is ``<prefix>/<record>``: refuse what would make it a path outside one folder."""
    what = None
    if "\x00" in name:
        what = "contains a NUL byte"
    elif name.startswith("/") or name.startswith("\\"):
        what = "is an absolute path"
    elif any(part in ("..", ".") for part in name.replace("\\", "/").split("/")):
        what = "has a '..' or '.' path component"
    if what is not None:
        raise RuntimeError(
            f"PytorchStreamReader failed reading zip archive: the record name {name!r} {what}; a checkpoint's "
            "records lie in one folder named by a plain relative prefix (a corrupt or tampered archive)"
        )


class _ArchiveWriter:
    """Writes stored records whose bytes start on STORAGE_ALIGNMENT boundaries."""

    def __init__(self, f: IO[bytes], prefix: str) -> None:
        self.prefix = prefix
        self.zf = zipfile.ZipFile(f, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True)
        self.start = self.zf.start_dir

    def write_record(self, name: str, data: Any) -> None:
        view = memoryview(data).cast("B") if not isinstance(data, bytes) else data
        n = len(view)
        info = zipfile.ZipInfo(f"{self.prefix}/{name}", date_time=(1980, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_STORED
        info.file_size = n
        zip64 = n * 1.05 > zipfile.ZIP64_LIMIT
        # Local header = 30 + name + extra (+ 20 bytes of zip64 sizes): pad the extra so the data aligns.
        offset = self.zf.fp.tell() - self.start  # type: ignore[union-attr]
        base = offset + _LOCAL_HEADER.size + len(info.filename.encode("utf-8")) + (20 if zip64 else 0)
        pad = -base % STORAGE_ALIGNMENT
        if pad:
            if pad < 4:
                pad += STORAGE_ALIGNMENT
            info.extra = struct.pack("<HH", _PAD_EXTRA_ID, pad - 4) + b"Z" * (pad - 4)
        with self.zf.open(info, mode="w", force_zip64=zip64) as w:
            chunk = 1 << 26
            for i in range(0, n, chunk):
                w.write(view[i : i + chunk])

    def close(self) -> None:
        self.zf.close()


# ---- save ---------------------------------------------------------------------------------
class _Pickler(pickle._Pickler):  # type: ignore[misc]
    """Protocol-2 pickler writing tensors, dtypes, devices and sizes under PyTorch's names."""

    dispatch: ClassVar[dict[type, Any]] = dict(pickle._Pickler.dispatch)  # type: ignore[attr-defined]
    # set by pickle._Pickler.__init__ (typeshed leaves the pure-Python pickler's internals out)
    write: Callable[[bytes], Any]
    memoize: Callable[[Any], None]

    def __init__(self, file: IO[bytes], protocol: int) -> None:
        super().__init__(file, protocol)
        self.storages: dict[int, tuple[str, StorageImpl]] = {}  # id(storage) -> (key, storage)
        self.storage_dtypes: dict[int, Any] = {}

    def _storage_key(self, storage: StorageImpl, dtype: Any) -> str:
        sid = id(storage)
        if sid in self.storages:
            if storage.nbytes and self.storage_dtypes[sid] != dtype:
                raise RuntimeError(
                    "Cannot save multiple tensors or storages that view the same data as different types"
                )
            return self.storages[sid][0]
        key = str(len(self.storages))
        self.storages[sid] = (key, storage)
        self.storage_dtypes[sid] = dtype
        return key

    def persistent_id(self, obj: Any) -> Any:
        if isinstance(obj, _TypedStorage):
            st = obj.storage
            key = self._storage_key(st, obj.dtype)
            return ("storage", _TYPED_STORAGE_TYPES[obj.dtype], key, _location(st), st.nbytes // obj.dtype.itemsize)
        if isinstance(obj, StorageImpl):
            key = self._storage_key(obj, _dtypes.uint8)
            return ("storage", _UNTYPED_STORAGE, key, _location(obj), obj.nbytes)
        return None

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, Tensor):
            return _reduce_tensor(obj)
        if isinstance(obj, Size):
            return (_TORCH_SIZE, (tuple(obj),))
        if isinstance(obj, _device_cls):
            return (_TORCH_DEVICE, (obj.type,) if obj.index is None else (obj.type, obj.index))
        return NotImplemented

    def _save_global_name(self, module: str, name: str, obj: Any) -> None:
        self.write(pickle.GLOBAL + module.encode("utf-8") + b"\n" + name.encode("utf-8") + b"\n")
        self.memoize(obj)

    def save_torch_global(self, obj: _TorchGlobal) -> None:
        self._save_global_name(obj.module, obj.name, obj)

    def save_dtype(self, obj: Any) -> None:
        self._save_global_name("torch", obj._name, obj)

    dispatch[_TorchGlobal] = save_torch_global
    dispatch[StorageType] = save_torch_global
    dispatch[_dtype_cls] = save_dtype


def _location(storage: StorageImpl) -> str:
    d = storage.device
    if d.type == "cuda":
        return f"cuda:{d.index or 0}"
    return d.type


def _reduce_tensor(t: Tensor) -> Any:
    impl = t._impl
    storage = _TypedStorage(impl.storage, impl.dtype)
    args: tuple[Any, ...] = (
        storage,
        impl.storage_offset,
        tuple(impl.sizes),
        tuple(impl.strides),
        t.requires_grad,
        collections.OrderedDict(),
    )
    # Python attributes travel as PyTorch's do: _rebuild_from_type_v2 / _rebuild_parameter_with_state
    state = dict(t.__dict__) if t.__dict__ else None
    if type(t).__name__ == "Parameter" and type(t) is not Tensor:
        data = _wrap(TensorImpl(impl.storage, impl.dtype, impl.sizes, impl.strides, impl.storage_offset))
        if state:
            return (_REBUILD_PARAMETER_WITH_STATE, (data, t.requires_grad, collections.OrderedDict(), state))
        return (_REBUILD_PARAMETER, (data, t.requires_grad, collections.OrderedDict()))
    if state:
        return (_REBUILD_FROM_TYPE_V2, (_REBUILD_TENSOR_V2, _TORCH_TENSOR, args, state))
    return (_REBUILD_TENSOR_V2, args)


def _host_bytes(storage: StorageImpl) -> Any:
    if storage.device.type == "cpu":
        return storage
    t = _wrap(TensorImpl(storage, _dtypes.uint8, [storage.nbytes], [1], 0))
    return t.cpu()._impl.storage


def save(
    obj: Any,
    f: Any,
    pickle_module: Any = pickle,
    pickle_protocol: int = 2,
    _use_new_zipfile_serialization: bool = True,
    _disable_byteorder_record: bool = False,
) -> None:
    """save(obj, f, pickle_module=pickle, pickle_protocol=2) -> None

    Writes ``obj`` (tensors, nested dicts/lists/tuples, OrderedDict state dicts, numbers,
    strings, dtypes, devices) to ``f`` -- a path or a writable binary file object -- in
    PyTorch's zip checkpoint format; ``torch.load`` reads the result.

        >>> ember.aten.save({"w": ember.aten.ones(2, 3)}, "model.pt")
    """
    if not _use_new_zipfile_serialization:
        raise NotImplementedError(
            "save: only the zip checkpoint format (_use_new_zipfile_serialization=True) is supported"
        )
    if pickle_module is not pickle:
        raise ValueError("save: ember writes checkpoints with its own protocol-2 pickler; pickle_module must be pickle")
    if not isinstance(pickle_protocol, builtins.int) or not 2 <= pickle_protocol <= pickle.HIGHEST_PROTOCOL:
        raise ValueError(
            f"save: pickle_protocol must be between 2 and {pickle.HIGHEST_PROTOCOL}, got {pickle_protocol}"
        )
    buf = io.BytesIO()
    pickler = _Pickler(buf, pickle_protocol)
    pickler.dump(obj)
    if isinstance(f, (str, os.PathLike)):
        parent = os.path.dirname(os.path.abspath(os.fspath(f)))
        if not os.path.isdir(parent):
            raise RuntimeError(f"Parent directory {parent} does not exist.")
        stem = os.path.splitext(os.path.basename(os.fspath(f)))[0]
        prefix = stem if stem and stem.isprintable() and "/" not in stem else "archive"
        with open(f, "wb") as fh:
            _write_archive(fh, prefix, buf.getvalue(), pickler.storages, _disable_byteorder_record)
    else:
        if not hasattr(f, "write"):
            raise AttributeError(
                "expected 'f' to be string, path, or a file-like object with a 'write' attribute, got "
                f"{type(f).__name__}"
            )
        _write_archive(f, "archive", buf.getvalue(), pickler.storages, _disable_byteorder_record)


def _write_archive(
    f: IO[bytes], prefix: str, data_pkl: bytes, storages: dict[int, tuple[str, StorageImpl]], no_byteorder: bool
) -> None:
    seekable = getattr(f, "seekable", lambda: False)()
    buffer = None if seekable else io.BytesIO()
    target = f if buffer is None else buffer
    w = _ArchiveWriter(target, prefix)
    w.write_record("data.pkl", data_pkl)
    w.write_record(".format_version", b"1")
    w.write_record(".storage_alignment", str(STORAGE_ALIGNMENT).encode())
    if not no_byteorder:
        w.write_record("byteorder", sys.byteorder.encode())
    for key, storage in sorted(storages.values(), key=lambda ks: builtins.int(ks[0])):
        w.write_record(f"data/{key}", _host_bytes(storage))
    w.write_record("version", f"{FILE_FORMAT_VERSION}\n".encode())
    w.close()
    if buffer is not None:
        f.write(buffer.getvalue())


# ---- load ---------------------------------------------------------------------------------
def _restore_location_fn(map_location: Any) -> Callable[[StorageImpl, str], Any]:
    if map_location is None:
        return lambda storage, location: _restore(storage, location)
    if isinstance(map_location, dict):
        return lambda storage, location: _restore(storage, _as_location(map_location.get(location, location)))
    if isinstance(map_location, (str, bytes)):
        loc = map_location.decode() if isinstance(map_location, bytes) else map_location
        return lambda storage, location: _restore(storage, loc)
    if isinstance(map_location, _device_cls):
        return lambda storage, location: _restore(storage, str(map_location))
    if callable(map_location):

        def restore(storage: StorageImpl, location: str) -> Any:
            result = map_location(storage, location)
            if result is None:
                return _restore(storage, location)
            if isinstance(result, Tensor):
                result = result._impl.storage
            if not isinstance(result, StorageImpl):
                raise TypeError(f"map_location returned {type(result).__name__}, expected a storage or None")
            return result

        return restore
    raise TypeError(f"map_location should be a str, device, dict or callable, got {type(map_location).__name__}")


def _as_location(x: Any) -> str:
    return str(x) if isinstance(x, _device_cls) else x


def _restore(storage: StorageImpl, location: str) -> StorageImpl:
    try:
        dev = _device_cls(location)
    except Exception:
        raise RuntimeError(
            f"don't know how to restore data location of ember storage (tagged with {location})"
        ) from None
    if dev.type == "cpu":
        return storage
    if dev.type == "cuda":
        if not cuda.is_available():
            raise RuntimeError(
                "Attempting to deserialize object on a CUDA device but ember.aten.cuda.is_available() is False. If "
                "you are running on a CPU-only machine, please use ember.aten.load with "
                "map_location=ember.aten.device('cpu') to map your storages to the CPU."
            )
        index = dev.index or 0
        if index >= cuda.device_count():
            raise RuntimeError(
                f"Attempting to deserialize object on CUDA device {index} but ember.aten.cuda.device_count() is "
                f"{cuda.device_count()}. Please use ember.aten.load with map_location to map your storages to an "
                "existing device."
            )
        t = _wrap(TensorImpl(storage, _dtypes.uint8, [storage.nbytes], [1], 0))
        return t.to(_device_cls("cuda", index))._impl.storage
    raise RuntimeError(f"don't know how to restore data location of ember storage (tagged with {location})")


_UNSAFE_ADVICE = (
    "Re-running `ember.aten.load` with `weights_only` set to `False` will likely succeed, but it can result in "
    "arbitrary code execution. Do it only if you got the file from a trusted source."
)


def _weights_only_message(msg: str) -> str:
    """PyTorch's wording for what the allowlist refused (and only that: other errors keep their own message)."""
    if "was not an allowed global by default" in msg:
        return (
            "Weights only load failed. This file can still be loaded, to do so you have two options, do those steps "
            f"only if you trust the source of the checkpoint.\n\t(1) {_UNSAFE_ADVICE}\n\t(2) Alternatively, to load "
            "with `weights_only=True` please check the recommended steps in the following error message.\n\t"
            "WeightsUnpickler error: " + msg
        )
    return f"Weights only load failed. {_UNSAFE_ADVICE}\n\nWeightsUnpickler error: {msg}"


_TRUE_VALUES = ("1", "y", "yes", "true")


def _env_flag(*names: str) -> str | None:
    """The first of ``names`` set to a true value (PyTorch's 1 / y / yes / true, any case), else None."""
    for name in names:
        if os.getenv(name, "0").lower() in _TRUE_VALUES:
            return name
    return None


def _weights_only_from_env(weights_only: bool | None) -> bool:
    # PyTorch 2.13's rules: FORCE_WEIGHTS_ONLY wins over an explicit weights_only=False;
    # FORCE_NO_WEIGHTS_ONLY only changes a weights_only the caller did not pass.
    force = _env_flag("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "EMBER_FORCE_WEIGHTS_ONLY_LOAD")
    force_no = _env_flag("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "EMBER_FORCE_NO_WEIGHTS_ONLY_LOAD")
    if force and force_no:
        raise RuntimeError(f"Only one of `{force}` or `{force_no}` should be set, but both were set.")
    if force:
        return True
    if weights_only is None:
        if force_no:
            warnings.warn(
                f"Environment variable {force_no} detected, since the `weights_only` argument was not explicitly "
                "passed to `ember.aten.load`, forcing weights_only=False.",
                UserWarning,
                stacklevel=3,
            )
            return False
        return True
    return builtins.bool(weights_only)


class _FullUnpickler(pickle.Unpickler):
    """weights_only=False: plain pickle, with PyTorch's names mapped to ember's objects."""

    def __init__(self, file: IO[bytes], persistent_load: Callable[[Any], Any]) -> None:
        super().__init__(file)
        self._pl = persistent_load
        self._torch = _allowed_globals()

    def persistent_load(self, pid: Any) -> Any:
        return self._pl(pid)

    def find_class(self, module: str, name: str) -> Any:
        full = f"{module}.{name}"
        if full in self._torch:
            return self._torch[full]
        if module == "torch" or module.startswith("torch."):
            obj = _weights_only_unpickler.resolve_torch_name(module, name)  # torch.nn.modules.linear.Linear & co.
            if obj is not None:
                return obj
            raise pickle.UnpicklingError(
                f"ember cannot load the PyTorch object {full}"
                + ("" if _weights_only_unpickler._torch_names else " (install ember-torch to map torch.nn.* names)")
            )
        return super().find_class(module, name)


def load(
    f: Any,
    map_location: Any = None,
    pickle_module: Any = None,
    *,
    weights_only: bool | None = None,
    mmap: bool | None = None,
    **pickle_load_args: Any,
) -> Any:
    """load(f, map_location=None, *, weights_only=None, mmap=False) -> Any

    Reads a checkpoint written by ``ember.aten.save`` or ``torch.save`` (zip format).
    ``weights_only=True`` (the default when it is not passed) unpickles through the
    weights-only unpickler: tensors, containers, numbers, strings and what
    ``add_safe_globals`` allowed; anything else raises ``pickle.UnpicklingError``.
    ``TORCH_FORCE_WEIGHTS_ONLY_LOAD`` / ``EMBER_FORCE_WEIGHTS_ONLY_LOAD`` set to 1, y,
    yes or true force ``weights_only=True``; ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD`` /
    ``EMBER_FORCE_NO_WEIGHTS_ONLY_LOAD`` make an unpassed ``weights_only`` False (with a
    warning), as in PyTorch. ``map_location`` (str, device, dict ``{saved: new}`` or
    ``callable(storage, location)``) moves storages; ``mmap=True`` maps them from the
    file (copy-on-write) instead of reading them; CRCs are checked either way.

        >>> sd = ember.aten.load("model.pt", map_location="cpu")
    """
    weights_only = _weights_only_from_env(weights_only)
    if weights_only and pickle_module is not None and pickle_module is not pickle:
        raise RuntimeError(
            "Can not safely load weights when explicit pickle_module is specified (weights_only=True is the default)"
        )
    if pickle_module is not None and pickle_module is not pickle:
        raise RuntimeError("load: ember reads checkpoints with its own unpickler; pickle_module must be pickle or None")
    if pickle_load_args and set(pickle_load_args) - {"encoding"}:
        raise TypeError(
            f"load() got an unexpected keyword argument '{next(iter(set(pickle_load_args) - {'encoding'}))}'"
        )
    if mmap:
        if not isinstance(f, (str, os.PathLike)):
            raise ValueError("f must be a file path in order to use the mmap argument")
        with open(f, "rb") as fh:
            mm = _mmap.mmap(fh.fileno(), 0, access=_mmap.ACCESS_COPY) if os.fstat(fh.fileno()).st_size else None
            return _load(fh, map_location, weights_only, mm)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return _load(fh, map_location, weights_only, None)
    if isinstance(f, (bytes, bytearray)):
        raise TypeError("load: expected a path or a binary file object, got bytes (wrap it in io.BytesIO)")
    if not hasattr(f, "read") or not hasattr(f, "seek"):
        raise AttributeError(f"load: expected a path or a seekable binary file object, got {type(f).__name__}")
    return _load(f, map_location, weights_only, None)


def get_unsafe_globals_in_checkpoint(f: Any) -> list[str]:
    """The globals in a checkpoint that ``load(weights_only=True)`` would refuse (nothing is unpickled).

    >>> ember.aten.serialization.get_unsafe_globals_in_checkpoint("model.pt")
    ['__main__.Config']
    """
    import _compat_pickle
    import pickletools

    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            return get_unsafe_globals_in_checkpoint(fh)
    _check_zip_magic(f)
    reader = _ArchiveReader(f)
    data = reader.get_record("data.pkl")
    allowed = set(_allowed_globals()) | {"collections.OrderedDict", "collections.Counter", "_codecs.encode"}
    allowed |= {"builtins.bytearray", "builtins.set", "builtins.complex"}
    allowed |= set(_weights_only_unpickler._user_allowed())
    found: set[str] = set()
    try:
        for op, arg, _ in pickletools.genops(data):
            if op.name == "GLOBAL":
                module, name = str(arg).split(" ", 1)
                if (module, name) in _compat_pickle.NAME_MAPPING:
                    module, name = _compat_pickle.NAME_MAPPING[(module, name)]
                elif module in _compat_pickle.IMPORT_MAPPING:
                    module = _compat_pickle.IMPORT_MAPPING[module]
                found.add(f"{module}.{name}")
    except Exception as e:
        raise pickle.UnpicklingError(f"get_unsafe_globals_in_checkpoint: malformed pickle data ({e})") from None
    return sorted(found - allowed)


def _check_zip_magic(f: IO[bytes]) -> None:
    start = f.tell()
    magic = f.read(4)
    f.seek(start)
    if magic[:2] != b"PK":
        if magic[:1] == b"\x80":
            raise RuntimeError(
                "ember.aten.load: this is a legacy (pre-zip) PyTorch checkpoint or a bare pickle; ember reads only the "
                "zip checkpoint format (torch.save since PyTorch 1.6)"
            )
        raise RuntimeError(
            "PytorchStreamReader failed reading zip archive: failed finding central directory (not a zip file)"
        )


def _load(f: IO[bytes], map_location: Any, weights_only: bool, mm: Any) -> Any:
    _check_zip_magic(f)
    reader = _ArchiveReader(f)
    for name in ("data.pkl",):
        if not reader.has_record(name):
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not found")
    _check_version(reader)
    byteorder = "little"
    if reader.has_record("byteorder"):
        bo = reader.get_record("byteorder")
        if bo not in (b"little", b"big"):
            raise ValueError("Unknown endianness type: " + bo.decode("utf-8", "replace"))
        byteorder = bo.decode()
    restore = _restore_location_fn(map_location)
    loaded: dict[str, StorageImpl] = {}
    bools_checked: set[str] = set()

    def persistent_load(pid: Any) -> Any:
        if type(pid) is not tuple or len(pid) != 5:
            raise UnpicklingError(
                f"persistent id must be a 5-tuple ('storage', type, key, location, numel), got {pid!r:.100}"
            )
        typename, storage_type, key, location, numel = pid
        if isinstance(typename, bytes):
            typename = typename.decode("ascii", "replace")
        if typename != "storage":
            raise UnpicklingError(f"Unknown typename for persistent_load, expected 'storage' but got '{typename}'")
        if not isinstance(storage_type, StorageType):
            raise UnpicklingError(f"persistent id names {storage_type!r:.80}, not a storage type")
        if isinstance(location, bytes):
            location = location.decode("ascii", "replace")
        if type(key) is not str or type(location) is not str:
            raise UnpicklingError("persistent id: key and location must be strings")
        if type(numel) is not builtins.int or numel < 0:
            raise UnpicklingError(f"persistent id: numel must be a non-negative int, got {numel!r:.40}")
        dtype = storage_type.dtype
        if key not in loaded:
            itemsize = 1 if dtype is None else dtype.itemsize
            loaded[key] = _read_storage(reader, mm, key, numel * itemsize, itemsize, byteorder, restore, location)
        st = loaded[key]
        if dtype is _dtypes.bool and key not in bools_checked:
            _normalize_bool_bytes(st)
            bools_checked.add(key)
        return st if dtype is None else _TypedStorage(st, dtype)

    data = reader.get_record("data.pkl")
    if weights_only:
        try:
            result = _weights_only_unpickler.Unpickler(
                data,
                _allowed_globals(),
                persistent_load,
                unsupported=_unsupported_globals(),
                build_hook=_build_tensor_state,
                newobj_hook=_newobj,
                call_overrides={Tensor: _checked_tensor_constructor()},
            ).load()
        except _weights_only_unpickler.RefusedByAllowlist as e:
            # Only a refusal gets the weights_only=False advice: a CRC error, a size mismatch
            # or a missing device would fail the same way without the allowlist.
            raise pickle.UnpicklingError(_weights_only_message(str(e))) from None
    else:
        result = _FullUnpickler(io.BytesIO(data), persistent_load).load()
    return _untype(result)


# ---- what the pickle may build itself ---------------------------------------------------------
# Storages are exactly the bytes of their records, so what they cost is bounded by the file.
# The legacy constructor torch.Tensor(...) (allowlisted as PyTorch does; torch.save never
# writes a call to it) would allocate what a few bytes of pickle ask for: its tensors
# hold at most this many bytes per load, and are zero-filled, never uninitialised memory.
MAX_CONSTRUCTED_BYTES = 16 << 20
# PyTorch's message for tensor data nested too deeply ("too many dimensions 'list'"), at
# ember's limit: its tensors have at most 64 dimensions (PyTorch builds up to 128).
_MAX_DATA_DIMS = 64


def _checked_tensor_constructor() -> Callable[..., Tensor]:
    """``torch.Tensor(*args)`` as a pickle's REDUCE may call it: sizes, a Size or nested number lists."""
    left = [MAX_CONSTRUCTED_BYTES]

    def take(numel: int, what: str) -> None:
        nbytes = numel * _dtypes.get_default_dtype().itemsize
        if nbytes > left[0]:
            raise UnpicklingError(
                f"torch.Tensor({what}): the checkpoint asks for {nbytes} bytes of tensor data built by the pickle "
                f"itself; a load builds at most {MAX_CONSTRUCTED_BYTES} bytes that way (tensor data belongs in the "
                "archive's storage records)"
            )
        left[0] -= nbytes

    def new(*args: Any) -> Tensor:
        if not args:
            return Tensor()
        sizes = tuple(args[0]) if len(args) == 1 and type(args[0]) is Size else args
        if all(type(n) is builtins.int for n in sizes):
            if len(sizes) > 64 or any(n < 0 for n in sizes):
                raise UnpicklingError(f"torch.Tensor: invalid sizes {list(sizes)!r:.100}")
            numel, partial = 1, 1
            for n in sizes:
                numel *= n
                partial *= max(n, 1)
            if partial >= 1 << 63:  # c10's size arithmetic overflows (even where a zero dim makes numel 0)
                raise UnpicklingError(f"torch.Tensor: sizes {list(sizes)!r:.100} overflow int64")
            take(numel, ", ".join(map(str, sizes)))
            from ember.aten import zeros  # the generated factory (this module is imported before it exists)

            return zeros(sizes, dtype=_dtypes.get_default_dtype())  # PyTorch leaves these uninitialised
        if len(args) == 1 and type(args[0]) in (list, tuple):
            shape = _data_shape(args[0])
            cells = 0  # sequences and numbers the check below visits (shared sublists count each time)
            numel = 1
            for n in shape:
                numel *= n
                cells += numel
            take(cells, f"<{type(args[0]).__name__} of shape {shape}>")
            _check_data(args[0], shape)
            return Tensor(args[0])
        raise UnpicklingError(
            f"torch.Tensor called with unsupported arguments {tuple(type(a).__name__ for a in args)!r:.100}"
        )

    return new


def _data_shape(data: Any) -> list[int]:
    """The shape nested lists claim along their first elements (a list holding itself never ends: refused)."""
    shape: list[int] = []
    x = data
    while type(x) in (list, tuple):
        if len(shape) == _MAX_DATA_DIMS:
            raise ValueError(f"too many dimensions '{type(x).__name__}'")
        shape.append(len(x))
        if not x:
            break
        x = x[0]
    return shape


def _check_data(data: Any, shape: list[int]) -> None:
    """Every sequence has the length ``shape`` says and every leaf is a number (iteratively: no recursion)."""
    todo = [(data, 0)]
    ndim = len(shape)
    while todo:
        x, d = todo.pop()
        if d == ndim:
            if type(x) not in (builtins.bool, builtins.int, builtins.float):
                raise ValueError(f"torch.Tensor: tensor data holds a {type(x).__name__} where a number belongs")
            continue
        if type(x) not in (list, tuple):
            raise ValueError(f"expected sequence of length {shape[d]} at dim {d} (got {type(x).__name__})")
        if len(x) != shape[d]:
            raise ValueError(f"expected sequence of length {shape[d]} at dim {d} (got {len(x)})")
        todo.extend((v, d + 1) for v in x)


def _normalize_bool_bytes(storage: StorageImpl) -> None:
    """A file's bool bytes 2..255 become 1 as they enter: every kernel assumes bool bytes are 0 or 1."""
    if not storage.nbytes:
        return
    u8 = _wrap(TensorImpl(storage, _dtypes.uint8, [storage.nbytes], [1], 0))
    if builtins.int(u8.max().item()) > 1:  # read first: mmap'd pages are written (copied) only when needed
        u8.clamp_(max=1)


def _untype(result: Any) -> Any:
    # A bare typed storage (torch.save(t.storage())) comes back as its untyped bytes.
    return result.storage if isinstance(result, _TypedStorage) else result


def _check_version(reader: _ArchiveReader) -> None:
    for name in ("version", ".data/version"):
        if reader.has_record(name):
            raw = reader.get_record(name)
            break
    else:
        raise RuntimeError("PytorchStreamReader failed locating file version: file not found")
    try:
        version = builtins.int(raw.decode("ascii").strip())
    except ValueError:
        raise RuntimeError(f"PytorchStreamReader: the version record holds {raw[:20]!r}, not a number") from None
    if version > _MAX_READ_VERSION:
        raise RuntimeError(
            f"Attempted to read a PyTorch file with version {version}, but the maximum supported version for reading "
            f"is {_MAX_READ_VERSION}. Your ember installation may be too old."
        )
    if version < 1:
        raise RuntimeError(f"Attempted to read a PyTorch file with version {version}, which is not a valid version")


def _read_storage(
    reader: _ArchiveReader,
    mm: Any,
    key: str,
    nbytes: int,
    itemsize: int,
    byteorder: str,
    restore: Callable[[StorageImpl, str], Any],
    location: str,
) -> StorageImpl:
    name = f"data/{key}"
    start, size = reader.span(name)  # the record exists and lies inside the file
    if size != nbytes:
        raise RuntimeError(
            f"PytorchStreamReader: record {name} holds {size} bytes but the checkpoint describes a storage of "
            f"{nbytes} bytes"
        )
    if mm is not None:
        view = memoryview(mm)[start : start + size]
        reader.check_crc(name, view)  # as without mmap: a corrupt record never loads (this reads every page once)
        storage = StorageImpl.from_buffer(view) if size else StorageImpl(0)
    else:
        storage = StorageImpl(size)
        if size:
            reader.read_into(name, storage)
    if byteorder != sys.byteorder and itemsize > 1 and size:
        import numpy as np

        np.frombuffer(storage, dtype=f"u{itemsize}").byteswap(inplace=True)  # type: ignore[call-overload]
    return restore(storage, location)
