"""ember.vision.transforms against NumPy: ToTensor / PILToTensor, Normalize, Resize sizes and
values, CenterCrop, RandomCrop, RandomHorizontalFlip, ColorJitter; errors for bad input."""

from __future__ import annotations

import ember.aten as ea
import numpy as np
import pytest
from ember.vision import transforms as T


def _image(h: int = 6, w: int = 8) -> np.ndarray:
    return np.random.default_rng(0).integers(0, 256, (h, w, 3), dtype=np.uint8)


def test_to_tensor_from_numpy() -> None:
    a = _image()
    t = T.ToTensor()(a)
    assert t.dtype == ea.float32 and tuple(t.shape) == (3, 6, 8)
    np.testing.assert_allclose(t.numpy(), a.transpose(2, 0, 1).astype(np.float32) / 255, rtol=1e-7)
    gray = T.ToTensor()(a[:, :, 0])
    assert tuple(gray.shape) == (1, 6, 8)
    p = T.PILToTensor()(a)
    assert p.dtype == ea.uint8 and np.array_equal(p.numpy(), a.transpose(2, 0, 1))


def test_to_tensor_from_pil() -> None:
    image = pytest.importorskip("PIL.Image", reason="Pillow is optional (ember-vision[pil])")
    a = _image()
    t = T.ToTensor()(image.fromarray(a))
    np.testing.assert_allclose(t.numpy(), a.transpose(2, 0, 1).astype(np.float32) / 255, rtol=1e-7)


def test_normalize_and_compose() -> None:
    a = _image()
    mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
    t = T.Compose([T.ToTensor(), T.Normalize(mean, std)])(a)
    expected = (a.transpose(2, 0, 1) / 255.0 - np.array(mean)[:, None, None]) / np.array(std)[:, None, None]
    np.testing.assert_allclose(t.numpy(), expected, rtol=1e-5, atol=1e-5)
    x = T.ToTensor()(a)
    y = T.Normalize(mean, std, inplace=True)(x)
    assert y is x or np.array_equal(y.numpy(), x.numpy())


def test_resize_sizes_and_values() -> None:
    x = T.ToTensor()(_image(6, 8))
    assert tuple(T.Resize(3)(x).shape) == (3, 3, 4)  # the smaller edge to 3, aspect kept
    assert tuple(T.Resize((5, 7))(x).shape) == (3, 5, 7)
    assert tuple(T.Resize(12, max_size=14)(x).shape) == (3, 10, 14)
    same = T.Resize((6, 8))(x)
    np.testing.assert_allclose(same.numpy(), x.numpy(), rtol=1e-6, atol=1e-6)
    # doubling with nearest repeats each pixel
    up = T.Resize((12, 16), interpolation="nearest")(x)
    np.testing.assert_array_equal(up.numpy(), x.numpy().repeat(2, axis=1).repeat(2, axis=2))
    # halving with bilinear (align_corners=False) averages 2x2 blocks
    down = T.Resize((3, 4))(x)
    blocks = x.numpy().reshape(3, 3, 2, 4, 2).mean(axis=(2, 4))
    np.testing.assert_allclose(down.numpy(), blocks, rtol=1e-5, atol=1e-5)
    batch = T.Resize((3, 4))(ea.stack([x, x]))
    assert tuple(batch.shape) == (2, 3, 3, 4)


def test_center_crop_and_random_crop() -> None:
    x = T.ToTensor()(_image(6, 8))
    a = x.numpy()
    np.testing.assert_array_equal(T.CenterCrop((2, 4))(x).numpy(), a[:, 2:4, 2:6])
    padded = T.CenterCrop(10)(x).numpy()
    assert padded.shape == (3, 10, 10) and padded[:, 0].sum() == 0
    np.testing.assert_array_equal(padded[:, 2:8, 1:9], a)
    ea.manual_seed(0)
    crops = [T.RandomCrop((3, 3))(x).numpy() for _ in range(10)]
    windows = {(i, j) for i in range(4) for j in range(6)}
    for c in crops:
        assert any(np.array_equal(c, a[:, i : i + 3, j : j + 3]) for i, j in windows)
    assert len({c.tobytes() for c in crops}) > 1  # the position is random
    p = T.RandomCrop((8, 10), padding=1)(x).numpy()
    np.testing.assert_array_equal(p[:, 1:7, 1:9], a)
    assert tuple(T.RandomCrop(9, pad_if_needed=True)(x).shape) == (3, 9, 9)
    with pytest.raises(
        ValueError, match=r"RandomCrop: required crop size \(9, 9\) is larger than input image size \(6, 8\)"
    ):
        T.RandomCrop(9)(x)


def test_random_horizontal_flip() -> None:
    x = T.ToTensor()(_image())
    np.testing.assert_array_equal(T.RandomHorizontalFlip(p=1.0)(x).numpy(), x.numpy()[:, :, ::-1])
    np.testing.assert_array_equal(T.RandomHorizontalFlip(p=0.0)(x).numpy(), x.numpy())
    ea.manual_seed(3)
    flips = [not np.array_equal(T.RandomHorizontalFlip()(x).numpy(), x.numpy()) for _ in range(40)]
    assert 5 < sum(flips) < 35


def test_color_jitter() -> None:
    x = T.ToTensor()(_image())
    a = x.numpy().astype(np.float64)
    # a fixed factor: brightness=(f, f) scales, saturation=(0, 0) gives the grayscale image
    np.testing.assert_allclose(T.ColorJitter(brightness=(0.5, 0.5))(x).numpy(), a * 0.5, rtol=1e-5, atol=1e-6)
    gray = 0.2989 * a[0] + 0.587 * a[1] + 0.114 * a[2]
    np.testing.assert_allclose(T.ColorJitter(saturation=(0, 0))(x).numpy(), np.stack([gray] * 3), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(
        T.ColorJitter(contrast=(0, 0))(x).numpy(), np.full_like(a, gray.mean()), rtol=1e-5, atol=1e-6
    )
    ea.manual_seed(0)
    y = T.ColorJitter(0.4, 0.4, 0.4)(x).numpy()
    assert y.shape == a.shape and y.min() >= 0 and y.max() <= 1 and not np.allclose(y, a)
    with pytest.raises(NotImplementedError, match="hue jitter is not implemented"):
        T.ColorJitter(hue=0.1)
    with pytest.raises(ValueError, match="brightness is a single number, it must be non negative"):
        T.ColorJitter(brightness=-1)


def test_bad_input_raises() -> None:
    with pytest.raises(TypeError, match="ToTensor: pic should be a PIL Image or a NumPy ndarray, got list"):
        T.ToTensor()([1, 2, 3])
    with pytest.raises(TypeError, match="Normalize: input tensor should be a float tensor"):
        T.Normalize([0.5], [0.5])(ea.zeros(3, 2, 2, dtype=ea.uint8))
    with pytest.raises(ValueError, match=r"Normalize: mean \(2\) and std \(2\) must have 1 or 3 entries"):
        T.Normalize([0.5, 0.5], [0.5, 0.5])(ea.zeros(3, 2, 2))
    with pytest.raises(ValueError, match="Normalize: std evaluated to zero"):
        T.Normalize([0.5], [0.0])
    with pytest.raises(ValueError, match=r"Resize: expected a Tensor image \[..., C, H, W\], got shape \[4, 4\]"):
        T.Resize(2)(ea.zeros(4, 4))
    with pytest.raises(ValueError, match="Resize: unsupported interpolation 'area'"):
        T.Resize(2, interpolation="area")


def test_resize_antialias_is_refused_when_downsampling() -> None:
    x = ea.zeros(3, 6, 8)
    with pytest.raises(NotImplementedError, match="Resize: antialias=True is not supported when downsampling"):
        T.Resize(3, antialias=True)(x)
    assert tuple(T.Resize(12, antialias=True)(x).shape) == (3, 12, 16)  # upsampling needs no antialiasing
