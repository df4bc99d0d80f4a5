"""ember.aten.masked (PyTorch's torch.masked) against NumPy masked arrays and hand-written
references: masked-out elements take no part, fully masked reductions give the identity
(or NaN where it is undefined), masks broadcast, bad arguments raise."""

from __future__ import annotations

import math

import ember.aten as ea
import numpy as np
import pytest
from ember.aten import masked

RNG = np.random.default_rng(7)
X = RNG.standard_normal((3, 5))
MASK = RNG.random((3, 5)) > 0.4
MASK[1] = False  # one row fully masked out
MASK[2, 0] = True


def _e(a: np.ndarray) -> ea.Tensor:
    return ea.from_numpy(np.ascontiguousarray(a))


def _close(got: ea.Tensor, want: np.ndarray) -> None:
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12, equal_nan=True)


def _ma() -> np.ma.MaskedArray:
    return np.ma.masked_array(X, mask=~MASK)


@pytest.mark.parametrize("dim", [0, 1, -1, (0, 1), None])
@pytest.mark.parametrize("keepdim", [False, True])
def test_sum_prod_amax_amin(dim, keepdim):
    axis = dim if dim is None or isinstance(dim, int) else tuple(dim)
    valid = MASK
    want_sum = np.where(valid, X, 0.0).sum(axis=axis, keepdims=keepdim)
    want_prod = np.where(valid, X, 1.0).prod(axis=axis, keepdims=keepdim)
    want_max = np.where(valid, X, -np.inf).max(axis=axis, keepdims=keepdim)
    want_min = np.where(valid, X, np.inf).min(axis=axis, keepdims=keepdim)
    m = _e(MASK)
    _close(masked.sum(_e(X), dim, keepdim=keepdim, mask=m), want_sum)
    _close(masked.prod(_e(X), dim, keepdim=keepdim, mask=m), want_prod)
    _close(masked.amax(_e(X), dim, keepdim=keepdim, mask=m), want_max)
    _close(masked.amin(_e(X), dim, keepdim=keepdim, mask=m), want_min)


def test_fully_masked_rows_give_the_identity_or_nan():
    m = _e(MASK)
    assert masked.sum(_e(X), 1, mask=m)[1].item() == 0.0
    assert masked.prod(_e(X), 1, mask=m)[1].item() == 1.0
    assert masked.amax(_e(X), 1, mask=m)[1].item() == -math.inf
    assert masked.amin(_e(X), 1, mask=m)[1].item() == math.inf
    assert masked.logsumexp(_e(X), 1, mask=m)[1].item() == -math.inf
    for fn in (masked.mean, masked.var, masked.std):
        assert math.isnan(fn(_e(X), 1, mask=m)[1].item()), fn.__name__
    assert math.isnan(masked.median(_e(X), 1, mask=m)[1].item())
    # softmax over a slice with nothing valid: NaN, as exp(-inf) / 0
    assert np.isnan(masked.softmax(_e(X), 1, mask=m)[1].numpy()).all()


@pytest.mark.parametrize("dim", [0, 1, None])
def test_mean_var_std_against_numpy_masked_arrays(dim):
    m = _e(MASK)
    ma = _ma()
    _close(masked.mean(_e(X), dim, mask=m), np.ma.filled(ma.mean(axis=dim), np.nan))
    for correction in (0, 1):
        # a slice with no more valid elements than `correction`: 0 / 0 -> NaN, as torch.masked
        count = MASK.sum(axis=dim)
        want = np.where(count > correction, np.ma.filled(ma.var(axis=dim, ddof=correction), np.nan), np.nan)
        _close(masked.var(_e(X), dim, correction=correction, mask=m), want)
    _close(masked.std(_e(X), dim, unbiased=False, mask=m), np.sqrt(np.ma.filled(ma.var(axis=dim), np.nan)))


def test_median_is_the_lower_middle_of_the_valid_elements():
    x = np.array([[5.0, 1.0, 4.0, 2.0], [3.0, 9.0, 7.0, 8.0]])
    m = np.array([[True, True, True, True], [False, True, True, False]])
    _close(masked.median(_e(x), 1, mask=_e(m)), np.array([2.0, 7.0]))


def test_median_of_integers_refuses_a_fully_masked_row():
    x = _e(np.arange(6, dtype=np.int64).reshape(2, 3))
    m = _e(np.array([[True, False, True], [False, False, False]]))
    with pytest.raises(ValueError, match="fully masked out rows"):
        masked.median(x, 1, mask=m)
    ok = masked.median(x, 1, mask=_e(np.array([[True, False, True], [False, True, False]])))
    assert ok.dtype == ea.int64
    assert ok.tolist() == [0, 4]


def test_argmax_argmin_skip_masked_elements():
    x = np.array([[9.0, 1.0, 3.0], [0.0, -7.0, 2.0]])
    m = np.array([[False, True, True], [True, False, True]])
    assert masked.argmax(_e(x), 1, mask=_e(m)).tolist() == [2, 2]
    assert masked.argmin(_e(x), 1, mask=_e(m)).tolist() == [1, 0]
    assert masked.argmax(_e(x), mask=_e(m)).item() == 2  # over the flattened input
    # the indices come in the input's dtype unless dtype= says otherwise (torch.masked's rule)
    assert masked.argmax(_e(x), 1, mask=_e(m)).dtype == ea.float64
    assert masked.argmin(_e(x), 1, mask=_e(m), dtype=ea.int64).dtype == ea.int64


def test_norm_normalize_logsumexp():
    m = _e(MASK)
    valid = np.where(MASK, X, 0.0)
    _close(masked.norm(_e(X), 2.0, 1, mask=m), np.sqrt((valid**2).sum(1)))
    _close(masked.norm(_e(X), 1.0, None, mask=m), np.abs(valid).sum())
    _close(masked.norm(_e(X), math.inf, 0, mask=m), np.abs(valid).max(0))
    _close(masked.norm(_e(X), -math.inf, 1, mask=m)[[0, 2]], np.where(MASK, np.abs(X), np.inf).min(1)[[0, 2]])
    nrm = np.maximum(np.sqrt((valid**2).sum(1, keepdims=True)), 1e-12)
    _close(masked.normalize(_e(X), 2.0, 1, mask=m), valid / nrm)
    with np.errstate(divide="ignore"):
        want = np.log(np.where(MASK, np.exp(X), 0.0).sum(1))
    _close(masked.logsumexp(_e(X), 1, mask=m), want)


def test_softmax_log_softmax_softmin():
    m = _e(MASK)
    rows = [0, 2]  # row 1 has nothing valid (NaN, checked above)
    e = np.where(MASK, np.exp(X - X.max(1, keepdims=True)), 0.0)[rows]
    want = e / e.sum(1, keepdims=True)
    _close(masked.softmax(_e(X), 1, mask=m)[rows], want)
    with np.errstate(divide="ignore"):
        _close(masked.log_softmax(_e(X), 1, mask=m)[rows], np.log(want))
    e = np.where(MASK, np.exp(-X), 0.0)[rows]
    _close(masked.softmin(_e(X), -1, mask=m)[rows], e / e.sum(1, keepdims=True))
    assert masked.softmax(_e(X), 1, dtype=ea.float32, mask=m).dtype == ea.float32


def test_cumsum_cumprod_count_masked_elements_as_identity():
    m = _e(MASK)
    _close(masked.cumsum(_e(X), 1, mask=m), np.cumsum(np.where(MASK, X, 0.0), 1))
    _close(masked.cumprod(_e(X), 0, mask=m), np.cumprod(np.where(MASK, X, 1.0), 0))


def test_logaddexp_masks_each_operand():
    a, b = np.array([-100.0, -200.0, -300.0]), np.array([-1.0, -2.0, -3.0])
    mask = _e(np.array([True, False, True]))
    got = masked.logaddexp(_e(a), _e(b), input_mask=mask, other_mask=mask)
    assert got.tolist()[0] == pytest.approx(np.logaddexp(-100.0, -1.0))
    assert got.tolist()[1] == -math.inf
    assert got.tolist()[2] == pytest.approx(np.logaddexp(-300.0, -3.0))


def test_no_mask_is_the_plain_reduction():
    _close(masked.sum(_e(X), 1), X.sum(1))
    _close(masked.mean(_e(X)), X.mean())
    _close(masked.var(_e(X), 0), X.var(0, ddof=1))
    _close(masked.softmax(_e(X), 0), np.exp(X) / np.exp(X).sum(0))


def test_mask_broadcasts_and_is_converted_to_bool():
    x = RNG.standard_normal((2, 3, 4))
    row = np.array([True, False, True, True])
    _close(masked.sum(_e(x), -1, mask=_e(row)), np.where(row, x, 0.0).sum(-1))
    as_int = _e(row.astype(np.int64))
    _close(masked.amax(_e(x), -1, mask=as_int), np.where(row, x, -np.inf).max(-1))


def test_integer_inputs_accumulate_like_torch_sum():
    x = _e(np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int32))
    m = _e(np.array([[True, False, True], [True, True, False]]))
    s = masked.sum(x, 1, mask=m)
    assert s.dtype == ea.int64 and s.tolist() == [4, 9]
    p = masked.prod(x, 1, mask=m)
    assert p.dtype == ea.int64 and p.tolist() == [3, 20]
    mx = masked.amax(x, 1, mask=_e(np.zeros((2, 3), dtype=bool)))
    assert mx.dtype == ea.int32 and mx.tolist() == [-(2**31), -(2**31)]


def test_zero_dim_and_empty_inputs():
    s = ea.tensor(2.5)
    assert masked.sum(s, mask=ea.tensor(False)).item() == 0.0
    assert masked.amax(s, 0, mask=ea.tensor(True)).item() == 2.5
    empty = _e(np.zeros((0, 3)))
    out = masked.sum(empty, 0, mask=_e(np.zeros((0, 3), dtype=bool)))
    assert out.shape == (3,) and out.tolist() == [0.0, 0.0, 0.0]


def test_errors_name_the_problem():
    x = _e(X)
    with pytest.raises(IndexError, match="more than the input"):
        masked.sum(x, mask=_e(np.ones((2, 3, 5), dtype=bool)))
    with pytest.raises(TypeError, match="mask must be a Tensor"):
        masked.sum(x, mask=MASK)
    with pytest.raises(IndexError, match="Dimension out of range"):
        masked.sum(x, 2, mask=_e(MASK))
    with pytest.raises(RuntimeError, match="appears multiple times"):
        masked.sum(x, (1, -1), mask=_e(MASK))
    with pytest.raises(ValueError, match="floating point"):
        masked.mean(_e(np.arange(3)), mask=_e(np.ones(3, dtype=bool)))
    with pytest.raises(ValueError, match="only one of unbiased and correction"):
        masked.var(x, 1, unbiased=True, correction=0)
    with pytest.raises(TypeError, match="expected a Tensor"):
        masked.sum([1.0, 2.0])
