"""Every derivative in derivatives.yaml is exercised by a gradient test.

The OpInfo table (test_gradcheck.py) reaches most entries. The entries it cannot reach
(overloads its samples do not call, in-place-only operators, random sampling, copies
and fills, the derivatives PyTorch leaves unimplemented) are checked here, each in the
way that fits it: gradcheck (+ gradgradcheck), zero gradients as PyTorch defines them,
or the "not implemented" error. ``test_every_derivative_is_exercised`` then fails for
an entry that no test reaches, so a new entry comes with its test.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from typing import Any

import ember.aten as ea
import ember.autograd as ag
import pytest
from ember.autograd import gradcheck, gradgradcheck
from helpers import rand, t


def _walk(roots: Iterable[Any], seen: set[str]) -> None:
    """Adds the class names of every node reachable from `roots` (tensors) to `seen`."""
    stack = [r.grad_fn for r in roots if isinstance(r, ea.Tensor) and r.grad_fn is not None]
    visited: set[int] = set()
    while stack:
        n = stack.pop()
        if n is None or id(n) in visited:
            continue
        visited.add(id(n))
        seen.add(type(n).__name__)
        stack.extend(e[0] for e in n.next_edges if e is not None)


def _outputs(out: Any) -> list[Any]:
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return [o for o in outs if isinstance(o, ea.Tensor) and o.requires_grad]


def nodes_of(fn: Callable[..., Any], inputs: tuple[Any, ...], double: bool = True) -> set[str]:
    """Node classes recorded by fn(*inputs) and, with `double`, by its create_graph backward."""
    seen: set[str] = set()
    outs = _outputs(fn(*inputs))
    _walk(outs, seen)
    leaves = [x for x in inputs if isinstance(x, ea.Tensor) and x.requires_grad]
    if double and outs and leaves:
        gs = ag.grad([o.sum() for o in outs], leaves, create_graph=True, allow_unused=True)
        _walk([g for g in gs if g is not None], seen)
    return seen


def _m(*shape: int, seed: int = 0, low: float = -1.0, high: float = 1.0) -> Any:
    return rand(*shape, requires_grad=True, seed=seed, low=low, high=high)


def _idx(*v: int) -> Any:
    return ea.tensor(list(v), dtype=ea.int64)


def _inplace(op: Callable[..., Any]) -> Callable[..., Any]:
    """The in-place op applied to a non-leaf copy of the first input."""
    return lambda x, *rest: op(x.clone(), *rest)


# ---------------------------------------------------------------------------
# gradcheck + gradgradcheck: (derivatives.yaml entry, function, inputs)
# ---------------------------------------------------------------------------

GRADCHECK_CASES: list[tuple[str, Callable[..., Any], Callable[[], tuple[Any, ...]]]] = [
    ("_to_copy", lambda x: ea.ops.aten._to_copy(x) * x, lambda: (_m(3),)),
    ("copy_", lambda x, y: x.clone().copy_(y), lambda: (_m(2, 3), _m(3, seed=1))),
    ("fill_.Tensor", lambda x, v: x.clone().fill_(v) * x, lambda: (_m(3), _m(seed=1))),
    ("fill_.Scalar", lambda x: x.clone().fill_(2.0) * x, lambda: (_m(3),)),
    ("zero_", lambda x: x.clone().zero_() + x * x, lambda: (_m(3),)),
    ("as_strided", lambda x: x.as_strided((2, 2), (1, 2), 1), lambda: (_m(6),)),
    ("alias", lambda x: ea.ops.aten.alias(x) * x, lambda: (_m(3),)),
    ("nextafter", lambda x, y: ea.nextafter(x, y) * x, lambda: (_m(3), _m(3, seed=1))),
    ("lerp.Tensor", ea.lerp, lambda: (_m(3), _m(3, seed=1), _m(3, seed=2))),
    ("clamp", lambda x: ea.clamp(x, -0.5, 0.5), lambda: (_m(6),)),
    ("clip", lambda x: ea.clip(x, -0.5, 0.5), lambda: (_m(6),)),
    ("clamp_min", lambda x: ea.clamp_min(x, 0.1), lambda: (_m(6),)),
    ("clamp_max", lambda x: ea.clamp_max(x, 0.1), lambda: (_m(6),)),
    ("round.decimals", lambda x: ea.round(x, decimals=1) + x, lambda: (_m(4, low=0.12, high=0.18),)),
    ("var", lambda x: x.var(False), lambda: (_m(5),)),
    ("std", lambda x: x.std(True), lambda: (_m(5),)),
    ("var_mean", lambda x: ea.var_mean(x, False), lambda: (_m(5),)),
    ("std_mean", lambda x: ea.std_mean(x, True), lambda: (_m(5),)),
    ("median.dim", lambda x: ea.median(x, 1).values, lambda: (_m(3, 5),)),
    ("nanmedian.dim", lambda x: ea.nanmedian(x, 0, True).values, lambda: (_m(5, 2),)),
    ("scatter.reduce", lambda x, s: x.scatter(0, _idx(2, 0), s, reduce="add"), lambda: (_m(4), _m(2, seed=1))),
    ("scatter.value_reduce", lambda x: x.scatter(0, _idx(2, 0), 1.5, reduce="add") * x, lambda: (_m(4),)),
    (
        "repeat_interleave.self_Tensor",
        lambda x: x.repeat_interleave(_idx(1, 0, 3), dim=1),
        lambda: (_m(2, 3),),
    ),
    ("index_put", _inplace(lambda x, v: x.index_put_((_idx(0, 2),), v)), lambda: (_m(4), _m(2, seed=1))),
    (
        "index_put",
        _inplace(lambda x, v: x.index_put_((_idx(0, 0),), v, accumulate=True)),
        lambda: (_m(4), _m(2, seed=1)),
    ),
    ("put", _inplace(lambda x, v: x.put_(_idx(3, 0), v)), lambda: (_m(2, 2), _m(2, seed=1))),
    ("put", _inplace(lambda x, v: x.put_(_idx(1, 1), v, accumulate=True)), lambda: (_m(2, 2), _m(2, seed=1))),
    # backward kernels linear in their gradient (the embedding / dropout OpInfos are not gradgradchecked)
    (
        "embedding_dense_backward",
        lambda g: ea.embedding_dense_backward(g, _idx(1, 3, 1), 5, 3, False),
        lambda: (_m(3, 2),),
    ),
    (
        "native_dropout_backward",
        lambda g: ea.native_dropout_backward(g, ea.tensor([True, False, True, True]), 2.0),
        lambda: (_m(4),),
    ),
]


@pytest.mark.parametrize(("entry", "fn", "make"), GRADCHECK_CASES, ids=[c[0] for c in GRADCHECK_CASES])
def test_gradcheck_of_entries_the_opinfo_table_does_not_reach(entry, fn, make) -> None:  # type: ignore[no-untyped-def]
    inputs = make()
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


def test_in_place_indexing_nodes_are_named_as_pytorch() -> None:
    # index_put_ / put_ share the functional entry, so the node names are PyTorch's
    x = _m(4).clone()
    x[_idx(0, 2)] = t([1.0, 2.0])
    assert x.grad_fn.name() == "IndexPutBackward0"
    y = _m(4).clone()
    y.put_(_idx(1), t([3.0]))
    assert y.grad_fn.name() == "PutBackward0"


# ---------------------------------------------------------------------------
# zero gradients, as PyTorch defines them: random sampling (the samples are treated as
# constants) and in-place comparisons of a float tensor (it is overwritten with 0 / 1)
# ---------------------------------------------------------------------------


def _compare_inplace(name: str) -> Callable[..., Any]:
    return lambda x, y: getattr(x.clone(), name)(y)


ZERO_GRAD_CASES: list[tuple[str, Callable[..., Any], Callable[[], tuple[Any, ...]]]] = [
    ("bernoulli", lambda p: ea.bernoulli(p), lambda: (_m(4, low=0.2, high=0.8),)),
    ("bernoulli.p", lambda x: ea.bernoulli(x, 0.5), lambda: (_m(4),)),
    ("bernoulli_.Tensor", lambda x, p: x.clone().bernoulli_(p), lambda: (_m(4), _m(4, seed=1, low=0.2, high=0.8))),
    ("bernoulli_.float", lambda x: x.clone().bernoulli_(0.3), lambda: (_m(4),)),
    ("normal.Tensor_Tensor", ea.normal, lambda: (_m(4), _m(4, seed=1, low=0.5, high=1.0))),
    ("normal.Tensor_float", lambda m: ea.normal(m, 2.0), lambda: (_m(4),)),
    ("normal.float_Tensor", lambda s: ea.normal(1.0, s), lambda: (_m(4, low=0.5, high=1.0),)),
    ("uniform_", lambda x: x.clone().uniform_(), lambda: (_m(4),)),
    ("normal_", lambda x: x.clone().normal_(), lambda: (_m(4),)),
    ("log_normal_", lambda x: x.clone().log_normal_(), lambda: (_m(4),)),
    ("exponential_", lambda x: x.clone().exponential_(), lambda: (_m(4),)),
    ("cauchy_", lambda x: x.clone().cauchy_(), lambda: (_m(4),)),
    ("geometric_", lambda x: x.clone().geometric_(0.5), lambda: (_m(4),)),
    ("random_.from", lambda x: x.clone().random_(0, 10), lambda: (_m(4),)),
    ("random_.to", lambda x: x.clone().random_(10), lambda: (_m(4),)),
    ("random_", lambda x: x.clone().random_(), lambda: (_m(4),)),
    *(
        (f"{name}.Tensor", _compare_inplace(name), lambda: (_m(4), _m(4, seed=1)))
        for name in "eq_ ne_ lt_ le_ gt_ ge_ not_equal_ less_ less_equal_ greater_ greater_equal_".split()
    ),
    *(
        (name, _compare_inplace(name), lambda: (_m(4), _m(4, seed=1)))
        for name in ("logical_and_", "logical_or_", "logical_xor_")
    ),
    ("logical_not_", lambda x: x.clone().logical_not_(), lambda: (_m(4),)),
]


@pytest.mark.parametrize(("entry", "fn", "make"), ZERO_GRAD_CASES, ids=[c[0] for c in ZERO_GRAD_CASES])
def test_zero_gradient(entry, fn, make) -> None:  # type: ignore[no-untyped-def]
    inputs = make()
    out = fn(*inputs)
    assert out.requires_grad
    grads = ag.grad(out.sum(), inputs)
    assert all(g.shape == x.shape and not g.any().item() for g, x in zip(grads, inputs, strict=True))


# ---------------------------------------------------------------------------
# derivatives PyTorch leaves unimplemented: the result requires grad, backward raises
# ---------------------------------------------------------------------------

NOT_IMPLEMENTED_CASES: list[tuple[str, Callable[..., Any], Callable[[], tuple[Any, ...]]]] = [
    ("floor_divide", lambda x, y: ea.floor_divide(x, y), lambda: (_m(3), _m(3, seed=1, low=1.0, high=2.0))),
    ("floor_divide", lambda x: x // 2.0, lambda: (_m(3),)),
    ("heaviside", lambda x, v: ea.heaviside(x, v), lambda: (_m(3), _m(3, seed=1))),
    ("bincount", lambda w: ea.bincount(_idx(0, 2, 2), w), lambda: (_m(3),)),
    ("_unique2", lambda x: ea.unique(x), lambda: (_m(4),)),
    ("unique_dim", lambda x: ea.unique(x, dim=0), lambda: (_m(3, 2),)),
    ("_unique_consecutive", lambda x: ea.unique_consecutive(x), lambda: (_m(4),)),
]


def _foreach_cases() -> list[tuple[str, Callable[..., Any], Callable[[], tuple[Any, ...]]]]:
    """One call of every out-of-place _foreach_ overload (ember records them; backward raises),
    each Tensor[] argument a one-tensor list of a leaf requiring grad."""
    from ember.aten import _dispatch
    from ember.aten._schema import FunctionSchema

    cases = []
    for op in sorted(_dispatch.all_ops(), key=lambda o: o.qualname):
        if op.namespace != "aten" or not op.name.startswith("_foreach_") or op.name.endswith("_"):
            continue
        s = FunctionSchema.parse(op.schema)
        n_lists = sum(a.type.is_tensor_list for a in s.arguments)

        def fn(*leaves: Any, _op: Any = op, _s: FunctionSchema = s) -> Any:
            it = iter(leaves)
            args: list[Any] = []
            for a in _s.arguments:
                if a.type.is_tensor_list:
                    args.append([next(it)])
                elif a.type.base == "Tensor":  # a 0-dim `other`, or addcmul's 1-d tensor of scalars
                    args.append(ea.tensor([0.5] if a.name == "scalars" else 0.5, dtype=ea.float64))
                elif a.type.base == "Scalar":
                    args.append([0.5] if a.type.is_list else 0.5)
                else:
                    args.append(None)
            return _op(*args)

        cases.append((op.name, fn, lambda n=n_lists: tuple(_m(3, seed=i, low=0.5, high=1.5) for i in range(n))))
    return cases


NOT_IMPLEMENTED_CASES += _foreach_cases()
# the decompositions and special functions: gradchecked in test_linalg_special_grad.py
from test_linalg_special_grad import CASES as _LINALG_SPECIAL_CASES  # noqa: E402

NOT_IMPLEMENTED_CASES.append(("geqrf", lambda a: ea.geqrf(a).a, lambda: (_m(3, 2),)))
NOT_IMPLEMENTED_CASES.append(
    ("zeta", lambda s: ea.special.zeta(s, ea.tensor([1.0, 2.0], dtype=ea.float64)), lambda: (_m(2, low=2.0, high=3.0),))
)
NOT_IMPLEMENTED_CASES.append(
    (
        "_standard_gamma_grad",
        lambda a, x: ea._standard_gamma_grad(a, x),
        lambda: (_m(3, low=1.0, high=2.0), _m(3, seed=1, low=0.5, high=1.5)),
    )
)

# ---------------------------------------------------------------------------
# random draws with a reparameterisation gradient: not finite-differenceable (a new draw per
# call), so the gradient is checked against its definition
# ---------------------------------------------------------------------------
IMPLICIT_GRAD_CASES: list[tuple[str, Callable[..., Any], Callable[[], tuple[Any, ...]]]] = [
    ("_standard_gamma", lambda a: ea._standard_gamma(a), lambda: (_m(5, low=0.2, high=3.0),)),
]


def test_standard_gamma_gradient_is_the_implicit_reparameterisation() -> None:
    (alpha,) = IMPLICIT_GRAD_CASES[0][2]()
    x = ea._standard_gamma(alpha)
    (g,) = ag.grad(x.sum(), (alpha,))
    expected = ea._standard_gamma_grad(alpha.detach(), x.detach())
    assert g.shape == alpha.shape and bool((g == expected).all())
    assert bool((expected != 0).all())


@pytest.mark.parametrize(("entry", "fn", "make"), NOT_IMPLEMENTED_CASES, ids=[c[0] for c in NOT_IMPLEMENTED_CASES])
def test_unimplemented_derivatives_raise_at_backward(entry, fn, make) -> None:  # type: ignore[no-untyped-def]
    inputs = make()
    out = fn(*inputs)
    out = out[0] if isinstance(out, tuple) else out
    assert out.requires_grad
    with pytest.raises(NotImplementedError, match=rf"the derivative for '{entry}' is not implemented\."):
        out.sum().backward()


# ---------------------------------------------------------------------------
# fused recurrent layers: a C++ backward (gradcheck), no double backward (as PyTorch's fused RNNs)
# ---------------------------------------------------------------------------


def _lstm_layer(reverse: bool) -> Callable[..., Any]:
    return lambda gi, w, h0, c0: ea._lstm_layer(gi, w, h0, c0, [3, 2, 1], reverse)[:3]


def _gru_layer(reverse: bool) -> Callable[..., Any]:
    return lambda gi, w, b, h0: ea._gru_layer(gi, w, b, h0, [3, 2, 1], reverse)[:2]


FUSED_RNN_CASES: list[tuple[str, Callable[..., Any], Callable[[], tuple[Any, ...]]]] = [
    (f"{name}-{'reverse' if rev else 'forward'}", fn(rev), make)
    for name, fn, make in [
        ("_lstm_layer", _lstm_layer, lambda: (_m(6, 8), _m(8, 2, seed=1), _m(3, 2, seed=2), _m(3, 2, seed=3))),
        ("_gru_layer", _gru_layer, lambda: (_m(6, 6), _m(6, 2, seed=1), _m(6, seed=2), _m(3, 2, seed=3))),
    ]
    for rev in (False, True)
]


@pytest.mark.parametrize(("entry", "fn", "make"), FUSED_RNN_CASES, ids=[c[0] for c in FUSED_RNN_CASES])
def test_fused_rnn_layers_gradcheck_and_refuse_double_backward(entry, fn, make) -> None:  # type: ignore[no-untyped-def]
    inputs = make()
    assert gradcheck(fn, inputs)
    op = entry.split("-")[0]
    gs = ag.grad([o.sum() for o in fn(*inputs)], inputs, create_graph=True)
    with pytest.raises(NotImplementedError, match=rf"the derivative for '{op}_backward' is not implemented\."):
        ag.grad(sum(g.sum() for g in gs), inputs)


# ---------------------------------------------------------------------------
# the coverage check
# ---------------------------------------------------------------------------


def _opinfo_nodes() -> set[str]:
    import test_gradcheck as tg

    seen: set[str] = set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for op in tg.AUTOGRAD_OPS:
            for _, leaves, fn, _ in tg.grad_samples(op, op.gradcheck_sample_limit):
                try:
                    seen |= nodes_of(fn, tuple(leaves))
                except NotImplementedError:
                    seen |= nodes_of(fn, tuple(leaves), double=False)
        for op in tg.INPLACE_OPS:
            for s in op.sample_inputs(op, ea.float64):
                if s.broadcasts_input or not tg._is_float_tensor(s.input):
                    continue
                leaves, build = tg._flatten((s.input, *s.args), s.kwargs, op.nondifferentiable_args)

                def fn(*flat: Any, _build: Any = build, _op: Any = op) -> Any:
                    a, kw = _build(flat)
                    return _op.inplace(a[0].clone(), *a[1:], **kw)

                try:
                    seen |= nodes_of(fn, tuple(leaves), double=False)
                except Exception:
                    continue  # samples the in-place form refuses (dtype / shape): test_gradcheck says which run
    return seen


def _case_nodes() -> set[str]:
    seen: set[str] = set()
    for _, fn, make in GRADCHECK_CASES + _LINALG_SPECIAL_CASES:
        seen |= nodes_of(fn, make())
    for _, fn, make in ZERO_GRAD_CASES + NOT_IMPLEMENTED_CASES + IMPLICIT_GRAD_CASES:
        seen |= nodes_of(fn, make(), double=False)
    for _, fn, make in FUSED_RNN_CASES:  # double=True records the backward ops' nodes (running them raises)
        seen |= nodes_of(fn, make())
    return seen


def test_every_derivative_is_exercised() -> None:
    import ember.autograd._generated as gen
    import test_coverage

    reached = _opinfo_nodes() | _case_nodes()
    non_differentiable = {q for names in test_coverage.NON_DIFFERENTIABLE.values() for q in names}
    missing = sorted(q for q, cls in gen.NODES.items() if q not in non_differentiable and cls.__name__ not in reached)
    # an entry listed here has no gradient test: give its op an OpInfo (tests/aten/opinfo) whose samples
    # reach it, or add a case above (or, for an op without a derivative, list it in test_coverage.py)
    assert missing == [], "derivatives.yaml entries that no gradient test reaches"
