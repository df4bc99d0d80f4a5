"""Optional (`nox -s vision_interop`): ember.vision against torchvision on the same inputs --
every operator forward and backward in float32 and float64, and torchvision-saved resnet18 /
mobilenet_v2 state_dicts loaded into ember.vision.models with the eval outputs compared
(max abs error printed). Skipped with the reason when torchvision is not installed."""

from __future__ import annotations

import io

import ember.aten as ea
import numpy as np
import pytest
from ember.autograd import no_grad
from ember.vision import models, ops

torch = pytest.importorskip("torch", reason="needs PyTorch (nox -s vision_interop installs it)")
tv = pytest.importorskip("torchvision", reason="needs torchvision (nox -s vision_interop installs it)")

DTYPES = [(ea.float32, torch.float32, 1e-5), (ea.float64, torch.float64, 1e-10)]
BOXES = np.array(
    [[0, 1.0, 1.0, 5.0, 6.0], [1, 0.5, 2.2, 3.7, 7.9], [0, -2.0, -1.5, 3.0, 4.0], [1, 20.0, 20.0, 30.0, 25.0]]
)


def _pair(a: np.ndarray, e_dtype: object, t_dtype: object, grad: bool = False) -> tuple[ea.Tensor, torch.Tensor]:
    e = ea.tensor(a, dtype=e_dtype, requires_grad=grad)
    t = torch.tensor(a, dtype=t_dtype, requires_grad=grad)
    return e, t


def _close(e: ea.Tensor, t: torch.Tensor, tol: float) -> None:
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize(("e_dt", "t_dt", "tol"), DTYPES)
@pytest.mark.parametrize("boxes", [BOXES, BOXES[:0]], ids=["boxes", "empty"])
@pytest.mark.parametrize(("ratio", "aligned"), [(-1, False), (2, True), (1, False), (-1, True)])
def test_roi_align(e_dt: object, t_dt: object, tol: float, boxes: np.ndarray, ratio: int, aligned: bool) -> None:
    a = np.random.default_rng(0).standard_normal((2, 3, 8, 9))
    ex, tx = _pair(a, e_dt, t_dt, grad=True)
    er, tr = _pair(boxes, e_dt, t_dt)
    eo = ops.roi_align(ex, er, (3, 2), 0.5, ratio, aligned)
    to = tv.ops.roi_align(tx, tr, (3, 2), 0.5, ratio, aligned)
    _close(eo, to, tol)
    w = np.random.default_rng(1).standard_normal(tuple(to.shape))
    (eo * ea.tensor(w, dtype=e_dt)).sum().backward()
    (to * torch.tensor(w, dtype=t_dt)).sum().backward()
    _close(ex.grad, tx.grad, tol)


@pytest.mark.parametrize(("e_dt", "t_dt", "tol"), DTYPES)
@pytest.mark.parametrize("boxes", [BOXES, BOXES[:0]], ids=["boxes", "empty"])
def test_roi_pool(e_dt: object, t_dt: object, tol: float, boxes: np.ndarray) -> None:
    a = np.random.default_rng(0).standard_normal((2, 3, 8, 9))
    ex, tx = _pair(a, e_dt, t_dt, grad=True)
    er, tr = _pair(boxes, e_dt, t_dt)
    eo, to = ops.roi_pool(ex, er, 2, 1.0), tv.ops.roi_pool(tx, tr, 2, 1.0)
    _close(eo, to, tol)
    eo.sum().backward()
    to.sum().backward()
    _close(ex.grad, tx.grad, tol)


@pytest.mark.parametrize(("e_dt", "t_dt", "tol"), DTYPES)
@pytest.mark.parametrize("use_mask", [False, True])
def test_deform_conv2d(e_dt: object, t_dt: object, tol: float, use_mask: bool) -> None:
    rng = np.random.default_rng(0)
    arrays = [
        rng.standard_normal((2, 4, 7, 6)),
        1.5 * rng.standard_normal((2, 2 * 2 * 9, 4, 3)),
        rng.standard_normal((6, 2, 3, 3)),
        rng.standard_normal(6),
        rng.uniform(0, 1, (2, 2 * 9, 4, 3)),
    ]
    e = [ea.tensor(a, dtype=e_dt, requires_grad=True) for a in arrays]
    t = [torch.tensor(a, dtype=t_dt, requires_grad=True) for a in arrays]
    kw = {"stride": (2, 2), "padding": (1, 1), "dilation": (1, 1)}
    eo = ops.deform_conv2d(e[0], e[1], e[2], e[3], mask=e[4] if use_mask else None, **kw)
    to = tv.ops.deform_conv2d(t[0], t[1], t[2], t[3], mask=t[4] if use_mask else None, **kw)
    _close(eo, to, tol * 10)
    w = rng.standard_normal(tuple(to.shape))
    (eo * ea.tensor(w, dtype=e_dt)).sum().backward()
    (to * torch.tensor(w, dtype=t_dt)).sum().backward()
    for i in range(5 if use_mask else 4):
        _close(e[i].grad, t[i].grad, tol * 100)


@pytest.mark.parametrize(("e_dt", "t_dt", "tol"), DTYPES)
@pytest.mark.parametrize("n", [0, 1, 200])
def test_nms_and_boxes(e_dt: object, t_dt: object, tol: float, n: int) -> None:
    rng = np.random.default_rng(n)
    xy = rng.uniform(0, 50, (n, 2))
    b = np.concatenate([xy, xy + rng.uniform(1, 30, (n, 2))], axis=1).reshape(-1, 4)
    s = rng.uniform(0, 1, n)
    idx = rng.integers(0, 4, n)
    eb, tb = _pair(b, e_dt, t_dt)
    es, ts = _pair(s, e_dt, t_dt)
    assert ops.nms(eb, es, 0.4).tolist() == tv.ops.nms(tb, ts, 0.4).tolist()
    assert (
        ops.batched_nms(eb, es, ea.tensor(idx), 0.4).tolist()
        == tv.ops.batched_nms(tb, ts, torch.tensor(idx), 0.4).tolist()
    )
    _close(ops.box_iou(eb, eb), tv.ops.box_iou(tb, tb), tol)
    _close(ops.box_area(eb), tv.ops.box_area(tb), tol)
    for fmt in ("xywh", "cxcywh"):
        _close(ops.box_convert(eb, "xyxy", fmt), tv.ops.box_convert(tb, "xyxy", fmt), tol)


@pytest.mark.parametrize(("e_dt", "t_dt", "tol"), DTYPES)
def test_sigmoid_focal_loss(e_dt: object, t_dt: object, tol: float) -> None:
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((5, 4)), (rng.uniform(0, 1, (5, 4)) > 0.5).astype(np.float64)
    ex, tx = _pair(x, e_dt, t_dt, grad=True)
    ey, ty = _pair(y, e_dt, t_dt)
    eo, to = ops.sigmoid_focal_loss(ex, ey, reduction="sum"), tv.ops.sigmoid_focal_loss(tx, ty, reduction="sum")
    _close(eo, to, tol * 10)
    eo.backward()
    to.backward()
    _close(ex.grad, tx.grad, tol * 10)


@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v2"])
def test_torchvision_state_dict_loads_with_identical_outputs(name: str) -> None:
    torch.manual_seed(0)
    tmodel = getattr(tv.models, name)(weights=None)
    tmodel.train()
    with torch.no_grad():
        tmodel(torch.randn(4, 3, 64, 64))  # running statistics away from their initial values
    tmodel.eval()
    buf = io.BytesIO()
    torch.save(tmodel.state_dict(), buf)  # what a user has on disk
    buf.seek(0)
    emodel = getattr(models, name)()
    missing = emodel.load_state_dict(ea.load(buf))
    assert not missing.missing_keys and not missing.unexpected_keys
    emodel.eval()
    x = np.random.default_rng(0).standard_normal((2, 3, 224, 224)).astype(np.float32)
    with torch.no_grad():
        expected = tmodel(torch.from_numpy(x)).numpy()
    with no_grad():
        got = emodel(ea.tensor(x)).numpy()
    err = float(np.abs(got - expected).max())
    print(f"\n{name}: torchvision state_dict in ember, eval outputs max abs error {err:.3e}")
    assert err < 1e-3 * max(1.0, float(np.abs(expected).max()))
