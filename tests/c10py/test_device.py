"""ember.c10py.device: parsing, equality, hashing, printing, pickling; DeviceGuard on CPU."""

from __future__ import annotations

import copy
import pickle

import pytest
from ember.c10py import _C

# (arguments, type, index, str, repr)
VALID = [
    (("cpu",), "cpu", None, "cpu", "device(type='cpu')"),
    (("cuda",), "cuda", None, "cuda", "device(type='cuda')"),
    (("cuda:0",), "cuda", 0, "cuda:0", "device(type='cuda', index=0)"),
    (("cuda:1",), "cuda", 1, "cuda:1", "device(type='cuda', index=1)"),
    (("cuda:127",), "cuda", 127, "cuda:127", "device(type='cuda', index=127)"),
    (("cpu:0",), "cpu", 0, "cpu:0", "device(type='cpu', index=0)"),
    (("cuda", 1), "cuda", 1, "cuda:1", "device(type='cuda', index=1)"),
    (("cuda", 0), "cuda", 0, "cuda:0", "device(type='cuda', index=0)"),
    (("cpu", 0), "cpu", 0, "cpu:0", "device(type='cpu', index=0)"),
    ((1,), "cuda", 1, "cuda:1", "device(type='cuda', index=1)"),
    ((0,), "cuda", 0, "cuda:0", "device(type='cuda', index=0)"),
]


@pytest.mark.parametrize(("args", "type_", "index", "text", "rep"), VALID)
def test_device_parsing(args: tuple, type_: str, index: int | None, text: str, rep: str) -> None:
    d = _C.device(*args)
    assert d.type == type_
    assert d.index == index
    assert str(d) == text
    assert repr(d) == rep
    assert _C.device(str(d)) == d  # str round-trips
    assert _C.device(d) == d  # a device is accepted too


def test_device_keywords() -> None:
    assert _C.device(type="cuda", index=2) == _C.device("cuda:2")
    assert _C.device("cuda", index=3).index == 3


@pytest.mark.parametrize(
    "bad",
    [
        "cuda:x",
        "gpu",
        "cuda:-1",
        "cuda:",
        "cpu:1",
        "",
        "CUDA",
        "cuda:1:2",
        "cuda:01",
        "cuda:128",
        "cuda: 1",
        " cuda",
        "cuda:1 ",
        "cuda:1000",
        "mps",
    ],
)
def test_invalid_device_strings(bad: str) -> None:
    with pytest.raises(ValueError) as info:
        _C.device(bad)
    assert f"'{bad}'" in str(info.value)


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (("cuda:1", 1), "must not include an index"),
        (("cuda", -1), "Invalid device index: -1"),
        (("cpu", 1), "Invalid device index for cpu: 1"),
        ((-1,), "Invalid device index: -1"),
        ((128,), "Invalid device index: 128"),
        ((1, 1), "Invalid device index"),
    ],
)
def test_invalid_device_arguments(args: tuple, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        _C.device(*args)


@pytest.mark.parametrize("bad", [1.0, None, True, b"cpu", ["cpu"]])
def test_device_wrong_argument_type(bad: object) -> None:
    with pytest.raises(TypeError):
        _C.device(bad)  # type: ignore[call-overload]


def test_device_given_with_index_is_rejected() -> None:
    with pytest.raises(ValueError, match="cannot be given together"):
        _C.device(_C.device("cuda"), 1)  # type: ignore[call-overload]


def test_equality_and_hash() -> None:
    assert _C.device("cuda:1") == _C.device("cuda", 1) == _C.device(1)
    assert _C.device("cuda:1") != _C.device("cuda:0")
    assert _C.device("cuda") != _C.device("cuda:0")  # no index is not index 0 (as PyTorch)
    assert _C.device("cpu") != _C.device("cpu:0")
    assert _C.device("cpu") != _C.device("cuda")
    assert _C.device("cpu") != "cpu"  # a str is not a device
    assert _C.device("cpu") != None  # noqa: E711
    assert not (_C.device("cpu") == 0)
    assert hash(_C.device("cuda:1")) == hash(_C.device("cuda", 1))
    all_devices = {_C.device(s) for s in ["cpu", "cpu:0", "cuda", "cuda:0", "cuda:1", "cuda", "cuda:1"]}
    assert len(all_devices) == 5
    assert {_C.device("cuda:1"): "x"}[_C.device(1)] == "x"


@pytest.mark.parametrize("text", ["cpu", "cpu:0", "cuda", "cuda:0", "cuda:5"])
def test_device_pickle_and_copy(text: str) -> None:
    d = _C.device(text)
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        e = pickle.loads(pickle.dumps(d, protocol=protocol))
        assert isinstance(e, _C.device)
        assert e == d and hash(e) == hash(d) and repr(e) == repr(d)
    assert copy.deepcopy(d) == d


def test_functions_taking_a_device_accept_a_string() -> None:
    assert _C.key_set_for_device("cpu") == _C.key_set_for_device(_C.device("cpu"))
    assert _C.memory_stats("cpu") == _C.memory_stats(_C.device("cpu"))


def test_device_guard_on_cpu() -> None:
    with _C.DeviceGuard(_C.device("cpu")) as g:
        assert g.original_device.type == "cpu"
    with _C.DeviceGuard(_C.device("cpu:0")):
        pass
