"""Composite kernels of the neural-network family: softmax front ends, the normalization
front ends, the composite losses, embedding / embedding_bag front ends and dropout.

Each function takes its schema's arguments positionally (native_functions.yaml, section
"softmax / normalization / losses / embedding / dropout") and calls operators through
their dispatcher entries or Tensor methods, so autograd differentiates it through the
operators it calls. The kernels they rest on are C++ (csrc/native/SoftMax.cpp,
Normalization.cpp, Loss.cpp, LossCTC.cpp, Embedding.cpp, Dropout.cpp). Composites are
the ops PyTorch itself writes as composites (cross_entropy = log_softmax + nll_loss, ...).

``reduction`` is PyTorch's enum (0 none, 1 mean, 2 sum); the functions written for
``torch.nn.functional`` signatures that have no aten op (gaussian_nll_loss) take its
string form.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import ember.aten as ea
import ember.c10py as _c10
from ember.aten import _dispatch
from ember.aten._generated import _ops as ops
from ember.aten._sparse import _make

_wrap = _c10.maybe_wrap_dim

_NONE, _MEAN, _SUM = 0, 1, 2
_REDUCTION_NAMES = {"none": _NONE, "mean": _MEAN, "sum": _SUM}


def _shape(t: Any) -> tuple[int, ...]:
    return tuple(t._impl.sizes)


def _prod(xs: Any) -> int:
    n = 1
    for x in xs:
        n *= x
    return n


def _check_reduction(reduction: Any, op: str) -> int:
    if isinstance(reduction, str):
        if reduction not in _REDUCTION_NAMES:
            raise ValueError(f"{reduction} is not a valid value for reduction")
        return _REDUCTION_NAMES[reduction]
    if reduction not in (_NONE, _MEAN, _SUM):
        raise ValueError(f"{op}: reduction must be 0 (none), 1 (mean) or 2 (sum), but got {reduction}")
    return int(reduction)


def _reduce(loss: Any, reduction: int) -> Any:
    """PyTorch's apply_loss_reduction."""
    if reduction == _MEAN:
        return loss.mean()
    if reduction == _SUM:
        return loss.sum()
    return loss


def _ea() -> Any:
    return ea


# ---- softmax -------------------------------------------------------------------------------


def softmax_int(self: Any, dim: int, dtype: Any) -> Any:
    x = self if dtype is None else self.to(dtype)
    return ops._call__softmax(x, dim, False)


def log_softmax_int(self: Any, dim: int, dtype: Any) -> Any:
    x = self if dtype is None else self.to(dtype)
    return ops._call__log_softmax(x, dim, False)


def _implicit_softmax_dim(name: str, ndim: int) -> int:
    """nn.functional's choice when no dim is given (deprecated there, with this warning)."""
    dim = 0 if ndim in (0, 1, 3) else 1
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X as an argument.",
        stacklevel=4,
    )
    return dim


def softmin(input: Any, dim: Any, dtype: Any) -> Any:
    if dim is None:
        dim = _implicit_softmax_dim("softmin", input.dim())
    x = -input
    if dtype is not None:
        x = x.to(dtype)
    return ops._call__softmax(x, dim, False)


# ---- normalization ---------------------------------------------------------------------------


def _check_features(t: Any, name: str, n: int) -> None:
    if t is not None and t.numel() != n:
        raise RuntimeError(f"{name} should contain {n} elements not {t.numel()}")


def batch_norm(
    input: Any,
    weight: Any,
    bias: Any,
    running_mean: Any,
    running_var: Any,
    training: bool,
    momentum: float,
    eps: float,
    cudnn_enabled: bool,
) -> Any:
    if input.numel() == 0:
        # nothing to normalise (and the running statistics stay as they are); an op, not a
        # view of the input, so the gradient chain goes on. Checked before the channel dim,
        # as PyTorch does: an empty 1-d input is accepted.
        out = input.clone()
        if weight is not None:
            out = out * weight[0]
        if bias is not None:
            out = out + bias[0]
        return out
    if input.dim() < 2:
        input.size(1)  # PyTorch's IndexError: the channel dim is dim 1
    c = input.size(1)
    for t, name in ((running_mean, "running_mean"), (running_var, "running_var"), (weight, "weight"), (bias, "bias")):
        _check_features(t, name, c)
    return ops._call_native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)[0]


def instance_norm(
    input: Any,
    weight: Any,
    bias: Any,
    running_mean: Any,
    running_var: Any,
    use_input_stats: bool,
    momentum: float,
    eps: float,
    cudnn_enabled: bool,
) -> Any:
    """Batch norm over a (1, N*C, *) view: every (sample, channel) pair is its own channel."""
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
    shape = _shape(input)
    if len(shape) < 2:
        input.size(1)
    b, c = shape[0], shape[1]

    def repeat(t: Any) -> Any:
        return None if t is None else t.repeat(b)

    rm, rv = repeat(running_mean), repeat(running_var)
    x = input.contiguous().view(1, b * c, *shape[2:])
    out = batch_norm(x, repeat(weight), repeat(bias), rm, rv, use_input_stats, momentum, eps, cudnn_enabled)
    # the running statistics were updated per (sample, channel): average them back per channel
    if running_mean is not None and use_input_stats:
        running_mean.copy_(rm.view(b, c).mean(0).detach())
    if running_var is not None and use_input_stats:
        running_var.copy_(rv.view(b, c).mean(0).detach())
    return out.view(shape)


def layer_norm(input: Any, normalized_shape: Any, weight: Any, bias: Any, eps: float, cudnn_enable: bool) -> Any:
    return ops._call_native_layer_norm(input, normalized_shape, weight, bias, eps)[0]


def group_norm(input: Any, num_groups: int, weight: Any, bias: Any, eps: float, cudnn_enabled: bool) -> Any:
    shape = _shape(input)
    if len(shape) < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {len(shape)}")
    n, c = shape[0], shape[1]
    if num_groups <= 0 or c % num_groups != 0:
        raise RuntimeError(
            "Expected number of channels in input to be divisible by num_groups, but got input of shape "
            f"{list(shape)} and num_groups={num_groups}"
        )
    for t, name in ((weight, "weight"), (bias, "bias")):
        if t is not None and (t.dim() != 1 or t.numel() != c):
            raise RuntimeError(
                f"Expected {name} to be a vector of size equal to the number of channels in input, but got {name} "
                f"of shape {list(_shape(t))} and input of shape {list(shape)}"
            )
    hxw = _prod(shape[2:])
    return ops._call_native_group_norm(input.contiguous(), weight, bias, n, c, hxw, num_groups, eps)[0]


def rms_norm(input: Any, normalized_shape: Any, weight: Any, eps: Any) -> Any:
    return ops._call__fused_rms_norm(input, normalized_shape, weight, eps)[0]


# ---- nll_loss / cross_entropy ------------------------------------------------------------------


def nll_loss(self: Any, target: Any, weight: Any, reduction: int, ignore_index: int) -> Any:
    return ops._call_nll_loss_forward(self, target, weight, reduction, ignore_index)[0]


def nll_loss2d(self: Any, target: Any, weight: Any, reduction: int, ignore_index: int) -> Any:
    return ops._call_nll_loss2d_forward(self, target, weight, reduction, ignore_index)[0]


def nll_loss_nd(self: Any, target: Any, weight: Any, reduction: int, ignore_index: int) -> Any:
    """nll_loss for (C), (N, C) and (N, C, d1, ..., dK) inputs: K = 2 is nll_loss2d; other K
    run as nll_loss2d over (N, C, 1, d1 * ... * dK)."""
    nd = self.dim()
    if nd < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {nd})")
    if nd != 1 and self.size(0) != target.size(0):
        raise ValueError(f"Expected input batch_size ({self.size(0)}) to match target batch_size ({target.size(0)}).")
    if nd in (1, 2):
        return nll_loss(self, target, weight, reduction, ignore_index)
    if nd == 4:
        return nll_loss2d(self, target, weight, reduction, ignore_index)
    shape = _shape(self)
    n, c = shape[0], shape[1]
    out_size = (n, *shape[2:])
    if _shape(target)[1:] != shape[2:]:
        raise RuntimeError(f"Expected target size {list(out_size)}, got {list(_shape(target))}")
    rest = _prod(shape[2:])
    x = self.contiguous().view(n, c, 1, rest)
    t = target.contiguous().view(n, 1, rest)
    out = nll_loss2d(x, t, weight, reduction, ignore_index)
    return out.view(out_size) if reduction == _NONE else out


def _class_weight_view(weight: Any, ndim: int, class_dim: int) -> Any:
    """weight (C) viewed to broadcast along the class dim of an ndim input."""
    shape = [1] * ndim
    shape[class_dim] = weight.numel()
    return weight.view(*shape)


def cross_entropy_loss(
    self: Any, target: Any, weight: Any, reduction: int, ignore_index: int, label_smoothing: float
) -> Any:
    """log_softmax over the class dim, then nll_loss_nd (class indices) or the sum of
    -target * log_probs (class probabilities: target has the input's shape)."""
    reduction = _check_reduction(reduction, "cross_entropy")
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    class_dim = 0 if self.dim() == 1 else 1
    if _shape(self) == _shape(target):
        if not target.dtype.is_floating_point:
            raise RuntimeError(
                f"Expected floating point type for target with class probabilities, got {_st_name(target.dtype)}"
            )
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        return _cross_entropy_probs(self, target, weight, reduction, label_smoothing, class_dim)
    if _fused_cross_entropy(self, target, weight):
        out = ops._call__cross_entropy_loss_forward(self, target, weight, reduction, ignore_index, label_smoothing)
        return out[0]
    if label_smoothing > 0.0:
        return _cross_entropy_smoothed(self, target, weight, reduction, ignore_index, label_smoothing, class_dim)
    return nll_loss_nd(ops._call__log_softmax(self, class_dim, False), target, weight, reduction, ignore_index)


_FUSED_CE_DTYPES = (_c10.float32, _c10.float64)
_PYTHON_MODE_BITS = _dispatch.key_bits(_c10.DispatchKey.Python)


def _fused_cross_entropy(self: Any, target: Any, weight: Any) -> bool:
    """Whether cross_entropy with class indices runs the fused kernel (_cross_entropy_loss_forward,
    csrc/native/Loss.cpp: log_softmax + nll_loss in one pass each way): a CPU float32 / float64
    input of shape (N, C) or (C) with an int64 target of shape (N) or (), class weights (if any)
    of its dtype and device. Under a Python dispatcher mode (fx's capture, which records a
    composite's parts when autograd runs) the parts stay log_softmax + nll_loss_forward, the
    primitives graph backends fuse with their neighbours; other inputs (and bad ones, whose
    errors nll_loss reports) take the unfused chain."""
    if _dispatch.tls.include & _dispatch.tls.exclude_not & _PYTHON_MODE_BITS:
        return False
    nd = self.dim()
    if nd == 2:
        if target.dim() != 1 or target.size(0) != self.size(0):
            return False
    elif nd != 1 or target.dim() != 0:
        return False
    if self.dtype not in _FUSED_CE_DTYPES or target.dtype != _c10.int64 or not self.is_cpu or not target.is_cpu:
        return False
    if self.size(-1) == 0:
        return False
    return weight is None or (weight.dtype == self.dtype and weight.is_cpu and weight.numel() == self.size(-1))


_ST = {
    "bool": "Bool",
    "uint8": "Byte",
    "int8": "Char",
    "int16": "Short",
    "int32": "Int",
    "int64": "Long",
    "float16": "Half",
    "bfloat16": "BFloat16",
    "float32": "Float",
    "float64": "Double",
}


def _st_name(dtype: Any) -> str:
    return _ST.get(str(dtype).rsplit(".", 1)[-1], str(dtype))


def _cross_entropy_probs(
    self: Any, target: Any, weight: Any, reduction: int, label_smoothing: float, class_dim: int
) -> Any:
    n_classes = self.size(class_dim)
    logp = ops._call__log_softmax(self, class_dim, False)
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / n_classes
    if weight is not None:
        if weight.numel() != n_classes:
            raise RuntimeError(
                f"cross_entropy: weight tensor should be defined either for all {n_classes} classes or no classes "
                f"but got weight tensor of shape: {list(_shape(weight))}"
            )
        terms = logp * target * _class_weight_view(weight, self.dim(), class_dim)
    else:
        terms = logp * target
    if reduction == _MEAN:
        # the mean over the samples (not weighted by the class weights), as PyTorch
        return -terms.sum() / (self.numel() // max(n_classes, 1) if self.numel() else 0)
    if reduction == _SUM:
        return -terms.sum()
    return -terms.sum(class_dim)


def _cross_entropy_smoothed(
    self: Any, target: Any, weight: Any, reduction: int, ignore_index: int, label_smoothing: float, class_dim: int
) -> Any:
    """(1 - eps) * nll + eps / C * (the loss against the uniform distribution), the second
    term normalised like the first (by the weights of the non-ignored targets)."""
    n_classes = self.size(class_dim)
    logp = ops._call__log_softmax(self, class_dim, False)
    nll = nll_loss_nd(logp, target, weight, reduction, ignore_index)
    ignore_mask = target == ignore_index
    if weight is not None:
        if weight.numel() != n_classes:
            raise RuntimeError(
                f"weight tensor should be defined either for all {n_classes} classes or no classes but got weight "
                f"tensor of shape: {list(_shape(weight))}"
            )
        smooth = -(logp * _class_weight_view(weight, self.dim(), class_dim)).sum(class_dim)
    else:
        smooth = -logp.sum(class_dim)
    smooth = smooth.masked_fill(ignore_mask, 0.0)
    if reduction == _MEAN:
        keep = ignore_mask.logical_not()
        if weight is not None:
            denom = weight.gather(0, target.masked_select(keep).reshape(-1)).sum()
        else:
            denom = keep.sum()
        smooth = smooth.sum() / denom
    elif reduction == _SUM:
        smooth = smooth.sum()
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / n_classes)


# ---- other composite losses -----------------------------------------------------------------------


def l1_loss(self: Any, target: Any, reduction: int) -> Any:
    return _reduce((self - target).abs(), _check_reduction(reduction, "l1_loss"))


def kl_div(self: Any, target: Any, reduction: int, log_target: bool) -> Any:
    """target * (log target - input), with 0 log 0 = 0 (xlogy); log_target: target holds log-probabilities."""
    reduction = _check_reduction(reduction, "kl_div")
    if log_target:
        out = target.exp() * (target - self)
    else:
        out = ops._call_xlogy_Tensor(target, target) - target * self
    return _reduce(out, reduction)


def margin_ranking_loss(input1: Any, input2: Any, target: Any, margin: float, reduction: int) -> Any:
    reduction = _check_reduction(reduction, "margin_ranking_loss")
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0), reduction)


def cosine_embedding_loss(input1: Any, input2: Any, target: Any, margin: float, reduction: int) -> Any:
    """1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where it is -1."""
    reduction = _check_reduction(reduction, "cosine_embedding_loss")
    tdim = target.dim()
    if tdim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if tdim == 1 and (input1.dim() != 2 or input2.dim() != 2):
        raise RuntimeError(
            f"1D target tensor expects 2D input tensors, but found inputs with sizes {list(_shape(input1))} and "
            f"{list(_shape(input2))}."
        )
    if tdim == 0 and (input1.dim() != 1 or input2.dim() != 1):
        raise RuntimeError(
            f"0D target tensor expects 1D input tensors, but found inputs with sizes {list(_shape(input1))} and "
            f"{list(_shape(input2))}."
        )
    eps = 1e-12
    prod = (input1 * input2).sum(tdim)
    mag1 = (input1 * input1).sum(tdim) + eps
    mag2 = (input2 * input2).sum(tdim) + eps
    cos = prod / (mag1 * mag2).sqrt()
    zeros = cos.new_zeros(())
    pos = ops._call_where_self(target == 1, 1 - cos, zeros)
    neg = ops._call_where_self(target == -1, (cos - margin).clamp_min(0), zeros)
    return _reduce(pos + neg, reduction)


def hinge_embedding_loss(self: Any, target: Any, margin: float, reduction: int) -> Any:
    """x where target is 1, max(0, margin - x) where it is -1."""
    reduction = _check_reduction(reduction, "hinge_embedding_loss")
    zeros = self.new_zeros(())
    margin_part = ops._call_where_self(target != 1, (margin - self).clamp_min(0), zeros)
    self_part = ops._call_where_self(target != -1, self, zeros)
    return _reduce(margin_part + self_part, reduction)


def _pairwise_distance(x1: Any, x2: Any, p: float, eps: float) -> Any:
    """||x1 - x2 + eps||_p over the last dim (PyTorch's pairwise_distance)."""
    return ops._call_linalg_vector_norm(x1 - x2 + eps, p, (-1,), False, None)


def triplet_margin_loss(
    anchor: Any, positive: Any, negative: Any, margin: float, p: float, eps: float, swap: bool, reduction: int
) -> Any:
    reduction = _check_reduction(reduction, "triplet_margin_loss")
    a, pd, nd = anchor.dim(), positive.dim(), negative.dim()
    if not (a == pd == nd):
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number of dimensions, but got: "
            f"anchor {a}D, positive {pd}D, and negative {nd}D inputs"
        )
    d_pos = _pairwise_distance(anchor, positive, p, eps)
    d_neg = _pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = ops._call_minimum(d_neg, _pairwise_distance(positive, negative, p, eps))
    return _reduce((d_pos - d_neg + margin).clamp_min(0), reduction)


def poisson_nll_loss(input: Any, target: Any, log_input: bool, full: bool, eps: float, reduction: int) -> Any:
    """exp(input) - target * input (log_input) or input - target * log(input + eps); full adds
    Stirling's approximation of log(target!) where target > 1."""
    reduction = _check_reduction(reduction, "poisson_nll_loss")
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + (target * (2 * math.pi)).log() * 0.5
        loss = loss + stirling.masked_fill(target <= 1, 0.0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input: Any, target: Any, var: Any, full: bool, eps: float, reduction: str) -> Any:
    """0.5 * (log(max(var, eps)) + (input - target)^2 / max(var, eps)) (+ 0.5 log(2 pi) when full).
    var has the input's shape, or lacks its last dim / has 1 there (one variance per sample),
    or is a number."""
    red = _check_reduction(reduction, "gaussian_nll_loss")
    if not hasattr(var, "_impl"):
        var = ops._call_full_like(input, float(var), None, None, None, None, None)
    in_shape, var_shape = _shape(input), _shape(var)
    if var_shape != in_shape:
        if in_shape[:-1] == var_shape:
            var = var.unsqueeze(-1)
        elif not (in_shape[:-1] == var_shape[:-1] and var_shape[-1:] == (1,)):
            raise ValueError("var is of incorrect size")
    if bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    # clamped for stability, with the gradient of var itself (PyTorch clamps under no_grad)
    var = var + (var.clamp_min(eps) - var).detach()
    loss = (var.log() + (input - target) ** 2 / var) * 0.5
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, red)


def _ctc(
    log_probs: Any,
    targets: Any,
    input_lengths: Any,
    target_lengths: Any,
    blank: int,
    reduction: int,
    zero_infinity: bool,
    lengths_are_tensors: bool,
) -> Any:
    reduction = _check_reduction(reduction, "ctc_loss")
    batched = log_probs.dim() == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    tg = targets if batched else targets.unsqueeze(0)
    if lengths_are_tensors:
        il = input_lengths.reshape(-1)
        tl = target_lengths.reshape(-1)
        res = ops._call__ctc_loss_Tensor(lp, tg, il, tl, blank, zero_infinity)[0]
    else:
        il = (input_lengths,) if isinstance(input_lengths, int) else tuple(input_lengths)
        tl = (target_lengths,) if isinstance(target_lengths, int) else tuple(target_lengths)
        res = ops._call__ctc_loss(lp, tg, il, tl, blank, zero_infinity)[0]
    if zero_infinity:
        res = ops._call_where_self(res == math.inf, res.new_zeros(()), res)
    if reduction == _MEAN:
        if lengths_are_tensors:
            lengths = tl.clamp_min(1).to(res.dtype)
        else:
            lengths = _ea().tensor([max(v, 1) for v in tl], dtype=res.dtype)
        return (res / lengths).mean()
    if reduction == _SUM:
        return res.sum()
    return res if batched else res.squeeze(0)


def ctc_loss_IntList(
    log_probs: Any,
    targets: Any,
    input_lengths: Any,
    target_lengths: Any,
    blank: int,
    reduction: int,
    zero_infinity: bool,
) -> Any:
    return _ctc(log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity, False)


def ctc_loss_Tensor(
    log_probs: Any,
    targets: Any,
    input_lengths: Any,
    target_lengths: Any,
    blank: int,
    reduction: int,
    zero_infinity: bool,
) -> Any:
    return _ctc(log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity, True)


# ---- embedding -------------------------------------------------------------------------------------


def embedding_backward(
    grad: Any, indices: Any, num_weights: int, padding_idx: int, scale_grad_by_freq: bool, sparse: bool
) -> Any:
    if sparse:
        return _embedding_sparse_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq)
    return ops._call_embedding_dense_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq)


def _embedding_sparse_backward(
    grad: Any, indices: Any, num_weights: int, padding_idx: int, scale_grad_by_freq: bool
) -> Any:
    """The weight's gradient as a sparse (num_weights, dim) tensor: one row of `grad` per looked-up
    index, duplicates kept (uncoalesced, as PyTorch); rows of padding_idx dropped."""

    dim = grad.shape[-1]
    idx = indices.reshape(-1).to(ea.int64)
    values = grad.reshape(-1, dim)
    if padding_idx >= 0:
        keep = (idx != padding_idx).nonzero().reshape(-1)
        idx, values = idx.index_select(0, keep), values.index_select(0, keep)
    if scale_grad_by_freq:
        counts = ea.zeros(num_weights, dtype=ea.int64, device=idx.device).index_add(0, idx, ea.ones_like(idx))
        values = values / counts.index_select(0, idx).unsqueeze(1).to(values.dtype)
    return _make(idx.unsqueeze(0), values, (num_weights, dim), False)


def embedding_bag(
    weight: Any,
    indices: Any,
    offsets: Any,
    scale_grad_by_freq: bool,
    mode: int,
    sparse: bool,
    per_sample_weights: Any,
    include_last_offset: bool,
) -> Any:
    return ops._call__embedding_bag(
        weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights, include_last_offset, -1
    )


def embedding_bag_padding_idx(
    weight: Any,
    indices: Any,
    offsets: Any,
    scale_grad_by_freq: bool,
    mode: int,
    sparse: bool,
    per_sample_weights: Any,
    include_last_offset: bool,
    padding_idx: Any,
) -> Any:
    return ops._call__embedding_bag(
        weight,
        indices,
        offsets,
        scale_grad_by_freq,
        mode,
        sparse,
        per_sample_weights,
        include_last_offset,
        -1 if padding_idx is None else padding_idx,
    )


def embedding_bag_backward_composite(
    grad: Any,
    indices: Any,
    offsets: Any,
    offset2bag: Any,
    bag_size: Any,
    maximum_indices: Any,
    num_weights: int,
    scale_grad_by_freq: bool,
    mode: int,
    sparse: bool,
    per_sample_weights: Any,
    padding_idx: int,
) -> Any:
    if sparse:
        raise NotImplementedError("embedding_bag: sparse gradients are not supported by ember (use sparse=False)")
    return ops._call__embedding_bag_dense_backward(
        grad,
        indices,
        offset2bag,
        bag_size,
        maximum_indices,
        num_weights,
        scale_grad_by_freq,
        mode,
        per_sample_weights,
        padding_idx,
    )


# ---- dropout -----------------------------------------------------------------------------------------
# All randomness is bernoulli_ on the default Philox generator (native_dropout draws its
# mask the same way), so manual_seed makes every variant reproducible.

_SELU_ALPHA = 1.7580993408473766  # -selu's negative saturation value / its scale


def _check_p(p: float) -> None:
    if p < 0 or p > 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")


def _check_float_input(input: Any) -> None:
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"result type Float can't be cast to the desired output type {_st_name(input.dtype)}")


def _keep_noise(input: Any, p: float, feature: bool) -> Any:
    """1 with probability 1 - p, else 0: per element, or per (sample, channel) for feature dropout."""
    if feature:
        if input.dim() < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = (input.size(0), input.size(1)) + (1,) * (input.dim() - 2)
    else:
        shape = _shape(input)
    noise = input.new_empty(shape)
    return ops._call_bernoulli__float(noise, 1 - p, None)


def _dropout_impl(input: Any, p: float, train: bool, feature: bool, alpha: bool, inplace: bool) -> Any:
    _check_p(p)
    if p == 0 or not train or input.numel() == 0:
        return input
    _check_float_input(input)
    if p == 1:
        zero = input.new_zeros(())
        return input.mul_(zero) if inplace else input * zero
    if not feature and not alpha and not inplace:
        return ops._call_native_dropout(input, p, train)[0]
    noise = _keep_noise(input, p, feature)
    if alpha:
        # keeps mean 0 / variance 1 of SELU activations: dropped units go to -alpha', then a
        # scale a and shift b restore the moments
        a = 1.0 / math.sqrt((_SELU_ALPHA * _SELU_ALPHA * p + 1) * (1 - p))
        b = (noise - 1) * (_SELU_ALPHA * a) + _SELU_ALPHA * a * p
        noise = noise * a
        return input.mul_(noise).add_(b) if inplace else input * noise + b
    noise = noise / (1 - p)
    return input.mul_(noise) if inplace else input * noise


def dropout(input: Any, p: float, train: bool) -> Any:
    return _dropout_impl(input, p, train, False, False, False)


def dropout_(self: Any, p: float, train: bool) -> Any:
    return _dropout_impl(self, p, train, False, False, True)


def feature_dropout(input: Any, p: float, train: bool) -> Any:
    return _dropout_impl(input, p, train, True, False, False)


def feature_dropout_(self: Any, p: float, train: bool) -> Any:
    return _dropout_impl(self, p, train, True, False, True)


def alpha_dropout(input: Any, p: float, train: bool) -> Any:
    return _dropout_impl(input, p, train, False, True, False)


def alpha_dropout_(self: Any, p: float, train: bool) -> Any:
    return _dropout_impl(self, p, train, False, True, True)


def feature_alpha_dropout(input: Any, p: float, train: bool) -> Any:
    return _dropout_impl(input, p, train, True, True, False)


def feature_alpha_dropout_(self: Any, p: float, train: bool) -> Any:
    return _dropout_impl(self, p, train, True, True, True)


def _check_p_value(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _channel_dropout(input: Any, p: float, training: bool, inplace: bool, unbatched: bool) -> Any:
    x = input.unsqueeze(0) if unbatched else input
    out = _dropout_impl(x, p, training, True, False, inplace)
    if unbatched:
        return input if inplace else out.squeeze(0)
    return out


def dropout1d(input: Any, p: float, training: bool, inplace: bool) -> Any:
    _check_p_value(p)
    nd = input.dim()
    if nd not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {nd}D input. Note that dropout1d exists to provide "
            "channel-wise dropout on inputs with 1 spatial dimension, a channel dimension, and an optional batch "
            "dimension (i.e. 2D or 3D inputs)."
        )
    return _channel_dropout(input, p, training, inplace, nd == 2)


def dropout2d(input: Any, p: float, training: bool, inplace: bool) -> Any:
    _check_p_value(p)
    nd = input.dim()
    if nd not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {nd}-D input to dropout2d, which is deprecated and will result in an error in a "
            "future release. To retain the behavior and silence this warning, please use dropout instead. Note that "
            "dropout2d exists to provide channel-wise dropout on inputs with 2 spatial dimensions, a channel "
            "dimension, and an optional batch dimension (i.e. 3D or 4D inputs).",
            stacklevel=3,
        )
    if nd == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior is "
            "desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior will "
            "change in a future release to interpret the input as one without a batch dimension, i.e. shape "
            "(C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=3,
        )
    return _dropout_impl(input, p, training, True, False, inplace)


def dropout3d(input: Any, p: float, training: bool, inplace: bool) -> Any:
    _check_p_value(p)
    nd = input.dim()
    if nd not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {nd}-D input to dropout3d, which is deprecated and will result in an error in a "
            "future release. To retain the behavior and silence this warning, please use dropout instead. Note that "
            "dropout3d exists to provide channel-wise dropout on inputs with 3 spatial dimensions, a channel "
            "dimension, and an optional batch dimension (i.e. 4D or 5D inputs).",
            stacklevel=3,
        )
    return _channel_dropout(input, p, training, inplace, nd == 4)
