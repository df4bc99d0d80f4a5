"""``gradcheck`` / ``gradgradcheck``: analytical gradients against central finite differences.

Slow mode builds both Jacobians in full: the numerical one column by column (each
input element moved by +-eps, ``(f(x + eps) - f(x - eps)) / 2eps``), the analytical one
row by row (a backward pass per output element with a one-hot ``grad_output``). Fast
mode (PyTorch's) compares one number per (input, output) pair: ``v . (J u)`` from a
finite difference along a random direction ``u`` against ``(J^T v) . u`` from one
backward pass with a random ``v``.

Use float64 inputs: eps=1e-6 is meaningless in float32.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import ember.aten as ea
import numpy as np
from ember.aten import Tensor

from ._api import grad as _grad

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]


class GradcheckError(RuntimeError):
    """Raised when gradcheck finds a mismatch (PyTorch's torch.autograd.gradcheck.GradcheckError)."""


def _as_tuple(x: Any) -> tuple[Any, ...]:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _diff_outputs(outputs: Sequence[Any]) -> list[Any]:
    return [o for o in outputs if isinstance(o, Tensor) and o.requires_grad]


def _np(t: Any) -> np.ndarray:
    """A NumPy array sharing t's memory (to move single elements without recording anything)."""
    if t.device.type != "cpu":
        raise NotImplementedError("gradcheck perturbs inputs through NumPy: pass CPU tensors")
    return t.detach().numpy()


def _check_inputs(inputs: Sequence[Any]) -> list[int]:
    idx = []
    for i, x in enumerate(inputs):
        if isinstance(x, Tensor) and x.requires_grad:
            if x.dtype != ea.float64:
                warnings.warn(
                    f"Input #{i} requires gradient and is not a double precision floating point. This check will "
                    "likely fail if all the inputs are not of double precision floating point. ",
                    stacklevel=3,
                )
            if x.numel() > 1 and any(st == 0 and sz > 1 for st, sz in zip(x.stride(), x.shape, strict=True)):
                raise RuntimeError(
                    f"The {i}th input has a dimension with stride 0. gradcheck only supports inputs that are "
                    "non-overlapping to be able to compute the numerical gradients correctly. You should call "
                    ".contiguous on the input before passing it to gradcheck."
                )
            idx.append(i)
    if not idx:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, but none of the them "
            "have requires_grad=True."
        )
    return idx


def _eval(func: Callable[..., Any], inputs: Sequence[Any], out_mask: list[bool]) -> list[np.ndarray]:
    # grad mode stays on: gradgradcheck's function computes a gradient inside
    outs = _as_tuple(func(*inputs))
    return [np.array(o.detach().to(ea.float64).numpy(), copy=True) for o, m in zip(outs, out_mask, strict=True) if m]


def _numerical_jacobian(
    func: Callable[..., Any], inputs: Sequence[Any], in_idx: list[int], out_mask: list[bool], eps: float
) -> list[list[np.ndarray]]:
    """jac[i][o]: (numel(output o), numel(input i))."""
    jac: list[list[np.ndarray]] = []
    for i in in_idx:
        x = inputs[i]
        a = _np(x)
        cols: list[list[np.ndarray]] = []
        for pos in np.ndindex(*a.shape):
            orig = a[pos].copy()
            a[pos] = orig - eps
            lo = _eval(func, inputs, out_mask)
            a[pos] = orig + eps
            hi = _eval(func, inputs, out_mask)
            a[pos] = orig
            cols.append([((h - l) / (2 * eps)).reshape(-1) for h, l in zip(hi, lo, strict=True)])
        per_out = []
        n_out = sum(out_mask)
        for o in range(n_out):
            if cols:
                per_out.append(np.stack([c[o] for c in cols], axis=1))
            else:
                per_out.append(np.zeros((0, 0)))
        jac.append(per_out)
    return jac


def _analytical_jacobian(
    outputs: list[Any], inputs: Sequence[Any], in_idx: list[int], check_grad_dtypes: bool
) -> list[list[np.ndarray]]:
    diff_in = [inputs[i] for i in in_idx]
    jac = [[np.zeros((o.numel(), inputs[i].numel())) for o in outputs] for i in in_idx]
    for oi, out in enumerate(outputs):
        flat_n = out.numel()
        for k in range(flat_n):
            g = np.zeros(flat_n)
            g[k] = 1.0
            go = ea.from_numpy(g.reshape(tuple(out.shape))).to(out.dtype)
            grads = _grad(out, diff_in, go, retain_graph=True, allow_unused=True)
            for ii, (gi, x) in enumerate(zip(grads, diff_in, strict=True)):
                if gi is None:
                    continue
                if check_grad_dtypes and (gi.dtype != x.dtype or tuple(gi.shape) != tuple(x.shape)):
                    raise GradcheckError(
                        f"Gradient has dtype mismatch or shape mismatch: got {gi.dtype}{list(gi.shape)} for an "
                        f"input of {x.dtype}{list(x.shape)}"
                    )
                if tuple(gi.shape) != tuple(x.shape):
                    raise GradcheckError(
                        f"Gradient has shape mismatch: got {list(gi.shape)} for input {in_idx[ii]} of shape "
                        f"{list(x.shape)}"
                    )
                jac[ii][oi][k, :] = gi.detach().to(ea.float64).numpy().reshape(-1)
    return jac


def _fail(msg: str, raise_exception: bool) -> bool:
    if raise_exception:
        raise GradcheckError(msg)
    return False


def gradcheck(
    func: Callable[..., Any],
    inputs: Any,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_batched_forward_grad: bool = False,
    check_forward_ad: bool = False,
    check_backward_ad: bool = True,
    fast_mode: bool = False,
    masked: bool | None = None,
) -> bool:
    """True if the gradients of `func` at `inputs` match finite differences (else raises GradcheckError).

    >>> x = ember.aten.randn(3, dtype=ember.aten.float64, requires_grad=True)
    >>> gradcheck(lambda t: (t * t).sum(), (x,))
    True
    """
    if check_forward_ad or check_batched_grad or check_batched_forward_grad:
        raise NotImplementedError("gradcheck: forward-mode AD and batched gradients are not supported by ember")
    inputs = _as_tuple(inputs)
    in_idx = _check_inputs(inputs)
    outs = _as_tuple(func(*inputs))
    out_mask = [isinstance(o, Tensor) and o.requires_grad for o in outs]
    outputs = [o for o, m in zip(outs, out_mask, strict=True) if m]
    if not check_backward_ad:
        return True
    if not outputs:
        # no differentiable output: the numerical gradient must be zero
        for i, jac_i in zip(in_idx, _numerical_jacobian(func, inputs, in_idx, out_mask, eps), strict=True):
            for j in jac_i:
                if j.size and not np.allclose(j, 0, atol=atol):
                    return _fail(f"Numerical gradient for function expected to be zero (input {i})", raise_exception)
        return True
    if fast_mode:
        return _fast_gradcheck(func, inputs, in_idx, outputs, out_mask, eps, atol, rtol, raise_exception)
    numerical = _numerical_jacobian(func, inputs, in_idx, out_mask, eps)
    analytical = _analytical_jacobian(outputs, inputs, in_idx, check_grad_dtypes)
    for ii, i in enumerate(in_idx):
        for o in range(len(outputs)):
            n, a = numerical[ii][o], analytical[ii][o]
            if n.shape != a.shape and n.size == 0 and a.size == 0:
                continue
            if not np.allclose(a, n.reshape(a.shape), rtol=rtol, atol=atol, equal_nan=True):
                return _fail(
                    f"Jacobian mismatch for output {o} with respect to input {i},\nnumerical:{n}\nanalytical:{a}\n",
                    raise_exception,
                )
    again = _analytical_jacobian(outputs, inputs, in_idx, False)
    for ii in range(len(in_idx)):
        for o in range(len(outputs)):
            if not np.allclose(again[ii][o], analytical[ii][o], rtol=0, atol=nondet_tol, equal_nan=True):
                return _fail(
                    "Backward is not reentrant, i.e., running backward with same input and grad_output multiple "
                    "times gives different values, although analytical gradient matches numerical gradient. The "
                    f"tolerance for nondeterminism was {nondet_tol}.",
                    raise_exception,
                )
    return True


def _fast_gradcheck(
    func: Callable[..., Any],
    inputs: Sequence[Any],
    in_idx: list[int],
    outputs: list[Any],
    out_mask: list[bool],
    eps: float,
    atol: float,
    rtol: float,
    raise_exception: bool,
) -> bool:
    rng = np.random.default_rng(0)
    us = []
    for i in in_idx:
        u = rng.standard_normal(inputs[i].numel())
        us.append(u / max(np.linalg.norm(u), 1e-12))
    vs = [rng.standard_normal(o.numel()) for o in outputs]
    diff_in = [inputs[i] for i in in_idx]
    for ii, i in enumerate(in_idx):
        a = _np(inputs[i])
        orig = a.copy()
        u = us[ii].reshape(a.shape)
        a[...] = orig - eps * u
        lo = _eval(func, inputs, out_mask)
        a[...] = orig + eps * u
        hi = _eval(func, inputs, out_mask)
        a[...] = orig
        for o, out in enumerate(outputs):
            ju = ((hi[o] - lo[o]) / (2 * eps)).reshape(-1)
            numerical = float(vs[o] @ ju)
            go = ea.from_numpy(vs[o].reshape(tuple(out.shape))).to(out.dtype)
            g = _grad(out, diff_in, go, retain_graph=True, allow_unused=True)[ii]
            analytical = 0.0 if g is None else float(g.detach().to(ea.float64).numpy().reshape(-1) @ us[ii])
            if not np.isclose(analytical, numerical, rtol=rtol, atol=atol, equal_nan=True):
                return _fail(
                    f"Jacobian mismatch for output {o} with respect to input {i},\nnumerical:{numerical}\n"
                    f"analytical:{analytical}\n\nThe above quantities relating the numerical and analytical "
                    "jacobians are computed in fast mode. See: https://github.com/pytorch/pytorch/issues/53876 "
                    "for more background about fast mode.",
                    raise_exception,
                )
    return True


def gradgradcheck(
    func: Callable[..., Any],
    inputs: Any,
    grad_outputs: Any = None,
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    gen_non_contig_grad_outputs: bool = False,
    raise_exception: bool = True,
    nondet_tol: float = 0.0,
    check_undefined_grad: bool = True,
    check_grad_dtypes: bool = False,
    check_batched_grad: bool = False,
    check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
    fast_mode: bool = False,
    masked: bool = False,
) -> bool:
    """gradcheck of the gradient: checks second derivatives of `func` (its backward, recorded with create_graph)."""
    inputs = _as_tuple(inputs)
    outs = _as_tuple(func(*inputs))
    diff_outs = _diff_outputs(outs)
    if grad_outputs is None:
        rng = np.random.default_rng(1)
        grad_outputs = tuple(
            ea.from_numpy(rng.standard_normal(tuple(o.shape))).to(o.dtype).requires_grad_(True) for o in diff_outs
        )
    grad_outputs = _as_tuple(grad_outputs)
    n = len(grad_outputs)

    def new_func(*args: Any) -> Any:
        ins, gos = args[:-n] if n else args, args[-n:] if n else ()
        outputs = _diff_outputs(_as_tuple(func(*ins)))
        diff_ins = [x for x in ins if isinstance(x, Tensor) and x.requires_grad]
        gis = _grad(outputs, diff_ins, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in gis if g is not None)

    return gradcheck(
        new_func,
        inputs + grad_outputs,
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
        nondet_tol=nondet_tol,
        check_undefined_grad=check_undefined_grad,
        check_grad_dtypes=check_grad_dtypes,
        fast_mode=fast_mode,
    )
