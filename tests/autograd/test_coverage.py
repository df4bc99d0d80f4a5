"""derivatives.yaml covers aten: every entry matches an operator, every differentiable operator
has an entry, names follow PyTorch, and operators without one fail clearly."""

from __future__ import annotations

import ember.aten as ea
import pytest
from ember.aten import _dispatch
from ember.aten._schema import FunctionSchema
from ember.autograd import _codegen, _kernels
from ember.c10py import DispatchKey
from helpers import t

_BACKEND = (DispatchKey.CPU, DispatchKey.CUDA, DispatchKey.CompositeExplicitAutograd)


def test_every_entry_matches_an_aten_operator() -> None:
    assert _kernels.SKIPPED == []


# The derivatives.yaml entries whose results never carry a gradient (output_differentiability
# all False), with the reason. Marking an operator so without listing it here fails below:
# an operator with a float result is differentiable unless there is a reason it is not.
NON_DIFFERENTIABLE: dict[str, list[str]] = {
    "bool result": (
        "eq.Tensor ne.Tensor lt.Tensor le.Tensor gt.Tensor ge.Tensor not_equal.Tensor less.Tensor "
        "less_equal.Tensor greater.Tensor greater_equal.Tensor isclose allclose equal logical_and "
        "logical_or logical_xor logical_not signbit isnan isinf isfinite isposinf isneginf all any"
    ).split(),
    "integer result (indices, counts)": (
        "argmax argmin argsort nonzero nonzero_numpy argwhere count_nonzero repeat_interleave.Tensor multinomial"
    ).split()
    # functions family (issue 18)
    + "searchsorted.Tensor searchsorted.Scalar bucketize.Tensor bucketize.Scalar".split(),
    "integer / bool operands only": (
        "gcd lcm bitwise_not bitwise_and.Tensor bitwise_or.Tensor bitwise_xor.Tensor "
        "bitwise_left_shift.Tensor bitwise_right_shift.Tensor"
    ).split(),
    "new tensor whose values do not depend on the input's values": (
        "empty_like zeros_like ones_like full_like new_empty new_empty_strided new_zeros new_ones "
        "new_full rand_like randn_like randint_like randint_like.low_dtype"
    ).split(),
    "alias without history (PyTorch: detach, and view(dtype) reinterprets the bits)": ["detach", "view.dtype"],
    "piecewise constant counts (PyTorch declares histc non-differentiable)": ["histc"],
    "in-place multi-tensor ops: not differentiated by ember yet (optimizers and clip_grad_norm_ run them under "
    "no_grad)": (
        "_foreach_add_.Tensor _foreach_add_.Scalar _foreach_add_.List _foreach_add_.ScalarList _foreach_sub_.Scalar "
        "_foreach_sub_.List _foreach_sub_.ScalarList _foreach_mul_.Tensor _foreach_mul_.Scalar _foreach_mul_.List "
        "_foreach_mul_.ScalarList _foreach_div_.Tensor _foreach_div_.Scalar _foreach_div_.List "
        "_foreach_div_.ScalarList _foreach_addcmul_.Tensor _foreach_addcmul_.Scalar _foreach_addcmul_.ScalarList "
        "_foreach_addcdiv_.Tensor _foreach_addcdiv_.Scalar _foreach_addcdiv_.ScalarList _foreach_sqrt_ _foreach_neg_ "
        "_foreach_abs_ _foreach_exp_ _foreach_reciprocal_ _foreach_sign_ _foreach_maximum_.Scalar "
        "_foreach_maximum_.List _foreach_maximum_.ScalarList _foreach_minimum_.Scalar _foreach_minimum_.List "
        "_foreach_minimum_.ScalarList _foreach_clamp_min_.Scalar _foreach_clamp_min_.List "
        "_foreach_clamp_min_.ScalarList _foreach_clamp_max_.Scalar _foreach_clamp_max_.List "
        "_foreach_clamp_max_.ScalarList _foreach_lerp_.List _foreach_lerp_.Scalar _foreach_lerp_.ScalarList "
        "_foreach_pow_.List _foreach_pow_.Scalar _foreach_pow_.ScalarList _foreach_zero_ _foreach_copy_ "
    ).split(),
    "special functions PyTorch declares non_differentiable (Bessel J / Y / K, spherical J0, orthogonal polynomials)": (
        "special_modified_bessel_k0 special_modified_bessel_k1 special_scaled_modified_bessel_k0 "
        "special_scaled_modified_bessel_k1 special_bessel_j0 special_bessel_j1 special_bessel_y0 special_bessel_y1 "
        "special_spherical_bessel_j0 special_chebyshev_polynomial_t special_chebyshev_polynomial_u "
        "special_chebyshev_polynomial_v special_chebyshev_polynomial_w special_shifted_chebyshev_polynomial_t "
        "special_shifted_chebyshev_polynomial_u special_shifted_chebyshev_polynomial_v "
        "special_shifted_chebyshev_polynomial_w special_hermite_polynomial_h special_hermite_polynomial_he "
        "special_laguerre_polynomial_l special_legendre_polynomial_p"
    ).split(),
    "fused optimizer steps (PyTorch has no derivative for them either)": (
        "_fused_sgd_ _fused_sgd_.tensor_lr _fused_adam_ _fused_adam_.tensor_lr _fused_adamw_ _fused_adamw_.tensor_lr "
    ).split(),
    "GradScaler's in-place kernels (run under no_grad on gradients and the scale; PyTorch has none)": [
        "_amp_foreach_non_finite_check_and_unscale_",
        "_amp_update_scale_",
    ],
}


def _entries() -> list[_codegen.Entry]:
    import importlib.resources

    import yaml

    text = importlib.resources.files("ember.autograd").joinpath("derivatives.yaml").read_text()
    return _codegen.parse_entries(yaml.load(text, Loader=_codegen._line_loader()))


def test_non_differentiable_entries_are_justified() -> None:
    marked = {e.qualname for e in _entries() if e.all_outputs_non_differentiable}
    listed = [q for names in NON_DIFFERENTIABLE.values() for q in names]
    assert len(listed) == len(set(listed)), "listed twice"
    assert sorted(marked - set(listed)) == [], "marked non-differentiable in derivatives.yaml without a reason here"
    assert sorted(set(listed) - marked) == [], "listed here but differentiable (or gone) in derivatives.yaml"


# Float inputs of backward kernels that PyTorch declares non_differentiable too: statistics the
# forward saved (its outputs 1 and 2) and the bias layer norm's backward only reads for its mask.
SAVED_STATISTICS: dict[str, set[str]] = {
    "native_batch_norm_backward": {"save_mean", "save_invstd"},
    "native_layer_norm_backward": {"mean", "rstd", "bias"},
    "native_group_norm_backward": {"mean", "rstd"},
    "_fused_rms_norm_backward": {"rstd"},
    "nll_loss_backward": {"total_weight"},
    "nll_loss2d_backward": {"total_weight"},
    "_cross_entropy_loss_backward": {"row_stats", "total_weight"},
}


def test_non_differentiable_inputs_are_integer_or_bool() -> None:
    # a Tensor input declared `non_differentiable` must be one that cannot hold a gradient (indices,
    # masks, repeats) -- a float input without a formula would silently get none
    allowed = {"index", "indices", "mask", "repeats", "condition", "self"}
    for e in _entries():
        for name in e.non_differentiable:
            assert name in allowed | SAVED_STATISTICS.get(e.qualname, set()), (
                f"{e.qualname}: '{name}' is declared non_differentiable"
            )
    bincount = next(e for e in _entries() if e.qualname == "bincount")
    assert bincount.non_differentiable == {"self"}  # its integer input; the float weights have a formula


def _needs_autograd_kernel() -> list[str]:
    missing = []
    for op in _dispatch.all_ops():
        if op.namespace != "aten":
            continue
        kernels = op.kernels()
        if not any(k in kernels for k in _BACKEND):
            continue  # CompositeImplicitAutograd: differentiated through the ops it calls
        s = FunctionSchema.parse(op.schema)
        if not s.tensor_arguments:
            continue  # factories: nothing to differentiate
        if DispatchKey.Autograd not in kernels:
            missing.append(op.qualname)
    return missing


def test_every_operator_with_a_kernel_has_an_autograd_kernel() -> None:
    # an op added to aten without a derivatives.yaml entry (or output_differentiability: [False]) fails here
    assert _needs_autograd_kernel() == []


@pytest.mark.parametrize(
    ("make", "name"),
    [
        (lambda x, y: x + y, "AddBackward0"),
        (lambda x, y: x - y, "SubBackward0"),
        (lambda x, y: x * y, "MulBackward0"),
        (lambda x, y: x / y, "DivBackward0"),
        (lambda x, y: x.exp(), "ExpBackward0"),
        (lambda x, y: -x, "NegBackward0"),
        (lambda x, y: x.sum(), "SumBackward0"),
        (lambda x, y: x.t(), "TBackward0"),
        (lambda x, y: x.clone(), "CloneBackward0"),
        (lambda x, y: x.view(4), "ViewBackward0"),
        (lambda x, y: x.expand(3, 2, 2), "ExpandBackward0"),
        (lambda x, y: x[0], "SelectBackward0"),
        (lambda x, y: x[:, 1:], "SliceBackward0"),
        (lambda x, y: x.transpose(0, 1), "TransposeBackward0"),
        (lambda x, y: x.unsqueeze(0), "UnsqueezeBackward0"),
        (lambda x, y: x.permute(1, 0), "PermuteBackward0"),
        (lambda x, y: x.to(ea.float32), "ToCopyBackward0"),
        (lambda x, y: x.as_strided((2,), (1,)), "AsStridedBackward0"),
        (lambda x, y: x.unbind(0)[0], "UnbindBackward0"),
        (lambda x, y: x.clone().copy_(y), "CopyBackwards"),
    ],
)
def test_node_names_follow_pytorch(make, name) -> None:  # type: ignore[no-untyped-def]
    x = t([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = t([[1.0, 1.0], [2.0, 2.0]], requires_grad=True)
    out = make(x, y)
    assert type(out.grad_fn).__name__ == name
    assert f"grad_fn=<{name}>" in repr(out)


def test_generated_module_is_introspectable() -> None:
    import ember.autograd._generated as gen

    assert "class MulBackward0" in gen.SOURCE
    assert gen.NODES["mul.Tensor"].__name__ == "MulBackward0"
    assert "mul_.Tensor" in gen.KERNELS  # the in-place variant comes from the same entry


def test_entry_errors_are_reported() -> None:
    with pytest.raises(_codegen.DerivativesError, match="has no argument 'other'"):
        _codegen.parse_entries([{"name": "neg(Tensor self) -> Tensor", "other": "grad"}])
    with pytest.raises(_codegen.DerivativesError, match="'alpha' is not a Tensor argument"):
        _codegen.parse_entries(
            [{"name": "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", "alpha": "grad"}]
        )
    with pytest.raises(_codegen.DerivativesError, match="bad formula"):
        _codegen.parse_entries([{"name": "neg(Tensor self) -> Tensor", "self": "grad +"}])
    with pytest.raises(_codegen.DerivativesError, match="listed twice"):
        _codegen.parse_entries([{"name": "neg(Tensor self) -> Tensor"}, {"name": "neg(Tensor self) -> Tensor"}])


def test_formula_attributes_save_values_not_tensors() -> None:
    (e,) = _codegen.parse_entries(
        [
            {
                "name": "sum(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
                "self": "sum_backward(grad, self.shape, dim, keepdim)",
            }
        ]
    )
    f = e.formulas[0]
    assert f.tensors == set()  # self is not saved, only its shape
    assert f.values == {"self__shape": ("self", "shape")}
    assert f.scalars == {"dim", "keepdim"}


def test_operator_without_derivative_raises() -> None:
    from ember.aten import library

    lib = library.Library("agtest", "DEF")
    lib.define("twice(Tensor x) -> Tensor")
    lib.define("count(Tensor x) -> Tensor")
    lib.impl("twice", lambda x: x * 2, "CPU")
    lib.impl("count", lambda x: ea.tensor([x.numel()]), "CPU")
    try:
        plain = ea.ops.agtest.twice(t([1.0, 2.0]))
        assert plain.tolist() == [2.0, 4.0]
        x = t([1.0, 2.0], requires_grad=True)
        with pytest.raises(NotImplementedError, match=r"the derivative for 'twice' is not implemented\."):
            ea.ops.agtest.twice(x)
        assert ea.ops.agtest.count(x).tolist() == [2]  # an integer result needs no derivative
    finally:
        lib._destroy()


def test_non_differentiable_input_requiring_grad() -> None:
    x = t([1.0, 2.0], requires_grad=True)
    idx = ea.tensor([1, 0])
    assert ea.index_select(x, 0, idx).grad_fn.name() == "IndexSelectBackward0"
    # the condition of where is non-differentiable by declaration: a float condition is not supported
    # anyway, so check the generic rule on a hand-made entry instead
    (e,) = _codegen.parse_entries(
        [{"name": "index_select(Tensor self, int dim, Tensor index) -> Tensor", "self": "grad"}]
    )
    assert e.differentiable_inputs == ["self"] and e.non_differentiable == set()
