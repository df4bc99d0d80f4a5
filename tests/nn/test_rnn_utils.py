"""nn.utils.rnn: PackedSequence layout, pack/pad round trips, gradients, PyTorch's messages."""

from __future__ import annotations

import re

import ember.aten as ea
import numpy as np
import pytest
from ember.autograd import gradcheck
from ember.nn.utils.rnn import (
    PackedSequence,
    invert_permutation,
    pack_padded_sequence,
    pack_sequence,
    pad_packed_sequence,
    pad_sequence,
    unpack_sequence,
    unpad_sequence,
)


def _np(t: ea.Tensor) -> np.ndarray:
    return t.detach().numpy()


def test_pack_padded_layout_is_time_major() -> None:
    x = ea.arange(12.0).reshape(3, 2, 2)  # (T=3, B=2, 2); lengths 3, 2
    p = pack_padded_sequence(x, [3, 2])
    assert p.batch_sizes.tolist() == [2, 2, 1]
    assert p.batch_sizes.dtype == ea.int64
    assert p.sorted_indices is None and p.unsorted_indices is None
    xn = _np(x)
    expected = np.stack([xn[0, 0], xn[0, 1], xn[1, 0], xn[1, 1], xn[2, 0]])
    assert np.array_equal(_np(p.data), expected)


def test_pack_unsorted_records_the_order() -> None:
    x = ea.randn(2, 3, 4)  # batch_first: (B=2, T=3, 4)
    p = pack_padded_sequence(x, ea.tensor([2, 3]), batch_first=True, enforce_sorted=False)
    assert p.sorted_indices.tolist() == [1, 0]
    assert p.unsorted_indices.tolist() == [1, 0]
    assert p.batch_sizes.tolist() == [2, 2, 1]
    xn = _np(x)
    assert np.array_equal(_np(p.data), np.stack([xn[1, 0], xn[0, 0], xn[1, 1], xn[0, 1], xn[1, 2]]))
    y, lengths = pad_packed_sequence(p, batch_first=True)
    assert lengths.tolist() == [2, 3]
    expected = xn.copy()
    expected[0, 2] = 0
    assert np.array_equal(_np(y), expected)


@pytest.mark.parametrize("batch_first", [False, True])
def test_round_trip_with_padding_value_and_total_length(batch_first: bool) -> None:
    ea.manual_seed(0)
    lengths = [4, 1, 3]
    x = ea.randn(3, 4, 2) if batch_first else ea.randn(4, 3, 2)
    p = pack_padded_sequence(x, lengths, batch_first=batch_first, enforce_sorted=False)
    y, out_lengths = pad_packed_sequence(p, batch_first=batch_first, padding_value=-7.0, total_length=6)
    assert out_lengths.tolist() == lengths
    yn, xn = _np(y), _np(x)
    if not batch_first:
        yn, xn = yn.transpose(1, 0, 2), xn.transpose(1, 0, 2)
    assert yn.shape == (3, 6, 2)
    for b, n in enumerate(lengths):
        assert np.array_equal(yn[b, :n], xn[b, :n])
        assert np.all(yn[b, n:] == -7.0)


def test_pad_sequence_and_pack_sequence() -> None:
    a, b, c = ea.ones(2, 3), 2 * ea.ones(4, 3), 3 * ea.ones(1, 3)
    y = pad_sequence([a, b, c])
    assert tuple(y.shape) == (4, 3, 3)
    assert _np(y)[:, 0, 0].tolist() == [1, 1, 0, 0]
    yb = pad_sequence([a, b, c], batch_first=True, padding_value=9.0)
    assert tuple(yb.shape) == (3, 4, 3) and _np(yb)[2, :, 0].tolist() == [3, 9, 9, 9]
    left = pad_sequence([ea.ones(2), ea.ones(3)], padding_side="left")
    assert _np(left).tolist() == [[0.0, 1.0], [1.0, 1.0], [1.0, 1.0]]
    p = pack_sequence([b, a, c])
    assert p.batch_sizes.tolist() == [3, 2, 1, 1]
    p2 = pack_sequence([a, b, c], enforce_sorted=False)
    back = unpack_sequence(p2)
    assert [tuple(t.shape) for t in back] == [(2, 3), (4, 3), (1, 3)]
    assert all(np.array_equal(_np(u), _np(v)) for u, v in zip(back, [a, b, c], strict=True))
    cut = unpad_sequence(y, ea.tensor([2, 4, 1]))
    assert [tuple(t.shape) for t in cut] == [(2, 3), (4, 3), (1, 3)]


def test_packed_sequence_constructor_and_conversions() -> None:
    p = PackedSequence(ea.ones(3), ea.tensor([2, 1]))
    assert p.sorted_indices is None and p.unsorted_indices is None
    assert repr(p).startswith("PackedSequence(data=tensor([1., 1., 1.]), batch_sizes=tensor([2, 1])")
    q = PackedSequence(ea.ones(3), ea.tensor([2, 1]), ea.tensor([1, 0]))
    assert q.unsorted_indices.tolist() == [1, 0]
    d = q.double()
    assert d.data.dtype == ea.float64 and d.sorted_indices.tolist() == [1, 0]
    assert q.to(ea.float32) is q
    assert not q.is_cuda
    _, batch_sizes, _, _ = q  # a named tuple
    assert batch_sizes.tolist() == [2, 1]
    assert invert_permutation(ea.tensor([2, 0, 1])).tolist() == [1, 2, 0]
    assert invert_permutation(None) is None


def test_gradients_flow_through_pack_and_pad() -> None:
    x = ea.randn(3, 2, 2, dtype=ea.float64, requires_grad=True)
    assert gradcheck(lambda x: pack_padded_sequence(x, [3, 1]).data, (x,))
    y = ea.randn(3, 2, 2, dtype=ea.float64, requires_grad=True)
    assert gradcheck(lambda y: pad_packed_sequence(pack_padded_sequence(y, [2, 3], enforce_sorted=False))[0], (y,))
    s1 = ea.randn(2, 2, dtype=ea.float64, requires_grad=True)
    s2 = ea.randn(3, 2, dtype=ea.float64, requires_grad=True)
    assert gradcheck(lambda a, b: pad_sequence([a, b], batch_first=True), (s1, s2))


def _raises(exc, msg, fn):
    with pytest.raises(exc, match=re.escape(msg)):
        fn()


def test_errors() -> None:
    x = ea.randn(3, 2, 4)
    _raises(
        RuntimeError,
        "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True",
        lambda: pack_padded_sequence(x, [2, 3]),
    )
    _raises(
        RuntimeError,
        "Length of all samples has to be greater than 0, but found an element in 'lengths' that is <= 0",
        lambda: pack_padded_sequence(x, [3, 0]),
    )
    _raises(
        RuntimeError,
        "Expected `len(lengths)` to be equal to batch_size, but got 3 (batch_size=2)",
        lambda: pack_padded_sequence(x, [3, 2, 1]),
    )
    _raises(
        RuntimeError,
        "the longest length (4) exceeds the padded sequence length (3)",
        lambda: pack_padded_sequence(x, [4, 2]),
    )
    p = pack_padded_sequence(x, [3, 2])
    _raises(
        ValueError,
        "Expected total_length to be at least the length of the longest sequence in input, but got "
        "total_length=2 and max sequence length being 3",
        lambda: pad_packed_sequence(p, total_length=2),
    )
    _raises(
        RuntimeError,
        "Expected padding_side to be one of left or right, but got up.",
        lambda: pad_sequence([ea.ones(2)], padding_side="up"),
    )
    _raises(
        RuntimeError,
        "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 1",
        lambda: pad_sequence([ea.ones(2, 3), ea.ones(3, 2)]),
    )
