"""Scaled dot product attention at sequence length 1024 (B=1, H=8, L=S=1024, E=64, float32):
forward, and forward + backward through ember.autograd, against PyTorch's
scaled_dot_product_attention (its CPU flash kernel).

Each row also shows the memory ember's call allocates beyond its inputs at its peak
(c10py's allocator statistics) next to the size of one L x S score matrix per head --
the fused kernel keeps only blocks of scores, so the peak is the output (and, with
backward, the gradients), never the B x H x L x S matrix.
"""

from __future__ import annotations

from typing import Any

import numpy as np

B, H, L, E = 1, 8, 1024, 64


def _torch() -> Any:
    try:
        import torch

        return torch
    except ImportError:
        return None


def _data() -> list[np.ndarray]:
    r = np.random.default_rng(0)
    return [r.standard_normal((B, H, L, E), dtype=np.float32) for _ in range(3)]


def _peak_extra(fn: Any, release: Any = None) -> str:
    """ember's peak allocation during fn beyond what was live before (after `release` drops
    what the previous call left, e.g. .grad), vs the L x S scores."""
    from ember.c10py import memory_stats, reset_peak_memory_stats

    fn()
    if release is not None:
        release()
    reset_peak_memory_stats()
    before = memory_stats()["allocated_bytes"]
    fn()
    extra = memory_stats()["peak_allocated_bytes"] - before
    scores = B * H * L * L * 4
    return f" [ember peak +{extra / 2**20:.1f} MiB; B*H*L*S scores: {scores / 2**20:.0f} MiB]"


def sdpa_forward() -> dict[str, Any]:
    import ember.aten as ea

    q, k, v = (ea.from_numpy(a) for a in _data())
    fns: dict[str, Any] = {"ember": lambda: ea.nn.scaled_dot_product_attention(q, k, v)}
    fns["info"] = _peak_extra(fns["ember"])
    torch = _torch()
    if torch is not None:
        tq, tk, tv = (torch.from_numpy(a) for a in _data())
        fns["torch"] = lambda: torch.nn.functional.scaled_dot_product_attention(tq, tk, tv)
    return fns


def sdpa_forward_backward() -> dict[str, Any]:
    import ember.aten as ea
    import ember.autograd  # noqa: F401  (fails clearly if the layer is missing)

    q, k, v = (ea.from_numpy(a).requires_grad_(True) for a in _data())

    def release() -> None:
        q.grad = k.grad = v.grad = None

    def ember_fn() -> None:
        release()
        ea.nn.scaled_dot_product_attention(q, k, v).sum().backward()

    fns: dict[str, Any] = {"ember": ember_fn, "info": _peak_extra(ember_fn, release)}
    torch = _torch()
    if torch is not None:
        tq, tk, tv = (torch.from_numpy(a).requires_grad_(True) for a in _data())

        def torch_fn() -> None:
            tq.grad = tk.grad = tv.grad = None
            torch.nn.functional.scaled_dot_product_attention(tq, tk, tv).sum().backward()

        fns["torch"] = torch_fn
    return fns


def sdpa_causal_forward() -> dict[str, Any]:
    import ember.aten as ea

    q, k, v = (ea.from_numpy(a) for a in _data())
    fns: dict[str, Any] = {"ember": lambda: ea.nn.scaled_dot_product_attention(q, k, v, is_causal=True)}
    torch = _torch()
    if torch is not None:
        tq, tk, tv = (torch.from_numpy(a) for a in _data())
        fns["torch"] = lambda: torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, is_causal=True)
    return fns


WORKLOADS = [
    ("sdpa 1x8x1024x64 float32 (forward)", "call", sdpa_forward),
    ("sdpa 1x8x1024x64 float32 (forward + backward)", "call", sdpa_forward_backward),
    ("sdpa 1x8x1024x64 float32 causal (forward)", "call", sdpa_causal_forward),
]
