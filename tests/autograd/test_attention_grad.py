"""Gradients of attention, padding, upsampling and grid sampling (derivatives.yaml, section
"attention, padding, upsampling, grid sampling") beyond the OpInfo samples: the fused
attention's backward operator over several blocks and grouped-query heads, the math path
(mask gradients, dropout, second derivatives), node names, and what has no double backward."""

from __future__ import annotations

from typing import Any

import ember.aten as ea
import numpy as np
import pytest
from ember.autograd import grad, gradcheck, gradgradcheck
from helpers import rand


def R(*shape: int, seed: int = 0) -> Any:
    return rand(*shape, requires_grad=True, seed=seed)


SDPA = ea.nn.scaled_dot_product_attention


def test_fused_node_name_and_gradients_match_the_math_path() -> None:
    q, k, v = R(2, 4, 70, 8, seed=1), R(2, 2, 67, 8, seed=2), R(2, 2, 67, 4, seed=3)
    mask = ea.from_numpy(np.random.default_rng(4).standard_normal((70, 67)))
    out = SDPA(q, k, v, mask, enable_gqa=True)
    assert type(out.grad_fn).__name__ == "ScaledDotProductFlashAttentionForCpuBackward0"
    g = ea.from_numpy(np.random.default_rng(5).standard_normal(tuple(out.shape)))
    fused = grad(out, (q, k, v), g)
    ref_out, _ = ea._scaled_dot_product_attention_math(q, k, v, mask, 0.0, False, enable_gqa=True)
    assert "Flash" not in type(ref_out.grad_fn).__name__
    expected = grad(ref_out, (q, k, v), g)
    for a, b in zip(fused, expected, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-10, rtol=1e-9)


@pytest.mark.parametrize("causal", [False, True])
def test_fused_gradcheck_causal_grouped(causal: bool) -> None:
    q, k, v = R(1, 2, 3, 2, seed=6), R(1, 1, 4, 2, seed=7), R(1, 1, 4, 3, seed=8)
    assert gradcheck(lambda a, b, c: SDPA(a, b, c, is_causal=causal, enable_gqa=True), (q, k, v))


@pytest.mark.parametrize(("L", "S"), [(9, 11), (13, 7), (1, 3)])
def test_fused_gradcheck_causal_strips(L: int, S: int) -> None:
    # row counts and widths off the kernel's strips (6 / 4 / 1 rows) and vectors
    q, k, v = R(1, 4, L, 3, seed=20), R(1, 2, S, 3, seed=21), R(1, 2, S, 5, seed=22)
    out = SDPA(q, k, v, is_causal=True, enable_gqa=True)
    assert type(out.grad_fn).__name__ == "ScaledDotProductFlashAttentionForCpuBackward0"
    assert gradcheck(lambda a, b, c: SDPA(a, b, c, is_causal=True, enable_gqa=True), (q, k, v))


def test_math_path_row_with_every_key_masked_has_zero_gradient() -> None:
    q, k, v = R(1, 2, 3, 2, seed=23), R(1, 2, 4, 2, seed=24), R(1, 2, 4, 3, seed=25)
    allowed = np.ones((3, 4), dtype=bool)
    allowed[1] = False
    mask = ea.from_numpy(allowed)
    keep = ea.from_numpy(np.random.default_rng(26).uniform(size=(1, 2, 3, 4)) > 0.3)

    def f(a: Any, b: Any, c: Any) -> Any:
        return ea._scaled_dot_product_attention_math(a, b, c, mask, 0.3, False, keep)[0]

    assert gradcheck(f, (q, k, v))
    assert gradgradcheck(f, (q, k, v))
    (gq,) = grad(f(q, k, v).sum(), (q,))
    assert (gq.numpy()[:, :, 1] == 0).all() and np.isfinite(gq.numpy()).all()


def test_math_path_gradients_reach_the_mask_and_have_second_derivatives() -> None:
    q, k, v, m = R(1, 2, 3, 2, seed=9), R(1, 2, 4, 2, seed=10), R(1, 2, 4, 2, seed=11), R(3, 4, seed=12)
    out = SDPA(q, k, v, m)
    assert "Flash" not in type(out.grad_fn).__name__  # a mask that requires grad takes the math path
    assert gradcheck(lambda *a: SDPA(*a), (q, k, v, m))
    assert gradgradcheck(lambda *a: SDPA(*a), (q, k, v, m))


def test_dropout_gradient_follows_the_drawn_mask() -> None:
    q, k, v = R(1, 1, 3, 2, seed=13), R(1, 1, 4, 2, seed=14), R(1, 1, 4, 2, seed=15)
    keep = ea.rand(1, 1, 3, 4) > 0.3

    def f(a: Any, b: Any, c: Any) -> Any:
        return ea._scaled_dot_product_attention_math(a, b, c, None, 0.3, False, keep)[0]

    assert gradcheck(f, (q, k, v))
    ea.manual_seed(0)
    out = SDPA(q, k, v, dropout_p=0.5)
    out.sum().backward()
    assert q.grad is not None and np.isfinite(q.grad.numpy()).all()


def test_fused_backward_has_no_double_backward() -> None:
    q, k, v = R(1, 1, 3, 2, seed=16), R(1, 1, 3, 2, seed=17), R(1, 1, 3, 2, seed=18)
    (gq,) = grad(SDPA(q, k, v).sum(), (q,), create_graph=True)
    with pytest.raises(NotImplementedError, match="_scaled_dot_product_flash_attention_for_cpu_backward"):
        grad(gq.sum(), (q,))


def test_padding_and_upsampling_node_names() -> None:
    x = R(1, 2, 4, 4, seed=19)
    assert type(ea.nn.pad(x, (1, 2, 1, 0), "reflect").grad_fn).__name__ == "ReflectionPad2DBackward0"
    assert type(ea.nn.pad(x, (1, 1, 1, 1), "replicate").grad_fn).__name__ == "ReplicationPad2DBackward0"
    up = ea.nn.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)
    assert type(up.grad_fn).__name__ == "UpsampleBilinear2DBackward0"
    assert type(ea.nn.interpolate(x, size=(5, 7)).grad_fn).__name__ == "UpsampleNearest2DBackward0"


def test_grid_sample_gradients() -> None:
    x = R(1, 2, 3, 4, seed=20)
    g = (rand(1, 2, 3, 2, seed=21) * 1.6 - 0.8).detach().requires_grad_(True)
    for mode in ("bilinear", "nearest", "bicubic"):
        for padding in ("zeros", "border", "reflection"):
            for align_corners in (True, False):

                def f(a: Any, b: Any, mode: str = mode, padding: str = padding, ac: bool = align_corners) -> Any:
                    return ea.nn.grid_sample(a, b, mode, padding, align_corners=ac)

                assert gradcheck(f, (x, g)), (mode, padding, align_corners)
    out = ea.nn.grid_sample(x, g, align_corners=False)
    assert type(out.grad_fn).__name__ == "GridSampler2DBackward0"
    theta = R(1, 2, 3, seed=22)
    assert gradcheck(lambda th: ea.nn.affine_grid(th, (1, 1, 2, 3), align_corners=False), (theta,))
    assert gradgradcheck(lambda th: ea.nn.affine_grid(th, (1, 1, 2, 3), align_corners=False), (theta,))


def test_pixel_shuffle_gradients() -> None:
    x = R(1, 8, 2, 3, seed=23)
    assert gradcheck(lambda a: ea.nn.pixel_shuffle(a, 2), (x,))
    assert gradgradcheck(lambda a: ea.nn.pixel_unshuffle(ea.nn.pixel_shuffle(a, 2), 2) * a, (x,))


def test_broadcast_batch_single_kv_head_and_3d_inputs_take_the_fused_kernel() -> None:
    q, k, v = R(2, 4, 5, 3, seed=24), R(1, 1, 6, 3, seed=25), R(1, 1, 6, 2, seed=26)
    out = SDPA(q, k, v, is_causal=True)
    assert type(out.grad_fn).__name__ == "ScaledDotProductFlashAttentionForCpuBackward0"
    ref, _ = ea._scaled_dot_product_attention_math(q, k, v, None, 0.0, True)
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), atol=1e-12)
    g = ea.from_numpy(np.random.default_rng(27).standard_normal((2, 4, 5, 2)))
    for a, b in zip(grad(out, (q, k, v), g), grad(ref, (q, k, v), g), strict=True):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-10)
    q3, k3, v3 = R(2, 3, 2, seed=28), R(2, 4, 2, seed=29), R(2, 4, 3, seed=30)
    mask = ea.from_numpy(np.random.default_rng(31).standard_normal((2, 3, 4)))
    out3 = SDPA(q3, k3, v3, mask)
    assert tuple(out3.shape) == (2, 3, 3)
    assert type(out3.grad_fn.next_functions[0][0]).__name__ == "ScaledDotProductFlashAttentionForCpuBackward0"
    ref3, _ = ea._scaled_dot_product_attention_math(q3, k3, v3, mask)
    np.testing.assert_allclose(out3.detach().numpy(), ref3.detach().numpy(), atol=1e-12)
    assert gradcheck(lambda a, b, c: SDPA(a, b, c, mask), (q3, k3, v3))
