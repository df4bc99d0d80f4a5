"""nn.LSTM / nn.GRU run their layers through the fused aten operators (_lstm_layer,
_gru_layer): outputs, final states and every gradient equal those of the per-step
composition of aten ops (``_functional_rnn.use_fused = False``, the reference) across
layouts (padded, batch_first, packed with unequal lengths, unbatched), stacking and
directions, in float64; gradcheck through the fused path; the cells too; inference
(no_grad: the operators save no workspace) on one and two threads; and PyTorch's error
for an empty sequence."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import ember.aten as ea
import numpy as np
import pytest
from ember import nn
from ember.autograd import grad, gradcheck, no_grad
from ember.nn import _functional_rnn as fr
from ember.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

F64 = ea.float64


@pytest.fixture
def unfused() -> Iterator[None]:
    fr.use_fused = False
    try:
        yield
    finally:
        fr.use_fused = True


def run(m: nn.Module, x: Any, hx: Any, fused: bool) -> list[Any]:
    """(output, final states, input grad, parameter grads) of m, fused or per step."""
    fr.use_fused = fused
    try:
        m.zero_grad()
        xg = x.detach().clone().requires_grad_(True)
        inp = pack_padded_sequence(xg, [4, 3, 1], batch_first=m.batch_first) if hx == "packed" else xg
        out, finals = m(inp, None if hx == "packed" else hx)
        if hx == "packed":
            out = pad_packed_sequence(out, batch_first=m.batch_first)[0]
        states = list(finals) if isinstance(finals, tuple) else [finals]
        loss = (out * ea.arange(out.numel(), dtype=F64).reshape(out.shape).cos()).sum()
        for k, s in enumerate(states):
            loss = loss + (s * (k + 2)).sin().sum()
        loss.backward()
        return [out, *states, xg.grad, *[p.grad for p in m.parameters()]]
    finally:
        fr.use_fused = True


CONFIGS = [
    ("LSTM", {}),
    ("LSTM", {"num_layers": 2, "bidirectional": True}),
    ("LSTM", {"batch_first": True, "bias": False}),
    ("GRU", {}),
    ("GRU", {"num_layers": 2, "bidirectional": True}),
    ("GRU", {"batch_first": True, "bias": False}),
]


@pytest.mark.parametrize("hx", [None, "packed", "unbatched"])
@pytest.mark.parametrize("mode,kw", CONFIGS)
def test_fused_equals_per_step_composition(mode: str, kw: dict, hx: Any) -> None:
    ea.manual_seed(3)
    m = getattr(nn, mode)(3, 5, dtype=F64, **kw)
    shape = (3, 4, 3) if kw.get("batch_first") else (4, 3, 3)
    x = ea.randn(*shape, dtype=F64)
    if hx == "unbatched":
        x, hx = x[0] if kw.get("batch_first") else x[:, 0], None
    got, want = run(m, x, hx, True), run(m, x, hx, False)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), atol=1e-12, rtol=1e-10)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("mode,kw", [("LSTM", {"num_layers": 2, "bidirectional": True}), ("GRU", {"num_layers": 2})])
@pytest.mark.parametrize("dtype", [ea.float32, F64])
def test_no_grad_forward_equals_grad_forward(threads: int, mode: str, kw: dict, dtype: Any) -> None:
    # hidden 45 (not a multiple of a SIMD width), batch 9 packed with unequal lengths: on two
    # threads the CPU layer runs blocks of batch rows; no_grad runs it with train=False
    previous = ea.get_num_threads()
    ea.set_num_threads(threads)
    try:
        ea.manual_seed(6)
        m = getattr(nn, mode)(7, 45, dtype=dtype, **kw)
        x = ea.randn(6, 9, 7, dtype=dtype)
        lengths = [6, 6, 5, 5, 4, 3, 3, 2, 1]
        with no_grad():
            out, finals = m(pack_padded_sequence(x, lengths))
        out_g, finals_g = m(pack_padded_sequence(x, lengths))
        fr.use_fused = False
        try:
            with no_grad():
                out_ref, finals_ref = m(pack_padded_sequence(x, lengths))
        finally:
            fr.use_fused = True
    finally:
        ea.set_num_threads(previous)
    states = list(finals) if mode == "LSTM" else [finals]
    states_g = list(finals_g) if mode == "LSTM" else [finals_g]
    states_ref = list(finals_ref) if mode == "LSTM" else [finals_ref]
    assert out_g.data.requires_grad and not out.data.requires_grad
    tol = 1e-12 if dtype == F64 else 2e-6
    for a, b, r in zip([out.data, *states], [out_g.data, *states_g], [out_ref.data, *states_ref], strict=True):
        np.testing.assert_array_equal(a.numpy(), b.detach().numpy())
        np.testing.assert_allclose(a.numpy(), r.numpy(), atol=tol, rtol=tol)


@pytest.mark.parametrize("cls", [nn.LSTMCell, nn.GRUCell])
def test_fused_cells_equal_per_step_composition(cls: Any) -> None:
    ea.manual_seed(4)
    cell = cls(3, 4, dtype=F64)
    x, h, c = ea.randn(2, 3, dtype=F64), ea.randn(2, 4, dtype=F64), ea.randn(2, 4, dtype=F64)
    results = []
    for fused in (True, False):
        fr.use_fused = fused
        try:
            out = cell(x, (h, c)) if cls is nn.LSTMCell else (cell(x, h),)
        finally:
            fr.use_fused = True
        results.append(out)
    for g, w in zip(*results, strict=True):
        np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), atol=1e-12, rtol=1e-10)


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_gradcheck_fused_layers(mode: str) -> None:
    ea.manual_seed(5)
    m = getattr(nn, mode)(2, 3, num_layers=2, bidirectional=True, dtype=F64)
    x = ea.randn(3, 2, 2, dtype=F64, requires_grad=True)
    h0 = ea.randn(4, 2, 3, dtype=F64, requires_grad=True)
    c0 = ea.randn(4, 2, 3, dtype=F64, requires_grad=True)

    def fn(x: Any, h0: Any, c0: Any = None) -> Any:
        out, finals = m(pack_padded_sequence(x, [3, 2]), (h0, c0) if mode == "LSTM" else h0)
        states = finals if mode == "LSTM" else (finals,)
        return (pad_packed_sequence(out)[0], *states)

    assert gradcheck(fn, (x, h0, c0) if mode == "LSTM" else (x, h0))


def test_fused_layer_has_no_double_backward() -> None:
    # as PyTorch's fused RNN backward: a first derivative, no second
    m = nn.LSTM(2, 3, dtype=F64)
    x = ea.randn(2, 1, 2, dtype=F64, requires_grad=True)
    out, _ = m(x)
    (g,) = grad(out.sum(), x, create_graph=True)
    with pytest.raises(Exception, match="_lstm_layer_backward"):
        grad(g.sum(), x)


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("fused", [True, False])
def test_zero_length_sequence_raises_as_pytorch(unfused: None, mode: str, fused: bool) -> None:
    fr.use_fused = fused
    m = getattr(nn, mode)(3, 4)
    with pytest.raises(RuntimeError, match="Expected sequence length to be larger than 0 in RNN"):
        m(ea.zeros(0, 2, 3))
