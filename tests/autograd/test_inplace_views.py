"""In-place operations and views under autograd: saved-tensor version checks, leaf errors,
CopySlices when a view is written, view grad_fn rebuilt after its base changed."""

from __future__ import annotations

import ember.aten as ea
import ember.autograd as ag
import pytest
from helpers import close, rand, t


def test_modified_saved_tensor_error_message() -> None:
    a = ea.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = a * 2
    b.mul_(3)  # b: output 0 of MulBackward0 at version 1
    c = b * b  # saves b at version 1
    b.mul_(2)  # version 2
    with pytest.raises(RuntimeError) as info:
        c.sum().backward()
    msg = str(info.value)
    assert (
        "one of the variables needed for gradient computation has been modified by an inplace operation: "
        "[float32 [3]], which is output 0 of MulBackward0, is at version 2; expected version 1 instead"
    ) in msg


def test_modified_saved_output() -> None:
    x = t([0.5, 1.0], requires_grad=True)
    y = x.exp()  # saves its result
    y.add_(1)  # the saved result is reported as the output of the node that saved it
    with pytest.raises(RuntimeError, match="output 0 of ExpBackward0, is at version 1; expected version 0"):
        y.sum().backward()


def test_modified_leaf_saved_message_has_no_output_part() -> None:
    x = t([1.0, 2.0], requires_grad=True)
    w = t([3.0, 4.0])
    y = x * w  # saves w (a leaf that does not require grad)
    w.add_(1)
    with pytest.raises(RuntimeError, match=r"\[float64 \[2\]\] is at version 1; expected version 0 instead"):
        y.sum().backward()


def test_in_place_on_leaf_requiring_grad() -> None:
    x = t([1.0], requires_grad=True)
    leaf_msg = r"^a leaf Variable that requires grad is being used in an in-place operation\.$"
    with pytest.raises(RuntimeError, match=leaf_msg):
        x.add_(1)
    view_msg = r"^a view of a leaf Variable that requires grad is being used in an in-place operation\.$"
    with pytest.raises(RuntimeError, match=view_msg):
        x[0:1].mul_(2)


def test_in_place_on_non_leaf() -> None:
    x = t([1.0, 2.0], requires_grad=True)
    y = x * 1
    y.mul_(3)
    assert y.grad_fn.name() == "MulBackward0"
    y.exp_()
    assert y.grad_fn.name() == "ExpBackward0"
    y.sum().backward()
    assert close(x.grad, 3 * (3 * x.detach()).exp())


def test_in_place_with_value_requiring_grad_into_plain_tensor() -> None:
    w = t([2.0, 3.0], requires_grad=True)
    buf = ea.zeros(2, dtype=ea.float64)
    buf.add_(w)
    assert buf.requires_grad and buf.grad_fn.name() == "AddBackward0"
    (buf * buf).sum().backward()
    assert w.grad.tolist() == [4.0, 6.0]


def test_setitem_into_zeros_builds_copy_slices() -> None:
    y = t([5.0, 6.0], requires_grad=True)
    out = ea.zeros(3, 2, dtype=ea.float64)
    out[1] = y
    assert out.requires_grad and out.grad_fn.name() == "CopySlices"
    (out * t([[1.0, 1.0], [2.0, 3.0], [1.0, 1.0]])).sum().backward()
    assert y.grad.tolist() == [2.0, 3.0]


def test_copy_slices_example_from_the_issue() -> None:
    leaf = rand(3, 3, requires_grad=True)
    y = rand(3, requires_grad=True, seed=1)
    x = leaf.clone()
    x[0] = y
    x[:, 1].mul_(2)
    assert x.grad_fn.name() == "CopySlices"
    x.sum().backward()
    # leaf: row 0 replaced by y (no gradient), column 1 doubled
    expected = [[0.0, 0.0, 0.0], [1.0, 2.0, 1.0], [1.0, 2.0, 1.0]]
    assert leaf.grad.tolist() == expected
    assert y.grad.tolist() == [1.0, 2.0, 1.0]


def test_view_grad_fn_is_rebuilt_after_base_changes() -> None:
    leaf = t([1.0, 2.0, 3.0], requires_grad=True)
    base = leaf * 1
    v = base[1:]
    assert v.grad_fn.name() == "SliceBackward0"
    base.mul_(2)
    assert v.grad_fn.name() == "AsStridedBackward0"
    v.sum().backward()
    assert leaf.grad.tolist() == [0.0, 2.0, 2.0]


def test_view_modified_in_place_then_used() -> None:
    leaf = t([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    base = leaf.clone()
    v = base[0]
    v.mul_(3)
    assert base.grad_fn.name() == "CopySlices"
    assert v.grad_fn.name() == "AsStridedBackward0"
    (v.sum() + base.sum()).backward()
    assert leaf.grad.tolist() == [[6.0, 6.0], [1.0, 1.0]]


def test_gradcheck_through_view_inplace() -> None:
    def f(a, b):  # type: ignore[no-untyped-def]
        x = a.clone()
        x[0] = b
        x[:, 1].mul_(b[1])
        x.transpose(0, 1)[2].exp_()
        return x

    a = rand(3, 3, requires_grad=True)
    b = rand(3, requires_grad=True, seed=3)
    assert ag.gradcheck(f, (a, b))
    assert ag.gradgradcheck(f, (a, b))


def test_multi_output_views_cannot_be_modified_in_place() -> None:
    x = t([[1.0, 2.0], [3.0, 4.0]], requires_grad=True).clone()
    a, _ = x.unbind(0)
    msg = r"Output 0 of UnbindBackward0 is a view and is being modified inplace\..*returns multiple views"
    with pytest.raises(RuntimeError, match=msg):
        a.mul_(2)


def test_detach_shares_storage_but_not_history() -> None:
    x = t([1.0, 2.0], requires_grad=True)
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.grad_fn is None and d.is_leaf
    assert d._base is None and not d._is_view()  # an alias of y, not a view of it (PyTorch's detach)
    assert y[1:].detach()._base is None
    d.zero_()  # bumps the shared version counter
    assert y.tolist() == [0.0, 0.0]
    z = y.detach()
    w = t([3.0, 3.0], requires_grad=True)
    z.mul_(w)  # a detached tensor is not a view for autograd
    assert z.grad_fn.name() == "MulBackward0"
    assert y.grad_fn.name() == "MulBackward0"


def test_detach_inplace() -> None:
    x = t([1.0], requires_grad=True)
    y = x * 2
    y.detach_()
    assert y.grad_fn is None and not y.requires_grad and y.is_leaf
    v = (x * 2)[0:1]
    with pytest.raises(RuntimeError, match="Can't detach views in-place"):
        v.detach_()


def test_requires_grad_rules() -> None:
    x = t([1.0])
    x.requires_grad_()
    assert x.requires_grad and x.is_leaf
    y = x * 2
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables"):
        y.requires_grad_(False)
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require gradients"):
        ea.tensor([1, 2]).requires_grad_()
    x.requires_grad = False
    assert not x.requires_grad
    assert not (x * 2).requires_grad


def test_out_variants_refuse_inputs_requiring_grad() -> None:
    x = t([1.0, 2.0], requires_grad=True)
    out = ea.empty(2, dtype=ea.float64)
    msg = r"add\(\): functions with out=\.\.\. arguments don't support automatic differentiation"
    with pytest.raises(RuntimeError, match=msg):
        ea.add(x, x, out=out)
    with ag.no_grad():
        ea.add(x, x, out=out)
    assert out.tolist() == [2.0, 4.0]


def test_version_counter_is_shared_by_views() -> None:
    x = t([1.0, 2.0, 3.0], requires_grad=True)
    base = x * 1
    v = base[0:2]
    y = v * v  # saves v
    base[2:].add_(1)  # same storage, other elements: still a modification for autograd
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_data_is_not_tracked() -> None:
    x = t([1.0, 2.0], requires_grad=True)
    y = x * x
    x.data.mul_(10)  # .data has its own version counter: no error, values change
    y.sum().backward()
    assert x.grad.tolist() == [20.0, 40.0]
