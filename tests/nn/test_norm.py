"""Normalization layers: NumPy float64 references in training and eval, running statistics,
state_dict names, gradients, errors, repr."""

from __future__ import annotations

from collections import OrderedDict

import ember.aten as ea
import numpy as np
import pytest
from ember import nn
from ember.autograd import gradcheck
from ember.nn import functional as F


def _np(t: ea.Tensor) -> np.ndarray:
    return t.detach().cpu().numpy()


def _bn_ref(x: np.ndarray, mean: np.ndarray, var: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    shape = [1, -1] + [1] * (x.ndim - 2)
    return (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps) * w.reshape(shape) + b.reshape(shape)


def test_batchnorm_names_and_repr() -> None:
    bn = nn.BatchNorm2d(4)
    assert list(bn.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    assert bn.num_batches_tracked.dtype == ea.int64 and bn.num_batches_tracked.dim() == 0
    assert bn.weight.tolist() == [1.0] * 4 and bn.bias.tolist() == [0.0] * 4
    assert bn.running_mean.tolist() == [0.0] * 4 and bn.running_var.tolist() == [1.0] * 4
    assert [n for n, _ in bn.named_parameters()] == ["weight", "bias"]
    assert repr(bn) == "BatchNorm2d(4, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)"
    assert repr(nn.BatchNorm1d(3, momentum=None, affine=False)) == (
        "BatchNorm1d(3, eps=1e-05, momentum=None, affine=False, bias=False, track_running_stats=True)"
    )
    plain = nn.BatchNorm1d(3, affine=False, track_running_stats=False)
    assert list(plain.state_dict()) == [] and plain.running_mean is None
    nobias = nn.BatchNorm1d(3, bias=False)
    assert nobias.bias is None and list(nobias.state_dict())[:1] == ["weight"]


@pytest.mark.parametrize(
    ("cls", "shape"),
    [
        (nn.BatchNorm1d, (6, 3)),
        (nn.BatchNorm1d, (4, 3, 5)),
        (nn.BatchNorm2d, (4, 3, 2, 5)),
        (nn.BatchNorm3d, (2, 3, 2, 2, 3)),
    ],
)
def test_batchnorm_train_then_eval(cls: type, shape: tuple[int, ...], device: str) -> None:
    bn = cls(3).double()
    bn.weight.data.copy_(ea.tensor([1.5, -0.5, 2.0], dtype=ea.float64))
    bn.bias.data.copy_(ea.tensor([0.1, 0.2, -0.3], dtype=ea.float64))
    bn.to(device)
    x = (ea.randn(*shape, dtype=ea.float64) * 2 + 1).to(device)
    xs = _np(x)
    axes = tuple(i for i in range(xs.ndim) if i != 1)
    n = xs.size // 3
    mean, var = xs.mean(axes), xs.var(axes)
    out = bn(x)
    assert out.device.type == device and bn.running_mean.device.type == device
    np.testing.assert_allclose(
        _np(out), _bn_ref(xs, mean, var, _np(bn.weight), _np(bn.bias), 1e-5), rtol=1e-10, atol=1e-10
    )
    np.testing.assert_allclose(_np(bn.running_mean), 0.1 * mean, rtol=1e-12)
    np.testing.assert_allclose(_np(bn.running_var), 0.9 + 0.1 * var * n / (n - 1), rtol=1e-12)
    assert int(bn.num_batches_tracked) == 1
    bn(x)
    assert int(bn.num_batches_tracked) == 2
    np.testing.assert_allclose(_np(bn.running_mean), 0.19 * mean, rtol=1e-12)
    bn.eval()
    rm, rv = _np(bn.running_mean).copy(), _np(bn.running_var).copy()
    out_eval = bn(x)
    np.testing.assert_allclose(
        _np(out_eval), _bn_ref(xs, rm, rv, _np(bn.weight), _np(bn.bias), 1e-5), rtol=1e-10, atol=1e-10
    )
    np.testing.assert_array_equal(_np(bn.running_mean), rm)  # eval leaves the statistics alone
    assert int(bn.num_batches_tracked) == 2


def test_batchnorm_momentum_none_and_no_tracking() -> None:
    bn = nn.BatchNorm1d(2, momentum=None).double()
    xs = [ea.randn(8, 2, dtype=ea.float64) for _ in range(3)]
    for x in xs:
        bn(x)
    means = np.stack([_np(x).mean(0) for x in xs])
    np.testing.assert_allclose(_np(bn.running_mean), means.mean(0), rtol=1e-12)  # cumulative average
    free = nn.BatchNorm1d(2, track_running_stats=False).double().eval()
    x = xs[0]
    ref = _bn_ref(_np(x), _np(x).mean(0), _np(x).var(0), np.ones(2), np.zeros(2), 1e-5)
    np.testing.assert_allclose(_np(free(x)), ref, rtol=1e-10, atol=1e-10)  # batch statistics even in eval


def test_batchnorm_errors_and_gradcheck() -> None:
    with pytest.raises(ValueError, match=r"expected 4D input \(got 3D input\)"):
        nn.BatchNorm2d(3)(ea.randn(2, 3, 4))
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        nn.BatchNorm1d(3)(ea.randn(2, 3, 4, 4))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training, got input size"):
        nn.BatchNorm1d(3)(ea.randn(1, 3))
    nn.BatchNorm1d(3).eval()(ea.randn(1, 3))  # fine in eval
    x = ea.randn(4, 3, 2, dtype=ea.float64, requires_grad=True)
    w = ea.rand(3, dtype=ea.float64, requires_grad=True)
    b = ea.rand(3, dtype=ea.float64, requires_grad=True)
    assert gradcheck(lambda a, c, d: F.batch_norm(a, None, None, c, d, True), (x, w, b))
    rm, rv = ea.rand(3, dtype=ea.float64), ea.rand(3, dtype=ea.float64) + 0.5
    assert gradcheck(lambda a, c, d: F.batch_norm(a, rm, rv, c, d, False), (x, w, b))


def test_batchnorm_loads_old_checkpoint_without_num_batches_tracked() -> None:
    bn = nn.BatchNorm1d(2)
    sd = bn.state_dict()
    del sd["num_batches_tracked"]
    sd._metadata[""] = {"version": 1}
    assert repr(bn.load_state_dict(sd)) == "<All keys matched successfully>"
    # a plain dict (no _metadata, so no version) is fixed up the same way
    plain = OrderedDict((k, v) for k, v in nn.BatchNorm1d(2).state_dict().items() if k != "num_batches_tracked")
    assert repr(nn.BatchNorm1d(2).load_state_dict(plain)) == "<All keys matched successfully>"
    current = nn.BatchNorm1d(2).state_dict()  # version 2: the key is required
    del current["num_batches_tracked"]
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "num_batches_tracked"'):
        nn.BatchNorm1d(2).load_state_dict(current)


def test_layer_norm() -> None:
    ln = nn.LayerNorm((3, 4)).double()
    assert list(ln.state_dict()) == ["weight", "bias"] and tuple(ln.weight.shape) == (3, 4)
    assert repr(ln) == "LayerNorm((3, 4), eps=1e-05, elementwise_affine=True, bias=True)"
    assert (
        repr(nn.LayerNorm(5, elementwise_affine=False))
        == "LayerNorm((5,), eps=1e-05, elementwise_affine=False, bias=False)"
    )
    ln.weight.data.copy_(ea.rand(3, 4, dtype=ea.float64))
    ln.bias.data.copy_(ea.rand(3, 4, dtype=ea.float64))
    x = ea.randn(2, 5, 3, 4, dtype=ea.float64)
    xs = _np(x)
    mean = xs.mean(axis=(2, 3), keepdims=True)
    var = xs.var(axis=(2, 3), keepdims=True)
    ref = (xs - mean) / np.sqrt(var + 1e-5) * _np(ln.weight) + _np(ln.bias)
    np.testing.assert_allclose(_np(ln(x)), ref, rtol=1e-10, atol=1e-10)
    xg = ea.randn(2, 3, 4, dtype=ea.float64, requires_grad=True)
    w = ln.weight.detach().clone().requires_grad_()
    b = ln.bias.detach().clone().requires_grad_()
    assert gradcheck(lambda a, c, d: F.layer_norm(a, (3, 4), c, d), (xg, w, b))


def test_group_norm() -> None:
    gn = nn.GroupNorm(2, 4).double()
    assert repr(gn) == "GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)"
    with pytest.raises(ValueError, match=r"num_channels \(5\) must be divisible by num_groups \(2\)"):
        nn.GroupNorm(2, 5)
    gn.weight.data.copy_(ea.tensor([1.0, 2.0, 3.0, 4.0], dtype=ea.float64))
    x = ea.randn(3, 4, 5, dtype=ea.float64)
    xs = _np(x).reshape(3, 2, -1)
    ref = ((xs - xs.mean(-1, keepdims=True)) / np.sqrt(xs.var(-1, keepdims=True) + 1e-5)).reshape(3, 4, 5)
    ref = ref * np.array([1.0, 2.0, 3.0, 4.0])[None, :, None]
    np.testing.assert_allclose(_np(gn(x)), ref, rtol=1e-10, atol=1e-10)
    xg = ea.randn(2, 4, 3, dtype=ea.float64, requires_grad=True)
    assert gradcheck(lambda a: F.group_norm(a, 2), (xg,))


def test_rms_norm() -> None:
    rn = nn.RMSNorm(4).double()
    assert repr(rn) == "RMSNorm((4,), eps=None, elementwise_affine=True)" and list(rn.state_dict()) == ["weight"]
    x = ea.randn(3, 4, dtype=ea.float64)
    xs = _np(x)
    eps = np.finfo(np.float64).eps
    np.testing.assert_allclose(_np(rn(x)), xs / np.sqrt((xs**2).mean(-1, keepdims=True) + eps), rtol=1e-10)
    rn2 = nn.RMSNorm([4], eps=1e-3).double()
    np.testing.assert_allclose(_np(rn2(x)), xs / np.sqrt((xs**2).mean(-1, keepdims=True) + 1e-3), rtol=1e-10)


def test_instance_norm() -> None:
    inorm = nn.InstanceNorm2d(3)
    assert list(inorm.state_dict()) == [] and inorm.weight is None
    assert (
        repr(inorm) == "InstanceNorm2d(3, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=False)"
    )
    x = ea.randn(2, 3, 4, 4, dtype=ea.float64)
    xs = _np(x)
    mean = xs.mean(axis=(2, 3), keepdims=True)
    var = xs.var(axis=(2, 3), keepdims=True)
    np.testing.assert_allclose(_np(inorm(x)), (xs - mean) / np.sqrt(var + 1e-5), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(_np(inorm(x[0])), ((xs - mean) / np.sqrt(var + 1e-5))[0], rtol=1e-10, atol=1e-10)
    tracked = nn.InstanceNorm1d(3, affine=True, track_running_stats=True).double()
    assert list(tracked.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]
    x1 = ea.randn(2, 3, 5, dtype=ea.float64)
    tracked(x1)
    np.testing.assert_allclose(_np(tracked.running_mean), 0.1 * _np(x1).mean(-1).mean(0), rtol=1e-10)
    with pytest.raises(ValueError, match=r"expected 3D or 4D input \(got 2D input\)"):
        inorm(ea.randn(2, 3))
    with pytest.raises(ValueError, match=r"expected input's size at dim=1 to match num_features \(3\), but got: 4."):
        tracked(ea.randn(2, 4, 5, dtype=ea.float64))


def test_train_eval_difference() -> None:
    bn = nn.BatchNorm1d(2).double()
    x = ea.randn(16, 2, dtype=ea.float64) * 3 + 5
    train_out = _np(bn(x))
    bn.eval()
    eval_out = _np(bn(x))
    assert abs(train_out.mean()) < 1e-10  # batch statistics: centred
    assert eval_out.mean() > 1.0  # running statistics have moved only 10% of the way


def test_fuse_conv_bn_eval_matches_unfused() -> None:
    conv = nn.Conv2d(3, 4, 3, padding=1).double()
    bn = nn.BatchNorm2d(4).double()
    for _ in range(3):  # move the running statistics away from (0, 1)
        bn(conv(ea.randn(4, 3, 5, 5, dtype=ea.float64) * 2 + 1))
    bn.weight.data.copy_(ea.tensor([0.5, 1.5, -1.0, 2.0], dtype=ea.float64))
    conv.eval()
    bn.eval()
    fused = nn.utils.fuse_conv_bn_eval(conv, bn)
    x = ea.randn(2, 3, 5, 5, dtype=ea.float64)
    np.testing.assert_allclose(_np(fused(x)), _np(bn(conv(x))), rtol=1e-10, atol=1e-10)
    t = nn.ConvTranspose2d(3, 4, 2, stride=2).double().eval()
    fused_t = nn.utils.fuse_conv_bn_eval(t, bn, transpose=True)
    np.testing.assert_allclose(_np(fused_t(x)), _np(bn(t(x))), rtol=1e-10, atol=1e-10)
    lin = nn.Linear(3, 4).double().eval()
    bn1 = nn.BatchNorm1d(4).double()
    bn1(ea.randn(8, 4, dtype=ea.float64) + 3)
    bn1.eval()
    xl = ea.randn(5, 3, dtype=ea.float64)
    np.testing.assert_allclose(_np(nn.utils.fuse_linear_bn_eval(lin, bn1)(xl)), _np(bn1(lin(xl))), rtol=1e-10)
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        nn.utils.fuse_conv_bn_eval(conv.train(), bn)
