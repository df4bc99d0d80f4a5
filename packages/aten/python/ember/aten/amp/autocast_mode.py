"""Automatic mixed precision: the AutocastCPU / AutocastCUDA dispatch keys (PyTorch's autocast).

An autocast region adds its device's Autocast key to the thread's *included* key set
(``_dispatch.tls.include``), so every operator call in it -- from the C++ dispatcher
entries or the generated Python ``_call_*`` entries alike -- reaches that key. The key
sits above Autograd (c10py's DispatchKey order), so the casts it makes are recorded by
autograd and gradients flow back in the parameters' own dtype. What runs there:

  * ops on the device's *lower-precision* list (matmul, linear, conv...): floating
    inputs on the device (not float64) are cast to the region's dtype;
  * ops on the *float32* list (losses, norms, exp/log, ...): such inputs are cast to
    float32; the CUDA list's reductions and softmax get ``dtype=float32`` instead
    (PyTorch's fp32_set_opt_dtype: sum of float16 returns float32);
  * ops on the *promote* list (cat, stack, addcmul, ...): inputs go to the widest
    floating type among them;
  * every other op: a fallthrough (no kernel; the dispatcher skips the key and caches
    that, so an op off the lists costs nothing).

A kernel then redispatches below the key with the cast arguments, with the Autocast keys
excluded so the composite ops it reaches do not re-enter. Inside one region a float32
leaf that requires grad (a parameter) is cast to the lower dtype once: the casts are
cached until the outermost region exits (``cache_enabled``), as PyTorch's weight cache.

The lists are PyTorch's (aten/src/ATen/autocast_mode.{h,cpp}, and the AMP docs' "CPU Ops
that can autocast to bfloat16" / "CUDA Ops that can autocast to float16"), restricted to
the operators ember has; ``AUTOCAST_POLICIES`` holds them per device.
"""

from __future__ import annotations

import functools
import threading
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal, TypeVar

from ember.c10py import DispatchKey, DispatchKeySet

from .. import _dispatch, cuda
from .._dtypes import bfloat16, float16, float32, float64
from .._schema import FunctionSchema

F = TypeVar("F", bound=Callable[..., Any])

AUTOCAST_KEYS = {"cpu": DispatchKey.AutocastCPU, "cuda": DispatchKey.AutocastCUDA}
_KEY_BITS = {dev: DispatchKeySet(k).raw for dev, k in AUTOCAST_KEYS.items()}
AUTOCAST_BITS = _KEY_BITS["cpu"] | _KEY_BITS["cuda"]
_SUPPORTED_DTYPES = {"cpu": (bfloat16, float16), "cuda": (float16, bfloat16)}

# ---------------------------------------------------------------------------
# the op policy, per device (PyTorch's lists; names ember lacks are skipped at registration)
# ---------------------------------------------------------------------------

LOWER_PRECISION_FP = "lower_precision_fp"
FP32 = "fp32"
FP32_SET_OPT_DTYPE = "fp32_set_opt_dtype"
PROMOTE = "promote"
BANNED = "banned"

_CPU_LOWER = """conv1d conv1d.padding conv2d conv2d.padding conv3d conv3d.padding bmm mm linalg_vecdot
baddbmm addmm _addmm_activation addbmm linear _convolution.deprecated matmul conv_tbc mkldnn_rnn_layer
conv_transpose1d conv_transpose2d.input conv_transpose3d.input prelu scaled_dot_product_attention
_native_multi_head_attention"""
_CPU_FP32 = """avg_pool3d binary_cross_entropy grid_sampler polar prod prod.dim_int quantile quantile.scalar
nanquantile nanquantile.scalar stft stft.center cdist grid_sampler_2d grid_sampler_3d trace view_as_complex
cholesky cholesky_inverse cholesky_solve inverse lu_solve orgqr ormqr pinverse max_pool3d max_unpool2d
max_unpool3d adaptive_avg_pool3d reflection_pad1d reflection_pad2d replication_pad1d replication_pad2d
replication_pad3d mse_loss cosine_embedding_loss nll_loss nll_loss2d hinge_embedding_loss poisson_nll_loss
smooth_l1_loss cross_entropy_loss l1_loss huber_loss margin_ranking_loss soft_margin_loss triplet_margin_loss
multi_margin_loss ctc_loss.IntList ctc_loss.Tensor kl_div multilabel_margin_loss binary_cross_entropy_with_logits
fft_fft fft_ifft fft_fft2 fft_ifft2 fft_fftn fft_ifftn fft_rfft fft_irfft fft_rfft2 fft_irfft2 fft_rfftn fft_irfftn
fft_hfft fft_ihfft linalg_cond linalg_cond.p_str linalg_matrix_rank linalg_solve linalg_cholesky linalg_svdvals
linalg_eigvals linalg_eigvalsh linalg_inv linalg_householder_product linalg_tensorinv linalg_tensorsolve geqrf
_lu_with_info qr svd triangular_solve fractional_max_pool2d fractional_max_pool3d adaptive_max_pool3d
multilabel_margin_loss_forward linalg_qr linalg_cholesky_ex linalg_svd linalg_eig linalg_eigh linalg_lstsq
linalg_inv_ex"""
_CPU_PROMOTE = "stack cat index_copy index_copy.dimname"

_CUDA_LOWER = """_convolution.deprecated _convolution conv1d conv2d conv3d conv_tbc conv_transpose1d
conv_transpose2d.input conv_transpose3d.input convolution prelu addmm addmv addr matmul einsum mm mv
linalg_vecdot linear addbmm baddbmm bmm chain_matmul linalg_multi_dot _thnn_fused_lstm_cell
_thnn_fused_gru_cell lstm_cell gru_cell rnn_tanh_cell rnn_relu_cell _scaled_dot_product_flash_attention
scaled_dot_product_attention"""
_CUDA_FP32 = """acos asin cosh erfinv exp expm1 log log10 log2 log1p reciprocal rsqrt sinh tan pow.Tensor_Scalar
pow.Tensor_Tensor pow.Scalar softplus layer_norm native_layer_norm group_norm frobenius_norm.dim nuclear_norm
nuclear_norm.dim cosine_similarity poisson_nll_loss cosine_embedding_loss nll_loss nll_loss2d
hinge_embedding_loss kl_div l1_loss smooth_l1_loss huber_loss mse_loss margin_ranking_loss
multilabel_margin_loss soft_margin_loss triplet_margin_loss multi_margin_loss binary_cross_entropy_with_logits
dist pdist cdist renorm logsumexp upsample_nearest1d _upsample_nearest_exact1d upsample_nearest2d
_upsample_nearest_exact2d upsample_nearest3d _upsample_nearest_exact3d upsample_linear1d upsample_bilinear2d
_upsample_bilinear2d_aa upsample_trilinear3d upsample_bicubic2d _upsample_bicubic2d_aa"""
# reductions / softmax: computed in float32 by asking for dtype=float32 (norm: fp32_append_dtype,
# the same thing for ember's one norm schema)
_CUDA_FP32_SET_OPT_DTYPE = """prod prod.dim_int softmax.int log_softmax.int cumprod cumsum linalg_vector_norm
linalg_matrix_norm linalg_matrix_norm.str_ord sum sum.dim_IntList norm norm.Scalar norm.ScalarOpt_dim"""
_CUDA_PROMOTE = "addcdiv addcmul atan2 bilinear cross dot vdot grid_sampler index_put tensordot scatter_add"


def _table(*pairs: tuple[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for names, policy in pairs:
        for n in names.split():
            out[n] = policy
    return out


# device -> {PyTorch op name ("conv2d.padding") -> policy}
AUTOCAST_POLICIES: dict[str, dict[str, str]] = {
    "cpu": _table((_CPU_LOWER, LOWER_PRECISION_FP), (_CPU_FP32, FP32), (_CPU_PROMOTE, PROMOTE)),
    "cuda": _table(
        (_CUDA_LOWER, LOWER_PRECISION_FP),
        (_CUDA_FP32, FP32),
        (_CUDA_FP32_SET_OPT_DTYPE, FP32_SET_OPT_DTYPE),
        (_CUDA_PROMOTE, PROMOTE),
        ("binary_cross_entropy", BANNED),
    ),
}

_BCE_BANNED = (
    "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
    "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
    "In this case, combine the two layers using torch.nn.functional.binary_cross_entropy_with_logits\n"
    "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
    "safe to autocast."
)

# ---------------------------------------------------------------------------
# thread-local state (the enabled flag itself is the key in tls.include)
# ---------------------------------------------------------------------------


class _AutocastState(threading.local):
    def __init__(self) -> None:
        self.dtype = {"cpu": bfloat16, "cuda": float16}
        self.cache_enabled = True
        self.nesting = 0
        # id(source) -> (source, cast): the source is kept alive so its id is not reused
        self.cache: dict[int, tuple[Any, Any]] = {}


_state = _AutocastState()


def _check_device(device_type: str) -> str:
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if device_type not in AUTOCAST_KEYS:
        raise RuntimeError(
            f"User specified an unsupported autocast device_type '{device_type}' (ember supports 'cpu' and 'cuda')"
        )
    return device_type


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast supports `device_type` ('cpu', 'cuda')."""
    return device_type in AUTOCAST_KEYS


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is on for `device_type` on this thread (no argument: 'cuda', as PyTorch)."""
    bits = _KEY_BITS[_check_device("cuda" if device_type is None else device_type)]
    return bool(_dispatch.tls.include & bits) and bool(_dispatch.tls.exclude_not & bits)


def set_autocast_enabled(device_type: str, enabled: bool) -> None:
    bits = _KEY_BITS[_check_device(device_type)]
    tls = _dispatch.tls
    tls.include = (tls.include | bits) if enabled else (tls.include & ~bits)


def get_autocast_dtype(device_type: str) -> Any:
    """The lower-precision dtype of `device_type`'s autocast (default: cpu bfloat16, cuda float16)."""
    return _state.dtype[_check_device(device_type)]


def set_autocast_dtype(device_type: str, dtype: Any) -> None:
    _state.dtype[_check_device(device_type)] = dtype


def is_autocast_cache_enabled() -> bool:
    return _state.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    _state.cache_enabled = bool(enabled)


def clear_autocast_cache() -> None:
    _state.cache.clear()


def autocast_increment_nesting() -> int:
    _state.nesting += 1
    return _state.nesting


def autocast_decrement_nesting() -> int:
    _state.nesting -= 1
    return _state.nesting


# ---------------------------------------------------------------------------
# the context manager / decorator
# ---------------------------------------------------------------------------


class autocast:  # PyTorch's (lower-case) name
    """``autocast(device_type, dtype=None, enabled=True, cache_enabled=None)``: run the region's ops
    in mixed precision (PyTorch's ``torch.autocast``). Context manager or decorator; regions nest,
    an inner ``enabled=False`` turns autocast off inside.

        >>> with ember.aten.autocast("cpu"):
        ...     y = ember.aten.mm(a, b)   # float32 inputs, y is bfloat16
    """

    def __init__(
        self,
        device_type: str,
        dtype: Any = None,
        enabled: bool = True,
        cache_enabled: bool | None = None,
    ) -> None:
        self.device = _check_device(device_type)
        self.fast_dtype = get_autocast_dtype(self.device) if dtype is None else dtype
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None else bool(cache_enabled)
        enabled = bool(enabled)
        if self.device == "cpu" and enabled and self.fast_dtype not in _SUPPORTED_DTYPES["cpu"]:
            warnings.warn(
                "In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                "CPU Autocast only supports dtype of torch.bfloat16, torch.float16 currently.",
                stacklevel=2,
            )
            enabled = False
        if self.device == "cuda" and enabled:
            if not cuda.is_available():
                warnings.warn("User provided device_type of 'cuda', but CUDA is not available. Disabling", stacklevel=2)
                enabled = False
            elif self.fast_dtype not in _SUPPORTED_DTYPES["cuda"]:
                warnings.warn(
                    "In CUDA autocast, but the target dtype is not supported. Disabling autocast.\n"
                    "CUDA Autocast only supports dtypes of torch.float16 and torch.bfloat16 currently.",
                    stacklevel=2,
                )
                enabled = False
        self._enabled = enabled
        self._stack: list[tuple[bool, Any, bool]] = []

    def __enter__(self) -> None:
        self._stack.append((is_autocast_enabled(self.device), get_autocast_dtype(self.device), _state.cache_enabled))
        set_autocast_enabled(self.device, self._enabled)
        set_autocast_dtype(self.device, self.fast_dtype)
        autocast_increment_nesting()
        set_autocast_cache_enabled(self._cache_enabled)

    def __exit__(self, *exc: object) -> Literal[False]:
        # the cache lives for the outermost region only: casts of weights must not outlive
        # the forward pass that made them (the weights change at the optimizer step)
        if autocast_decrement_nesting() == 0:
            clear_autocast_cache()
        prev_enabled, prev_dtype, prev_cache = self._stack.pop()
        set_autocast_enabled(self.device, prev_enabled)
        set_autocast_dtype(self.device, prev_dtype)
        set_autocast_cache_enabled(prev_cache)
        return False

    def __call__(self, func: F) -> F:
        @functools.wraps(func)
        def decorate_autocast(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)

        return decorate_autocast  # type: ignore[return-value]

    def __repr__(self) -> str:
        return f"autocast(device_type={self.device!r}, dtype={self.fast_dtype}, enabled={self._enabled})"


# ---------------------------------------------------------------------------
# the kernels
# ---------------------------------------------------------------------------


def _eligible(t: Any, device_type: str) -> bool:
    """A tensor autocast may cast: floating, on the region's device, not float64 (PyTorch's is_eligible)."""
    return hasattr(t, "_impl") and t.is_floating_point() and t.device.type == device_type and t.dtype != float64


def cached_cast(to_type: Any, t: Any, device_type: str) -> Any:
    """`t` as `to_type` if autocast may cast it; a float32 parameter's lower-precision cast is made
    once per region (the cache)."""
    if not _eligible(t, device_type) or t.dtype == to_type:
        return t
    st = _state
    if (
        st.cache_enabled
        and to_type == st.dtype[device_type]
        and t.dtype == float32
        and t.requires_grad
        and t._base is None
        and t.is_leaf
    ):
        hit = st.cache.get(id(t))
        if hit is not None and hit[0] is t:
            return hit[1]
        cast = t.to(to_type)
        st.cache[id(t)] = (t, cast)
        return cast
    return t.to(to_type)


def _cast_arg(to_type: Any, a: Any, device_type: str) -> Any:
    if isinstance(a, (list, tuple)):
        return type(a)(cached_cast(to_type, x, device_type) if x is not None else None for x in a)
    return cached_cast(to_type, a, device_type)


def _tensors(args: Iterable[Any]) -> Iterable[Any]:
    for a in args:
        if isinstance(a, (list, tuple)):
            yield from (x for x in a if hasattr(x, "_impl"))
        elif hasattr(a, "_impl"):
            yield a


class _OpInfo:
    """What an autocast kernel needs of a schema: which arguments hold tensors, where dtype= is."""

    __slots__ = ("dtype_pos", "tensor_pos")

    def __init__(self, schema: str) -> None:
        s = FunctionSchema.parse(schema)
        self.tensor_pos = [i for i, a in enumerate(s.arguments) if a.type.base == "Tensor"]
        self.dtype_pos = next(
            (i for i, a in enumerate(s.arguments) if a.name == "dtype" and a.type.base == "ScalarType"), None
        )


def _make_kernel(op: _dispatch.OpOverload, policy: str, device_type: str) -> Callable[..., Any]:
    info = _OpInfo(op.schema)
    redispatch = _dispatch.redispatcher(op)
    tensor_pos = info.tensor_pos
    name = op.qualname

    def cast_positions(args: tuple[Any, ...], to_type: Any) -> list[Any]:
        out = list(args)
        for i in tensor_pos:
            if out[i] is not None:
                out[i] = _cast_arg(to_type, out[i], device_type)
        return out

    if policy == LOWER_PRECISION_FP:

        def kernel(ks: int, *args: Any) -> Any:
            with _dispatch.ExcludeKeys(AUTOCAST_BITS):
                return redispatch(ks, *cast_positions(args, _state.dtype[device_type]))

    elif policy == FP32:

        def kernel(ks: int, *args: Any) -> Any:
            with _dispatch.ExcludeKeys(AUTOCAST_BITS):
                return redispatch(ks, *cast_positions(args, float32))

    elif policy == FP32_SET_OPT_DTYPE:
        dtype_pos = info.dtype_pos
        if dtype_pos is None:
            raise RuntimeError(f"autocast: {name} has no dtype= argument for the fp32_set_opt_dtype policy")

        def kernel(ks: int, *args: Any) -> Any:
            # only when the first argument is eligible, and only if the caller gave no dtype
            # (setting one otherwise could change the op's own promotion), as PyTorch
            if _eligible(args[0], device_type) and args[dtype_pos] is None:
                args = (*args[:dtype_pos], float32, *args[dtype_pos + 1 :])
            with _dispatch.ExcludeKeys(AUTOCAST_BITS):
                return redispatch(ks, *args)

    elif policy == PROMOTE:

        def kernel(ks: int, *args: Any) -> Any:
            to_type = _state.dtype[device_type]
            for t in _tensors(args[i] for i in tensor_pos):
                if _eligible(t, device_type) and t.dtype != to_type:
                    to_type = float32  # the widest eligible floating type (float64 is not eligible)
            with _dispatch.ExcludeKeys(AUTOCAST_BITS):
                return redispatch(ks, *cast_positions(args, to_type))

    elif policy == BANNED:

        def kernel(ks: int, *args: Any) -> Any:
            if any(_eligible(t, device_type) for t in _tensors(args[i] for i in tensor_pos)):
                raise RuntimeError(_BCE_BANNED)
            with _dispatch.ExcludeKeys(AUTOCAST_BITS):
                return redispatch(ks, *args)

    else:
        raise ValueError(f"autocast: unknown cast policy {policy!r} for {name}")
    kernel.__qualname__ = f"autocast_{device_type}_{policy}[{name}]"
    return kernel


def registered_policies(device_type: str) -> dict[str, str]:
    """{ember op qualname -> policy} actually registered for `device_type` (the lists, less what ember lacks)."""
    return dict(_registered[device_type])


_registered: dict[str, dict[str, str]] = {"cpu": {}, "cuda": {}}


def _fallthrough(*args: Any) -> None:
    raise AssertionError("a fallthrough kernel is never called")


def _register_fallthrough(key: DispatchKey) -> None:
    """Every op without a kernel for `key` skips it (PyTorch's makeFallthrough fallback)."""
    _dispatch._fallbacks[key] = _dispatch.Kernel(_fallthrough, False, "fallthrough", None, fallthrough=True)
    _dispatch.invalidate_tables()


def _register() -> None:
    """Registers a fallthrough for every op and a kernel for each listed op, per Autocast key."""
    for device_type, key in AUTOCAST_KEYS.items():
        _register_fallthrough(key)
        for qualname, policy in AUTOCAST_POLICIES[device_type].items():
            try:
                op = _dispatch.find_op(qualname)
            except KeyError:
                continue  # an op PyTorch lists that ember does not have
            kernel = _make_kernel(op, policy, device_type)
            _dispatch.register_kernel(
                op,
                key,
                kernel,
                with_keyset=True,
                name=f"ember.aten.amp.autocast_mode:{kernel.__qualname__}",
                source=_dispatch.python_source(kernel),
            )
            _registered[device_type][qualname] = policy


# ---------------------------------------------------------------------------
# custom Functions (PyTorch's torch.amp.custom_fwd / custom_bwd)
# ---------------------------------------------------------------------------


def _cast(value: Any, device_type: str, dtype: Any) -> Any:
    if hasattr(value, "_impl"):
        return value.to(dtype) if _eligible(value, device_type) else value
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, Mapping):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, device_type, dtype) for v in value)
    return value


def custom_fwd(
    fwd: Callable[..., Any] | None = None, *, device_type: str, cast_inputs: Any = None
) -> Callable[..., Any]:
    """Decorator for a custom ``Function.forward`` (PyTorch's ``torch.amp.custom_fwd``). With
    ``cast_inputs=dtype`` the forward runs with autocast off, its floating inputs cast to dtype
    when called inside an autocast region; otherwise it runs in the caller's autocast state.
    ``custom_bwd`` then runs the backward in the same state as the forward."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args: Any, **kwargs: Any) -> Any:
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        in_region = is_autocast_enabled(device_type)
        ctx._fwd_used_autocast = False
        if in_region:
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast(args, device_type, cast_inputs), **_cast(kwargs, device_type, cast_inputs))
        return fwd(*args, **kwargs)

    return decorate_fwd


def custom_bwd(bwd: Callable[..., Any] | None = None, *, device_type: str) -> Callable[..., Any]:
    """Decorator for a custom ``Function.backward``: runs it in the autocast state its forward
    (decorated with ``custom_fwd``) ran in (PyTorch's ``torch.amp.custom_bwd``)."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args: Any, **kwargs: Any) -> Any:
        ctx = args[0]
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast, dtype=ctx._dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd
