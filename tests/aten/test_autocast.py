"""Autocast (ember.aten.autocast): the AutocastCPU key, PyTorch's CPU op policy as a dtype table,
regions (nesting, disabling, decorator), the dispatch trace, errors; GradScaler's fused kernels."""

from __future__ import annotations

import io
import math
import warnings
from collections.abc import Callable
from typing import Any

import ember.aten as ea
import numpy as np
import pytest
from ember.aten import _dispatch, amp
from ember.c10py import _C as c10
from ember.c10py import DispatchKey, DispatchKeySet

bf16, f16, f32, f64 = ea.bfloat16, ea.float16, ea.float32, ea.float64
_gen = np.random.default_rng(0)


def r(*shape: int, dtype: Any = f32) -> ea.Tensor:
    return ea.tensor(_gen.standard_normal(shape).astype(np.float32)).to(dtype)


def b(*shape: int) -> ea.Tensor:
    return r(*shape, dtype=bf16)


def pos(*shape: int, dtype: Any = bf16) -> ea.Tensor:  # values in (0.05, 0.95)
    return ea.tensor(_gen.uniform(0.05, 0.95, shape).astype(np.float32)).to(dtype)


def sign(*shape: int, dtype: Any = bf16) -> ea.Tensor:
    return ea.tensor(np.where(_gen.standard_normal(shape) > 0, 1.0, -1.0).astype(np.float32)).to(dtype)


def spd(n: int, dtype: Any = bf16) -> ea.Tensor:
    a = _gen.standard_normal((n, n)).astype(np.float32)
    return ea.tensor(a @ a.T + n * np.eye(n, dtype=np.float32)).to(dtype)


def op(name: str) -> _dispatch.OpOverload:
    return _dispatch.find_op(name)


def first(x: Any) -> ea.Tensor:
    return x[0] if isinstance(x, (tuple, list)) else x


def _unpool_args() -> tuple[Any, ...]:
    out, idx = op("max_pool2d_with_indices")(r(1, 1, 4, 4), [2, 2])
    return (out.to(bf16), idx, [4, 4])


def _lu_solve_args() -> tuple[Any, ...]:
    lu, pivots, _ = op("linalg_lu_factor_ex")(spd(3, f32))
    return (b(3, 1), lu.to(bf16), pivots)


def _ctc_args(tensor_lengths: bool) -> tuple[Any, ...]:
    lp = op("log_softmax.int")(r(6, 2, 4), 2).to(bf16)
    targets = ea.tensor([[1, 2, 1], [3, 1, 2]])
    if tensor_lengths:
        return (lp, targets, ea.tensor([6, 6]), ea.tensor([3, 3]))
    return (lp, targets, [6, 6], [3, 3])


# PyTorch's CPU policy (autocast_mode.cpp, the AMP docs' "CPU Ops that can autocast to bfloat16" and
# "CPU Ops that can autocast to float32"), for every listed op ember has: op -> (arguments, dtype of
# the (first) output under autocast("cpu") with the default bfloat16). Lower-precision ops get float32
# inputs (cast down), float32 ops bfloat16 inputs (cast up), promote ops a mix.
LowerArgs = Callable[[], tuple[Any, ...]]
CPU_TABLE: dict[str, tuple[LowerArgs, Any]] = {
    # ---- lower_precision_fp: float32 in, bfloat16 out
    "conv1d": (lambda: (r(2, 3, 8), r(4, 3, 3)), bf16),
    "conv1d.padding": (lambda: (r(2, 3, 8), r(4, 3, 3), None, [1], "same"), bf16),
    "conv2d": (lambda: (r(2, 3, 6, 6), r(4, 3, 3, 3), r(4)), bf16),
    "conv2d.padding": (lambda: (r(2, 3, 6, 6), r(4, 3, 3, 3), None, [1, 1], "same"), bf16),
    "conv3d": (lambda: (r(1, 2, 4, 4, 4), r(3, 2, 3, 3, 3)), bf16),
    "conv3d.padding": (lambda: (r(1, 2, 4, 4, 4), r(3, 2, 3, 3, 3), None, [1, 1, 1], "same"), bf16),
    "conv_transpose1d": (lambda: (r(2, 3, 8), r(3, 4, 3)), bf16),
    "conv_transpose2d.input": (lambda: (r(2, 3, 5, 5), r(3, 4, 3, 3)), bf16),
    "conv_transpose3d.input": (lambda: (r(1, 2, 3, 3, 3), r(2, 3, 2, 2, 2)), bf16),
    "bmm": (lambda: (r(2, 3, 4), r(2, 4, 5)), bf16),
    "mm": (lambda: (r(3, 4), r(4, 5)), bf16),
    "baddbmm": (lambda: (r(2, 3, 5), r(2, 3, 4), r(2, 4, 5)), bf16),
    "addmm": (lambda: (r(3, 5), r(3, 4), r(4, 5)), bf16),
    "addbmm": (lambda: (r(3, 5), r(2, 3, 4), r(2, 4, 5)), bf16),
    "linear": (lambda: (r(3, 4), r(5, 4), r(5)), bf16),
    "matmul": (lambda: (r(3, 4), r(4, 5)), bf16),
    "scaled_dot_product_attention": (lambda: (r(1, 2, 4, 8), r(1, 2, 4, 8), r(1, 2, 4, 8)), bf16),
    # ---- fp32: bfloat16 in, float32 out
    "avg_pool3d": (lambda: (b(1, 1, 4, 4, 4), [2, 2, 2]), f32),
    "binary_cross_entropy": (lambda: (pos(3, 4), pos(3, 4)), f32),
    "grid_sampler": (lambda: (b(1, 1, 4, 4), pos(1, 2, 2, 2), 0, 0, False), f32),
    "grid_sampler_2d": (lambda: (b(1, 1, 4, 4), pos(1, 2, 2, 2), 0, 0, False), f32),
    "prod": (lambda: (b(3, 4),), f32),
    "trace": (lambda: (b(3, 3),), f32),
    "max_pool3d": (lambda: (b(1, 1, 4, 4, 4), [2, 2, 2]), f32),
    "max_unpool2d": (_unpool_args, f32),
    "adaptive_avg_pool3d": (lambda: (b(1, 1, 4, 4, 4), [2, 2, 2]), f32),
    "adaptive_max_pool3d": (lambda: (b(1, 1, 4, 4, 4), [2, 2, 2]), f32),
    "reflection_pad1d": (lambda: (b(1, 2, 5), [1, 1]), f32),
    "reflection_pad2d": (lambda: (b(1, 1, 4, 4), [1, 1, 1, 1]), f32),
    "replication_pad1d": (lambda: (b(1, 2, 5), [1, 1]), f32),
    "replication_pad2d": (lambda: (b(1, 1, 4, 4), [1, 1, 1, 1]), f32),
    "replication_pad3d": (lambda: (b(1, 1, 3, 3, 3), [1, 1, 1, 1, 1, 1]), f32),
    "mse_loss": (lambda: (b(3, 4), b(3, 4)), f32),
    "cosine_embedding_loss": (lambda: (b(3, 4), b(3, 4), sign(3)), f32),
    "nll_loss": (lambda: (b(3, 5), ea.tensor([0, 4, 2])), f32),
    "nll_loss2d": (lambda: (b(2, 5, 3, 3), ea.zeros(2, 3, 3, dtype=ea.int64)), f32),
    "hinge_embedding_loss": (lambda: (b(3, 4), sign(3, 4)), f32),
    "poisson_nll_loss": (lambda: (b(3, 4), pos(3, 4), True, False, 1e-8, 1), f32),
    "smooth_l1_loss": (lambda: (b(3, 4), b(3, 4)), f32),
    "cross_entropy_loss": (lambda: (b(3, 5), ea.tensor([0, 4, 2])), f32),
    "l1_loss": (lambda: (b(3, 4), b(3, 4)), f32),
    "huber_loss": (lambda: (b(3, 4), b(3, 4)), f32),
    "margin_ranking_loss": (lambda: (b(3), b(3), sign(3)), f32),
    "soft_margin_loss": (lambda: (b(3, 4), sign(3, 4)), f32),
    "triplet_margin_loss": (lambda: (b(3, 4), b(3, 4), b(3, 4)), f32),
    "ctc_loss.IntList": (lambda: _ctc_args(False), f32),
    "ctc_loss.Tensor": (lambda: _ctc_args(True), f32),
    "kl_div": (lambda: (b(3, 4), pos(3, 4)), f32),
    "binary_cross_entropy_with_logits": (lambda: (b(3, 4), pos(3, 4)), f32),
    "linalg_solve": (lambda: (spd(3), b(3, 1)), f32),
    "linalg_cholesky": (lambda: (spd(3),), f32),
    "linalg_svdvals": (lambda: (b(3, 3),), f32),
    "linalg_inv": (lambda: (spd(3),), f32),
    "linalg_qr": (lambda: (b(3, 3),), f32),
    "linalg_svd": (lambda: (b(3, 3),), f32),
    "svd": (lambda: (b(3, 3),), f32),  # torch.svd / torch.qr: PyTorch's CPU fp32 list has both
    "qr": (lambda: (b(3, 3),), f32),
    "linalg_inv_ex": (lambda: (spd(3),), f32),
    "linalg_cholesky_ex": (lambda: (spd(3),), f32),
    "cholesky": (lambda: (spd(3),), f32),
    "cholesky_inverse": (lambda: (spd(3),), f32),
    "cholesky_solve": (lambda: (b(3, 1), spd(3)), f32),
    "linalg_eigh": (lambda: (spd(3),), f32),
    "linalg_eigvalsh": (lambda: (spd(3),), f32),
    "linalg_cond": (lambda: (spd(3),), f32),
    "linalg_cond.p_str": (lambda: (spd(3), "fro"), f32),
    "linalg_lstsq": (lambda: (spd(3), b(3, 1)), f32),
    "linalg_matrix_rank": (lambda: (spd(3), 1e-5), ea.int64),  # a count, whatever the input
    "linalg_tensorinv": (lambda: (spd(4).reshape(4, 2, 2), 1), f32),
    "linalg_tensorsolve": (lambda: (spd(3), b(3)), f32),
    "geqrf": (lambda: (b(3, 3),), f32),
    "linalg_householder_product": (lambda: (b(3, 3), b(3)), f32),
    "orgqr": (lambda: (b(3, 3), b(3)), f32),
    "ormqr": (lambda: (b(3, 3), b(3), b(3, 3)), f32),
    "pinverse": (lambda: (b(3, 3),), f32),
    "triangular_solve": (lambda: (b(3, 1), spd(3)), f32),
    "lu_solve": (lambda: _lu_solve_args(), f32),
    # functions family (issue 18)
    "cdist": (lambda: (b(3, 4), b(2, 4)), f32),
    "quantile": (lambda: (b(3, 4), ea.tensor([0.25, 0.5]).to(bf16)), f32),
    "quantile.scalar": (lambda: (b(3, 4), 0.5), f32),
    "nanquantile": (lambda: (b(3, 4), ea.tensor([0.25, 0.5]).to(bf16)), f32),
    "nanquantile.scalar": (lambda: (b(3, 4), 0.5), f32),
    # (lower precision, PyTorch's CPU list: float32 inputs come out bfloat16)
    "linalg_vecdot": (lambda: (r(3), r(3)), bf16),
    # ---- promote: the widest floating type of the inputs
    "cat": (lambda: ([b(2, 3), r(2, 3)],), f32),
    "stack": (lambda: ([b(2, 3), r(2, 3)],), f32),
    "index_copy": (lambda: (r(4, 3), 0, ea.tensor([0, 2]), b(2, 3)), f32),
}


def test_autocast_keys_sit_between_autograd_and_python() -> None:
    K = DispatchKey
    ks = DispatchKeySet([K.AutogradCPU, K.AutocastCPU, K.CPU])
    assert ks.highest_priority_key() == K.AutocastCPU
    assert DispatchKeySet([K.AutocastCUDA, K.AutocastCPU]).highest_priority_key() == K.AutocastCUDA
    assert DispatchKeySet([K.Python, K.AutocastCUDA]).highest_priority_key() == K.Python
    below = DispatchKeySet.from_raw(ks.raw & c10.keys_after(K.AutocastCPU).raw)
    assert below.highest_priority_key() == K.AutogradCPU


def test_the_table_covers_every_registered_cpu_op() -> None:
    # every op of PyTorch's CPU lists that ember has has a kernel, and a row in the table above
    assert set(amp.registered_policies("cpu")) == set(CPU_TABLE)
    for name in ("mm", "conv2d", "cross_entropy_loss", "cat"):
        assert op(name).has_kernel_for(DispatchKey.AutocastCPU)
    assert not op("add.Tensor").has_kernel_for(DispatchKey.AutocastCPU)  # the fallthrough


def _as_f32(a: Any) -> Any:
    if isinstance(a, (list, tuple)):
        return type(a)(_as_f32(x) for x in a)
    return a.to(f32) if isinstance(a, ea.Tensor) and a.is_floating_point() else a


@pytest.mark.parametrize("name", sorted(CPU_TABLE))
def test_cpu_dtype_table(name: str) -> None:
    make, expected = CPU_TABLE[name]
    args = make()
    with ea.autocast("cpu"):
        out = first(op(name)(*args))
    assert out.dtype == expected, f"{name}: {out.dtype} under autocast, PyTorch gives {expected}"
    if amp.registered_policies("cpu")[name] == "lower_precision_fp":
        assert first(op(name)(*args)).dtype == f32  # outside a region: the inputs' dtype
    # the values agree with the op run in float32, to bfloat16's precision
    ref = first(op(name)(*_as_f32(args))).to(f32).numpy()
    got = out.to(f32).numpy()
    assert got.shape == ref.shape
    assert np.allclose(got, ref, rtol=5e-2, atol=5e-2 * max(1.0, float(np.abs(ref).max(initial=0.0))))


def test_promote_keeps_the_lower_dtype_when_all_inputs_are_lower() -> None:
    with ea.autocast("cpu"):
        assert ea.cat([b(2), b(3)]).dtype == bf16
        assert ea.cat([b(2), r(3)]).dtype == f32
        # float64 is not eligible: it is left alone and the op's own promotion decides
        assert ea.cat([b(2), r(3, dtype=f64)]).dtype == f64


def test_lower_precision_leaves_float64_and_integers_alone() -> None:
    with ea.autocast("cpu"):
        assert ea.mm(r(2, 3, dtype=f64), r(3, 2, dtype=f64)).dtype == f64
        assert ea.mm(ea.ones(2, 3, dtype=ea.int64), ea.ones(3, 2, dtype=ea.int64)).dtype == ea.int64
        # ops off the lists fall through: they run in their inputs' dtype
        assert (r(3) + r(3)).dtype == f32
        assert ea.mm(r(2, 3), r(3, 2)).relu().dtype == bf16


def test_float16_region_and_nesting() -> None:
    x, w = r(4, 4), r(4, 4)
    assert not ea.is_autocast_enabled("cpu")
    with ea.autocast("cpu"):
        assert ea.is_autocast_enabled("cpu") and ea.get_autocast_dtype("cpu") == bf16
        assert ea.mm(x, w).dtype == bf16
        with ea.autocast("cpu", dtype=f16):
            assert ea.get_autocast_dtype("cpu") == f16
            assert ea.mm(x, w).dtype == f16
            with ea.autocast("cpu", enabled=False):
                assert not ea.is_autocast_enabled("cpu")
                assert ea.mm(x, w).dtype == f32
            assert ea.mm(x, w).dtype == f16
        assert ea.mm(x, w).dtype == bf16
        assert ea.get_autocast_dtype("cpu") == bf16
    assert not ea.is_autocast_enabled("cpu") and ea.mm(x, w).dtype == f32
    assert not ea.is_autocast_enabled("cuda")


def test_region_restores_state_after_an_exception() -> None:
    with pytest.raises(ZeroDivisionError), ea.autocast("cpu", dtype=f16):
        raise ZeroDivisionError
    assert not ea.is_autocast_enabled("cpu") and ea.get_autocast_dtype("cpu") == bf16
    assert _dispatch.included_keys() & amp.autocast_mode.AUTOCAST_BITS == 0


def test_decorator() -> None:
    @ea.autocast("cpu")
    def f(a: ea.Tensor, c: ea.Tensor) -> ea.Tensor:
        return ea.mm(a, c)

    assert f(r(2, 2), r(2, 2)).dtype == bf16
    assert ea.mm(r(2, 2), r(2, 2)).dtype == f32


def test_amp_namespace() -> None:
    assert amp.autocast is ea.autocast
    with amp.autocast("cpu"):
        assert amp.is_autocast_enabled("cpu")
    assert amp.is_autocast_available("cpu") and amp.is_autocast_available("cuda")
    assert not amp.is_autocast_available("xpu")


def test_both_dispatch_paths_agree() -> None:
    # the generated Python entry (EMBER_PYTHON_DISPATCH=1's path) reaches the same kernel
    mm = op("mm")
    with ea.autocast("cpu"):
        py_entry = getattr(mm._call, "python_entry", mm._call)
        assert py_entry(r(2, 3), r(3, 2)).dtype == bf16
        assert mm(r(2, 3), r(3, 2)).dtype == bf16


def test_dispatch_trace_shows_the_autocast_kernel() -> None:
    buf = io.StringIO()
    x, w = r(2, 3), r(3, 2)
    with ea.autocast("cpu"), ea.trace_dispatch(buf):
        ea.mm(x, w)
    text = buf.getvalue()
    assert "AutocastCPU" in text and "autocast_cpu_lower_precision_fp[mm]" in text
    assert "_to_copy" in text  # the casts are ordinary ops, traced inside the kernel


@pytest.mark.parametrize(
    ("args", "kwargs", "exc", "match"),
    [
        ((1,), {}, ValueError, "Expected `device_type` of type `str`"),
        (("xpu",), {}, RuntimeError, "unsupported autocast device_type 'xpu'"),
    ],
)
def test_bad_device_type(args: tuple[Any, ...], kwargs: dict[str, Any], exc: type, match: str) -> None:
    with pytest.raises(exc, match=match):
        ea.autocast(*args, **kwargs)
    with pytest.raises(exc, match=match):
        ea.is_autocast_enabled(*args)


def test_unsupported_cpu_dtype_warns_and_disables() -> None:
    with pytest.warns(UserWarning, match="CPU Autocast only supports dtype of torch.bfloat16, torch.float16"):
        ctx = ea.autocast("cpu", dtype=f64)
    with ctx:
        assert not ea.is_autocast_enabled("cpu")
        assert ea.mm(r(2, 2), r(2, 2)).dtype == f32


@pytest.mark.skipif(ea.cuda.is_available(), reason="checks the behaviour without a GPU")
def test_cuda_region_without_a_gpu_warns_and_disables() -> None:
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ctx = ea.autocast("cuda")
    assert any("CUDA is not available" in str(x.message) for x in w)
    with ctx:
        assert not ea.is_autocast_enabled("cuda")


def test_cuda_policy_table_is_registered() -> None:
    reg = amp.registered_policies("cuda")
    assert reg["mm"] == "lower_precision_fp" and reg["layer_norm"] == "fp32"
    assert reg["sum"] == "fp32_set_opt_dtype" and reg["softmax.int"] == "fp32_set_opt_dtype"
    assert reg["addcmul"] == "promote" and reg["binary_cross_entropy"] == "banned"


def test_cuda_kernels_leave_cpu_tensors_alone() -> None:
    # AutocastCUDA included (as a CUDA region does) with CPU tensors: nothing is eligible
    bits = DispatchKeySet(DispatchKey.AutocastCUDA).raw
    with _dispatch.IncludeKeys(bits):
        assert ea.mm(r(2, 2), r(2, 2)).dtype == f32
        assert ea.sum(b(3)).dtype == bf16
        assert ea.cat([b(2), r(2)]).dtype == f32


# ---------------------------------------------------------------------------
# GradScaler's fused kernels
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [f32, f64, f16, bf16])
def test_non_finite_check_and_unscale(dtype: Any) -> None:
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    grads = [ea.tensor(a).to(dtype), ea.tensor(a[:, :2] * 2).to(dtype)]
    found, inv = ea.zeros((), dtype=f32), ea.full((), 0.25, dtype=f32)
    ea._amp_foreach_non_finite_check_and_unscale_(grads, found, inv)
    assert found.item() == 0.0
    np.testing.assert_allclose(grads[0].to(f32).numpy(), a * 0.25, rtol=1e-2)
    np.testing.assert_allclose(grads[1].to(f32).numpy(), a[:, :2] * 0.5, rtol=1e-2)
    bad = ea.tensor([1.0, math.inf, 2.0]).to(dtype)
    ea._amp_foreach_non_finite_check_and_unscale_([grads[0], bad], found, inv)
    assert found.item() == 1.0
    nan = ea.tensor([math.nan]).to(dtype)
    found2 = ea.zeros((), dtype=f32)
    ea._amp_foreach_non_finite_check_and_unscale_([nan], found2, inv)
    assert found2.item() == 1.0


def test_unscale_non_contiguous_and_large() -> None:
    base = r(8, 6)
    g = base.t()  # a transposed view
    expect = base.numpy().T * 0.5
    big = ea.ones(100_003)
    found, inv = ea.zeros((), dtype=f32), ea.full((), 0.5, dtype=f32)
    v0 = g._impl.version
    ea._amp_foreach_non_finite_check_and_unscale_([g, big], found, inv)
    np.testing.assert_allclose(g.numpy(), expect, rtol=1e-6)
    assert np.all(big.numpy() == 0.5) and found.item() == 0.0
    assert g._impl.version > v0
    big[77_777] = math.inf
    ea._amp_foreach_non_finite_check_and_unscale_([big], found, inv)
    assert found.item() == 1.0


@pytest.mark.parametrize(
    ("grads", "found", "inv", "match"),
    [
        (lambda: [r(2)], lambda: ea.zeros(2), lambda: ea.ones(()), "found_inf must be a 1-element tensor"),
        (lambda: [r(2)], lambda: ea.zeros(()), lambda: ea.ones(3), "inv_scale must be a 1-element tensor"),
        (lambda: [r(2)], lambda: ea.zeros(()), lambda: ea.ones((), dtype=f64), "inv_scale must be a float tensor"),
        (lambda: [r(2)], lambda: ea.zeros((), dtype=f16), lambda: ea.ones(()), "found_inf must be a float tensor"),
        (lambda: [ea.ones(2, dtype=ea.int64)], lambda: ea.zeros(()), lambda: ea.ones(()), "must be a floating point"),
    ],
)
def test_unscale_errors(grads: Callable[[], Any], found: Callable[[], Any], inv: Callable[[], Any], match: str) -> None:
    with pytest.raises(RuntimeError, match=match):
        ea._amp_foreach_non_finite_check_and_unscale_(grads(), found(), inv())


def _update(scale: float, tracker: int, found: float, interval: int = 3) -> tuple[float, int]:
    s, t = ea.full((), scale, dtype=f32), ea.full((), tracker, dtype=ea.int32)
    out = ea._amp_update_scale_(s, t, ea.full((), found, dtype=f32), 2.0, 0.5, interval)
    assert out is s
    return s.item(), int(t.item())


@pytest.mark.parametrize(
    ("scale", "tracker", "found", "expected"),
    [
        (8.0, 0, 0.0, (8.0, 1)),  # a clean step counts
        (8.0, 1, 0.0, (8.0, 2)),
        (8.0, 2, 0.0, (16.0, 0)),  # the growth_interval-th clean step grows the scale
        (8.0, 2, 1.0, (4.0, 0)),  # an inf backs off and resets the count
        (3.0e38, 2, 0.0, (3.0e38, 0)),  # growth to inf is refused
    ],
)
def test_update_scale(scale: float, tracker: int, found: float, expected: tuple[float, int]) -> None:
    got = _update(scale, tracker, found)
    assert got[1] == expected[1] and got[0] == pytest.approx(expected[0], rel=1e-6)


def test_update_scale_errors() -> None:
    s, t, f = ea.ones(()), ea.zeros((), dtype=ea.int32), ea.zeros(())
    with pytest.raises(RuntimeError, match="growth_tracker must be an int tensor"):
        ea._amp_update_scale_(s, ea.zeros(()), f, 2.0, 0.5, 3)
    with pytest.raises(RuntimeError, match="current_scale must be a float tensor"):
        ea._amp_update_scale_(ea.ones((), dtype=f64), t, f, 2.0, 0.5, 3)
    with pytest.raises(RuntimeError, match="current_scale must be a 1-element tensor"):
        ea._amp_update_scale_(ea.ones(2), t, f, 2.0, 0.5, 3)
    with pytest.raises(RuntimeError, match="growth_interval must be positive"):
        ea._amp_update_scale_(s, t, f, 2.0, 0.5, 0)


# ---------------------------------------------------------------------------
# CUDA (run only where a GPU is lent: marked cuda, deselected without one)
# ---------------------------------------------------------------------------

# PyTorch's CUDA policy for a few ops of each list: op -> (arguments on the GPU, output dtype
# under autocast("cuda") with the default float16)
CUDA_ROWS: dict[str, tuple[Callable[[], tuple[Any, ...]], Any]] = {
    "mm": (lambda: (r(3, 4).cuda(), r(4, 5).cuda()), f16),
    "linear": (lambda: (r(3, 4).cuda(), r(5, 4).cuda(), r(5).cuda()), f16),
    "conv2d": (lambda: (r(2, 3, 6, 6).cuda(), r(4, 3, 3, 3).cuda()), f16),
    "exp": (lambda: (r(3, dtype=f16).cuda(),), f32),
    "layer_norm": (lambda: (r(2, 4, dtype=f16).cuda(), [4]), f32),
    "sum": (lambda: (r(2, 4, dtype=f16).cuda(),), f32),
    "softmax.int": (lambda: (r(2, 4, dtype=f16).cuda(), 1), f32),
    "addcmul": (lambda: (r(3).cuda(), r(3, dtype=f16).cuda(), r(3, dtype=f16).cuda()), f32),
}


@pytest.mark.cuda
@pytest.mark.parametrize("name", sorted(CUDA_ROWS))
def test_cuda_dtype_rows(name: str) -> None:
    make, expected = CUDA_ROWS[name]
    with ea.autocast("cuda"):
        assert first(op(name)(*make())).dtype == expected


@pytest.mark.cuda
def test_cuda_binary_cross_entropy_is_banned() -> None:
    with ea.autocast("cuda"), pytest.raises(RuntimeError, match="are unsafe to autocast"):
        op("binary_cross_entropy")(pos(3, dtype=f32).cuda(), pos(3, dtype=f32).cuda())


@pytest.mark.cuda
@pytest.mark.parametrize("dtype", [f32, f16, bf16])
def test_cuda_unscale_and_update_scale(dtype: Any) -> None:
    g = ea.tensor([1.0, 2.0, math.inf]).to(dtype).cuda()
    ok = ea.tensor([4.0, 8.0]).to(dtype).cuda()
    found, inv = ea.zeros((), dtype=f32).cuda(), ea.full((), 0.5, dtype=f32).cuda()
    ea._amp_foreach_non_finite_check_and_unscale_([ok], found, inv)
    assert found.item() == 0.0 and ok.cpu().to(f32).tolist() == [2.0, 4.0]
    ea._amp_foreach_non_finite_check_and_unscale_([g], found, inv)
    assert found.item() == 1.0
    s, t = ea.full((), 8.0, dtype=f32).cuda(), ea.zeros((), dtype=ea.int32).cuda()
    ea._amp_update_scale_(s, t, found, 2.0, 0.5, 2)
    assert s.item() == 4.0 and t.item() == 0
