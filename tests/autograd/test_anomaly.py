"""Anomaly detection: NaN in backward names the forward op and shows where it was called."""

from __future__ import annotations

import warnings

import ember.autograd as ag
import pytest
from helpers import t

# each test runs with both of the engine's loops (conftest.py)
pytestmark = pytest.mark.usefixtures("engine_loop")


def _make_nan_backward():  # type: ignore[no-untyped-def]
    x = t([0.0, 1.0], requires_grad=True)
    y = x.sqrt()  # d sqrt / dx at 0 is inf; times 0 below gives nan
    return x, (y * t([0.0, 1.0])).sum()


def test_nan_names_the_op_and_its_forward_traceback() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ag.detect_anomaly():
            _, loss = _make_nan_backward()
            with pytest.raises(RuntimeError) as info:
                loss.backward()
    msg = str(info.value)
    assert "Function 'SqrtBackward0' returned nan values in its 0th output." in msg
    assert "_make_nan_backward" in msg  # the forward call site
    assert "y = x.sqrt()" in msg


def test_without_anomaly_mode_nan_passes_silently() -> None:
    x, loss = _make_nan_backward()
    loss.backward()
    assert x.grad.isnan().any().item()


def test_anomaly_warns_with_forward_trace_on_error() -> None:
    from ember.autograd import Function

    class Boom(Function):
        @staticmethod
        def forward(ctx, a):  # type: ignore[no-untyped-def]
            return a * 1

        @staticmethod
        def backward(ctx, g):  # type: ignore[no-untyped-def]
            raise ValueError("boom")

    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        with ag.detect_anomaly():
            y = Boom.apply(t([1.0], requires_grad=True))
            with pytest.raises(ValueError, match="boom"):
                y.sum().backward()
    texts = [str(w.message) for w in rec]
    assert any(s.startswith("Anomaly Detection has been enabled") for s in texts)
    assert any("Error detected in BoomBackward" in s and "Boom.apply" in s for s in texts)


def test_set_detect_anomaly_and_flags() -> None:
    assert not ag.is_anomaly_enabled()
    ag.set_detect_anomaly(True)
    try:
        assert ag.is_anomaly_enabled() and ag.is_anomaly_check_nan_enabled()
        x = t([1.0], requires_grad=True)
        assert "traceback_" in (x * 2).grad_fn.metadata
    finally:
        ag.set_detect_anomaly(False)
    assert not ag.is_anomaly_enabled()
    with ag.set_detect_anomaly(True, check_nan=False):
        assert ag.is_anomaly_enabled() and not ag.is_anomaly_check_nan_enabled()
        _, loss = _make_nan_backward()
        loss.backward()  # check_nan=False: no error
    assert not ag.is_anomaly_enabled()
