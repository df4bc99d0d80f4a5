"""ember.vision.transforms (torchvision.transforms): image transforms on ember tensors of
shape [..., C, H, W]; ToTensor / PILToTensor read NumPy arrays (H x W x C) and, when
Pillow is installed, PIL images. Random transforms draw from ember's generator
(``ember.aten.manual_seed`` makes them repeatable).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from typing import Any

import ember.aten as ea
import ember.nn.functional as F
import numpy as np

__all__ = [
    "CenterCrop",
    "ColorJitter",
    "Compose",
    "Normalize",
    "PILToTensor",
    "RandomCrop",
    "RandomHorizontalFlip",
    "Resize",
    "ToTensor",
]


def _is_pil(pic: Any) -> bool:
    try:
        from PIL import Image
    except ImportError:
        return False
    return isinstance(pic, Image.Image)


def _to_hwc_array(pic: Any, name: str) -> np.ndarray:
    if _is_pil(pic):
        arr = np.asarray(pic)
    elif isinstance(pic, np.ndarray):
        arr = pic
    else:
        raise TypeError(f"{name}: pic should be a PIL Image or a NumPy ndarray, got {type(pic).__name__}")
    if arr.ndim == 2:
        arr = arr[:, :, None]
    if arr.ndim != 3:
        raise ValueError(f"{name}: pic should be 2 or 3 dimensional, got {arr.ndim} dimensions")
    return arr


def _check_image(img: Any, name: str) -> None:
    if not isinstance(img, ea.Tensor):
        raise TypeError(f"{name}: expected a Tensor image [..., C, H, W], got {type(img).__name__}")
    if img.dim() < 3:
        raise ValueError(f"{name}: expected a Tensor image [..., C, H, W], got shape {list(img.shape)}")


def _size_pair(size: Any, name: str) -> tuple[int, int]:
    if isinstance(size, numbers.Number):
        return int(size), int(size)  # type: ignore[call-overload]
    if isinstance(size, Sequence) and len(size) == 1:
        return int(size[0]), int(size[0])
    if isinstance(size, Sequence) and len(size) == 2:
        return int(size[0]), int(size[1])
    raise ValueError(f"{name}: size should be an int or a sequence of 1 or 2 ints, got {size!r}")


class Compose:
    """Applies ``transforms`` in order."""

    def __init__(self, transforms: Sequence[Callable[[Any], Any]]) -> None:
        self.transforms = list(transforms)

    def __call__(self, img: Any) -> Any:
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self) -> str:
        body = "".join(f"\n    {t}" for t in self.transforms)
        return f"{type(self).__name__}({body}\n)"


class ToTensor:
    """A PIL image or an H x W x C ndarray -> a float32 [C, H, W] tensor; uint8 data is
    scaled to [0, 1], other dtypes are kept as they are (torchvision's rule)."""

    def __call__(self, pic: Any) -> Any:
        arr = _to_hwc_array(pic, "ToTensor")
        chw = np.ascontiguousarray(arr.transpose(2, 0, 1))
        if chw.dtype == np.uint8:
            return ea.from_numpy(chw.astype(np.float32) / np.float32(255))
        if chw.dtype == np.bool_:
            chw = chw.astype(np.uint8)
        return ea.from_numpy(chw)

    def __repr__(self) -> str:
        return "ToTensor()"


class PILToTensor:
    """A PIL image or an H x W x C ndarray -> a [C, H, W] tensor of the same dtype (no scaling)."""

    def __call__(self, pic: Any) -> Any:
        arr = _to_hwc_array(pic, "PILToTensor")
        return ea.from_numpy(np.ascontiguousarray(arr.transpose(2, 0, 1)))

    def __repr__(self) -> str:
        return "PILToTensor()"


class Normalize:
    """``(img - mean[c]) / std[c]`` per channel of a float image [..., C, H, W]."""

    def __init__(self, mean: Sequence[float], std: Sequence[float], inplace: bool = False) -> None:
        self.mean = list(mean)
        self.std = list(std)
        self.inplace = inplace
        if any(s == 0 for s in self.std):
            raise ValueError(
                f"Normalize: std evaluated to zero after conversion to float, leading to division by zero ({self.std})"
            )

    def __call__(self, img: Any) -> Any:
        _check_image(img, "Normalize")
        if not img.is_floating_point():
            raise TypeError(f"Normalize: input tensor should be a float tensor, got {img.dtype}")
        c = img.shape[-3]
        if len(self.mean) not in (1, c) or len(self.std) not in (1, c):
            raise ValueError(
                f"Normalize: mean ({len(self.mean)}) and std ({len(self.std)}) must have 1 or {c} entries (channels)"
            )
        mean = ea.tensor(self.mean, dtype=img.dtype, device=img.device).view(-1, 1, 1)
        std = ea.tensor(self.std, dtype=img.dtype, device=img.device).view(-1, 1, 1)
        if self.inplace:
            return img.sub_(mean).div_(std)
        return (img - mean) / std

    def __repr__(self) -> str:
        return f"Normalize(mean={self.mean}, std={self.std})"


class Resize:
    """Resizes [..., C, H, W] to ``size`` (h, w), or with an int the smaller edge to ``size``
    keeping the aspect ratio (``max_size`` caps the longer edge). Bilinear by default.

    One difference from torchvision: ``antialias`` defaults to False, because ember's
    ``interpolate`` has no antialiased mode yet (``antialias=True`` raises when the image
    is downsampled); halving with bilinear then averages 2 x 2 blocks."""

    def __init__(
        self, size: Any, interpolation: str = "bilinear", max_size: int | None = None, antialias: bool = False
    ) -> None:
        if interpolation not in ("nearest", "bilinear", "bicubic"):
            raise ValueError(f"Resize: unsupported interpolation {interpolation!r}")
        if not isinstance(size, (int, Sequence)) or (isinstance(size, Sequence) and len(size) not in (1, 2)):
            raise TypeError(f"Resize: size should be an int or a sequence of 1 or 2 ints, got {size!r}")
        self.size = size
        self.interpolation = interpolation
        self.max_size = max_size
        self.antialias = antialias

    def _output_size(self, h: int, w: int) -> tuple[int, int]:
        if isinstance(self.size, int) or len(self.size) == 1:
            requested = self.size if isinstance(self.size, int) else self.size[0]
            short, long = (w, h) if w <= h else (h, w)
            new_short, new_long = requested, int(requested * long / short)
            if self.max_size is not None and new_long > self.max_size:
                new_short, new_long = int(self.max_size * new_short / new_long), self.max_size
            return (new_long, new_short) if w <= h else (new_short, new_long)
        return int(self.size[0]), int(self.size[1])

    def __call__(self, img: Any) -> Any:
        _check_image(img, "Resize")
        h, w = img.shape[-2], img.shape[-1]
        out_h, out_w = self._output_size(h, w)
        lead = tuple(img.shape[:-3])
        x = img.reshape(-1, img.shape[-3], h, w)
        dtype = x.dtype
        if not x.is_floating_point():
            x = x.to(ea.float32)
        kwargs: dict[str, Any] = {}
        if self.interpolation != "nearest":
            kwargs = {"align_corners": False}
            if self.antialias and (out_h < h or out_w < w):
                raise NotImplementedError(
                    "Resize: antialias=True is not supported when downsampling (ember's interpolate has no "
                    "antialiased mode); use antialias=False"
                )
        y = F.interpolate(x, size=(out_h, out_w), mode=self.interpolation, **kwargs)
        if dtype != y.dtype:
            y = y.round().clamp(0, 255).to(dtype) if dtype == ea.uint8 else y.round().to(dtype)
        return y.reshape(*lead, img.shape[-3], out_h, out_w)

    def __repr__(self) -> str:
        return (
            f"Resize(size={self.size}, interpolation={self.interpolation}, max_size={self.max_size}, "
            f"antialias={self.antialias})"
        )


def _crop(img: Any, top: int, left: int, height: int, width: int) -> Any:
    return img[..., top : top + height, left : left + width]


class CenterCrop:
    """The central ``size`` (h, w) region; an image smaller than that is zero-padded first."""

    def __init__(self, size: Any) -> None:
        self.size = _size_pair(size, "CenterCrop")

    def __call__(self, img: Any) -> Any:
        _check_image(img, "CenterCrop")
        th, tw = self.size
        h, w = img.shape[-2], img.shape[-1]
        if th > h or tw > w:
            pad_l, pad_t = (tw - w) // 2 if tw > w else 0, (th - h) // 2 if th > h else 0
            pad_r, pad_b = (tw - w + 1) // 2 if tw > w else 0, (th - h + 1) // 2 if th > h else 0
            img = F.pad(img, [pad_l, pad_r, pad_t, pad_b], value=0.0)
            h, w = img.shape[-2], img.shape[-1]
        top = round((h - th) / 2.0)
        left = round((w - tw) / 2.0)
        return _crop(img, top, left, th, tw)

    def __repr__(self) -> str:
        return f"CenterCrop(size={self.size})"


def _randint(high: int) -> int:
    """A uniform integer in [0, high) from ember's generator."""
    return int(ea.randint(0, high, (1,)).item())


def _rand() -> float:
    return float(ea.rand(1).item())


class RandomCrop:
    """A random ``size`` (h, w) crop, after optional ``padding`` (int, (lr, tb) or (l, t, r, b))
    and, with ``pad_if_needed``, padding up to ``size``."""

    def __init__(
        self,
        size: Any,
        padding: Any = None,
        pad_if_needed: bool = False,
        fill: float = 0,
        padding_mode: str = "constant",
    ) -> None:
        self.size = _size_pair(size, "RandomCrop")
        if padding_mode not in ("constant", "reflect", "replicate", "edge", "symmetric"):
            raise ValueError(f"RandomCrop: unsupported padding_mode {padding_mode!r}")
        self.padding = padding
        self.pad_if_needed = pad_if_needed
        self.fill = fill
        self.padding_mode = padding_mode

    def _pad(self, img: Any, left: int, top: int, right: int, bottom: int) -> Any:
        mode = {"edge": "replicate", "symmetric": "reflect"}.get(self.padding_mode, self.padding_mode)
        if mode == "constant":
            return F.pad(img, [left, right, top, bottom], value=float(self.fill))
        return F.pad(img, [left, right, top, bottom], mode=mode)

    def __call__(self, img: Any) -> Any:
        _check_image(img, "RandomCrop")
        if self.padding is not None:
            p = self.padding
            if isinstance(p, int):
                p = (p, p, p, p)
            elif len(p) == 2:
                p = (p[0], p[1], p[0], p[1])
            img = self._pad(img, *p)
        th, tw = self.size
        h, w = img.shape[-2], img.shape[-1]
        if self.pad_if_needed and w < tw:
            img = self._pad(img, tw - w, 0, tw - w, 0)
        if self.pad_if_needed and h < th:
            img = self._pad(img, 0, th - h, 0, th - h)
        h, w = img.shape[-2], img.shape[-1]
        if h < th or w < tw:
            raise ValueError(f"RandomCrop: required crop size {(th, tw)} is larger than input image size {(h, w)}")
        top = _randint(h - th + 1)
        left = _randint(w - tw + 1)
        return _crop(img, top, left, th, tw)

    def __repr__(self) -> str:
        return f"RandomCrop(size={self.size}, padding={self.padding})"


class RandomHorizontalFlip:
    """Flips the image left-right with probability ``p``."""

    def __init__(self, p: float = 0.5) -> None:
        self.p = p

    def __call__(self, img: Any) -> Any:
        _check_image(img, "RandomHorizontalFlip")
        if _rand() < self.p:
            return ea.flip(img, [-1])
        return img

    def __repr__(self) -> str:
        return f"RandomHorizontalFlip(p={self.p})"


def _blend(a: Any, b: Any, ratio: float) -> Any:
    return (ratio * a + (1.0 - ratio) * b).clamp(0.0, 1.0)


def _grayscale(img: Any) -> Any:
    r, g, b = img[..., 0, :, :], img[..., 1, :, :], img[..., 2, :, :]
    return (0.2989 * r + 0.587 * g + 0.114 * b).unsqueeze(-3)


class ColorJitter:
    """Random brightness, contrast and saturation changes of a float RGB image in [0, 1],
    each factor drawn uniformly from [max(0, 1 - x), 1 + x] (or the given (min, max)),
    applied in a random order. Hue jitter is not implemented (hue must be 0)."""

    def __init__(self, brightness: Any = 0, contrast: Any = 0, saturation: Any = 0, hue: Any = 0) -> None:
        self.brightness = self._range(brightness, "brightness")
        self.contrast = self._range(contrast, "contrast")
        self.saturation = self._range(saturation, "saturation")
        if hue not in (0, None, (0, 0)):
            raise NotImplementedError("ColorJitter: hue jitter is not implemented in ember.vision (use hue=0)")
        self.hue = None

    @staticmethod
    def _range(value: Any, name: str) -> tuple[float, float] | None:
        if isinstance(value, numbers.Number):
            v = float(value)  # type: ignore[arg-type]
            if v < 0:
                raise ValueError(f"ColorJitter: if {name} is a single number, it must be non negative, got {v}")
            lo, hi = max(0.0, 1.0 - v), 1.0 + v
        elif isinstance(value, Sequence) and len(value) == 2:
            lo, hi = float(value[0]), float(value[1])
            if not 0 <= lo <= hi:
                raise ValueError(f"ColorJitter: {name} values should be between (0, inf), got {value!r}")
        else:
            raise TypeError(f"ColorJitter: {name} should be a single number or a pair, got {value!r}")
        return None if lo == hi == 1.0 else (lo, hi)

    def __call__(self, img: Any) -> Any:
        _check_image(img, "ColorJitter")
        if not img.is_floating_point():
            raise TypeError(f"ColorJitter: expected a float image in [0, 1], got {img.dtype}")
        order = ea.randperm(3).tolist()
        for i in order:
            rng = (self.brightness, self.contrast, self.saturation)[i]
            if rng is None:
                continue
            factor = rng[0] + _rand() * (rng[1] - rng[0])
            if i == 0:
                img = _blend(img, ea.zeros_like(img), factor)
            elif i == 1:
                gray = _grayscale(img) if img.shape[-3] == 3 else img
                mean = gray.mean(dim=(-3, -2, -1), keepdim=True)
                img = _blend(img, mean, factor)
            else:
                if img.shape[-3] != 3:
                    raise ValueError(f"ColorJitter: saturation needs an RGB image (3 channels), got {img.shape[-3]}")
                img = _blend(img, _grayscale(img), factor)
        return img

    def __repr__(self) -> str:
        return (
            f"ColorJitter(brightness={self.brightness}, contrast={self.contrast}, saturation={self.saturation}, hue=0)"
        )
