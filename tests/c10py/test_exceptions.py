"""C++ errors arrive in Python as the matching exception type."""

from __future__ import annotations

import pytest
from ember.c10py import _C

EXCEPTIONS = [
    ("Error", RuntimeError),
    ("IndexError", IndexError),
    ("ValueError", ValueError),
    ("TypeError", TypeError),
    ("NotImplementedError", NotImplementedError),
    ("OutOfMemoryError", _C.OutOfMemoryError),
    ("LinAlgError", _C.LinAlgError),
]


def test_exception_classes() -> None:
    assert issubclass(_C.OutOfMemoryError, MemoryError)
    # PyTorch's torch.OutOfMemoryError is a RuntimeError: `except RuntimeError` around
    # an allocation (batch-size search, retry loops) must catch a CUDA OOM.
    assert issubclass(_C.OutOfMemoryError, RuntimeError)
    assert issubclass(_C.LinAlgError, RuntimeError)
    assert not issubclass(_C.LinAlgError, MemoryError)
    assert _C.OutOfMemoryError.__name__ == "OutOfMemoryError"
    assert _C.LinAlgError.__name__ == "LinAlgError"


@pytest.mark.parametrize(("kind", "exc_type"), EXCEPTIONS)
def test_exception_mapping(kind: str, exc_type: type[BaseException]) -> None:
    msg = f"boom from {kind}: 42"
    with pytest.raises(exc_type) as info:
        _C._test_throw(kind, msg)
    assert type(info.value) is exc_type
    text = str(info.value)
    assert text.startswith(msg)
    # debug builds name the C++ source location; release builds keep the message clean
    if _C._build_info["debug"]:
        assert ".cpp:" in text
    else:
        assert ".cpp:" not in text
        assert text == msg


def test_error_is_not_a_subclass_of_the_others() -> None:
    with pytest.raises(RuntimeError) as info:
        _C._test_throw("Error", "plain")
    assert not isinstance(info.value, (_C.LinAlgError, IndexError, ValueError))


def test_unknown_kind() -> None:
    with pytest.raises(ValueError, match="unknown kind Nope"):
        _C._test_throw("Nope", "x")
