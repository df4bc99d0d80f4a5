"""load's record reading: the CRC-32 kernel against zlib, and every way a record reaches its
storage (in-memory BytesIO and real files: chunked readinto, each chunk checksummed in
cache; a read()-only file object; mmap) giving the same tensors, with a corrupt byte caught on each.

State dicts cover odd dtypes, non-contiguous and offset views, shared storages and records
larger than one read chunk, so that chunk boundaries and the CRC's tails are crossed.
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib

import ember.aten as ea
import numpy as np
import pytest
from ember.aten import _C

SIZES = [0, 1, 3, 15, 16, 17, 63, 64, 65, 79, 127, 128, 129, 1000, 4097, 65536 + 13]


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("offset", [0, 1, 7])
@pytest.mark.parametrize("value", [0, 0x12345678, 0xFFFFFFFF])
def test_crc32_matches_zlib(n, offset, value):
    data = np.random.default_rng(n + offset).integers(0, 256, n + offset, dtype=np.uint8).tobytes()
    view = memoryview(data)[offset:]
    assert _C._crc32(view, value) == zlib.crc32(view, value)


@pytest.mark.parametrize("n", SIZES)
def test_copy_crc32_copies_and_sums(n):
    src = np.random.default_rng(n).integers(0, 256, n, dtype=np.uint8)
    dst = np.full(n + 8, 0xAB, dtype=np.uint8)
    crc = _C._copy_crc32(memoryview(dst)[1 : n + 1], src, 7)
    assert crc == zlib.crc32(src.tobytes(), 7)
    np.testing.assert_array_equal(dst[1 : n + 1], src)
    assert dst[0] == 0xAB and (dst[n + 1 :] == 0xAB).all()  # nothing written outside


def test_crc32_continues_across_pieces():
    data = np.random.default_rng(0).integers(0, 256, 300_001, dtype=np.uint8).tobytes()
    crc = 0
    for lo in range(0, len(data), 70_001):
        crc = _C._crc32(data[lo : lo + 70_001], crc)
    assert crc == zlib.crc32(data)


def test_crc_helpers_reject_bad_buffers():
    with pytest.raises(TypeError, match="_crc32: expected a C-contiguous buffer, got int"):
        _C._crc32(3)
    with pytest.raises(TypeError, match="_copy_crc32: expected a writable C-contiguous buffer, got bytes"):
        _C._copy_crc32(b"abcd", b"abcd")
    with pytest.raises(ValueError, match="destination holds 3 bytes but the source 4"):
        _C._copy_crc32(bytearray(3), b"abcd")
    buf = bytearray(100)
    with pytest.raises(ValueError, match="overlap"):
        _C._copy_crc32(memoryview(buf)[10:60], memoryview(buf)[0:50])


def _state_dict():
    rng = np.random.default_rng(3)
    big = ea.from_numpy(rng.standard_normal(300_000).astype(np.float32))  # 1.2 MB: more than one read chunk
    base = ea.from_numpy(rng.standard_normal((6, 8)))
    shared = ea.from_numpy(rng.integers(-9, 9, 40, dtype=np.int64))
    return {
        "big": big,
        "f16": ea.from_numpy(rng.standard_normal((5, 3)).astype(np.float16)),
        "bf16": ea.from_numpy(rng.standard_normal(33).astype(np.float32)).to(ea.bfloat16),
        "u8": ea.from_numpy(rng.integers(0, 255, 77, dtype=np.uint8)),
        "i16": ea.from_numpy(rng.integers(-300, 300, 9, dtype=np.int16)),
        "bool": ea.from_numpy(rng.integers(0, 2, 13).astype(np.bool_)),
        "transposed": base.t(),
        "strided": base[::2, 1::3],
        "shared_a": shared[3:20],
        "shared_b": shared.view(5, 8),
        "empty": ea.zeros(0, 4),
        "scalar": ea.tensor(2.5),
    }


class _ReadOnly:
    """A file object with read()/seek()/tell() only (no readinto)."""

    def __init__(self, raw: bytes) -> None:
        self._f = io.BytesIO(raw)

    def read(self, n: int = -1) -> bytes:
        return self._f.read(n)

    def seek(self, *a):
        return self._f.seek(*a)

    def tell(self) -> int:
        return self._f.tell()


class _Trickle(io.RawIOBase):
    """A file whose readinto returns at most 1000 bytes at a time (short reads, as from a pipe)."""

    def __init__(self, raw: bytes) -> None:
        self._f = io.BytesIO(raw)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, *a):
        return self._f.seek(*a)

    def tell(self) -> int:
        return self._f.tell()

    def read(self, n: int = -1) -> bytes:  # zipfile's reads stay whole
        return self._f.read(n)

    def readinto(self, b) -> int:
        data = self._f.read(min(len(b), 1000))
        b[: len(data)] = data
        return len(data)


def _open(kind: str, raw: bytes, tmp_path):
    if kind == "bytesio":
        return ea.load(io.BytesIO(raw))
    if kind == "read_only":
        return ea.load(_ReadOnly(raw))
    if kind == "trickle":
        return ea.load(_Trickle(raw))
    path = tmp_path / "ck.pt"
    path.write_bytes(raw)
    return ea.load(path, mmap=(kind == "mmap"))


KINDS = ["bytesio", "file", "mmap", "read_only", "trickle"]


@pytest.mark.parametrize("kind", KINDS)
def test_every_read_path_loads_the_same_state_dict(kind, tmp_path):
    sd = _state_dict()
    buf = io.BytesIO()
    ea.save(sd, buf)
    got = _open(kind, buf.getvalue(), tmp_path)
    assert list(got) == list(sd)
    for k, v in sd.items():
        assert got[k].dtype == v.dtype and tuple(got[k].shape) == tuple(v.shape), k
        assert got[k].stride() == v.stride() and got[k].storage_offset() == v.storage_offset(), k
        np.testing.assert_array_equal(got[k].float().numpy(), v.float().numpy(), err_msg=k)
    # views of one storage stay views of one storage
    got["shared_b"].view(-1)[5] = 1000
    assert got["shared_a"][2].item() == 1000


def _corrupt(raw: bytes, record: str, at: int) -> bytes:
    b = bytearray(raw)
    info = zipfile.ZipFile(io.BytesIO(raw)).getinfo(f"archive/{record}")
    n, m = struct.unpack("<HH", b[info.header_offset + 26 : info.header_offset + 30])
    b[info.header_offset + 30 + n + m + at] ^= 0x01
    return bytes(b)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("at", [0, 5, 1_199_999])  # the first bytes, inside a block, the last byte
def test_a_flipped_bit_fails_the_crc_on_every_read_path(kind, at, tmp_path):
    buf = io.BytesIO()
    ea.save({"big": _state_dict()["big"]}, buf)
    raw = _corrupt(buf.getvalue(), "data/0", at)
    with pytest.raises(RuntimeError, match="failed reading file data/0: invalid crc"):
        _open(kind, raw, tmp_path)


def test_bytesio_stays_usable_after_load():
    # the fused path exports the BytesIO's buffer; it must be released again
    buf = io.BytesIO()
    ea.save({"w": ea.ones(100)}, buf)
    buf.seek(0)
    assert ea.load(buf)["w"].sum().item() == 100
    buf.seek(0, io.SEEK_END)
    buf.write(b"more")  # would raise BufferError if the export were still held
