"""ember.aten.amp.GradScaler with ember.optim: skipped steps on inf/NaN gradients, the scale's
sequence under PyTorch's documented update rule, unscale_, state_dict, the errors."""

from __future__ import annotations

import math
import pickle
import warnings

import ember.aten as ea
import ember.optim as optim
import numpy as np
import pytest
from ember.aten.amp import GradScaler

f32 = ea.float32


def _model() -> tuple[ea.Tensor, ea.Tensor]:
    w = ea.tensor([[0.5, -1.0], [2.0, 0.25]]).requires_grad_()
    bias = ea.tensor([0.1, -0.2]).requires_grad_()
    return w, bias


def _loss(w: ea.Tensor, bias: ea.Tensor, x: ea.Tensor) -> ea.Tensor:
    return ((ea.mm(x, w) + bias) ** 2).sum()


def _expected_scales(init: float, growth: float, backoff: float, interval: int, bad: list[bool]) -> list[float]:
    """PyTorch's documented rule: an inf/NaN step multiplies the scale by backoff_factor and resets
    the count of clean steps; growth_interval clean steps in a row multiply it by growth_factor."""
    scale, clean, out = init, 0, []
    for is_bad in bad:
        if is_bad:
            scale *= backoff
            clean = 0
        else:
            clean += 1
            if clean == interval:
                scale *= growth
                clean = 0
        out.append(scale)
    return out


def test_sequence_skips_bad_steps_and_adjusts_the_scale() -> None:
    w, bias = _model()
    ref_w, ref_b = w.detach().clone().requires_grad_(), bias.detach().clone().requires_grad_()
    opt = optim.SGD([w, bias], lr=0.01)
    ref_opt = optim.SGD([ref_w, ref_b], lr=0.01)
    scaler = GradScaler("cpu", init_scale=1024.0, growth_factor=2.0, backoff_factor=0.5, growth_interval=3)
    bad = [False, False, True, False, False, False, True, True, False, False, False, False]
    x = ea.tensor([[1.0, 2.0], [-1.0, 0.5]])
    scales = []
    for step, is_bad in enumerate(bad):
        opt.zero_grad()
        loss = _loss(w, bias, x)
        scaler.scale(loss).backward()
        if is_bad:  # an overflow in one gradient (inf on odd steps, NaN on even ones)
            w.grad[0, 1] = math.inf if step % 2 else math.nan
        before = w.detach().clone()
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
        if is_bad:
            np.testing.assert_array_equal(w.detach().numpy(), before.numpy())  # skipped
        else:  # the step equals plain SGD on the unscaled gradient
            ref_opt.zero_grad()
            _loss(ref_w, ref_b, x).backward()
            ref_opt.step()
        np.testing.assert_allclose(w.detach().numpy(), ref_w.detach().numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(bias.detach().numpy(), ref_b.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert scales == _expected_scales(1024.0, 2.0, 0.5, 3, bad)
    assert scales == [1024, 1024, 512, 512, 512, 1024, 512, 256, 256, 256, 512, 512]


def test_defaults_and_state_dict() -> None:
    s = GradScaler("cpu")
    assert s.is_enabled() and s.get_scale() == 65536.0
    assert s.get_growth_factor() == 2.0 and s.get_backoff_factor() == 0.5 and s.get_growth_interval() == 2000
    assert s.state_dict() == {
        "scale": 65536.0,
        "growth_factor": 2.0,
        "backoff_factor": 0.5,
        "growth_interval": 2000,
        "_growth_tracker": 0,
    }
    w, bias = _model()
    opt = optim.SGD([w, bias], lr=0.1)
    s2 = GradScaler("cpu", init_scale=8.0, growth_interval=2)
    for _ in range(3):
        opt.zero_grad()
        s2.scale(_loss(w, bias, ea.ones(1, 2))).backward()
        s2.step(opt)
        s2.update()
    sd = s2.state_dict()
    assert sd["scale"] == 16.0 and sd["_growth_tracker"] == 1 and sd["growth_interval"] == 2
    s3 = GradScaler("cpu")
    s3.load_state_dict(sd)
    assert s3.state_dict() == sd
    s4 = pickle.loads(pickle.dumps(s2))
    assert s4.state_dict() == sd
    with pytest.raises(RuntimeError, match="The source state dict is empty"):
        GradScaler("cpu").load_state_dict({})


def test_unscale_then_clip() -> None:
    w, bias = _model()
    opt = optim.SGD([w, bias], lr=0.1)
    s = GradScaler("cpu", init_scale=256.0)
    s.scale(_loss(w, bias, ea.ones(1, 2))).backward()
    scaled = w.grad.clone()
    s.unscale_(opt)
    np.testing.assert_allclose(w.grad.numpy(), scaled.numpy() / 256.0, rtol=1e-6)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called on this optimizer"):
        s.unscale_(opt)
    s.step(opt)  # does not unscale twice
    with pytest.raises(RuntimeError, match="unscale_\\(\\) is being called after step\\(\\)"):
        s.unscale_(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called since the last update\\(\\)"):
        s.step(opt)
    s.update()


def test_scale_iterables_and_errors() -> None:
    s = GradScaler("cpu", init_scale=4.0)
    a, c = s.scale([ea.ones(2), ea.full((1,), 2.0)])
    assert a.tolist() == [4.0, 4.0] and c.tolist() == [8.0]
    assert s.scale(ea.ones(1)).dtype == f32
    with pytest.raises(ValueError, match="outputs must be a Tensor or an iterable of Tensors"):
        s.scale(3)
    with pytest.raises(ValueError, match=r"The growth factor must be > 1\.0"):
        GradScaler("cpu", growth_factor=1.0)
    with pytest.raises(ValueError, match=r"The backoff factor must be < 1\.0"):
        GradScaler("cpu", backoff_factor=1.5)
    w, bias = _model()
    opt = optim.SGD([w, bias], lr=0.1)
    with pytest.raises(RuntimeError, match="Attempted step but _scale is None"):
        GradScaler("cpu").step(opt)
    s5 = GradScaler("cpu")
    s5.scale(_loss(w, bias, ea.ones(1, 2))).backward()
    with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
        s5.step(opt, closure=lambda: None)
    p16 = ea.ones(2, dtype=ea.float16).requires_grad_()
    p16.grad = ea.ones(2, dtype=ea.float16)
    with pytest.raises(ValueError, match=r"Attempting to unscale FP16 gradients\."):
        s5.unscale_(optim.SGD([p16], lr=0.1))


def test_update_with_new_scale() -> None:
    w, bias = _model()
    opt = optim.SGD([w, bias], lr=0.1)
    s = GradScaler("cpu", init_scale=4.0)
    s.scale(_loss(w, bias, ea.ones(1, 2))).backward()
    s.step(opt)
    s.update(123.0)
    assert s.get_scale() == 123.0
    s.scale(_loss(w, bias, ea.ones(1, 2))).backward()
    s.step(opt)
    s.update(ea.full((), 7.0))
    assert s.get_scale() == 7.0


def test_disabled_scaler_passes_through() -> None:
    s = GradScaler("cpu", enabled=False)
    t = ea.ones(2)
    assert s.scale(t) is t and s.get_scale() == 1.0 and s.state_dict() == {}
    w, bias = _model()
    opt = optim.SGD([w, bias], lr=0.5)
    _loss(w, bias, ea.ones(1, 2)).backward()
    before = w.detach().clone()
    s.step(opt)
    assert not np.array_equal(w.detach().numpy(), before.numpy())


@pytest.mark.skipif(ea.cuda.is_available(), reason="checks the behaviour without a GPU")
def test_cuda_scaler_without_a_gpu_disables_itself() -> None:
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        s = GradScaler()  # device="cuda", PyTorch's default
    assert any("CUDA is not available" in str(x.message) for x in got)
    assert not s.is_enabled()
