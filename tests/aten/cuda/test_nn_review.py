"""CUDA checks from the review of the nn kernels (CUDABlas.cpp, ConvolutionCUDA.cpp and the
nn .cu files) against the CPU kernels: the operand layouts every cuBLAS call must be
told about, float32 sums of half-type convolution gradients, and empty inputs through
every kernel (a launch with zero blocks is a CUDA error). The comparisons need a GPU; the
CPU half of each empty-input case runs everywhere, so the cases themselves stay valid."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ember.aten as ea
import ember.c10py
import numpy as np
import pytest

requires_cuda = pytest.mark.skipif(not ember.c10py.cuda.is_available(), reason="needs a CUDA GPU")
RNG = np.random.default_rng(17)


def rand(*shape: int, dtype: Any = ea.float32) -> Any:
    return ea.from_numpy(RNG.standard_normal(shape)).to(dtype)


def N(t: Any) -> np.ndarray:
    t = t.to("cpu")
    return t.double().numpy() if t.dtype != ea.float64 else t.numpy()


def close(got: Any, want: Any, tol: float) -> None:
    assert got.device.type == "cuda"
    assert got.dtype == want.dtype and tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(N(got), N(want), rtol=tol, atol=tol)


# ---- cuBLAS operand layouts (the host emulation checks the same in test_blas_emulation.py) ----


def layouts(device: str) -> list[tuple[Any, Any]]:
    B, m, k, n = 3, 5, 4, 7
    g = np.random.default_rng(3)

    def r(*shape: int) -> Any:
        return ea.from_numpy(g.standard_normal(shape)).to(ea.float32).to(device)

    return [
        (r(B, k, m).transpose(1, 2), r(B, n, k).transpose(1, 2)),  # both transposed
        (r(B, m, k + 3)[:, :, 1 : k + 1], r(B, k, n + 2)[:, :, :n]),  # leading dimension > columns
        (r(B, k + 2, m + 3)[:, 1 : k + 1, 2 : m + 2].transpose(1, 2), r(B, k, n)),  # sliced and transposed
        (r(B, m, 1), r(B, 1, n)),  # k == 1
        (r(1, m, k).expand(B, m, k), r(B, k, n)),  # stride-0 batch
        (r(B, 2 * m, k)[:, ::2, :], r(B, k, n)),  # neither layout: copied
    ]


@requires_cuda
@pytest.mark.parametrize("case", range(6))
def test_bmm_and_baddbmm_operand_layouts_match_cpu(case: int) -> None:
    a, b = layouts("cpu")[case]
    ga, gb = layouts("cuda")[case]
    close(ea.bmm(ga, gb), ea.bmm(a, b), 1e-5)
    c = rand(a.shape[0], a.shape[1], b.shape[2])
    close(ea.baddbmm(c.to("cuda"), ga, gb, beta=0.5, alpha=-2.0), ea.baddbmm(c, a, b, beta=0.5, alpha=-2.0), 1e-5)
    out = ea.empty((a.shape[0], b.shape[2], a.shape[1]), device="cuda").transpose(1, 2)  # column-major result
    ea.bmm(ga, gb, out=out)
    close(out, ea.bmm(a, b), 1e-5)
    close(ea.mm(ga[1], gb[2]), ea.mm(a[1], b[2]), 1e-5)


@requires_cuda
@pytest.mark.parametrize("dtype", [ea.bfloat16, ea.float16], ids=str)
def test_half_convolution_gradients_sum_in_float32(dtype: Any) -> None:
    # weight / bias gradients summed over 64 images: rounded once, as the CPU kernel
    x = (rand(64, 8, 6, 6) + 1.0).to(dtype)
    w = rand(6, 8, 3, 3).to(dtype)
    rest = [[1, 1], [1, 1], [1, 1], False, [0, 0], 1]
    g = (rand(64, 6, 6, 6) + 1.0).to(dtype)
    want = ea.convolution_backward(g, x, w, [6], *rest, [False, True, True])
    got = ea.convolution_backward(g.to("cuda"), x.to("cuda"), w.to("cuda"), [6], *rest, [False, True, True])
    eps = 2.0**-8 if dtype == ea.bfloat16 else 2.0**-11
    for gt, wt in zip(got[1:], want[1:], strict=True):
        assert gt.dtype == dtype
        np.testing.assert_allclose(N(gt), N(wt), rtol=4 * eps, atol=1e-3)


# ---- empty inputs through every kernel ---------------------------------------------------------


def empty_cases() -> list[tuple[str, Callable[[str], list[Any]]]]:
    def softmax(d: str) -> list[Any]:
        x = ea.empty((0, 5), device=d)
        y = ea._log_softmax(x, 1, False)
        return [
            y,
            ea._log_softmax_backward_data(x, y, 1, ea.float32),
            ea._softmax(ea.empty((4, 0), device=d), 1, False),
        ]

    def layer_norm(d: str) -> list[Any]:
        x = ea.empty((0, 6), device=d)
        out, mean, rstd = ea.native_layer_norm(x, [6], ea.ones(6, device=d), ea.zeros(6, device=d), 1e-5)
        back = ea.native_layer_norm_backward(x, x, [6], mean, rstd, ea.ones(6, device=d), None, [True, True, False])
        return [out, mean, rstd, back[0], back[1], ea._fused_rms_norm(x, [6], None, None)[0]]

    def group_norm(d: str) -> list[Any]:
        x = ea.empty((0, 4, 3), device=d)
        out, mean, rstd = ea.native_group_norm(x, None, None, 0, 4, 3, 2, 1e-5)
        return [out, mean, rstd, *ea.native_group_norm_backward(x, x, mean, rstd, None, 0, 4, 3, 2, [True, True, True])]

    def losses(d: str) -> list[Any]:
        x, t = ea.empty((0, 3), device=d), ea.empty((0,), dtype=ea.int64, device=d)
        out = [*ea.nn.nll_loss_forward(x, t, None, 0, -100), ea.nn.nll_loss_forward(x, t, None, 2, -100)[0]]
        out.append(ea.nn.nll_loss_backward(ea.empty((0,), device=d), x, t, None, 0, -100, out[1]))
        out.append(ea.nn.mse_loss(ea.empty((0, 2), device=d), ea.empty((0, 2), device=d), 2))
        return out

    def embedding(d: str) -> list[Any]:
        w = rand(5, 3).to(d)
        idx = ea.empty((0, 2), dtype=ea.int64, device=d)
        return [ea.embedding(w, idx), ea.embedding_dense_backward(ea.empty((0, 2, 3), device=d), idx, 5, -1, False)]

    def dropout(d: str) -> list[Any]:
        out, mask = ea.native_dropout(ea.empty((0, 4), device=d), 0.5, True)
        return [out, mask, ea.native_dropout_backward(out, mask, 2.0)]

    def conv_pool(d: str) -> list[Any]:
        x, w = ea.empty((0, 2, 5, 5), device=d), rand(3, 2, 3, 3).to(d)
        y = ea.convolution(x, w, ea.zeros(3, device=d), [1, 1], [1, 1], [1, 1], False, [0, 0], 1)
        grads = ea.convolution_backward(y, x, w, [3], [1, 1], [1, 1], [1, 1], False, [0, 0], 1, [True, True, True])
        out, idx = ea.nn.max_pool2d_with_indices(x, [2, 2], [2, 2], [0, 0], [1, 1], False)
        return [y, *grads, out, idx, ea.nn.avg_pool2d(x, [2, 2], [2, 2], [0, 0], False, True, None)]

    def sdpa(d: str) -> list[Any]:
        q, k = ea.empty((1, 2, 0, 4), device=d), rand(1, 2, 3, 4).to(d)
        out, lse = ea._scaled_dot_product_flash_attention_for_cpu(q, k, k, 0.0, False)
        k0 = ea.empty((1, 2, 0, 4), device=d)  # no keys: zeros and -inf
        out0, lse0 = ea._scaled_dot_product_flash_attention_for_cpu(rand(1, 2, 3, 4).to(d), k0, k0, 0.0, False)
        return [out, lse, out0, lse0]

    return [
        ("softmax", softmax),
        ("layer_norm", layer_norm),
        ("group_norm", group_norm),
        ("losses", losses),
        ("embedding", embedding),
        ("dropout", dropout),
        ("conv_pool", conv_pool),
        ("sdpa", sdpa),
    ]


EMPTY = empty_cases()


@pytest.mark.parametrize(("name", "fn"), EMPTY, ids=[c[0] for c in EMPTY])
def test_empty_inputs_cpu_reference(name: str, fn: Callable[[str], list[Any]]) -> None:
    for r in fn("cpu"):
        assert r is None or r.device.type == "cpu"


@requires_cuda
@pytest.mark.parametrize(("name", "fn"), EMPTY, ids=[c[0] for c in EMPTY])
def test_empty_inputs_match_cpu_on_cuda(name: str, fn: Callable[[str], list[Any]]) -> None:
    want = fn("cpu")
    got = fn("cuda")
    ember.aten.cuda.synchronize()
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        if w is None:
            assert g is None
            continue
        assert g.device.type == "cuda" and g.dtype == w.dtype and tuple(g.shape) == tuple(w.shape)
        np.testing.assert_array_equal(N(g), N(w))


# ---- ctc_loss with a target equal to the blank -----------------------------------------------------


@requires_cuda
@pytest.mark.parametrize("blank", [0, 2])
def test_ctc_loss_backward_target_equal_to_blank_matches_cpu(blank: int) -> None:
    # a target symbol may equal the blank value (PyTorch does not forbid it): its odd
    # positions count for the blank's gradient too, as in the CPU kernel
    lp = ea.log_softmax(rand(10, 2, 4, dtype=ea.float64), 2)
    targets = ea.tensor([[1, blank, 3], [blank, blank, 1]], dtype=ea.int64)
    il, tl = [10, 9], [3, 3]
    nll_c, alpha_c = ea._ctc_loss(lp, targets, il, tl, blank, False)
    nll_g, alpha_g = ea._ctc_loss(lp.to("cuda"), targets.to("cuda"), il, tl, blank, False)
    close(nll_g, nll_c, 1e-10)
    go = ea.tensor([0.6, 1.3], dtype=ea.float64)
    gc = ea._ctc_loss_backward(go, lp, targets, il, tl, nll_c, alpha_c, blank, False)
    gg = ea._ctc_loss_backward(go.to("cuda"), lp.to("cuda"), targets.to("cuda"), il, tl, nll_g, alpha_g, blank, False)
    close(gg, gc, 1e-10)
