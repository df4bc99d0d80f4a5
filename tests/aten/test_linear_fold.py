"""linear with a bias folds a contiguous input of rank > 2 to one addmm (the GEMM adds the
bias), as PyTorch's linear; other inputs take matmul + add. Both give input @ weight.T + bias
(float64 NumPy reference), a fresh tensor of the right shape."""

from __future__ import annotations

import ember.aten as ea
import numpy as np
import pytest


def _ref(x: np.ndarray, w: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    out = x.astype(np.float64) @ w.astype(np.float64).T
    return out if b is None else out + b


@pytest.mark.parametrize("shape", [(8, 64, 16), (2, 3, 5, 16), (1, 1, 16), (7, 16)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_linear_contiguous_input_with_bias(shape: tuple[int, ...], dtype: type) -> None:
    r = np.random.default_rng(0)
    x, w, b = (r.standard_normal(s).astype(dtype) for s in (shape, (24, 16), (24,)))
    out = ea.nn.linear(ea.from_numpy(x), ea.from_numpy(w), ea.from_numpy(b))
    assert tuple(out.shape) == (*shape[:-1], 24)
    assert out.is_contiguous()
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(out.numpy(), _ref(x, w, b), rtol=tol, atol=tol)


def test_linear_non_contiguous_input_and_no_bias() -> None:
    r = np.random.default_rng(1)
    x = r.standard_normal((16, 4, 8)).astype(np.float32)
    w, b = r.standard_normal((6, 16)).astype(np.float32), r.standard_normal(6).astype(np.float32)
    xt = ea.from_numpy(x).permute(1, 2, 0)  # (4, 8, 16), not contiguous: the matmul path
    assert not xt.is_contiguous()
    xt_np = x.transpose(1, 2, 0)
    np.testing.assert_allclose(
        ea.nn.linear(xt, ea.from_numpy(w), ea.from_numpy(b)).numpy(), _ref(xt_np, w, b), rtol=1e-5, atol=1e-5
    )
    np.testing.assert_allclose(ea.nn.linear(xt, ea.from_numpy(w)).numpy(), _ref(xt_np, w, None), rtol=1e-5, atol=1e-5)


def test_linear_empty_rows_and_broadcast_bias() -> None:
    w, b = ea.ones((3, 4)), ea.ones((3,))
    assert tuple(ea.nn.linear(ea.ones((0, 5, 4)), w, b).shape) == (0, 5, 3)
    # a stride-0 (expanded) bias is read as a broadcast, as a real one
    got = ea.nn.linear(ea.ones((2, 5, 4)), w, ea.tensor([2.0]).expand(3))
    np.testing.assert_array_equal(got.numpy(), np.full((2, 5, 3), 6.0, dtype=np.float32))


def test_linear_result_does_not_alias_the_input() -> None:
    x = ea.ones((2, 3, 4))
    out = ea.nn.linear(x, ea.ones((4, 4)), ea.zeros((4,)))
    out.fill_(-1.0)
    assert x.numpy().min() == 1.0
    assert out.numpy().max() == -1.0


def test_linear_shape_errors() -> None:
    with pytest.raises(RuntimeError, match=r"shapes cannot be multiplied \(10x4 and 5x3\)"):
        ea.nn.linear(ea.ones((2, 5, 4)), ea.ones((3, 5)), ea.ones((3,)))
