"""Convolution beyond the OpInfo table: many configurations against the float64 references of
opinfo/conv.py, both product paths (BLAS and the parallel small-matrix one), chunked batches,
channels-last layouts, padding='same', convolution_backward against finite differences of
the forward, unfold / fold, and errors."""

from __future__ import annotations

import warnings
from typing import Any

import ember.aten as ea
import numpy as np
import pytest
from opinfo.conv import ref_col2im, ref_conv, ref_conv_transpose, ref_im2col

RNG = np.random.default_rng(20240607)


def arr(*shape: int) -> np.ndarray:
    return RNG.uniform(-1, 1, size=shape)


def t(a: np.ndarray, dtype: Any = ea.float64) -> Any:
    return ea.from_numpy(np.ascontiguousarray(a)).to(dtype)


def close(got: Any, expected: np.ndarray, tol: float = 1e-10) -> None:
    g = got.double().numpy() if isinstance(got, ea.Tensor) else np.asarray(got)
    assert g.shape == expected.shape, (g.shape, expected.shape)
    np.testing.assert_allclose(g, expected, atol=tol, rtol=tol)


CONV = (ea.conv1d, ea.conv2d, ea.conv3d)
TCONV = (ea.conv_transpose1d, ea.conv_transpose2d, ea.conv_transpose3d)

# (spatial dims, N, C_in, C_out, groups, input size, kernel, stride, padding, dilation, bias)
CONFIGS = [
    (1, 2, 3, 4, 1, (11,), (3,), 1, 0, 1, True),
    (1, 3, 4, 6, 2, (10,), (4,), 3, 2, 2, False),
    (1, 1, 6, 6, 6, (9,), (3,), 2, 1, 1, True),  # depthwise
    (2, 2, 3, 5, 1, (7, 8), (3, 3), 1, 1, 1, True),
    (2, 2, 4, 6, 2, (9, 7), (3, 2), (2, 1), (1, 0), (2, 3), True),
    (2, 3, 8, 8, 8, (6, 6), (3, 3), 1, 1, 1, False),  # depthwise
    (2, 1, 4, 12, 4, (5, 6), (2, 3), (1, 2), (1, 1), 1, True),  # depthwise, multiplier 3
    (2, 2, 6, 4, 1, (5, 5), (1, 1), 1, 0, 1, True),  # 1x1: no im2col
    (2, 1, 3, 2, 1, (5, 5), (1, 1), 2, 1, 1, False),  # 1x1 with stride and padding
    (2, 2, 3, 4, 1, (4, 4), (4, 4), 1, 0, 1, True),  # kernel = input
    (3, 2, 2, 4, 2, (4, 5, 3), (2, 3, 2), (1, 2, 1), (1, 0, 1), (1, 1, 2), True),
    (3, 1, 3, 3, 3, (3, 4, 4), (3, 3, 3), 1, 1, 1, False),
]


def _conv_ids(c: tuple[Any, ...]) -> str:
    return f"{c[0]}d-g{c[4]}-k{c[6]}-s{c[7]}-p{c[8]}-d{c[9]}"


@pytest.mark.parametrize("cfg", CONFIGS, ids=_conv_ids)
def test_convolution_matches_reference(cfg: tuple[Any, ...]) -> None:
    n, N, ci, co, g, size, k, s, p, d, has_bias = cfg
    x, w = arr(N, ci, *size), arr(co, ci // g, *k)
    b = arr(co) if has_bias else None
    expected = ref_conv(x, w, b, s, p, d, g)
    got = CONV[n - 1](t(x), t(w), t(b) if has_bias else None, s, p, d, g)
    close(got, expected)
    # float32 through the same paths
    got32 = CONV[n - 1](t(x, ea.float32), t(w, ea.float32), t(b, ea.float32) if has_bias else None, s, p, d, g)
    assert got32.dtype == ea.float32
    close(got32, expected, 1e-5)
    # unbatched: the same as the first image of the batch
    got1 = CONV[n - 1](t(x[0]), t(w), t(b) if has_bias else None, s, p, d, g)
    close(got1, expected[0])


# (spatial dims, N, C_in, C_out per group, groups, input size, kernel, stride, padding, output_padding, dilation)
TCONFIGS = [
    (1, 2, 3, 2, 1, (5,), (3,), 2, 1, 1, 1),
    (1, 1, 4, 3, 2, (4,), (2,), 3, 0, 2, 1),
    (2, 2, 2, 3, 1, (3, 4), (3, 3), (2, 1), (1, 0), (1, 0), 1),
    (2, 1, 4, 1, 4, (4, 3), (2, 3), 2, 1, 1, (1, 2)),  # depthwise
    (2, 2, 3, 2, 1, (3, 3), (2, 2), 1, 0, (2, 1), 3),  # output_padding >= stride, < dilation
    (2, 2, 4, 2, 2, (3, 3), (1, 1), 1, 0, 0, 1),  # 1x1
    (3, 1, 2, 2, 2, (2, 3, 2), (2, 2, 2), (2, 1, 2), (0, 1, 1), (1, 0, 1), 1),
]


@pytest.mark.parametrize("cfg", TCONFIGS, ids=lambda c: f"{c[0]}d-g{c[4]}-s{c[7]}-op{c[9]}")
def test_transposed_convolution_matches_reference(cfg: tuple[Any, ...]) -> None:
    n, N, ci, cog, g, size, k, s, p, op, d = cfg
    x, w, b = arr(N, ci, *size), arr(ci, cog, *k), arr(cog * g)
    expected = ref_conv_transpose(x, w, b, s, p, op, g, d)
    got = TCONV[n - 1](t(x), t(w), t(b), s, p, op, g, d)
    close(got, expected)
    close(TCONV[n - 1](t(x, ea.float32), t(w, ea.float32), t(b, ea.float32), s, p, op, g, d), expected, 1e-5)
    close(TCONV[n - 1](t(x[0]), t(w), t(b), s, p, op, g, d), expected[0])


def test_transposed_convolution_is_the_input_gradient_of_convolution() -> None:
    # conv_transpose2d(y, w) = d/dx <y, conv2d(x, w)>: the definition, checked on the operators
    x, w = arr(2, 4, 7, 6), arr(6, 2, 3, 3)
    stride, padding, dilation, groups = (2, 1), (1, 1), (1, 2), 2
    out = ea.conv2d(t(x), t(w), None, stride, padding, dilation, groups)
    y = arr(*out.shape)
    # the output_padding that makes the transposed output as large as x
    op = tuple(
        x.shape[2 + i] - ((y.shape[2 + i] - 1) * stride[i] - 2 * padding[i] + dilation[i] * 2 + 1) for i in range(2)
    )
    gi = ea.conv_transpose2d(t(y), t(w), None, stride, padding, op, groups, dilation)
    gi_ref = ea.convolution_backward(
        t(y), t(x), t(w), None, stride, padding, dilation, False, (0, 0), groups, (True, False, False)
    )[0]
    assert tuple(gi.shape) == x.shape
    close(gi, gi_ref.numpy())
    close(gi, ref_conv_transpose(y, w, None, stride, padding, op, groups, dilation))


def ref_weight_grad(x: np.ndarray, go: np.ndarray, kernel: tuple[int, int], padding: int, groups: int) -> np.ndarray:
    """grad_weight of a stride-1 2-d convolution: grad_output times the unfolded input, per group."""
    N, C = x.shape[:2]
    O = go.shape[1]
    cols = ref_im2col(x, kernel, 1, padding, 1).reshape(N, C, kernel[0] * kernel[1], -1)
    g_out = go.reshape(N, O, -1)
    cg, og = C // groups, O // groups
    parts = []
    for g in range(groups):
        c = cols[:, g * cg : (g + 1) * cg].reshape(N, cg * kernel[0] * kernel[1], -1)
        parts.append(np.einsum("nol,nkl->ok", g_out[:, g * og : (g + 1) * og], c))
    return np.concatenate(parts).reshape(O, cg, *kernel)


def test_blas_and_small_matrix_paths_agree_with_the_reference() -> None:
    # big products go to OpenBLAS, small ones (depthwise, tiny images) to the parallel kernel;
    # a batch whose columns exceed the chunk budget is processed in several chunks
    cases = [
        (arr(9, 16, 64, 64), arr(8, 16, 3, 3), 1),  # BLAS, two chunks (columns 144 x 4096 per image)
        (arr(6, 32, 12, 12), arr(32, 1, 3, 3), 32),  # depthwise: small products in parallel
        (arr(4, 8, 10, 10), arr(16, 2, 3, 3), 4),  # grouped, small products
        (arr(64, 2, 3, 3), arr(3, 2, 3, 3), 1),  # many tiny images
    ]
    for x, w, groups in cases:
        b = arr(w.shape[0])
        expected = ref_conv(x, w, b, 1, 1, 1, groups)
        close(ea.conv2d(t(x), t(w), t(b), 1, 1, 1, groups), expected)
        go = arr(*expected.shape)
        gi, gw, gb = ea.convolution_backward(
            t(go), t(x), t(w), [w.shape[0]], (1, 1), (1, 1), (1, 1), False, (0, 0), groups, (True, True, True)
        )
        close(gi, ref_conv_transpose(go, w, None, 1, 1, 0, groups, 1))
        close(gw, ref_weight_grad(x, go, (3, 3), 1, groups))
        close(gb, go.sum(axis=(0, 2, 3)))


@pytest.mark.parametrize("threads", [1, 2])
def test_per_image_paths_agree_with_the_reference(threads: int) -> None:
    # the images split over the threads (5 over 2: uneven) or one at a time; float32 32x32
    # outputs use padded column rows (4 KiB rows); a 1x1 kernel skips im2col; the bias is the
    # GEMM's start; the backward computes grad_input and grad_weight in one pass
    previous = ea.get_num_threads()
    ea.set_num_threads(threads)
    try:
        for x, w, pad in [(arr(5, 4, 32, 32), arr(6, 4, 3, 3), 1), (arr(3, 8, 9, 9), arr(5, 8, 1, 1), 0)]:
            b = arr(w.shape[0])
            expected = ref_conv(x, w, b, 1, pad, 1, 1)
            go = arr(*expected.shape)
            for dtype, tol in ((ea.float64, 1e-10), (ea.float32, 1e-4)):
                close(ea.conv2d(t(x, dtype), t(w, dtype), t(b, dtype), 1, pad), expected, tol)
                gi, gw, gb = ea.convolution_backward(
                    t(go, dtype),
                    t(x, dtype),
                    t(w, dtype),
                    [w.shape[0]],
                    (1, 1),
                    (pad, pad),
                    (1, 1),
                    False,
                    (0, 0),
                    1,
                    (True, True, True),
                )
                close(gi, ref_conv_transpose(go, w, None, 1, pad, 0, 1, 1), tol)
                close(gw, ref_weight_grad(x, go, w.shape[2:], pad, 1), tol)
                close(gb, go.sum(axis=(0, 2, 3)), tol)
    finally:
        ea.set_num_threads(previous)


@pytest.mark.parametrize("threads", [1, 2])
def test_direct_path_agrees_with_the_reference(threads: int) -> None:
    # 2-d, stride 1, undilated, ungrouped convolutions with rows of at least one tile (16 float32
    # positions on AVX2) run the direct kernel (ConvDirect.h), forward and grad_input (the flipped
    # kernel, padding k - 1 - p): output channels that are not a multiple of the tile height, rows
    # with a partial last tile, non-square and even kernels, padding 0 to k - 1, no bias
    previous = ea.get_num_threads()
    ea.set_num_threads(threads)
    # (x, w, padding, bias)
    cases = [
        (arr(4, 3, 20, 37), arr(13, 3, 3, 3), (1, 1), True),
        (arr(2, 5, 9, 40), arr(7, 5, 2, 5), (0, 2), False),
        (arr(3, 2, 6, 33), arr(4, 2, 1, 1), (0, 0), True),
        (arr(2, 4, 8, 18), arr(9, 4, 3, 3), (2, 2), True),
        (arr(5, 16, 16, 16), arr(32, 16, 3, 3), (1, 1), True),
    ]
    try:
        for x, w, pad, has_bias in cases:
            b = arr(w.shape[0]) if has_bias else None
            expected = ref_conv(x, w, b, 1, pad, 1, 1)
            go = arr(*expected.shape)
            for dtype, tol in ((ea.float64, 1e-10), (ea.float32, 1e-4)):
                bt = t(b, dtype) if has_bias else None
                close(ea.conv2d(t(x, dtype), t(w, dtype), bt, 1, pad), expected, tol)
                gi, gw, gb = ea.convolution_backward(
                    t(go, dtype),
                    t(x, dtype),
                    t(w, dtype),
                    [w.shape[0]],
                    (1, 1),
                    pad,
                    (1, 1),
                    False,
                    (0, 0),
                    1,
                    (True, True, True),
                )
                close(gi, ref_conv_transpose(go, w, None, 1, pad, 0, 1, 1), tol)
                close(gw, ref_weight_grad(x, go, w.shape[2:], pad, 1), tol)
                close(gb, go.sum(axis=(0, 2, 3)), tol)
                gi_only = ea.convolution_backward(
                    t(go, dtype),
                    t(x, dtype),
                    t(w, dtype),
                    None,
                    (1, 1),
                    pad,
                    (1, 1),
                    False,
                    (0, 0),
                    1,
                    (True, False, False),
                )[0]
                close(gi_only, ref_conv_transpose(go, w, None, 1, pad, 0, 1, 1), tol)
    finally:
        ea.set_num_threads(previous)


def _backward(go: Any, x: Any, w: Any, pad: Any, mask: tuple[bool, bool, bool]) -> tuple[Any, Any, Any]:
    """convolution_backward of a stride-1, undilated, ungrouped 2-d convolution."""
    return ea.convolution_backward(go, x, w, [w.shape[0]], (1, 1), pad, (1, 1), False, (0, 0), 1, mask)


@pytest.mark.parametrize("threads", [1, 2])
def test_direct_path_rows_blocks_and_large_images(threads: int) -> None:
    # the direct kernel's thread and cache splits: a batch of one (or one that does not split
    # evenly over two threads) shares each image's output rows between the threads; a weight
    # past one L2 block (96 x 64 x 3 x 3 float32: 216 KiB) runs in blocks of output channels;
    # a 32-channel 64x64 image (over the old 320 KiB image limit) runs direct too. Below 8
    # output rows at 2 threads, and with 512 channels (an output row reads 3 x 512 input rows,
    # past 192 KiB), the im2col path takes over: both sides of each boundary must agree.
    previous = ea.get_num_threads()
    ea.set_num_threads(threads)
    # (x, w, padding)
    cases = [
        (arr(1, 5, 11, 19), arr(7, 5, 3, 3), (1, 1)),  # one image: rows shared
        (arr(3, 4, 12, 20), arr(6, 4, 3, 2), (1, 0)),  # 3 images over 2 threads: rows shared
        (arr(1, 64, 8, 16), arr(96, 64, 3, 3), (1, 1)),  # two weight blocks
        (arr(1, 32, 64, 64), arr(4, 32, 3, 3), (1, 1)),  # a large image
        (arr(1, 3, 7, 16), arr(5, 3, 3, 3), (1, 1)),  # 7 rows: under 4 per thread at 2 threads
        (arr(1, 3, 8, 16), arr(5, 3, 3, 3), (1, 1)),  # 8 rows: 4 per thread
        (arr(1, 512, 4, 32), arr(2, 512, 3, 3), (1, 1)),  # input rows past the row budget
    ]
    try:
        for x, w, pad in cases:
            b = arr(w.shape[0])
            expected = ref_conv(x, w, b, 1, pad, 1, 1)
            go = arr(*expected.shape)
            gi_ref = ref_conv_transpose(go, w, None, 1, pad, 0, 1, 1)
            for dtype, tol in ((ea.float64, 1e-10), (ea.float32, 1e-4)):
                close(ea.conv2d(t(x, dtype), t(w, dtype), t(b, dtype), 1, pad), expected, tol)
                gi = _backward(t(go, dtype), t(x, dtype), t(w, dtype), pad, (True, False, False))[0]
                close(gi, gi_ref, tol)
    finally:
        ea.set_num_threads(previous)


@pytest.mark.parametrize("threads", [1, 2])
def test_direct_weight_gradient_agrees_with_the_reference(threads: int, capability: str) -> None:
    # stride-1, undilated, ungrouped 2-d convolutions with output rows of at least 32 positions
    # compute grad_weight directly (ConvDirect.h): output channels not a multiple of the 4-high
    # tile (tails of 2 and 1), taps not a multiple of 3, rows with a partial last vector, even
    # and non-square kernels, padding 0 to k - 1, one image and several, bands of rows (64
    # rows: more than one band), and rows of 31 positions (the im2col path) at the boundary;
    # once per CPU capability (AVX-512's tiles are 8 high, the others' 4)
    previous = ea.get_num_threads()
    ea.set_num_threads(threads)
    # (x, w, padding)
    cases = [
        (arr(1, 3, 9, 37), arr(7, 3, 3, 3), (1, 1)),  # 7 = 4 + 2 + 1 output channels; 37 = 4 vectors + 5
        (arr(1, 2, 7, 35), arr(15, 2, 3, 3), (1, 1)),  # 15 = 8 + 4 + 2 + 1 (AVX-512's 8-high tile)
        (arr(2, 5, 6, 40), arr(6, 5, 2, 5), (0, 2)),  # 50 taps = 16 x 3 + 2
        (arr(3, 2, 5, 33), arr(4, 2, 1, 1), (1, 0)),  # 1x1 with padding: not the identity
        (arr(2, 4, 8, 34), arr(9, 4, 3, 3), (2, 2)),  # padding k - 1
        (arr(1, 2, 64, 32), arr(5, 2, 3, 3), (1, 1)),  # 64 rows of 32: two bands
        (arr(2, 3, 6, 31), arr(5, 3, 3, 3), (1, 1)),  # 31 output columns: im2col
        (arr(2, 3, 6, 34), arr(5, 3, 3, 3), (0, 0)),  # 32 output columns: direct
    ]
    try:
        for x, w, pad in cases:
            expected = ref_conv(x, w, None, 1, pad, 1, 1)
            go = arr(*expected.shape)
            gw_ref = ref_weight_grad(x, go, w.shape[2:], pad, 1)
            gi_ref = ref_conv_transpose(go, w, None, 1, pad, 0, 1, 1)
            for dtype, tol in ((ea.float64, 1e-10), (ea.float32, 1e-4)):
                gi, gw, gb = _backward(t(go, dtype), t(x, dtype), t(w, dtype), pad, (True, True, True))
                assert gw.dtype == dtype and tuple(gw.shape) == w.shape
                close(gw, gw_ref, tol)
                close(gi, gi_ref, tol)
                close(gb, go.sum(axis=(0, 2, 3)), tol)
                gw_only = _backward(t(go, dtype), t(x, dtype), t(w, dtype), pad, (False, True, False))[1]
                close(gw_only, gw_ref, tol)
    finally:
        ea.set_num_threads(previous)


def test_direct_weight_gradient_over_groups_of_images_and_passes(capability: str) -> None:
    # the direct weight gradient sums a tile over groups of row slabs that span images (up to
    # 256 KiB of grad_output each) and over passes of whole padded images (16 MiB each): 5
    # images of 64 rows are two groups; 4 images of 64 x 130 x 130 padded values are passes of
    # 3 (float32) or 1 (float64) images. The same sums at one and two threads, bit for bit.
    cases = [
        (arr(5, 3, 64, 34), arr(10, 3, 3, 3), (0, 0)),
        (arr(4, 64, 128, 128), arr(3, 64, 3, 3), (1, 1)),
    ]
    previous = ea.get_num_threads()
    try:
        for x, w, pad in cases:
            go = arr(x.shape[0], w.shape[0], x.shape[2] + 2 * pad[0] - 2, x.shape[3] + 2 * pad[1] - 2)
            gw_ref = ref_weight_grad(x, go, w.shape[2:], pad, 1)
            for dtype, tol in ((ea.float64, 1e-9), (ea.float32, 1e-3)):
                results = []
                for threads in (1, 2):
                    ea.set_num_threads(threads)
                    gw = _backward(t(go, dtype), t(x, dtype), t(w, dtype), pad, (False, True, False))[1]
                    results.append(gw.numpy())
                close(gw, gw_ref, tol)
                assert np.array_equal(results[0], results[1])
    finally:
        ea.set_num_threads(previous)


def test_direct_weight_gradient_reads_nothing_past_a_row(capability: str) -> None:
    # an infinite input in the last column reaches only the taps whose windows read it: the
    # partial last vector of each row (35 = 32 + 3 columns) must not multiply it by the zeros
    # past the row's end (inf * 0 = nan) for the other taps
    x = arr(1, 2, 5, 37)
    x[0, 1, :, 36] = np.inf
    w = arr(3, 2, 3, 3)
    go = arr(1, 3, 3, 35)
    for dtype in (ea.float64, ea.float32):
        gw = _backward(t(go, dtype), t(x, dtype), t(w, dtype), (0, 0), (False, True, False))[1].double().numpy()
        assert np.isfinite(gw[:, 0]).all() and np.isfinite(gw[:, 1, :, :2]).all()
        assert not np.isfinite(gw[:, 1, :, 2]).any()  # inf, or nan where signs of grad_output mix
        finite = x.copy()
        finite[0, 1, :, 36] = 0.0
        ref = ref_weight_grad(finite, go, (3, 3), (0, 0), 1)
        tol = 1e-10 if dtype == ea.float64 else 1e-4
        close(gw[:, 0], ref[:, 0], tol)
        close(gw[:, 1, :, :2], ref[:, 1, :, :2], tol)


@pytest.mark.parametrize("threads", [1, 2])
def test_large_weight_gradients_sum_in_the_weights_layout(threads: int) -> None:
    # through im2col + BLAS, a weight of more than 65,536 elements (128 x 64 x 3 x 3) is summed
    # in its own layout (no transpose): one image (thin, 4x4), and 5 images of 16x16 that the
    # threads split, whose sums are added in order; a small weight the transposed way
    previous = ea.get_num_threads()
    ea.set_num_threads(threads)
    cases = [
        (arr(1, 64, 4, 4), arr(128, 64, 3, 3)),
        (arr(5, 64, 16, 16), arr(128, 64, 3, 3)),
        (arr(5, 8, 16, 16), arr(16, 8, 3, 3)),
    ]
    try:
        for x, w in cases:
            expected = ref_conv(x, w, None, 1, 1, 1, 1)
            go = arr(*expected.shape)
            gw_ref = ref_weight_grad(x, go, (3, 3), (1, 1), 1)
            gi_ref = ref_conv_transpose(go, w, None, 1, 1, 0, 1, 1)
            for dtype, tol in ((ea.float64, 1e-10), (ea.float32, 1e-4)):
                for mask in ((True, True, False), (False, True, False)):
                    gi, gw, _ = _backward(t(go, dtype), t(x, dtype), t(w, dtype), (1, 1), mask)
                    close(gw, gw_ref, tol)
                    if mask[0]:
                        close(gi, gi_ref, tol)
    finally:
        ea.set_num_threads(previous)


@pytest.mark.parametrize("threads", [1, 2])
def test_whole_batch_products_agree_with_the_reference(threads: int) -> None:
    # thin images (under 256 output positions, as ResNet's 4x4 / 2x2 stages) run one product per
    # group over the whole batch, images side by side in the columns: forward with bias, both
    # backward passes fused and apart, grouped, strided, transposed, float64 and float32
    previous = ea.get_num_threads()
    ea.set_num_threads(threads)
    # (x, w, stride, padding, groups)
    cases = [
        (arr(5, 16, 2, 2), arr(12, 16, 3, 3), 1, 1, 1),  # 2x2 outputs: L = 4
        (arr(3, 8, 8, 7), arr(10, 4, 3, 3), 2, 1, 2),  # strided 4x4, two groups
        (arr(4, 6, 5, 5), arr(8, 6, 1, 1), 1, 0, 1),  # 1x1: the columns are a gathered copy
    ]
    try:
        for x, w, stride, pad, groups in cases:
            b = arr(w.shape[0])
            expected = ref_conv(x, w, b, stride, pad, 1, groups)
            assert expected.shape[2] * expected.shape[3] < 256 and x.shape[0] > 1
            go = arr(*expected.shape)
            # the input gradient of a convolution is a transposed convolution of grad_output
            op = tuple(x.shape[2 + i] - ((go.shape[2 + i] - 1) * stride - 2 * pad + w.shape[2 + i]) for i in range(2))
            gi_ref = ref_conv_transpose(go, w, None, stride, pad, op, groups, 1)
            for dtype, tol in ((ea.float64, 1e-10), (ea.float32, 1e-4)):
                close(ea.conv2d(t(x, dtype), t(w, dtype), t(b, dtype), stride, pad, 1, groups), expected, tol)
                for mask in ((True, True, True), (True, False, False), (False, True, False)):
                    gi, gw, gb = ea.convolution_backward(
                        t(go, dtype),
                        t(x, dtype),
                        t(w, dtype),
                        [w.shape[0]],
                        (stride,) * 2,
                        (pad,) * 2,
                        (1, 1),
                        False,
                        (0, 0),
                        groups,
                        mask,
                    )
                    if mask[0]:
                        close(gi, gi_ref, tol)
                    if mask[1]:
                        cols = ref_im2col(x, w.shape[2:], 1, pad, stride).reshape(
                            x.shape[0], x.shape[1], -1, go.shape[2] * go.shape[3]
                        )
                        cg, og = x.shape[1] // groups, w.shape[0] // groups
                        ref_gw = np.concatenate(
                            [
                                np.einsum(
                                    "nol,nckl->ock",
                                    go.reshape(go.shape[0], w.shape[0], -1)[:, g * og : (g + 1) * og],
                                    cols[:, g * cg : (g + 1) * cg],
                                )
                                for g in range(groups)
                            ]
                        ).reshape(w.shape)
                        close(gw, ref_gw, tol)
                    if mask[2]:
                        close(gb, go.sum(axis=(0, 2, 3)), tol)
                # transposed: the same products the other way round (big side = the output)
                tw = arr(x.shape[1], 5, 2, 2)
                close(
                    ea.conv_transpose2d(t(x, dtype), t(tw, dtype), t(b[:5], dtype), 2, 0, 0, 1),
                    ref_conv_transpose(x, tw, b[:5], 2, 0, 0, 1, 1),
                    tol,
                )
    finally:
        ea.set_num_threads(previous)


def test_channels_last_inputs() -> None:
    x, w, b = arr(2, 4, 6, 5), arr(6, 2, 3, 3), arr(6)
    expected = ref_conv(x, w, b, (2, 1), 1, 1, 2)
    xc = t(x).contiguous(memory_format=ea.channels_last)
    assert not xc.is_contiguous()
    out = ea.conv2d(xc, t(w), t(b), (2, 1), 1, 1, 2)
    close(out, expected)
    assert out.is_contiguous(memory_format=ea.channels_last)  # as PyTorch: the input's layout
    # a channels-last weight alone also gives a channels-last result
    out_w = ea.conv2d(t(x), t(w).contiguous(memory_format=ea.channels_last), t(b), (2, 1), 1, 1, 2)
    close(out_w, expected)
    # 3-d
    x3, w3 = arr(1, 2, 4, 3, 5), arr(3, 2, 2, 2, 2)
    out3 = ea.conv3d(t(x3).contiguous(memory_format=ea.channels_last_3d), t(w3))
    close(out3, ref_conv(x3, w3))
    assert out3.is_contiguous(memory_format=ea.channels_last_3d)
    # backward keeps the layouts too
    gi, gw, _ = ea.convolution_backward(
        ea.ones_like(out), xc, t(w), None, (2, 1), (1, 1), (1, 1), False, (0, 0), 2, (True, True, False)
    )
    gi_c, gw_c, _ = ea.convolution_backward(
        ea.ones_like(out).contiguous(), t(x), t(w), None, (2, 1), (1, 1), (1, 1), False, (0, 0), 2, (True, True, False)
    )
    assert gi.is_contiguous(memory_format=ea.channels_last)
    close(gi, gi_c.numpy())
    close(gw, gw_c.numpy())


@pytest.mark.parametrize(
    ("n", "size", "kernel", "dilation"),
    [
        (1, (7,), (3,), 1),
        (1, (6,), (4,), 1),
        (2, (5, 6), (2, 3), (1, 2)),
        (2, (4, 4), (4, 4), 1),
        (3, (3, 4, 5), (2, 3, 2), (2, 1, 1)),
    ],
)
def test_padding_same_keeps_the_size(n: int, size: tuple[int, ...], kernel: tuple[int, ...], dilation: Any) -> None:
    x, w, b = arr(2, 3, *size), arr(4, 3, *kernel), arr(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = CONV[n - 1](t(x), t(w), t(b), 1, "same", dilation)
    assert tuple(out.shape) == (2, 4, *size)
    close(out, ref_conv(x, w, b, 1, "same", dilation))
    close(CONV[n - 1](t(x), t(w), t(b), 1, "valid", dilation), ref_conv(x, w, b, 1, 0, dilation))


def test_padding_same_with_an_odd_total_warns_as_pytorch() -> None:
    with pytest.warns(UserWarning, match="padding='same' with even kernel lengths"):
        ea.conv1d(t(arr(1, 1, 6)), t(arr(1, 1, 4)), None, 1, "same")


# ---- convolution_backward against finite differences of the forward ---------------------------

BACKWARD_CASES = [
    # (input shape, weight shape, stride, padding, dilation, transposed, output_padding, groups)
    ((2, 4, 5, 4), (6, 2, 3, 2), (2, 1), (1, 0), (1, 2), False, (0, 0), 2),
    ((1, 3, 6), (3, 1, 3), (2,), (1,), (2,), False, (0,), 3),
    ((1, 2, 3, 3, 2), (2, 2, 2, 2, 1), (1, 1, 1), (1, 0, 0), (1, 1, 1), False, (0, 0, 0), 1),
    ((2, 2, 3, 3), (2, 3, 3, 2), (2, 2), (1, 0), (1, 1), True, (1, 1), 1),
    ((1, 4, 3), (4, 1, 2), (3,), (0,), (2,), True, (2,), 2),
    ((2, 3, 4, 4), (5, 3, 1, 1), (1, 1), (0, 0), (1, 1), False, (0, 0), 1),
]


def _forward(x: np.ndarray, w: np.ndarray, b: np.ndarray, case: tuple[Any, ...]) -> np.ndarray:
    _, _, s, p, d, transposed, op, g = case
    return ea.convolution(t(x), t(w), t(b), s, p, d, transposed, op, g).numpy()


@pytest.mark.parametrize("case", BACKWARD_CASES, ids=lambda c: f"{len(c[0]) - 2}d-{'T' if c[5] else 'N'}-g{c[7]}")
def test_convolution_backward_matches_finite_differences(case: tuple[Any, ...]) -> None:
    xs, ws, s, p, d, transposed, op, g = case
    x, w = arr(*xs), arr(*ws)
    c_out = ws[1] * g if transposed else ws[0]
    b = arr(c_out)
    y = _forward(x, w, b, case)
    go = arr(*y.shape)
    gi, gw, gb = ea.convolution_backward(t(go), t(x), t(w), [c_out], s, p, d, transposed, op, g, (True, True, True))
    eps = 1e-6

    def numeric(which: np.ndarray) -> np.ndarray:
        # d <go, conv(x, w, b)> / d which[i], by central differences (which is x, w or b, changed in place)
        grad = np.zeros_like(which)
        for i in np.ndindex(*which.shape):
            orig = which[i]
            which[i] = orig + eps
            plus = np.sum(go * _forward(x, w, b, case))
            which[i] = orig - eps
            minus = np.sum(go * _forward(x, w, b, case))
            which[i] = orig
            grad[i] = (plus - minus) / (2 * eps)
        return grad

    close(gi, numeric(x), 1e-6)
    close(gw, numeric(w), 1e-6)
    close(gb, numeric(b), 1e-6)
    # output_mask: what is not asked for is None
    only = ea.convolution_backward(t(go), t(x), t(w), None, s, p, d, transposed, op, g, (False, True, False))
    assert only[0] is None and only[2] is None
    close(only[1], gw.numpy())


def test_convolution_backward_half_precision_runs_in_float32() -> None:
    x, w = arr(2, 3, 5, 5), arr(4, 3, 3, 3)
    go = arr(2, 4, 3, 3)
    for dt, tol in ((ea.float16, 4e-3), (ea.bfloat16, 2e-2)):
        xs, ws, gos = t(x, dt), t(w, dt), t(go, dt)
        # the reference sees the same (rounded) values in float64: only the result's rounding differs
        ref = ea.convolution_backward(
            gos.double(), xs.double(), ws.double(), [4], (1, 1), (0, 0), (1, 1), False, (0, 0), 1, (True, True, True)
        )
        got = ea.convolution_backward(gos, xs, ws, [4], (1, 1), (0, 0), (1, 1), False, (0, 0), 1, (True, True, True))
        for a, r in zip(got, ref, strict=True):
            assert a.dtype == dt
            close(a, r.numpy(), tol)


def test_convolution_backward_errors() -> None:
    x, w = t(arr(2, 4, 5, 5)), t(arr(6, 2, 3, 3))
    args = ((1, 1), (0, 0), (1, 1), False, (0, 0), 2)
    with pytest.raises(
        RuntimeError,
        match=r"expected grad_output of size \[2, 6, 3, 3\] \(the convolution's output\), "
        r"but got \[2, 6, 4, 3\]",
    ):
        ea.convolution_backward(t(arr(2, 6, 4, 3)), x, w, None, *args, (True, True, True))
    with pytest.raises(RuntimeError, match="expected grad_output of dtype float64, but got float32"):
        ea.convolution_backward(t(arr(2, 6, 3, 3), ea.float32), x, w, None, *args, (True, True, True))
    with pytest.raises(RuntimeError, match="Given groups=2, weight of size"):
        ea.convolution_backward(t(arr(2, 6, 3, 3)), t(arr(2, 3, 5, 5)), w, None, *args, (True, True, True))


def test_convolution_operator_errors() -> None:
    x, w = t(arr(2, 4, 5, 5)), t(arr(6, 4, 3, 3))
    with pytest.raises(RuntimeError, match="weight should have at least three dimensions"):
        ea.convolution(t(arr(2, 3)), t(arr(2, 3)), None, (1,), (0,), (1,), False, (0,), 1)
    with pytest.raises(
        RuntimeError,
        match=r"Expected 4-dimensional input for 4-dimensional weight \[6, 4, 3, 3\], but "
        r"got 3-dimensional input of size \[4, 5, 5\] instead",
    ):
        ea.convolution(t(arr(4, 5, 5)), w, None, (1,), (0,), (1,), False, (0,), 1)
    with pytest.raises(RuntimeError, match="expected padding to be a single integer value or a list of 2 values"):
        ea.conv2d(x, w, None, 1, (1, 1, 1))
    with pytest.raises(RuntimeError, match="expected dilation to be a single integer value or a list of 2 values"):
        ea.conv2d(x, w, None, 1, 0, (1, 1, 1))
    with pytest.raises(RuntimeError, match="expected output_padding to be a single integer value or a list of 2"):
        ea.convolution(x, t(arr(4, 3, 3, 3)), None, (1,), (0,), (1,), True, (0, 0, 0), 1)
    with pytest.raises(
        RuntimeError,
        match=r"Expected 2D \(unbatched\) or 3D \(batched\) input to conv1d, but got "
        r"input of size: \[1, 2, 3, 4\]",
    ):
        ea.conv1d(t(arr(1, 2, 3, 4)), t(arr(2, 2, 2)))
    with pytest.raises(RuntimeError, match=r"Expected 4D \(unbatched\) or 5D \(batched\) input to conv3d"):
        ea.conv3d(t(arr(1, 2, 3)), t(arr(2, 2, 2, 2, 2)))
    with pytest.raises(
        RuntimeError,
        match="output padding must be smaller than either stride or dilation, but got "
        "output_padding_height: 0 output_padding_width: 2 stride_height: 1 stride_width: 2",
    ):
        ea.conv_transpose1d(t(arr(1, 2, 5)), t(arr(2, 3, 3)), None, 2, 0, 2)
    with pytest.raises(
        RuntimeError, match="output_padding_depth: 2 output_padding_height: 2 output_padding_width: 2 stride_depth: 2"
    ):
        ea.conv_transpose3d(t(arr(1, 2, 3, 3, 3)), t(arr(2, 3, 3, 3, 3)), None, 2, 0, 2)
    with pytest.raises(TypeError):
        ea.conv_transpose2d(x, t(arr(4, 3, 3, 3)), None, 1, "same")
    with pytest.raises(NotImplementedError, match="convolution: not implemented for dtype bool"):
        ea.conv2d(x.to(ea.bool), w.to(ea.bool))
    with pytest.raises(RuntimeError, match=r"Input type \(int\) and weight type \(long int\) should be the same"):
        ea.conv2d(x.to(ea.int32), w.to(ea.int64))


INTEGER_DTYPES = [(ea.uint8, np.uint8), (ea.int8, np.int8), (ea.int16, np.int16), (ea.int32, np.int32)]
INTEGER_DTYPES += [(ea.int64, np.int64)]


def _ints(rng: np.random.Generator, shape: tuple[int, ...], unsigned: bool, high: int = 4) -> np.ndarray:
    return rng.integers(0 if unsigned else -high, high, size=shape)


@pytest.mark.parametrize(("dtype", "np_dtype"), INTEGER_DTYPES, ids=str)
def test_integer_convolutions(dtype: Any, np_dtype: Any) -> None:
    """PyTorch convolves integer tensors on the CPU (its slow path): exact sums in the dtype,
    wrapping on overflow. References in float64 (exact for these sizes), cast to the dtype."""
    rng = np.random.default_rng(7)
    unsigned = np_dtype == np.uint8

    def check(got: Any, expected: np.ndarray) -> None:
        assert got.dtype == dtype
        np.testing.assert_array_equal(got.numpy(), expected.astype(np.int64).astype(np_dtype))

    x, w, b = _ints(rng, (2, 4, 6, 5), unsigned), _ints(rng, (6, 2, 3, 2), unsigned), _ints(rng, (6,), unsigned)
    as_t = lambda a: ea.tensor(a.astype(np_dtype))  # noqa: E731
    check(ea.conv2d(as_t(x), as_t(w), as_t(b), 2, 1, 1, 2), ref_conv(x, w, b, 2, 1, 1, 2))
    check(ea.conv2d(as_t(x), as_t(w[:, :, :2]), None, 1, (0, 1), 2, 2), ref_conv(x, w[:, :, :2], None, 1, (0, 1), 2, 2))
    x1, w1 = _ints(rng, (1, 3, 7), unsigned), _ints(rng, (2, 3, 3), unsigned)
    check(ea.conv1d(as_t(x1), as_t(w1), None, 2, 1), ref_conv(x1, w1, None, 2, 1))
    x3, w3 = _ints(rng, (1, 2, 3, 4, 3), unsigned), _ints(rng, (2, 2, 2, 2, 2), unsigned)
    check(ea.conv3d(as_t(x3), as_t(w3), None, 1, 1), ref_conv(x3, w3, None, 1, 1))
    # transposed: weight (C_in, C_out / groups, k...), groups, output_padding, bias
    xt, wt, bt = _ints(rng, (2, 4, 3, 3), unsigned), _ints(rng, (4, 3, 2, 3), unsigned), _ints(rng, (6,), unsigned)
    check(
        ea.conv_transpose2d(as_t(xt), as_t(wt), as_t(bt), 2, 1, 1, 2),
        ref_conv_transpose(xt, wt, bt, 2, 1, 1, 2),
    )
    # wrapping: sums past the dtype's range wrap as two's complement (as PyTorch's GEMM)
    v = 100 if np_dtype != np.int64 else 2**62
    bits = np.iinfo(np_dtype).bits
    total = 9 * v
    wrapped = total % 2**bits if unsigned else (total + 2 ** (bits - 1)) % 2**bits - 2 ** (bits - 1)
    got = ea.conv2d(as_t(np.full((1, 1, 3, 3), v)), as_t(np.ones((1, 1, 3, 3), np.int64)))
    assert got.dtype == dtype and got.numpy().reshape(-1).tolist() == [wrapped]


@pytest.mark.cuda
def test_integer_convolutions_are_refused_on_cuda() -> None:
    x, w = ea.ones(1, 1, 3, 3, dtype=ea.int64, device="cuda"), ea.ones(1, 1, 2, 2, dtype=ea.int64, device="cuda")
    with pytest.raises(NotImplementedError, match="integer convolutions run on the CPU only"):
        ea.conv2d(x, w)


def test_empty_convolutions() -> None:
    out = ea.conv2d(t(arr(0, 4, 5, 5)), t(arr(6, 2, 3, 3)), t(arr(6)), groups=2)
    assert tuple(out.shape) == (0, 6, 3, 3)
    b = arr(3)
    out = ea.conv2d(t(arr(2, 0, 4, 4)), t(arr(3, 0, 3, 3)), t(b))
    close(out, np.broadcast_to(b.reshape(1, 3, 1, 1), (2, 3, 2, 2)))  # only the bias
    out = ea.conv_transpose2d(t(arr(0, 2, 5, 5)), t(arr(2, 3, 3, 3)))
    assert tuple(out.shape) == (0, 3, 7, 7)
    with pytest.raises(RuntimeError, match=r"Calculated padded input size per channel: \(0 x 5\)"):
        ea.conv2d(t(arr(2, 4, 0, 5)), t(arr(6, 2, 3, 3)), groups=2)


def test_output_shapes_follow_pytorch() -> None:
    # shapes measured with PyTorch 2.13
    assert tuple(ea.conv2d(t(arr(2, 4, 5, 5)), t(arr(6, 2, 3, 3)), padding="valid", groups=2).shape) == (2, 6, 3, 3)
    assert tuple(
        ea.conv_transpose2d(t(arr(2, 4, 5, 5)), t(arr(4, 3, 3, 3)), stride=2, output_padding=1, groups=2).shape
    ) == (2, 6, 12, 12)
    assert tuple(
        ea.conv_transpose2d(t(arr(1, 2, 5, 5)), t(arr(2, 3, 3, 3)), stride=1, dilation=3, output_padding=2).shape
    ) == (1, 3, 13, 13)
    assert tuple(ea.conv1d(t(arr(1, 2, 2)), t(arr(3, 2, 5)), padding="same").shape) == (1, 3, 2)


# ---- unfold / fold ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "k", "d", "p", "s"),
    [((2, 3, 7, 6), 3, 1, 1, 2), ((1, 2, 5, 8), (2, 3), (2, 1), (0, 2), (1, 3)), ((3, 4, 4), 2, 1, 0, 1)],
)
def test_unfold_fold(shape: tuple[int, ...], k: Any, d: Any, p: Any, s: Any) -> None:
    x = arr(*shape)
    cols = ea.nn.unfold(t(x), k, d, p, s)
    close(cols, ref_im2col(x, k, d, p, s))
    size = shape[-2:]
    close(ea.nn.fold(cols, size, k, d, p, s), ref_col2im(ref_im2col(x, k, d, p, s), size, k, d, p, s))
    # fold(unfold(x)) multiplies every element by the number of blocks covering it
    ones = np.ones(shape)
    counts = ref_col2im(ref_im2col(ones, k, d, p, s), size, k, d, p, s)
    close(ea.nn.fold(ea.nn.unfold(t(x), k, d, p, s), size, k, d, p, s), x * counts)
    # float32 and the int-or-tuple arguments of nn.functional
    close(
        ea.nn.unfold(t(x, ea.float32), kernel_size=k, dilation=d, padding=p, stride=s), ref_im2col(x, k, d, p, s), 1e-6
    )


def test_nn_front_ends_are_pytorchs() -> None:
    assert ea.nn.conv2d is ea.conv2d and ea.nn.conv_transpose1d is ea.conv_transpose1d
    assert ea.nn.im2col is not ea.nn.unfold  # unfold is nn.functional's wrapper of im2col
    assert not hasattr(ea.Tensor, "conv2d")
