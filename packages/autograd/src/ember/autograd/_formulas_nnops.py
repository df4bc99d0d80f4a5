"""Backward helpers of the softmax, normalization, loss, embedding and dropout formulas in
derivatives.yaml (section "softmax, normalization, losses, embedding, dropout").

First derivatives call the C++ backward kernels (softmax_backward_data, native_*_norm_backward,
*_loss_backward, ...). Those kernels have entries of their own, so double backward works:
  - the pointwise losses and softmax: closed forms, written with differentiable operators;
  - the norms: the vector-Jacobian product of a Python twin of the backward kernel (the
    same formula written with operators), taken with a nested ``grad`` call. The twins
    recompute the statistics from the input, so the gradient also flows through mean and
    variance; layer / group / RMS norm backward receive no eps, so the twin recovers it
    from rstd and the input's variance (1 / rstd^2 - var).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ember.aten.extension import entries as ops
from ember.autograd.grad_mode import enable_grad, is_grad_enabled

__all__ = [
    "batch_norm_backward",
    "batch_norm_double_backward",
    "bce_double_backward_grad_output",
    "bce_double_backward_self",
    "bce_double_backward_target",
    "bce_target_backward",
    "bce_with_logits_backward",
    "cross_entropy_double_backward",
    "ctc_loss_backward",
    "dropout_scale",
    "embedding_bag_dense_double_backward",
    "embedding_dense_double_backward",
    "group_norm_backward",
    "group_norm_backward_with_stats",
    "group_norm_double_backward",
    "layer_norm_backward",
    "layer_norm_double_backward",
    "log_softmax_double_backward",
    "log_softmax_grad_output_backward",
    "loss_grad_output_backward",
    "loss_second_derivative",
    "rms_norm_backward",
    "rms_norm_double_backward",
    "smooth_l1_second",
    "soft_margin_loss_target_backward",
    "soft_margin_second_self",
    "soft_margin_second_target",
    "softmax_double_backward",
]

_NONE, _MEAN = 0, 1


def _zeros_like(t: Any) -> Any:
    return ops._call_zeros_like(t, None, None, None, None, None)


# ---- softmax ------------------------------------------------------------------------------------


def softmax_double_backward(grad: Any, grad_output: Any, dim: int, output: Any) -> Any:
    """d/d(output) of output * (g - sum(g * output)): grad * (g - s) - g * sum(grad * output)."""
    s = (grad_output * output).sum(dim, keepdim=True)
    return grad * (grad_output - s) - grad_output * (grad * output).sum(dim, keepdim=True)


def log_softmax_grad_output_backward(grad: Any, output: Any, dim: int) -> Any:
    """d/d(g) of g - exp(output) * sum(g): grad - sum(grad * exp(output))."""
    return grad - (grad * output.exp()).sum(dim, keepdim=True)


def log_softmax_double_backward(grad: Any, grad_output: Any, dim: int, output: Any) -> Any:
    """d/d(output) of g - exp(output) * sum(g): -grad * exp(output) * sum(g)."""
    return -grad * output.exp() * grad_output.sum(dim, keepdim=True)


# ---- pointwise losses -------------------------------------------------------------------------------
# A loss backward is grad_input = go' * f'(self, target) with go' = grad_output, divided by
# the number of elements for a mean. Its gradients: d/d(grad_output) = grad * f' (summed,
# and divided for a mean), d/d(self) = grad * go' * f''_xx, d/d(target) = grad * go' * f''_xt.


def _norm(grad_output: Any, reduction: int, like: Any) -> Any:
    if reduction == _MEAN:
        n = like.numel()
        return grad_output / n if n else grad_output
    return grad_output


def loss_grad_output_backward(grad: Any, fprime: Any, reduction: int) -> Any:
    if reduction == _NONE:
        return grad * fprime
    t = (grad * fprime).sum()
    return t / fprime.numel() if reduction == _MEAN and fprime.numel() else t


def loss_second_derivative(grad: Any, grad_output: Any, second: Any, reduction: int) -> Any:
    return grad * _norm(grad_output, reduction, grad) * second


def smooth_l1_second(self: Any, target: Any, beta: float) -> Any:
    d = self - target
    if beta == 0:
        return _zeros_like(d)
    return (d.abs() < beta).to(d.dtype) / beta


def _sigmoid(x: Any) -> Any:
    return x.sigmoid()


def soft_margin_loss_target_backward(grad: Any, self: Any, target: Any, reduction: int) -> Any:
    """d/dt log(1 + exp(-t x)) = -x sigmoid(-t x)."""
    return _norm(grad, reduction, self * target) * (-self * _sigmoid(-target * self))


def soft_margin_second_self(self: Any, target: Any) -> Any:
    z = target * self
    return target * target * _sigmoid(z) * _sigmoid(-z)


def soft_margin_second_target(self: Any, target: Any) -> Any:
    z = target * self
    return -_sigmoid(-z) + z * _sigmoid(z) * _sigmoid(-z)


def _weight(weight: Any, like: Any) -> Any:
    return 1.0 if weight is None else weight


def bce_target_backward(grad: Any, self: Any, target: Any, weight: Any, reduction: int) -> Any:
    """d/dt of -w (t log x + (1 - t) log(1 - x)) = w (log(1 - x) - log x), logs clamped at -100."""
    dl = (-self).log1p().clamp_min(-100) - self.log().clamp_min(-100)
    return _norm(grad, reduction, self * target) * _weight(weight, self) * dl


def _bce_den(self: Any) -> Any:
    return (self * (1 - self)).clamp_min(1e-12)


def bce_double_backward_grad_output(grad: Any, self: Any, target: Any, weight: Any, reduction: int) -> Any:
    fprime = _weight(weight, self) * (self - target) / _bce_den(self)
    return loss_grad_output_backward(grad, fprime, reduction)


def bce_double_backward_self(grad: Any, grad_output: Any, self: Any, target: Any, weight: Any, reduction: int) -> Any:
    """d/dx (x - t) / (x (1 - x)) = (x^2 - 2 t x + t) / (x (1 - x))^2."""
    den = _bce_den(self)
    second = _weight(weight, self) * (self * self - 2 * target * self + target) / (den * den)
    return loss_second_derivative(grad, grad_output, second, reduction)


def bce_double_backward_target(grad: Any, grad_output: Any, self: Any, target: Any, weight: Any, reduction: int) -> Any:
    second = -_weight(weight, self) / _bce_den(self)
    return loss_second_derivative(grad, grad_output, second, reduction)


def bce_with_logits_backward(
    grad: Any, self: Any, target: Any, weight: Any, pos_weight: Any, reduction: int, wrt: str
) -> Any:
    """Gradients of w ((1 - t) x + (1 + (pw - 1) t) softplus(-x)):
    self: w ((1 + (pw - 1) t) sigmoid(x) - pw t); target: w ((pw - 1) softplus(-x) - x);
    weight: the unweighted loss; pos_weight: w t softplus(-x)."""
    g = _norm(grad, reduction, self * target)
    w = _weight(weight, self)
    sp = ops._call_softplus(-self, 1, 20)  # log(1 + exp(-x))
    if wrt == "self":
        if pos_weight is None:
            return g * w * (_sigmoid(self) - target)
        return g * w * ((1 + (pos_weight - 1) * target) * _sigmoid(self) - pos_weight * target)
    if wrt == "target":
        if pos_weight is None:
            return g * w * (-self)
        return g * w * ((pos_weight - 1) * sp - self)
    if wrt == "weight":
        lw = 1 if pos_weight is None else 1 + (pos_weight - 1) * target
        return g * ((1 - target) * self + lw * sp)
    # pos_weight
    return g * w * target * sp


# ---- ctc -----------------------------------------------------------------------------------------


def ctc_loss_backward(
    grad: Any,
    log_probs: Any,
    targets: Any,
    input_lengths: Any,
    target_lengths: Any,
    nll: Any,
    log_alpha: Any,
    blank: int,
    zero_infinity: bool,
) -> Any:
    if hasattr(input_lengths, "_impl"):
        return ops._call__ctc_loss_backward_Tensor(
            grad, log_probs, targets, input_lengths, target_lengths, nll, log_alpha, blank, zero_infinity
        )
    return ops._call__ctc_loss_backward(
        grad, log_probs, targets, input_lengths, target_lengths, nll, log_alpha, blank, zero_infinity
    )


# ---- embedding -------------------------------------------------------------------------------------


def _counts(indices_flat: Any, num_weights: int, dtype: Any) -> Any:
    ones = ops._call_ones_like(indices_flat, dtype, None, None, None, None)
    zeros = ops._call_zeros(((num_weights,)), dtype, None, indices_flat.device, None)
    return zeros.index_add(0, indices_flat, ones)


def embedding_dense_double_backward(
    grad: Any, indices: Any, padding_idx: int, scale_grad_by_freq: bool, num_weights: int
) -> Any:
    """embedding_dense_backward is linear in grad_output: its adjoint gathers grad's rows back
    (zero for padding_idx, divided by the count under scale_grad_by_freq)."""
    flat = indices.reshape(-1)
    out = grad.index_select(0, flat)
    if scale_grad_by_freq:
        out = out / _counts(flat, num_weights, grad.dtype).index_select(0, flat).unsqueeze(1)
    if padding_idx >= 0:
        out = out.masked_fill((flat == padding_idx).unsqueeze(1), 0.0)
    return out.reshape((*tuple(indices.shape), grad.shape[-1]))


def embedding_bag_dense_double_backward(
    grad: Any,
    indices: Any,
    offset2bag: Any,
    bag_size: Any,
    maximum_indices: Any,
    mode: int,
    per_sample_weights: Any,
    padding_idx: int,
    scale_grad_by_freq: bool,
    num_weights: int,
    num_bags: int,
) -> Any:
    """The adjoint of _embedding_bag_dense_backward in grad (it is linear there): the bag
    reduction of grad's rows (sum / mean), or grad at the max positions."""
    d = grad.shape[-1]
    if mode == 2:
        rows = maximum_indices.clamp_min(0)
        picked = grad.gather(0, rows)
        return picked.masked_fill((bag_size == 0).unsqueeze(1), 0.0)
    flat = indices.reshape(-1)
    rows = grad.index_select(0, flat)
    scale = ops._call_ones_like(flat, grad.dtype, None, None, None, None)
    if scale_grad_by_freq:
        scale = scale / _counts(flat, num_weights, grad.dtype).index_select(0, flat)
    if per_sample_weights is not None:
        scale = scale * per_sample_weights
    if mode == 1:
        scale = scale / bag_size.clamp_min(1).to(grad.dtype).index_select(0, offset2bag)
    if padding_idx >= 0:
        scale = scale.masked_fill(flat == padding_idx, 0.0)
    out = ops._call_zeros((num_bags, d), grad.dtype, None, grad.device, None)
    return out.index_add(0, offset2bag, rows * scale.unsqueeze(1))


# ---- dropout ------------------------------------------------------------------------------------------


def dropout_scale(p: float, train: Any) -> float:
    if train is not None and not train:
        return 1.0
    return 0.0 if p == 1 else 1.0 / (1.0 - p)


# ---- normalization: first derivatives ---------------------------------------------------------------


def batch_norm_backward(
    grad: Any,
    input: Any,
    weight: Any,
    running_mean: Any,
    running_var: Any,
    save_mean: Any,
    save_invstd: Any,
    training: bool,
    eps: float,
    mask: Sequence[bool],
) -> Any:
    return ops._call_native_batch_norm_backward(
        grad, input, weight, running_mean, running_var, save_mean, save_invstd, training, eps, tuple(mask)
    )


def layer_norm_backward(
    grad: Any, input: Any, normalized_shape: Any, mean: Any, rstd: Any, weight: Any, bias: Any, mask: Sequence[bool]
) -> Any:
    return ops._call_native_layer_norm_backward(grad, input, normalized_shape, mean, rstd, weight, bias, tuple(mask))


def group_norm_backward(
    grad: Any, input: Any, mean: Any, rstd: Any, weight: Any, n: int, c: int, hxw: int, group: int, mask: Sequence[bool]
) -> Any:
    return ops._call_native_group_norm_backward(grad, input, mean, rstd, weight, n, c, hxw, group, tuple(mask))


def group_norm_backward_with_stats(
    grads: Sequence[Any],
    input: Any,
    mean: Any,
    rstd: Any,
    weight: Any,
    n: int,
    c: int,
    hxw: int,
    group: int,
    mask: Sequence[bool],
) -> Any:
    """native_group_norm's gradient from all three outputs: as in PyTorch, the per-group
    mean and rstd (N, group) are differentiable outputs too. mean = sum(x) / M and
    rstd = (var + eps)^-1/2 over the M = C/group * HxW elements of a group, so
    d mean / dx = 1 / M and d rstd / dx = -rstd^3 (x - mean) / M."""
    g_out, g_mean, g_rstd = grads
    if g_out is not None:
        gi, gw, gb = group_norm_backward(g_out, input, mean, rstd, weight, n, c, hxw, group, mask)
    else:
        gi = gw = gb = None
    if mask[0] and (g_mean is not None or g_rstd is not None):
        m = (c // group) * hxw
        x = input.reshape(n, group, m)
        extra = None
        if g_mean is not None:
            extra = (g_mean / m).unsqueeze(-1)
        if g_rstd is not None:
            term = (x - mean.unsqueeze(-1)) * (g_rstd * rstd.pow(3) / -m).unsqueeze(-1)
            extra = term if extra is None else term + extra
        assert extra is not None
        extra = extra.expand(n, group, m).reshape(input.shape)
        gi = extra if gi is None else gi + extra
    return gi, gw, gb


def rms_norm_backward(
    grad: Any, input: Any, normalized_shape: Any, rstd: Any, weight: Any, mask: Sequence[bool]
) -> Any:
    return ops._call__fused_rms_norm_backward(grad, input, normalized_shape, rstd, weight, tuple(mask))


# ---- cross_entropy's fused path --------------------------------------------------------------------


def _cross_entropy_backward_twin(
    target: Any, weight: Any, reduction: int, ignore_index: int, label_smoothing: float, total_weight: Any
) -> Any:
    """(grad_output, self) -> (grad_input,) of _cross_entropy_loss_backward written with operators:
    g' (A softmax(x) - q), q = (1 - ls) w[t] onehot(t) + ls / C w over the kept rows, A = sum(q)
    per row, g' = grad_output (per row for 'none', / total_weight for 'mean'); see Loss.cpp."""

    total = total_weight.detach()  # a statistic of the forward: no path back through it

    def twin(g: Any, x: Any) -> tuple[Any]:
        c = x.size(-1)
        keep = (target != ignore_index).to(x.dtype).unsqueeze(-1)
        index = target.masked_fill(target == ignore_index, 0).unsqueeze(-1)
        q = _zeros_like(x).scatter(-1, index, 1.0)
        if weight is not None:
            q = q * weight
        q = q * (1.0 - label_smoothing)
        if label_smoothing > 0.0:
            q = q + (label_smoothing / c) * (1.0 if weight is None else weight)
        q = q * keep
        scale = g.unsqueeze(-1) if reduction == _NONE else (g / total if reduction == _MEAN else g)
        return (scale * (q.sum(-1, keepdim=True) * x.softmax(-1) - q),)

    return twin


def cross_entropy_double_backward(
    grad: Any,
    grad_output: Any,
    self: Any,
    target: Any,
    weight: Any,
    reduction: int,
    ignore_index: int,
    label_smoothing: float,
    total_weight: Any,
    mask: Sequence[bool],
) -> tuple[Any, Any]:
    twin = _cross_entropy_backward_twin(target, weight, reduction, ignore_index, label_smoothing, total_weight)
    gg, gx = _vjp(twin, (grad_output, self), mask, (grad,))
    return gg, gx


# ---- normalization: second derivatives through the twins ------------------------------------------


def _vjp(twin: Any, primals: Sequence[Any], wanted: Sequence[bool], cotangents: Sequence[Any]) -> list[Any]:
    """d <twin(*primals), cotangents> / d primals[i] for the wanted i (None elsewhere). The
    primals that require grad are used as they are, so with create_graph the result stays
    connected to their history (third derivatives)."""
    # the engine, from a formula the engine runs: autograd's modules import _formulas* at the
    # bottom of their stack (engine, _api, function stand on them), so this call goes up
    from ember.autograd import _api

    create_graph = is_grad_enabled()
    with enable_grad():
        args = []
        for p, want in zip(primals, wanted, strict=True):
            if p is not None and want and not p.requires_grad:
                p = p.detach().requires_grad_(True)
            args.append(p)
        outs = twin(*args)
        pairs = [(o, c) for o, c in zip(outs, cotangents, strict=True) if o is not None and c is not None]
        targets = [a for a, want in zip(args, wanted, strict=True) if want and a is not None]
        if not pairs or not targets:
            return [None if not w or p is None else _zeros_like(p) for p, w in zip(primals, wanted, strict=True)]
        grads = _api.grad(
            [o for o, _ in pairs], targets, [c for _, c in pairs], create_graph=create_graph, allow_unused=True
        )
    result: list[Any] = []
    it = iter(grads)
    for p, want in zip(args, wanted, strict=True):
        if want and p is not None:
            g = next(it)
            result.append(_zeros_like(p) if g is None else g)
        else:
            result.append(None)
    return result


def _stat_dims(x: Any, first: int) -> tuple[int, ...]:
    return tuple(range(first, x.dim()))


def _row_norm_twin(rms: bool, axis: int, eps_of: Any) -> Any:
    """(grad_out, input, weight) -> (grad_input, grad_weight, grad_bias) of layer / RMS norm over dims >= axis."""

    def twin(g: Any, x: Any, w: Any) -> tuple[Any, Any, Any]:
        dims = _stat_dims(x, axis)
        mean = 0.0 if rms else x.mean(dims, keepdim=True)
        xc = x - mean
        var = (xc * xc).mean(dims, keepdim=True)
        rstd = (var + eps_of(x)).rsqrt()
        xhat = xc * rstd
        dxhat = g if w is None else g * w
        n = 1
        for d in dims:
            n *= x.shape[d]
        s2 = (dxhat * xhat).sum(dims, keepdim=True)
        gi = dxhat - xhat * s2 / n
        if not rms:
            gi = gi - dxhat.sum(dims, keepdim=True) / n
        gi = gi * rstd
        lead = tuple(range(axis))
        gw = g * xhat if w is not None else None
        gb = g
        if lead:  # (sum over no dims would sum them all)
            gw = gw.sum(lead) if gw is not None else None
            gb = gb.sum(lead)
        return gi, gw, gb

    return twin


def _recovered_eps(x: Any, rstd: Any, axis: int, rms: bool) -> Any:
    """eps = 1 / rstd^2 - var(x) (a constant), per normalised row."""
    xd = x.detach()
    dims = _stat_dims(xd, axis)
    xc = xd if rms else xd - xd.mean(dims, keepdim=True)
    var = (xc * xc).mean(dims, keepdim=True)
    r = rstd.detach().to(var.dtype).reshape(tuple(var.shape))
    return 1.0 / (r * r) - var


def layer_norm_double_backward(
    grads: Sequence[Any],
    grad_out: Any,
    input: Any,
    normalized_shape: Any,
    mean: Any,
    rstd: Any,
    weight: Any,
    bias: Any,
    output_mask: Sequence[bool],
    mask: Sequence[bool],
) -> Any:
    axis = input.dim() - len(tuple(normalized_shape))
    eps = _recovered_eps(input, rstd, axis, False)
    twin = _row_norm_twin(False, axis, lambda x: eps)
    cot = [g if m else None for g, m in zip(grads, output_mask, strict=True)]
    return tuple(_vjp(twin, (grad_out, input, weight), mask, cot))


def rms_norm_double_backward(
    grads: Sequence[Any],
    grad_out: Any,
    input: Any,
    normalized_shape: Any,
    rstd: Any,
    weight: Any,
    output_mask: Sequence[bool],
    mask: Sequence[bool],
) -> Any:
    axis = input.dim() - len(tuple(normalized_shape))
    eps = _recovered_eps(input, rstd, axis, True)
    base = _row_norm_twin(True, axis, lambda x: eps)

    def twin(g: Any, x: Any, w: Any) -> tuple[Any, Any]:
        gi, gw, _ = base(g, x, w)
        return gi, gw

    cot = [g if m else None for g, m in zip(grads, output_mask, strict=True)]
    return tuple(_vjp(twin, (grad_out, input, weight), mask, cot))


def group_norm_double_backward(
    grads: Sequence[Any],
    grad_out: Any,
    input: Any,
    mean: Any,
    rstd: Any,
    weight: Any,
    n: int,
    c: int,
    hxw: int,
    group: int,
    output_mask: Sequence[bool],
    mask: Sequence[bool],
) -> Any:
    shape = tuple(input.shape)
    grouped = (n, group, (c // group) * hxw)
    eps = _recovered_eps(input.reshape(grouped), rstd, 2, False)

    def twin(g: Any, x: Any, w: Any) -> tuple[Any, Any, Any]:
        xg = x.reshape(grouped)
        mu = xg.mean(2, keepdim=True)
        xc = xg - mu
        rs = ((xc * xc).mean(2, keepdim=True) + eps).rsqrt()
        xhat = (xc * rs).reshape(n, c, hxw)
        g3 = g.reshape(n, c, hxw)
        wv = 1.0 if w is None else w.reshape(1, c, 1)
        dxhat = (g3 * wv).reshape(grouped)
        xh = xhat.reshape(grouped)
        m = grouped[2]
        gi = (dxhat - dxhat.sum(2, keepdim=True) / m - xh * (dxhat * xh).sum(2, keepdim=True) / m) * rs
        gw = (g3 * xhat).sum((0, 2)) if w is not None else None
        gb = g3.sum((0, 2))
        return gi.reshape(shape), gw, gb

    cot = [g if m else None for g, m in zip(grads, output_mask, strict=True)]
    return tuple(_vjp(twin, (grad_out, input, weight), mask, cot))


def batch_norm_double_backward(
    grads: Sequence[Any],
    grad_out: Any,
    input: Any,
    weight: Any,
    running_mean: Any,
    running_var: Any,
    save_mean: Any,
    save_invstd: Any,
    train: bool,
    eps: float,
    output_mask: Sequence[bool],
    mask: Sequence[bool],
) -> Any:
    c = input.shape[1]
    bshape = (1, c) + (1,) * (input.dim() - 2)
    dims = (0, *tuple(range(2, input.dim())))

    def twin(g: Any, x: Any, w: Any) -> tuple[Any, Any, Any]:
        if train:
            mu = x.mean(dims, keepdim=True)
            xc = x - mu
            invstd = ((xc * xc).mean(dims, keepdim=True) + eps).rsqrt()
        else:
            xc = x - running_mean.detach().to(x.dtype).reshape(bshape)
            invstd = (running_var.detach().to(x.dtype).reshape(bshape) + eps).rsqrt()
        xhat = xc * invstd
        wv = 1.0 if w is None else w.reshape(bshape)
        gb = g.sum(dims)
        gw = (g * xhat).sum(dims)
        if train:
            count = x.numel() // c if c else 0
            gi = (g - gb.reshape(bshape) / count - xhat * gw.reshape(bshape) / count) * invstd * wv
        else:
            gi = g * invstd * wv
        return gi, gw, gb

    cot = [g if m else None for g, m in zip(grads, output_mask, strict=True)]
    return tuple(_vjp(twin, (grad_out, input, weight), mask, cot))
