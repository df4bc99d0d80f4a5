"""Every optimizer x option combination against its update written out in NumPy.

A few steps on fixed parameters with fixed gradients (set on ``.grad`` directly), float64
so that the comparison is tight; then the foreach / fused paths against the single-tensor
loop, and float32 parameters against the float64 reference with a float32 tolerance.
"""

from __future__ import annotations

from typing import Any

import ember.aten as ea
import ember.optim as optim
import numpy as np
import optim_reference as ref
import pytest

SHAPES = [(3, 4), (5,), ()]
STEPS = 5

# (optimizer, keyword arguments) -- every option of every algorithm, alone and combined
CASES: list[tuple[str, dict[str, Any]]] = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.3}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.05, "maximize": True}),
    ("SGD", {"lr": 0.05, "momentum": 0.5, "dampening": 0.5, "weight_decay": 0.2, "maximize": True}),
    ("Adam", {}),
    ("Adam", {"lr": 0.01, "betas": (0.8, 0.99), "eps": 1e-6}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.01, "amsgrad": True}),
    ("Adam", {"lr": 0.01, "maximize": True, "amsgrad": True, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("AdamW", {}),
    ("AdamW", {"lr": 0.01, "weight_decay": 0.1, "amsgrad": True}),
    ("AdamW", {"lr": 0.01, "weight_decay": 0.0, "maximize": True}),
    ("Adamax", {}),
    ("Adamax", {"lr": 0.01, "betas": (0.8, 0.9), "eps": 1e-3, "weight_decay": 0.1}),
    ("Adamax", {"lr": 0.01, "maximize": True}),
    ("NAdam", {}),
    ("NAdam", {"lr": 0.01, "momentum_decay": 0.1, "weight_decay": 0.1}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True, "maximize": True}),
    ("RAdam", {}),
    ("RAdam", {"lr": 0.01, "betas": (0.9, 0.5)}),  # rho_t > 5 from step 2: the rectified branch
    ("RAdam", {"lr": 0.01, "weight_decay": 0.1, "betas": (0.9, 0.5)}),
    ("RAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True, "maximize": True}),
    ("Adagrad", {}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.1, "weight_decay": 0.1}),
    ("Adagrad", {"lr": 0.1, "initial_accumulator_value": 0.5, "eps": 1e-3, "maximize": True}),
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.5, "eps": 1e-3, "weight_decay": 0.1}),
    ("Adadelta", {"maximize": True}),
    ("RMSprop", {}),
    ("RMSprop", {"lr": 0.01, "alpha": 0.9, "centered": True}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.5, "centered": True, "maximize": True, "eps": 1e-4}),
    ("Rprop", {}),
    ("Rprop", {"lr": 0.1, "etas": (0.3, 1.5), "step_sizes": (0.05, 0.2)}),
    ("Rprop", {"lr": 0.1, "maximize": True}),
    ("ASGD", {}),
    ("ASGD", {"lr": 0.1, "lambd": 0.1, "alpha": 0.5, "t0": 2, "weight_decay": 0.1}),
    ("ASGD", {"lr": 0.1, "t0": 0, "maximize": True}),
]


def _data(seed: int = 0) -> tuple[list[np.ndarray], list[list[np.ndarray]]]:
    rng = np.random.default_rng(seed)
    params = [rng.standard_normal(s) for s in SHAPES]
    grads = [[rng.standard_normal(s) for s in SHAPES] for _ in range(STEPS)]
    return params, grads


def _run(
    name: str,
    kwargs: dict[str, Any],
    params: list[np.ndarray],
    grads: list[list[np.ndarray]],
    dtype: Any = ea.float64,
    steps: slice = slice(None),
    opt: Any = None,
) -> tuple[list[Any], Any]:
    ps = [ea.tensor(p.tolist(), dtype=dtype).requires_grad_() for p in params] if opt is None else None
    if opt is None:
        opt = getattr(optim, name)(ps, **kwargs)
    ps = opt.param_groups[0]["params"]
    for gs in grads[steps]:
        for p, g in zip(ps, gs, strict=True):
            p.grad = ea.tensor(g.tolist(), dtype=p.dtype)
        opt.step()
    return ps, opt


def _np(t: Any) -> np.ndarray:
    return t.detach().to(dtype=ea.float64).numpy()


def _reference(name: str, kwargs: dict[str, Any], params: list[np.ndarray], grads: list[list[np.ndarray]]) -> Any:
    kw = {k: v for k, v in kwargs.items() if k not in ("foreach", "fused")}
    return ref.REFERENCES[name](params, grads, **kw)


def _id(case: tuple[str, dict[str, Any]]) -> str:
    return case[0] + "-" + "-".join(f"{k}={v}" for k, v in case[1].items())


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_matches_numpy_reference(case: tuple[str, dict[str, Any]]) -> None:
    name, kwargs = case
    params, grads = _data()
    got, _ = _run(name, {**kwargs, "foreach": False}, params, grads)
    want = _reference(name, kwargs, params, grads)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(_np(g), w, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_float32_params(case: tuple[str, dict[str, Any]]) -> None:
    name, kwargs = case
    params, grads = _data(1)
    got, opt = _run(name, {**kwargs, "foreach": False}, params, grads, dtype=ea.float32)
    want = _reference(name, kwargs, params, grads)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == ea.float32
        np.testing.assert_allclose(_np(g), w, rtol=2e-5, atol=2e-5)
    for st in opt.state.values():
        for k, v in st.items():
            if isinstance(v, ea.Tensor) and v.dim() > 0:
                assert v.dtype == ea.float32, k


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_state_dict_round_trip_continues_identically(case: tuple[str, dict[str, Any]]) -> None:
    name, kwargs = case
    params, grads = _data(2)
    # float32 parameters: loading casts floating state to the parameter's dtype, which would turn
    # NAdam's mu_product / ASGD's eta and mu (float32 scalars) into float64 ones (as in PyTorch)
    full, _ = _run(name, {**kwargs, "foreach": False}, params, grads, dtype=ea.float32)
    # run 2 steps, save, load into a fresh optimizer over copies of the parameters, run the rest
    first, opt = _run(name, {**kwargs, "foreach": False}, params, grads, dtype=ea.float32, steps=slice(0, 2))
    sd = opt.state_dict()
    copies = [p.detach().clone().requires_grad_() for p in first]
    opt2 = getattr(optim, name)(copies, **{**kwargs, "foreach": False})
    opt2.load_state_dict(sd)
    resumed, _ = _run(name, {}, params, grads, steps=slice(2, None), opt=opt2)
    for a, b in zip(full, resumed, strict=True):
        np.testing.assert_array_equal(_np(a), _np(b))
