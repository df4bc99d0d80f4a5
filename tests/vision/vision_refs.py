"""NumPy references of torchvision's operators, written out from their definitions (float64
loops, small inputs): what tests/vision compares ember.vision's C++/CUDA kernels against."""

from __future__ import annotations

import math

import numpy as np


def _roi_align_bilinear(plane: np.ndarray, y: float, x: float) -> float:
    h, w = plane.shape
    if y < -1.0 or y > h or x < -1.0 or x > w:
        return 0.0
    y, x = max(y, 0.0), max(x, 0.0)
    y0, x0 = int(y), int(x)
    if y0 >= h - 1:
        y0 = y1 = h - 1
        y = float(y0)
    else:
        y1 = y0 + 1
    if x0 >= w - 1:
        x0 = x1 = w - 1
        x = float(x0)
    else:
        x1 = x0 + 1
    ly, lx = y - y0, x - x0
    return (
        (1 - ly) * (1 - lx) * plane[y0, x0]
        + (1 - ly) * lx * plane[y0, x1]
        + ly * (1 - lx) * plane[y1, x0]
        + ly * lx * plane[y1, x1]
    )


def roi_align(inp: np.ndarray, rois: np.ndarray, scale: float, ph: int, pw: int, sr: int, aligned: bool) -> np.ndarray:
    k, c = rois.shape[0], inp.shape[1]
    out = np.zeros((k, c, ph, pw))
    off = 0.5 if aligned else 0.0
    for r in range(k):
        b = int(rois[r, 0])
        x1, y1, x2, y2 = (rois[r, 1:] * scale - off).tolist()
        rw, rh = x2 - x1, y2 - y1
        if not aligned:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bh, bw = rh / ph, rw / pw
        gh = sr if sr > 0 else math.ceil(rh / ph)
        gw = sr if sr > 0 else math.ceil(rw / pw)
        count = max(gh * gw, 1)
        for ch in range(c):
            for py in range(ph):
                for px in range(pw):
                    s = 0.0
                    for iy in range(gh):
                        y = y1 + py * bh + (iy + 0.5) * bh / gh
                        for ix in range(gw):
                            x = x1 + px * bw + (ix + 0.5) * bw / gw
                            s += _roi_align_bilinear(inp[b, ch], y, x)
                    out[r, ch, py, px] = s / count
    return out


def _round_half_away(v: float) -> int:
    """C's round(): halves away from zero (NumPy's round goes to even)."""
    return int(math.copysign(math.floor(abs(v) + 0.5), v))


def roi_pool(inp: np.ndarray, rois: np.ndarray, scale: float, ph: int, pw: int) -> np.ndarray:
    k, c, h, w = rois.shape[0], inp.shape[1], inp.shape[2], inp.shape[3]
    out = np.zeros((k, c, ph, pw))
    for r in range(k):
        b = int(rois[r, 0])
        x1, y1, x2, y2 = (_round_half_away(v * scale) for v in rois[r, 1:])
        rw, rh = max(x2 - x1 + 1, 1), max(y2 - y1 + 1, 1)
        bh, bw = rh / ph, rw / pw
        for py in range(ph):
            hs = min(max(math.floor(py * bh) + y1, 0), h)
            he = min(max(math.ceil((py + 1) * bh) + y1, 0), h)
            for px in range(pw):
                ws = min(max(math.floor(px * bw) + x1, 0), w)
                we = min(max(math.ceil((px + 1) * bw) + x1, 0), w)
                if he <= hs or we <= ws:
                    continue
                out[r, :, py, px] = inp[b, :, hs:he, ws:we].reshape(c, -1).max(axis=1)
    return out


def _deform_bilinear(plane: np.ndarray, y: float, x: float) -> float:
    h, w = plane.shape
    if y <= -1 or y >= h or x <= -1 or x >= w:
        return 0.0
    y0, x0 = math.floor(y), math.floor(x)
    ly, lx = y - y0, x - x0
    total = 0.0
    for yy, wy in ((y0, 1 - ly), (y0 + 1, ly)):
        for xx, wx in ((x0, 1 - lx), (x0 + 1, lx)):
            if 0 <= yy < h and 0 <= xx < w:
                total += wy * wx * plane[yy, xx]
    return total


def deform_conv2d(
    inp: np.ndarray,
    offset: np.ndarray,
    weight: np.ndarray,
    bias: np.ndarray | None,
    stride: tuple[int, int],
    padding: tuple[int, int],
    dilation: tuple[int, int],
    mask: np.ndarray | None,
) -> np.ndarray:
    n, c_in, _, _ = inp.shape
    c_out, cg, kh, kw = weight.shape
    groups = c_in // cg
    og = offset.shape[1] // (2 * kh * kw)
    h_out, w_out = offset.shape[2], offset.shape[3]
    out = np.zeros((n, c_out, h_out, w_out))
    cpo = c_in // og
    for b in range(n):
        for oc in range(c_out):
            g = oc // (c_out // groups)
            for oy in range(h_out):
                for ox in range(w_out):
                    acc = 0.0 if bias is None else float(bias[oc])
                    for icl in range(cg):
                        ic = g * cg + icl
                        grp = ic // cpo
                        for i in range(kh):
                            for j in range(kw):
                                k = i * kw + j
                                dy = offset[b, grp * 2 * kh * kw + 2 * k, oy, ox]
                                dx = offset[b, grp * 2 * kh * kw + 2 * k + 1, oy, ox]
                                y = oy * stride[0] - padding[0] + i * dilation[0] + dy
                                x = ox * stride[1] - padding[1] + j * dilation[1] + dx
                                m = 1.0 if mask is None else mask[b, grp * kh * kw + k, oy, ox]
                                acc += weight[oc, icl, i, j] * m * _deform_bilinear(inp[b, ic], y, x)
                    out[b, oc, oy, ox] = acc
    return out


def box_area(b: np.ndarray) -> np.ndarray:
    return (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])


def box_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = np.zeros((a.shape[0], b.shape[0]))
    for i in range(a.shape[0]):
        for j in range(b.shape[0]):
            iw = max(0.0, min(a[i, 2], b[j, 2]) - max(a[i, 0], b[j, 0]))
            ih = max(0.0, min(a[i, 3], b[j, 3]) - max(a[i, 1], b[j, 1]))
            inter = iw * ih
            out[i, j] = inter / (box_area(a[i : i + 1])[0] + box_area(b[j : j + 1])[0] - inter)
    return out


def nms(boxes: np.ndarray, scores: np.ndarray, thr: float) -> list[int]:
    order = list(np.argsort(-scores, kind="stable"))
    keep: list[int] = []
    for i in order:
        if all(box_iou(boxes[i : i + 1], boxes[k : k + 1])[0, 0] <= thr for k in keep):
            keep.append(int(i))
    return keep


def sigmoid_focal_loss(x: np.ndarray, t: np.ndarray, alpha: float, gamma: float) -> np.ndarray:
    p = 1 / (1 + np.exp(-x))
    ce = -(t * np.log(p) + (1 - t) * np.log(1 - p))
    p_t = p * t + (1 - p) * (1 - t)
    loss = ce * (1 - p_t) ** gamma
    if alpha >= 0:
        loss = (alpha * t + (1 - alpha) * (1 - t)) * loss
    return loss
