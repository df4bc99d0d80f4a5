"""RNN, LSTM, GRU and their cells: parameters as PyTorch names them, forward values against a
NumPy float64 reference computed from the layer's own weights, packed vs padded input,
gradients by finite differences, and PyTorch's error messages."""

from __future__ import annotations

import math
import re

import ember.aten as ea
import numpy as np
import pytest
from ember import nn
from ember.autograd import gradcheck
from ember.nn.utils.rnn import pack_padded_sequence, pack_sequence, pad_packed_sequence

F64 = ea.float64


def _np(t: ea.Tensor) -> np.ndarray:
    return t.detach().numpy().astype(np.float64)


def _sig(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


# ---- NumPy reference ------------------------------------------------------------------------


def _ref_step(mode: str, x, state, w: dict):
    """One step of `mode` in NumPy; x (N, in); state h or (h, c); w holds ih, hh, b_ih, b_hh, hr."""
    b_ih = w.get("b_ih", 0.0)
    b_hh = w.get("b_hh", 0.0)
    if mode in ("tanh", "relu"):
        pre = x @ w["ih"].T + b_ih + state @ w["hh"].T + b_hh
        return np.tanh(pre) if mode == "tanh" else np.maximum(pre, 0.0)
    if mode == "lstm":
        h, c = state
        gates = x @ w["ih"].T + b_ih + h @ w["hh"].T + b_hh
        i, f, g, o = np.split(gates, 4, axis=1)
        c = _sig(f) * c + _sig(i) * np.tanh(g)
        h = _sig(o) * np.tanh(c)
        if "hr" in w:
            h = h @ w["hr"].T
        return h, c
    gi = x @ w["ih"].T + b_ih
    gh = state @ w["hh"].T + b_hh
    i_r, i_z, i_n = np.split(gi, 3, axis=1)
    h_r, h_z, h_n = np.split(gh, 3, axis=1)
    r = _sig(i_r + h_r)
    z = _sig(i_z + h_z)
    n = np.tanh(i_n + r * h_n)
    return (1 - z) * n + z * state


def _layer_weights(m, layer: int, suffix: str) -> dict:
    w = {"ih": _np(getattr(m, f"weight_ih_l{layer}{suffix}")), "hh": _np(getattr(m, f"weight_hh_l{layer}{suffix}"))}
    if m.bias:
        w["b_ih"] = _np(getattr(m, f"bias_ih_l{layer}{suffix}"))
        w["b_hh"] = _np(getattr(m, f"bias_hh_l{layer}{suffix}"))
    if getattr(m, "proj_size", 0):
        w["hr"] = _np(getattr(m, f"weight_hr_l{layer}{suffix}"))
    return w


def _ref_network(m, mode: str, x: np.ndarray, h0: np.ndarray, c0: np.ndarray | None = None):
    """Full multi-layer (bi)directional reference over x (T, N, in); returns (out, h_n, c_n)."""
    dirs = 2 if m.bidirectional else 1
    inp = x
    hs, cs = [], []
    for layer in range(m.num_layers):
        outs = []
        for d in range(dirs):
            w = _layer_weights(m, layer, "_reverse" if d else "")
            idx = layer * dirs + d
            state = (h0[idx], c0[idx]) if mode == "lstm" else h0[idx]
            steps = range(inp.shape[0] - 1, -1, -1) if d else range(inp.shape[0])
            out = [None] * inp.shape[0]
            for t in steps:
                state = _ref_step(mode, inp[t], state, w)
                out[t] = state[0] if mode == "lstm" else state
            outs.append(np.stack(out))
            if mode == "lstm":
                hs.append(state[0])
                cs.append(state[1])
            else:
                hs.append(state)
        inp = np.concatenate(outs, axis=2)
    return inp, np.stack(hs), (np.stack(cs) if mode == "lstm" else None)


# ---- parameters ------------------------------------------------------------------------------


def test_lstm_parameter_names_and_shapes_as_pytorch() -> None:
    m = nn.LSTM(3, 5, num_layers=2, bidirectional=True, proj_size=2)
    expected = [
        ("weight_ih_l0", (20, 3)),
        ("weight_hh_l0", (20, 2)),
        ("bias_ih_l0", (20,)),
        ("bias_hh_l0", (20,)),
        ("weight_hr_l0", (2, 5)),
        ("weight_ih_l0_reverse", (20, 3)),
        ("weight_hh_l0_reverse", (20, 2)),
        ("bias_ih_l0_reverse", (20,)),
        ("bias_hh_l0_reverse", (20,)),
        ("weight_hr_l0_reverse", (2, 5)),
        ("weight_ih_l1", (20, 4)),
        ("weight_hh_l1", (20, 2)),
        ("bias_ih_l1", (20,)),
        ("bias_hh_l1", (20,)),
        ("weight_hr_l1", (2, 5)),
        ("weight_ih_l1_reverse", (20, 4)),
        ("weight_hh_l1_reverse", (20, 2)),
        ("bias_ih_l1_reverse", (20,)),
        ("bias_hh_l1_reverse", (20,)),
        ("weight_hr_l1_reverse", (2, 5)),
    ]
    assert [(n, tuple(p.shape)) for n, p in m.named_parameters()] == expected
    assert list(m.state_dict().keys()) == [n for n, _ in expected]
    assert m._flat_weights_names == [n for n, _ in expected]
    assert [[tuple(p.shape) for p in ws] for ws in m.all_weights][1] == [s for _, s in expected[5:10]]


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda: nn.GRU(3, 4, bias=False), [("weight_ih_l0", (12, 3)), ("weight_hh_l0", (12, 4))]),
        (
            lambda: nn.RNN(2, 3, num_layers=2),
            [
                ("weight_ih_l0", (3, 2)),
                ("weight_hh_l0", (3, 3)),
                ("bias_ih_l0", (3,)),
                ("bias_hh_l0", (3,)),
                ("weight_ih_l1", (3, 3)),
                ("weight_hh_l1", (3, 3)),
                ("bias_ih_l1", (3,)),
                ("bias_hh_l1", (3,)),
            ],
        ),
        (
            lambda: nn.LSTMCell(3, 4),
            [("weight_ih", (16, 3)), ("weight_hh", (16, 4)), ("bias_ih", (16,)), ("bias_hh", (16,))],
        ),
        (lambda: nn.GRUCell(3, 4, bias=False), [("weight_ih", (12, 3)), ("weight_hh", (12, 4))]),
        (
            lambda: nn.RNNCell(2, 3),
            [("weight_ih", (3, 2)), ("weight_hh", (3, 3)), ("bias_ih", (3,)), ("bias_hh", (3,))],
        ),
    ],
)
def test_parameter_names_and_shapes_as_pytorch(make, expected) -> None:
    m = make()
    assert [(n, tuple(p.shape)) for n, p in m.named_parameters()] == expected
    assert list(m.state_dict().keys()) == [n for n, _ in expected]


@pytest.mark.parametrize("make", [lambda: nn.LSTM(6, 16, 2), lambda: nn.GRUCell(6, 16), lambda: nn.RNN(6, 16)])
def test_init_uniform_one_over_sqrt_hidden(make) -> None:
    ea.manual_seed(0)
    m = make()
    bound = 1.0 / math.sqrt(16)
    values = np.concatenate([_np(p).ravel() for p in m.parameters()])
    assert values.min() >= -bound and values.max() <= bound
    assert values.min() < -0.9 * bound and values.max() > 0.9 * bound  # spread over the range
    assert abs(values.mean()) < 0.05 * bound * 10


def test_state_dict_round_trip_and_load_by_pytorch_names() -> None:
    a, b = nn.GRU(3, 4, num_layers=2, bidirectional=True), nn.GRU(3, 4, num_layers=2, bidirectional=True)
    b.load_state_dict(a.state_dict())
    x = ea.randn(5, 2, 3)
    assert np.array_equal(_np(a(x)[0]), _np(b(x)[0]))
    # a state dict written under PyTorch's names (as torch.save of nn.GRU would have it)
    sd = {
        "weight_ih_l0": ea.ones(12, 3),
        "weight_hh_l0": ea.zeros(12, 4),
        "bias_ih_l0": ea.zeros(12),
        "bias_hh_l0": ea.zeros(12),
    }
    g = nn.GRU(3, 4)
    g.load_state_dict(sd)
    assert np.array_equal(_np(g.weight_ih_l0), np.ones((12, 3)))


def test_repr_as_pytorch() -> None:
    assert repr(nn.RNN(4, 3, num_layers=2)) == "RNN(4, 3, num_layers=2)"
    assert (
        repr(nn.LSTM(4, 3, 2, batch_first=True, bidirectional=True, dropout=0.1, proj_size=2, bias=False))
        == "LSTM(4, 3, proj_size=2, num_layers=2, bias=False, batch_first=True, dropout=0.1, bidirectional=True)"
    )
    assert repr(nn.GRU(4, 3)) == "GRU(4, 3)"
    assert repr(nn.RNNCell(4, 3, nonlinearity="relu")) == "RNNCell(4, 3, nonlinearity=relu)"
    assert repr(nn.LSTMCell(4, 3, bias=False)) == "LSTMCell(4, 3, bias=False)"
    assert repr(nn.GRUCell(4, 3)) == "GRUCell(4, 3)"


# ---- one step by hand ------------------------------------------------------------------------


def test_rnn_cell_one_step_by_hand() -> None:
    ea.manual_seed(1)
    cell = nn.RNNCell(3, 4, dtype=F64)
    x, h = ea.randn(2, 3, dtype=F64), ea.randn(2, 4, dtype=F64)
    wih, whh, bih, bhh = (_np(p) for p in (cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh))
    expected = np.tanh(_np(x) @ wih.T + bih + _np(h) @ whh.T + bhh)
    np.testing.assert_allclose(_np(cell(x, h)), expected, rtol=1e-12, atol=1e-12)
    relu = nn.RNNCell(3, 4, nonlinearity="relu", dtype=F64)
    wih, whh, bih, bhh = (_np(p) for p in (relu.weight_ih, relu.weight_hh, relu.bias_ih, relu.bias_hh))
    expected = np.maximum(_np(x) @ wih.T + bih + _np(h) @ whh.T + bhh, 0)
    np.testing.assert_allclose(_np(relu(x, h)), expected, rtol=1e-12, atol=1e-12)
    # unbatched input, default zero state
    np.testing.assert_allclose(
        _np(cell(x[0])), np.tanh(_np(x[0]) @ _np(cell.weight_ih).T + _np(cell.bias_ih) + _np(cell.bias_hh)), rtol=1e-12
    )


def test_lstm_cell_one_step_by_hand() -> None:
    ea.manual_seed(2)
    cell = nn.LSTMCell(3, 4, dtype=F64)
    x, h, c = ea.randn(2, 3, dtype=F64), ea.randn(2, 4, dtype=F64), ea.randn(2, 4, dtype=F64)
    gates = _np(x) @ _np(cell.weight_ih).T + _np(cell.bias_ih) + _np(h) @ _np(cell.weight_hh).T + _np(cell.bias_hh)
    i, f, g, o = gates[:, 0:4], gates[:, 4:8], gates[:, 8:12], gates[:, 12:16]
    c1 = _sig(f) * _np(c) + _sig(i) * np.tanh(g)
    h1 = _sig(o) * np.tanh(c1)
    hn, cn = cell(x, (h, c))
    np.testing.assert_allclose(_np(hn), h1, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(_np(cn), c1, rtol=1e-12, atol=1e-12)
    hu, cu = cell(x[1], (h[1], c[1]))
    assert tuple(hu.shape) == (4,) and tuple(cu.shape) == (4,)
    np.testing.assert_allclose(_np(hu), h1[1], rtol=1e-12, atol=1e-12)


def test_gru_cell_one_step_by_hand() -> None:
    ea.manual_seed(3)
    cell = nn.GRUCell(3, 4, dtype=F64)
    x, h = ea.randn(2, 3, dtype=F64), ea.randn(2, 4, dtype=F64)
    wi, wh, bi, bh = (_np(p) for p in (cell.weight_ih, cell.weight_hh, cell.bias_ih, cell.bias_hh))
    xn, hn = _np(x), _np(h)
    r = _sig(xn @ wi[0:4].T + bi[0:4] + hn @ wh[0:4].T + bh[0:4])
    z = _sig(xn @ wi[4:8].T + bi[4:8] + hn @ wh[4:8].T + bh[4:8])
    n = np.tanh(xn @ wi[8:12].T + bi[8:12] + r * (hn @ wh[8:12].T + bh[8:12]))
    np.testing.assert_allclose(_np(cell(x, h)), (1 - z) * n + z * hn, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode", ["tanh", "relu", "lstm", "gru"])
def test_layer_one_step_by_hand(mode: str) -> None:
    """A one-step sequence through a one-layer RNN/LSTM/GRU equals the cell formula."""
    ea.manual_seed(4)
    cls = {"tanh": nn.RNN, "relu": nn.RNN, "lstm": nn.LSTM, "gru": nn.GRU}[mode]
    kw = {"nonlinearity": mode} if mode in ("tanh", "relu") else {}
    m = cls(3, 4, dtype=F64, **kw)
    x, h0, c0 = ea.randn(1, 2, 3, dtype=F64), ea.randn(1, 2, 4, dtype=F64), ea.randn(1, 2, 4, dtype=F64)
    w = _layer_weights(m, 0, "")
    if mode == "lstm":
        out, (hn, cn) = m(x, (h0, c0))
        h1, c1 = _ref_step(mode, _np(x)[0], (_np(h0)[0], _np(c0)[0]), w)
        np.testing.assert_allclose(_np(cn)[0], c1, rtol=1e-12, atol=1e-12)
    else:
        out, hn = m(x, h0)
        h1 = _ref_step(mode, _np(x)[0], _np(h0)[0], w)
    np.testing.assert_allclose(_np(out)[0], h1, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(_np(hn)[0], h1, rtol=1e-12, atol=1e-12)


# ---- whole sequences -------------------------------------------------------------------------

CONFIGS = [
    ("tanh", {"num_layers": 2}),
    ("relu", {"bidirectional": True}),
    ("gru", {"num_layers": 2, "bidirectional": True}),
    ("gru", {"bias": False}),
    ("lstm", {"num_layers": 2, "bidirectional": True}),
    ("lstm", {"num_layers": 2, "proj_size": 2, "bidirectional": True}),
    ("lstm", {"bias": False, "proj_size": 3}),
]


def _make(mode: str, kw: dict, input_size: int = 3, hidden: int = 5, **extra):
    cls = {"tanh": nn.RNN, "relu": nn.RNN, "lstm": nn.LSTM, "gru": nn.GRU}[mode]
    if mode in ("tanh", "relu"):
        extra["nonlinearity"] = mode
    return cls(input_size, hidden, dtype=F64, **kw, **extra)


@pytest.mark.parametrize(("mode", "kw"), CONFIGS)
def test_sequence_against_numpy_reference(mode: str, kw: dict) -> None:
    ea.manual_seed(5)
    m = _make(mode, kw)
    dirs = 2 if m.bidirectional else 1
    h_out = m.proj_size or m.hidden_size if mode == "lstm" else m.hidden_size
    x = ea.randn(6, 2, 3, dtype=F64)
    h0 = ea.randn(m.num_layers * dirs, 2, h_out, dtype=F64)
    c0 = ea.randn(m.num_layers * dirs, 2, 5, dtype=F64)
    ref_out, ref_h, ref_c = _ref_network(m, mode, _np(x), _np(h0), _np(c0))
    if mode == "lstm":
        out, (hn, cn) = m(x, (h0, c0))
        np.testing.assert_allclose(_np(cn), ref_c, rtol=1e-10, atol=1e-12)
    else:
        out, hn = m(x, h0)
    assert tuple(out.shape) == (6, 2, dirs * h_out)
    np.testing.assert_allclose(_np(out), ref_out, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(_np(hn), ref_h, rtol=1e-10, atol=1e-12)


def test_default_state_is_zeros_and_batch_first_and_unbatched_agree() -> None:
    ea.manual_seed(6)
    m = nn.LSTM(3, 4, num_layers=2, bidirectional=True, dtype=F64)
    x = ea.randn(5, 2, 3, dtype=F64)
    out, (hn, cn) = m(x)
    zeros = ea.zeros(4, 2, 4, dtype=F64)
    out2, (hn2, _) = m(x, (zeros, zeros))
    assert np.array_equal(_np(out), _np(out2)) and np.array_equal(_np(hn), _np(hn2))
    mb = nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True, dtype=F64)
    mb.load_state_dict(m.state_dict())
    outb, (hnb, _) = mb(x.transpose(0, 1))
    np.testing.assert_allclose(_np(outb), _np(out).transpose(1, 0, 2), rtol=1e-13)
    np.testing.assert_allclose(_np(hnb), _np(hn), rtol=1e-13)
    outu, (hnu, cnu) = m(x[:, 1])  # unbatched (L, H_in)
    assert tuple(outu.shape) == (5, 8) and tuple(hnu.shape) == (4, 4) and tuple(cnu.shape) == (4, 4)
    np.testing.assert_allclose(_np(outu), _np(out)[:, 1], rtol=1e-12)
    np.testing.assert_allclose(_np(cnu), _np(cn)[:, 1], rtol=1e-12)
    outub, _ = mb(x[:, 1])  # unbatched input is (L, H_in) whatever batch_first says
    np.testing.assert_allclose(_np(outub), _np(out)[:, 1], rtol=1e-12)


def test_gru_unbatched_with_hidden() -> None:
    ea.manual_seed(7)
    m = nn.GRU(3, 4, dtype=F64)
    x, h = ea.randn(5, 3, dtype=F64), ea.randn(1, 4, dtype=F64)
    out, hn = m(x, h)
    assert tuple(out.shape) == (5, 4) and tuple(hn.shape) == (1, 4)
    ref_out, ref_h, _ = _ref_network(m, "gru", _np(x)[:, None], _np(h)[:, None])
    np.testing.assert_allclose(_np(out), ref_out[:, 0], rtol=1e-12)
    np.testing.assert_allclose(_np(hn), ref_h[:, 0], rtol=1e-12)


def test_dropout_between_layers_only_in_training() -> None:
    ea.manual_seed(8)
    m = nn.GRU(3, 16, num_layers=2, dropout=0.5, dtype=F64)
    x = ea.randn(4, 3, 3, dtype=F64)
    m.eval()
    ref_out, _, _ = _ref_network(m, "gru", _np(x), np.zeros((2, 3, 16)))
    np.testing.assert_allclose(_np(m(x)[0]), ref_out, rtol=1e-10, atol=1e-12)
    m.train()
    a, b = _np(m(x)[0]), _np(m(x)[0])
    assert not np.allclose(a, ref_out) and not np.allclose(a, b)  # random masks on layer 0's output


# ---- packed sequences ------------------------------------------------------------------------


@pytest.mark.parametrize(("mode", "kw"), CONFIGS)
def test_packed_equals_each_sequence_alone(mode: str, kw: dict) -> None:
    ea.manual_seed(9)
    m = _make(mode, kw)
    lengths = [2, 5, 3]  # unsorted: packed with enforce_sorted=False
    x = ea.randn(5, 3, 3, dtype=F64)
    packed = pack_padded_sequence(x, lengths, enforce_sorted=False)
    out, hidden = m(packed)
    assert isinstance(out, nn.utils.rnn.PackedSequence)
    padded, out_lengths = pad_packed_sequence(out)
    assert out_lengths.tolist() == lengths
    hn = hidden[0] if mode == "lstm" else hidden
    for b, n in enumerate(lengths):
        alone_out, alone_hidden = m(x[:n, b : b + 1])
        alone_h = alone_hidden[0] if mode == "lstm" else alone_hidden
        np.testing.assert_allclose(_np(padded)[:n, b], _np(alone_out)[:, 0], rtol=1e-10, atol=1e-12)
        assert np.all(_np(padded)[n:, b] == 0)
        np.testing.assert_allclose(_np(hn)[:, b], _np(alone_h)[:, 0], rtol=1e-10, atol=1e-12)
        if mode == "lstm":
            np.testing.assert_allclose(_np(hidden[1])[:, b], _np(alone_hidden[1])[:, 0], rtol=1e-10, atol=1e-12)


def test_packed_initial_state_follows_the_caller_order() -> None:
    ea.manual_seed(10)
    m = nn.RNN(2, 3, bidirectional=True, dtype=F64)
    seqs = [ea.randn(2, 2, dtype=F64), ea.randn(4, 2, dtype=F64), ea.randn(3, 2, dtype=F64)]
    h0 = ea.randn(2, 3, 3, dtype=F64)
    out, hn = m(pack_sequence(seqs, enforce_sorted=False), h0)
    padded, _ = pad_packed_sequence(out, batch_first=True)
    for b, s in enumerate(seqs):
        out_alone, h_alone = m(s.unsqueeze(1), h0[:, b : b + 1].contiguous())
        n = s.size(0)
        np.testing.assert_allclose(_np(padded)[b, :n], _np(out_alone)[:, 0], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(_np(hn)[:, b], _np(h_alone)[:, 0], rtol=1e-10, atol=1e-12)


# ---- gradients -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "kw"),
    [("tanh", {"bidirectional": True}), ("gru", {}), ("lstm", {"proj_size": 1}), ("lstm", {"num_layers": 2})],
)
def test_gradcheck_tiny_layers(mode: str, kw: dict) -> None:
    ea.manual_seed(11)
    m = _make(mode, kw, input_size=2, hidden=2)
    params = [p.detach().clone().requires_grad_(True) for p in m.parameters()]
    x = ea.randn(3, 2, 2, dtype=F64, requires_grad=True)

    def fn(x, *ps):
        out, finals = _functional_forward(m, x, ps)
        return (out, *finals)

    assert gradcheck(fn, (x, *params))


def _functional_forward(m, x, ps):
    """Runs m with its parameters replaced by the tensors ps (so gradcheck can perturb them)."""
    from ember.nn import _functional_rnn as fr

    it = iter(ps)
    weights = []
    for names in m._all_weights:
        vals = [next(it) for _ in names]
        b_ih, b_hh = (vals[2], vals[3]) if m.bias else (None, None)
        w_hr = vals[-1] if getattr(m, "proj_size", 0) else None
        weights.append((vals[0], vals[1], b_ih, b_hh, w_hr))
    dirs = 2 if m.bidirectional else 1
    h_out = (m.proj_size or m.hidden_size) if m.mode == "LSTM" else m.hidden_size
    states = [ea.zeros(m.num_layers * dirs, 2, h_out, dtype=F64)]
    if m.mode == "LSTM":
        states.append(ea.zeros(m.num_layers * dirs, 2, m.hidden_size, dtype=F64))
    out, finals = fr.rnn_packed(
        m.mode, x.reshape(6, 2), [2, 2, 2], states, weights, m.num_layers, 0.0, False, m.bidirectional
    )
    return out, finals


def test_gradcheck_through_module_and_packing() -> None:
    ea.manual_seed(12)
    m = nn.LSTM(2, 2, bidirectional=True, dtype=F64)
    x = ea.randn(3, 2, 2, dtype=F64, requires_grad=True)
    h0 = ea.randn(2, 2, 2, dtype=F64, requires_grad=True)
    c0 = ea.randn(2, 2, 2, dtype=F64, requires_grad=True)

    def fn(x, h0, c0):
        out, (hn, cn) = m(pack_padded_sequence(x, [3, 2]), (h0, c0))
        return pad_packed_sequence(out)[0], hn, cn

    assert gradcheck(fn, (x, h0, c0))


def test_parameters_receive_gradients() -> None:
    m = nn.GRU(3, 4, num_layers=2, bidirectional=True)
    out, hn = m(ea.randn(5, 2, 3))
    (out.sum() + hn.sum()).backward()
    for name, p in m.named_parameters():
        assert p.grad is not None and tuple(p.grad.shape) == tuple(p.shape), name
        assert float(p.grad.abs().sum()) > 0, name


@pytest.mark.parametrize("cls", [nn.RNNCell, nn.GRUCell])
def test_gradcheck_cells(cls) -> None:
    ea.manual_seed(13)
    cell = cls(2, 3, dtype=F64)
    x = ea.randn(2, 2, dtype=F64, requires_grad=True)
    h = ea.randn(2, 3, dtype=F64, requires_grad=True)
    assert gradcheck(lambda x, h: cell(x, h), (x, h))


def test_gradcheck_lstm_cell() -> None:
    ea.manual_seed(14)
    cell = nn.LSTMCell(2, 3, dtype=F64)
    x = ea.randn(2, 2, dtype=F64, requires_grad=True)
    h = ea.randn(2, 3, dtype=F64, requires_grad=True)
    c = ea.randn(2, 3, dtype=F64, requires_grad=True)
    assert gradcheck(lambda x, h, c: cell(x, (h, c)), (x, h, c))


# ---- errors (PyTorch's messages) -------------------------------------------------------------


def _raises(exc, msg, fn):
    with pytest.raises(exc, match=re.escape(msg)):
        fn()


def test_layer_input_errors() -> None:
    r = nn.RNN(4, 3, 2)
    _raises(RuntimeError, "input.size(-1) must be equal to input_size. Expected 4, got 5", lambda: r(ea.randn(2, 3, 5)))
    _raises(ValueError, "RNN: Expected input to be 2D or 3D, got 4D tensor instead", lambda: r(ea.randn(2, 3, 4, 1)))
    _raises(
        ValueError, "GRU: Expected input to be 2D or 3D, got 4D instead", lambda: nn.GRU(4, 3)(ea.randn(1, 2, 3, 4))
    )
    _raises(ValueError, "LSTM: Expected input to be 2D or 3D, got 1D instead", lambda: nn.LSTM(4, 3)(ea.randn(4)))
    _raises(ValueError, "RNN input dtype", lambda: r(ea.randn(2, 3, 4, dtype=F64)))


def test_layer_hidden_errors() -> None:
    r = nn.RNN(4, 3, 2)
    _raises(
        RuntimeError, "Expected hidden size (2, 3, 3), got [1, 3, 3]", lambda: r(ea.randn(2, 3, 4), ea.randn(1, 3, 3))
    )
    _raises(
        RuntimeError,
        "For batched 3-D input, hx should also be 3-D but got 2-D tensor",
        lambda: r(ea.randn(2, 3, 4), ea.randn(2, 3)),
    )
    _raises(
        RuntimeError,
        "For unbatched 2-D input, hx should also be 2-D but got 3-D tensor",
        lambda: r(ea.randn(3, 4), ea.randn(2, 1, 3)),
    )
    lstm = nn.LSTM(4, 3, 2)
    x = ea.randn(2, 3, 4)
    _raises(
        RuntimeError,
        "Expected hidden[1] size (2, 3, 3), got [1, 3, 3]",
        lambda: lstm(x, (ea.randn(2, 3, 3), ea.randn(1, 3, 3))),
    )
    _raises(
        RuntimeError,
        "For batched 3-D input, hx and cx should also be 3-D but got (3-D, 2-D) tensors",
        lambda: lstm(x, (ea.randn(2, 3, 3), ea.randn(2, 3))),
    )
    proj = nn.LSTM(4, 3, 2, proj_size=2)
    _raises(
        RuntimeError,
        "Expected hidden[0] size (2, 3, 2), got [2, 3, 3]",
        lambda: proj(x, (ea.randn(2, 3, 3), ea.randn(2, 3, 3))),
    )


def test_constructor_errors() -> None:
    _raises(ValueError, "proj_size has to be smaller than hidden_size", lambda: nn.LSTM(4, 3, proj_size=3))
    _raises(
        ValueError,
        "proj_size should be a positive integer or zero to disable projections",
        lambda: nn.LSTM(4, 3, proj_size=-1),
    )
    _raises(
        ValueError,
        "Unknown nonlinearity 'foo'. Select from 'tanh' or 'relu'.",
        lambda: nn.RNN(4, 3, nonlinearity="foo"),
    )
    _raises(ValueError, "hidden_size must be greater than zero", lambda: nn.RNN(4, 0))
    _raises(ValueError, "num_layers must be greater than zero", lambda: nn.RNN(4, 3, num_layers=0))
    _raises(ValueError, "dropout should be a number in range [0, 1]", lambda: nn.RNN(4, 3, dropout=2))
    _raises(TypeError, "hidden_size should be of type int, got: float", lambda: nn.RNN(4, 3.0))
    _raises(
        ValueError, "proj_size argument is only supported for LSTM, not RNN or GRU", lambda: nn.GRU(4, 3, proj_size=2)
    )
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.RNN(4, 3, dropout=0.5)


def test_cell_errors() -> None:
    c = nn.RNNCell(4, 3)
    _raises(ValueError, "RNNCell: Expected input to be 1D or 2D, got 3D instead", lambda: c(ea.randn(2, 3, 4)))
    _raises(RuntimeError, "input has inconsistent input_size: got 5 expected 4", lambda: c(ea.randn(2, 5)))
    _raises(
        RuntimeError, "Input batch size 2 doesn't match hidden0 batch size 3", lambda: c(ea.randn(2, 4), ea.randn(3, 3))
    )
    _raises(
        RuntimeError,
        "hidden0 has inconsistent hidden_size: got 4, expected 3",
        lambda: c(ea.randn(2, 4), ea.randn(2, 4)),
    )
    _raises(
        ValueError,
        "RNNCell: Expected hidden to be 1D or 2D, got 3D instead",
        lambda: c(ea.randn(2, 4), ea.randn(2, 3, 1)),
    )
    lc = nn.LSTMCell(4, 3)
    _raises(RuntimeError, "lstm_cell expects two hidden states", lambda: lc(ea.randn(2, 4), (ea.randn(2, 3),)))
    _raises(
        RuntimeError,
        "hidden1 has inconsistent hidden_size: got 2, expected 3",
        lambda: lc(ea.randn(2, 4), (ea.randn(2, 3), ea.randn(2, 2))),
    )
    _raises(
        ValueError,
        "GRUCell: Expected input to be 1D or 2D, got 3D instead",
        lambda: nn.GRUCell(4, 3)(ea.randn(2, 3, 4)),
    )
    _raises(RuntimeError, "Unknown nonlinearity: x", lambda: nn.RNNCell(4, 3, nonlinearity="x")(ea.randn(2, 4)))
