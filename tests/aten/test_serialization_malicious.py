"""ember.aten.load against hostile and corrupt checkpoints.

Every payload below would do something under plain pickle (run a shell command, write a
file, import a module, allocate a terabyte). Each must be refused with UnpicklingError
or RuntimeError, and each test checks afterwards that the side effect did not happen.
"""

from __future__ import annotations

import io
import os
import pickle
import struct
import time
import tracemalloc
import zipfile

import ember.aten as ea
import pytest

P = pickle  # opcode constants


def wrap(data_pkl: bytes, storages: dict[str, bytes] | None = None, prefix: str = "archive", **records: bytes) -> bytes:
    """A well-formed checkpoint zip around a hand-written data.pkl."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        z.writestr(f"{prefix}/data.pkl", data_pkl)
        z.writestr(f"{prefix}/byteorder", records.pop("byteorder", b"little"))
        for key, data in (storages or {}).items():
            z.writestr(f"{prefix}/data/{key}", data)
        z.writestr(f"{prefix}/version", records.pop("version", b"3\n"))
        for name, data in records.items():
            z.writestr(f"{prefix}/{name}", data)
    return out.getvalue()


def glob(module: str, name: str) -> bytes:
    return P.GLOBAL + module.encode() + b"\n" + name.encode() + b"\n"


def ustr(s: str) -> bytes:
    b = s.encode()
    return P.BINUNICODE + struct.pack("<I", len(b)) + b


def call(module: str, name: str, *args: bytes) -> bytes:
    """GLOBAL module.name, MARK args TUPLE, REDUCE."""
    return glob(module, name) + P.MARK + b"".join(args) + P.TUPLE + P.REDUCE


def program(body: bytes) -> bytes:
    return P.PROTO + b"\x02" + body + P.STOP


def load_bytes(raw: bytes, **kw):
    return ea.load(io.BytesIO(raw), **kw)


@pytest.fixture
def sentinel(tmp_path):
    path = tmp_path / "pwned"
    yield path
    assert not path.exists(), "a refused payload still had its side effect"


# ---- code execution through globals -------------------------------------------------------------
def shell_payloads(path):
    cmd = f"touch {path}"
    code = f"open({str(path)!r}, 'w').write('x')"
    return {
        "os.system": program(call("os", "system", ustr(cmd))),
        "posix.system": program(call("posix", "system", ustr(cmd))),
        "nt.system": program(call("nt", "system", ustr(cmd))),
        "builtins.eval": program(call("builtins", "eval", ustr(code))),
        "__builtin__.eval": program(call("__builtin__", "eval", ustr(code))),
        "builtins.exec": program(call("builtins", "exec", ustr(code))),
        "builtins.open": program(call("builtins", "open", ustr(str(path)), ustr("w"))),
        "builtins.getattr": program(
            call("builtins", "getattr", call("builtins", "__import__", ustr("os")), ustr("system"))
        ),
        "builtins.__import__": program(call("builtins", "__import__", ustr("os"))),
        "subprocess.call": program(
            glob("subprocess", "call")
            + P.MARK
            + P.EMPTY_LIST
            + P.MARK
            + ustr("touch")
            + ustr(str(path))
            + P.APPENDS
            + P.TUPLE
            + P.REDUCE
        ),
        "sys.modules": program(glob("sys", "modules")),
        "importlib.import_module": program(call("importlib", "import_module", ustr("os"))),
        "torch.load": program(call("torch", "load", ustr(str(path)))),
        "pathlib.Path": program(call("pathlib", "Path", ustr(str(path)))),
    }


@pytest.mark.parametrize(
    "name",
    list(shell_payloads("/x")),
)
def test_globals_that_run_code_are_refused(name, sentinel):
    raw = wrap(shell_payloads(sentinel)[name])
    with pytest.raises(pickle.UnpicklingError) as info:
        load_bytes(raw)
    msg = str(info.value)
    assert "Weights only load failed" in msg
    global_name = name.split(".")[-1]
    assert global_name in msg or "blocked" in msg


def test_blocked_module_message_names_it(sentinel):
    with pytest.raises(
        pickle.UnpicklingError, match=r"Trying to load unsupported GLOBAL os\.system whose module os is blocked"
    ):
        load_bytes(wrap(shell_payloads(sentinel)["os.system"]))


def test_unsupported_global_message(sentinel):
    with pytest.raises(
        pickle.UnpicklingError,
        match=r"Unsupported global: GLOBAL eval was not an allowed global by default. Please use "
        r"`ember.aten.serialization.add_safe_globals\(\[eval\]\)`",
    ):
        load_bytes(wrap(shell_payloads(sentinel)["builtins.eval"]))


class Evil:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (os.system, (f"touch {self.path}",))


def touch(path):
    with open(path, "w") as fh:
        fh.write("x")


class EvilLocal:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (touch, (self.path,))


def test_reduce_of_arbitrary_classes_is_refused(sentinel):
    for obj in (Evil(sentinel), EvilLocal(str(sentinel)), {"nested": [EvilLocal(str(sentinel))]}):
        raw = wrap(pickle.dumps(obj, protocol=2))
        with pytest.raises(pickle.UnpicklingError):
            load_bytes(raw)


def test_saved_arbitrary_object_needs_weights_only_false(sentinel):
    # ember.aten.save writes it; the default load refuses it and never falls back to pickle.
    buf = io.BytesIO()
    ea.save({"x": EvilLocal(str(sentinel))}, buf)
    with pytest.raises(pickle.UnpicklingError, match="touch"):
        load_bytes(buf.getvalue())


# ---- opcodes -----------------------------------------------------------------------------------------
def test_inst_and_obj_opcodes_are_refused(sentinel):
    inst = P.PROTO + b"\x02" + P.MARK + ustr(str(sentinel)) + P.INST + __name__.encode() + b"\ntouch\n" + P.STOP
    obj = P.PROTO + b"\x02" + P.MARK + glob(__name__, "touch") + ustr(str(sentinel)) + P.OBJ + P.STOP
    obj_allowed = P.PROTO + b"\x02" + P.MARK + glob("collections", "OrderedDict") + P.OBJ + P.STOP
    for payload, opname in ((inst, "INST"), (obj, None), (obj_allowed, "OBJ")):
        with pytest.raises(pickle.UnpicklingError) as info:
            load_bytes(wrap(payload))
        if opname:
            assert f"Unsupported operand {payload[2 if opname == 'OBJ' else 2 + 0]}" in str(
                info.value
            ) or opname in str(info.value)


@pytest.mark.parametrize(
    "payload, message",
    [
        (
            P.PROTO + b"\x04" + P.FRAME + struct.pack("<Q", 3) + P.EMPTY_DICT + P.MEMOIZE + P.STOP,
            "Unsupported operand 149",
        ),
        (program(P.SHORT_BINUNICODE + b"\x01a"), "Unsupported operand 140"),
        (program(P.STRING + b"'a'\n"), "Unsupported operand 83"),
        (program(P.LONG4 + struct.pack("<i", 2**30)), "Unsupported operand 139"),
        (program(P.BINBYTES + struct.pack("<I", 2)), "Unsupported operand 66"),
        (program(P.EXT1 + b"\x01"), "Unsupported operand 130"),
        (program(P.EMPTY_LIST + P.EMPTY_DICT + P.BUILD), "Can only build Tensor, Parameter, OrderedDict"),
        (
            program(P.EMPTY_DICT + P.MARK + ustr("__class__") + glob("collections", "OrderedDict") + P.DICT + P.BUILD),
            "Unsupported operand",
        ),
        (program(P.EMPTY_LIST + ustr("k") + ustr("v") + P.SETITEM), "Can only SETITEM for dict"),
        (program(P.EMPTY_DICT + P.NONE + P.APPEND), "Can only append to lists"),
        (program(glob("collections", "OrderedDict") + P.EMPTY_TUPLE + P.NEWOBJ), "Can only create new object"),
        (program(P.BINGET + b"\x07"), "memo slot 7 read before it was written"),
        (program(P.APPEND), "malformed pickle data"),
        (program(P.EMPTY_DICT + P.EMPTY_LIST + P.MARK + P.NONE + P.SETITEM), "malformed pickle data"),
        (P.PROTO + b"\x02" + P.EMPTY_DICT, "truncated"),
        (program(P.BINUNICODE + struct.pack("<I", 2**31) + b"abc"), "truncated"),
        (program(P.EMPTY_DICT + P.EMPTY_LIST + ustr("v") + P.SETITEM), "dict key rejected"),
        (program(P.EMPTY_DICT + P.NONE), "unbalanced stack"),
    ],
)
@pytest.mark.filterwarnings("ignore:Detected pickle protocol 4")
def test_malformed_and_unsupported_streams(payload, message):
    with pytest.raises(pickle.UnpicklingError, match=message):
        load_bytes(wrap(payload))


def test_no_fallback_to_full_pickle_on_error(sentinel):
    # A stream the weights-only VM rejects half way: nothing after the refusal runs.
    payload = program(P.MARK + P.EMPTY_LIST + call("os", "system", ustr(f"touch {sentinel}")) + P.TUPLE)
    with pytest.raises(pickle.UnpicklingError):
        load_bytes(wrap(payload))


# ---- arguments that would allocate -----------------------------------------------------------------
def test_bytearray_of_huge_size_is_refused():
    payload = program(call("builtins", "bytearray", P.LONG1 + b"\x06" + (2**44).to_bytes(6, "little")))
    tracemalloc.start()
    try:
        with pytest.raises(pickle.UnpicklingError, match="bytearray called with unsupported arguments"):
            load_bytes(wrap(payload))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 50 * 2**20


def storage_pid(storage_type: str, key: str, numel: bytes) -> bytes:
    return (
        P.MARK + ustr("storage") + glob("torch", storage_type) + ustr(key) + ustr("cpu") + numel + P.TUPLE + P.BINPERSID
    )


def int_tuple(*vals: int) -> bytes:
    return P.MARK + b"".join(P.LONG1 + bytes([9]) + v.to_bytes(9, "little", signed=True) for v in vals) + P.TUPLE


def rebuild(storage: bytes, offset: int, size: tuple, stride: tuple) -> bytes:
    return (
        glob("torch._utils", "_rebuild_tensor_v2") + P.MARK + storage + int_tuple(offset)[1:-1]
        + int_tuple(*size) + int_tuple(*stride) + P.NEWFALSE + glob("collections", "OrderedDict")
        + P.EMPTY_TUPLE + P.REDUCE + P.TUPLE + P.REDUCE
    )  # fmt: skip


def test_huge_numel_with_a_tiny_record_is_refused_before_allocating():
    numel = P.LONG1 + b"\x06" + (25 * 2**40).to_bytes(6, "little")  # 100 TB of float32
    payload = program(rebuild(storage_pid("FloatStorage", "0", numel), 0, (25 * 2**40,), (1,)))
    raw = wrap(payload, {"0": b"\x00" * 8})
    assert len(raw) < 2000
    t0 = time.perf_counter()
    with pytest.raises(
        RuntimeError,
        match=r"record data/0 holds 8 bytes but the checkpoint describes a storage of 109951162777600 bytes",
    ):
        load_bytes(raw)
    assert time.perf_counter() - t0 < 5


@pytest.mark.parametrize(
    "offset, size, stride, message",
    [
        (0, (3,), (1,), "out of bounds for storage of size 8"),  # 3 float32 over 8 bytes
        (2, (1,), (1,), "out of bounds"),
        (0, (2, 2**40), (1, 2**40), "out of bounds"),
        (0, (2**62, 2**62), (1, 1), "out of bounds"),
        (-1, (1,), (1,), "negative size, stride or storage offset"),
        (0, (2,), (-1,), "negative size, stride or storage offset"),
        (0, (-2,), (1,), "negative size, stride or storage offset"),
        (0, (2, 1), (1,), "differ in length"),
    ],
)
def test_tensor_geometry_outside_its_storage_is_refused(offset, size, stride, message):
    numel = P.BININT1 + b"\x02"
    payload = program(rebuild(storage_pid("FloatStorage", "0", numel), offset, size, stride))
    with pytest.raises(RuntimeError, match=message):  # PyTorch's type: no "weights_only=False" advice
        load_bytes(wrap(payload, {"0": b"\x00" * 8}))


def test_persistent_ids_other_than_storages_are_refused():
    for pid, message in (
        (P.MARK + ustr("module") + ustr("os") + P.TUPLE, "Only persistent_load of storage is allowed"),
        (ustr("storage"), "persistent_load id must be tuple or int"),
        (
            P.MARK + ustr("storage") + P.NONE + ustr("0") + ustr("cpu") + P.BININT1 + b"\x01" + P.TUPLE,
            "not a storage type",
        ),
        (
            P.MARK + ustr("storage") + glob("torch", "FloatStorage") + ustr("0") + ustr("cpu") + P.NONE + P.TUPLE,
            "numel must be a non-negative int",
        ),
    ):
        with pytest.raises(pickle.UnpicklingError, match=message):
            load_bytes(wrap(program(pid + P.BINPERSID), {"0": b"\x00" * 4}))


def test_unsupported_torch_dtypes_are_named():
    with pytest.raises(pickle.UnpicklingError, match=r"ember has no dtype torch\.complex64"):
        load_bytes(wrap(program(glob("torch", "complex64"))))
    with pytest.raises(pickle.UnpicklingError, match="ComplexFloatStorage"):
        load_bytes(wrap(program(glob("torch", "ComplexFloatStorage"))))


# ---- the archive ----------------------------------------------------------------------------------------
def valid_checkpoint() -> bytes:
    buf = io.BytesIO()
    ea.save({"w": ea.arange(64.0).reshape(8, 8), "b": ea.ones(8, dtype=ea.int64)}, buf)
    return buf.getvalue()


@pytest.mark.parametrize("cut", [0, 1, 4, 30, 100, -1, -22, -23, -100, 0.5])
def test_truncated_archives(cut):
    raw = valid_checkpoint()
    n = int(len(raw) * cut) if isinstance(cut, float) else (cut if cut >= 0 else len(raw) + cut)
    with pytest.raises(RuntimeError, match="PytorchStreamReader"):
        load_bytes(raw[:n])


def test_not_a_checkpoint():
    with pytest.raises(RuntimeError, match="not a zip file"):
        load_bytes(b"garbage, not a zip")
    with pytest.raises(RuntimeError, match="legacy"):
        load_bytes(pickle.dumps({"a": 1}, protocol=2))


def rename_records(raw: bytes, fn) -> bytes:
    src = zipfile.ZipFile(io.BytesIO(raw))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        for info in src.infolist():
            new = fn(info.filename)
            if new is not None:
                z.writestr(new, src.read(info.filename))
    return out.getvalue()


@pytest.mark.parametrize(
    "fn, exc, message",
    [
        (lambda n: n.replace("data.pkl", "data2.pkl"), RuntimeError, "failed locating file data.pkl"),
        (lambda n: n.replace("/data/0", "/data/7"), RuntimeError, "failed locating file data/0"),
        (lambda n: None if n.endswith("/version") else n, RuntimeError, "failed locating file version"),
        (lambda n: n.split("/", 1)[1], RuntimeError, "not in a subdirectory"),
        (
            lambda n: n if n.endswith("data.pkl") else "other/" + n.split("/", 1)[1],
            RuntimeError,
            "not in a subdirectory archive/: other/",
        ),
    ],
)
def test_wrong_record_names(fn, exc, message):
    with pytest.raises(exc, match=message):
        load_bytes(rename_records(valid_checkpoint(), fn))


def test_bad_version_records():
    raw = wrap(program(P.NONE), version=b"99\n")
    with pytest.raises(RuntimeError, match="with version 99, but the maximum supported version for reading is 10"):
        load_bytes(raw)
    with pytest.raises(RuntimeError, match="not a number"):
        load_bytes(wrap(program(P.NONE), version=b"three"))


def test_zip_bomb_is_refused_without_inflating():
    # 200 MB of zeros deflates to ~200 KB; the loader must refuse it, not inflate it.
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("archive/data.pkl", program(P.NONE))
        z.writestr("archive/version", b"3\n")
        info = zipfile.ZipInfo("archive/data/0")
        info.compress_type = zipfile.ZIP_DEFLATED
        with z.open(info, "w") as w:
            chunk = b"\x00" * 2**20
            for _ in range(200):
                w.write(chunk)
    raw = bomb.getvalue()
    assert len(raw) < 2**20
    tracemalloc.start()
    try:
        with pytest.raises(RuntimeError, match="compressed"):
            load_bytes(raw)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 20 * 2**20


def test_record_size_past_end_of_file():
    raw = bytearray(valid_checkpoint())
    # claim 1 GB for the first storage record in the central directory
    cd = raw.rfind(b"PK\x01\x02archive/data/0"[:4])
    zf = zipfile.ZipFile(io.BytesIO(bytes(raw)))
    info = zf.getinfo("archive/data/0")
    start = 0
    while True:
        i = raw.find(b"PK\x01\x02", start)
        assert i >= 0 and i <= cd
        name_len = struct.unpack("<H", raw[i + 28 : i + 30])[0]
        if raw[i + 46 : i + 46 + name_len] == info.filename.encode():
            raw[i + 20 : i + 28] = struct.pack("<II", 2**30, 2**30)
            break
        start = i + 4
    with pytest.raises(RuntimeError, match="past the end of the"):
        load_bytes(bytes(raw))


def test_corrupt_storage_bytes_fail_the_crc():
    raw = bytearray(valid_checkpoint())
    zf = zipfile.ZipFile(io.BytesIO(bytes(raw)))
    info = zf.getinfo("archive/data/0")
    n, m = struct.unpack("<HH", raw[info.header_offset + 26 : info.header_offset + 30])
    raw[info.header_offset + 30 + n + m + 5] ^= 0xFF
    with pytest.raises(RuntimeError, match="invalid crc"):
        load_bytes(bytes(raw))
