"""ember.aten.load against the checkpoints of issue 25: crashes, leaks, integrity, messages.

Each case is a small hand-written checkpoint that crashed the loader, handed out
uninitialised memory, meant two things, or pushed the user toward the unsafe loader
with a false message. Crash cases are loaded in a subprocess, so that a segfault fails
the test instead of killing pytest; every case that reads storages runs with and
without ``mmap``.
"""

from __future__ import annotations

import codecs
import io
import os
import pickle
import struct
import subprocess
import sys
import textwrap
import time
import tracemalloc
import warnings
import zipfile

import ember.aten as ea
import pytest
from ember.aten import serialization

P = pickle  # opcode constants
ADVICE = "weights_only` set to `False` will likely succeed"


# ---- writing checkpoints by hand ------------------------------------------------------------------
def wrap(data_pkl: bytes, storages: dict[str, bytes] | None = None, prefix: str = "archive") -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        z.writestr(f"{prefix}/data.pkl", data_pkl)
        z.writestr(f"{prefix}/byteorder", b"little")
        for key, data in (storages or {}).items():
            z.writestr(f"{prefix}/data/{key}", data)
        z.writestr(f"{prefix}/version", b"3\n")
    return out.getvalue()


def glob(module: str, name: str) -> bytes:
    return P.GLOBAL + module.encode() + b"\n" + name.encode() + b"\n"


def ustr(s: str) -> bytes:
    b = s.encode()
    return P.BINUNICODE + struct.pack("<I", len(b)) + b


def program(body: bytes, proto: int = 2) -> bytes:
    return P.PROTO + bytes([proto]) + body + P.STOP


def float_(x: float) -> bytes:
    return P.BINFLOAT + struct.pack(">d", x)


def int_(n: int) -> bytes:
    return P.LONG1 + bytes([9]) + n.to_bytes(9, "little", signed=True)


def tensor_call(*args: bytes) -> bytes:
    """torch.Tensor(*args) through REDUCE, the allowlisted legacy constructor."""
    return glob("torch", "Tensor") + P.MARK + b"".join(args) + P.TUPLE + P.REDUCE


def deep_list(depth: int) -> bytes:
    return P.EMPTY_LIST * depth + float_(1.0) + P.APPEND * depth


def self_referential_list() -> bytes:
    # l = [1.0]; l.append(l)
    return P.EMPTY_LIST + P.BINPUT + b"\x00" + float_(1.0) + P.APPEND + P.BINGET + b"\x00" + P.APPEND


def deep_tuple(depth: int) -> bytes:
    return P.NONE + P.TUPLE1 * depth


def storage_pid(storage_type: str, key: str, numel: int) -> bytes:
    return (
        P.MARK + ustr("storage") + glob("torch", storage_type) + ustr(key) + ustr("cpu") + int_(numel) + P.TUPLE
        + P.BINPERSID
    )  # fmt: skip


def rebuild(storage: bytes, size: tuple[int, ...]) -> bytes:
    stride = []
    acc = 1
    for n in reversed(size):
        stride.insert(0, acc)
        acc *= n
    ints = lambda v: P.MARK + b"".join(int_(x) for x in v) + P.TUPLE  # noqa: E731
    return (
        glob("torch._utils", "_rebuild_tensor_v2") + P.MARK + storage + int_(0) + ints(size) + ints(stride)
        + P.NEWFALSE + glob("collections", "OrderedDict") + P.EMPTY_TUPLE + P.REDUCE + P.TUPLE + P.REDUCE
    )  # fmt: skip


def load_raw(raw: bytes, tmp_path, mmap: bool, **kw):
    if mmap:
        path = tmp_path / "c.pt"
        path.write_bytes(raw)
        return ea.load(path, mmap=True, **kw)
    return ea.load(io.BytesIO(raw), **kw)


MMAP = pytest.mark.parametrize("mmap", [False, True], ids=["read", "mmap"])


# ---- crashes: run in a subprocess -------------------------------------------------------------------
_CHILD = textwrap.dedent(
    """
    import pickle, sys, warnings
    import ember.aten as ea
    warnings.simplefilter("ignore")
    try:
        ea.load(sys.argv[1], mmap=sys.argv[2] == "1")
    except Exception as e:
        print("RAISED", type(e).__name__, str(e).replace("\\n", " ")[:300])
    else:
        print("LOADED")
    """
)


def load_in_subprocess(raw: bytes, tmp_path, mmap: bool) -> str:
    path = tmp_path / "hostile.pt"
    path.write_bytes(raw)
    r = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path), "1" if mmap else "0"], capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, f"the loader crashed (exit {r.returncode}): {r.stderr[-2000:]}"
    return r.stdout.strip()


@MMAP
@pytest.mark.parametrize(
    "body, expected",
    [
        (tensor_call(self_referential_list()), "RAISED ValueError torch.Tensor: tensor data holds a list where a"),
        (tensor_call(deep_list(20_000)), "RAISED UnpicklingError pickle data is nested more than 1000 levels deep"),
        (tensor_call(deep_list(65)), "RAISED ValueError too many dimensions 'list'"),  # ember's 64-dim limit
        # a 10**6-deep tuple as a dict key: CPython's tuple hash would recurse a million frames
        (P.EMPTY_DICT + deep_tuple(10**6) + P.NONE + P.SETITEM, "RAISED UnpicklingError pickle data is nested more"),
        # ... and as a set member
        (
            glob("builtins", "set") + P.EMPTY_LIST + deep_tuple(10**6) + P.APPEND + P.TUPLE1 + P.REDUCE,
            "RAISED UnpicklingError pickle data is nested more",
        ),
        (deep_list(10**6), "RAISED UnpicklingError pickle data is nested more"),
    ],
    ids=["cyclic-list", "deep-list", "65-dims", "deep-tuple-key", "deep-tuple-in-set", "deep-list-result"],
)
def test_crash_payloads_raise_in_a_subprocess(body, expected, mmap, tmp_path):
    raw = wrap(program(body))
    out = load_in_subprocess(raw, tmp_path, mmap)
    assert out.startswith(expected), out
    assert ADVICE not in out  # weights_only=False would not load these either


def test_the_380_byte_file_of_the_issue_is_small():
    assert len(wrap(program(tensor_call(self_referential_list())))) < 600


def test_nesting_limit_keeps_real_depths():
    # 1000 levels (the limit) still load: the check refuses only what no checkpoint needs
    out = ea.load(io.BytesIO(wrap(program(deep_list(999)))))
    for _ in range(999):
        out = out[0]
    assert out == 1.0
    key = ea.load(io.BytesIO(wrap(program(P.EMPTY_DICT + deep_tuple(999) + P.NONE + P.SETITEM))))
    assert len(key) == 1


def test_tensor_from_nested_lists_still_loads():
    body = tensor_call(
        P.EMPTY_LIST + P.MARK
        + P.EMPTY_LIST + P.MARK + float_(1.0) + float_(2.0) + P.APPENDS
        + P.EMPTY_LIST + P.MARK + float_(3.0) + float_(4.0) + P.APPENDS
        + P.APPENDS
    )  # fmt: skip
    t = ea.load(io.BytesIO(wrap(program(body))))
    assert t.dtype == ea.float32 and t.tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_ragged_tensor_data_is_refused():
    body = tensor_call(
        P.EMPTY_LIST + P.MARK
        + P.EMPTY_LIST + P.MARK + float_(1.0) + float_(2.0) + P.APPENDS
        + P.EMPTY_LIST + P.MARK + float_(3.0) + P.APPENDS
        + P.APPENDS
    )  # fmt: skip
    with pytest.raises(ValueError, match=r"expected sequence of length 2 at dim 1 \(got 1\)"):
        ea.load(io.BytesIO(wrap(program(body))))


# ---- information leak: what a load allocates ------------------------------------------------------
def test_legacy_size_constructor_gives_zeros_not_old_memory():
    # Fill freed memory with a pattern first: an uninitialised tensor would show it.
    for _ in range(4):
        ea.full((4096,), 7.5).sum()
    t = ea.load(io.BytesIO(wrap(program(tensor_call(int_(4096))))))
    assert t.shape == (4096,) and t.dtype == ea.float32
    assert t.abs().sum().item() == 0.0
    t = ea.load(io.BytesIO(wrap(program(tensor_call(int_(3), int_(5))))))
    assert t.shape == (3, 5) and t.abs().sum().item() == 0.0
    size = glob("torch", "Size") + P.MARK + int_(2) + int_(2) + P.TUPLE + P.TUPLE1 + P.REDUCE
    t = ea.load(io.BytesIO(wrap(program(tensor_call(size)))))
    assert t.shape == (2, 2) and t.abs().sum().item() == 0.0


@pytest.mark.parametrize(
    "args",
    [
        (int_(10**12),),
        (int_(2**20), int_(2**20)),
        (int_(5 * 2**20),),  # 20 MiB: over the 16 MiB the pickle may build itself
    ],
)
def test_small_file_claiming_a_huge_allocation_is_refused(args):
    raw = wrap(program(tensor_call(*args)))
    assert len(raw) < 1000
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        with pytest.raises(pickle.UnpicklingError, match="a load builds at most 16777216 bytes that way"):
            ea.load(io.BytesIO(raw))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 20 * 2**20 and time.perf_counter() - t0 < 5


def test_budget_is_per_load_and_summed():
    # Two 12 MiB tensors built by one pickle exceed the 16 MiB budget together.
    one = tensor_call(int_(3 * 2**20))
    with pytest.raises(pickle.UnpicklingError, match="at most 16777216 bytes"):
        ea.load(io.BytesIO(wrap(program(P.MARK + one + one + P.TUPLE))))
    assert ea.load(io.BytesIO(wrap(program(one)))).numel() == 3 * 2**20  # each load starts afresh


def test_shared_sublists_cannot_multiply_work():
    # c = [b]*1000, b = [a]*1000, a = [1.0]*1000: a billion numbers from a few KB of memo references
    a = P.EMPTY_LIST + P.BINPUT + b"\x01" + P.MARK + float_(1.0) * 1000 + P.APPENDS
    b = P.EMPTY_LIST + P.BINPUT + b"\x02" + P.MARK + a + (P.BINGET + b"\x01") * 999 + P.APPENDS
    c = P.EMPTY_LIST + P.MARK + b + (P.BINGET + b"\x02") * 999 + P.APPENDS
    raw = wrap(program(tensor_call(c)))
    assert len(raw) < 20_000
    t0 = time.perf_counter()
    with pytest.raises(pickle.UnpicklingError, match="at most 16777216 bytes"):
        ea.load(io.BytesIO(raw))
    assert time.perf_counter() - t0 < 5


# ---- integrity ------------------------------------------------------------------------------------
def duplicate_entry(raw: bytes, record: str, replacement: bytes) -> bytes:
    src = zipfile.ZipFile(io.BytesIO(raw))
    out = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns "Duplicate name"
        with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
            for info in src.infolist():
                z.writestr(info.filename, src.read(info.filename))
                if info.filename.endswith("/" + record):
                    z.writestr(info.filename, replacement)
    return out.getvalue()


def valid_checkpoint() -> bytes:
    buf = io.BytesIO()
    ea.save({"w": ea.arange(16.0), "b": ea.tensor([True, False])}, buf)
    return buf.getvalue()


@MMAP
@pytest.mark.parametrize("record", ["data.pkl", "data/0", "version"])
def test_duplicate_zip_entries_are_refused(record, mmap, tmp_path):
    original = zipfile.ZipFile(io.BytesIO(valid_checkpoint())).read(f"archive/{record}")
    raw = duplicate_entry(valid_checkpoint(), record, original)  # even an identical twin
    with pytest.raises(RuntimeError, match=f"the archive holds two entries named archive/{record}") as e:
        load_raw(raw, tmp_path, mmap)
    assert ADVICE not in str(e.value)


def central_entry(raw: bytes, name: bytes) -> tuple[int, int]:
    """(offset, length) of ``name``'s central-directory entry."""
    pos = 0
    while True:
        j = raw.index(b"PK\x01\x02", pos)
        n, m, k = struct.unpack("<HHH", raw[j + 28 : j + 34])
        if raw[j + 46 : j + 46 + n] == name:
            return j, 46 + n + m + k
        pos = j + 4


def test_overlapping_records_are_refused():
    # A second central-directory entry pointing at one 4 MB record would have it read (allocated) twice.
    raw = wrap(program(P.NONE), {"0": b"\x00" * 2**22})
    eocd = raw.rindex(b"PK\x05\x06")
    count, cd_size, _ = struct.unpack("<HII", raw[eocd + 10 : eocd + 20])
    j, n = central_entry(raw, b"archive/data/0")
    twin = raw[j : j + n].replace(b"archive/data/0", b"archive/data/1")
    tail = bytearray(raw[eocd:])
    tail[8:16] = struct.pack("<HHI", count + 1, count + 1, cd_size + len(twin))
    forged = raw[:eocd] + twin + bytes(tail)
    assert zipfile.ZipFile(io.BytesIO(forged)).namelist().count("archive/data/1") == 1
    with pytest.raises(RuntimeError, match="records data/0 and data/1 overlap"):
        ea.load(io.BytesIO(forged))


def corrupt_record(raw: bytes, record: str, at: int = 3) -> bytes:
    b = bytearray(raw)
    info = zipfile.ZipFile(io.BytesIO(raw)).getinfo(f"archive/{record}")
    n, m = struct.unpack("<HH", b[info.header_offset + 26 : info.header_offset + 30])
    b[info.header_offset + 30 + n + m + at] ^= 0xFF
    return bytes(b)


@MMAP
def test_crc_is_checked_with_and_without_mmap(mmap, tmp_path):
    raw = corrupt_record(valid_checkpoint(), "data/0")
    with pytest.raises(RuntimeError, match="failed reading file data/0: invalid crc") as e:
        load_raw(raw, tmp_path, mmap)
    assert ADVICE not in str(e.value)


@MMAP
def test_bool_bytes_are_normalised_as_they_enter(mmap, tmp_path):
    body = rebuild(storage_pid("BoolStorage", "0", 4), (4,))
    raw = wrap(program(body), {"0": bytes([0, 1, 2, 255])})
    t = load_raw(raw, tmp_path, mmap)
    assert t.dtype == ea.bool
    assert t.to(ea.uint8).tolist() == [0, 1, 1, 1]
    assert t.sum().item() == 3 and t.float().tolist() == [0.0, 1.0, 1.0, 1.0]
    assert (~t).tolist() == [True, False, False, False]
    if mmap:  # copy-on-write: the file keeps its bytes
        assert (tmp_path / "c.pt").read_bytes() == raw


def test_bool_bytes_of_a_v3_rebuild_over_an_untyped_storage():
    ints = lambda v: P.MARK + b"".join(int_(x) for x in v) + P.TUPLE  # noqa: E731
    body = (
        glob("torch._utils", "_rebuild_tensor_v3") + P.MARK + storage_pid("UntypedStorage", "0", 3) + int_(0)
        + ints((3,)) + ints((1,)) + P.NEWFALSE + glob("collections", "OrderedDict") + P.EMPTY_TUPLE + P.REDUCE
        + glob("torch", "bool") + P.TUPLE + P.REDUCE
    )  # fmt: skip
    t = ea.load(io.BytesIO(wrap(program(body), {"0": bytes([7, 0, 1])})))
    assert t.to(ea.uint8).tolist() == [1, 0, 1]


def safetensors_bytes(payload: bytes) -> bytes:
    import json

    header = json.dumps({"b": {"dtype": "BOOL", "shape": [len(payload)], "data_offsets": [0, len(payload)]}})
    header += " " * (-len(header) % 8)
    return struct.pack("<Q", len(header)) + header.encode() + payload


def test_safetensors_bool_bytes_are_normalised(tmp_path):
    from ember.aten import safetensors as st

    raw = safetensors_bytes(bytes([0, 1, 2, 255]))
    t = st.load(raw)["b"]
    assert t.to(ea.uint8).tolist() == [0, 1, 1, 1] and t.sum().item() == 3
    path = tmp_path / "b.safetensors"
    path.write_bytes(raw)
    t = st.load_file(path)["b"]
    assert t.to(ea.uint8).tolist() == [0, 1, 1, 1]
    with st.safe_open(path, framework="pt") as f:
        assert f.get_tensor("b").to(ea.uint8).tolist() == [0, 1, 1, 1]


def test_pickle_protocol_99_is_refused():
    with pytest.raises(pickle.UnpicklingError, match="unsupported pickle protocol: 99") as e:
        ea.load(io.BytesIO(wrap(program(P.NONE, proto=99))))
    assert ADVICE not in str(e.value)


def test_codecs_encode_runs_only_the_strict_error_handler(tmp_path):
    sentinel = tmp_path / "pwned"

    def handler(err):
        sentinel.write_text("x")
        return ("?", err.end)

    codecs.register_error("ember_test_handler", handler)
    body = glob("_codecs", "encode") + P.MARK + ustr("\u20ac") + ustr("latin1") + ustr("ember_test_handler")
    body += P.TUPLE + P.REDUCE
    with pytest.raises(pickle.UnpicklingError, match="unsupported error handler 'ember_test_handler'"):
        ea.load(io.BytesIO(wrap(program(body))))
    assert not sentinel.exists()
    ok = glob("_codecs", "encode") + P.MARK + ustr("abc") + ustr("latin1") + P.TUPLE + P.REDUCE
    assert ea.load(io.BytesIO(wrap(program(ok)))) == b"abc"


# ---- messages: the weights_only=False advice only for what the allowlist refused -------------------
def test_allowlist_refusals_carry_the_advice():
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed") as e:
        ea.load(io.BytesIO(wrap(program(glob("__main__", "Config")))))
    assert ADVICE in str(e.value) and "GLOBAL __main__.Config was not an allowed global" in str(e.value)
    with pytest.raises(pickle.UnpicklingError, match="whose module os is blocked") as e:
        ea.load(io.BytesIO(wrap(program(glob("os", "system")))))
    assert ADVICE in str(e.value)
    with pytest.raises(pickle.UnpicklingError, match=r"Unsupported operand 105 \(INST\)") as e:
        ea.load(io.BytesIO(wrap(program(P.INST + b"os\nsystem\n"))))
    assert ADVICE in str(e.value)


@MMAP
def test_size_mismatch_is_its_own_error(mmap, tmp_path):
    raw = wrap(program(rebuild(storage_pid("FloatStorage", "0", 4), (4,))), {"0": b"\x00" * 8})
    with pytest.raises(RuntimeError, match="record data/0 holds 8 bytes but the checkpoint describes a storage of 16"):
        load_raw(raw, tmp_path, mmap)


def test_missing_cuda_is_its_own_error():
    from ember.c10py import cuda

    if cuda.is_available():
        pytest.skip("needs a machine without CUDA")  # the message under test is the CPU-only one
    buf = io.BytesIO()
    ea.save({"w": ea.ones(2)}, buf)
    with pytest.raises(RuntimeError, match="Attempting to deserialize object on a CUDA device") as e:
        ea.load(io.BytesIO(buf.getvalue()), map_location="cuda:0")
    assert ADVICE not in str(e.value) and not isinstance(e.value, pickle.UnpicklingError)


@pytest.mark.parametrize(
    "payload, message",
    [
        (P.PROTO + b"\x02" + P.EMPTY_DICT, "truncated"),
        (program(P.APPEND), "malformed pickle data"),
        (program(glob("torch._utils", "_rebuild_tensor_v2") + P.EMPTY_TUPLE + P.REDUCE), "malformed pickle data"),
    ],
)
def test_malformed_streams_do_not_carry_the_advice(payload, message):
    with pytest.raises(pickle.UnpicklingError, match=message) as e:
        ea.load(io.BytesIO(wrap(payload)))
    assert ADVICE not in str(e.value)


def with_names(raw: bytes, fn) -> bytes:
    """Rewrites every record name (local headers and central directory alike) through ``fn``."""
    src = zipfile.ZipFile(io.BytesIO(raw))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        for info in src.infolist():
            z.writestr(zipfile.ZipInfo(fn(info.filename)), src.read(info.filename))
    return out.getvalue()


@pytest.mark.parametrize(
    "fn, what",
    [
        (lambda n: "../" + n, "has a '..' or '.' path component"),
        (lambda n: n.replace("archive/", "../"), "has a '..' or '.' path component"),
        (lambda n: "/" + n, "is an absolute path"),
        (lambda n: n.replace("archive/", "archXive/"), "contains a NUL byte"),  # X becomes NUL below
    ],
    ids=["dotdot-above", "dotdot-prefix", "absolute", "nul"],
)
def test_archive_prefixes_that_are_not_plain_names(fn, what):
    raw = with_names(valid_checkpoint(), fn)
    raw = raw.replace(b"archXive/", b"arch\x00ive/")  # zipfile cuts names at NUL when writing: patch the bytes
    with pytest.raises(RuntimeError, match=f"the record name .* {what}") as e:
        ea.load(io.BytesIO(raw))
    assert "file not found" not in str(e.value)


# ---- TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD & co. (PyTorch 2.13's rules) --------------------------------
class Config:
    def __init__(self, lr: float = 0.1) -> None:
        self.lr = lr


ENV_VARS = (
    "TORCH_FORCE_WEIGHTS_ONLY_LOAD",
    "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD",
    "EMBER_FORCE_WEIGHTS_ONLY_LOAD",
    "EMBER_FORCE_NO_WEIGHTS_ONLY_LOAD",
)


@pytest.fixture
def config_checkpoint(monkeypatch):
    for name in ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    buf = io.BytesIO()
    ea.save({"cfg": Config(0.5), "w": ea.ones(2)}, buf)
    return buf.getvalue()


@pytest.mark.parametrize("var", ["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "EMBER_FORCE_NO_WEIGHTS_ONLY_LOAD"])
@pytest.mark.parametrize("value", ["1", "y", "YES", "True"])
def test_force_no_weights_only_load(var, value, config_checkpoint, monkeypatch):
    monkeypatch.setenv(var, value)
    with pytest.warns(UserWarning, match=f"Environment variable {var} detected, since the `weights_only` argument"):
        out = ea.load(io.BytesIO(config_checkpoint))
    assert out["cfg"].lr == 0.5 and out["w"].tolist() == [1.0, 1.0]
    # an explicit weights_only=True is kept (PyTorch: the variable only changes an unpassed argument)
    with pytest.raises(pickle.UnpicklingError, match="Config was not an allowed global"):
        ea.load(io.BytesIO(config_checkpoint), weights_only=True)


@pytest.mark.parametrize("value", ["0", "no", "false", ""])
def test_force_no_weights_only_load_false_values(value, config_checkpoint, monkeypatch):
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", value)
    with pytest.raises(pickle.UnpicklingError, match="Config was not an allowed global"):
        ea.load(io.BytesIO(config_checkpoint))


@pytest.mark.parametrize("var", ["TORCH_FORCE_WEIGHTS_ONLY_LOAD", "EMBER_FORCE_WEIGHTS_ONLY_LOAD"])
def test_force_weights_only_load_wins_over_an_explicit_false(var, config_checkpoint, monkeypatch):
    monkeypatch.setenv(var, "1")
    with pytest.raises(pickle.UnpicklingError, match="Config was not an allowed global"):
        ea.load(io.BytesIO(config_checkpoint), weights_only=False)


def test_both_force_variables_are_an_error(config_checkpoint, monkeypatch):
    monkeypatch.setenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "1")
    monkeypatch.setenv("EMBER_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    with pytest.raises(
        RuntimeError,
        match="Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or `EMBER_FORCE_NO_WEIGHTS_ONLY_LOAD` should be set",
    ):
        ea.load(io.BytesIO(config_checkpoint))


def test_no_variable_keeps_the_safe_default(config_checkpoint):
    assert not any(os.environ.get(v) for v in ENV_VARS)
    with pytest.raises(pickle.UnpicklingError, match="Config was not an allowed global"):
        ea.load(io.BytesIO(config_checkpoint))
    assert serialization.load is ea.load
