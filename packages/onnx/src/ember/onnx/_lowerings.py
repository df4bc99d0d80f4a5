"""aten operator -> ONNX (opset 17) rules, one function per operator, keyed by schema name.

A rule receives a :class:`Context` (arguments by schema name) and returns the ONNX
name of each output. Arguments a rule does not implement (a non-default ``groups`` of a
transposed convolution, ``ceil_mode`` with padding...) raise ``ctx.unsupported`` rather
than export a different computation.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

import onnx
from onnx import helper

from ._export import Context, onnx_dtype

RULES: dict[str, Callable[[Context], Any]] = {}


def rule(*names: str) -> Callable[[Callable[[Context], Any]], Callable[[Context], Any]]:
    def deco(fn: Callable[[Context], Any]) -> Callable[[Context], Any]:
        for n in names:
            RULES[n if "::" in n else f"aten::{n}"] = fn
        return fn

    return deco


def _i64(ctx: Context, values: Any) -> str:
    return ctx.const(np.array(values, dtype=np.int64))


def _dim(d: int, rank: int) -> int:
    return d + rank if d < 0 else d


def _pair(v: Any, n: int = 2) -> list[int]:
    v = list(v) if isinstance(v, (list, tuple)) else [v]
    return v * n if len(v) == 1 else v


# --- elementwise ---------------------------------------------------------------------
_UNARY = {
    "relu": "Relu",
    "tanh": "Tanh",
    "sigmoid": "Sigmoid",
    "neg": "Neg",
    "exp": "Exp",
    "log": "Log",
    "sqrt": "Sqrt",
    "abs": "Abs",
    "erf": "Erf",
    "sin": "Sin",
    "cos": "Cos",
    "reciprocal": "Reciprocal",
    "floor": "Floor",
    "ceil": "Ceil",
    "logical_not": "Not",
}


def _unary(op_type: str) -> Callable[[Context], Any]:
    return lambda ctx: ctx.op(op_type, ctx.input("self"))


for _aten, _onnx in _UNARY.items():
    RULES[f"aten::{_aten}"] = _unary(_onnx)


@rule("rsqrt")
def _rsqrt(ctx: Context) -> str:
    return ctx.op("Reciprocal", ctx.op("Sqrt", ctx.input("self")))


@rule("silu")
def _silu(ctx: Context) -> str:
    x = ctx.input("self")
    return ctx.op("Mul", x, ctx.op("Sigmoid", x))


@rule("gelu")
def _gelu(ctx: Context) -> str:
    x = ctx.input("self")
    meta = ctx.meta("self")
    half, one = ctx.scalar_like(0.5, meta), ctx.scalar_like(1.0, meta)
    if ctx.args.get("approximate", "none") == "tanh":
        # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        cube = ctx.op("Mul", ctx.op("Mul", x, x), x)
        inner = ctx.op("Add", x, ctx.op("Mul", cube, ctx.scalar_like(0.044715, meta)))
        t = ctx.op("Tanh", ctx.op("Mul", inner, ctx.scalar_like(math.sqrt(2 / math.pi), meta)))
        return ctx.op("Mul", ctx.op("Mul", x, half), ctx.op("Add", t, one))
    erf = ctx.op("Erf", ctx.op("Mul", x, ctx.scalar_like(1 / math.sqrt(2), meta)))
    return ctx.op("Mul", ctx.op("Mul", x, half), ctx.op("Add", erf, one))


@rule("leaky_relu")
def _leaky_relu(ctx: Context) -> str:
    return ctx.op("LeakyRelu", ctx.input("self"), alpha=float(ctx.args["negative_slope"]))


@rule("elu")
def _elu(ctx: Context) -> str:
    if ctx.args["scale"] != 1 or ctx.args["input_scale"] != 1:
        raise ctx.unsupported("scale/input_scale other than 1")
    return ctx.op("Elu", ctx.input("self"), alpha=float(ctx.args["alpha"]))


@rule("hardtanh")
def _hardtanh(ctx: Context) -> str:
    m = ctx.meta("self")
    return ctx.op(
        "Clip", ctx.input("self"), ctx.scalar_like(ctx.args["min_val"], m), ctx.scalar_like(ctx.args["max_val"], m)
    )


@rule("clamp")
def _clamp(ctx: Context) -> str:
    m = ctx.meta("self")
    lo = "" if ctx.args["min"] is None else ctx.scalar_like(ctx.args["min"], m)
    hi = "" if ctx.args["max"] is None else ctx.scalar_like(ctx.args["max"], m)
    return ctx.emit("Clip", [ctx.input("self"), lo, hi])[0]


def _other(ctx: Context, arg: str = "other") -> str:
    v = ctx.args[arg]
    if hasattr(v, "meta"):
        return _cast_to(ctx, ctx.name(v), v.meta.dtype, ctx.out_meta.dtype)
    return ctx.scalar_like(v, ctx.out_meta)


def _cast_to(ctx: Context, name: str, src: Any, dst: Any) -> str:
    return name if src == dst else ctx.op("Cast", name, to=onnx_dtype(dst))


def _self(ctx: Context) -> str:
    return _other(ctx, "self")  # rsub / sub.Tensor(1, x) put a Python scalar first


def _scaled_other(ctx: Context) -> str:
    other = _other(ctx)
    alpha = ctx.args.get("alpha", 1)
    return other if alpha == 1 else ctx.op("Mul", other, ctx.scalar_like(alpha, ctx.out_meta))


@rule("add.Tensor", "add.Scalar")
def _add(ctx: Context) -> str:
    return ctx.op("Add", _self(ctx), _scaled_other(ctx))


@rule("sub.Tensor", "sub.Scalar")
def _sub(ctx: Context) -> str:
    return ctx.op("Sub", _self(ctx), _scaled_other(ctx))


@rule("rsub.Scalar", "rsub.Tensor")
def _rsub(ctx: Context) -> str:
    return ctx.op("Sub", _scaled_other(ctx), _self(ctx))


@rule("mul.Tensor", "mul.Scalar")
def _mul(ctx: Context) -> str:
    return ctx.op("Mul", _self(ctx), _other(ctx))


@rule("div.Tensor", "div.Scalar")
def _div(ctx: Context) -> str:
    return ctx.op("Div", _self(ctx), _other(ctx))


@rule("pow.Tensor_Scalar")
def _pow(ctx: Context) -> str:
    return ctx.op("Pow", ctx.input("self"), ctx.scalar_like(ctx.args["exponent"], ctx.meta("self")))


_COMPARE = {"eq": "Equal", "gt": "Greater", "lt": "Less", "ge": "GreaterOrEqual", "le": "LessOrEqual"}
for _aten, _onnx in _COMPARE.items():

    def _cmp(ctx: Context, _o: str = _onnx) -> str:
        v = ctx.args["other"]
        other = ctx.name(v) if hasattr(v, "meta") else ctx.scalar_like(v, ctx.meta("self"))
        return ctx.op(_o, ctx.input("self"), other)

    RULES[f"aten::{_aten}.Tensor"] = RULES[f"aten::{_aten}.Scalar"] = _cmp


@rule("where.self")
def _where(ctx: Context) -> str:
    out = ctx.out_meta.dtype
    x = _cast_to(ctx, ctx.input("self"), ctx.meta("self").dtype, out)
    y = _cast_to(ctx, ctx.input("other"), ctx.meta("other").dtype, out)
    return ctx.op("Where", ctx.input("condition"), x, y)


@rule("masked_fill.Scalar")
def _masked_fill(ctx: Context) -> str:
    return ctx.op("Where", ctx.input("mask"), ctx.scalar_like(ctx.args["value"], ctx.meta("self")), ctx.input("self"))


# --- identities and casts -------------------------------------------------------------
@rule("dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout")
def _dropout(ctx: Context) -> str:
    if ctx.args["train"]:
        raise ctx.unsupported("dropout in training mode (export captures model.eval())")
    return ctx.op("Identity", ctx.input("input"))


@rule("contiguous", "clone", "detach", "alias", "lift_fresh")
def _identity(ctx: Context) -> str:
    return ctx.op("Identity", ctx.input("self"))


@rule("to.dtype", "to.dtype_layout", "to.device", "_to_copy", "type_as")
def _to(ctx: Context) -> str:
    return _cast_to(ctx, ctx.input("self"), ctx.meta("self").dtype, ctx.out_meta.dtype)


# --- linear algebra -------------------------------------------------------------------
@rule("linear")
def _linear(ctx: Context) -> str:
    x, w = ctx.input("input"), ctx.input("weight")
    bias = ctx.args["bias"]
    if len(ctx.meta("input").shape) == 2:
        inputs = [x, w] + ([ctx.name(bias)] if bias is not None else [])
        return ctx.emit("Gemm", inputs, transB=1)[0]
    y = ctx.op("MatMul", x, ctx.op("Transpose", w, perm=[1, 0]))
    return y if bias is None else ctx.op("Add", y, ctx.name(bias))


@rule("addmm")
def _addmm(ctx: Context) -> str:
    return ctx.op(
        "Gemm",
        ctx.input("mat1"),
        ctx.input("mat2"),
        ctx.input("self"),
        alpha=float(ctx.args["alpha"]),
        beta=float(ctx.args["beta"]),
    )


@rule("mm", "matmul", "bmm")
def _matmul(ctx: Context) -> str:
    other = "mat2" if "mat2" in ctx.args else "other"
    return ctx.op("MatMul", ctx.input("self"), ctx.input(other))


@rule("t")
def _t(ctx: Context) -> str:
    if len(ctx.meta("self").shape) < 2:
        return ctx.op("Identity", ctx.input("self"))
    return ctx.op("Transpose", ctx.input("self"), perm=[1, 0])


@rule("embedding")
def _embedding(ctx: Context) -> str:
    return ctx.op("Gather", ctx.input("weight"), ctx.input("indices"), axis=0)


# --- convolution, normalisation, pooling ------------------------------------------------
def _conv(ctx: Context, transposed: bool, output_padding: Any) -> str:
    rank = len(ctx.meta("input").shape) - 2
    if isinstance(ctx.args["padding"], str):
        if ctx.args["padding"] == "valid":
            pads = [0] * rank
        else:  # "same": stride 1 by definition
            k = ctx.meta("weight").shape[2:]
            d = _pair(ctx.args["dilation"], rank)
            total = [di * (ki - 1) for di, ki in zip(d, k, strict=True)]
            pads_b = [t // 2 for t in total]
            return _emit_conv(ctx, rank, pads_b + [t - t // 2 for t in total], transposed, output_padding)
    else:
        pads = _pair(ctx.args["padding"], rank)
    return _emit_conv(ctx, rank, pads + pads, transposed, output_padding)


def _emit_conv(ctx: Context, rank: int, pads: list[int], transposed: bool, output_padding: Any) -> str:
    inputs = [ctx.input("input"), ctx.input("weight")]
    if ctx.args["bias"] is not None:
        inputs.append(ctx.name(ctx.args["bias"]))
    k = list(ctx.meta("weight").shape[2:])
    attrs: dict[str, Any] = {
        "kernel_shape": k,
        "strides": _pair(ctx.args["stride"], rank),
        "pads": pads,
        "dilations": _pair(ctx.args["dilation"], rank),
        "group": int(ctx.args["groups"]),
    }
    if transposed:
        attrs["output_padding"] = _pair(output_padding, rank)
        return ctx.emit("ConvTranspose", inputs, **attrs)[0]
    return ctx.emit("Conv", inputs, **attrs)[0]


@rule("conv1d", "conv2d", "conv3d", "conv1d.padding", "conv2d.padding", "conv3d.padding")
def _convnd(ctx: Context) -> str:
    return _conv(ctx, False, None)


@rule("convolution", "_convolution")
def _convolution(ctx: Context) -> str:
    return _conv(ctx, bool(ctx.args["transposed"]), ctx.args["output_padding"])


@rule("conv_transpose1d", "conv_transpose2d.input", "conv_transpose3d.input")
def _conv_transpose(ctx: Context) -> str:
    rank = len(ctx.meta("input").shape) - 2
    pads = _pair(ctx.args["padding"], rank)
    return _emit_conv(ctx, rank, pads + pads, True, ctx.args["output_padding"])


@rule("batch_norm", "_native_batch_norm_legit_no_training")
def _batch_norm(ctx: Context) -> str:
    if ctx.args.get("training"):
        raise ctx.unsupported("batch_norm in training mode (export captures model.eval())")
    mean, var = ctx.args["running_mean"], ctx.args["running_var"]
    if mean is None or var is None:
        raise ctx.unsupported("batch_norm without running statistics (track_running_stats=False)")
    c = ctx.meta("input").shape[1]
    m = ctx.meta("input")
    w = ctx.args["weight"]
    b = ctx.args["bias"]
    scale = ctx.name(w) if w is not None else ctx.const(np.ones(c, dtype=_np(m)))
    bias = ctx.name(b) if b is not None else ctx.const(np.zeros(c, dtype=_np(m)))
    return ctx.op(
        "BatchNormalization",
        ctx.input("input"),
        scale,
        bias,
        ctx.name(mean),
        ctx.name(var),
        epsilon=float(ctx.args["eps"]),
    )


def _np(meta: Any) -> Any:
    from onnx import helper

    return helper.tensor_dtype_to_np_dtype(onnx_dtype(meta.dtype))


@rule("layer_norm")
def _layer_norm(ctx: Context) -> str:
    m = ctx.meta("input")
    shape = list(ctx.args["normalized_shape"])
    w, b = ctx.args["weight"], ctx.args["bias"]
    scale = ctx.name(w) if w is not None else ctx.const(np.ones(shape, dtype=_np(m)))
    inputs = [ctx.input("input"), scale] + ([ctx.name(b)] if b is not None else [])
    return ctx.emit("LayerNormalization", inputs, axis=-len(shape), epsilon=float(ctx.args["eps"]))[0]


@rule("softmax.int", "_softmax")
def _softmax(ctx: Context) -> str:
    x = _cast_to(ctx, ctx.input("self"), ctx.meta("self").dtype, ctx.out_meta.dtype)
    return ctx.op("Softmax", x, axis=int(ctx.args["dim"]))


@rule("log_softmax.int", "_log_softmax")
def _log_softmax(ctx: Context) -> str:
    x = _cast_to(ctx, ctx.input("self"), ctx.meta("self").dtype, ctx.out_meta.dtype)
    return ctx.op("LogSoftmax", x, axis=int(ctx.args["dim"]))


def _pool_args(ctx: Context, rank: int) -> tuple[list[int], list[int], list[int]]:
    k = _pair(ctx.args["kernel_size"], rank)
    stride = ctx.args["stride"]
    s = k if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) else _pair(stride, rank)
    p = _pair(ctx.args["padding"], rank)
    return k, s, p + p


@rule("max_pool1d", "max_pool2d", "max_pool3d")
def _max_pool(ctx: Context) -> str:
    rank = len(ctx.meta("self").shape) - 2
    k, s, pads = _pool_args(ctx, rank)
    return ctx.op(
        "MaxPool",
        ctx.input("self"),
        kernel_shape=k,
        strides=s,
        pads=pads,
        dilations=_pair(ctx.args["dilation"], rank),
        ceil_mode=int(ctx.args["ceil_mode"]),
    )


@rule("avg_pool1d", "avg_pool2d", "avg_pool3d")
def _avg_pool(ctx: Context) -> str:
    if ctx.args.get("divisor_override") is not None:
        raise ctx.unsupported("divisor_override")
    rank = len(ctx.meta("self").shape) - 2
    k, s, pads = _pool_args(ctx, rank)
    return ctx.op(
        "AveragePool",
        ctx.input("self"),
        kernel_shape=k,
        strides=s,
        pads=pads,
        ceil_mode=int(ctx.args["ceil_mode"]),
        count_include_pad=int(ctx.args["count_include_pad"]),
    )


@rule("adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d")
def _adaptive_avg_pool(ctx: Context) -> str:
    shape = ctx.meta("self").shape
    rank = len(ctx.args["output_size"]) if isinstance(ctx.args["output_size"], (list, tuple)) else 1
    out = _pair(ctx.args["output_size"], rank)
    spatial = list(shape[-rank:])
    if all(o == 1 for o in out):
        return ctx.op("GlobalAveragePool", ctx.input("self"))
    if any(i % o for i, o in zip(spatial, out, strict=True)):
        raise ctx.unsupported(f"output_size {out} does not divide the input's size {spatial}")
    k = [i // o for i, o in zip(spatial, out, strict=True)]
    return ctx.op("AveragePool", ctx.input("self"), kernel_shape=k, strides=k)


@rule("scaled_dot_product_attention")
def _sdpa(ctx: Context) -> str:
    """softmax(q k^T * scale + mask) v, as MatMul + Softmax (what ONNX Runtime fuses)."""
    if ctx.args.get("dropout_p", 0.0) != 0.0:
        raise ctx.unsupported("dropout_p != 0")
    if ctx.args.get("enable_gqa"):
        raise ctx.unsupported("enable_gqa")
    q, k, v = ctx.input("query"), ctx.input("key"), ctx.input("value")
    qm = ctx.meta("query")
    rank = len(qm.shape)
    scale = ctx.args.get("scale")
    scale = 1.0 / math.sqrt(qm.shape[-1]) if scale is None else scale
    perm = [*list(range(rank - 2)), rank - 1, rank - 2]
    scores = ctx.op("MatMul", ctx.op("Mul", q, ctx.scalar_like(scale, qm)), ctx.op("Transpose", k, perm=perm))
    mask = ctx.args["attn_mask"]
    if ctx.args.get("is_causal"):
        if mask is not None:
            raise ctx.unsupported("attn_mask together with is_causal=True")
        # the top-left lower triangle of ones over the scores' last two dims, built from
        # their run-time shape so that a dynamic sequence axis keeps it right
        dims = ctx.op("Shape", scores, start=-2)
        fill = helper.make_tensor("value", onnx.TensorProto.BOOL, [1], [True])
        ones = ctx.op("Cast", ctx.op("ConstantOfShape", dims, value=fill), to=onnx.TensorProto.INT32)
        keep = ctx.op("Trilu", ones, upper=0)
        keep = ctx.op("Cast", keep, to=onnx.TensorProto.BOOL)
        scores = ctx.op("Where", keep, scores, ctx.scalar_like(-np.inf, qm))
    elif mask is not None:
        if str(mask.meta.dtype).endswith("bool"):
            neg = ctx.scalar_like(-np.inf, qm)
            scores = ctx.op("Where", ctx.name(mask), scores, neg)
        else:
            scores = ctx.op("Add", scores, ctx.name(mask))
    return ctx.op("MatMul", ctx.op("Softmax", scores, axis=-1), v)


# --- shapes -------------------------------------------------------------------------------
@rule("view", "reshape", "_unsafe_view", "_reshape_alias")
def _reshape(ctx: Context) -> str:
    arg = "size" if "size" in ctx.args else "shape"
    return ctx.op("Reshape", ctx.input("self"), ctx.ints_tensor(arg))


@rule("flatten.using_ints")
def _flatten(ctx: Context) -> str:
    rank = len(ctx.meta("self").shape)
    if rank == 0:
        return ctx.op("Reshape", ctx.input("self"), _i64(ctx, [1]))
    start, end = _dim(ctx.args["start_dim"], rank), _dim(ctx.args["end_dim"], rank)
    x = ctx.input("self")
    if start == end:
        return ctx.op("Identity", x)
    if end == rank - 1 and start > 0:
        # keep the leading dims as they are at run time: Reshape's 0 copies a dim
        return ctx.op("Reshape", x, _i64(ctx, [0] * start + [-1]))
    if end == rank - 1:
        return ctx.op("Reshape", x, _i64(ctx, [-1]))
    shape = list(ctx.meta("self").shape)
    return ctx.op("Reshape", x, _i64(ctx, [0] * start + [-1] + shape[end + 1 :]))


@rule("permute")
def _permute(ctx: Context) -> str:
    rank = len(ctx.meta("self").shape)
    return ctx.op("Transpose", ctx.input("self"), perm=[_dim(d, rank) for d in ctx.args["dims"]])


@rule("transpose.int")
def _transpose(ctx: Context) -> str:
    rank = len(ctx.meta("self").shape)
    perm = list(range(rank))
    a, b = _dim(ctx.args["dim0"], rank), _dim(ctx.args["dim1"], rank)
    perm[a], perm[b] = perm[b], perm[a]
    return ctx.op("Transpose", ctx.input("self"), perm=perm)


@rule("unsqueeze")
def _unsqueeze(ctx: Context) -> str:
    rank = len(ctx.meta("self").shape) + 1
    return ctx.op("Unsqueeze", ctx.input("self"), _i64(ctx, [_dim(ctx.args["dim"], rank)]))


@rule("squeeze.dim", "squeeze.dims", "squeeze")
def _squeeze(ctx: Context) -> str:
    shape = ctx.meta("self").shape
    rank = len(shape)
    dims = ctx.args.get("dim", None)
    if dims is None:
        dims = [i for i, s in enumerate(shape) if s == 1]
    dims = [_dim(d, rank) for d in (dims if isinstance(dims, (list, tuple)) else [dims]) if shape[_dim(d, rank)] == 1]
    if not dims:
        return ctx.op("Identity", ctx.input("self"))
    return ctx.op("Squeeze", ctx.input("self"), _i64(ctx, dims))


@rule("slice.Tensor")
def _slice(ctx: Context) -> str:
    shape = ctx.meta("self").shape
    rank = len(shape)
    dim = _dim(ctx.args["dim"], rank)
    start = ctx.args["start"] if ctx.args["start"] is not None else 0
    end = ctx.args["end"]
    step = ctx.args["step"]
    big = np.iinfo(np.int64).max
    if ctx.is_static("end"):
        ends = _i64(ctx, [big if end is None or end >= shape[dim] else end])
    else:
        ends = ctx.int_scalar_tensor("end")
    if ctx.is_static("start"):
        starts = _i64(ctx, [start])
    else:
        starts = ctx.int_scalar_tensor("start")
    return ctx.op("Slice", ctx.input("self"), starts, ends, _i64(ctx, [dim]), _i64(ctx, [step]))


@rule("select.int")
def _select(ctx: Context) -> str:
    rank = len(ctx.meta("self").shape)
    index = ctx.int_arg("index")
    return ctx.op("Gather", ctx.input("self"), _i64(ctx, index), axis=_dim(ctx.args["dim"], rank))


@rule("unbind.int")
def _unbind(ctx: Context) -> list[str]:
    shape = ctx.meta("self").shape
    dim = _dim(ctx.args["dim"], len(shape))
    n = shape[dim]
    if ctx._alt is not None and ctx._alt.outputs and len(ctx._alt.outputs) != n:
        raise ctx.unsupported("unbind along a dynamic axis (the number of outputs would change)")
    parts = ctx.emit("Split", [ctx.input("self"), _i64(ctx, [1] * n)], n_out=n, axis=dim)
    return [ctx.op("Squeeze", p, _i64(ctx, [dim])) for p in parts]


@rule("split.Tensor", "split_with_sizes")
def _split(ctx: Context) -> list[str]:
    shape = ctx.meta("self").shape
    dim = _dim(ctx.args["dim"], len(shape))
    sizes = [v.meta.shape[dim] for v in ctx.node.outputs]
    if ctx._alt is not None and [v.meta.shape[dim] for v in ctx._alt.outputs] != sizes:
        raise ctx.unsupported("split along a dynamic axis")
    return ctx.emit("Split", [ctx.input("self"), _i64(ctx, sizes)], n_out=len(sizes), axis=dim)


@rule("cat")
def _cat(ctx: Context) -> str:
    tensors = [t for t in ctx.args["tensors"] if t.meta.shape != (0,)]
    rank = len(tensors[0].meta.shape)
    out = ctx.out_meta.dtype
    names = [_cast_to(ctx, ctx.name(t), t.meta.dtype, out) for t in tensors]
    return ctx.op("Concat", *names, axis=_dim(ctx.args["dim"], rank))


@rule("stack")
def _stack(ctx: Context) -> str:
    tensors = ctx.args["tensors"]
    rank = len(tensors[0].meta.shape) + 1
    dim = _dim(ctx.args["dim"], rank)
    axes = _i64(ctx, [dim])
    return ctx.op("Concat", *[ctx.op("Unsqueeze", ctx.name(t), axes) for t in tensors], axis=dim)


@rule("expand")
def _expand(ctx: Context) -> str:
    size = list(ctx.args["size"])
    # -1 keeps a dim; ONNX's Expand broadcasts, so 1 there does the same
    fixed = [1 if s == -1 else s for s in size]
    if ctx.is_static("size"):
        return ctx.op("Expand", ctx.input("self"), _i64(ctx, fixed))
    return ctx.op("Expand", ctx.input("self"), ctx.ints_tensor("size", fixed))


# --- reductions -----------------------------------------------------------------------------
def _reduce(ctx: Context, op: str) -> str:
    shape = ctx.meta("self").shape
    rank = len(shape)
    dims = ctx.args.get("dim")
    keep = int(bool(ctx.args.get("keepdim", False)))
    x = _cast_to(ctx, ctx.input("self"), ctx.meta("self").dtype, ctx.out_meta.dtype)
    if dims is None or (isinstance(dims, (list, tuple)) and len(dims) == 0):
        return ctx.op(op, x, keepdims=0)
    dims = dims if isinstance(dims, (list, tuple)) else [dims]
    axes = _i64(ctx, [_dim(d, rank) for d in dims])
    if op == "ReduceSum":
        return ctx.op(op, x, axes, keepdims=keep)
    return (
        ctx.emit(op, [x], axes=[_dim(d, rank) for d in dims], keepdims=keep)[0]
        if ctx.opset < 18
        else ctx.op(op, x, axes, keepdims=keep)
    )


@rule("mean.dim", "mean")
def _mean(ctx: Context) -> str:
    return _reduce(ctx, "ReduceMean")


@rule("sum.dim_IntList", "sum")
def _sum(ctx: Context) -> str:
    return _reduce(ctx, "ReduceSum")


@rule("amax")
def _amax(ctx: Context) -> str:
    return _reduce(ctx, "ReduceMax")


# --- factories --------------------------------------------------------------------------------
def _full(ctx: Context, value: float) -> str:
    dtype = onnx_dtype(ctx.out_meta.dtype)
    from onnx import helper

    fill = helper.make_tensor("value", dtype, [1], [value])
    return ctx.op("ConstantOfShape", ctx.ints_tensor("size"), value=fill)


@rule("zeros")
def _zeros(ctx: Context) -> str:
    return _full(ctx, 0)


@rule("ones")
def _ones(ctx: Context) -> str:
    return _full(ctx, 1)


@rule("arange", "arange.start", "arange.start_step")
def _arange(ctx: Context) -> str:
    start = ctx.args.get("start", 0)
    step = ctx.args.get("step", 1)
    m = ctx.out_meta
    end = ctx.args["end"]
    if ctx.is_static("end"):
        limit = ctx.scalar_like(end, m)
    else:
        limit = ctx.op("Squeeze", ctx.int_scalar_tensor("end"), _i64(ctx, [0]))
        limit = _cast_to(ctx, limit, "int64", m.dtype) if not str(m.dtype).endswith("int64") else limit
    return ctx.op("Range", ctx.scalar_like(start, m), limit, ctx.scalar_like(step, m))


@rule("hardswish")
def _hardswish(ctx: Context) -> str:
    return ctx.op("HardSwish", ctx.input("self"))


@rule("hardsigmoid")
def _hardsigmoid(ctx: Context) -> str:
    return ctx.op("HardSigmoid", ctx.input("self"), alpha=1.0 / 6.0, beta=0.5)


# --- resizing ---------------------------------------------------------------------------------
def _resize(ctx: Context, mode: str, align_corners: bool | None) -> str:
    """Resize, keeping the batch and channel axes dynamic.

    PyTorch maps an output index to ``dst * s`` (nearest, floored) or ``(dst + 0.5) * s - 0.5``
    (linear), with s = 1 / scale_factor when one was given and in / out otherwise; ONNX's
    asymmetric and pytorch_half_pixel modes do the same with the ``scales`` input, or with
    out / in when given ``sizes``. So: the scale factor when the call had one, else the
    sizes (batch and channels read from the input's shape at run time)."""
    out_sizes = list(ctx.args["output_size"])
    given = [v for k, v in ctx.args.items() if k.startswith("scales")]
    inputs = [ctx.input("self"), ""]
    if all(g is not None for g in given) and not align_corners:
        inputs.append(ctx.const(np.array([1.0, 1.0, *given], dtype=np.float32)))
    else:
        lead = ctx.op("Shape", ctx.input("self"), end=2)
        inputs += ["", ctx.op("Concat", lead, _i64(ctx, out_sizes), axis=0)]
    if mode == "nearest":
        return ctx.emit(
            "Resize", inputs, mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor"
        )[0]
    transform = "align_corners" if align_corners else "pytorch_half_pixel"
    return ctx.emit("Resize", inputs, mode="linear", coordinate_transformation_mode=transform)[0]


@rule("upsample_nearest1d", "upsample_nearest2d", "upsample_nearest3d")
def _upsample_nearest(ctx: Context) -> str:
    return _resize(ctx, "nearest", None)


@rule("upsample_linear1d", "upsample_bilinear2d", "upsample_trilinear3d")
def _upsample_linear(ctx: Context) -> str:
    return _resize(ctx, "linear", bool(ctx.args["align_corners"]))
