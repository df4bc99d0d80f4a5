"""The Optimizer base class: param groups, errors, state_dict structure and loading, hooks."""

from __future__ import annotations

import copy
import re
import warnings
from typing import Any

import ember.aten as ea
import ember.autograd as ag
import pytest
from ember.optim import SGD, Adam, AdamW, Optimizer
from ember.optim.optimizer import (
    register_optimizer_step_post_hook,
    register_optimizer_step_pre_hook,
    required,
)


def _p(*values: float, dtype: Any = ea.float32) -> Any:
    return ea.tensor(list(values), dtype=dtype, requires_grad=True)


def _set_grads(params: list[Any], value: float = 1.0) -> None:
    for p in params:
        p.grad = ea.full_like(p.detach(), value)


# ---- construction errors ----------------------------------------------------------------
def test_empty_parameter_list() -> None:
    with pytest.raises(ValueError, match="optimizer got an empty parameter list"):
        SGD([], lr=0.1)


def test_tensor_instead_of_iterable() -> None:
    with pytest.raises(TypeError, match=re.escape("should be an iterable of Tensors or dicts, but got ember.Tensor")):
        SGD(_p(1.0), lr=0.1)


def test_sets_are_rejected() -> None:
    # as in PyTorch: a group's params may not be a set (a bare top-level set is listed as given)
    with pytest.raises(TypeError, match="ordered collections, but the ordering of tensors in sets"):
        SGD([{"params": {_p(1.0)}}], lr=0.1)
    opt = SGD([_p(1.0)], lr=0.1)
    with pytest.raises(TypeError, match="Please use a list instead"):
        opt.add_param_group({"params": {_p(2.0)}})


def test_non_tensor_param() -> None:
    with pytest.raises(TypeError, match="optimizer can only optimize Tensors, but one of the params is int"):
        SGD([_p(1.0), 3], lr=0.1)


def test_non_leaf_param() -> None:
    x = _p(1.0)
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        SGD([x * 2], lr=0.1)


def test_param_in_two_groups() -> None:
    a, b = _p(1.0), _p(2.0)
    with pytest.raises(ValueError, match="some parameters appear in more than one parameter group"):
        SGD([{"params": [a]}, {"params": [b, a]}], lr=0.1)
    opt = SGD([a], lr=0.1)
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": a})


def test_duplicate_params_in_a_group_warn() -> None:
    a = _p(1.0)
    with pytest.warns(UserWarning, match="duplicate parameters"):
        SGD([a, a], lr=0.1)


def test_param_group_must_be_dict() -> None:
    opt = SGD([_p(1.0)], lr=0.1)
    with pytest.raises(TypeError, match="param_group must be a dict, but got list"):
        opt.add_param_group([_p(2.0)])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: SGD(p, lr=-0.1), "Invalid learning rate: -0.1"),
        (lambda p: SGD(p, lr=0.1, momentum=-1), "Invalid momentum value: -1"),
        (lambda p: SGD(p, lr=0.1, weight_decay=-1), "Invalid weight_decay value: -1"),
        (lambda p: SGD(p, lr=0.1, nesterov=True), "Nesterov momentum requires a momentum and zero dampening"),
        (lambda p: SGD(p, lr=0.1, momentum=0.9, dampening=0.1, nesterov=True), "Nesterov momentum requires"),
        (lambda p: Adam(p, lr=-1.0), "Invalid learning rate: -1.0"),
        (lambda p: Adam(p, eps=-1.0), "Invalid epsilon value: -1.0"),
        (lambda p: Adam(p, betas=(1.0, 0.9)), "Invalid beta parameter at index 0: 1.0"),
        (lambda p: Adam(p, betas=(0.9, -0.1)), "Invalid beta parameter at index 1: -0.1"),
        (lambda p: AdamW(p, weight_decay=-0.5), "Invalid weight_decay value: -0.5"),
    ],
)
def test_invalid_hyperparameters(make: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make([_p(1.0)])


def test_fused_and_foreach_together() -> None:
    with pytest.raises(RuntimeError, match=re.escape("`fused` and `foreach` cannot be `True` together.")):
        Adam([_p(1.0)], fused=True, foreach=True)
    with pytest.raises(RuntimeError, match="`fused` does not support `differentiable`"):
        SGD([_p(1.0)], lr=0.1, fused=True, differentiable=True)


class _Plain(Optimizer):
    def __init__(self, params: Any, lr: Any = required, beta: float = 0.5) -> None:
        super().__init__(params, {"lr": lr, "beta": beta})

    def step(self, closure: Any = None) -> Any:
        with ag.no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    p.sub_(group["lr"] * p.grad)
        return None


def test_required_hyperparameter() -> None:
    assert repr(required) == "<required parameter>"
    with pytest.raises(
        ValueError, match="parameter group didn't specify a value of required optimization parameter lr"
    ):
        _Plain([_p(1.0)])
    opt = _Plain([{"params": [_p(1.0)], "lr": 0.5}, {"params": [_p(2.0)], "lr": 0.1, "beta": 0.9}])
    assert [g["lr"] for g in opt.param_groups] == [0.5, 0.1]
    assert [g["beta"] for g in opt.param_groups] == [0.5, 0.9]


def test_groups_filled_from_defaults_and_add_param_group() -> None:
    a, b = _p(1.0), _p(2.0)
    opt = SGD([{"params": [a]}], lr=0.1, momentum=0.5)
    opt.add_param_group({"params": b, "lr": 0.01})
    assert opt.param_groups[1]["params"] == [b]
    assert opt.param_groups[1]["lr"] == 0.01 and opt.param_groups[1]["momentum"] == 0.5
    _set_grads([a, b])
    opt.step()
    assert a.tolist() == pytest.approx([0.9])
    assert b.tolist() == pytest.approx([1.99])


def test_repr_lists_groups() -> None:
    opt = SGD([_p(1.0)], lr=0.1)
    text = repr(opt)
    assert text.startswith("SGD (\nParameter Group 0\n    dampening: 0\n")
    assert "    lr: 0.1\n" in text and text.endswith(")")


# ---- zero_grad, step, closure -------------------------------------------------------------
def test_zero_grad_set_to_none_and_zero() -> None:
    a = _p(1.0, 2.0)
    opt = SGD([a], lr=0.1)
    _set_grads([a], 3.0)
    opt.zero_grad(set_to_none=False)
    assert a.grad is not None and a.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert a.grad is None


def test_step_does_not_record_history_and_closure_gets_grad_mode() -> None:
    a = _p(1.0, 2.0)
    opt = SGD([a], lr=0.1)
    calls = []

    def closure() -> Any:
        opt.zero_grad()
        loss = (a * a).sum()
        calls.append(ag.is_grad_enabled())
        loss.backward()
        return loss

    with ag.no_grad():
        loss = opt.step(closure)
    assert calls == [True]
    assert loss.item() == pytest.approx(5.0)
    assert a.is_leaf and a.grad_fn is None
    assert a.tolist() == pytest.approx([0.8, 1.6])


def test_params_without_grad_are_skipped() -> None:
    a, b = _p(1.0), _p(2.0)
    opt = Adam([a, b], lr=0.1)
    _set_grads([a])
    opt.step()
    assert b.tolist() == [2.0]
    assert b not in opt.state and len(opt.state[a]) == 3


# ---- state_dict -----------------------------------------------------------------------------
def test_state_dict_structure() -> None:
    a, b, c = _p(1.0), _p(2.0, 3.0), _p(4.0)
    opt = Adam([{"params": [a, b]}, {"params": [c], "lr": 0.5}], lr=0.1, amsgrad=True)
    _set_grads([a, c])
    opt.step()
    sd = opt.state_dict()
    assert set(sd) == {"state", "param_groups"}
    assert sorted(sd["state"]) == [0, 2]
    assert set(sd["state"][0]) == {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"}
    st = sd["state"][0]["step"]
    assert isinstance(st, ea.Tensor) and st.dim() == 0 and st.dtype == ea.float32 and st.item() == 1.0
    assert [g["params"] for g in sd["param_groups"]] == [[0, 1], [2]]
    assert sd["param_groups"][1]["lr"] == 0.5 and sd["param_groups"][0]["betas"] == (0.9, 0.999)
    assert sd["param_groups"][0]["amsgrad"] is True
    assert "params" in opt.param_groups[0] and opt.param_groups[0]["params"][0] is a  # groups unchanged


def test_state_dict_with_named_parameters() -> None:
    a, b = _p(1.0), _p(2.0)
    opt = SGD([("w", a), ("b", b)], lr=0.1)
    assert opt.param_groups[0]["params"] == [a, b]
    sd = opt.state_dict()
    assert sd["param_groups"][0]["param_names"] == ["w", "b"]
    assert sd["param_groups"][0]["params"] == [0, 1]


def test_load_state_dict_casts_to_param_dtype_and_keeps_step() -> None:
    a64 = _p(1.0, 2.0, dtype=ea.float64)
    opt = Adam([a64], lr=0.1)
    _set_grads([a64])
    opt.step()
    sd = opt.state_dict()
    assert sd["state"][0]["exp_avg"].dtype == ea.float64
    a32 = _p(1.0, 2.0)
    opt32 = Adam([a32], lr=0.1)
    opt32.load_state_dict(sd)
    st = opt32.state[a32]
    assert st["exp_avg"].dtype == ea.float32 and st["exp_avg_sq"].dtype == ea.float32
    assert st["step"].dtype == ea.float32 and st["step"].item() == 1.0
    assert st["exp_avg"].tolist() == pytest.approx([0.1, 0.1])


def test_load_state_dict_restores_hyperparameters_but_not_params() -> None:
    a = _p(1.0)
    opt = SGD([a], lr=0.1, momentum=0.9)
    sd = copy.deepcopy(opt.state_dict())
    sd["param_groups"][0]["lr"] = 0.25
    b = _p(5.0)
    opt2 = SGD([b], lr=0.1, momentum=0.9)
    opt2.load_state_dict(sd)
    assert opt2.param_groups[0]["lr"] == 0.25
    assert opt2.param_groups[0]["params"][0] is b


def test_load_state_dict_mismatches() -> None:
    a, b = _p(1.0), _p(2.0)
    opt = SGD([a, b], lr=0.1)
    sd = opt.state_dict()
    two_groups = SGD([{"params": [a]}, {"params": [b]}], lr=0.1)
    with pytest.raises(ValueError, match="loaded state dict has a different number of parameter groups"):
        two_groups.load_state_dict(sd)
    one = SGD([a], lr=0.1)
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        one.load_state_dict(sd)


def test_load_state_dict_upgrades_numeric_step() -> None:
    a = _p(1.0)
    opt = Adam([a], lr=0.1)
    _set_grads([a])
    opt.step()
    sd = copy.deepcopy(opt.state_dict())
    sd["state"][0]["step"] = 1  # an old checkpoint: step as a number
    opt.load_state_dict(sd)
    assert isinstance(opt.state[a]["step"], ea.Tensor) and opt.state[a]["step"].item() == 1.0
    opt.step()
    assert opt.state[a]["step"].item() == 2.0


# ---- hooks ----------------------------------------------------------------------------------
def test_step_pre_and_post_hooks() -> None:
    a = _p(1.0)
    opt = SGD([a], lr=0.1)
    seen: list[str] = []

    def pre(o: Any, args: Any, kwargs: Any) -> Any:
        assert o is opt
        seen.append("pre")
        return None

    def post(o: Any, args: Any, kwargs: Any) -> None:
        seen.append("post")

    h1 = opt.register_step_pre_hook(pre)
    h2 = opt.register_step_post_hook(post)
    g1 = register_optimizer_step_pre_hook(lambda o, a_, k: seen.append("global-pre"))
    g2 = register_optimizer_step_post_hook(lambda o, a_, k: seen.append("global-post"))
    _set_grads([a])
    try:
        opt.step()
    finally:
        g1.remove()
        g2.remove()
    assert seen == ["global-pre", "pre", "post", "global-post"]
    h1.remove()
    h2.remove()
    seen.clear()
    opt.step()
    assert seen == []


def test_step_pre_hook_can_replace_arguments() -> None:
    a = _p(1.0)
    opt = SGD([a], lr=0.1)

    def closure() -> Any:
        return 42

    opt.register_step_pre_hook(lambda o, args, kwargs: (args, {"closure": closure}))
    _set_grads([a])
    assert opt.step() == 42
    opt.register_step_pre_hook(lambda o, args, kwargs: "bad")
    with pytest.raises(RuntimeError, match="must return None or a tuple of \\(new_args, new_kwargs\\)"):
        opt.step()


def test_state_dict_hooks() -> None:
    a = _p(1.0)
    opt = SGD([a], lr=0.1, momentum=0.9)
    order: list[str] = []
    opt.register_state_dict_pre_hook(lambda o: order.append("pre"))
    opt.register_state_dict_pre_hook(lambda o: order.append("pre-first"), prepend=True)

    def post(o: Any, sd: dict[str, Any]) -> dict[str, Any]:
        order.append("post")
        sd["extra"] = 1
        return sd

    opt.register_state_dict_post_hook(post)
    sd = opt.state_dict()
    assert order == ["pre-first", "pre", "post"] and sd["extra"] == 1

    def load_pre(o: Any, sd: dict[str, Any]) -> dict[str, Any]:
        sd = dict(sd)
        sd["param_groups"] = copy.deepcopy(sd["param_groups"])
        sd["param_groups"][0]["lr"] = 0.7
        return sd

    opt.register_load_state_dict_pre_hook(load_pre)
    opt.register_load_state_dict_post_hook(lambda o: order.append("load-post"))
    opt.load_state_dict(sd)
    assert opt.param_groups[0]["lr"] == 0.7 and order[-1] == "load-post"


def test_subclass_step_hooks_run_once() -> None:
    class MySGD(SGD):
        def step(self, closure: Any = None) -> Any:
            return super().step(closure)

    a = _p(1.0)
    opt = MySGD([a], lr=0.1)
    count = []
    opt.register_step_pre_hook(lambda o, args, kwargs: count.append(1))
    _set_grads([a])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.step()
    assert count == [1]
    assert a.tolist() == pytest.approx([0.9])
