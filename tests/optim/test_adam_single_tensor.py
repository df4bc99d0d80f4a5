"""Adam's single-tensor loop: one fused pass per float32 / float64 parameter, op by op otherwise.

The one-pass path (the fused kernel over one parameter's own tensors) is checked against the
update written out in NumPy (test_algorithms.py does so for every option), here for which path
runs (ember.aten.profiler counts the operators), for non-contiguous parameters, for AdamW, and
for the parameters that keep the op-by-op loop (bfloat16), against the same reference.
"""

from __future__ import annotations

from typing import Any

import ember.aten as ea
import ember.optim as optim
import numpy as np
import optim_reference as ref
import pytest
from ember.aten import profiler


def _ops_of(fn: Any) -> dict[str, int]:
    with profiler.profile() as prof:
        fn()
    return {e.key: e.count for e in prof.key_averages()}


def _steps(opt: Any, params: list[Any], grads: list[list[np.ndarray]]) -> None:
    for gs in grads:
        for p, g in zip(params, gs, strict=True):
            p.grad = ea.tensor(g.tolist(), dtype=p.dtype)
        opt.step()


def _data(shapes: list[tuple[int, ...]], steps: int = 3) -> tuple[list[np.ndarray], list[list[np.ndarray]]]:
    rng = np.random.default_rng(0)
    params = [rng.standard_normal(s) for s in shapes]
    return params, [[rng.standard_normal(s) for s in shapes] for _ in range(steps)]


@pytest.mark.parametrize("dtype", [ea.float32, ea.float64], ids=str)
def test_float_parameters_take_one_fused_pass_each(dtype: Any) -> None:
    params, grads = _data([(4, 5), (7,)])
    ps = [ea.tensor(p.tolist(), dtype=dtype).requires_grad_() for p in params]
    opt = optim.Adam(ps, lr=0.01, foreach=False)
    for p, g in zip(ps, grads[0], strict=True):
        p.grad = ea.tensor(g.tolist(), dtype=dtype)
    counts = _ops_of(opt.step)
    assert counts.get("aten::_fused_adam_") == 2
    assert "aten::lerp_.Scalar" not in counts and "aten::addcdiv_" not in counts


@pytest.mark.parametrize(
    "kwargs",
    [
        {"lr": 0.01},
        {"lr": 0.01, "amsgrad": True, "maximize": True, "weight_decay": 0.1},
        {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True},
    ],
    ids=["plain", "amsgrad-maximize-wd", "adamw"],
)
def test_one_pass_on_a_non_contiguous_parameter_matches_numpy(kwargs: dict[str, Any]) -> None:
    params, grads = _data([(3, 5)])
    p = ea.tensor(params[0].T.tolist(), dtype=ea.float64).t().detach().requires_grad_()  # (3, 5), strides (1, 3)
    assert not p.is_contiguous()
    opt = optim.Adam([p], foreach=False, **kwargs)
    _steps(opt, [p], grads)
    want = ref.adam(params, grads, **kwargs)
    np.testing.assert_allclose(p.detach().numpy(), want[0], rtol=1e-10, atol=1e-12)
    assert p.stride() == (1, 3)


def test_adamw_single_tensor_takes_the_adamw_kernel() -> None:
    params, grads = _data([(6,)])
    ps = [ea.tensor(params[0].tolist(), dtype=ea.float32).requires_grad_()]
    opt = optim.AdamW(ps, lr=0.01, weight_decay=0.1, foreach=False)
    ps[0].grad = ea.tensor(grads[0][0].tolist(), dtype=ea.float32)
    counts = _ops_of(opt.step)
    assert counts.get("aten::_fused_adamw_") == 1 and "aten::_fused_adam_" not in counts


def test_bfloat16_parameters_keep_the_op_by_op_loop() -> None:
    params, grads = _data([(4, 4)])
    ps = [ea.tensor(params[0].tolist(), dtype=ea.bfloat16).requires_grad_()]
    opt = optim.Adam(ps, lr=0.01, foreach=False)
    ps[0].grad = ea.tensor(grads[0][0].tolist(), dtype=ea.bfloat16)
    counts = _ops_of(opt.step)
    assert "aten::_fused_adam_" not in counts and counts.get("aten::addcdiv_") == 1
    for gs in grads[1:]:
        ps[0].grad = ea.tensor(gs[0].tolist(), dtype=ea.bfloat16)
        opt.step()
    want = ref.adam(params, grads, lr=0.01)
    np.testing.assert_allclose(ps[0].detach().to(ea.float64).numpy(), want[0], rtol=0.05, atol=0.02)
