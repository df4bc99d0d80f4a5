"""ember.aten.safetensors: the safetensors format (save_file/load_file/safe_open).

A file written by the `safetensors` package 0.8 (tests/fixtures/torch/every_dtype.safetensors,
made by tests/fixtures/make_torch_fixtures.py) loads value by value, and ember writes
the same tensors back byte for byte; round trips for every dtype; each of the format's
rules enforced on malformed files.
"""

from __future__ import annotations

import json
import math
import os
import struct

import ember.aten as ea
import numpy as np
import pytest
from ember.aten import safetensors as st
from hypothesis import given, settings
from hypothesis import strategies as hst

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "torch", "every_dtype.safetensors")
DTYPES = [ea.bool, ea.uint8, ea.int8, ea.int16, ea.int32, ea.int64, ea.float16, ea.bfloat16, ea.float32, ea.float64]


def values(t):
    return (t.float() if t.dtype == ea.bfloat16 else t).tolist()


def same(a, b):
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return a == b and (not isinstance(a, float) or math.copysign(1, a) == math.copysign(1, b))


def test_package_written_file_loads_value_by_value():
    with open(FIXTURE + ".json") as fh:
        manifest = json.load(fh)
    out = st.load_file(FIXTURE)
    assert sorted(out) == sorted(d["path"][1:] for d in manifest["tensors"])
    for d in manifest["tensors"]:
        t = out[d["path"][1:]]
        assert str(t.dtype) == "ember.aten." + d["dtype"]
        assert list(t.shape) == d["shape"]
        assert same(values(t), d["values"]), d["path"]
    with st.safe_open(FIXTURE, framework="pt") as f:
        assert f.metadata() == manifest["metadata"]


def test_ember_writes_the_package_bytes_exactly(tmp_path):
    tensors = st.load_file(FIXTURE)
    with st.safe_open(FIXTURE) as f:
        metadata = f.metadata()
    path = tmp_path / "again.safetensors"
    st.save_file(tensors, path, metadata)
    with open(FIXTURE, "rb") as a, open(path, "rb") as b:
        assert a.read() == b.read()
    assert st.save(tensors, metadata) == open(FIXTURE, "rb").read()


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(), (0,), (7,), (2, 3, 4)], ids=str)
def test_roundtrip_every_dtype(dtype, shape, tmp_path):
    n = int(np.prod(shape)) if shape else 1
    base = ea.arange(n).reshape(shape)
    t = (base % 2 == 0) if dtype == ea.bool else (base - 3).to(dtype)
    path = tmp_path / "x.safetensors"
    st.save_file({"t": t, "other": ea.ones(3)}, path)
    out = st.load_file(path)
    assert out["t"].dtype == dtype and out["t"].shape == t.shape
    assert values(out["t"]) == values(t)
    assert st.load(st.save({"t": t}))["t"].tolist() == t.tolist()


def test_safe_open_api(tmp_path):
    path = tmp_path / "m.safetensors"
    st.save_file({"b": ea.arange(6.0).reshape(2, 3), "a": ea.zeros(2, dtype=ea.int16)}, path, {"k": "v"})
    with st.safe_open(path, framework="pt", device="cpu") as f:
        assert f.keys() == ["a", "b"]
        assert f.metadata() == {"k": "v"}
        sl = f.get_slice("b")
        assert sl.get_shape() == [2, 3] and sl.get_dtype() == "F32"
        assert sl[:, 1].tolist() == [1.0, 4.0]
        assert f.get_tensor("a").tolist() == [0, 0]
        with pytest.raises(st.SafetensorError, match="File does not contain tensor c"):
            f.get_tensor("c")
    with st.safe_open(path, framework="np") as f:
        a = f.get_tensor("b")
        assert isinstance(a, np.ndarray) and a.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    with pytest.raises(st.SafetensorError, match="framework 'tf' is not supported"):
        st.safe_open(path, framework="tf")


def test_save_refuses_views_and_shared_memory(tmp_path):
    t = ea.arange(12.0).reshape(3, 4)
    with pytest.raises(ValueError, match="You are trying to save a non contiguous tensor: `t`"):
        st.save_file({"t": t.t()}, tmp_path / "x.safetensors")
    with pytest.raises(RuntimeError, match="Some tensors share memory"):
        st.save_file({"a": t, "b": t[1]}, tmp_path / "x.safetensors")
    with pytest.raises(TypeError, match="metadata must be a dict of str to str"):
        st.save({"a": t}, {"k": 1})
    with pytest.raises(TypeError, match="not a tensor"):
        st.save({"a": [1, 2]})


# ---- malformed files ---------------------------------------------------------------------------
def raw_file(header, data=b"", pad=True):
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    if pad:
        text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def entry(dtype, shape, begin, end):
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


@pytest.mark.parametrize(
    "blob, message",
    [
        (b"\x01\x02", "HeaderTooSmall"),
        (struct.pack("<Q", 100_000_001) + b"{}", "HeaderTooLarge"),
        (struct.pack("<Q", 2**63) + b"{}", "HeaderTooLarge"),
        (struct.pack("<Q", 64) + b"{}", "InvalidHeaderLength"),
        (raw_file(b"\xff\xfe{}"), "InvalidHeader"),
        (raw_file(b"[1, 2]"), "InvalidHeaderStart"),
        (raw_file(b"{not json"), "InvalidHeaderDeserialization"),
        (
            raw_file(b'{"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}, "a": 1}', b"\x00" * 4),
            "duplicate key",
        ),
        (raw_file({"a": entry("F32", [2], 0, 8)}, b"\x00" * 4), "MetadataIncompleteBuffer"),
        (raw_file({"a": entry("F32", [1], 0, 4)}, b"\x00" * 12), "MetadataIncompleteBuffer"),
        (raw_file({"a": entry("F32", [2], 0, 4)}, b"\x00" * 4), "TensorInvalidInfo"),
        (raw_file({"a": entry("F32", [1], 4, 8), "b": entry("F32", [1], 0, 4)}, b"\x00" * 8), None),
        (raw_file({"a": entry("F32", [1], 4, 8)}, b"\x00" * 8), r"InvalidOffset\(a\)"),
        (raw_file({"a": entry("F32", [1], 0, 4), "b": entry("F32", [1], 2, 6)}, b"\x00" * 6), r"InvalidOffset\(b\)"),
        (raw_file({"a": entry("F32", [-1], 0, 4)}, b"\x00" * 4), "bad shape"),
        (raw_file({"a": entry("F32", [1], 8, 4)}, b"\x00" * 4), "bad data_offsets"),
        (raw_file({"a": {"dtype": "F32", "shape": [1]}}, b"\x00" * 4), "needs exactly dtype, shape, data_offsets"),
        (raw_file({"a": entry("XX", [1], 0, 4)}, b"\x00" * 4), "unknown dtype"),
        (raw_file({"a": entry("C64", [1], 0, 8)}, b"\x00" * 8), "dtype C64 is not supported by ember"),
        (raw_file({"a": entry("U8", [2**62, 2**62], 0, 4)}, b"\x00" * 4), "ValidationOverflow"),
        (raw_file({"__metadata__": {"k": 1}}), "__metadata__ must map strings to strings"),
    ],
)
def test_format_rules(blob, message, tmp_path):
    path = tmp_path / "bad.safetensors"
    path.write_bytes(blob)
    if message is None:  # listed out of order but tiling the data: valid
        assert sorted(st.load_file(path)) == ["a", "b"]
        return
    with pytest.raises(st.SafetensorError, match=message):
        st.load_file(path)
    with pytest.raises(st.SafetensorError, match=message):
        st.load(blob)


def test_huge_header_claim_allocates_nothing(tmp_path):
    import tracemalloc

    path = tmp_path / "bad.safetensors"
    path.write_bytes(struct.pack("<Q", 99_999_999) + b"{}")
    tracemalloc.start()
    try:
        with pytest.raises(st.SafetensorError, match="InvalidHeaderLength"):
            st.load_file(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 10 * 2**20


_SEED = st.save({"a": ea.arange(6.0).reshape(2, 3), "b": ea.ones(4, dtype=ea.int16), "c": ea.zeros(0)}, {"k": "v"})


@settings(max_examples=400, deadline=None)
@given(ops=hst.lists(hst.tuples(hst.integers(0, 10**6), hst.integers(0, 255), hst.booleans()), min_size=1, max_size=6))
def test_mutated_files_never_crash(ops):
    b = bytearray(_SEED)
    for pos, val, truncate in ops:
        if not b:
            break
        if truncate:
            del b[pos % len(b) :]
        else:
            b[pos % len(b)] = val
    try:
        out = st.load(bytes(b))
    except st.SafetensorError:
        return
    for t in out.values():
        t.tolist()
