"""Autograd through autocast regions: the casts are recorded (AutocastCPU sits above Autograd), so
gradients arrive in the parameters' dtype; the weight-cast cache; custom_fwd / custom_bwd."""

from __future__ import annotations

from typing import Any

import ember.aten as ea
import ember.autograd as autograd
import numpy as np
import pytest
from ember.aten import amp
from ember.aten.amp import autocast_mode

bf16, f16, f32 = ea.bfloat16, ea.float16, ea.float32
_gen = np.random.default_rng(1)


def param(*shape: int) -> ea.Tensor:
    return ea.tensor(_gen.standard_normal(shape).astype(np.float32)).requires_grad_()


def test_gradients_arrive_in_the_parameters_dtype() -> None:
    x = ea.tensor(_gen.standard_normal((4, 3)).astype(np.float32))
    w, bias = param(5, 3), param(5)
    with ea.autocast("cpu"):
        y = ea.nn.linear(x, w, bias)
        assert y.dtype == bf16 and y.requires_grad
        loss = ea.nn.mse_loss(y, ea.zeros(4, 5))  # float32 list: computed in float32
        assert loss.dtype == f32
    loss.backward()
    assert w.grad is not None and bias.grad is not None
    assert w.grad.dtype == f32 and bias.grad.dtype == f32
    # the gradient is the float32 one, to bfloat16's precision
    ref_w, ref_b = w.detach().clone().requires_grad_(), bias.detach().clone().requires_grad_()
    ea.nn.mse_loss(ea.nn.linear(x, ref_w, ref_b), ea.zeros(4, 5)).backward()
    np.testing.assert_allclose(w.grad.numpy(), ref_w.grad.numpy(), rtol=5e-2, atol=5e-2)
    np.testing.assert_allclose(bias.grad.numpy(), ref_b.grad.numpy(), rtol=5e-2, atol=5e-2)


def test_the_graph_records_the_casts() -> None:
    w = param(3, 3)
    with ea.autocast("cpu"):
        y = ea.mm(ea.ones(2, 3), w)
    names = []
    node = y.grad_fn
    assert node is not None
    stack = [node]
    while stack:
        n = stack.pop()
        names.append(type(n).__name__)
        stack.extend(fn for fn, _ in n.next_functions if fn is not None)
    assert any("ToCopy" in nm for nm in names), names


def test_cast_cache_inside_one_region() -> None:
    w = param(4, 4)
    x = ea.ones(2, 4)
    st = autocast_mode._state
    with ea.autocast("cpu"):
        ea.mm(x, w)
        ea.mm(x, w)
        assert len(st.cache) == 1
        (src, cast) = next(iter(st.cache.values()))
        assert src is w and cast.dtype == bf16
        # the same cast is reused: one ToCopy node feeds both products
        a, c = ea.mm(x, w), ea.mm(x, w)
        assert a.grad_fn.next_functions[1][0] is c.grad_fn.next_functions[1][0]
        with ea.autocast("cpu"):  # a nested region shares the cache
            ea.mm(x, w)
            assert len(st.cache) == 1
        assert len(st.cache) == 1  # only the outermost exit clears it
        # not cached: tensors that are not leaves requiring grad, or in float64 / already lower
        ea.mm(x, w * 2)
        ea.mm(x, ea.ones(4, 4))
        assert len(st.cache) == 1
    assert len(st.cache) == 0


def test_cache_disabled() -> None:
    w = param(4, 4)
    with ea.autocast("cpu", cache_enabled=False):
        assert not ea.is_autocast_cache_enabled()
        a, c = ea.mm(ea.ones(2, 4), w), ea.mm(ea.ones(2, 4), w)
        assert len(autocast_mode._state.cache) == 0
        assert a.grad_fn.next_functions[1][0] is not c.grad_fn.next_functions[1][0]
    assert ea.is_autocast_cache_enabled()


def test_backward_through_conv_and_cross_entropy() -> None:
    x = ea.tensor(_gen.standard_normal((2, 1, 6, 6)).astype(np.float32))
    w, bias = param(3, 1, 3, 3), param(3)
    target = ea.tensor([1, 2])
    with ea.autocast("cpu"):
        h = ea.conv2d(x, w, bias).relu()
        assert h.dtype == bf16
        logits = h.flatten(1)[:, :3]
        loss = ea.nn.cross_entropy_loss(logits, target)
        assert loss.dtype == f32
    loss.backward()
    assert w.grad.dtype == f32 and bias.grad.dtype == f32
    assert np.isfinite(w.grad.numpy()).all() and np.abs(w.grad.numpy()).sum() > 0


class _MyMM(autograd.Function):
    @staticmethod
    @amp.custom_fwd(device_type="cpu")
    def forward(ctx: Any, a: ea.Tensor, c: ea.Tensor) -> ea.Tensor:
        ctx.save_for_backward(a, c)
        ctx.fwd_enabled = ea.is_autocast_enabled("cpu")
        return ea.mm(a, c)

    @staticmethod
    @amp.custom_bwd(device_type="cpu")
    def backward(ctx: Any, g: ea.Tensor) -> tuple[ea.Tensor, ea.Tensor]:
        a, c = ctx.saved_tensors
        ctx.bwd_enabled = ea.is_autocast_enabled("cpu")
        return ea.mm(g, c.t()), ea.mm(a.t(), g)


class _MyMMFloat32(autograd.Function):
    @staticmethod
    @amp.custom_fwd(device_type="cpu", cast_inputs=f32)
    def forward(ctx: Any, a: ea.Tensor, c: ea.Tensor) -> ea.Tensor:
        ctx.dtypes = (a.dtype, c.dtype)
        ctx.fwd_enabled = ea.is_autocast_enabled("cpu")
        ctx.save_for_backward(a, c)
        return ea.mm(a, c)

    @staticmethod
    @amp.custom_bwd(device_type="cpu")
    def backward(ctx: Any, g: ea.Tensor) -> tuple[ea.Tensor, ea.Tensor]:
        a, c = ctx.saved_tensors
        ctx.bwd_enabled = ea.is_autocast_enabled("cpu")
        return ea.mm(g, c.t()), ea.mm(a.t(), g)


def test_custom_fwd_bwd_run_in_the_forward_state() -> None:
    a, c = param(2, 3), param(3, 2)
    with ea.autocast("cpu"):
        y = _MyMM.apply(a, c)
    assert y.dtype == bf16
    y.float().sum().backward()  # backward outside the region: custom_bwd re-enters it
    ctx = y.grad_fn  # a custom Function's node is its ctx
    assert ctx.fwd_enabled is True and ctx.bwd_enabled is True
    assert not ea.is_autocast_enabled("cpu")
    assert a.grad.dtype == f32 and c.grad.dtype == f32


def test_custom_fwd_cast_inputs() -> None:
    a, c = ea.ones(2, 3, dtype=bf16).requires_grad_(), param(3, 2)
    with ea.autocast("cpu"):
        y = _MyMMFloat32.apply(a, c)
    assert y.dtype == f32  # ran with autocast off, on float32 inputs
    assert y.grad_fn.fwd_enabled is False and y.grad_fn.dtypes == (f32, f32)
    y.sum().backward()
    assert y.grad_fn.bwd_enabled is False  # backward in the forward's state: autocast off
    assert a.grad.dtype == bf16 and c.grad.dtype == f32
    # outside a region the inputs are not cast
    y2 = _MyMMFloat32.apply(ea.ones(2, 3, dtype=bf16), ea.ones(3, 2, dtype=bf16))
    assert y2.dtype == bf16


def test_custom_fwd_needs_a_device_type_string() -> None:
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        amp.custom_fwd(lambda ctx: None, device_type=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        amp.custom_fwd(lambda ctx: None)  # type: ignore[call-arg]


@pytest.mark.parametrize("dtype", [bf16, f16])
def test_autocast_dtypes_backward(dtype: Any) -> None:
    w = param(3, 3)
    with ea.autocast("cpu", dtype=dtype):
        y = ea.matmul(ea.ones(2, 3), w)
        assert y.dtype == dtype
    y.sum().backward()
    assert w.grad.dtype == f32
    np.testing.assert_allclose(w.grad.numpy(), np.full((3, 3), 2.0), rtol=1e-2)
