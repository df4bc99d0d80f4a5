"""ember.nn.utils: clip_grad_norm_/clip_grad_value_, parameters_to_vector, parametrizations (custom,
weight_norm, spectral_norm), fusion of Linear with a hand-set batch norm."""

from __future__ import annotations

import copy
import math

import ember.aten as ea
import numpy as np
import pytest
from ember import nn
from ember.autograd import gradcheck
from ember.nn.utils import parametrizations, parametrize


def _np(t: ea.Tensor) -> np.ndarray:
    return t.detach().numpy()


def _with_grads(*shapes: tuple[int, ...]) -> list[nn.Parameter]:
    ps = []
    for i, s in enumerate(shapes):
        p = nn.Parameter(ea.zeros(*s, dtype=ea.float64))
        p.grad = ea.arange(float(np.prod(s)), dtype=ea.float64).reshape(*s) - i
        ps.append(p)
    return ps


@pytest.mark.parametrize("norm_type", [2.0, 1.0, math.inf, 3.0])
def test_clip_grad_norm(norm_type: float) -> None:
    ps = _with_grads((3, 4), (5,))
    grads = [_np(p.grad).copy() for p in ps]
    flat = np.concatenate([g.ravel() for g in grads])
    expected = np.abs(flat).max() if norm_type == math.inf else (np.abs(flat) ** norm_type).sum() ** (1 / norm_type)
    total = nn.utils.clip_grad_norm_(ps, max_norm=1.0, norm_type=norm_type)
    assert float(total) == pytest.approx(expected, rel=1e-12)
    coef = min(1.0, 1.0 / (expected + 1e-6))
    for p, g in zip(ps, grads, strict=True):
        np.testing.assert_allclose(_np(p.grad), g * coef, rtol=1e-12)
    # already within the bound: unchanged
    small = _with_grads((2,))
    before = _np(small[0].grad).copy()
    nn.utils.clip_grad_norm_(small, max_norm=100.0)
    np.testing.assert_array_equal(_np(small[0].grad), before)


def test_clip_grad_norm_edge_cases() -> None:
    p = nn.Parameter(ea.zeros(2))
    assert float(nn.utils.clip_grad_norm_([p], 1.0)) == 0.0  # no gradients
    q = nn.Parameter(ea.zeros(2))
    q.grad = ea.tensor([float("nan"), 1.0])
    with pytest.raises(
        RuntimeError, match=r"The total norm of order 2.0 for gradients from `parameters` is non-finite"
    ):
        nn.utils.clip_grad_norm_(q, 1.0, error_if_nonfinite=True)
    single = nn.Parameter(ea.zeros(2))
    single.grad = ea.tensor([3.0, 4.0])
    assert float(nn.utils.clip_grad_norm_(single, 1.0)) == pytest.approx(5.0)  # a bare tensor is accepted
    assert single.grad.tolist() == pytest.approx([0.6, 0.8], rel=1e-5)
    assert float(nn.utils.get_total_norm([ea.tensor([3.0]), ea.tensor([4.0])])) == pytest.approx(5.0)


def test_clip_grad_value() -> None:
    ps = _with_grads((3, 4))
    nn.utils.clip_grad_value_(ps, 2.5)
    np.testing.assert_array_equal(_np(ps[0].grad), np.clip(np.arange(12.0).reshape(3, 4), -2.5, 2.5))


def test_parameters_vector_round_trip() -> None:
    net = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
    vec = nn.utils.parameters_to_vector(net.parameters())
    assert tuple(vec.shape) == (6 + 2 + 2 + 1,)
    np.testing.assert_array_equal(_np(vec[:6]), _np(net[0].weight).ravel())
    new = ea.arange(11.0)
    nn.utils.vector_to_parameters(new, net.parameters())
    assert net[0].weight.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] and net[1].bias.tolist() == [10.0]
    with pytest.raises(TypeError, match=r"expected torch.Tensor, but got: list"):
        nn.utils.vector_to_parameters([1.0], net.parameters())  # type: ignore[arg-type]


class Symmetric(nn.Module):
    def forward(self, X: ea.Tensor) -> ea.Tensor:
        return X.triu() + X.triu(1).transpose(-1, -2)

    def right_inverse(self, A: ea.Tensor) -> ea.Tensor:
        return A.triu()


def test_register_parametrization() -> None:
    lin = nn.Linear(3, 3)
    parametrize.register_parametrization(lin, "weight", Symmetric())
    assert type(lin).__name__ == "ParametrizedLinear" and isinstance(lin, nn.Linear)
    assert parametrize.is_parametrized(lin) and parametrize.is_parametrized(lin, "weight")
    assert not parametrize.is_parametrized(lin, "bias")
    assert parametrize.type_before_parametrizations(lin) is nn.Linear
    w = _np(lin.weight)
    np.testing.assert_array_equal(w, w.T)
    assert list(lin.state_dict()) == ["bias", "parametrizations.weight.original"]
    assert [n for n, _ in lin.named_parameters()] == ["bias", "parametrizations.weight.original"]
    # gradients reach the original through the parametrization
    lin(ea.ones(2, 3)).sum().backward()
    assert lin.parametrizations.weight.original.grad is not None
    # assigning goes through right_inverse
    target = ea.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 5.0], [3.0, 5.0, 6.0]])
    lin.weight = target
    np.testing.assert_array_equal(_np(lin.weight), _np(target))
    with parametrize.cached():
        assert lin.weight is lin.weight
    assert lin.weight is not lin.weight
    parametrize.remove_parametrizations(lin, "weight")
    assert type(lin) is nn.Linear and isinstance(lin.weight, nn.Parameter)
    np.testing.assert_array_equal(_np(lin.weight), _np(target))
    assert list(lin.state_dict()) == ["bias", "weight"]
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        parametrize.remove_parametrizations(lin, "weight")
    with pytest.raises(
        ValueError, match="does not have a parameter, a buffer, or a parametrized element with name 'nope'"
    ):
        parametrize.register_parametrization(lin, "nope", Symmetric())


def test_parametrization_shape_check() -> None:
    class Bad(nn.Module):
        def forward(self, X: ea.Tensor) -> ea.Tensor:
            return X[:1]

    with pytest.raises(ValueError, match="Registering a parametrization may not change the shape of the tensor"):
        parametrize.register_parametrization(nn.Linear(2, 2), "weight", Bad())


def test_weight_norm() -> None:
    lin = nn.Linear(4, 3).double()
    w0 = _np(lin.weight).copy()
    parametrizations.weight_norm(lin)
    g = lin.parametrizations.weight.original0
    v = lin.parametrizations.weight.original1
    assert tuple(g.shape) == (3, 1) and tuple(v.shape) == (3, 4)
    np.testing.assert_allclose(_np(g).ravel(), np.linalg.norm(w0, axis=1), rtol=1e-12)
    np.testing.assert_allclose(_np(lin.weight), w0, rtol=1e-12)
    assert list(lin.state_dict()) == ["bias", "parametrizations.weight.original0", "parametrizations.weight.original1"]
    g.data.mul_(2.0)
    np.testing.assert_allclose(_np(lin.weight), 2 * w0, rtol=1e-12)
    # an old-style checkpoint (weight_g / weight_v) loads through the compatibility hook
    fresh = parametrizations.weight_norm(nn.Linear(4, 3).double())
    fresh.load_state_dict({"bias": lin.bias.detach(), "weight_g": g.detach(), "weight_v": v.detach()})
    np.testing.assert_allclose(_np(fresh.weight), 2 * w0, rtol=1e-12)
    gg = g.detach().clone().requires_grad_()
    vv = v.detach().clone().requires_grad_()
    assert gradcheck(lambda a, b: lin.parametrizations.weight[0](a, b), (gg, vv))


def test_spectral_norm() -> None:
    ea.manual_seed(0)
    lin = nn.Linear(6, 4).double()
    w0 = _np(lin.weight).copy()
    parametrizations.spectral_norm(lin)
    sigma = np.linalg.svd(w0, compute_uv=False)[0]
    np.testing.assert_allclose(_np(lin.weight), w0 / sigma, rtol=1e-6)
    assert sorted(n for n, _ in lin.named_buffers()) == ["parametrizations.weight.0._u", "parametrizations.weight.0._v"]
    assert tuple(lin.parametrizations.weight[0]._u.shape) == (4,)
    lin.eval()
    u_before = _np(lin.parametrizations.weight[0]._u).copy()
    _ = lin.weight
    np.testing.assert_array_equal(_np(lin.parametrizations.weight[0]._u), u_before)  # no power step in eval
    ct = parametrizations.spectral_norm(nn.ConvTranspose2d(3, 5, 2))
    assert ct.parametrizations.weight[0].dim == 1
    with pytest.raises(ValueError, match="has no parameter or buffer with name 'nope'"):
        parametrizations.spectral_norm(nn.Linear(2, 2), "nope")


def test_deepcopy_parametrized() -> None:
    lin = parametrizations.weight_norm(nn.Linear(3, 2))
    c = copy.deepcopy(lin)
    assert type(c).__name__ == "ParametrizedLinear"
    np.testing.assert_array_equal(_np(c.weight), _np(lin.weight))


def test_fuse_linear_bn_by_formula() -> None:
    # the batch norm's eval transform written out: (x - mean) / sqrt(var + eps) * gamma + beta
    lin = nn.Linear(3, 2).double().eval()

    class FakeBN(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.num_features = 2
            self.eps = 1e-5
            self.weight = nn.Parameter(ea.tensor([1.5, -0.5], dtype=ea.float64))
            self.bias = nn.Parameter(ea.tensor([0.1, 0.2], dtype=ea.float64))
            self.register_buffer("running_mean", ea.tensor([0.3, -0.7], dtype=ea.float64))
            self.register_buffer("running_var", ea.tensor([2.0, 0.5], dtype=ea.float64))

    bn = FakeBN().eval()
    fused = nn.utils.fuse_linear_bn_eval(lin, bn)
    x = ea.randn(4, 3, dtype=ea.float64)
    y = _np(lin(x))
    ref = (y - _np(bn.running_mean)) / np.sqrt(_np(bn.running_var) + 1e-5) * _np(bn.weight) + _np(bn.bias)
    np.testing.assert_allclose(_np(fused(x)), ref, rtol=1e-12)
    assert fused is not lin and isinstance(fused.weight, nn.Parameter)
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        nn.utils.fuse_linear_bn_eval(lin.train(), bn)


def test_clip_grad_norm_paths_agree() -> None:
    # foreach=None takes aten's _foreach_norm when it exists; foreach=False the per-tensor loop
    a = _with_grads((3, 4), (5,), (2, 2))
    b = _with_grads((3, 4), (5,), (2, 2))
    ta = nn.utils.clip_grad_norm_(a, 0.5)
    tb = nn.utils.clip_grad_norm_(b, 0.5, foreach=False)
    assert float(ta) == pytest.approx(float(tb), rel=1e-12)
    for p, q in zip(a, b, strict=True):
        np.testing.assert_allclose(_np(p.grad), _np(q.grad), rtol=1e-12)
    mixed = [*_with_grads((2,)), nn.Parameter(ea.zeros(3))]
    mixed[1].grad = ea.ones(3)  # float32 next to float64: grouped by dtype
    total = nn.utils.clip_grad_norm_(mixed, 1.0)
    assert float(total) == pytest.approx(math.sqrt(1 + 3), rel=1e-6)


def test_hook_based_weight_norm() -> None:
    lin = nn.Linear(4, 3).double()
    w0 = _np(lin.weight).copy()
    with pytest.warns(FutureWarning, match="torch.nn.utils.weight_norm is deprecated"):
        nn.utils.weight_norm(lin)
    assert [n for n, _ in lin.named_parameters()] == ["bias", "weight_g", "weight_v"]
    assert list(lin.state_dict()) == ["bias", "weight_g", "weight_v"]
    np.testing.assert_allclose(_np(lin.weight_g).ravel(), np.linalg.norm(w0, axis=1), rtol=1e-12)
    lin.weight_g.data.mul_(3.0)
    x = ea.randn(2, 4, dtype=ea.float64)
    np.testing.assert_allclose(_np(lin(x)), _np(x) @ (3 * w0).T + _np(lin.bias), rtol=1e-10)  # hook recomputed it
    lin(x).sum().backward()
    assert lin.weight_g.grad is not None and lin.weight_v.grad is not None
    with (
        pytest.warns(FutureWarning),
        pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks on the same parameter weight"),
    ):
        nn.utils.weight_norm(lin)
    nn.utils.remove_weight_norm(lin)
    assert isinstance(lin.weight, nn.Parameter) and not lin._forward_pre_hooks
    np.testing.assert_allclose(_np(lin.weight), 3 * w0, rtol=1e-10)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found in"):
        nn.utils.remove_weight_norm(lin)


def test_hook_based_spectral_norm() -> None:
    ea.manual_seed(1)
    lin = nn.Linear(5, 4).double()
    w0 = _np(lin.weight).copy()
    nn.utils.spectral_norm(lin, n_power_iterations=30)
    assert [n for n, _ in lin.named_parameters()] == ["bias", "weight_orig"]
    assert [n for n, _ in lin.named_buffers()] == ["weight_u", "weight_v"]
    sd = lin.state_dict()
    assert list(sd) == ["bias", "weight_orig", "weight_u", "weight_v"]
    assert sd._metadata[""]["spectral_norm"] == {"weight.version": 1}
    x = ea.randn(3, 5, dtype=ea.float64)
    out = lin(x)  # training: 30 power steps, then weight = W / sigma
    sigma = np.linalg.svd(w0, compute_uv=False)[0]
    np.testing.assert_allclose(_np(lin.weight), w0 / sigma, rtol=1e-6)
    np.testing.assert_allclose(_np(out), _np(x) @ (w0 / sigma).T + _np(lin.bias), rtol=1e-6)
    nn.utils.remove_spectral_norm(lin)
    assert isinstance(lin.weight, nn.Parameter) and list(lin.state_dict()) == ["bias", "weight"]
    with pytest.raises(ValueError, match="Expected n_power_iterations to be positive"):
        nn.utils.spectral_norm(nn.Linear(2, 2), n_power_iterations=0)
