"""ember.vision vs torchvision on the CPU, in one process (ratios; `uptime` printed first).

    python benchmarks/bench_vision.py [--no-resnet] [--threads N]

- deform_conv2d: batch 4, 64 -> 64 channels, 3x3, 32x32, offsets and mask, forward and
  forward + backward;
- roi_align: 256 boxes on a [2, 256, 50, 50] feature map, 7x7, sampling_ratio 2, aligned;
- nms: 2000 random boxes, IoU 0.5;
- resnet18 forward, batch 8 at 224x224, eval mode (ember.vision.models vs torchvision on
  PyTorch, the same weights).

Needs torch and torchvision (`nox -s vision_interop` installs them: torch 2.14.1 +
torchvision 0.29.1); medians of batches (benchmarks/harness.py).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import ember.aten as ea
import numpy as np
from ember.autograd import no_grad
from ember.vision import models, ops
from harness import time_callable


def _row(name: str, t_ember: float, t_torch: float) -> None:
    print(
        f"{name:<34} ember {t_ember * 1e3:9.3f} ms   torchvision {t_torch * 1e3:9.3f} ms   "
        f"ratio {t_ember / t_torch:6.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--no-resnet", action="store_true")
    parser.add_argument("--threads", type=int, default=0)
    args = parser.parse_args()
    import torch
    import torchvision as tv

    if args.threads:
        torch.set_num_threads(args.threads)
        ea.set_num_threads(args.threads)
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    print(f"threads: ember {ea.get_num_threads()}, torch {torch.get_num_threads()}")
    rng = np.random.default_rng(0)

    def both(*arrays: np.ndarray, grad: bool = False) -> tuple[list[Any], list[Any]]:
        e = [ea.tensor(a.astype(np.float32), requires_grad=grad) for a in arrays]
        t = [torch.tensor(a.astype(np.float32), requires_grad=grad) for a in arrays]
        return e, t

    # deform_conv2d
    x, off, w, b, m = (
        rng.standard_normal((4, 64, 32, 32)),
        rng.standard_normal((4, 18, 32, 32)),
        0.1 * rng.standard_normal((64, 64, 3, 3)),
        rng.standard_normal(64),
        rng.uniform(0, 1, (4, 9, 32, 32)),
    )
    e, t = both(x, off, w, b, m)
    with no_grad(), torch.no_grad():
        te = time_callable(lambda: ops.deform_conv2d(e[0], e[1], e[2], e[3], padding=1, mask=e[4]))
        tt = time_callable(lambda: tv.ops.deform_conv2d(t[0], t[1], t[2], t[3], padding=1, mask=t[4]))
    _row("deform_conv2d forward", te, tt)
    e, t = both(x, off, w, b, m, grad=True)
    te = time_callable(lambda: ops.deform_conv2d(e[0], e[1], e[2], e[3], padding=1, mask=e[4]).sum().backward())
    tt = time_callable(lambda: tv.ops.deform_conv2d(t[0], t[1], t[2], t[3], padding=1, mask=t[4]).sum().backward())
    _row("deform_conv2d forward+backward", te, tt)

    # roi_align
    feat = rng.standard_normal((2, 256, 50, 50))
    xy = rng.uniform(0, 40, (256, 2))
    boxes = np.concatenate([rng.integers(0, 2, (256, 1)), xy, xy + rng.uniform(2, 20, (256, 2))], axis=1)
    e, t = both(feat, boxes)
    with no_grad(), torch.no_grad():
        te = time_callable(lambda: ops.roi_align(e[0], e[1], 7, 1.0, 2, True))
        tt = time_callable(lambda: tv.ops.roi_align(t[0], t[1], 7, 1.0, 2, True))
    _row("roi_align 256 boxes 7x7", te, tt)

    # nms
    xy = rng.uniform(0, 500, (2000, 2))
    dets = np.concatenate([xy, xy + rng.uniform(10, 100, (2000, 2))], axis=1)
    e, t = both(dets, rng.uniform(0, 1, 2000))
    te = time_callable(lambda: ops.nms(e[0], e[1], 0.5))
    tt = time_callable(lambda: tv.ops.nms(t[0], t[1], 0.5))
    _row("nms 2000 boxes", te, tt)

    if not args.no_resnet:
        torch.manual_seed(0)
        tmodel = tv.models.resnet18(weights=None).eval()
        emodel = models.resnet18()
        emodel.load_state_dict({k: ea.tensor(v.numpy()) for k, v in tmodel.state_dict().items()})
        emodel.eval()
        img = rng.standard_normal((8, 3, 224, 224)).astype(np.float32)
        ex, tx = ea.tensor(img), torch.tensor(img)
        with no_grad(), torch.no_grad():
            err = float(np.abs(emodel(ex).numpy() - tmodel(tx).numpy()).max())
            te = time_callable(lambda: emodel(ex), batches=3, max_total=20.0)
            tt = time_callable(lambda: tmodel(tx), batches=3, max_total=20.0)
        _row("resnet18 forward b8 224^2", te, tt)
        print(f"resnet18 outputs max abs error vs torchvision: {err:.3e}")
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())


if __name__ == "__main__":
    main()
