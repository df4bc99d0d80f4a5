"""gradcheck of every differentiable operator over its OpInfo samples (float64), and
gradgradcheck of the pointwise, reduction, matmul, conv, pooling, softmax, norm and loss
ops. The tables are the OpInfo database of tests/aten: an operator added there (with
``supports_autograd=True``, the default) is checked here with no change to this file.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import ember.aten as ea
import numpy as np
import pytest
from ember.autograd import grad, gradcheck, gradgradcheck, no_grad
from opinfo import op_db
from opinfo.core import OpInfo, to_device

# kinds whose second derivatives are checked too (the nn kernels add their own kinds)
GRADGRAD_KINDS = {"unary", "binary", "pointwise", "reduction", "matmul", "conv", "pooling", "softmax", "norm", "loss"}
GRADGRAD_KINDS |= {"padding", "upsampling"}  # (attention: the fused backward has no derivative, as PyTorch)
GRADGRAD_KINDS |= {"functions"}  # the composites of issue 18 (tests/aten/opinfo/functions.py)
GRADGRAD_NAMES = {
    "sum",
    "mean",
    "prod",
    "amax",
    "amin",
    "var",
    "std",
    "logsumexp",
    "linalg_vector_norm",
    "norm",
    "matmul",
    "mm",
    "bmm",
    "softmax",
    "log_softmax",
}


def _is_float_tensor(x: Any) -> bool:
    return isinstance(x, ea.Tensor) and x.dtype.is_floating_point


def _finite(x: Any) -> bool:
    return not _is_float_tensor(x) or x.numel() == 0 or bool(np.isfinite(x.detach().numpy()).all())


def _takes_float_tensors(op: OpInfo) -> bool:
    """Factories (zeros, arange, ...) have no tensor input to differentiate."""
    for s in op.sample_inputs(op, ea.float64):
        if any(
            _is_float_tensor(x) or (isinstance(x, (list, tuple)) and any(_is_float_tensor(v) for v in x))
            for x in (s.input, *s.args, *s.kwargs.values())
        ):
            return True
    return False


AUTOGRAD_OPS = [op for op in op_db if op.supports_autograd and ea.float64 in op.dtypes and _takes_float_tensors(op)]


def _flatten(
    args: tuple[Any, ...], kwargs: dict[str, Any], constant: tuple[int | str, ...] = ()
) -> tuple[list[Any], Any]:
    """The float tensors of a call (also inside lists), and a function rebuilding the call from them.
    Arguments named in `constant` (positions or keywords) stay as they are."""
    leaves: list[Any] = []

    def take(x: Any) -> Any:
        if _is_float_tensor(x):
            overlapping = any(st == 0 and n > 1 for st, n in zip(x.stride(), x.shape, strict=True))
            leaf = x.detach().contiguous().clone() if overlapping else x.detach().clone()
            leaves.append(leaf.requires_grad_(True))
            return ("leaf", len(leaves) - 1)
        if isinstance(x, (list, tuple)) and any(_is_float_tensor(v) for v in x):
            return (type(x), [take(v) for v in x])
        return ("const", x)

    spec_args = [("const", a) if i in constant else take(a) for i, a in enumerate(args)]
    spec_kwargs = {k: ("const", v) if k in constant else take(v) for k, v in kwargs.items()}

    def build(flat: tuple[Any, ...]) -> tuple[list[Any], dict[str, Any]]:
        # constant tensors (indices, masks) follow the leaves to their device (CUDA runs)
        device = flat[0].device if flat else None

        def put(spec: Any) -> Any:
            if spec[0] == "leaf":
                return flat[spec[1]]
            if spec[0] == "const":
                return to_device(spec[1], device) if device is not None and device.type != "cpu" else spec[1]
            return spec[0](put(s) for s in spec[1])

        return [put(s) for s in spec_args], {k: put(s) for k, s in spec_kwargs.items()}

    return leaves, build


# OpInfo samples made for value tests that are not smooth where they sit (ties by design):
# only the samples passing the filter are gradchecked.
SAMPLE_FILTERS = {
    "mode": lambda leaves: all(len(set(x.reshape(-1).tolist())) == x.numel() for x in leaves),
}


def grad_samples(op: OpInfo, limit: int, max_numel: int = 64) -> Iterator[tuple[str, list[Any], Any, bool]]:
    """(description, leaves, fn(*leaves), has float outputs) for up to `limit` usable float64 samples."""
    n = 0
    keep = SAMPLE_FILTERS.get(op.name, lambda leaves: True)
    for s in op.sample_inputs(op, ea.float64):
        if not s.gradcheck:
            continue
        args = (s.input, *s.args)
        leaves, build = _flatten(args, s.kwargs, op.nondifferentiable_args)
        if not leaves or not all(_finite(x) for x in leaves) or not keep(leaves):
            continue
        if sum(x.numel() for x in leaves) > max_numel:
            continue

        def fn(*flat: Any, _build: Any = build) -> Any:
            a, kw = _build(flat)
            return op.op(*a, **kw)

        with no_grad():
            try:
                out = fn(*leaves)
            except Exception:
                continue
        outs = out if isinstance(out, (tuple, list)) else (out,)
        if not all(_finite(o) for o in outs):
            continue
        yield f"sample {n}: {[tuple(x.shape) for x in leaves]}", leaves, fn, any(_is_float_tensor(o) for o in outs)
        n += 1
        if n >= limit:
            return


def _ids(ops: list[OpInfo]) -> list[str]:
    return [op.name for op in ops]


def _requires_grad_outputs(out: Any) -> list[bool]:
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return [isinstance(o, ea.Tensor) and o.requires_grad for o in outs]


# Operators whose float results require grad but whose derivative PyTorch leaves unimplemented
# (backward raises): OpInfo name -> the aten operator named in the error.
NOT_IMPLEMENTED = {
    "unique": ("_unique2", "unique_dim"),
    "unique_consecutive": ("_unique_consecutive",),
}


def _outputs(out: Any) -> list[Any]:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _assert_same_values(dev: Any, cpu: Any, what: str) -> None:
    assert isinstance(dev, ea.Tensor) == isinstance(cpu, ea.Tensor), what
    if not isinstance(cpu, ea.Tensor):
        return
    assert dev.device.type != "cpu" and dev.dtype == cpu.dtype, f"{what}: {dev.device} {dev.dtype} vs cpu {cpu.dtype}"
    got, want = dev.detach().cpu().numpy(), cpu.detach().numpy()
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def _check_gradients_on_device(op: OpInfo, device: str) -> None:
    """On CUDA (gradcheck perturbs inputs through NumPy, so CPU only): the forward values
    and the gradients for one random output gradient equal the CPU's, which gradcheck checks."""
    rng = np.random.default_rng(0)
    checked = 0
    for what, leaves, fn, _ in grad_samples(op, op.gradcheck_sample_limit):
        if op.name in NOT_IMPLEMENTED:
            continue
        dev_leaves = [x.detach().to(device).requires_grad_(True) for x in leaves]
        cpu_outs, dev_outs = _outputs(fn(*leaves)), _outputs(fn(*dev_leaves))
        assert len(cpu_outs) == len(dev_outs), what
        for i, (d, c) in enumerate(zip(dev_outs, cpu_outs, strict=True)):
            _assert_same_values(d, c, f"{op.name} {what} output {i} on {device}")
            assert _requires_grad_outputs(d) == _requires_grad_outputs(c), f"{op.name} {what} output {i}"
        pairs = [
            (d, c) for d, c in zip(dev_outs, cpu_outs, strict=True) if isinstance(c, ea.Tensor) and c.requires_grad
        ]
        if pairs:
            gos = [ea.from_numpy(rng.standard_normal(tuple(c.shape))).to(c.dtype) for _, c in pairs]
            cpu_g = grad([c for _, c in pairs], leaves, gos, allow_unused=True)
            dev_g = grad([d for d, _ in pairs], dev_leaves, [g.to(device) for g in gos], allow_unused=True)
            for i, (dg, cg) in enumerate(zip(dev_g, cpu_g, strict=True)):
                assert (dg is None) == (cg is None), f"{op.name} {what}: gradient {i} on {device} vs cpu"
                if cg is not None:
                    _assert_same_values(dg, cg, f"{op.name} {what} gradient {i} on {device}")
        checked += 1
    assert checked > 0 or op.name in NOT_IMPLEMENTED, f"{op.name}: no float64 sample usable on {device}"


@pytest.mark.parametrize("op", AUTOGRAD_OPS, ids=_ids(AUTOGRAD_OPS))
def test_gradcheck(op: OpInfo, device: str) -> None:
    """Differentiable outputs: gradcheck. Integer / bool outputs: they must not require grad.
    On CUDA: values and gradients equal the CPU's (see _check_gradients_on_device)."""
    if device != "cpu":
        _check_gradients_on_device(op, device)
        return
    checked = 0
    for what, leaves, fn, has_float_output in grad_samples(op, op.gradcheck_sample_limit):
        if op.name in NOT_IMPLEMENTED:
            out = fn(*leaves)
            first = out[0] if isinstance(out, (tuple, list)) else out
            names = "|".join(NOT_IMPLEMENTED[op.name])
            with pytest.raises(NotImplementedError, match=rf"the derivative for '({names})' is not implemented\."):
                first.sum().backward()
            checked += 1
            continue
        if has_float_output and any(_requires_grad_outputs(fn(*leaves))):
            assert gradcheck(fn, tuple(leaves), eps=1e-6, atol=1e-5, rtol=1e-3), what
        else:
            # no differentiable result (argmax, unique, histc...): nothing may claim a gradient
            assert not any(_requires_grad_outputs(fn(*leaves))), what
        checked += 1
    assert checked > 0, f"{op.name}: no float64 sample usable for gradcheck"


INPLACE_OPS = [op for op in AUTOGRAD_OPS if op.inplace is not None and op.supports_inplace_autograd]


@pytest.mark.parametrize("op", INPLACE_OPS, ids=_ids(INPLACE_OPS))
def test_gradcheck_inplace_variant(op: OpInfo) -> None:
    """The in-place variant on a non-leaf (x.clone()) has the same gradients."""
    checked = 0
    for s in op.sample_inputs(op, ea.float64):
        if s.broadcasts_input or not _is_float_tensor(s.input):
            continue
        leaves, build = _flatten((s.input, *s.args), s.kwargs, op.nondifferentiable_args)
        if not leaves or not all(_finite(x) for x in leaves) or sum(x.numel() for x in leaves) > 64:
            continue

        def fn(*flat: Any, _build: Any = build) -> Any:
            a, kw = _build(flat)
            return op.inplace(a[0].clone(), *a[1:], **kw)

        with no_grad():
            try:
                out = fn(*leaves)
            except Exception:
                continue
        if not _is_float_tensor(out) or not _finite(out):
            continue
        assert gradcheck(fn, tuple(leaves))
        checked += 1
        if checked >= 2:
            break
    assert checked > 0, f"{op.name}_: no usable sample"


def _differentiable(op: OpInfo) -> bool:
    for _, leaves, fn, has_float_output in grad_samples(op, 1):
        return has_float_output and any(_requires_grad_outputs(fn(*leaves)))
    return False


GRADGRAD_OPS = [
    op for op in AUTOGRAD_OPS if (op.kind in GRADGRAD_KINDS or op.name in GRADGRAD_NAMES) and _differentiable(op)
]


@pytest.mark.parametrize("op", GRADGRAD_OPS, ids=_ids(GRADGRAD_OPS))
def test_gradgradcheck(op: OpInfo) -> None:
    checked = 0
    for what, leaves, fn, has_float_output in grad_samples(op, 2, max_numel=24):
        if not has_float_output or not any(_requires_grad_outputs(fn(*leaves))):
            continue
        assert gradgradcheck(fn, tuple(leaves), eps=1e-6, atol=1e-5, rtol=1e-3), what
        checked += 1
    assert checked > 0, f"{op.name}: no float64 sample usable for gradgradcheck"


def test_gradcheck_detects_a_wrong_formula() -> None:
    from ember.autograd import Function, GradcheckError

    class WrongSquare(Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            (x,) = ctx.saved_tensors
            return g * x  # should be 2 * g * x

    x = ea.tensor([1.0, 2.0, 3.0], dtype=ea.float64, requires_grad=True)
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"):
        gradcheck(WrongSquare.apply, (x,))
    assert gradcheck(WrongSquare.apply, (x,), raise_exception=False) is False
    with pytest.raises(GradcheckError, match="fast mode"):
        gradcheck(WrongSquare.apply, (x,), fast_mode=True)


def test_gradcheck_fast_mode_passes_on_correct_gradients() -> None:
    x = ea.tensor([[0.5, -1.5], [2.0, 0.25]], dtype=ea.float64, requires_grad=True)
    y = ea.tensor([1.5, -0.5], dtype=ea.float64, requires_grad=True)
    assert gradcheck(lambda a, b: (a * b).exp() / (b * b + 1), (x, y), fast_mode=True)


def test_gradcheck_warns_on_float32() -> None:
    x = ea.tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(UserWarning, match="not a double precision"):
        gradcheck(lambda a: a * 2, (x,), atol=1e-2, rtol=1e-2, eps=1e-3)


def test_gradcheck_rejects_overlapping_inputs() -> None:
    x = ea.tensor([1.0], dtype=ea.float64).expand((3,)).requires_grad_(True)
    with pytest.raises(RuntimeError, match="stride 0"):
        gradcheck(lambda a: a * 2, (x,))


def test_gradgradcheck_detects_a_wrong_second_derivative() -> None:
    from ember.autograd import Function, GradcheckError

    class CubeWrongDouble(Function):
        # first derivative right, but computed from a detached x: its own derivative w.r.t. x is lost
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            (x,) = ctx.saved_tensors
            return g * 3 * (x * x).detach()

    x = ea.tensor([1.0, -2.0], dtype=ea.float64, requires_grad=True)
    assert gradcheck(CubeWrongDouble.apply, (x,))
    with pytest.raises(GradcheckError):
        gradgradcheck(CubeWrongDouble.apply, (x,))


def test_numbers_as_tensor_arguments() -> None:
    # Python numbers reach the kernels as "wrapped numbers": formulas must accept them
    x = ea.tensor([0.5, 1.5, 2.5], dtype=ea.float64, requires_grad=True)
    for f in (
        lambda a: a * 3,
        lambda a: 3 * a,
        lambda a: a / 4,
        lambda a: 4 / a,
        lambda a: a - 1,
        lambda a: 1 - a,
        lambda a: a**2,
        lambda a: 2**a,
        lambda a: a**0.5,
    ):
        assert gradcheck(f, (x,))
    assert math.isclose(float((x**2).sum()), 0.25 + 2.25 + 6.25)
