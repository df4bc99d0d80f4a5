"""Views and in-place operations, checked against PyTorch: the gradients after in-place changes to a
view or to its base (values recorded from torch 2.13 running the same code), views made under
no_grad, and the views of multi-output operators (unbind, split, chunk)."""

from __future__ import annotations

import ember.aten as ea
import ember.autograd as ag
import pytest
from helpers import close, rand, t

NO_GRAD_VIEW_MSG = (
    r"A view was created in no_grad mode and is being modified inplace with grad mode enabled\. Given that "
    r"this use case is ambiguous and error-prone, it is forbidden\."
)


# ---------------------------------------------------------------------------
# rebase: gradients and grad_fn after in-place changes (expected values from PyTorch)
# ---------------------------------------------------------------------------


def test_base_modified_then_view_used() -> None:
    x = t([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    b = x * 1
    v = b[1:3]
    b.mul_(x)
    assert v.grad_fn.name() == "AsStridedBackward0"
    (v * v).sum().backward()
    assert x.grad.tolist() == [0.0, 32.0, 108.0, 0.0]


def test_view_modified_then_base_used() -> None:
    x = t([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    b = x * 2
    v = b[::2]
    v.exp_()
    assert b.grad_fn.name() == "CopySlices" and v.grad_fn.name() == "AsStridedBackward0"
    (b * b).sum().backward()
    assert close(x.grad, [218.39260013257697, 16.0, 651019.1656760157, 32.0])


def test_view_of_a_view_modified() -> None:
    x = t([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    b = x.clone()
    v = b[1]
    w = v[1:]
    w.mul_(t([2.0, 3.0]))
    assert [b.grad_fn.name(), v.grad_fn.name(), w.grad_fn.name()] == [
        "CopySlices",
        "AsStridedBackward0",
        "AsStridedBackward0",
    ]
    (b.sum() + v.sum() * 2 + w.sum() * 3).backward()
    assert x.grad.tolist() == [[1.0, 1.0, 1.0], [3.0, 12.0, 18.0]]


def test_overlapping_views_one_modified() -> None:
    x = t([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    b = x.clone()
    v1, v2 = b[:2], b[1:]
    v1.pow_(2)
    assert v2.grad_fn.name() == "AsStridedBackward0"
    (v2 * t([1.0, 10.0, 100.0])).sum().backward()
    assert x.grad.tolist() == [0.0, 4.0, 10.0, 100.0]


def test_view_modified_with_an_operand_requiring_grad() -> None:
    x = t([1.0, 2.0, 3.0], requires_grad=True)
    y = t([5.0], requires_grad=True)
    b = x * 1
    b[1:2].mul_(y)
    (b * t([1.0, 2.0, 3.0])).sum().backward()
    assert x.grad.tolist() == [1.0, 10.0, 3.0] and y.grad.tolist() == [4.0]


def test_transposed_and_reshaped_views_modified() -> None:
    x = t([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    b = x * 1
    b.t()[0].add_(t([10.0, 20.0]))
    (b * b).sum().backward()
    assert x.grad.tolist() == [[22.0, 4.0], [46.0, 8.0]]

    x = t([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    b = x * 1
    v = b.view(4)
    v[1:3].mul_(t([5.0, 6.0]))
    assert b.grad_fn.name() == "CopySlices" and v.grad_fn.name() == "AsStridedBackward0"
    (b * t([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    assert x.grad.tolist() == [[1.0, 10.0], [18.0, 4.0]]


def test_views_made_before_and_after_several_in_place_ops() -> None:
    x = t([1.0, 2.0, 3.0], requires_grad=True)
    b = x * 1
    v = b[1:]
    b.add_(1)
    b.mul_(x)
    v2 = b[:2]
    assert v.grad_fn.name() == "AsStridedBackward0" and v2.grad_fn.name() == "SliceBackward0"
    (v.sum() + (v2 * v2).sum()).backward()
    assert x.grad.tolist() == [12.0, 65.0, 7.0]


def test_every_view_kind_is_regenerated_after_base_changes() -> None:
    x = t([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    b = x * 1
    views = [b.diagonal(), b.narrow(1, 0, 1), b.unfold(0, 1, 1), b.squeeze(), b.reshape(4)]
    b.add_(1)
    assert [v.grad_fn.name() for v in views] == ["AsStridedBackward0"] * 5


def test_retain_grad_follows_the_base_through_copy_slices() -> None:
    x = t([1.0, 2.0, 3.0], requires_grad=True)
    b = x * 1
    b.retain_grad()
    b[1:].mul_(2)
    b.sum().backward()
    assert b.grad.tolist() == [1.0, 1.0, 1.0] and x.grad.tolist() == [1.0, 2.0, 2.0]


def test_index_put_on_a_non_leaf() -> None:
    x = t([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    b = x.clone()
    b[ea.tensor([0, 2])] = t([7.0, 8.0], requires_grad=True) * 1
    assert b.grad_fn.name() == "IndexPutBackward0"
    (b * b).sum().backward()
    assert x.grad.tolist() == [0.0, 4.0, 0.0, 8.0]


def test_gradcheck_through_views_of_views_modified_in_place() -> None:
    def f(a, w):  # type: ignore[no-untyped-def]
        b = a * 1
        v = b[1:]
        v[:, ::2].mul_(w)
        b.t()[0].sin_()
        return b * v.sum()

    assert ag.gradcheck(f, (rand(3, 4, requires_grad=True), rand(2, 2, requires_grad=True, seed=1)))
    assert ag.gradgradcheck(f, (rand(3, 4, requires_grad=True), rand(2, 2, requires_grad=True, seed=1)))


# ---------------------------------------------------------------------------
# views made under no_grad
# ---------------------------------------------------------------------------


def test_no_grad_view_modified_with_grad_mode_on_raises() -> None:
    x = t([1.0, 2.0, 3.0], requires_grad=True)
    b = x * 1
    with ag.no_grad():
        v = b[1:]
    with pytest.raises(RuntimeError, match=NO_GRAD_VIEW_MSG):
        v.mul_(2)
    with pytest.raises(RuntimeError, match=NO_GRAD_VIEW_MSG):
        v.mul_(t([2.0, 2.0], requires_grad=True))  # also with an operand that requires grad
    with pytest.raises(RuntimeError, match=NO_GRAD_VIEW_MSG):
        v[1:].zero_()  # a view of that view inherits it
    with ag.no_grad():
        a, *_ = b.unbind(0)
    with pytest.raises(RuntimeError, match=NO_GRAD_VIEW_MSG):
        a.add_(1)
    assert b.tolist() == [1.0, 2.0, 3.0]  # nothing was written


def test_inference_mode_view_modified_outside_raises() -> None:
    x = t([1.0, 2.0, 3.0], requires_grad=True)
    b = x * 1
    with ag.inference_mode():
        v = b[1:]
        w = v[:1]
    with ag.no_grad():
        u = b[:1]
    msg = r"A view was created in inference mode and is being modified inplace in normal mode\."
    with pytest.raises(RuntimeError, match=msg):
        v.mul_(2)
    with pytest.raises(RuntimeError, match=msg):
        w.zero_()
    with pytest.raises(RuntimeError, match=NO_GRAD_VIEW_MSG):  # the mode is restored on exit
        u.zero_()
    with pytest.raises(RuntimeError, match=msg):  # made in grad mode of an inference-mode view: inherited
        v[1:].zero_()


def test_no_grad_view_of_a_leaf_raises() -> None:
    x = t([1.0, 2.0, 3.0], requires_grad=True)
    with ag.no_grad():
        v = x[1:]
    with pytest.raises(RuntimeError, match=NO_GRAD_VIEW_MSG):
        v[0] = 5.0


def test_no_grad_view_modified_under_no_grad_is_not_recorded() -> None:
    x = t([1.0, 2.0, 3.0], requires_grad=True)
    b = x * 1
    with ag.no_grad():
        v = b[1:]
        v.mul_(2)
    assert b.grad_fn.name() == "MulBackward0"
    b.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0] and b.tolist() == [1.0, 4.0, 6.0]


def test_parameter_update_under_no_grad() -> None:
    w = t([1.0, 2.0, 3.0], requires_grad=True)
    (w * w).sum().backward()
    with ag.no_grad():
        w.sub_(0.1 * w.grad)
        w.view(3)[0].zero_()
    w.grad = None
    (w * w).sum().backward()
    assert close(w, [0.0, 1.6, 2.4]) and close(w.grad, [0.0, 3.2, 4.8])


def test_custom_function_returning_a_view_of_its_input() -> None:
    class Head(ag.Function):
        @staticmethod
        def forward(ctx, a):  # type: ignore[no-untyped-def]
            return a[:2]  # made under no_grad, returned as the Function's output

        @staticmethod
        def backward(ctx, g):  # type: ignore[no-untyped-def]
            return ea.cat([g, g.new_zeros(1)])

    x = t([1.0, 2.0, 3.0], requires_grad=True)
    y = Head.apply(x * 1)
    (y * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0, 0.0]


# ---------------------------------------------------------------------------
# multi-output views: unbind, split, chunk
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("split", "name"),
    [
        (lambda b: b.split(2), "SplitBackward0"),
        (lambda b: b.split([1, 3]), "SplitWithSizesBackward0"),
        (lambda b: b.chunk(2), "SplitBackward0"),
        (lambda b: b.unbind(0), "UnbindBackward0"),
    ],
)
def test_multi_output_views(split, name) -> None:  # type: ignore[no-untyped-def]
    x = t([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    b = x * 1
    parts = split(b)
    assert parts[0].grad_fn.name() == name and parts[0]._base is b
    with pytest.raises(RuntimeError, match=rf"Output 0 of {name} is a view and is being modified inplace\."):
        parts[0].mul_(2)
    b.mul_(2)  # the base changes: the pieces' history is no longer valid
    with pytest.raises(
        RuntimeError, match=rf"Output 1 of {name} is a view and its base or another view of its base has been modified"
    ):
        parts[1].sum().backward()


def test_split_gradient_fills_unused_pieces_with_zeros() -> None:
    x = rand(5, 3, requires_grad=True)
    a, _, c = x.split(2)
    (a.sum() + 2 * c.sum()).backward()
    assert x.grad.tolist() == [[1.0] * 3] * 2 + [[0.0] * 3] * 2 + [[2.0] * 3]
    assert ag.gradcheck(lambda z: z.split([1, 2], dim=1), (rand(2, 3, requires_grad=True),))
    assert ag.gradgradcheck(lambda z: z.chunk(2, dim=0)[1], (rand(4, 2, requires_grad=True),))
