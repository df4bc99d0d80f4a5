"""ember.aten.save / load: PyTorch's zip checkpoint format, both directions.

Round trips for every dtype x shape x stride case; the checkpoints PyTorch 2.13 wrote
(tests/fixtures/torch, made by tests/fixtures/make_torch_fixtures.py) loaded and
compared value by value against their manifests; map_location, mmap, byte order,
safe globals and weights_only=False.
"""

from __future__ import annotations

import collections
import io
import json
import math
import os
import pickle
import struct
import zipfile

import ember.aten as ea
import numpy as np
import pytest
from ember.aten import serialization

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "torch")

DTYPES = [ea.bool, ea.uint8, ea.int8, ea.int16, ea.int32, ea.int64, ea.float16, ea.bfloat16, ea.float32, ea.float64]


def make(dtype, shape):
    n = int(np.prod(shape)) if shape else 1
    base = np.arange(n, dtype=np.float64).reshape(shape) * 1.5 - 7
    if dtype == ea.bool:
        return ea.tensor(base.astype(np.int64) % 3 == 0)
    if not dtype.is_floating_point:
        return ea.tensor(base.astype(np.int64)).to(dtype)
    return ea.tensor(base).to(dtype)


def values(t):
    t = t.detach()
    if t.dtype == ea.bfloat16:
        t = t.float()
    return t.tolist()


def same_values(a, b):
    """Equal element by element, NaN equal to NaN and -0.0 told apart from 0.0."""
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(same_values(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) or isinstance(b, float):
        a, b = float(a), float(b)
        if math.isnan(a):
            return math.isnan(b)
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return a == b


def roundtrip(obj, **load_kwargs):
    buf = io.BytesIO()
    ea.save(obj, buf)
    buf.seek(0)
    return ea.load(buf, **load_kwargs)


# ---- round trips ---------------------------------------------------------------------------
VIEWS = {
    "contiguous": lambda t: t,
    "transposed": lambda t: t.transpose(0, 1) if t.dim() >= 2 else t,
    "sliced": lambda t: t[1:, ::2] if t.dim() >= 2 else t[1:],
    "offset": lambda t: t.reshape(-1)[3:],
    "expanded": lambda t: t.reshape(-1)[:1].expand(4, 3),
}


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(), (0,), (5,), (3, 4), (2, 3, 4)], ids=str)
@pytest.mark.parametrize("view", list(VIEWS))
def test_roundtrip_every_dtype_shape_stride(dtype, shape, view):
    base = make(dtype, shape)
    if view != "contiguous" and (base.dim() == 0 or base.numel() < 5):
        return  # these views need a few elements; the contiguous case covers the rest
    t = VIEWS[view](base)
    out = roundtrip({"t": t})["t"]
    assert out.dtype == t.dtype
    assert out.shape == t.shape
    assert out.stride() == t.stride()
    assert out.storage_offset() == t.storage_offset()
    assert same_values(values(out), values(t))
    assert out.untyped_storage().nbytes == t.untyped_storage().nbytes


def test_views_stay_shared_after_load():
    base = ea.arange(12.0).reshape(3, 4)
    obj = {"base": base, "t": base.t(), "row": base[1], "col": base[:, 2]}
    out = roundtrip(obj)
    ptr = out["base"].untyped_storage().data_ptr
    assert all(out[k].untyped_storage().data_ptr == ptr for k in obj)
    out["base"][1, 2] = 100.0
    assert out["t"][2, 1].item() == 100.0
    assert out["row"][2].item() == 100.0
    assert out["col"][1].item() == 100.0
    # one storage record in the archive, not four
    buf = io.BytesIO()
    ea.save(obj, buf)
    names = zipfile.ZipFile(buf).namelist()
    assert [n for n in names if "/data/" in n] == ["archive/data/0"]


def test_nested_containers_and_python_values():
    obj = {
        "list": [1, 2.5, "s", None, True, [ea.ones(2)], (3, (4,))],
        "tuple": (ea.zeros(1, dtype=ea.int64), {"k": -5}),
        "big": 2**80,
        "neg": -(2**40),
        "bytes": b"\x00\xffab",
        "bytearray": bytearray(b"xy"),
        "set": {1, 2},
        "complex": 2 - 3j,
        "dtype": ea.bfloat16,
        "device": ea.device("cpu"),
        "size": ea.Size([2, 3]),
        "float": -0.0,
        "inf": math.inf,
        "counter": collections.Counter("aab"),
    }
    out = roundtrip(obj)
    assert out["list"][:5] == [1, 2.5, "s", None, True]
    assert values(out["list"][5][0]) == [1.0, 1.0]
    assert out["list"][6] == (3, (4,))
    assert out["tuple"][1] == {"k": -5} and out["tuple"][0].dtype == ea.int64
    assert out["big"] == 2**80 and out["neg"] == -(2**40)
    assert out["bytes"] == b"\x00\xffab" and out["bytearray"] == bytearray(b"xy")
    assert out["set"] == {1, 2} and out["complex"] == 2 - 3j
    assert out["dtype"] is ea.bfloat16
    assert out["device"] == ea.device("cpu")
    assert out["size"] == ea.Size([2, 3]) and isinstance(out["size"], ea.Size)
    assert math.copysign(1, out["float"]) == -1 and out["inf"] == math.inf
    assert out["counter"] == collections.Counter("aab")


def test_ordered_dict_metadata_roundtrip():
    sd = collections.OrderedDict([("b", ea.ones(2)), ("a", ea.zeros(3))])
    sd._metadata = {"": {"version": 1}, "sub": {"version": 2}}
    out = roundtrip(sd)
    assert type(out) is collections.OrderedDict
    assert list(out) == ["b", "a"]
    assert out._metadata == {"": {"version": 1}, "sub": {"version": 2}}


def test_requires_grad_roundtrip():
    t = ea.ones(3)
    t.requires_grad_(True)
    out = roundtrip({"t": t})["t"]
    assert out.requires_grad
    assert values(out) == [1.0, 1.0, 1.0]


def test_save_to_path_uses_stem_prefix_and_aligned_records(tmp_path):
    path = tmp_path / "my_model.pt"
    ea.save({"w": ea.arange(5.0), "b": ea.ones(3, dtype=ea.int16)}, path)
    with open(path, "rb") as fh:
        raw = fh.read()
    zf = zipfile.ZipFile(io.BytesIO(raw))
    names = zf.namelist()
    assert names[0] == "my_model/data.pkl"
    for want in ("my_model/byteorder", "my_model/version", "my_model/.format_version", "my_model/.storage_alignment"):
        assert want in names
    assert zf.read("my_model/version") == b"3\n"
    assert zf.read("my_model/byteorder") == b"little"
    for info in zf.infolist():
        assert info.compress_type == zipfile.ZIP_STORED
        n, m = struct.unpack("<HH", raw[info.header_offset + 26 : info.header_offset + 30])
        assert (info.header_offset + 30 + n + m) % 64 == 0, info.filename
    assert values(ea.load(path)["w"]) == [0.0, 1.0, 2.0, 3.0, 4.0]


def test_save_refuses_one_storage_as_two_dtypes():
    t = ea.zeros(4, dtype=ea.int32)
    with pytest.raises(
        RuntimeError, match="Cannot save multiple tensors or storages that view the same data as different types"
    ):
        ea.save([t, t.view(ea.float32)], io.BytesIO())


def test_save_non_seekable_stream():
    class Sink:
        def __init__(self):
            self.chunks = []

        def write(self, b):
            self.chunks.append(bytes(b))
            return len(b)

    sink = Sink()
    ea.save({"x": ea.arange(3)}, sink)
    out = ea.load(io.BytesIO(b"".join(sink.chunks)))
    assert values(out["x"]) == [0, 1, 2]


# ---- PyTorch's checkpoints ---------------------------------------------------------------------
def _lookup(obj, path):
    for part in path.split("/")[1:]:
        if isinstance(obj, (list, tuple)):
            obj = obj[int(part)]
        elif part not in obj and part.lstrip("-").isdigit() and int(part) in obj:
            obj = obj[int(part)]
        else:
            obj = obj[part]
    return obj


FIXTURE_NAMES = sorted(
    f[:-5] for f in os.listdir(FIXTURES) if f.endswith(".json") and not f.endswith(".safetensors.json")
)


LOAD_MODES = {"weights_only": {}, "full_pickle": {"weights_only": False}, "mmap": {"mmap": True}}


@pytest.mark.parametrize("name", FIXTURE_NAMES)
@pytest.mark.parametrize("mode", list(LOAD_MODES))
def test_torch_fixture_values(name, mode):
    with open(os.path.join(FIXTURES, name + ".json")) as fh:
        manifest = json.load(fh)
    obj = ea.load(os.path.join(FIXTURES, manifest["file"]), **LOAD_MODES[mode])
    storages = {}
    for d in manifest["tensors"]:
        t = _lookup(obj, d["path"])
        assert isinstance(t, ea.Tensor), d["path"]
        assert str(t.dtype) == "ember.aten." + d["dtype"], d["path"]
        assert list(t.shape) == d["shape"], d["path"]
        assert list(t.stride()) == d["stride"], d["path"]
        assert t.storage_offset() == d["storage_offset"], d["path"]
        assert t.requires_grad == d["requires_grad"], d["path"]
        assert t.untyped_storage().nbytes == d["storage_nbytes"], d["path"]
        assert same_values(values(t), d["values"]), d["path"]
        for k, v in d["attrs"].items():
            assert getattr(t, k) == v
        # tensors that shared a storage in PyTorch share one here, and only those
        ptr = t.untyped_storage().data_ptr
        if d["storage_nbytes"]:
            assert storages.setdefault(d["storage"], ptr) == ptr, d["path"]
    if "metadata" in manifest:
        assert obj._metadata == manifest["metadata"]


def test_torch_fixture_every_dtype_structure():
    sd = ea.load(os.path.join(FIXTURES, "every_dtype.pt"))
    assert type(sd) is collections.OrderedDict
    assert sd["float32.t"].untyped_storage().data_ptr == sd["float32"].untyped_storage().data_ptr
    sd["float32"][0, 1] = 42.0  # views share after load
    assert sd["float32.t"][1, 0].item() == 42.0


def test_torch_fixture_nested_python_values():
    obj = ea.load(os.path.join(FIXTURES, "nested.pt"))
    assert obj["tuple"] == (1, 2.5, "three", None, True, False, (4, [5, {"six": 6}]))
    assert obj["big_int"] == 2**70 and obj["negative"] == -123456789012
    assert obj["bytes"] == b"\x00\x01ember"
    assert obj["set"] == {1, 2, 3} and obj["complex"] == 1.5 - 2j
    assert obj["dtype"] is ea.float16
    assert obj["device"] == ea.device("cpu")
    assert obj["size"] == ea.Size([2, 3])
    assert obj["expanded"].stride() == (0, 1)


def test_torch_fixture_optimizer_state_dict():
    sd = ea.load(os.path.join(FIXTURES, "optimizer_state_dict.pt"))
    assert set(sd) == {"state", "param_groups"}
    assert sorted(sd["state"]) == [0, 1, 2, 3]
    group = sd["param_groups"][0]
    assert group["params"] == [0, 1, 2, 3]
    assert group["lr"] == 0.01 and group["betas"] == (0.9, 0.999)
    assert sd["state"][0]["exp_avg"].shape == ea.Size([3, 4])


def test_torch_fixture_untyped_storage():
    obj = ea.load(os.path.join(FIXTURES, "untyped_storage.pt"))
    s = obj["s"]
    assert isinstance(s, ea._C.__class__) is False  # a storage, not a module
    assert s.nbytes == 8
    assert np.frombuffer(s, dtype=np.int16).tolist() == [0, 1, 2, 3]


# ---- map_location / mmap / byte order -------------------------------------------------------------
@pytest.mark.parametrize(
    "map_location", ["cpu", ea.device("cpu"), {"cpu": "cpu"}, lambda storage, loc: storage, lambda s, loc: None]
)
def test_map_location_forms(map_location):
    out = roundtrip({"x": ea.arange(4)}, map_location=map_location)
    assert out["x"].device == ea.device("cpu")
    assert values(out["x"]) == [0, 1, 2, 3]


def test_map_location_callable_sees_location():
    seen = []
    roundtrip({"x": ea.arange(4)}, map_location=lambda storage, loc: seen.append((storage.nbytes, loc)))
    assert seen == [(32, "cpu")]


def test_map_location_bad_type():
    with pytest.raises(TypeError, match="map_location should be a str, device, dict or callable"):
        roundtrip({"x": ea.arange(2)}, map_location=3)


def _patched_location(location):
    buf = io.BytesIO()
    ea.save({"x": ea.arange(3.0)}, buf)
    return _rewrite_record(
        buf.getvalue(), "data.pkl", lambda b: b.replace(b"X\x03\x00\x00\x00cpu", _binunicode(location))
    )


def _binunicode(s):
    return b"X" + struct.pack("<I", len(s)) + s.encode()


def _rewrite_record(raw, name, fn):
    """A copy of the checkpoint with one record's bytes replaced (re-zipped, stored)."""
    src = zipfile.ZipFile(io.BytesIO(raw))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            data = src.read(info.filename)
            if info.filename.endswith("/" + name):
                data = fn(data)
            dst.writestr(info.filename, data)
    return out.getvalue()


def test_cuda_location_without_cuda_and_map_location_fixes_it():
    from ember.c10py import cuda

    raw = _patched_location("cuda:0")
    if not cuda.is_available():
        with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA device"):
            ea.load(io.BytesIO(raw))
    out = ea.load(io.BytesIO(raw), map_location="cpu")
    assert out["x"].device == ea.device("cpu") and values(out["x"]) == [0.0, 1.0, 2.0]
    out = ea.load(io.BytesIO(raw), map_location={"cuda:0": "cpu"})
    assert out["x"].device == ea.device("cpu")


def test_unknown_location_is_an_error():
    with pytest.raises(RuntimeError, match="don't know how to restore data location"):
        ea.load(io.BytesIO(_patched_location("tpu:3")))


def test_mmap_load_shares_file_pages_copy_on_write(tmp_path):
    path = tmp_path / "m.pt"
    base = ea.arange(1000.0)
    ea.save({"a": base, "b": base[10:20], "c": ea.ones(3, dtype=ea.int64)}, path)
    out = ea.load(path, mmap=True)
    assert values(out["b"]) == [float(i) for i in range(10, 20)]
    assert out["a"].untyped_storage().data_ptr % 64 == 0  # records are 64-byte aligned in the file
    assert out["a"].untyped_storage().data_ptr == out["b"].untyped_storage().data_ptr
    out["a"][0] = -5.0  # private mapping: writable, the file is unchanged
    assert out["a"][0].item() == -5.0
    assert values(ea.load(path)["a"])[0] == 0.0


def test_mmap_needs_a_path():
    buf = io.BytesIO()
    ea.save({"x": ea.ones(1)}, buf)
    with pytest.raises(ValueError, match="f must be a file path in order to use the mmap argument"):
        ea.load(buf, mmap=True)


def test_big_endian_checkpoint_is_byteswapped():
    def to_big(raw):
        src = zipfile.ZipFile(io.BytesIO(raw))
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as dst:
            for info in src.infolist():
                data = src.read(info.filename)
                if info.filename.endswith("/byteorder"):
                    data = b"big"
                elif info.filename.endswith("/data/0"):
                    data = np.frombuffer(data, dtype="<i4").astype(">i4").tobytes()
                elif info.filename.endswith("/data/1"):
                    data = np.frombuffer(data, dtype="<f2").astype(">f2").tobytes()
                dst.writestr(info.filename, data)
        return out.getvalue()

    buf = io.BytesIO()
    ea.save({"i": ea.tensor([1, -2, 70000], dtype=ea.int32), "h": ea.tensor([0.5, -3.0], dtype=ea.float16)}, buf)
    out = ea.load(io.BytesIO(to_big(buf.getvalue())))
    assert values(out["i"]) == [1, -2, 70000]
    assert values(out["h"]) == [0.5, -3.0]


def test_unknown_byteorder_is_an_error():
    buf = io.BytesIO()
    ea.save({"x": ea.ones(1)}, buf)
    raw = _rewrite_record(buf.getvalue(), "byteorder", lambda b: b"middle")
    with pytest.raises(ValueError, match="Unknown endianness type: middle"):
        ea.load(io.BytesIO(raw))


# ---- safe globals and weights_only=False -----------------------------------------------------------
class Config:
    def __init__(self, lr=0.1):
        self.lr = lr


def test_custom_class_needs_weights_only_false_or_safe_globals():
    buf = io.BytesIO()
    ea.save({"cfg": Config(0.5), "w": ea.ones(2)}, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError, match=r"Unsupported global: GLOBAL .*Config was not an allowed global"):
        ea.load(buf)
    buf.seek(0)
    out = ea.load(buf, weights_only=False)
    assert out["cfg"].lr == 0.5 and values(out["w"]) == [1.0, 1.0]
    buf.seek(0)
    with serialization.safe_globals([Config]):
        assert Config in serialization.get_safe_globals()
        out = ea.load(buf)
    assert out["cfg"].lr == 0.5
    assert Config not in serialization.get_safe_globals()


def test_add_safe_globals_and_clear():
    buf = io.BytesIO()
    ea.save([Config(2.0)], buf)
    try:
        serialization.add_safe_globals([(Config, f"{Config.__module__}.Config")])
        buf.seek(0)
        assert ea.load(buf)[0].lr == 2.0
    finally:
        serialization.clear_safe_globals()
    assert serialization.get_safe_globals() == []
    with pytest.raises(ValueError, match="Expected tuple of length 2"):
        serialization.add_safe_globals([(Config,)])


def test_load_from_path_and_pathlike(tmp_path):
    p = tmp_path / "x.pt"
    ea.save(ea.arange(3), str(p))
    assert values(ea.load(str(p))) == [0, 1, 2]
    assert values(ea.load(p)) == [0, 1, 2]


def test_tensor_attributes_travel_as_pytorch_writes_them():
    t = ea.arange(3.0)
    t.note = "kept"
    t.scale = 2
    buf = io.BytesIO()
    ea.save({"t": t, "plain": ea.ones(1)}, buf)
    pkl = zipfile.ZipFile(buf).read("archive/data.pkl")
    assert b"ctorch._tensor\n_rebuild_from_type_v2\n" in pkl and b"ctorch\nTensor\n" in pkl
    buf.seek(0)
    out = ea.load(buf)
    assert out["t"].note == "kept" and out["t"].scale == 2
    assert values(out["t"]) == [0.0, 1.0, 2.0]
    assert not out["plain"].__dict__


def test_get_unsafe_globals_in_checkpoint(tmp_path):
    path = tmp_path / "c.pt"
    ea.save({"cfg": Config(), "w": ea.ones(2), "s": {1}, "d": ea.float16}, path)
    assert serialization.get_unsafe_globals_in_checkpoint(path) == [f"{Config.__module__}.Config"]
    with serialization.safe_globals([Config]):
        assert serialization.get_unsafe_globals_in_checkpoint(path) == []
    ea.save({"w": ea.ones(2)}, path)
    assert serialization.get_unsafe_globals_in_checkpoint(path) == []


def test_explicit_pickle_module_with_weights_only():
    buf = io.BytesIO()
    ea.save({"w": ea.ones(1)}, buf)
    buf.seek(0)
    with pytest.raises(RuntimeError, match="Can not safely load weights when explicit pickle_module is specified"):
        ea.load(buf, pickle_module=object())


def test_zip64_records_stay_aligned(monkeypatch):
    # Records past zipfile's ZIP64_LIMIT carry 20 more header bytes; alignment must account for them.
    monkeypatch.setattr(zipfile, "ZIP64_LIMIT", 1000)
    t = ea.arange(1000.0)
    buf = io.BytesIO()
    ea.save({"big": t, "small": ea.ones(3)}, buf)
    raw = buf.getvalue()
    zf = zipfile.ZipFile(io.BytesIO(raw))
    info = zf.getinfo("archive/data/0")
    n, m = struct.unpack("<HH", raw[info.header_offset + 26 : info.header_offset + 30])
    assert m >= 20  # the zip64 extra field is there
    assert (info.header_offset + 30 + n + m) % 64 == 0
    out = ea.load(io.BytesIO(raw))
    assert values(out["big"]) == values(t) and values(out["small"]) == [1.0] * 3


def test_save_to_a_missing_directory(tmp_path):
    with pytest.raises(RuntimeError, match=r"Parent directory .*nowhere does not exist"):
        ea.save(ea.ones(1), tmp_path / "nowhere" / "x.pt")
