"""roi_align and roi_pool: forward against NumPy references, backward by gradcheck (float64)
and float32 against float64, over boxes inside, across and outside the image, empty box
sets, aligned / legacy and fixed / adaptive sampling; bad input raises."""

from __future__ import annotations

import ember.aten as ea
import numpy as np
import pytest
import vision_refs as ref
from ember.autograd import gradcheck
from ember.vision import ops

BOXES = {
    "inside": [[0, 1.0, 1.0, 5.0, 6.0], [1, 0.5, 2.2, 3.7, 7.9]],
    "across_edge": [[0, -2.0, -1.5, 3.0, 4.0], [1, 5.0, 6.0, 11.0, 12.5]],
    "outside": [[0, 20.0, 20.0, 30.0, 25.0], [1, -9.0, -9.0, -4.0, -3.0]],
    "tiny": [[0, 2.0, 2.0, 2.3, 2.1]],
    "empty": [],
}
ROI_ALIGN_CASES = [
    # (boxes, output_size, spatial_scale, sampling_ratio, aligned)
    ("inside", (2, 2), 1.0, 2, False),
    ("inside", (3, 2), 0.5, -1, True),
    ("across_edge", (2, 3), 1.0, -1, False),
    ("across_edge", (2, 2), 1.0, 1, True),
    ("outside", (2, 2), 1.0, 2, True),
    ("tiny", (2, 2), 1.0, -1, False),
    ("tiny", (2, 2), 1.0, -1, True),
    ("inside", (4, 4), 2.0, 3, False),
    ("empty", (2, 2), 1.0, 2, False),
]


def _input(dtype: object, device: str = "cpu") -> tuple[np.ndarray, ea.Tensor]:
    a = np.random.default_rng(0).standard_normal((2, 3, 8, 9))
    return a, ea.tensor(a, dtype=dtype, device=device)


def _rois(name: str, dtype: object, device: str = "cpu") -> tuple[np.ndarray, ea.Tensor]:
    r = np.array(BOXES[name], dtype=np.float64).reshape(-1, 5)
    return r, ea.tensor(r, dtype=dtype, device=device)


@pytest.mark.parametrize("dtype", [ea.float32, ea.float64])
@pytest.mark.parametrize(("boxes", "size", "scale", "ratio", "aligned"), ROI_ALIGN_CASES)
def test_roi_align_forward(
    device: str, dtype: object, boxes: str, size: tuple, scale: float, ratio: int, aligned: bool
) -> None:
    a, x = _input(dtype, device)
    r, rois = _rois(boxes, dtype, device)
    out = ops.roi_align(x, rois, size, scale, ratio, aligned)
    expected = ref.roi_align(a, r, scale, size[0], size[1], ratio, aligned)
    assert out.dtype == dtype and tuple(out.shape) == expected.shape
    tol = 1e-5 if dtype == ea.float32 else 1e-12
    np.testing.assert_allclose(out.cpu().numpy(), expected, rtol=tol, atol=tol)


@pytest.mark.parametrize(("boxes", "size", "scale", "ratio", "aligned"), ROI_ALIGN_CASES)
def test_roi_align_gradcheck(device: str, boxes: str, size: tuple, scale: float, ratio: int, aligned: bool) -> None:
    _, x = _input(ea.float64, device)
    x.requires_grad_()
    _, rois = _rois(boxes, ea.float64, device)
    assert gradcheck(lambda t: ops.roi_align(t, rois, size, scale, ratio, aligned), (x,), fast_mode=True)


@pytest.mark.parametrize(("boxes", "size", "scale", "ratio", "aligned"), ROI_ALIGN_CASES)
def test_roi_align_backward_float32_matches_float64(
    boxes: str, size: tuple, scale: float, ratio: int, aligned: bool
) -> None:
    grads = []
    for dtype in (ea.float32, ea.float64):
        _, x = _input(dtype)
        x.requires_grad_()
        _, rois = _rois(boxes, dtype)
        out = ops.roi_align(x, rois, size, scale, ratio, aligned)
        w = ea.tensor(np.random.default_rng(1).standard_normal(tuple(out.shape)), dtype=dtype)
        (out * w).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-5, atol=1e-5)
    # boxes entirely outside the image (or none) sample nothing: no gradient reaches the input
    assert np.all(grads[1] == 0) == (boxes in ("empty", "outside"))


def test_roi_align_list_of_boxes_equals_rois_tensor() -> None:
    _, x = _input(ea.float32)
    per_image = [ea.tensor([[1.0, 1.0, 5.0, 6.0]]), ea.tensor([[0.5, 2.2, 3.7, 7.9], [0.0, 0.0, 4.0, 4.0]])]
    rois = ea.tensor([[0, 1.0, 1.0, 5.0, 6.0], [1, 0.5, 2.2, 3.7, 7.9], [1, 0.0, 0.0, 4.0, 4.0]])
    a = ops.roi_align(x, per_image, 2, sampling_ratio=2)
    b = ops.RoIAlign(2, 1.0, 2)(x, rois)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert "sampling_ratio=2" in repr(ops.RoIAlign(2, 1.0, 2))


ROI_POOL_CASES = [
    ("inside", (2, 2), 1.0),
    ("inside", (3, 2), 0.5),
    ("across_edge", (2, 3), 1.0),
    ("outside", (2, 2), 1.0),
    ("tiny", (2, 2), 1.0),
    ("empty", (2, 2), 1.0),
]


@pytest.mark.parametrize("dtype", [ea.float32, ea.float64])
@pytest.mark.parametrize(("boxes", "size", "scale"), ROI_POOL_CASES)
def test_roi_pool_forward(device: str, dtype: object, boxes: str, size: tuple, scale: float) -> None:
    a, x = _input(dtype, device)
    r, rois = _rois(boxes, dtype, device)
    out = ops.roi_pool(x, rois, size, scale)
    expected = ref.roi_pool(a, r, scale, size[0], size[1])
    assert out.dtype == dtype and tuple(out.shape) == expected.shape
    np.testing.assert_allclose(out.cpu().numpy(), expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(("boxes", "size", "scale"), ROI_POOL_CASES)
def test_roi_pool_gradcheck(device: str, boxes: str, size: tuple, scale: float) -> None:
    _, x = _input(ea.float64, device)
    x.requires_grad_()
    _, rois = _rois(boxes, ea.float64, device)
    assert gradcheck(lambda t: ops.roi_pool(t, rois, size, scale), (x,), fast_mode=True)


def test_roi_pool_gradient_goes_to_the_maximum() -> None:
    x = ea.zeros(1, 1, 4, 4)
    x[0, 0, 1, 2] = 5.0
    x.requires_grad_()
    out = ops.RoIPool(1, 1.0)(x, ea.tensor([[0, 0.0, 0.0, 3.0, 3.0]]))
    out.sum().backward()
    g = x.grad.numpy()
    assert out.item() == 5.0 and g[0, 0, 1, 2] == 1.0 and g.sum() == 1.0


@pytest.mark.parametrize("fn", [ops.roi_align, ops.roi_pool])
def test_roi_ops_reject_bad_input(fn: object) -> None:
    name = fn.__name__  # type: ignore[attr-defined]
    x = ea.randn(2, 3, 8, 8)
    with pytest.raises(ValueError, match=rf"{name}: boxes must be a Tensor\[K, 5\]"):
        fn(x, ea.zeros(3, 4), 2)  # type: ignore[operator]
    with pytest.raises(ValueError, match=rf"{name}: expected rois of shape \[K, 5\]"):
        getattr(ea.ops.vision, name)(x, ea.zeros(3, 4), 1.0, 2, 2, *((-1, False) if name == "roi_align" else ()))
    with pytest.raises(ValueError, match=rf"{name}: expected input to be 4-dimensional"):
        fn(ea.randn(3, 8, 8), ea.zeros(1, 5), 2)  # type: ignore[operator]
    with pytest.raises(TypeError, match=rf"{name}: expected rois to have the dtype of input"):
        fn(x, ea.zeros(1, 5, dtype=ea.float64), 2)  # type: ignore[operator]
    with pytest.raises(TypeError, match=rf"{name}: expected input to be float32 or float64"):
        fn(ea.zeros(2, 3, 8, 8, dtype=ea.int64), ea.zeros(1, 5, dtype=ea.int64), 2)  # type: ignore[operator]
    with pytest.raises(IndexError, match=rf"{name}: rois\[0, 0\] = 5 is not a batch index"):
        fn(x, ea.tensor([[5.0, 0, 0, 1, 1]]), 2)  # type: ignore[operator]
    with pytest.raises(ValueError, match=rf"{name}: output_size must be positive"):
        fn(x, ea.zeros(1, 5), (0, 2))  # type: ignore[operator]
    with pytest.raises(ValueError, match=rf"{name}: the boxes of each image must be a Tensor\[L, 4\]"):
        fn(x, [ea.zeros(2, 5)], 2)  # type: ignore[operator]
    with pytest.raises(TypeError, match=rf"{name}: output_size must be an int or a pair"):
        fn(x, ea.zeros(1, 5), "2")  # type: ignore[operator]
