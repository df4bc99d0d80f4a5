"""Padding, upsampling and grid sampling beyond the OpInfo table: layouts (channels-last in,
channels-last out for upsampling; strided inputs), non-finite grid positions, and the
backward operators as adjoints of their forwards (<grad_out, f(x)> == <b(grad_out), x>)."""

from __future__ import annotations

from typing import Any

import ember.aten as ea
import numpy as np
import pytest
from opinfo.resample import ref_bilinear, ref_nearest, ref_pad

RNG = np.random.default_rng(11)


def t(*shape: int) -> Any:
    return ea.from_numpy(RNG.standard_normal(shape))


def test_upsampling_keeps_channels_last() -> None:
    x = t(2, 3, 4, 5)
    xc = x.contiguous(memory_format=ea.channels_last)
    for out, ref in (
        (ea.nn.upsample_nearest2d(xc, (7, 3)), ref_nearest(x.numpy(), (7, 3))),
        (ea.nn.upsample_bilinear2d(xc, (6, 9), False), ref_bilinear(x.numpy(), (6, 9), False)),
    ):
        assert out.is_contiguous(memory_format=ea.channels_last)
        np.testing.assert_allclose(out.numpy(), ref, atol=1e-12)
    x3 = t(1, 2, 2, 3, 4)
    out3 = ea.nn.upsample_nearest3d(x3.contiguous(memory_format=ea.channels_last_3d), (3, 3, 5))
    assert out3.is_contiguous(memory_format=ea.channels_last_3d)
    np.testing.assert_allclose(out3.numpy(), ref_nearest(x3.numpy(), (3, 3, 5)))


def test_padding_reads_strided_inputs() -> None:
    x = t(2, 6, 5).transpose(1, 2)[:, ::2]  # neither contiguous nor channels-last
    np.testing.assert_allclose(ea.nn.reflection_pad1d(x, (2, 3)).numpy(), ref_pad(x.numpy(), (2, 3), "reflect"))
    np.testing.assert_allclose(
        ea.nn.replication_pad2d(x, (1, 2, 3, 0)).numpy(), ref_pad(x.numpy(), (1, 2, 3, 0), "replicate")
    )


def _adjoint_gap(f: Any, b: Any, x: Any, out_shape: tuple[int, ...]) -> float:
    g = t(*out_shape)
    return abs(float((f(x) * g).sum()) - float((b(g) * x).sum()))


@pytest.mark.parametrize(
    ("f", "b", "shape", "out_shape"),
    [
        (
            lambda x: ea.nn.reflection_pad3d(x, (1, 2, 0, 1, 1, 0)),
            lambda g: ea.nn.reflection_pad3d_backward(g, ea.zeros(1, 2, 2, 3, 3, dtype=ea.float64), (1, 2, 0, 1, 1, 0)),
            (1, 2, 2, 3, 3),
            (1, 2, 3, 4, 6),
        ),
        (
            lambda x: ea.nn.upsample_bilinear2d(x, (7, 2), True),
            lambda g: ea.nn.upsample_bilinear2d_backward(g, (7, 2), (2, 1, 3, 5), True),
            (2, 1, 3, 5),
            (2, 1, 7, 2),
        ),
        (
            lambda x: ea.nn.upsample_nearest1d(x, (11,), 2.5),
            lambda g: ea.nn.upsample_nearest1d_backward(g, (11,), (1, 3, 4), 2.5),
            (1, 3, 4),
            (1, 3, 11),
        ),
    ],
    ids=["reflection_pad3d", "upsample_bilinear2d", "upsample_nearest1d"],
)
def test_backward_operators_are_adjoints(f: Any, b: Any, shape: tuple[int, ...], out_shape: tuple[int, ...]) -> None:
    assert _adjoint_gap(f, b, t(*shape), out_shape) < 1e-10
