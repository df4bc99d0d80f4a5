"""OpInfo entries of the softmax, normalization, loss, embedding and dropout family.

References are float64 NumPy, written here from PyTorch's definitions:
  softmax(x)_i = exp(x_i - max x) / sum_j exp(x_j - max x); log_softmax = x - max - log(sum);
  batch norm normalises each channel over (N, *) with the biased variance (training) or the
  running statistics (evaluation); layer / RMS norm over the trailing normalized_shape dims,
  group norm over (C / G, *) of each sample, instance norm over (*) of each (sample, channel);
  the losses follow their documented formulas, with reduction 0 none / 1 mean / 2 sum;
  ctc_loss is checked against a brute-force sum over every alignment of tiny inputs.
Randomised behaviour (dropout masks, running-statistics updates) is in test_nn_ops.py; the
table holds dropout's deterministic cases (p = 0, p = 1, train=False).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from typing import Any

import ember.aten as ea
import numpy as np

from .core import FLOAT_DTYPES, ErrorInput, OpInfo, SampleInput, make_tensor, tensor_from

F64 = (ea.float32, ea.float64)
# sums over a row / channel in float32 / float16 round more than one element does
NORM_TOLS = {ea.float32: (1e-5, 1e-5), ea.float16: (2e-3, 2e-3), ea.bfloat16: (2e-2, 2e-2)}
# group_norm's CPU kernel applies x * (rstd w) + (b - mean rstd w): in float32 that cancels
# when |mean| * rstd is large (groups of two close values: ~5e-5 off on the AVX2 copy).
# Centring first would fix it; until then this entry states the error it has.
GROUP_NORM_TOLS = {**NORM_TOLS, ea.float32: (1e-4, 1e-4)}
LOSS_TOLS = {ea.float32: (1e-5, 1e-5), ea.float16: (2e-3, 2e-3), ea.bfloat16: (2e-2, 2e-2)}
# composites computed step by step in float16 / bfloat16 round at every step
COMPOSITE_TOLS = {ea.float32: (1e-5, 1e-5), ea.float16: (2e-2, 1e-2), ea.bfloat16: (1e-1, 5e-2)}


def _t(shape: tuple[int, ...], dtype: Any, **kw: Any) -> Any:
    if not dtype.is_floating_point:
        kw = {}  # (the unsupported-dtype test makes samples of every dtype)
    return make_tensor(shape, dtype, **kw)


def _idx(values: Any) -> Any:
    return ea.tensor(values, dtype=ea.int64)


def _same(s: SampleInput) -> Any:
    return s.input.dtype


def _reduce(loss: np.ndarray, reduction: int) -> Any:
    if reduction == 1:
        return np.mean(loss) if loss.size else np.nan
    if reduction == 2:
        return np.sum(loss)
    return loss


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


# ---- softmax ---------------------------------------------------------------------------------


def ref_softmax(x: np.ndarray, dim: int, dtype: Any = None) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 0 or x.size == 0:
        return np.ones_like(x)
    m = np.max(x, axis=dim, keepdims=True)
    e = np.exp(x - m)
    return e / e.sum(axis=dim, keepdims=True)


def ref_log_softmax(x: np.ndarray, dim: int, dtype: Any = None) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 0 or x.size == 0:
        return np.zeros_like(x)
    m = np.max(x, axis=dim, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=dim, keepdims=True))


def ref_softmin(x: np.ndarray, dim: Any = None, dtype: Any = None) -> np.ndarray:
    return ref_softmax(-np.asarray(x, dtype=np.float64), dim)


def _softmax_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(_t((), dtype), (0,), name="0-dim")
    yield SampleInput(_t((5,), dtype), (0,), name="vector")
    x = _t((3, 4), dtype)
    for d in (0, 1, -1):
        yield SampleInput(x, (d,), name=f"(3, 4) dim={d}")
    y = _t((2, 3, 5), dtype)
    for d in (0, 1, 2):
        yield SampleInput(y, (d,), name=f"(2, 3, 5) dim={d}")
    yield SampleInput(_t((2, 0, 3), dtype), (1,), name="empty")
    yield SampleInput(_t((3, 300), dtype, low=-3, high=3), (1,), name="long rows")
    yield SampleInput(_t((2, 70, 3), dtype, low=-3, high=3), (2,), name="3 columns")
    yield SampleInput(_t((4, 300), dtype, low=-3, high=3), (0,), name="many columns")
    if dtype != ea.float64:
        yield SampleInput(x, (1,), {"dtype": ea.float64}, name="dtype=float64")


def _softmin_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    x = _t((3, 4), dtype)
    yield SampleInput(x, (1,), name="dim 1")
    yield SampleInput(x, (0,), name="dim 0")
    yield SampleInput(_t((2, 3, 4), dtype), (2,), name="3-d")


def _softmax_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield ErrorInput(SampleInput(_t((3, 4), ea.float32), (2,)), IndexError, r"Dimension out of range")
    yield ErrorInput(SampleInput(_idx([1, 2]), (0,)), NotImplementedError, r"not implemented for 'Long'")


# ---- normalization ---------------------------------------------------------------------------------


def _bshape(x: np.ndarray) -> tuple[int, ...]:
    return (1, x.shape[1]) + (1,) * (x.ndim - 2)


def ref_native_batch_norm(
    x: np.ndarray, w: Any, b: Any, rm: Any, rv: Any, training: bool, momentum: float, eps: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    axes = (0, *tuple(range(2, x.ndim)))
    if training:
        mean = x.mean(axis=axes)
        var = x.var(axis=axes)
    else:
        mean, var = rm, rv
    invstd = 1.0 / np.sqrt(var + eps)
    bs = _bshape(x)
    out = (x - mean.reshape(bs)) * invstd.reshape(bs)
    if w is not None:
        out = out * w.reshape(bs)
    if b is not None:
        out = out + b.reshape(bs)
    if not training:
        return out, np.zeros(0), np.zeros(0)
    return out, mean, invstd


def ref_batch_norm(
    x: np.ndarray, w: Any, b: Any, rm: Any, rv: Any, training: bool, momentum: float, eps: float, cudnn: bool = False
) -> np.ndarray:
    if x.size == 0:
        return x.copy()
    return ref_native_batch_norm(x, w, b, rm, rv, training, momentum, eps)[0]


def _bn_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    # training first (the gradient tests use the first samples; running statistics are not
    # differentiable, so evaluation-mode samples come last)
    pdt = ea.float32 if dtype in (ea.float16, ea.bfloat16) else dtype
    x = _t((4, 3), dtype)
    w, b = _t((3,), pdt), _t((3,), pdt)
    yield SampleInput(x, (w, b, None, None, True, 0.1, 1e-5), name="(4, 3) affine")
    yield SampleInput(_t((2, 3, 4), dtype), (None, None, None, None, True, 0.1, 1e-5), name="(2, 3, 4)")
    yield SampleInput(_t((2, 2, 2, 3), dtype), (_t((2,), pdt), None, None, None, True, 0.1, 1e-3), name="4-d")
    yield SampleInput(
        _t((3, 2, 5), dtype),
        (w[:2], b[:2], _t((2,), pdt), _t((2,), pdt, low=0.5, high=2), True, 0.2, 1e-5),
        name="with running stats",
    )
    yield SampleInput(_t((8, 70), dtype, low=-2, high=2), (None, None, None, None, True, 0.1, 1e-5), name="many cols")
    rm, rv = _t((3,), pdt), _t((3,), pdt, low=0.5, high=2)
    yield SampleInput(_t((2, 3, 4), dtype), (w, b, rm, rv, False, 0.1, 1e-5), name="eval")
    yield SampleInput(x, (None, None, rm, rv, False, 0.1, 1e-5), name="eval 2-d")


def _batch_norm_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for s in _bn_samples(op, dtype):
        yield SampleInput(s.input, (*s.args, False), name=s.name)


def _bn_errors(op: OpInfo) -> Iterator[ErrorInput]:
    x = _t((4, 3), ea.float32)
    yield ErrorInput(
        SampleInput(x, (_t((4,), ea.float32), None, None, None, True, 0.1, 1e-5, False)),
        RuntimeError,
        r"weight should contain 3 elements not 4",
    )
    yield ErrorInput(
        SampleInput(x, (None, None, None, None, False, 0.1, 1e-5, False)),
        RuntimeError,
        r"running_mean must be defined in evaluation mode",
    )
    yield ErrorInput(
        SampleInput(x, (None, None, _t((3,), ea.float32), None, True, 0.1, 1e-5, False)),
        ValueError,
        r"running_mean and running_var must either both be None or neither be None",
    )
    yield ErrorInput(
        SampleInput(x.double(), (_t((3,), ea.float32), None, None, None, True, 0.1, 1e-5, False)),
        RuntimeError,
        r"mixed dtype \(CPU\): all inputs must share same datatype",
    )
    yield ErrorInput(
        SampleInput(_t((3,), ea.float32), (None, None, None, None, True, 0.1, 1e-5, False)),
        IndexError,
        r"Dimension out of range",
    )


def ref_instance_norm(
    x: np.ndarray,
    w: Any,
    b: Any,
    rm: Any,
    rv: Any,
    use_input_stats: bool,
    momentum: float,
    eps: float,
    cudnn: bool = False,
) -> np.ndarray:
    axes = tuple(range(2, x.ndim))
    if use_input_stats:
        mean = x.mean(axis=axes, keepdims=True)
        var = x.var(axis=axes, keepdims=True)
    else:
        mean, var = rm.reshape(_bshape(x)), rv.reshape(_bshape(x))
    out = (x - mean) / np.sqrt(var + eps)
    if w is not None:
        out = out * w.reshape(_bshape(x))
    if b is not None:
        out = out + b.reshape(_bshape(x))
    return out


def _instance_norm_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    pdt = ea.float32 if dtype in (ea.float16, ea.bfloat16) else dtype
    yield SampleInput(
        _t((2, 3, 4), dtype), (_t((3,), pdt), _t((3,), pdt), None, None, True, 0.1, 1e-5, False), name="affine"
    )
    yield SampleInput(_t((2, 2, 3, 2), dtype), (None, None, None, None, True, 0.1, 1e-5, False), name="2-d spatial")
    yield SampleInput(
        _t((2, 3, 4), dtype),
        (None, None, _t((3,), pdt), _t((3,), pdt, low=0.5, high=2), False, 0.1, 1e-5, False),
        name="running stats",
    )


def ref_native_layer_norm(x: np.ndarray, normalized_shape: Any, w: Any, b: Any, eps: float) -> tuple[Any, Any, Any]:
    k = len(tuple(normalized_shape))
    axes = tuple(range(x.ndim - k, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    rstd = 1.0 / np.sqrt(var + eps)
    out = (x - mean) * rstd
    if w is not None:
        out = out * w
    if b is not None:
        out = out + b
    return out, mean, rstd


def ref_layer_norm(
    x: np.ndarray, normalized_shape: Any, w: Any = None, b: Any = None, eps: float = 1e-5, cudnn_enable: bool = True
) -> np.ndarray:
    return ref_native_layer_norm(x, normalized_shape, w, b, eps)[0]


def _layer_norm_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    pdt = ea.float32 if dtype in (ea.float16, ea.bfloat16) else dtype
    yield SampleInput(_t((3, 4), dtype), ((4,), _t((4,), pdt), _t((4,), pdt)), name="(3, 4) affine")
    yield SampleInput(_t((2, 3, 4), dtype), ((3, 4),), name="2 dims, no affine")
    yield SampleInput(_t((2, 3), dtype), ((3,), _t((3,), pdt)), {"eps": 1e-3}, name="weight only")
    yield SampleInput(_t((2, 5), dtype), ((2, 5), None, _t((2, 5), pdt)), name="whole tensor, bias only")
    yield SampleInput(_t((3, 130), dtype, low=-3, high=3), ((130,),), name="long rows")
    yield SampleInput(_t((0, 4), dtype), ((4,),), name="empty")


def _native_layer_norm_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for s in _layer_norm_samples(op, dtype):
        if s.input.numel() == 0:
            continue
        args = tuple(s.args) + (None,) * (3 - len(s.args))
        yield SampleInput(s.input, (*args, s.kwargs.get("eps", 1e-05)), name=s.name)


def _layer_norm_errors(op: OpInfo) -> Iterator[ErrorInput]:
    x = _t((2, 3), ea.float32)
    yield ErrorInput(
        SampleInput(x, ((4,),)),
        RuntimeError,
        r"Given normalized_shape=\[4\], expected input with shape \[\*, 4\], but got input of size\[2, 3\]",
    )
    yield ErrorInput(
        SampleInput(x, ((3,), _t((4,), ea.float32))),
        RuntimeError,
        r"Expected weight to be of same shape as normalized_shape, but got weight of shape \[4\] and "
        r"normalized_shape = \[3\]",
    )
    yield ErrorInput(SampleInput(x, ((),)), RuntimeError, r"Expected normalized_shape to be at least 1-dimensional")
    yield ErrorInput(SampleInput(_idx([[1, 2]]), ((2,),)), NotImplementedError, r"not implemented for 'Long'")


def ref_rms_norm(x: np.ndarray, normalized_shape: Any, w: Any = None, eps: Any = None) -> np.ndarray:
    k = len(tuple(normalized_shape))
    axes = tuple(range(x.ndim - k, x.ndim))
    e = float(np.finfo(np.float32).eps) if eps is None else eps
    out = x / np.sqrt((x * x).mean(axis=axes, keepdims=True) + e)
    return out * w if w is not None else out


def _rms_norm_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    pdt = ea.float32 if dtype in (ea.float16, ea.bfloat16) else dtype
    yield SampleInput(_t((3, 4), dtype), ((4,), _t((4,), pdt)), {"eps": 1e-6}, name="weight")
    yield SampleInput(_t((2, 3, 4), dtype), ((3, 4),), {"eps": 1e-5}, name="2 dims")
    yield SampleInput(_t((2, 5), dtype), ((5,),), name="eps=None")


def ref_group_norm(
    x: np.ndarray, g: int, w: Any = None, b: Any = None, eps: float = 1e-5, cudnn: bool = True
) -> np.ndarray:
    return ref_native_group_norm(x, w, b, x.shape[0], x.shape[1], int(np.prod(x.shape[2:], dtype=np.int64)), g, eps)[0]


def ref_native_group_norm(
    x: np.ndarray, w: Any, b: Any, n: int, c: int, hxw: int, g: int, eps: float
) -> tuple[Any, Any, Any]:
    xg = x.reshape(n, g, -1)
    mean = xg.mean(axis=2)
    var = xg.var(axis=2)
    rstd = 1.0 / np.sqrt(var + eps)
    out = ((xg - mean[..., None]) * rstd[..., None]).reshape(n, c, -1)
    if w is not None:
        out = out * w.reshape(1, c, 1)
    if b is not None:
        out = out + b.reshape(1, c, 1)
    return out.reshape(x.shape), mean, rstd


def _group_norm_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    pdt = ea.float32 if dtype in (ea.float16, ea.bfloat16) else dtype
    yield SampleInput(_t((2, 4, 3), dtype), (2, _t((4,), pdt), _t((4,), pdt)), name="2 groups affine")
    yield SampleInput(_t((2, 6), dtype), (3,), name="no spatial dims")
    yield SampleInput(_t((1, 4, 2, 2), dtype), (4, _t((4,), pdt)), {"eps": 1e-3}, name="instance-like")
    yield SampleInput(_t((2, 4, 3), dtype), (1,), name="layer-like")


def _native_group_norm_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    for s in _group_norm_samples(op, dtype):
        x = s.input
        n, c = x.shape[0], x.shape[1]
        hxw = x.numel() // (n * c)
        args = tuple(s.args) + (None,) * (3 - len(s.args))
        yield SampleInput(x, (args[1], args[2], n, c, hxw, args[0], s.kwargs.get("eps", 1e-5)), name=s.name)


def _group_norm_errors(op: OpInfo) -> Iterator[ErrorInput]:
    x = _t((2, 6, 4), ea.float32)
    yield ErrorInput(
        SampleInput(x, (4,)),
        RuntimeError,
        r"Expected number of channels in input to be divisible by num_groups, but got input of shape "
        r"\[2, 6, 4\] and num_groups=4",
    )
    yield ErrorInput(
        SampleInput(x, (3, _t((5,), ea.float32))),
        RuntimeError,
        r"Expected weight to be a vector of size equal to the number of channels in input, but got "
        r"weight of shape \[5\] and input of shape \[2, 6, 4\]",
    )


# ---- losses ------------------------------------------------------------------------------------------


def ref_nll_loss(x: np.ndarray, t: np.ndarray, weight: Any = None, reduction: int = 1, ignore_index: int = -100) -> Any:
    """(C) / (N, C) / (N, C, d1, ...) inputs; mean divides by the total weight of the kept targets."""
    if x.ndim == 1:
        x, t = x[None], np.asarray(t).reshape(1)
        squeeze = True
    else:
        squeeze = False
    c = x.shape[1]
    w = np.ones(c) if weight is None else weight
    xm = np.moveaxis(x, 1, -1).reshape(-1, c)
    tf = np.asarray(t).reshape(-1).astype(np.int64)
    keep = tf != ignore_index
    tw = np.where(keep, w[np.where(keep, tf, 0)], 0.0)
    picked = xm[np.arange(len(tf)), np.where(keep, tf, 0)]
    loss = -tw * picked
    if reduction == 0:
        out = loss.reshape(np.asarray(t).shape)
        return out.reshape(()) if squeeze else out
    if reduction == 2:
        return loss.sum()
    return loss.sum() / tw.sum() if tw.sum() else np.nan


def _log_probs(shape: tuple[int, ...], dtype: Any, dim: int = 1) -> Any:
    x = make_tensor(shape, ea.float64, low=-2, high=2)
    return x.log_softmax(dim).to(dtype)


def _targets(shape: tuple[int, ...], c: int, seed: int, ignore: int | None = None) -> Any:
    t = _rng(seed).integers(0, c, size=shape)
    if ignore is not None and t.size:
        t.reshape(-1)[0] = ignore
    return ea.from_numpy(t.astype(np.int64)).clone()


def _nll_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    pdt = dtype
    x = _log_probs((4, 3), dtype)
    t = _targets((4,), 3, 0)
    w = _t((3,), pdt, low=0.2, high=2)
    for r in (1, 0, 2):
        yield SampleInput(x, (t,), {"reduction": r}, name=f"(4, 3) reduction={r}")
    yield SampleInput(x, (t, w), {"reduction": 1}, name="weight mean")
    yield SampleInput(x, (t, w, 0), name="weight none")
    yield SampleInput(x, (_targets((4,), 3, 1, ignore=-100),), name="ignore_index")
    yield SampleInput(x, (_targets((4,), 3, 2, ignore=1), w, 1, 1), name="ignore_index=1 weight")
    yield SampleInput(_log_probs((5,), dtype, 0), (_idx(2),), name="unbatched")
    yield SampleInput(_log_probs((5,), dtype, 0), (_idx(2), None, 0), name="unbatched none")
    yield SampleInput(x, (ea.tensor([-100] * 4, dtype=ea.int64),), name="all ignored (nan)")
    yield SampleInput(x, (t.to(ea.uint8),), name="uint8 target")


def _nll_errors(op: OpInfo) -> Iterator[ErrorInput]:
    x = _log_probs((3, 5), ea.float32)
    yield ErrorInput(SampleInput(x, (_idx([1, 7, 2]),)), IndexError, r"^Target 7 is out of bounds\.$")
    yield ErrorInput(SampleInput(x, (_idx([1, -1, 2]),)), IndexError, r"Target -1 is out of bounds\.")
    yield ErrorInput(
        SampleInput(x, (_idx([1, 2]),)), RuntimeError, r"size mismatch \(got input: \[3, 5\], target: \[2\]\)"
    )
    yield ErrorInput(
        SampleInput(x, (_idx([1, 2, 3]).to(ea.int32),)),
        RuntimeError,
        r"expected target dtype to be Long or Byte, but got Int",
    )
    yield ErrorInput(
        SampleInput(x, (_idx([1, 2, 3]), _t((4,), ea.float32))),
        RuntimeError,
        r"weight tensor should be defined either for all 5 classes or no classes but got weight tensor "
        r"of shape: \[4\]",
    )
    yield ErrorInput(
        SampleInput(_t((2, 3, 4), ea.float32), (_idx([1, 2]),)), RuntimeError, r"input tensor should be 1D or 2D"
    )
    yield ErrorInput(SampleInput(x, (_idx([1, 2, 3]), None, 3)), ValueError, r"reduction must be")


def _nll2d_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    x = _log_probs((2, 3, 2, 2), dtype)
    t = _targets((2, 2, 2), 3, 3, ignore=-100)
    w = _t((3,), dtype, low=0.2, high=2)
    for r in (1, 0, 2):
        yield SampleInput(x, (t, w, r), name=f"reduction={r}")


def _nll2d_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield ErrorInput(
        SampleInput(_log_probs((2, 3, 4, 5), ea.float32), (_targets((2, 4, 6), 3, 0),)),
        RuntimeError,
        r"size mismatch \(got input: \[2, 3, 4, 5\] , target: \[2, 4, 6\]",
    )
    yield ErrorInput(
        SampleInput(_log_probs((2, 3, 4, 5), ea.float32), (_targets((2, 4), 3, 0),)),
        RuntimeError,
        r"only batches of spatial targets supported \(3D tensors\) but got targets of dimension: 2",
    )


def _nll_nd_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    yield SampleInput(_log_probs((2, 3, 4), dtype), (_targets((2, 4), 3, 4, ignore=-100),), name="3-d")
    yield SampleInput(_log_probs((2, 3, 4), dtype), (_targets((2, 4), 3, 5), None, 0), name="3-d none")
    yield SampleInput(_log_probs((2, 3, 2, 1, 2), dtype), (_targets((2, 2, 1, 2), 3, 6), None, 0), name="5-d none")
    yield SampleInput(_log_probs((2, 3, 2, 2), dtype), (_targets((2, 2, 2), 3, 7), None, 2), name="4-d sum")
    yield SampleInput(_log_probs((4, 3), dtype), (_targets((4,), 3, 8),), name="2-d")


def _nll_nd_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield ErrorInput(
        SampleInput(_t((), ea.float32), (_idx(1),)), ValueError, r"Expected 1 or more dimensions \(got 0\)"
    )
    yield ErrorInput(
        SampleInput(_log_probs((2, 3, 4), ea.float32), (_targets((3, 4), 3, 0),)),
        ValueError,
        r"Expected input batch_size \(2\) to match target batch_size \(3\)\.",
    )
    yield ErrorInput(
        SampleInput(_log_probs((2, 3, 4), ea.float32), (_targets((2, 5), 3, 0),)),
        RuntimeError,
        r"Expected target size \[2, 4\], got \[2, 5\]",
    )


def _np_log_softmax(x: np.ndarray, dim: int) -> np.ndarray:
    return ref_log_softmax(x, dim)


def ref_cross_entropy(
    x: np.ndarray,
    t: np.ndarray,
    weight: Any = None,
    reduction: int = 1,
    ignore_index: int = -100,
    label_smoothing: float = 0.0,
) -> Any:
    cdim = 0 if x.ndim == 1 else 1
    c = x.shape[cdim]
    logp = _np_log_softmax(x, cdim)
    wshape = [1] * x.ndim
    wshape[cdim] = c
    w = np.ones(c) if weight is None else weight
    if np.asarray(t).shape == x.shape:  # probabilities
        tt = t * (1 - label_smoothing) + label_smoothing / c
        per = -(logp * tt * w.reshape(wshape)).sum(axis=cdim)
        if reduction == 1:
            return per.sum() / (x.size // c)
        return _reduce(per, reduction)
    nll = ref_nll_loss(logp, t, weight, reduction, ignore_index)
    if label_smoothing == 0:
        return nll
    tt = np.asarray(t)
    keep = tt != ignore_index
    smooth = -(logp * w.reshape(wshape)).sum(axis=cdim)
    smooth = np.where(keep, smooth, 0.0)
    if reduction == 1:
        denom = w[tt[keep].astype(np.int64)].sum() if weight is not None else keep.sum()
        smooth = smooth.sum() / denom
    elif reduction == 2:
        smooth = smooth.sum()
    return (1 - label_smoothing) * nll + label_smoothing / c * smooth


def _ce_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    x = _t((4, 3), dtype, low=-3, high=3)
    t = _targets((4,), 3, 10)
    w = _t((3,), dtype, low=0.2, high=2)
    for r in (1, 0, 2):
        yield SampleInput(x, (t,), {"reduction": r}, name=f"indices reduction={r}")
    yield SampleInput(x, (t, w), name="weight")
    yield SampleInput(x, (_targets((4,), 3, 11, ignore=-100), w), name="ignore_index")
    yield SampleInput(x, (t,), {"label_smoothing": 0.2}, name="label_smoothing")
    yield SampleInput(x, (_targets((4,), 3, 12, ignore=2), w, 1, 2, 0.1), name="smoothing weight ignore_index")
    yield SampleInput(x, (_targets((4,), 3, 13, ignore=0), None, 0, 0, 0.3), name="smoothing none ignore_index")
    yield SampleInput(x, (_targets((4,), 3, 14), w, 2, -100, 0.3), name="smoothing sum")
    probs = tensor_from(ref_softmax(make_tensor((4, 3), ea.float64).numpy(), 1), dtype)
    for r in (1, 0, 2):
        yield SampleInput(x, (probs,), {"reduction": r}, name=f"probabilities reduction={r}")
    yield SampleInput(x, (probs, w), {"label_smoothing": 0.25}, name="probabilities weight smoothing")
    yield SampleInput(_t((2, 3, 2), dtype), (_targets((2, 2), 3, 15),), name="3-d indices")
    yield SampleInput(_t((5,), dtype), (_idx(3),), name="unbatched")


def _ce_errors(op: OpInfo) -> Iterator[ErrorInput]:
    x = _t((3, 5), ea.float32)
    probs = _t((3, 5), ea.float32, low=0, high=1)
    yield ErrorInput(
        SampleInput(x, (probs, None, 1, 3)), RuntimeError, r"ignore_index is not supported for floating point target"
    )
    yield ErrorInput(
        SampleInput(x, (_idx([1, 2, 3]), None, 1, -100, 1.5)),
        RuntimeError,
        r"label_smoothing must be between 0\.0 and 1\.0\. Got: 1\.5",
    )
    yield ErrorInput(
        SampleInput(x, (probs, _t((4,), ea.float32))),
        RuntimeError,
        r"cross_entropy: weight tensor should be defined either for all 5 classes",
    )
    yield ErrorInput(
        SampleInput(x, (x.long(),)),
        RuntimeError,
        r"Expected floating point type for target with class probabilities, got Long",
    )
    yield ErrorInput(SampleInput(x, (_idx([1, 7, 2]),)), IndexError, r"Target 7 is out of bounds\.")


def ref_bce(x: np.ndarray, t: np.ndarray, weight: Any = None, reduction: int = 1) -> Any:
    lx = np.maximum(np.log(x), -100)
    l1x = np.maximum(np.log1p(-x), -100)
    loss = -(t * lx + (1 - t) * l1x)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _bce_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    x = _t((3, 4), dtype, low=0.05, high=0.95)
    t = _t((3, 4), dtype, low=0.0, high=1.0)
    for r in (1, 0, 2):
        yield SampleInput(x, (t,), {"reduction": r}, name=f"reduction={r}")
    yield SampleInput(x, (t, _t((4,), dtype, low=0.5, high=2)), name="broadcast weight")
    yield SampleInput(
        tensor_from(np.array([0.0, 1.0, 0.5]), dtype),
        (tensor_from(np.array([1.0, 0.0, 1.0]), dtype), None, 0),
        name="log clamped at -100",
        gradcheck=False,  # inputs 0 and 1 sit on the domain's edges
    )


def _bce_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield ErrorInput(
        SampleInput(ea.tensor([1.5]), (ea.tensor([1.0]),)),
        RuntimeError,
        r"all elements of input should be between 0 and 1",
    )
    yield ErrorInput(
        SampleInput(ea.tensor([math.nan]), (ea.tensor([1.0]),)),
        RuntimeError,
        r"all elements of input should be between 0 and 1",
    )


def _softplus(z: np.ndarray) -> np.ndarray:
    return np.maximum(z, 0) + np.log1p(np.exp(-np.abs(z)))


def ref_bce_logits(x: np.ndarray, t: np.ndarray, weight: Any = None, pos_weight: Any = None, reduction: int = 1) -> Any:
    lw = 1.0 if pos_weight is None else 1 + (pos_weight - 1) * t
    loss = (1 - t) * x + lw * _softplus(-x)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _bce_logits_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    x = _t((3, 4), dtype, low=-4, high=4)
    t = _t((3, 4), dtype, low=0.0, high=1.0)
    for r in (1, 0, 2):
        yield SampleInput(x, (t,), {"reduction": r}, name=f"reduction={r}")
    yield SampleInput(x, (t, _t((4,), dtype, low=0.5, high=2), _t((4,), dtype, low=0.5, high=3)), name="weights")
    yield SampleInput(x, (t,), {"pos_weight": _t((4,), dtype, low=0.5, high=3), "reduction": 0}, name="pos_weight")
    big = tensor_from(np.array([100.0, -100.0, 100.0, -100.0]), dtype)
    yield SampleInput(big, (tensor_from(np.array([1.0, 0.0, 0.0, 1.0]), dtype), None, None, 0), name="+-100")


def ref_mse(x: np.ndarray, t: np.ndarray, reduction: int = 1) -> Any:
    return _reduce((x - t) ** 2, reduction)


def ref_l1(x: np.ndarray, t: np.ndarray, reduction: int = 1) -> Any:
    return _reduce(np.abs(x - t), reduction)


def ref_smooth_l1(x: np.ndarray, t: np.ndarray, reduction: int = 1, beta: float = 1.0) -> Any:
    d = np.abs(x - t)
    loss = d - 0.5 * beta if beta == 0 else np.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)
    return _reduce(loss, reduction)


def ref_huber(x: np.ndarray, t: np.ndarray, reduction: int = 1, delta: float = 1.0) -> Any:
    d = np.abs(x - t)
    return _reduce(np.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta)), reduction)


def ref_soft_margin(x: np.ndarray, t: np.ndarray, reduction: int = 1) -> Any:
    return _reduce(_softplus(-t * x), reduction)


def _pair_samples(extra: list[dict[str, Any]], low: float = -3, high: float = 3) -> Any:
    def gen(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
        x = _t((3, 4), dtype, low=low, high=high)
        t = _t((3, 4), dtype, low=low, high=high)
        for r in (1, 0, 2):
            yield SampleInput(x, (t,), {"reduction": r}, name=f"reduction={r}")
        yield SampleInput(x, (_t((4,), dtype, low=low, high=high),), {"reduction": 0}, name="broadcast target")
        yield SampleInput(_t((0,), dtype), (_t((0,), dtype),), name="empty mean")
        for kw in extra:
            yield SampleInput(x, (t,), kw, name=str(kw))

    return gen


def _soft_margin_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    x = _t((3, 4), dtype, low=-3, high=3)
    sign = tensor_from(np.where(_rng(3).random((3, 4)) < 0.5, -1.0, 1.0), dtype)
    for r in (1, 0, 2):
        yield SampleInput(x, (sign,), {"reduction": r}, name=f"reduction={r}")
    yield SampleInput(
        tensor_from(np.array([100.0, -100.0]), dtype),
        (tensor_from(np.array([-1.0, 1.0]), dtype), 0),
        name="large margins",
    )


def _int_loss_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield ErrorInput(SampleInput(_idx([1, 2]), (_idx([1, 2]),)), NotImplementedError, r"not implemented for 'Long'")
    yield ErrorInput(
        SampleInput(_t((3,), ea.float32), (_t((4,), ea.float32),)),
        RuntimeError,
        r"the size of tensor a \(3\) must match the size of tensor b \(4\)",
    )


def _smooth_l1_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield ErrorInput(
        SampleInput(_t((3,), ea.float32), (_t((3,), ea.float32), 1, -1.0)),
        RuntimeError,
        r"smooth_l1_loss does not support negative values for beta\.",
    )


def _huber_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield ErrorInput(
        SampleInput(_t((3,), ea.float32), (_t((3,), ea.float32), 1, 0.0)),
        RuntimeError,
        r"huber_loss does not support non-positive values for delta\.",
    )


def ref_kl_div(x: np.ndarray, t: np.ndarray, reduction: int = 1, log_target: bool = False) -> Any:
    if log_target:
        out = np.exp(t) * (t - x)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.where(t == 0, 0.0, t * np.log(np.where(t == 0, 1.0, t))) - t * x
    return _reduce(out, reduction)


def _kl_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    x = _log_probs((3, 4), dtype)
    # targets well inside (0, 1): d/dt of t log t is log t + 1, and its derivative 1 / t is
    # too steep for finite differences near 0
    t = tensor_from(ref_softmax(make_tensor((3, 4), ea.float64, low=-1, high=1).numpy(), 1), dtype)
    for r in (1, 0, 2):
        yield SampleInput(x, (t, r), name=f"reduction={r}")
    yield SampleInput(x, (_log_probs((3, 4), dtype),), {"log_target": True}, name="log_target")
    z = tensor_from(np.array([[0.0, 0.5, 0.5]]), dtype)
    # t log t has no derivative in t at t = 0
    yield SampleInput(_log_probs((1, 3), dtype), (z, 0), name="zero target", gradcheck=False)


def ref_margin_ranking(x1: np.ndarray, x2: np.ndarray, t: np.ndarray, margin: float = 0.0, reduction: int = 1) -> Any:
    return _reduce(np.maximum(0, -t * (x1 - x2) + margin), reduction)


def _signs(shape: tuple[int, ...], dtype: Any, seed: int) -> Any:
    return tensor_from(np.where(_rng(seed).random(shape) < 0.5, -1.0, 1.0), dtype)


def _margin_ranking_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    x1, x2 = _t((5,), dtype), _t((5,), dtype)
    t = _signs((5,), dtype, 4)
    for r in (1, 0, 2):
        yield SampleInput(x1, (x2, t), {"reduction": r}, name=f"reduction={r}")
    yield SampleInput(x1, (x2, t, 0.5), name="margin")


def ref_cosine_embedding(x1: np.ndarray, x2: np.ndarray, t: np.ndarray, margin: float = 0.0, reduction: int = 1) -> Any:
    d = np.asarray(t).ndim
    eps = 1e-12
    cos = (x1 * x2).sum(axis=d) / np.sqrt(((x1 * x1).sum(axis=d) + eps) * ((x2 * x2).sum(axis=d) + eps))
    loss = np.where(t == 1, 1 - cos, 0.0) + np.where(t == -1, np.maximum(0, cos - margin), 0.0)
    return _reduce(loss, reduction)


def _cosine_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    x1, x2 = _t((4, 3), dtype), _t((4, 3), dtype)
    t = _signs((4,), dtype, 5)
    for r in (1, 0, 2):
        yield SampleInput(x1, (x2, t), {"reduction": r}, name=f"reduction={r}")
    yield SampleInput(x1, (x2, t, -0.5), name="negative margin")
    yield SampleInput(_t((3,), dtype), (_t((3,), dtype), tensor_from(np.array(-1.0), dtype), 0.1), name="unbatched")


def _cosine_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield ErrorInput(
        SampleInput(_t((4, 3), ea.float32), (_t((4, 3), ea.float32), _t((4, 1), ea.float32))),
        RuntimeError,
        r"0D or 1D target tensor expected, multi-target not supported",
    )
    yield ErrorInput(
        SampleInput(_t((4,), ea.float32), (_t((4,), ea.float32), _t((4,), ea.float32))),
        RuntimeError,
        r"1D target tensor expects 2D input tensors, but found inputs with sizes \[4\] and \[4\]\.",
    )


def ref_hinge(x: np.ndarray, t: np.ndarray, margin: float = 1.0, reduction: int = 1) -> Any:
    loss = np.where(t != 1, np.maximum(0, margin - x), 0.0) + np.where(t != -1, x, 0.0)
    return _reduce(loss, reduction)


def _hinge_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    x = _t((3, 4), dtype)
    t = _signs((3, 4), dtype, 6)
    for r in (1, 0, 2):
        yield SampleInput(x, (t,), {"reduction": r}, name=f"reduction={r}")
    yield SampleInput(x, (t, 2.5), name="margin")


def ref_triplet(
    a: np.ndarray,
    p: np.ndarray,
    n: np.ndarray,
    margin: float = 1.0,
    pnorm: float = 2.0,
    eps: float = 1e-6,
    swap: bool = False,
    reduction: int = 1,
) -> Any:
    def dist(u: np.ndarray, v: np.ndarray) -> np.ndarray:
        return (np.abs(u - v + eps) ** pnorm).sum(axis=-1) ** (1.0 / pnorm)

    dp, dn = dist(a, p), dist(a, n)
    if swap:
        dn = np.minimum(dn, dist(p, n))
    return _reduce(np.maximum(0, margin + dp - dn), reduction)


def _triplet_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    a, p, n = _t((4, 3), dtype), _t((4, 3), dtype), _t((4, 3), dtype)
    for r in (1, 0, 2):
        yield SampleInput(a, (p, n), {"reduction": r, "margin": 4.0}, name=f"reduction={r}")
    yield SampleInput(a, (p, n, 3.0, 1.0, 1e-6, True), name="p=1 swap")
    yield SampleInput(_t((3,), dtype), (_t((3,), dtype), _t((3,), dtype)), {"margin": 5.0}, name="unbatched")


def _triplet_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield ErrorInput(
        SampleInput(_t((4, 3), ea.float32), (_t((4, 3), ea.float32), _t((3,), ea.float32))),
        RuntimeError,
        r"anchor 2D, positive 2D, and negative 1D inputs",
    )


def ref_poisson_nll(x: np.ndarray, t: np.ndarray, log_input: bool, full: bool, eps: float, reduction: int) -> Any:
    loss = np.exp(x) - t * x if log_input else x - t * np.log(x + eps)
    if full:
        with np.errstate(divide="ignore", invalid="ignore"):
            st = t * np.log(t) - t + 0.5 * np.log(2 * np.pi * t)
        loss = loss + np.where(t > 1, st, 0.0)
    return _reduce(loss, reduction)


def _poisson_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    x = _t((3, 4), dtype, low=-1, high=1)
    t = _t((3, 4), dtype, low=0, high=4)
    yield SampleInput(x, (t, True, False, 1e-8, 1), name="log_input mean")
    yield SampleInput(x, (t, True, True, 1e-8, 0), name="log_input full")
    yield SampleInput(_t((3, 4), dtype, low=0.1, high=3), (t, False, False, 1e-8, 2), name="rates sum")
    yield SampleInput(_t((3, 4), dtype, low=0.1, high=3), (t, False, True, 1e-8, 1), name="rates full")


def ref_gaussian_nll(
    x: np.ndarray, t: np.ndarray, var: Any, full: bool = False, eps: float = 1e-6, reduction: str = "mean"
) -> Any:
    var = np.asarray(var, dtype=np.float64)
    if var.ndim == 0:
        var = np.full_like(x, float(var))
    elif var.shape != x.shape and var.shape == x.shape[:-1]:
        var = var[..., None]
    var = np.maximum(var, eps)
    loss = 0.5 * (np.log(var) + (x - t) ** 2 / var)
    if full:
        loss = loss + 0.5 * np.log(2 * np.pi)
    return _reduce(loss, {"none": 0, "mean": 1, "sum": 2}[reduction])


def _gaussian_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    x, t = _t((3, 4), dtype), _t((3, 4), dtype)
    yield SampleInput(x, (t, _t((3, 4), dtype, low=0.2, high=2)), name="full var")
    yield SampleInput(x, (t, _t((3,), dtype, low=0.2, high=2)), {"reduction": "sum", "full": True}, name="per-sample")
    yield SampleInput(x, (t, _t((3, 1), dtype, low=0.2, high=2)), {"reduction": "none"}, name="(N, 1) var")
    yield SampleInput(x, (t, 0.5), name="float var")


def _gaussian_errors(op: OpInfo) -> Iterator[ErrorInput]:
    x = _t((3, 4), ea.float32)
    yield ErrorInput(SampleInput(x, (x, _t((2,), ea.float32, low=0.1))), ValueError, r"var is of incorrect size")
    yield ErrorInput(
        SampleInput(x, (x, _t((3, 4), ea.float32, low=-2, high=-1))), ValueError, r"var has negative entry/entries"
    )
    yield ErrorInput(
        SampleInput(x, (x, _t((3, 4), ea.float32, low=0.1)), {"reduction": "avg"}),
        ValueError,
        r"avg is not a valid value for reduction",
    )


# ---- ctc ----------------------------------------------------------------------------------------------


def _ctc_collapse(path: tuple[int, ...], blank: int) -> tuple[int, ...]:
    out = []
    prev = None
    for s in path:
        if s != prev and s != blank:
            out.append(s)
        prev = s
    return tuple(out)


def ref_ctc_nll(lp: np.ndarray, target: Any, blank: int) -> float:
    """-log sum over every path of length T that collapses to target of prod lp[t, path_t] (brute force)."""
    t_len, c = lp.shape
    target = tuple(int(v) for v in target)
    total = -np.inf
    for path in itertools.product(range(c), repeat=t_len):
        if _ctc_collapse(path, blank) == target:
            total = np.logaddexp(total, sum(lp[t, s] for t, s in enumerate(path)))
    return -total


def ref_ctc_loss(
    x: np.ndarray,
    targets: np.ndarray,
    input_lengths: Any,
    target_lengths: Any,
    blank: int = 0,
    reduction: int = 1,
    zero_infinity: bool = False,
) -> Any:
    """x are logits (the op applies log_softmax over the classes first)."""
    batched = x.ndim == 3
    lp = _np_log_softmax(x, -1)
    if not batched:
        lp, targets = lp[:, None], np.asarray(targets)[None]
    il = np.asarray(input_lengths).reshape(-1)
    tl = np.asarray(target_lengths).reshape(-1)
    targets = np.asarray(targets)
    losses = []
    offset = 0
    for b in range(lp.shape[1]):
        if targets.ndim == 1:
            tgt = targets[offset : offset + tl[b]]
            offset += tl[b]
        else:
            tgt = targets[b, : tl[b]]
        v = ref_ctc_nll(lp[: il[b], b], tgt, blank)
        if zero_infinity and np.isinf(v):
            v = 0.0
        losses.append(v)
    res = np.array(losses)
    if reduction == 1:
        return np.mean(res / np.maximum(tl, 1))
    if reduction == 2:
        return res.sum()
    return res if batched else res[0]


def _ctc_op(x: Any, targets: Any, input_lengths: Any, target_lengths: Any, *args: Any, **kw: Any) -> Any:
    return ea.ctc_loss(x.log_softmax(-1), targets, input_lengths, target_lengths, *args, **kw)


def _ctc_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    x = _t((4, 2, 3), dtype, low=-2, high=2)
    padded = _idx([[1, 2], [1, 1]])
    yield SampleInput(x, (padded, [4, 3], [2, 1]), name="padded targets mean")
    yield SampleInput(x, (padded, [4, 3], [2, 2]), {"reduction": 0}, name="repeated label none")
    yield SampleInput(x, (_idx([2, 1, 2]), [4, 4], [2, 1]), {"reduction": 2}, name="concatenated sum")
    yield SampleInput(
        x,
        (_idx([[1, 0], [1, 1]]), _idx([4, 2]), _idx([2, 1])),
        {"blank": 2, "reduction": 0},
        name="tensor lengths, blank=2",
    )
    yield SampleInput(x, (_idx([[1, 0], [0, 0]]), [3, 4], [1, 0]), {"reduction": 0}, name="empty target")
    yield SampleInput(_t((3, 3), dtype, low=-2, high=2), (_idx([1, 2]), [3], [2]), {"reduction": 0}, name="unbatched")
    yield SampleInput(x, (padded, [4, 1], [2, 2]), {"reduction": 0, "zero_infinity": True}, name="zero_infinity")


def _ctc_errors(op: OpInfo) -> Iterator[ErrorInput]:
    x = _t((4, 1, 3), ea.float32)
    t = _idx([[1, 2]])
    yield ErrorInput(
        SampleInput(x, (t, [5], [2])), RuntimeError, r"Expected input_lengths to have value at most 4, but got value 5"
    )
    yield ErrorInput(
        SampleInput(x, (t, [4], [3])),
        RuntimeError,
        r"Expected tensor to have size at least 3 at dimension 1, but got size 2 for argument #2 "
        r"'targets'",
    )
    yield ErrorInput(SampleInput(x, (t, [4], [2]), {"blank": 3}), RuntimeError, r"blank must be in label range")
    yield ErrorInput(SampleInput(x, (t, [4, 4], [2])), RuntimeError, r"input_lengths must be of size batch_size")
    yield ErrorInput(
        SampleInput(x, (t, [4], [-1])),
        RuntimeError,
        r"Expected target_lengths to have value at least 0, but got value -1",
    )
    yield ErrorInput(SampleInput(x, (_idx([[1, 5]]), [4], [2])), IndexError, r"target value 5 .* out of range")


# ---- embedding ------------------------------------------------------------------------------------------


def ref_embedding(
    w: np.ndarray, idx: np.ndarray, padding_idx: int = -1, scale_grad_by_freq: bool = False, sparse: bool = False
) -> np.ndarray:
    return w[np.asarray(idx, dtype=np.int64)]


def _embedding_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    w = _t((6, 3), dtype)
    yield SampleInput(w, (_idx([0, 2, 2, 5]),), name="vector")
    yield SampleInput(w, (_idx([[1, 4], [4, 1]]),), name="matrix")
    yield SampleInput(w, (_idx(3),), name="0-dim index")
    yield SampleInput(w, (_idx([5, 0]).to(ea.int32),), name="int32 indices")
    yield SampleInput(w, (ea.empty((0,), dtype=ea.int64),), name="no indices")
    # the gradient of these two is by design not the derivative of the forward (the padding
    # row gets none; scale_grad_by_freq divides by the count): test_nn_ops checks them
    yield SampleInput(w, (_idx([[1, 4], [4, 4]]), 4), name="matrix padding_idx", gradcheck=False)
    yield SampleInput(w, (_idx([1, 1, 3]), -1, True), name="scale_grad_by_freq", gradcheck=False)


def _embedding_errors(op: OpInfo) -> Iterator[ErrorInput]:
    w = _t((10, 3), ea.float32)
    yield ErrorInput(SampleInput(w, (_idx([1, 12]),)), IndexError, r"^index out of range in self$")
    yield ErrorInput(SampleInput(w, (_idx([1, -1]),)), IndexError, r"index out of range in self")
    yield ErrorInput(SampleInput(_t((10,), ea.float32), (_idx([1, 2]),)), RuntimeError, r"'weight' must be 2-D")
    yield ErrorInput(
        SampleInput(w, (ea.tensor([1.0, 2.0]),)),
        RuntimeError,
        r"Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int",
    )


def ref_embedding_bag(
    w: np.ndarray,
    idx: np.ndarray,
    offsets: np.ndarray,
    scale_grad_by_freq: bool = False,
    mode: int = 0,
    sparse: bool = False,
    per_sample_weights: Any = None,
    include_last_offset: bool = False,
    padding_idx: Any = None,
) -> np.ndarray:
    idx = np.asarray(idx).reshape(-1)
    off = list(np.asarray(offsets))
    ends = off[1:] + ([] if include_last_offset else [len(idx)])
    bags = off[: len(ends)]
    out = np.zeros((len(bags), w.shape[1]))
    for b, (s, e) in enumerate(zip(bags, ends, strict=True)):
        rows = [i for i in range(s, e) if padding_idx is None or idx[i] != padding_idx]
        if not rows:
            continue
        vals = np.stack([w[idx[i]] * (1.0 if per_sample_weights is None else per_sample_weights[i]) for i in rows])
        out[b] = vals.sum(0) if mode == 0 else (vals.mean(0) if mode == 1 else vals.max(0))
    return out


def _embedding_bag_op(*args: Any, **kw: Any) -> Any:
    return ea.embedding_bag(*args, **kw)[0]


def _embedding_bag_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    w = _t((6, 3), dtype)
    idx = _idx([1, 2, 4, 5, 4, 3])
    off = _idx([0, 2, 2, 5])
    for mode in (0, 1, 2):
        yield SampleInput(w, (idx, off, False, mode), name=f"mode={mode} with an empty bag")
    yield SampleInput(w, (idx, off, False, 0, False, _t((6,), dtype)), name="per_sample_weights")
    yield SampleInput(w, (idx, _idx([0, 3, 6]), False, 1, False, None, True), name="include_last_offset")
    yield SampleInput(w, (idx, off, False, 1, False, None, False, 4), name="padding_idx mean")
    yield SampleInput(w, (idx, off, True, 0), name="scale_grad_by_freq", gradcheck=False)


def _embedding_bag_errors(op: OpInfo) -> Iterator[ErrorInput]:
    w = _t((6, 3), ea.float32)
    idx = _idx([1, 2, 4, 5])
    yield ErrorInput(SampleInput(w, (idx, _idx([1, 2]))), RuntimeError, r"offsets\[0\] has to be 0")
    yield ErrorInput(
        SampleInput(w, (idx, _idx([0, 5]))),
        RuntimeError,
        r"offsets\[-1\] can not be greater than input's length 4 but got offsets\[-1\] of 5",
    )
    yield ErrorInput(
        SampleInput(w, (idx, _idx([0, 2]), False, 1, False, _t((4,), ea.float32))),
        RuntimeError,
        r"per_sample_weights only supported with mode='sum'",
    )
    yield ErrorInput(SampleInput(w, (idx, _idx([0, 2]), False, 3)), RuntimeError, r"`mode` must be sum, mean, or max")
    yield ErrorInput(SampleInput(w, (_idx([1, 9]), _idx([0]))), IndexError, r"index out of range in self")
    yield ErrorInput(SampleInput(w, (idx, _idx([0, 3, 1]))), RuntimeError, r"offsets must be non-decreasing")


# ---- dropout (deterministic cases) ------------------------------------------------------------------------


def _dropout_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    x = _t((3, 4), dtype)
    yield SampleInput(x, (0.0, True), name="p=0")
    yield SampleInput(x, (0.5, False), name="eval")
    yield SampleInput(x, (1.0, True), name="p=1")
    yield SampleInput(_t((0, 4), dtype), (0.5, True), name="empty")


def ref_dropout(x: np.ndarray, p: float, train: bool) -> np.ndarray:
    return np.zeros_like(x) if (train and p == 1 and x.size) else x


def _native_dropout_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    x = _t((3, 4), dtype)
    yield SampleInput(x, (0.5, False), name="eval")
    yield SampleInput(x, (0.0, True), name="p=0")
    yield SampleInput(x, (1.0, True), name="p=1")


def ref_native_dropout(x: np.ndarray, p: float, train: Any) -> tuple[np.ndarray, np.ndarray]:
    if train is False or p == 0:
        return x, np.ones(x.shape, dtype=bool)
    return np.zeros_like(x), np.zeros(x.shape, dtype=bool)


def _dropout_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield ErrorInput(
        SampleInput(_t((3,), ea.float32), (1.5, True)),
        RuntimeError,
        r"dropout probability has to be between 0 and 1, but got 1\.5",
    )
    yield ErrorInput(
        SampleInput(_t((3,), ea.float32), (-0.1, False)),
        RuntimeError,
        r"dropout probability has to be between 0 and 1, but got -0\.1",
    )


def _nn_dropout_samples(op: OpInfo, dtype: Any) -> Iterator[SampleInput]:
    x = _t((1, 2, 3, 2, 2), dtype) if op.name == "nn.dropout3d" else _t((2, 3, 4), dtype)
    if op.name == "nn.dropout2d":
        x = _t((2, 3, 4, 2), dtype)
    yield SampleInput(x, (0.0,), name="p=0")
    yield SampleInput(x, (0.5, False), name="eval")
    yield SampleInput(x, (1.0,), name="p=1")


def ref_nn_dropout(x: np.ndarray, p: float = 0.5, training: bool = True, inplace: bool = False) -> np.ndarray:
    return ref_dropout(x, p, training)


def _nn_dropout_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield ErrorInput(
        SampleInput(_t((2, 3, 4), ea.float32), (1.5,)),
        ValueError,
        r"dropout probability has to be between 0 and 1, but got 1\.5",
    )


def _dropout1d_errors(op: OpInfo) -> Iterator[ErrorInput]:
    yield from _nn_dropout_errors(op)
    yield ErrorInput(
        SampleInput(_t((2, 3, 4, 5), ea.float32), ()),
        RuntimeError,
        r"dropout1d: Expected 2D or 3D input, but received a 4D input",
    )


# ---- the table ----------------------------------------------------------------------------------------------


def _loss(name: str, op: Any, samples: Any, ref: Any, **kw: Any) -> OpInfo:
    kw.setdefault("dtypes", FLOAT_DTYPES)
    kw.setdefault("tol_overrides", LOSS_TOLS)
    return OpInfo(name, op, kw.pop("dtypes"), samples, ref=ref, supports_out=False, kind="loss", **kw)


OPS = [
    OpInfo(
        "softmax",
        ea.softmax,
        FLOAT_DTYPES,
        _softmax_samples,
        ref=ref_softmax,
        supports_out=False,
        error_inputs=_softmax_errors,
        tol_overrides=NORM_TOLS,
        kind="softmax",
    ),
    OpInfo(
        "log_softmax",
        ea.log_softmax,
        FLOAT_DTYPES,
        _softmax_samples,
        ref=ref_log_softmax,
        supports_out=False,
        error_inputs=_softmax_errors,
        tol_overrides=NORM_TOLS,
        kind="softmax",
    ),
    OpInfo(
        "nn.softmin",
        ea.nn.softmin,
        FLOAT_DTYPES,
        _softmin_samples,
        ref=ref_softmin,
        supports_out=False,
        method=None,
        tol_overrides=NORM_TOLS,
        kind="softmax",
    ),
    OpInfo(
        "native_batch_norm",
        ea.native_batch_norm,
        FLOAT_DTYPES,
        _bn_samples,
        ref=ref_native_batch_norm,
        supports_out=False,
        tol_overrides=NORM_TOLS,
        nondifferentiable_args=(3, 4),
        kind="norm",
    ),
    OpInfo(
        "batch_norm",
        ea.batch_norm,
        FLOAT_DTYPES,
        _batch_norm_samples,
        ref=ref_batch_norm,
        supports_out=False,
        error_inputs=_bn_errors,
        tol_overrides=NORM_TOLS,
        nondifferentiable_args=(3, 4),
        kind="norm",
    ),
    OpInfo(
        "instance_norm",
        ea.instance_norm,
        FLOAT_DTYPES,
        _instance_norm_samples,
        ref=ref_instance_norm,
        supports_out=False,
        tol_overrides=NORM_TOLS,
        gradcheck_sample_limit=2,
        nondifferentiable_args=(3, 4),
        kind="norm",
    ),
    OpInfo(
        "native_layer_norm",
        ea.native_layer_norm,
        FLOAT_DTYPES,
        _native_layer_norm_samples,
        ref=ref_native_layer_norm,
        supports_out=False,
        tol_overrides=NORM_TOLS,
        kind="norm",
    ),
    OpInfo(
        "layer_norm",
        ea.layer_norm,
        FLOAT_DTYPES,
        _layer_norm_samples,
        ref=ref_layer_norm,
        supports_out=False,
        error_inputs=_layer_norm_errors,
        tol_overrides=NORM_TOLS,
        kind="norm",
    ),
    OpInfo(
        "rms_norm",
        ea.rms_norm,
        FLOAT_DTYPES,
        _rms_norm_samples,
        ref=ref_rms_norm,
        supports_out=False,
        tol_overrides=NORM_TOLS,
        kind="norm",
    ),
    OpInfo(
        "native_group_norm",
        ea.native_group_norm,
        FLOAT_DTYPES,
        _native_group_norm_samples,
        ref=ref_native_group_norm,
        supports_out=False,
        tol_overrides=NORM_TOLS,
        kind="norm",
    ),
    OpInfo(
        "group_norm",
        ea.group_norm,
        FLOAT_DTYPES,
        _group_norm_samples,
        ref=ref_group_norm,
        supports_out=False,
        error_inputs=_group_norm_errors,
        tol_overrides=GROUP_NORM_TOLS,
        kind="norm",
    ),
    _loss(
        "nn.nll_loss",
        ea.nn.nll_loss,
        _nll_samples,
        ref_nll_loss,
        error_inputs=_nll_errors,
        nondifferentiable_args=(2, "weight"),
    ),
    _loss(
        "nn.nll_loss2d",
        ea.nn.nll_loss2d,
        _nll2d_samples,
        ref_nll_loss,
        error_inputs=_nll2d_errors,
        nondifferentiable_args=(2, "weight"),
    ),
    _loss(
        "nn.nll_loss_nd",
        ea.nn.nll_loss_nd,
        _nll_nd_samples,
        ref_nll_loss,
        error_inputs=_nll_nd_errors,
        nondifferentiable_args=(2, "weight"),
    ),
    _loss(
        "nn.cross_entropy_loss",
        ea.nn.cross_entropy_loss,
        _ce_samples,
        ref_cross_entropy,
        nondifferentiable_args=(2, "weight"),
        error_inputs=_ce_errors,
        tol_overrides=COMPOSITE_TOLS,
    ),
    _loss(
        "nn.binary_cross_entropy",
        ea.nn.binary_cross_entropy,
        _bce_samples,
        ref_bce,
        error_inputs=_bce_errors,
        nondifferentiable_args=(2, "weight"),
    ),
    _loss("binary_cross_entropy_with_logits", ea.binary_cross_entropy_with_logits, _bce_logits_samples, ref_bce_logits),
    _loss("nn.mse_loss", ea.nn.mse_loss, _pair_samples([]), ref_mse, error_inputs=_int_loss_errors),
    _loss(
        "nn.l1_loss", ea.nn.l1_loss, _pair_samples([]), ref_l1, check_unsupported=False, tol_overrides=COMPOSITE_TOLS
    ),
    _loss(
        "nn.smooth_l1_loss",
        ea.nn.smooth_l1_loss,
        _pair_samples([{"beta": 0.5}, {"beta": 0.0}, {"beta": 2.0}]),
        ref_smooth_l1,
        error_inputs=_smooth_l1_errors,
    ),
    _loss(
        "nn.huber_loss",
        ea.nn.huber_loss,
        _pair_samples([{"delta": 0.5}, {"delta": 2.0}]),
        ref_huber,
        error_inputs=_huber_errors,
    ),
    _loss("nn.soft_margin_loss", ea.nn.soft_margin_loss, _soft_margin_samples, ref_soft_margin),
    _loss("kl_div", ea.kl_div, _kl_samples, ref_kl_div, check_unsupported=False, tol_overrides=COMPOSITE_TOLS),
    _loss(
        "margin_ranking_loss",
        ea.margin_ranking_loss,
        _margin_ranking_samples,
        ref_margin_ranking,
        check_unsupported=False,
        tol_overrides=COMPOSITE_TOLS,
    ),
    _loss(
        "cosine_embedding_loss",
        ea.cosine_embedding_loss,
        _cosine_samples,
        ref_cosine_embedding,
        error_inputs=_cosine_errors,
        check_unsupported=False,
        tol_overrides=COMPOSITE_TOLS,
    ),
    _loss(
        "hinge_embedding_loss",
        ea.hinge_embedding_loss,
        _hinge_samples,
        ref_hinge,
        check_unsupported=False,
        tol_overrides=COMPOSITE_TOLS,
    ),
    _loss(
        "triplet_margin_loss",
        ea.triplet_margin_loss,
        _triplet_samples,
        ref_triplet,
        error_inputs=_triplet_errors,
        check_unsupported=False,
        tol_overrides=COMPOSITE_TOLS,
    ),
    _loss(
        "poisson_nll_loss",
        ea.poisson_nll_loss,
        _poisson_samples,
        ref_poisson_nll,
        check_unsupported=False,
        tol_overrides=COMPOSITE_TOLS,
    ),
    _loss(
        "nn.gaussian_nll_loss",
        ea.nn.gaussian_nll_loss,
        _gaussian_samples,
        ref_gaussian_nll,
        error_inputs=_gaussian_errors,
        check_unsupported=False,
        tol_overrides=COMPOSITE_TOLS,
    ),
    # ctc: PyTorch has no double backward for it (kind "ctc": gradcheck only); the op takes logits
    OpInfo(
        "ctc_loss",
        _ctc_op,
        F64,
        _ctc_samples,
        ref=ref_ctc_loss,
        supports_out=False,
        method=None,
        error_inputs=_ctc_errors,
        kind="ctc",
    ),
    OpInfo(
        "embedding",
        ea.embedding,
        FLOAT_DTYPES,
        _embedding_samples,
        ref=ref_embedding,
        supports_out=False,
        error_inputs=_embedding_errors,
        check_unsupported=False,
        kind="embedding",
    ),
    OpInfo(
        "embedding_bag",
        _embedding_bag_op,
        FLOAT_DTYPES,
        _embedding_bag_samples,
        ref=ref_embedding_bag,
        supports_out=False,
        method=None,
        error_inputs=_embedding_bag_errors,
        tol_overrides=LOSS_TOLS,
        kind="embedding",
    ),
    OpInfo(
        "dropout",
        ea.dropout,
        FLOAT_DTYPES,
        _dropout_samples,
        ref=ref_dropout,
        supports_out=False,
        error_inputs=_dropout_errors,
        check_unsupported=False,
        supports_inplace=False,
        kind="dropout",
    ),
    OpInfo(
        "feature_dropout",
        ea.feature_dropout,
        FLOAT_DTYPES,
        _dropout_samples,
        ref=ref_dropout,
        supports_out=False,
        check_unsupported=False,
        supports_inplace=False,
        kind="dropout",
    ),
    OpInfo(
        "alpha_dropout",
        ea.alpha_dropout,
        FLOAT_DTYPES,
        _dropout_samples,
        ref=ref_dropout,
        supports_out=False,
        check_unsupported=False,
        supports_inplace=False,
        kind="dropout",
    ),
    OpInfo(
        "feature_alpha_dropout",
        ea.feature_alpha_dropout,
        FLOAT_DTYPES,
        _dropout_samples,
        ref=ref_dropout,
        supports_out=False,
        check_unsupported=False,
        supports_inplace=False,
        kind="dropout",
    ),
    OpInfo(
        "native_dropout",
        ea.native_dropout,
        FLOAT_DTYPES,
        _native_dropout_samples,
        ref=ref_native_dropout,
        supports_out=False,
        error_inputs=_dropout_errors,
        kind="dropout",
    ),
    OpInfo(
        "nn.dropout1d",
        ea.nn.dropout1d,
        FLOAT_DTYPES,
        _nn_dropout_samples,
        ref=ref_nn_dropout,
        supports_out=False,
        method=None,
        error_inputs=_dropout1d_errors,
        check_unsupported=False,
        supports_inplace=False,
        kind="dropout",
    ),
    OpInfo(
        "nn.dropout2d",
        ea.nn.dropout2d,
        FLOAT_DTYPES,
        _nn_dropout_samples,
        ref=ref_nn_dropout,
        supports_out=False,
        method=None,
        error_inputs=_nn_dropout_errors,
        check_unsupported=False,
        supports_inplace=False,
        kind="dropout",
    ),
    OpInfo(
        "nn.dropout3d",
        ea.nn.dropout3d,
        FLOAT_DTYPES,
        _nn_dropout_samples,
        ref=ref_nn_dropout,
        supports_out=False,
        method=None,
        error_inputs=_nn_dropout_errors,
        check_unsupported=False,
        supports_inplace=False,
        kind="dropout",
    ),
]
