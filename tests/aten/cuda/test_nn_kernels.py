"""CUDA kernels of softmax, normalization, losses, embedding and dropout (csrc/native/cuda/
SoftMax.cu, Normalization.cu, Loss.cu, LossCTC.cu, Embedding.cu, Dropout.cu) against the CPU
kernels on the same inputs. The comparisons need a GPU and skip without one; the stub test
runs on any CUDA build."""

from __future__ import annotations

from typing import Any

import ember.aten as ea
import ember.c10py
import numpy as np
import pytest

requires_cuda = pytest.mark.skipif(not ember.c10py.cuda.is_available(), reason="needs a CUDA GPU")

# the DispatchStubs whose CUDA kernels this area registers
NN_CUDA_STUBS = [
    "softmax_stub",
    "softmax_backward_stub",
    "row_norm_stub",
    "row_norm_backward_stub",
    "loss_sum_stub",
    "pointwise_loss_stub",
]


@pytest.mark.skipif(not ea._C._built_with_cuda, reason="a CPU-only build has no CUDA kernels")
def test_nn_stubs_have_cuda_kernels() -> None:
    stubs = dict(ea._C._dispatch_stubs())
    missing = [name for name in NN_CUDA_STUBS if not stubs.get(name, False)]
    assert missing == []


def test_nn_stub_names_are_registered() -> None:
    stubs = dict(ea._C._dispatch_stubs())
    assert [name for name in NN_CUDA_STUBS if name not in stubs] == []


FLOATS = [ea.float32, ea.float64, ea.float16, ea.bfloat16]
TOL = {ea.float32: 1e-5, ea.float64: 1e-12, ea.float16: 2e-3, ea.bfloat16: 2e-2}


def arr(*shape: int, seed: int = 0, low: float = -2.0, high: float = 2.0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(low, high, size=shape)


def t(a: Any, dtype: Any = ea.float32) -> Any:
    return ea.tensor(np.asarray(a), dtype=dtype)


def to_np(x: Any) -> np.ndarray:
    x = x.cpu()
    if x.dtype in (ea.float16, ea.bfloat16):
        x = x.float()
    return x.numpy()


def same(gpu: Any, cpu: Any, dtype: Any = ea.float64, tol: float | None = None) -> None:
    """A CUDA result equals the CPU kernel's within the dtype's tolerance (and keeps its dtype)."""
    assert gpu.is_cuda and gpu.dtype == cpu.dtype and tuple(gpu.shape) == tuple(cpu.shape)
    r = TOL[dtype] if tol is None else tol
    np.testing.assert_allclose(to_np(gpu), to_np(cpu), rtol=r, atol=r)


# ---- softmax ---------------------------------------------------------------------------------


@requires_cuda
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape,dim", [((7, 33), 1), ((3, 1000), -1), ((4, 5, 6), 1), ((4, 5, 6), 0), ((), 0)])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_matches_cpu(dtype: Any, shape: tuple[int, ...], dim: int, log: bool) -> None:
    x = t(arr(*shape) * 5, dtype)
    fwd = ea._log_softmax if log else ea._softmax
    back = ea._log_softmax_backward_data if log else ea._softmax_backward_data
    y_cpu, y_gpu = fwd(x, dim, False), fwd(x.cuda(), dim, False)
    same(y_gpu, y_cpu, dtype)
    go = t(arr(*shape, seed=1), dtype)
    same(back(go.cuda(), y_gpu, dim, dtype), back(go, y_cpu, dim, dtype), dtype, tol=TOL[dtype] * 10)


@requires_cuda
def test_softmax_extreme_rows_on_cuda() -> None:
    x = t([[1e4, -1e4, 0.0, 1e4], [-1e4, -1e4, -1e4, -1e4], [0.0, float("nan"), 1.0, 2.0]]).cuda()
    s = to_np(ea._softmax(x, 1, False))
    np.testing.assert_allclose(s[0], [0.5, 0.0, 0.0, 0.5])
    np.testing.assert_allclose(s[1], [0.25] * 4)
    assert np.isnan(s[2]).all()
    np.testing.assert_allclose(to_np(ea._log_softmax(x, 1, False))[1], [-np.log(4)] * 4, rtol=1e-6)


@requires_cuda
def test_softmax_half_to_float_on_cuda() -> None:
    x = t(arr(4, 9), ea.float16)
    y = ea._softmax(x.cuda(), 1, True)
    assert y.dtype == ea.float32
    np.testing.assert_allclose(to_np(y), to_np(ea._softmax(x.float(), 1, False)), rtol=1e-5, atol=1e-6)
    g = ea._softmax_backward_data(t(arr(4, 9, seed=2)).cuda(), y, 1, ea.float16)
    assert g.dtype == ea.float16
    with pytest.raises(RuntimeError, match="Half type only"):
        ea._softmax(x.float().cuda(), 1, True)


def test_softmax_half_to_float_is_refused_on_cpu() -> None:
    with pytest.raises(RuntimeError, match="not supported on CPU"):
        ea._softmax(t(arr(2, 3), ea.float16), 1, True)


# ---- normalization -----------------------------------------------------------------------------


def params_dtype(dtype: Any) -> Any:
    return ea.float32 if dtype in (ea.float16, ea.bfloat16) else dtype


@requires_cuda
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("affine", [False, True])
def test_layer_norm_matches_cpu(dtype: Any, affine: bool) -> None:
    pt = params_dtype(dtype)
    x, go = t(arr(6, 5, 40), dtype), t(arr(6, 5, 40, seed=1), dtype)
    w = t(arr(5, 40, seed=2), pt) if affine else None
    b = t(arr(5, 40, seed=3), pt) if affine else None
    wc, bc = (w.cuda(), b.cuda()) if affine else (None, None)
    cpu = ea.native_layer_norm(x, [5, 40], w, b, 1e-5)
    gpu = ea.native_layer_norm(x.cuda(), [5, 40], wc, bc, 1e-5)
    for g_, c_ in zip(gpu, cpu, strict=True):
        same(g_, c_, dtype)
    mask = [True, affine, affine]
    bc_ = ea.native_layer_norm_backward(go, x, [5, 40], cpu[1], cpu[2], w, b, mask)
    bg_ = ea.native_layer_norm_backward(go.cuda(), x.cuda(), [5, 40], gpu[1], gpu[2], wc, bc, mask)
    for g_, c_ in zip(bg_, bc_, strict=True):
        if c_ is not None:
            same(g_, c_, dtype, tol=TOL[dtype] * 10)


@requires_cuda
@pytest.mark.parametrize("dtype", FLOATS)
def test_rms_norm_matches_cpu(dtype: Any) -> None:
    pt = params_dtype(dtype)
    x, go, w = t(arr(7, 300), dtype), t(arr(7, 300, seed=1), dtype), t(arr(300, seed=2), pt)
    out_c, rstd_c = ea._fused_rms_norm(x, [300], w, None)
    out_g, rstd_g = ea._fused_rms_norm(x.cuda(), [300], w.cuda(), None)
    same(out_g, out_c, dtype)
    same(rstd_g, rstd_c, dtype)
    gc = ea._fused_rms_norm_backward(go, x, [300], rstd_c, w, [True, True])
    gg = ea._fused_rms_norm_backward(go.cuda(), x.cuda(), [300], rstd_g, w.cuda(), [True, True])
    same(gg[0], gc[0], dtype, tol=TOL[dtype] * 10)
    same(gg[1], gc[1], pt, tol=TOL[dtype] * 10)


@requires_cuda
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_matches_cpu(dtype: Any, training: bool) -> None:
    pt = params_dtype(dtype)
    x, go = t(arr(4, 3, 5, 6) + 1.5, dtype), t(arr(4, 3, 5, 6, seed=1), dtype)
    w, b = t(arr(3, seed=2), pt), t(arr(3, seed=3), pt)
    rm_c, rv_c = t(arr(3, seed=4), pt), t(arr(3, seed=5, low=0.5, high=2.0), pt)
    rm_g, rv_g = rm_c.cuda(), rv_c.cuda()
    cpu = ea.native_batch_norm(x, w, b, rm_c, rv_c, training, 0.1, 1e-5)
    gpu = ea.native_batch_norm(x.cuda(), w.cuda(), b.cuda(), rm_g, rv_g, training, 0.1, 1e-5)
    same(gpu[0], cpu[0], dtype)
    same(gpu[1], cpu[1], pt)
    same(gpu[2], cpu[2], pt)
    same(rm_g, rm_c, pt)  # the running statistics are updated in place on the device
    same(rv_g, rv_c, pt)
    gc = ea.native_batch_norm_backward(go, x, w, rm_c, rv_c, cpu[1], cpu[2], training, 1e-5, [True, True, True])
    gg = ea.native_batch_norm_backward(
        go.cuda(), x.cuda(), w.cuda(), rm_g, rv_g, gpu[1], gpu[2], training, 1e-5, [True, True, True]
    )
    same(gg[0], gc[0], dtype, tol=TOL[dtype] * 10)
    same(gg[1], gc[1], pt, tol=TOL[dtype] * 10)
    same(gg[2], gc[2], pt, tol=TOL[dtype] * 10)


@requires_cuda
@pytest.mark.parametrize("dtype", FLOATS)
def test_group_norm_matches_cpu(dtype: Any) -> None:
    pt = params_dtype(dtype)
    x, go = t(arr(3, 6, 4, 5), dtype), t(arr(3, 6, 4, 5, seed=1), dtype)
    w, b = t(arr(6, seed=2), pt), t(arr(6, seed=3), pt)
    cpu = ea.native_group_norm(x, w, b, 3, 6, 20, 2, 1e-5)
    gpu = ea.native_group_norm(x.cuda(), w.cuda(), b.cuda(), 3, 6, 20, 2, 1e-5)
    for g_, c_ in zip(gpu, cpu, strict=True):
        same(g_, c_, dtype if g_ is gpu[0] else pt)
    gc = ea.native_group_norm_backward(go, x, cpu[1], cpu[2], w, 3, 6, 20, 2, [True, True, True])
    gg = ea.native_group_norm_backward(go.cuda(), x.cuda(), gpu[1], gpu[2], w.cuda(), 3, 6, 20, 2, [True, True, True])
    same(gg[0], gc[0], dtype, tol=TOL[dtype] * 10)
    same(gg[1], gc[1], pt, tol=TOL[dtype] * 10)
    same(gg[2], gc[2], pt, tol=TOL[dtype] * 10)


# ---- pointwise losses -------------------------------------------------------------------------------

_LOSSES = {
    "mse": (lambda x, y, r: ea.nn.mse_loss(x, y, r), lambda g, x, y, r: ea.nn.mse_loss_backward(g, x, y, r)),
    "smooth_l1": (
        lambda x, y, r: ea.nn.smooth_l1_loss(x, y, r, 0.7),
        lambda g, x, y, r: ea.nn.smooth_l1_loss_backward(g, x, y, r, 0.7),
    ),
    "huber": (
        lambda x, y, r: ea.nn.huber_loss(x, y, r, 0.6),
        lambda g, x, y, r: ea.nn.huber_loss_backward(g, x, y, r, 0.6),
    ),
    "soft_margin": (
        lambda x, y, r: ea.nn.soft_margin_loss(x, y.sign(), r),
        lambda g, x, y, r: ea.nn.soft_margin_loss_backward(g, x, y.sign(), r),
    ),
    "bce": (
        lambda x, y, r: ea.nn.binary_cross_entropy(x.sigmoid(), (y + 2) / 4, None, r),
        lambda g, x, y, r: ea.nn.binary_cross_entropy_backward(g, x.sigmoid(), (y + 2) / 4, None, r),
    ),
}


@requires_cuda
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("name", list(_LOSSES))
def test_pointwise_loss_matches_cpu(name: str, reduction: int, dtype: Any) -> None:
    fwd, back = _LOSSES[name]
    x, y = t(arr(5, 7), dtype), t(arr(5, 7, seed=5), dtype)
    same(fwd(x.cuda(), y.cuda(), reduction), fwd(x, y, reduction), dtype)
    go = t(arr(5, 7, seed=1) if reduction == 0 else np.array(0.8), dtype)
    same(back(go.cuda(), x.cuda(), y.cuda(), reduction), back(go, x, y, reduction), dtype)


@requires_cuda
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_bce_weighted_and_with_logits_match_cpu(dtype: Any, reduction: int) -> None:
    p, y = t(arr(4, 6, low=0.05, high=0.95), dtype), t(arr(4, 6, seed=2, low=0, high=1), dtype)
    w, pw = t(arr(6, seed=3, low=0.5, high=2), dtype), t(arr(6, seed=4, low=0.5, high=2), dtype)
    same(
        ea.nn.binary_cross_entropy(p.cuda(), y.cuda(), w.cuda(), reduction),
        ea.nn.binary_cross_entropy(p, y, w, reduction),
        dtype,
    )
    go = t(arr(4, 6, seed=1) if reduction == 0 else np.array(1.3), dtype)
    same(
        ea.nn.binary_cross_entropy_backward(go.cuda(), p.cuda(), y.cuda(), w.cuda(), reduction),
        ea.nn.binary_cross_entropy_backward(go, p, y, w, reduction),
        dtype,
    )
    x = t(arr(4, 6) * 30, dtype)  # large logits: the stable form stays finite
    same(
        ea.binary_cross_entropy_with_logits(x.cuda(), y.cuda(), w.cuda(), pw.cuda(), reduction),
        ea.binary_cross_entropy_with_logits(x, y, w, pw, reduction),
        dtype,
    )


@requires_cuda
def test_bce_out_of_range_input_raises_cpu_message_on_cuda() -> None:
    p, y = t([0.2, 1.5, 0.3]), t([0.0, 1.0, 1.0])
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        ea.nn.binary_cross_entropy(p, y, None, 1)
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        ea.nn.binary_cross_entropy(p.cuda(), y.cuda(), None, 1).cpu()


@requires_cuda
def test_loss_reduction_stays_on_the_device() -> None:
    x = t(arr(1000, 33), ea.float32)
    y = t(arr(1000, 33, seed=1), ea.float32)
    got = ea.nn.mse_loss(x.cuda(), y.cuda(), 1)
    assert got.is_cuda and got.dtype == ea.float32 and tuple(got.shape) == ()
    np.testing.assert_allclose(to_np(got), ((to_np(x) - to_np(y)) ** 2).mean(), rtol=1e-6)
    empty = ea.nn.mse_loss(t(np.zeros((0, 3))).cuda(), t(np.zeros((0, 3))).cuda(), 1)
    assert np.isnan(to_np(empty))


# ---- nll_loss -----------------------------------------------------------------------------------


@requires_cuda
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("reduction", [0, 1, 2])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss_matches_cpu(dtype: Any, reduction: int, weighted: bool) -> None:
    x = t(arr(6, 4), dtype)
    target = t([2, 0, -100, 1, 3, 3], ea.int64)
    weight = t([0.5, 2.0, 1.0, 1.5], dtype) if weighted else None
    wg = weight.cuda() if weighted else None
    out_c, tw_c = ea.nn.nll_loss_forward(x, target, weight, reduction, -100)
    out_g, tw_g = ea.nn.nll_loss_forward(x.cuda(), target.cuda(), wg, reduction, -100)
    same(out_g, out_c, dtype)
    same(tw_g, tw_c, dtype)
    go = t(arr(*out_c.shape, seed=1), dtype)
    gi_c = ea.nn.nll_loss_backward(go, x, target, weight, reduction, -100, tw_c)
    gi_g = ea.nn.nll_loss_backward(go.cuda(), x.cuda(), target.cuda(), wg, reduction, -100, tw_g)
    same(gi_g, gi_c, dtype)


@requires_cuda
@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_nll_loss2d_matches_cpu(reduction: int) -> None:
    x = t(arr(2, 3, 4, 5))
    target = t(np.random.default_rng(3).integers(0, 3, size=(2, 4, 5)), ea.uint8)
    out_c, tw_c = ea.nn.nll_loss2d_forward(x, target, None, reduction, 1)
    out_g, tw_g = ea.nn.nll_loss2d_forward(x.cuda(), target.cuda(), None, reduction, 1)
    same(out_g, out_c, ea.float32)
    same(tw_g, tw_c, ea.float32)
    go = t(arr(*out_c.shape, seed=1))
    gi_c = ea.nn.nll_loss2d_backward(go, x, target, None, reduction, 1, tw_c)
    gi_g = ea.nn.nll_loss2d_backward(go.cuda(), x.cuda(), target.cuda(), None, reduction, 1, tw_g)
    same(gi_g, gi_c, ea.float32)


@requires_cuda
def test_nll_loss_bad_target_raises_cpu_message_on_cuda() -> None:
    x, target = t(arr(3, 5)), t([1, 7, 0], ea.int64)
    with pytest.raises(IndexError, match=r"Target 7 is out of bounds\."):
        ea.nn.nll_loss_forward(x, target, None, 1, -100)
    with pytest.raises(IndexError, match=r"^Target 7 is out of bounds\.$"):
        out, _ = ea.nn.nll_loss_forward(x.cuda(), target.cuda(), None, 1, -100)
        out.cpu()  # the device-side error surfaces at the latest with the copy
    # the error was consumed: a good call afterwards works
    out, _ = ea.nn.nll_loss_forward(x.cuda(), t([1, 4, 0], ea.int64).cuda(), None, 2, -100)
    np.testing.assert_allclose(to_np(out), -(to_np(x)[[0, 1, 2], [1, 4, 0]]).sum(), rtol=1e-6)


# ---- ctc_loss -----------------------------------------------------------------------------------


@requires_cuda
@pytest.mark.parametrize("dtype", [ea.float32, ea.float64])
@pytest.mark.parametrize("padded", [False, True])
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_loss_matches_cpu(dtype: Any, padded: bool, zero_infinity: bool) -> None:
    lp = ea.log_softmax(t(arr(12, 3, 5), dtype), 2)
    il, tl = [12, 9, 1], [4, 3, 2]  # sample 2 is impossible (infinite loss)
    if padded:
        targets = t([[1, 2, 2, 4], [3, 1, 1, 0], [2, 3, 0, 0]], ea.int64)
    else:
        targets = t([1, 2, 2, 4, 3, 1, 1, 2, 3], ea.int32)
    nll_c, alpha_c = ea._ctc_loss(lp, targets, il, tl, 0, zero_infinity)
    nll_g, alpha_g = ea._ctc_loss(lp.cuda(), targets.cuda(), il, tl, 0, zero_infinity)
    same(nll_g, nll_c, dtype)
    same(alpha_g, alpha_c, dtype)
    go = t([0.7, 1.1, 0.4], dtype)
    gc = ea._ctc_loss_backward(go, lp, targets, il, tl, nll_c, alpha_c, 0, zero_infinity)
    gg = ea._ctc_loss_backward(go.cuda(), lp.cuda(), targets.cuda(), il, tl, nll_g, alpha_g, 0, zero_infinity)
    same(gg, gc, dtype, tol=TOL[dtype] * 10)
    # the Tensor-lengths overloads
    il_t, tl_t = t(il, ea.int64).cuda(), t(tl, ea.int64).cuda()
    same(ea._ctc_loss(lp.cuda(), targets.cuda(), il_t, tl_t, 0, zero_infinity)[0], nll_c, dtype)


# ---- embedding ----------------------------------------------------------------------------------


@requires_cuda
@pytest.mark.parametrize("dtype", [*FLOATS, ea.int64, ea.uint8])
@pytest.mark.parametrize("index_dtype", [ea.int64, ea.int32])
def test_embedding_matches_cpu(dtype: Any, index_dtype: Any) -> None:
    w = t(arr(10, 7) * 50, dtype)
    idx = t([[1, 9, 1], [0, 4, 2]], index_dtype)
    same(ea.embedding(w.cuda(), idx.cuda()), ea.embedding(w, idx), ea.float64, tol=0)


@requires_cuda
def test_embedding_bad_index_raises_on_cuda() -> None:
    w, idx = t(arr(5, 3)), t([1, 5], ea.int64)
    with pytest.raises(IndexError, match="index out of range in self"):
        ea.embedding(w, idx)
    with pytest.raises(IndexError, match="index out of range in self"):
        ea.embedding(w.cuda(), idx.cuda()).cpu()


@requires_cuda
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("padding_idx,scale", [(-1, False), (1, False), (-1, True), (4, True)])
def test_embedding_dense_backward_matches_cpu(dtype: Any, padding_idx: int, scale: bool) -> None:
    rng = np.random.default_rng(0)
    idx = t(rng.integers(0, 6, size=(40, 3)), ea.int64)
    go = t(arr(40, 3, 5, seed=1), dtype)
    cpu = ea.embedding_dense_backward(go, idx, 8, padding_idx, scale)
    gpu = ea.embedding_dense_backward(go.cuda(), idx.cuda(), 8, padding_idx, scale)
    same(gpu, cpu, dtype, tol=TOL[dtype] * 10)
    # deterministic: the same inputs give the same bits
    again = ea.embedding_dense_backward(go.cuda(), idx.cuda(), 8, padding_idx, scale)
    assert (to_np(again) == to_np(gpu)).all()


@requires_cuda
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("mode", [0, 1, 2])
@pytest.mark.parametrize("padding_idx", [-1, 4])
def test_embedding_bag_matches_cpu(dtype: Any, mode: int, padding_idx: int) -> None:
    w = t(arr(6, 3), dtype)
    idx, off = t([1, 2, 4, 5, 4, 3, 0], ea.int64), t([0, 2, 2, 5], ea.int64)
    psw = t(arr(7, seed=3), dtype) if mode == 0 else None
    psw_g = psw.cuda() if psw is not None else None
    cpu = ea._embedding_bag(w, idx, off, False, mode, False, psw, False, padding_idx)
    gpu = ea._embedding_bag(w.cuda(), idx.cuda(), off.cuda(), False, mode, False, psw_g, False, padding_idx)
    same(gpu[0], cpu[0], dtype)
    for g_, c_ in zip(gpu[1:], cpu[1:], strict=True):
        assert g_.is_cuda and (to_np(g_) == to_np(c_)).all()
    go = t(arr(*cpu[0].shape, seed=1), dtype)
    for freq in (False, True) if mode != 2 else (False,):
        gc = ea._embedding_bag_dense_backward(go, idx, cpu[1], cpu[2], cpu[3], 6, freq, mode, psw, padding_idx)
        gg = ea._embedding_bag_dense_backward(
            go.cuda(), idx.cuda(), gpu[1], gpu[2], gpu[3], 6, freq, mode, psw_g, padding_idx
        )
        same(gg, gc, dtype, tol=TOL[dtype] * 10)
    if mode == 0:
        pc = ea._embedding_bag_per_sample_weights_backward(go, w, idx, off, cpu[1], 0, padding_idx)
        pg = ea._embedding_bag_per_sample_weights_backward(
            go.cuda(), w.cuda(), idx.cuda(), off.cuda(), gpu[1], 0, padding_idx
        )
        same(pg, pc, dtype, tol=TOL[dtype] * 10)


# ---- dropout ------------------------------------------------------------------------------------


@requires_cuda
@pytest.mark.parametrize("dtype", FLOATS)
def test_native_dropout_on_cuda(dtype: Any) -> None:
    x = t(arr(300, 40) + 3.0, dtype).cuda()
    ea.manual_seed(5)
    out, mask = ea.native_dropout(x, 0.25, True)
    assert out.is_cuda and mask.is_cuda and mask.dtype == ea.bool
    m = to_np(mask)
    assert abs(m.mean() - 0.75) < 0.02
    np.testing.assert_allclose(to_np(out), np.where(m, to_np(x) / 0.75, 0.0), rtol=TOL[dtype], atol=TOL[dtype])
    go = t(arr(300, 40, seed=3), dtype).cuda()
    gi = ea.native_dropout_backward(go, mask, 1 / 0.75)
    np.testing.assert_allclose(to_np(gi), np.where(m, to_np(go) / 0.75, 0.0), rtol=TOL[dtype], atol=TOL[dtype])
    ea.manual_seed(5)
    assert (to_np(ea.native_dropout(x, 0.25, True)[1]) == m).all()  # reproducible from the seed
    out, mask = ea.native_dropout(x, 0.25, False)
    assert to_np(mask).all() and (to_np(out) == to_np(x)).all()


@requires_cuda
def test_native_dropout_mask_equals_bernoulli_on_cuda() -> None:
    # the mask is bernoulli_(1 - p) drawn from the same generator state
    x = t(arr(64, 33)).cuda()
    ea.manual_seed(11)
    _, mask = ea.native_dropout(x, 0.4, True)
    ea.manual_seed(11)
    ref = ea.empty([64, 33], dtype=ea.bool, device="cuda").bernoulli_(0.6)
    assert (to_np(mask) == to_np(ref)).all()
