"""The fused recurrent layer operators (_lstm_layer, _gru_layer and their backwards,
csrc/native/RNN.cpp): forward against a NumPy float64 reference of PyTorch's LSTM / GRU
equations over packed sequences (both directions, with and without bias), the backward
operators against central differences of the forward, every CPU capability, the
inference runs (train=False: no workspace), the CPU layer's blocks of batch rows on two
threads, saturated gates, and the argument errors."""

from __future__ import annotations

from typing import Any

import ember.aten as ea
import numpy as np
import pytest

# (batch_sizes, reverse): padded, packed with ending sequences, one step
CASES = [
    ([3, 3, 3], False),
    ([3, 3, 3], True),
    ([3, 2, 2, 1], False),
    ([3, 2, 2, 1], True),
    ([2], False),
    ([1, 1], True),
]


def arr(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1.0, 1.0, size=shape)


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def offsets(batch_sizes: list[int]) -> list[int]:
    return list(np.cumsum([0, *batch_sizes[:-1]]))


def order(batch_sizes: list[int], reverse: bool) -> list[int]:
    steps = list(range(len(batch_sizes)))
    return steps[::-1] if reverse else steps


def lstm_ref(gi, w_hh, h0, c0, batch_sizes, reverse):  # type: ignore[no-untyped-def]
    H = w_hh.shape[1]
    h, c, out = h0.copy(), c0.copy(), np.zeros((gi.shape[0], H))
    for t in order(batch_sizes, reverse):
        bs, off = batch_sizes[t], offsets(batch_sizes)[t]
        g = gi[off : off + bs] + h[:bs] @ w_hh.T
        i, f, gg, o = sigmoid(g[:, :H]), sigmoid(g[:, H : 2 * H]), np.tanh(g[:, 2 * H : 3 * H]), sigmoid(g[:, 3 * H :])
        c[:bs] = f * c[:bs] + i * gg
        h[:bs] = o * np.tanh(c[:bs])
        out[off : off + bs] = h[:bs]
    return out, h, c


def gru_ref(gi, w_hh, b_hh, h0, batch_sizes, reverse):  # type: ignore[no-untyped-def]
    H = w_hh.shape[1]
    h, out = h0.copy(), np.zeros((gi.shape[0], H))
    for t in order(batch_sizes, reverse):
        bs, off = batch_sizes[t], offsets(batch_sizes)[t]
        x = gi[off : off + bs]
        y = h[:bs] @ w_hh.T + (0.0 if b_hh is None else b_hh)
        r = sigmoid(x[:, :H] + y[:, :H])
        z = sigmoid(x[:, H : 2 * H] + y[:, H : 2 * H])
        n = np.tanh(x[:, 2 * H :] + r * y[:, 2 * H :])
        h[:bs] = (1 - z) * n + z * h[:bs]
        out[off : off + bs] = h[:bs]
    return out, h


def t(a: np.ndarray, dtype: Any = ea.float64) -> Any:
    return ea.tensor(a, dtype=dtype)


def lstm_inputs(batch_sizes: list[int], H: int = 4, seed: int = 0) -> list[np.ndarray]:
    n, b = sum(batch_sizes), batch_sizes[0]
    return [arr(n, 4 * H, seed=seed), arr(4 * H, H, seed=seed + 1), arr(b, H, seed=seed + 2), arr(b, H, seed=seed + 3)]


def gru_inputs(batch_sizes: list[int], H: int = 4, seed: int = 0) -> list[np.ndarray]:
    n, b = sum(batch_sizes), batch_sizes[0]
    return [arr(n, 3 * H, seed=seed), arr(3 * H, H, seed=seed + 1), arr(3 * H, seed=seed + 2), arr(b, H, seed=seed + 3)]


@pytest.mark.parametrize("dtype,tol", [(ea.float64, 1e-12), (ea.float32, 2e-6)])
@pytest.mark.parametrize("batch_sizes,reverse", CASES)
def test_lstm_layer_matches_numpy(
    capability: str, batch_sizes: list[int], reverse: bool, dtype: Any, tol: float
) -> None:
    # H = 19: a float32 row is vector body and scalar tail on every capability
    gi, w, h0, c0 = lstm_inputs(batch_sizes, H=19)
    out, hy, cy, ws = ea._lstm_layer(t(gi, dtype), t(w, dtype), t(h0, dtype), t(c0, dtype), batch_sizes, reverse)
    ref = lstm_ref(gi, w, h0, c0, batch_sizes, reverse)
    for got, want in zip((out, hy, cy), ref, strict=True):
        np.testing.assert_allclose(got.numpy(), want, atol=tol, rtol=tol)
    assert tuple(ws.shape) == (sum(batch_sizes), 6 * 19)


@pytest.mark.parametrize("dtype,tol", [(ea.float64, 1e-12), (ea.float32, 2e-6)])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("batch_sizes,reverse", CASES)
def test_gru_layer_matches_numpy(
    capability: str, batch_sizes: list[int], reverse: bool, bias: bool, dtype: Any, tol: float
) -> None:
    gi, w, b, h0 = gru_inputs(batch_sizes, H=19)
    out, hy, _ = ea._gru_layer(
        t(gi, dtype), t(w, dtype), t(b, dtype) if bias else None, t(h0, dtype), batch_sizes, reverse
    )
    ref = gru_ref(gi, w, b if bias else None, h0, batch_sizes, reverse)
    for got, want in zip((out, hy), ref, strict=True):
        np.testing.assert_allclose(got.numpy(), want, atol=tol, rtol=tol)


@pytest.mark.parametrize("dtype", [ea.float64, ea.float32])
@pytest.mark.parametrize("batch_sizes,reverse", CASES)
def test_inference_runs_equal_training_runs(capability: str, batch_sizes: list[int], reverse: bool, dtype: Any) -> None:
    # train=False computes the same values and saves no workspace (its backward refuses it)
    H = 19
    lstm = [t(x, dtype) for x in lstm_inputs(batch_sizes, H=H)]
    a = ea._lstm_layer(*lstm, batch_sizes, reverse, True)
    b = ea._lstm_layer(*lstm, batch_sizes, reverse, False)
    for x, y in zip(a[:3], b[:3], strict=True):
        np.testing.assert_array_equal(x.numpy(), y.numpy())
    assert tuple(b[3].shape) == (0, 6 * H)
    empty = "_lstm_layer_backward: the workspace is empty: its forward ran with train=False"
    with pytest.raises(RuntimeError, match=empty):
        ea._lstm_layer_backward(b[0], None, None, lstm[1], b[3], batch_sizes, reverse)
    gru = [t(x, dtype) for x in gru_inputs(batch_sizes, H=H)]
    a = ea._gru_layer(*gru, batch_sizes, reverse, True)
    b = ea._gru_layer(*gru, batch_sizes, reverse, train=False)
    for x, y in zip(a[:2], b[:2], strict=True):
        np.testing.assert_array_equal(x.numpy(), y.numpy())
    assert tuple(b[2].shape) == (0, 5 * H)
    with pytest.raises(RuntimeError, match="_gru_layer_backward: the workspace is empty"):
        ea._gru_layer_backward(b[0], None, gru[1], b[2], batch_sizes, reverse, True)


@pytest.fixture
def two_threads() -> Any:
    previous = ea.get_num_threads()
    ea.set_num_threads(2)
    try:
        yield
    finally:
        ea.set_num_threads(previous)


# B = 9 rows over 2 threads: blocks of 5 and 4 rows, the second running out first when the
# sequences end (packed); H = 45 gives each step enough work for the blocks (RNN.h).
BLOCK_CASES = [([9, 9, 9], False), ([9, 9, 7, 4, 2], False), ([9, 9, 7, 4, 2], True), ([9, 5, 3], True)]


@pytest.mark.parametrize("dtype,tol", [(ea.float64, 1e-12), (ea.float32, 2e-6)])
@pytest.mark.parametrize("batch_sizes,reverse", BLOCK_CASES)
def test_row_blocks_on_two_threads(
    two_threads: None, batch_sizes: list[int], reverse: bool, dtype: Any, tol: float
) -> None:
    H = 45
    lstm = lstm_inputs(batch_sizes, H=H, seed=2)
    got = ea._lstm_layer(*(t(x, dtype) for x in lstm), batch_sizes, reverse)
    for g, w in zip(got[:3], lstm_ref(*lstm, batch_sizes, reverse), strict=True):
        np.testing.assert_allclose(g.numpy(), w, atol=tol, rtol=tol)
    gru = gru_inputs(batch_sizes, H=H, seed=4)
    got_gru = ea._gru_layer(*(t(x, dtype) for x in gru), batch_sizes, reverse)
    for g, w in zip(got_gru[:2], gru_ref(*gru, batch_sizes, reverse), strict=True):
        np.testing.assert_allclose(g.numpy(), w, atol=tol, rtol=tol)
    # the backwards on two threads equal those on one
    n, b = sum(batch_sizes), batch_sizes[0]
    go, ghy, gcy = t(arr(n, H, seed=8), dtype), t(arr(b, H, seed=9), dtype), t(arr(b, H, seed=10), dtype)
    w_lstm, w_gru = t(lstm[1], dtype), t(gru[1], dtype)
    grads = []
    for threads in (2, 1):
        ea.set_num_threads(threads)
        grads.append(
            [
                *ea._lstm_layer_backward(go, ghy, gcy, w_lstm, got[3], batch_sizes, reverse),
                *ea._gru_layer_backward(go, ghy, w_gru, got_gru[2], batch_sizes, reverse, True),
            ]
        )
    for x, y in zip(*grads, strict=True):
        np.testing.assert_allclose(x.numpy(), y.numpy(), atol=tol, rtol=tol)


@pytest.mark.parametrize("dtype,tol", [(ea.float64, 1e-12), (ea.float32, 2e-6)])
def test_saturated_gates(capability: str, dtype: Any, tol: float) -> None:
    # pre-activations far past where sigmoid and tanh round to their limits, both signs
    bs = [4, 4]
    gi, w, h0, c0 = lstm_inputs(bs, H=21, seed=6)
    gi = gi * 120.0
    got = ea._lstm_layer(t(gi, dtype), t(w, dtype), t(h0, dtype), t(c0, dtype), bs, False)
    for g, want in zip(got[:3], lstm_ref(gi, w, h0, c0, bs, False), strict=True):
        np.testing.assert_allclose(g.numpy(), want, atol=tol, rtol=tol)
    gi, w, b, h0 = gru_inputs(bs, H=21, seed=6)
    gi = gi * 120.0
    got = ea._gru_layer(t(gi, dtype), t(w, dtype), t(b, dtype), t(h0, dtype), bs, False)
    for g, want in zip(got[:2], gru_ref(gi, w, b, h0, bs, False), strict=True):
        np.testing.assert_allclose(g.numpy(), want, atol=tol, rtol=tol)


def test_nan_gates_propagate(capability: str) -> None:
    bs = [2]
    gi, w, h0, c0 = (t(x, ea.float32) for x in lstm_inputs(bs, H=16))
    gi[0, 3] = float("nan")  # i of unit 3, row 0
    out, _, cy, _ = ea._lstm_layer(gi, w, h0, c0, bs, False)
    assert np.isnan(out.numpy()[0, 3]) and np.isnan(cy.numpy()[0, 3])
    assert np.isfinite(np.delete(out.numpy()[0], 3)).all() and np.isfinite(out.numpy()[1]).all()


def loss_and_numeric(f: Any, xs: list[np.ndarray], gos: list[np.ndarray], eps: float = 1e-6) -> list[np.ndarray]:
    """d/dx sum(go * f(x)) for each x in xs, by central differences."""

    def loss() -> float:
        return float(sum(np.sum(g * o) for g, o in zip(gos, f(*xs), strict=True)))

    grads = []
    for x in xs:
        g = np.zeros_like(x)
        for i in np.ndindex(*x.shape):
            orig = x[i]
            x[i] = orig + eps
            plus = loss()
            x[i] = orig - eps
            minus = loss()
            x[i] = orig
            g[i] = (plus - minus) / (2 * eps)
        grads.append(g)
    return grads


@pytest.mark.parametrize("batch_sizes,reverse", CASES)
def test_lstm_layer_backward_matches_finite_differences(capability: str, batch_sizes: list[int], reverse: bool) -> None:
    xs = lstm_inputs(batch_sizes, H=3, seed=5)
    n, b = sum(batch_sizes), batch_sizes[0]
    gos = [arr(n, 3, seed=11), arr(b, 3, seed=12), arr(b, 3, seed=13)]

    def f(gi, w, h0, c0):  # type: ignore[no-untyped-def]
        out, hy, cy, _ = ea._lstm_layer(t(gi), t(w), t(h0), t(c0), batch_sizes, reverse)
        return out.numpy(), hy.numpy(), cy.numpy()

    want = loss_and_numeric(f, xs, gos)
    _, _, _, ws = ea._lstm_layer(*(t(x) for x in xs), batch_sizes, reverse)
    got = ea._lstm_layer_backward(t(gos[0]), t(gos[1]), t(gos[2]), t(xs[1]), ws, batch_sizes, reverse)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g.numpy(), w, atol=1e-7, rtol=1e-6)


@pytest.mark.parametrize("batch_sizes,reverse", CASES)
def test_gru_layer_backward_matches_finite_differences(capability: str, batch_sizes: list[int], reverse: bool) -> None:
    xs = gru_inputs(batch_sizes, H=3, seed=7)
    n, b = sum(batch_sizes), batch_sizes[0]
    gos = [arr(n, 3, seed=21), arr(b, 3, seed=22)]

    def f(gi, w, bias, h0):  # type: ignore[no-untyped-def]
        out, hy, _ = ea._gru_layer(t(gi), t(w), t(bias), t(h0), batch_sizes, reverse)
        return out.numpy(), hy.numpy()

    want = loss_and_numeric(f, xs, gos)
    _, _, ws = ea._gru_layer(*(t(x) for x in xs), batch_sizes, reverse)
    got = ea._gru_layer_backward(t(gos[0]), t(gos[1]), t(xs[1]), ws, batch_sizes, reverse, True)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g.numpy(), w, atol=1e-7, rtol=1e-6)


def test_backward_without_some_gradients() -> None:
    # only the output's gradient arrived (hy, cy unused): the same as zero gradients for them
    bs = [3, 2, 1]
    gi, w, h0, c0 = (t(x) for x in lstm_inputs(bs, H=3))
    _, _, _, ws = ea._lstm_layer(gi, w, h0, c0, bs, False)
    go = t(arr(6, 3, seed=3))
    zero = ea.zeros((3, 3), dtype=ea.float64)
    a = ea._lstm_layer_backward(go, None, None, w, ws, bs, False)
    b = ea._lstm_layer_backward(go, zero, zero, w, ws, bs, False)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x.numpy(), y.numpy())
    g = ea._gru_layer_backward(None, t(arr(3, 3)), w[:9], ea.zeros((6, 15), dtype=ea.float64), bs, False, False)
    assert g[2] is None and tuple(g[0].shape) == (6, 9)


def test_errors() -> None:
    gi, w, h0, c0 = (t(x) for x in lstm_inputs([2, 2], H=3))
    with pytest.raises(RuntimeError, match="Expected sequence length to be larger than 0 in RNN"):
        ea._lstm_layer(gi[:0], w, h0, c0, [], False)
    with pytest.raises(RuntimeError, match=r"_lstm_layer: batch_sizes sum to 3 but the input gates have 4 rows"):
        ea._lstm_layer(gi, w, h0, c0, [2, 1], False)
    with pytest.raises(RuntimeError, match=r"_lstm_layer: batch_sizes must be non-increasing, got 1 then 2"):
        ea._lstm_layer(gi[:3], w, h0, c0, [1, 2], False)
    with pytest.raises(RuntimeError, match=r"_lstm_layer: expected w_hh of shape \[12, 3\], got \[9, 3\]"):
        ea._lstm_layer(gi, w[:9], h0, c0, [2, 2], False)
    with pytest.raises(RuntimeError, match=r"_lstm_layer: expected h0 of shape \[2, 3\], got \[1, 3\]"):
        ea._lstm_layer(gi, w, h0[:1], c0, [2, 2], False)
    with pytest.raises(RuntimeError, match=r"_lstm_layer: expected c0 to have dtype float32, got float64"):
        ea._lstm_layer(gi.float(), w.float(), h0.float(), c0, [2, 2], False)
    with pytest.raises(RuntimeError, match=r"_lstm_layer: expected a floating-point input, got int64"):
        ea._lstm_layer(gi.long(), w, h0, c0, [2, 2], False)
    with pytest.raises(RuntimeError, match=r"_gru_layer: expected input_gates of shape \[4, 9\], got \[4, 12\]"):
        ea._gru_layer(gi, w[:9], None, h0, [2, 2], False)
    with pytest.raises(RuntimeError, match=r"_gru_layer: expected b_hh of shape \[9\], got \[12\]"):
        ea._gru_layer(gi[:, :9], w[:9], w[:, 0], h0, [2, 2], False)
