"""foreach / fused paths against the single-tensor reference loop.

Same parameters and gradients (mixed float32/float64 buckets, an empty-grad parameter),
several steps; the foreach path performs the same arithmetic in a different grouping,
so results agree to rounding; state keys and dtypes agree exactly.

The paths run on aten's ``_foreach_*`` / ``_fused_*_`` operators. An aten built without
them must refuse ``foreach=True`` / ``fused=True`` with an error naming the operator (and
default to the single-tensor loop): that is what these tests check on such a build.
"""

from __future__ import annotations

from typing import Any

import ember.aten as ea
import ember.optim as optim
import numpy as np
import pytest
from test_algorithms import CASES, _id

HAS_FOREACH = hasattr(ea, "_foreach_add_")

SHAPES = [(4, 5), (7,), (), (3, 2)]
DTYPES = [ea.float32, ea.float64, ea.float32, ea.float64]
STEPS = 4


def _run(name: str, kwargs: dict[str, Any]) -> tuple[list[Any], Any]:
    rng = np.random.default_rng(3)
    params = [
        ea.tensor(rng.standard_normal(s).tolist(), dtype=d).requires_grad_()
        for s, d in zip(SHAPES, DTYPES, strict=True)
    ]
    extra = ea.zeros(3, requires_grad=True)  # never gets a gradient: skipped by every path
    opt = getattr(optim, name)([*params, extra], **kwargs)
    for _ in range(STEPS):
        for p in params:
            p.grad = ea.tensor(rng.standard_normal(tuple(p.shape)).tolist(), dtype=p.dtype)
        opt.step()
    assert extra.tolist() == [0.0, 0.0, 0.0]
    return params, opt


def _assert_same(a: tuple[list[Any], Any], b: tuple[list[Any], Any]) -> None:
    for p, q in zip(a[0], b[0], strict=True):
        tol = 1e-5 if p.dtype == ea.float32 else 1e-12
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=tol, atol=tol)
    for p, q in zip(a[0], b[0], strict=True):
        sa, sb = a[1].state[p], b[1].state[q]
        assert sa.keys() == sb.keys()
        for k in sa:
            if isinstance(sa[k], ea.Tensor):
                assert sa[k].dtype == sb[k].dtype, k
                tol = 1e-5 if sa[k].dtype == ea.float32 else 1e-12
                np.testing.assert_allclose(sa[k].numpy(), sb[k].numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_foreach_matches_single_tensor(case: tuple[str, dict[str, Any]]) -> None:
    name, kwargs = case
    if not HAS_FOREACH:
        with pytest.raises(RuntimeError, match="has no _foreach_add_ operator"):
            _run(name, {**kwargs, "foreach": True})
        return
    _assert_same(_run(name, {**kwargs, "foreach": True}), _run(name, {**kwargs, "foreach": False}))


FUSED = [c for c in CASES if c[0] in ("SGD", "Adam", "AdamW")]


@pytest.mark.parametrize("case", FUSED, ids=[_id(c) for c in FUSED])
def test_fused_matches_single_tensor(case: tuple[str, dict[str, Any]]) -> None:
    name, kwargs = case
    op = "_fused_adamw_" if name == "AdamW" or kwargs.get("decoupled_weight_decay") else f"_fused_{name.lower()}_"
    if not hasattr(ea, op):
        with pytest.raises(RuntimeError, match=f"has no {op} operator"):
            _run(name, {**kwargs, "fused": True})
        return
    fused, single = _run(name, {**kwargs, "fused": True}), _run(name, {**kwargs, "foreach": False})
    _assert_same(fused, single)


def test_foreach_is_the_default_on_one_device() -> None:
    p = ea.ones(3, requires_grad=True)
    p.grad = ea.ones(3)
    if not HAS_FOREACH:
        optim.Adam([p], lr=0.1).step()  # the single-tensor loop, no error
        assert p.tolist() == pytest.approx([0.9] * 3)
        return
    calls: list[str] = []
    original = ea._foreach_add_

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append("foreach")
        return original(*args, **kwargs)

    ea._foreach_add_ = spy
    try:
        optim.Adam([p], lr=0.1).step()
        assert calls
        calls.clear()
        optim.Adam([p], lr=0.1, foreach=False).step()
        assert not calls
    finally:
        ea._foreach_add_ = original


def test_zero_grad_without_none_uses_foreach_zero() -> None:
    a, b = ea.ones(3, requires_grad=True), ea.ones(2, dtype=ea.float64, requires_grad=True)
    opt = optim.SGD([a, b], lr=0.1, foreach=True)
    a.grad, b.grad = ea.full((3,), 2.0), ea.full((2,), 3.0, dtype=ea.float64)
    grads = (a.grad, b.grad)
    opt.zero_grad(set_to_none=False)  # _foreach_zero_ when aten has it, else tensor by tensor
    assert a.grad is grads[0] and b.grad is grads[1]  # zeroed in place
    assert a.grad.tolist() == [0.0] * 3 and b.grad.tolist() == [0.0] * 2
