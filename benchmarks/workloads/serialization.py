"""serialization: checkpoint save/load and safetensors, ember vs PyTorch (and NumPy's .npz).

A state dict of 16 float32 tensors of 1M elements (64 MB), in memory (io.BytesIO, so
the figures are the format's cost, not the disk's). load is weights_only=True on both
sides. NumPy's reference is np.savez / np.load of the same arrays.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np

N_TENSORS = 16
NUMEL = 1 << 20


def _arrays() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {f"layer{i}.weight": rng.standard_normal(NUMEL, dtype=np.float32) for i in range(N_TENSORS)}


def _saver(save: Any, obj: Any) -> Any:
    def run() -> None:
        save(obj, io.BytesIO())

    return run


def _loader(load: Any, raw: bytes, **kw: Any) -> Any:
    def run() -> None:
        load(io.BytesIO(raw), **kw)

    return run


def _torch() -> Any:
    try:
        import torch

        return torch
    except ImportError:
        return None


def save_state_dict() -> dict[str, Any]:
    import ember.aten as ea

    arrays = _arrays()
    fns = {
        "ember": _saver(ea.save, {k: ea.from_numpy(v) for k, v in arrays.items()}),
        "numpy": _saver(lambda obj, f: np.savez(f, **obj), arrays),
    }
    torch = _torch()
    if torch is not None:
        fns["torch"] = _saver(torch.save, {k: torch.from_numpy(v) for k, v in arrays.items()})
    return fns


def load_state_dict() -> dict[str, Any]:
    import ember.aten as ea

    arrays = _arrays()
    buf = io.BytesIO()
    ea.save({k: ea.from_numpy(v) for k, v in arrays.items()}, buf)
    npz = io.BytesIO()
    np.savez(npz, **arrays)

    def np_load(f: Any) -> None:
        with np.load(f) as z:
            for k in z.files:
                z[k]

    fns = {"ember": _loader(ea.load, buf.getvalue()), "numpy": _loader(np_load, npz.getvalue())}
    torch = _torch()
    if torch is not None:
        fns["torch"] = _loader(torch.load, buf.getvalue(), weights_only=True)  # ember's file, read by torch
    return fns


def safetensors_roundtrip() -> dict[str, Any]:
    import ember.aten as ea
    from ember.aten import safetensors as st

    arrays = _arrays()
    mine = {k: ea.from_numpy(v) for k, v in arrays.items()}
    fns = {"ember": lambda: st.load(st.save(mine))}
    torch = _torch()
    try:
        from safetensors import torch as sft
    except ImportError:
        sft = None
    if torch is not None and sft is not None:
        theirs = {k: torch.from_numpy(v) for k, v in arrays.items()}
        fns["torch"] = lambda: sft.load(sft.save(theirs))
    return fns


WORKLOADS = [
    (f"save state dict {N_TENSORS} x 1M f32 (64 MB) to BytesIO", "one save", save_state_dict),
    (f"load state dict {N_TENSORS} x 1M f32 (64 MB), weights_only", "one load", load_state_dict),
    (f"safetensors save+load {N_TENSORS} x 1M f32 (bytes)", "one round trip", safetensors_roundtrip),
]
