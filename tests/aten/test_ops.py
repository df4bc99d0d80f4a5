"""The OpInfo-driven operator tests: every entry of opinfo.op_db x its dtypes x devices.

Tests taking ``device`` run on the CPU and, marked ``cuda`` (skipped without a GPU), on
CUDA: there every sample is moved to the GPU and its result checked against the NumPy
reference (or, for entries without one, against the CPU kernel's result).
"""

from __future__ import annotations

from typing import Any

import ember.aten as ea
import numpy as np
import pytest
from opinfo import op_db
from opinfo.core import (
    ALL_DTYPES,
    OpInfo,
    SampleInput,
    assert_close,
    expected_result_type,
    noncontiguous_variants,
    np_dtype,
    sample_to_device,
    to_numpy,
    to_reference,
)

PAIRS = [(op, dt) for op in op_db for dt in op.dtypes]
PAIR_IDS = [f"{op.name}-{dt._name}" for op, dt in PAIRS]


def _pairs(keep: Any) -> Any:
    """(op, dtype) parameters of the entries `keep` accepts: an entry without the variant a
    test checks is left out at collection, so that a skip in the report is a real one."""
    kept = [(pair, pid) for pair, pid in zip(PAIRS, PAIR_IDS, strict=True) if keep(pair[0])]
    return pytest.mark.parametrize(("op", "dtype"), [p for p, _ in kept], ids=[i for _, i in kept])


def _call(fn: Any, s: SampleInput, **extra: Any) -> Any:
    return fn(s.input, *s.args, **s.kwargs, **extra)


def _reference(op: OpInfo, s: SampleInput) -> Any:
    assert op.ref is not None
    args = [to_reference(a) for a in s.args]
    kwargs = {k: to_reference(v) for k, v in s.kwargs.items()}
    return op.ref(to_reference(s.input), *args, **kwargs)


def _expected_dtype(op: OpInfo, s: SampleInput) -> Any:
    if op.result_dtype is not None:
        return op.result_dtype(s)
    if op.kind in ("unary", "binary"):
        return expected_result_type(s.input, *s.args)
    return None


def _check(op: OpInfo, s: SampleInput, result: Any, dtype: Any, what: str) -> None:
    atol, rtol = op.tolerance(dtype)
    exp_dtype = _expected_dtype(op, s)
    if op.ref is not None:
        with np.errstate(all="ignore"):
            expected = _reference(op, s)
        if exp_dtype is not None and not exp_dtype.is_floating_point and isinstance(result, ea.Tensor):
            # integer results wrap around like C (the reference computes in int64)
            expected = np.asarray(expected).astype(np_dtype(exp_dtype))
        assert_close(result, expected, dtype, atol=atol, rtol=rtol, msg=f"{op.name} {what}")
    if exp_dtype is not None and isinstance(result, ea.Tensor):
        assert result.dtype == exp_dtype, f"{op.name} {what}: dtype {result.dtype} != {exp_dtype}"


def _tensors_of(x: Any) -> list[Any]:
    if isinstance(x, ea.Tensor):
        return [x]
    if isinstance(x, (list, tuple)):
        return [t for v in x for t in _tensors_of(v)]
    return []


def _check_on_device(op: OpInfo, s: SampleInput, dtype: Any, device: str, what: str) -> None:
    """The sample run on `device`: results on that device, with the CPU result's dtypes and
    shapes, and the NumPy reference's values (the CPU result's where there is no reference)."""
    expected = _call(op.op, s)
    got = _call(op.op, sample_to_device(s, device, op.op))
    got_t, exp_t = _tensors_of(got), _tensors_of(expected)
    assert len(got_t) == len(exp_t), f"{op.name} {what}: {len(got_t)} tensors on {device}, {len(exp_t)} on cpu"
    for g, e in zip(got_t, exp_t, strict=True):
        assert g.device.type == device, f"{op.name} {what}: result on {g.device}, expected {device}"
        assert g.dtype == e.dtype, f"{op.name} {what}: dtype {g.dtype} on {device}, {e.dtype} on cpu"
    if op.ref is not None:
        _check(op, s, got, dtype, f"{what} on {device}")
    else:
        atol, rtol = op.tolerance(dtype)
        assert_close(got, to_numpy(expected), dtype, atol=atol, rtol=rtol, msg=f"{op.name} {what} on {device}")


@pytest.mark.parametrize(("op", "dtype"), PAIRS, ids=PAIR_IDS)
def test_reference(op: OpInfo, dtype: Any, device: str, capability: str | None) -> None:
    """Values (against NumPy) and result dtype for every sample, on every CPU capability and on CUDA."""
    for i, s in enumerate(op.sample_inputs(op, dtype)):
        if device == "cpu":
            _check(op, s, _call(op.op, s), dtype, f"sample {i} {s.name}")
        else:
            _check_on_device(op, s, dtype, device, f"sample {i} {s.name}")


@_pairs(lambda op: op.supports_noncontiguous)
def test_noncontiguous(op: OpInfo, dtype: Any, device: str) -> None:
    """Transposed and strided-slice inputs give the contiguous result."""
    for s in op.sample_inputs(op, dtype):
        s = sample_to_device(s, device, op.op)
        base = _call(op.op, s)
        positions = [("input", s.input)] + [(i, a) for i, a in enumerate(s.args)]
        for where, t in positions:
            if not isinstance(t, ea.Tensor):
                continue
            for name, nc in noncontiguous_variants(t):
                args = list(s.args)
                inp = s.input
                if where == "input":
                    inp = nc
                else:
                    args[where] = nc  # type: ignore[index]
                got = _call(op.op, SampleInput(inp, tuple(args), s.kwargs))
                assert all(r.device.type == device for r in _tensors_of(got)), f"{op.name} {name}: not on {device}"
                atol, rtol = op.tolerance(dtype)
                assert_close(got, _to_np(base), dtype, atol=atol, rtol=rtol, msg=f"{op.name} {name} {where}")


def _to_np(x: Any) -> Any:
    return to_numpy(x)


@_pairs(lambda op: op.kind in ("unary", "binary") and op.ref is not None)
def test_expanded_input(op: OpInfo, dtype: Any, device: str) -> None:
    """An expanded (stride-0) input of an elementwise op behaves as the materialised broadcast."""
    from opinfo.core import make_tensor

    row = make_tensor((1, 4), dtype, exclude_zero=True, low=0.5 if dtype.is_floating_point else None).to(device)
    expanded = row.expand(3, 4)
    assert expanded.stride(0) == 0
    args = (expanded,) if op.kind == "binary" else ()
    s = SampleInput(expanded, args)
    _check(op, s, _call(op.op, s), dtype, "expanded")


@_pairs(lambda op: op.method is not None)
def test_method_matches_function(op: OpInfo, dtype: Any, device: str) -> None:
    assert op.method is not None
    for s in op.sample_inputs(op, dtype):
        s = sample_to_device(s, device, op.op)
        assert_close(_call(op.method, s), _to_np(_call(op.op, s)), dtype, atol=0, rtol=0, msg=op.name)


@_pairs(lambda op: op.supports_out)
def test_out(op: OpInfo, dtype: Any, device: str) -> None:
    """out= returns the very tensor passed, resized, with the values; a wrong dtype is an error."""
    for s in op.sample_inputs(op, dtype):
        s = sample_to_device(s, device, op.op)
        expected = _call(op.op, s)
        if not isinstance(expected, ea.Tensor):
            continue
        out = ea.empty((0,), dtype=expected.dtype, device=device)
        r = _call(op.op, s, out=out)
        assert r is out, f"{op.name}: out= must return the out tensor itself"
        assert_close(out, _to_np(expected), dtype, atol=0, rtol=0, msg=f"{op.name} out=")
        if expected.dtype.is_floating_point:
            bad = ea.empty((0,), dtype=ea.int64, device=device)
            with pytest.raises(RuntimeError, match=r"can't be cast|dtype|out type"):
                _call(op.op, s, out=bad)


@_pairs(lambda op: op.inplace is not None)
def test_inplace(op: OpInfo, dtype: Any, device: str) -> None:
    """x.op_(...) writes into x (same data_ptr, version bumped); resizing x is an error."""
    assert op.inplace is not None
    for s in op.sample_inputs(op, dtype):
        s = sample_to_device(s, device, op.op)
        expected = _call(op.op, s)
        x = s.input.clone()
        if s.broadcasts_input:
            with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
                op.inplace(x, *s.args, **s.kwargs)
            continue
        if isinstance(expected, ea.Tensor) and not ea.can_cast(expected.dtype, x.dtype):
            with pytest.raises(RuntimeError, match="can't be cast"):
                op.inplace(x, *s.args, **s.kwargs)
            continue
        ptr, version = x.data_ptr(), x._version
        r = op.inplace(x, *s.args, **s.kwargs)
        assert r is x
        assert x.data_ptr() == ptr
        assert x._version == version + 1
        assert_close(x, _to_np(expected.to(x.dtype)), dtype, msg=f"{op.name}_")


@pytest.mark.parametrize("op", [op for op in op_db if op.check_unsupported], ids=lambda op: op.name)
def test_unsupported_dtypes_raise(op: OpInfo, device: str) -> None:
    """Dtypes outside the entry's list raise a clear error instead of computing something."""
    for dtype in ALL_DTYPES:
        if dtype in op.dtypes:
            continue
        for s in op.sample_inputs(op, dtype):
            s = sample_to_device(s, device, op.op)
            if not any(t.numel() for t in s.tensors()):
                continue
            with pytest.raises((RuntimeError, TypeError)):
                _call(op.op, s)
            break


@pytest.mark.parametrize("op", [op for op in op_db if op.error_inputs], ids=lambda op: op.name)
def test_error_inputs(op: OpInfo, device: str) -> None:
    """The entry's error samples raise its error; on CUDA too, where bad indices are found on
    the device and raised by the next synchronize at the latest."""
    assert op.error_inputs is not None
    for e in op.error_inputs(op):
        with pytest.raises(e.error_type, match=e.error_regex):
            _call(op.op, sample_to_device(e.sample, device, op.op))
            if device != "cpu":
                ea.cuda.synchronize()
