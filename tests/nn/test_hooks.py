"""Module hooks: forward pre/post (kwargs, prepend, always_call, global), full backward (pre) hooks."""

from __future__ import annotations

import ember.aten as ea
import numpy as np
import pytest
from ember import nn


class Scale(nn.Module):
    def __init__(self, k: float) -> None:
        super().__init__()
        self.k = k

    def forward(self, x: ea.Tensor, *, bias: float = 0.0) -> ea.Tensor:
        return x * self.k + bias


def test_forward_hook_order_global_first_and_prepend() -> None:
    m = Scale(2.0)
    order: list[str] = []
    m.register_forward_pre_hook(lambda mod, args: order.append("pre1"))
    m.register_forward_pre_hook(lambda mod, args: order.append("pre0"), prepend=True)
    m.register_forward_hook(lambda mod, args, out: order.append("post1"))
    m.register_forward_hook(lambda mod, args, out: order.append("post0"), prepend=True)
    g1 = nn.register_module_forward_pre_hook(lambda mod, args: order.append("gpre"))
    g2 = nn.register_module_forward_hook(lambda mod, args, out: order.append("gpost"))
    try:
        m(ea.ones(1))
    finally:
        g1.remove()
        g2.remove()
    assert order == ["gpre", "pre0", "pre1", "gpost", "post0", "post1"]


def test_hooks_replace_args_and_output() -> None:
    m = Scale(2.0)
    h1 = m.register_forward_pre_hook(lambda mod, args: args[0] + 1)  # a single value becomes (value,)
    h2 = m.register_forward_hook(lambda mod, args, out: out * 10)
    assert m(ea.tensor([1.0])).tolist() == [40.0]
    h1.remove()
    assert m(ea.tensor([1.0])).tolist() == [20.0]
    h2.remove()
    assert m(ea.tensor([1.0])).tolist() == [2.0]
    assert not m._forward_hooks and not m._forward_pre_hooks


def test_hooks_with_kwargs() -> None:
    m = Scale(1.0)
    seen: list[object] = []

    def pre(mod, args, kwargs):  # type: ignore[no-untyped-def]
        seen.append(dict(kwargs))
        return args, {"bias": 5.0}

    def post(mod, args, kwargs, out):  # type: ignore[no-untyped-def]
        seen.append(kwargs["bias"])

    m.register_forward_pre_hook(pre, with_kwargs=True)
    h = m.register_forward_hook(post, with_kwargs=True)
    assert m(ea.tensor([1.0]), bias=1.0).tolist() == [6.0]
    assert seen == [{"bias": 1.0}, 5.0]
    h.remove()
    assert not m._forward_hooks_with_kwargs  # the handle cleans the flag dict too
    m.register_forward_pre_hook(lambda mod, a, k: 3, with_kwargs=True)
    with pytest.raises(
        RuntimeError, match=r"forward pre-hook must return None or a tuple of \(new_args, new_kwargs\), but got 3."
    ):
        m(ea.ones(1))


def test_always_call_hook_runs_when_forward_raises() -> None:
    class Boom(nn.Module):
        def forward(self, x):  # type: ignore[no-untyped-def]
            raise ValueError("boom")

    m = Boom()
    calls: list[str] = []
    m.register_forward_hook(lambda mod, args, out: calls.append("always"), always_call=True)
    m.register_forward_hook(lambda mod, args, out: calls.append("normal"))
    with pytest.raises(ValueError, match="boom"):
        m(1)
    assert calls == ["always"]


def test_handle_context_manager() -> None:
    m = Scale(1.0)
    with m.register_forward_hook(lambda mod, a, o: o + 1):
        assert m(ea.zeros(1)).tolist() == [1.0]
    assert m(ea.zeros(1)).tolist() == [0.0]


def test_full_backward_hooks_see_and_replace_gradients() -> None:
    lin = nn.Linear(3, 2).double()
    x = ea.randn(4, 3, dtype=ea.float64, requires_grad=True)
    log: list[str] = []
    captured: dict[str, object] = {}

    def pre(mod, grad_output):  # type: ignore[no-untyped-def]
        log.append("pre")
        captured["go"] = grad_output[0].clone()
        return (grad_output[0] * 2,)

    def post(mod, grad_input, grad_output):  # type: ignore[no-untyped-def]
        log.append("post")
        captured["gi"] = grad_input[0].clone()
        captured["go2"] = grad_output[0].clone()
        return (grad_input[0] * 0 + 7,)

    lin.register_full_backward_pre_hook(pre)
    lin.register_full_backward_hook(post)
    y = lin(x)
    y.sum().backward()
    assert log == ["pre", "post"]
    np.testing.assert_allclose(captured["go"].numpy(), np.ones((4, 2)))
    np.testing.assert_allclose(captured["go2"].numpy(), 2 * np.ones((4, 2)))
    w = lin.weight.detach().numpy()
    np.testing.assert_allclose(captured["gi"].numpy(), 2 * np.ones((4, 2)) @ w)
    np.testing.assert_allclose(x.grad.numpy(), np.full((4, 3), 7.0))  # replaced grad_input
    # the parameter gradients saw the pre-hook's doubled grad_output
    np.testing.assert_allclose(lin.bias.grad.numpy(), np.full(2, 8.0))


def test_full_backward_hook_input_without_grad() -> None:
    lin = nn.Linear(3, 2)
    got: list[object] = []
    lin.register_full_backward_hook(lambda mod, gi, go: got.append((gi, tuple(go[0].shape))))
    with pytest.warns(
        UserWarning, match="Full backward hook is firing when gradients are computed with respect to module outputs"
    ):
        lin(ea.randn(5, 3)).sum().backward()
    assert got == [((None,), (5, 2))]
    lin.register_full_backward_hook(lambda mod, gi, go: (ea.ones(1),))
    with pytest.raises(
        RuntimeError, match="Backward hook for Modules where no input requires gradient should always return None"
    ):
        with pytest.warns(UserWarning):
            lin(ea.randn(5, 3)).sum().backward()


def test_global_full_backward_hook_and_sequential_order() -> None:
    net = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))
    order: list[str] = []
    handles = [m.register_full_backward_hook(lambda mod, gi, go, n=n: order.append(n)) for n, m in net.named_children()]
    g = nn.register_module_full_backward_hook(lambda mod, gi, go: order.append("g:" + type(mod).__name__))
    try:
        net(ea.randn(4, 2, requires_grad=True)).sum().backward()
    finally:
        g.remove()
        for h in handles:
            h.remove()
    # backward runs the last layer first; the global hook before the module's own
    assert order == ["g:Linear", "2", "g:Tanh", "1", "g:Linear", "0", "g:Sequential"]


def test_hook_replacing_wrong_arity() -> None:
    lin = nn.Linear(2, 2)
    lin.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
    x = ea.randn(3, 2, requires_grad=True)
    with pytest.raises(
        RuntimeError, match="Backward hook returned an invalid number of grad_input, got 2, but expected 1"
    ):
        lin(x).sum().backward()


def test_registration_hooks() -> None:
    seen: list[str] = []
    h1 = nn.modules.module.register_module_parameter_registration_hook(lambda m, n, p: seen.append("p:" + n))
    h2 = nn.modules.module.register_module_buffer_registration_hook(lambda m, n, b: seen.append("b:" + n))
    h3 = nn.modules.module.register_module_module_registration_hook(lambda m, n, s: seen.append("m:" + n))
    try:
        m = nn.Module()
        m.w = nn.Parameter(ea.zeros(1))
        m.register_buffer("r", ea.zeros(1))
        m.sub = nn.Identity()
    finally:
        h1.remove()
        h2.remove()
        h3.remove()
    assert seen == ["p:w", "b:r", "m:sub"]


def test_no_hooks_calls_forward_directly() -> None:
    m = Scale(3.0)
    assert m(ea.ones(1), bias=1.0).tolist() == [4.0]
