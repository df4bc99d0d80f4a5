"""The safetensors format: ``save_file``/``load_file``/``safe_open`` (the ``safetensors`` package's API).

A file is ``<u64 little-endian N><N bytes of JSON header><data>``. The header maps
each tensor name to ``{"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}``
(offsets into the data, which follows the header) plus an optional ``"__metadata__"``
dict of strings. The rules enforced when reading (those of the reference
implementation): N at most 100 MB and inside the file, the header is UTF-8 JSON
starting with ``{``, every tensor's byte length equals numel x itemsize, the tensors
tile the data exactly (sorted by offset, each starting where the last ended, the last
ending at the end of the file), no name appears twice. Nothing is allocated before
the header passed those checks; bool bytes other than 0 and 1 are read as 1 (kernels
assume 0/1). Files are written as the package writes them: tensors ordered by dtype
alignment then name, the header padded with spaces to 8 bytes.
"""

from __future__ import annotations

import json
import mmap as _mmap
import os
import struct
from typing import Any

import ember.c10py as _c10
from ember.c10py import StorageImpl, TensorImpl

from . import _dtypes
from ._tensor import Tensor, _wrap
from .serialization import _normalize_bool_bytes

__all__ = ["SafetensorError", "load", "load_file", "safe_open", "save", "save_file"]

MAX_HEADER_SIZE = 100_000_000

# safetensors dtype code <-> ember dtype (one table)
_CODES = {
    "BOOL": _dtypes.bool,
    "U8": _dtypes.uint8,
    "I8": _dtypes.int8,
    "I16": _dtypes.int16,
    "I32": _dtypes.int32,
    "I64": _dtypes.int64,
    "F16": _dtypes.float16,
    "BF16": _dtypes.bfloat16,
    "F32": _dtypes.float32,
    "F64": _dtypes.float64,
}
_CODE_OF = {d._name: code for code, d in _CODES.items()}
# The package's dtype order (its Rust enum's): files list tensors by this, descending, then by name.
_DTYPE_ORDER = (
    "BOOL", "F4", "F6_E2M3", "F6_E3M2", "U8", "I8", "F8_E5M2", "F8_E4M3", "F8_E8M0", "I16", "U16", "F16", "BF16",
    "I32", "U32", "F32", "C64", "F64", "I64", "U64",
)  # fmt: skip
_KNOWN_UNSUPPORTED = ("U16", "U32", "U64", "F8_E5M2", "F8_E4M3", "F8_E8M0", "F4", "F6_E2M3", "F6_E3M2", "C64")


class SafetensorError(Exception):
    """A malformed or unsupported safetensors file (the package's ``SafetensorError``)."""


def _header_error(what: str) -> SafetensorError:
    return SafetensorError(f"Error while deserializing header: {what}")


# ---- reading -------------------------------------------------------------------------------
def _parse_header(head8: bytes, read_header: Any, total: int) -> tuple[int, dict[str, Any], dict[str, str] | None]:
    """(data start, {name: (dtype, shape, begin, end)}, metadata), all checked against `total` file bytes."""
    if len(head8) < 8:
        raise _header_error("HeaderTooSmall")
    (n,) = struct.unpack("<Q", head8)
    if n > MAX_HEADER_SIZE:
        raise _header_error("HeaderTooLarge")
    if 8 + n > total:
        raise _header_error("InvalidHeaderLength")
    raw = read_header(n)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _header_error("InvalidHeader") from None
    if not text.startswith("{"):
        raise _header_error("InvalidHeaderStart")

    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        d: dict[str, Any] = {}
        for k, v in pairs:
            if k in d:
                raise _header_error(f"InvalidHeaderDeserialization (duplicate key {k!r})")
            d[k] = v
        return d

    try:
        header = json.loads(text, object_pairs_hook=no_duplicates)
    except SafetensorError:
        raise
    except (ValueError, RecursionError) as e:
        raise _header_error(f"InvalidHeaderDeserialization ({e})") from None
    if not isinstance(header, dict):
        raise _header_error("InvalidHeaderDeserialization (the header is not a JSON object)")
    metadata = header.pop("__metadata__", None)
    if metadata is not None and (
        not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values())
    ):
        raise _header_error("InvalidHeaderDeserialization (__metadata__ must map strings to strings)")
    data_len = total - 8 - n
    entries: dict[str, Any] = {}
    for name, info in header.items():
        if not isinstance(info, dict) or set(info) != {"dtype", "shape", "data_offsets"}:
            raise _header_error(
                f"InvalidHeaderDeserialization (tensor {name!r} needs exactly dtype, shape, data_offsets)"
            )
        code, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
        if code not in _CODES:
            if code in _KNOWN_UNSUPPORTED:
                raise SafetensorError(f"tensor {name!r}: dtype {code} is not supported by ember")
            raise _header_error(f"InvalidHeaderDeserialization (unknown dtype {code!r:.40})")
        if not isinstance(shape, list) or not all(type(s) is int and s >= 0 for s in shape) or len(shape) > 64:
            raise _header_error(f"InvalidHeaderDeserialization (tensor {name!r}: bad shape)")
        if (
            not isinstance(offsets, list) or len(offsets) != 2
            or not all(type(o) is int and o >= 0 for o in offsets) or offsets[0] > offsets[1]
        ):  # fmt: skip
            raise _header_error(f"InvalidHeaderDeserialization (tensor {name!r}: bad data_offsets)")
        numel = 1
        for s in shape:
            numel *= s
        if numel * _CODES[code].itemsize >= 2**63:
            raise SafetensorError(f"Error while deserializing header: ValidationOverflow (tensor {name!r})")
        entries[name] = (_CODES[code], tuple(shape), offsets[0], offsets[1])
    # the tensors must tile the data exactly
    pos = 0
    for name, (dtype, shape, begin, end) in sorted(entries.items(), key=lambda kv: (kv[1][2], kv[1][3])):
        if begin != pos:
            raise SafetensorError(f"Error while deserializing header: InvalidOffset({name})")
        numel = 1
        for s in shape:
            numel *= s
        if end - begin != numel * dtype.itemsize:
            raise SafetensorError(
                f"Error while deserializing header: TensorInvalidInfo ({name}: {end - begin} bytes for shape "
                f"{list(shape)} of {dtype})"
            )
        pos = end
    if pos != data_len:
        raise SafetensorError("Error while deserializing header: MetadataIncompleteBuffer")
    return 8 + n, entries, metadata


def _tensor_from(buf: Any, start: int, entry: Any) -> Tensor:
    dtype, shape, begin, end = entry
    storage = StorageImpl(end - begin)
    if end > begin:
        memoryview(storage)[:] = buf[start + begin : start + end]
    if dtype is _dtypes.bool:
        _normalize_bool_bytes(storage)  # a file's bytes 2..255 become True (1): kernels assume 0/1

    return _wrap(TensorImpl(storage, dtype, shape, _c10.contiguous_strides(shape), 0))


def _to_device(t: Tensor, device: Any) -> Tensor:
    if device is None or str(device) == "cpu":
        return t
    return t.to(device)


def load(data: bytes, device: Any = "cpu") -> dict[str, Tensor]:
    """load(data: bytes) -> dict[str, Tensor]: the tensors of a safetensors byte string."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"load: expected bytes, got {type(data).__name__}")
    view = memoryview(data).cast("B")
    start, entries, _ = _parse_header(bytes(view[:8]), lambda n: bytes(view[8 : 8 + n]), len(view))
    return {name: _to_device(_tensor_from(view, start, e), device) for name, e in entries.items()}


class safe_open:
    """safe_open(filename, framework="pt", device="cpu"): lazy, memory-mapped access to a safetensors file.

    >>> with ember.aten.safetensors.safe_open("model.safetensors", framework="pt") as f:
    ...     w = f.get_tensor("weight")
    """

    def __init__(self, filename: Any, framework: str = "pt", device: Any = "cpu") -> None:
        if framework not in ("pt", "ember", "np", "numpy"):
            raise SafetensorError(f"framework {framework!r} is not supported (use 'pt' / 'ember' or 'np')")
        self._framework = framework
        self._device = device
        self._fh = open(filename, "rb")
        try:
            total = os.fstat(self._fh.fileno()).st_size
            self._mm = _mmap.mmap(self._fh.fileno(), 0, access=_mmap.ACCESS_READ) if total else None
            buf = self._mm if self._mm is not None else b""
            self._start, self._entries, self._metadata = _parse_header(
                bytes(buf[:8]), lambda n: bytes(buf[8 : 8 + n]), total
            )
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> safe_open:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        mm = getattr(self, "_mm", None)
        if mm is not None:
            mm.close()
            self._mm = None
        self._fh.close()

    def keys(self) -> list[str]:
        return sorted(self._entries)

    def offset_keys(self) -> list[str]:
        return [k for k, _ in sorted(self._entries.items(), key=lambda kv: kv[1][2])]

    def metadata(self) -> dict[str, str] | None:
        return None if self._metadata is None else dict(self._metadata)

    def get_tensor(self, name: str) -> Any:
        if name not in self._entries:
            raise SafetensorError(f"File does not contain tensor {name}")
        if self._mm is None:
            raise SafetensorError("the file is closed")
        t = _tensor_from(memoryview(self._mm), self._start, self._entries[name])
        if self._framework in ("np", "numpy"):
            return t.numpy()
        return _to_device(t, self._device)

    def get_slice(self, name: str) -> _Slice:
        if name not in self._entries:
            raise SafetensorError(f"File does not contain tensor {name}")
        return _Slice(self, name)


class _Slice:
    """safe_open(...).get_slice(name): shape/dtype without reading; indexing reads the tensor."""

    def __init__(self, f: safe_open, name: str) -> None:
        self._f = f
        self._name = name

    def get_shape(self) -> list[int]:
        return list(self._f._entries[self._name][1])

    def get_dtype(self) -> str:
        return _CODE_OF[self._f._entries[self._name][0]._name]

    def __getitem__(self, index: Any) -> Any:
        return self._f.get_tensor(self._name)[index]


def load_file(filename: Any, device: Any = "cpu") -> dict[str, Tensor]:
    """load_file(filename, device="cpu") -> dict[str, Tensor]"""
    with safe_open(filename, framework="pt", device=device) as f:
        return {k: f.get_tensor(k) for k in f.keys()}


# ---- writing -------------------------------------------------------------------------------
def _check_tensors(tensors: Any, metadata: Any) -> list[tuple[str, Tensor]]:
    if not isinstance(tensors, dict):
        raise TypeError(f"save: expected a dict of tensors, got {type(tensors).__name__}")
    if metadata is not None and (
        not isinstance(metadata, dict)
        or not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())
    ):
        raise TypeError("save: metadata must be a dict of str to str")
    items = []
    for name, t in tensors.items():
        if not isinstance(name, str):
            raise TypeError(f"save: tensor names must be strings, got {type(name).__name__}")
        if name == "__metadata__":
            raise SafetensorError("save: '__metadata__' is reserved and cannot name a tensor")
        if not isinstance(t, Tensor):
            raise TypeError(f"save: {name!r} is a {type(t).__name__}, not a tensor")
        if not t.is_contiguous():
            raise ValueError(
                f"You are trying to save a non contiguous tensor: `{name}` which is not allowed. It either means you "
                "are trying to save tensors which are reference of each other in which case it's recommended to save "
                "only the full tensors, and reslice at load time, or simply call `.contiguous()` on your tensor to "
                "pack it before saving."
            )
        items.append((name, t))
    # tensors sharing memory would be written twice and come back unshared (on any device:
    # addresses are compared within one device)
    spans: list[tuple[str, int, int, str]] = sorted(
        (str(t.device), t.data_ptr(), t.data_ptr() + t.nbytes, n) for n, t in items if t.nbytes
    )
    shared = [
        [spans[i - 1][3], spans[i][3]]
        for i in range(1, len(spans))
        if spans[i][0] == spans[i - 1][0] and spans[i][1] < spans[i - 1][2]
    ]
    if shared:
        raise RuntimeError(
            f"Some tensors share memory, this will lead to duplicate memory on disk and potential differences when "
            f"loading them again: {shared}."
        )
    return items


def _serialize(tensors: Any, metadata: Any) -> tuple[bytes, list[Tensor]]:
    items = _check_tensors(tensors, metadata)
    # the package's order: dtype (its enum order) descending, then name
    items.sort(key=lambda nt: (-_DTYPE_ORDER.index(_CODE_OF[nt[1].dtype._name]), nt[0]))
    header: dict[str, Any] = {}
    if metadata is not None:
        header["__metadata__"] = metadata
    pos = 0
    for name, t in items:
        header[name] = {"dtype": _CODE_OF[t.dtype._name], "shape": list(t.shape), "data_offsets": [pos, pos + t.nbytes]}
        pos += t.nbytes
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text, [t for _, t in items]


def _tensor_bytes(t: Tensor) -> Any:
    t = t.detach().cpu().contiguous()
    impl = t._impl
    start = impl.storage_offset * impl.itemsize
    return memoryview(impl.storage)[start : start + impl.nbytes]


def save(tensors: dict[str, Tensor], metadata: dict[str, str] | None = None) -> bytes:
    """save(tensors, metadata=None) -> bytes"""
    head, order = _serialize(tensors, metadata)
    out = bytearray(len(head) + sum(t.nbytes for t in order))  # one buffer, each tensor copied once
    view = memoryview(out)
    view[: len(head)] = head
    pos = len(head)
    for t in order:
        if t.nbytes:
            view[pos : pos + t.nbytes] = _tensor_bytes(t)
            pos += t.nbytes
    return bytes(out)


def save_file(tensors: dict[str, Tensor], filename: Any, metadata: dict[str, str] | None = None) -> None:
    """save_file(tensors, filename, metadata=None): writes a safetensors file.

    >>> ember.aten.safetensors.save_file({"w": ember.aten.ones(2)}, "w.safetensors", {"format": "pt"})
    """
    head, order = _serialize(tensors, metadata)
    with open(filename, "wb") as fh:
        fh.write(head)
        for t in order:
            if t.nbytes:
                fh.write(_tensor_bytes(t))
