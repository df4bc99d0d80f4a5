"""Export the digits CNN (examples/cnn_digits.py's model) to ONNX and run it in ONNX Runtime.

    python examples/export_onnx.py [--checkpoint digits_cnn.pt] [--out digits_cnn.onnx]

Without a checkpoint the weights are random; the point is that ONNX Runtime computes the
same outputs as ember, at any batch size. Exit status 1 when they differ.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import ember.aten as ea
import ember.autograd as autograd
import ember.onnx
import numpy as np
import onnxruntime as ort

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cnn_digits import make_model


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--checkpoint", type=Path, help="a state_dict saved by cnn_digits.py")
    p.add_argument("--out", type=Path, default=Path("digits_cnn.onnx"))
    args = p.parse_args()

    model = make_model()
    if args.checkpoint is not None:
        ckpt = ea.load(args.checkpoint)
        model.load_state_dict(ckpt["model"])

    x = ea.randn(4, 1, 8, 8)
    t0 = time.perf_counter()
    ember.onnx.export(
        model,
        (x,),
        args.out,
        input_names=["image"],
        output_names=["logits"],
        dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}},
    )
    print(f"wrote {args.out} in {time.perf_counter() - t0:.2f} s")

    sess = ort.InferenceSession(str(args.out), providers=["CPUExecutionProvider"])
    model.eval()
    ok = True
    for batch in (1, 4, 32):
        xb = ea.randn(batch, 1, 8, 8)
        (got,) = sess.run(None, {"image": xb.numpy()})
        with autograd.no_grad():
            ref = model(xb).numpy()
        ok &= bool(np.allclose(got, ref, rtol=1e-5, atol=1e-6))
        print(f"batch {batch:3d}: max |ember - ONNX Runtime| = {np.max(np.abs(got - ref)):.2e}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
