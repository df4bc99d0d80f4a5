"""nms, batched_nms, box_area, box_iou, box_convert and sigmoid_focal_loss against NumPy
references, including empty box sets and degenerate boxes; bad input raises."""

from __future__ import annotations

import ember.aten as ea
import numpy as np
import pytest
import vision_refs as ref
from ember.autograd import gradcheck
from ember.vision import ops


def _boxes(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    xy = rng.uniform(0, 50, (n, 2))
    wh = rng.uniform(1, 30, (n, 2))
    return np.concatenate([xy, xy + wh], axis=1)


@pytest.mark.parametrize("dtype", [ea.float32, ea.float64])
@pytest.mark.parametrize(("n", "threshold"), [(0, 0.5), (1, 0.5), (30, 0.3), (60, 0.5), (60, 0.0), (60, 1.0)])
def test_nms_matches_numpy(device: str, dtype: object, n: int, threshold: float) -> None:
    b = _boxes(n, n)
    s = np.random.default_rng(n + 1).uniform(0, 1, n)
    keep = ops.nms(
        ea.tensor(b.reshape(-1, 4), dtype=dtype, device=device), ea.tensor(s, dtype=dtype, device=device), threshold
    )
    assert keep.dtype == ea.int64
    assert keep.cpu().tolist() == ref.nms(b.reshape(-1, 4), s, threshold)


def test_nms_equal_scores_keep_input_order() -> None:
    b = ea.tensor([[0.0, 0, 10, 10], [20, 20, 30, 30], [0, 0, 10, 10.5]])
    assert ops.nms(b, ea.tensor([0.5, 0.5, 0.5]), 0.5).tolist() == [0, 1]


@pytest.mark.parametrize("n", [0, 1, 40])
def test_batched_nms_is_nms_per_category(n: int) -> None:
    b = _boxes(n, 7).reshape(-1, 4)
    s = np.random.default_rng(8).uniform(0, 1, n)
    idxs = np.random.default_rng(9).integers(0, 3, n)
    keep = ops.batched_nms(ea.tensor(b), ea.tensor(s), ea.tensor(idxs), 0.4).tolist()
    expected = []
    for c in range(3):
        members = np.flatnonzero(idxs == c)
        expected += [int(members[i]) for i in ref.nms(b[members], s[members], 0.4)]
    assert keep == sorted(expected, key=lambda i: -s[i])


def test_box_area_iou_convert() -> None:
    a, b = _boxes(5, 1), _boxes(4, 2)
    np.testing.assert_allclose(ops.box_area(ea.tensor(a)).numpy(), ref.box_area(a), rtol=1e-12)
    np.testing.assert_allclose(ops.box_iou(ea.tensor(a), ea.tensor(b)).numpy(), ref.box_iou(a, b), rtol=1e-12)
    assert tuple(ops.box_iou(ea.zeros(0, 4), ea.tensor(b, dtype=ea.float32)).shape) == (0, 4)
    xywh = np.concatenate([a[:, :2], a[:, 2:] - a[:, :2]], axis=1)
    cxcywh = np.concatenate([(a[:, :2] + a[:, 2:]) / 2, a[:, 2:] - a[:, :2]], axis=1)
    forms = {"xyxy": a, "xywh": xywh, "cxcywh": cxcywh}
    for src, arr in forms.items():
        for dst, expected in forms.items():
            got = ops.box_convert(ea.tensor(arr), src, dst).numpy()
            np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12, err_msg=f"{src}->{dst}")


@pytest.mark.parametrize(("alpha", "gamma", "reduction"), [(0.25, 2, "none"), (-1, 0, "mean"), (0.5, 1.5, "sum")])
def test_sigmoid_focal_loss(alpha: float, gamma: float, reduction: str) -> None:
    rng = np.random.default_rng(3)
    x, t = rng.standard_normal((4, 5)), (rng.uniform(0, 1, (4, 5)) > 0.5).astype(np.float64)
    expected = ref.sigmoid_focal_loss(x, t, alpha, gamma)
    expected = {"none": expected, "mean": expected.mean(), "sum": expected.sum()}[reduction]
    got = ops.sigmoid_focal_loss(ea.tensor(x), ea.tensor(t), alpha, gamma, reduction)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-10)
    xt = ea.tensor(x, requires_grad=True)
    assert gradcheck(lambda v: ops.sigmoid_focal_loss(v, ea.tensor(t), alpha, gamma, reduction), (xt,))


def test_bad_input_raises() -> None:
    with pytest.raises(ValueError, match=r"nms: expected boxes of shape \[N, 4\]"):
        ops.nms(ea.zeros(3, 5), ea.zeros(3), 0.5)
    with pytest.raises(ValueError, match=r"nms: expected scores of shape \[3\]"):
        ops.nms(ea.zeros(3, 4), ea.zeros(2), 0.5)
    with pytest.raises(TypeError, match=r"nms: expected boxes and scores of one dtype"):
        ops.nms(ea.zeros(3, 4), ea.zeros(3, dtype=ea.float64), 0.5)
    with pytest.raises(TypeError, match=r"nms: expected boxes to be float32 or float64"):
        ops.nms(ea.zeros(3, 4, dtype=ea.int64), ea.zeros(3, dtype=ea.int64), 0.5)
    with pytest.raises(ValueError, match=r"batched_nms: expected idxs of shape \[3\]"):
        ops.batched_nms(ea.zeros(3, 4), ea.zeros(3), ea.zeros(2, dtype=ea.int64), 0.5)
    with pytest.raises(ValueError, match=r"box_iou: expected boxes of shape \[N, 4\]"):
        ops.box_iou(ea.zeros(3, 3), ea.zeros(2, 4))
    with pytest.raises(ValueError, match=r"box_convert: unsupported box format 'xy'"):
        ops.box_convert(ea.zeros(2, 4), "xy", "xyxy")
    with pytest.raises(ValueError, match=r"Invalid Value for arg 'reduction': 'avg"):
        ops.sigmoid_focal_loss(ea.zeros(2), ea.zeros(2), reduction="avg")
    with pytest.raises(ValueError, match=r"sigmoid_focal_loss: inputs \[2\] and targets \[3\] must have one shape"):
        ops.sigmoid_focal_loss(ea.zeros(2), ea.zeros(3))
