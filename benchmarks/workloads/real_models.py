"""Real models: one training step (forward, loss, backward, optimizer) of each model in
benchmarks/models.py, ember vs PyTorch in this process, at 1 thread and at the default
thread count.

Both sides build the model from the same code (models.define) and PyTorch loads the
ember model's state_dict, so they train identical weights on identical data. Each
default-threads row also reports the peak-RSS growth of a few training steps for both
frameworks (the process's peak RSS during the steps, VmHWM reset after the model is built,
minus its RSS before them), each measured in a fresh interpreter of its own
(``python real_models.py MODEL BACKEND``): a process's peak never falls, so two
frameworks measured in one process would hide each other.
Sizes: see SPECS; the translation Transformer is the tutorial's architecture at d 256
(the tutorial uses d 512 and batch 128, minutes per step on this class of machine).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import models  # noqa: E402  (benchmarks/models.py)

RSS_STEPS = 3


def _rng() -> np.random.Generator:
    return np.random.default_rng(0)


# Each builder: (lib, M) -> (model, step) where step() runs one training step.
def _resnet18(lib: Any, M: Any) -> tuple[Any, Callable[[], Any]]:
    model = M.ResNet18()
    r = _rng()
    x = lib.tensor(r.standard_normal((8, 3, 64, 64), dtype=np.float32))
    y = lib.tensor(r.integers(0, 1000, 8))
    return model, lambda opt: lib.F.cross_entropy(model(x), y)


def _word_lm(kind: str) -> Callable[[Any, Any], tuple[Any, Any]]:
    def build(lib: Any, M: Any) -> tuple[Any, Any]:
        ntoken = 10000
        model = M.WordLM(kind, ntoken, 200, 200, 2, 0.2)
        r = _rng()
        data = lib.tensor(r.integers(0, ntoken, (35, 20)))
        target = lib.tensor(r.integers(0, ntoken, 35 * 20))

        def loss(opt: Any) -> Any:
            out, _ = model(data, None)
            return lib.F.cross_entropy(out.view(-1, ntoken), target)

        return model, loss

    return build


def _sentence_classifier(lib: Any, M: Any) -> tuple[Any, Any]:
    model = M.SentenceClassifier(20000, 100, 128)
    r = _rng()
    premise = lib.tensor(r.integers(0, 20000, (32, 20)))
    hypothesis = lib.tensor(r.integers(0, 20000, (32, 12)))
    label = lib.tensor(r.integers(0, 3, 32))
    return model, lambda opt: lib.F.cross_entropy(model(premise, hypothesis), label)


def _unet(lib: Any, M: Any) -> tuple[Any, Any]:
    model = M.UNet(3, 1, 32)
    r = _rng()
    x = lib.tensor(r.standard_normal((1, 3, 64, 64), dtype=np.float32))
    y = lib.tensor((r.uniform(size=(1, 1, 64, 64)) > 0.5).astype(np.float32))
    return model, lambda opt: lib.F.binary_cross_entropy_with_logits(model(x), y)


def _gpt(lib: Any, M: Any) -> tuple[Any, Any]:
    vocab, ctx = 65, 64
    model = M.GPT(vocab, ctx, 4, 4, 128)
    r = _rng()
    idx = lib.tensor(r.integers(0, vocab, (8, ctx)))
    targets = lib.tensor(r.integers(0, vocab, 8 * ctx))
    return model, lambda opt: lib.F.cross_entropy(model(idx).view(-1, vocab), targets)


PAD = 1


def _translation(lib: Any, M: Any) -> tuple[Any, Any]:
    vocab, src_len, tgt_len, batch = 5000, 24, 24, 16
    model = M.Seq2SeqTransformer(3, 256, 8, vocab, vocab, 512, 0.1)
    r = _rng()

    def tokens(length: int) -> np.ndarray:
        t = r.integers(4, vocab, (length, batch))
        lengths = r.integers(length // 2, length + 1, batch)
        for b, n in enumerate(lengths):
            t[n:, b] = PAD
        return t

    src_np, tgt_np = tokens(src_len), tokens(tgt_len + 1)
    src, tgt_in = lib.tensor(src_np), lib.tensor(tgt_np[:-1])
    tgt_out = lib.tensor(tgt_np[1:].reshape(-1))
    causal = np.triu(np.full((tgt_len, tgt_len), -np.inf, dtype=np.float32), 1)

    # additive float masks throughout (mixing bool padding masks with float masks is deprecated)
    def pad_mask(t: np.ndarray) -> Any:
        return lib.tensor(np.where(t.T == PAD, -np.inf, 0.0).astype(np.float32))

    masks = (
        lib.tensor(np.zeros((src_len, src_len), dtype=np.float32)),
        lib.tensor(causal),
        pad_mask(src_np),
        pad_mask(tgt_np[:-1]),
    )

    def loss(opt: Any) -> Any:
        logits = model(src, tgt_in, masks)
        return lib.F.cross_entropy(logits.reshape(-1, vocab), tgt_out, ignore_index=PAD)

    return model, loss


# key: (label, builder, optimizer (lib, params) -> opt, clip-grad-norm or None)
SPECS: dict[str, tuple[str, Any, Callable[[Any, Any], Any], float | None]] = {
    "resnet18": (
        "ResNet-18, batch 8 x 3x64x64, SGD",
        _resnet18,
        lambda lib, ps: lib.optim.SGD(ps, lr=0.01, momentum=0.9),
        None,
    ),
    "lstm_lm": (
        "LSTM word LM 2x200, seq 35 x batch 20, SGD + clip",
        _word_lm("LSTM"),
        lambda lib, ps: lib.optim.SGD(ps, lr=20.0),
        0.25,
    ),
    "gru_lm": (
        "GRU word LM 2x200, seq 35 x batch 20, SGD + clip",
        _word_lm("GRU"),
        lambda lib, ps: lib.optim.SGD(ps, lr=20.0),
        0.25,
    ),
    "snli": (
        "LSTM sentence-pair classifier 100->128, batch 32, Adam",
        _sentence_classifier,
        lambda lib, ps: lib.optim.Adam(ps, lr=1e-3),
        None,
    ),
    "unet": ("UNet base 32, 1x3x64x64, Adam", _unet, lambda lib, ps: lib.optim.Adam(ps, lr=1e-3), None),
    "gpt": (
        "GPT 4 layers / 4 heads / d128 / ctx 64, batch 8, AdamW",
        _gpt,
        lambda lib, ps: lib.optim.AdamW(ps, lr=3e-4),
        None,
    ),
    "translation": (
        "translation Transformer 3+3 layers d256, batch 16 x 24 tokens, Adam",
        _translation,
        lambda lib, ps: lib.optim.Adam(ps, lr=1e-4, betas=(0.9, 0.98), eps=1e-9),
        None,
    ),
}


def training_step(key: str, backend: str, ember_model: Any = None) -> tuple[Any, Callable[[], None]]:
    """(model, step) for SPECS[key] in `backend`; torch copies ember_model's weights when given."""
    _, builder, make_opt, clip = SPECS[key]
    lib = models.Lib(backend)
    lib.manual_seed(0)
    model, loss_fn = builder(lib, models.define(lib))
    if ember_model is not None:
        sd = {k: lib.tensor(v.detach().numpy().copy()) for k, v in ember_model.state_dict().items()}
        model.load_state_dict(sd)
    model.train()
    opt = make_opt(lib, model.parameters())
    params = list(model.parameters())

    def step() -> None:
        opt.zero_grad()
        loss = loss_fn(opt)
        loss.backward()
        if clip is not None:
            lib.clip_grad_norm_(params, clip)
        opt.step()

    return model, step


def _peak_rss_mib(key: str, backend: str) -> float | None:
    """The max-RSS growth of RSS_STEPS training steps, in a fresh interpreter."""
    try:
        out = subprocess.run(
            [sys.executable, os.path.abspath(__file__), key, backend],
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        ).stdout
        return float(json.loads(out.strip().splitlines()[-1])["rss_mib"])
    except (subprocess.SubprocessError, ValueError, KeyError, IndexError):
        return None


def _torch_available() -> bool:
    try:
        import torch  # noqa: F401

        return True
    except ImportError:
        return False


def _workload(key: str, threads: int | None) -> Callable[[], dict[str, Any]]:
    def make() -> dict[str, Any]:
        import ember.aten as ea

        n_ember = threads or DEFAULT_THREADS["ember"]
        ember_model, ember_step = training_step(key, "ember")

        def ember_fn() -> None:
            ea.set_num_threads(n_ember)
            ember_step()

        fns: dict[str, Any] = {"ember": ember_fn}
        if _torch_available():
            import torch

            n_torch = threads or DEFAULT_THREADS["torch"]
            _, torch_step = training_step(key, "torch", ember_model)

            def torch_fn() -> None:
                torch.set_num_threads(n_torch)
                torch_step()

            fns["torch"] = torch_fn
        if threads is None:
            rss = {b: _peak_rss_mib(key, b) for b in ("ember", "torch") if b in fns}
            text = ", ".join(f"{b} +{v:.0f} MiB" if v is not None else f"{b} ?" for b, v in rss.items())
            fns["info"] = f" [peak RSS {text}]"
        return fns

    return make


def _default_threads() -> dict[str, int]:
    import ember.aten as ea

    out = {"ember": ea.get_num_threads()}
    if _torch_available():
        import torch

        out["torch"] = torch.get_num_threads()
    return out


DEFAULT_THREADS: dict[str, int] = {}
if __name__ != "__main__":
    DEFAULT_THREADS.update(_default_threads())

WORKLOADS = [
    (
        f"train step: {label} ({'1 thread' if threads == 1 else 'default threads'}) [{key}]",
        "step",
        _workload(key, threads),
    )
    for key, (label, *_rest) in SPECS.items()
    for threads in (1, None)
]


def _status_kib(field: str) -> int | None:
    """A `VmRSS:` / `VmHWM:` line of /proc/self/status, in KiB (None off Linux)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def _measure_rss(key: str, backend: str) -> None:
    # The peak is this process's own high-water mark (VmHWM), reset once the model is built
    # (writing 5 to clear_refs). ru_maxrss cannot serve: Linux carries it over fork and exec,
    # so a child of a large parent (bench.py, with both frameworks loaded) starts at the
    # parent's peak and reports a growth of 0.
    _, step = training_step(key, backend)
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        before, field = _status_kib("VmRSS"), "VmHWM"
    except OSError:
        before, field = None, ""
    if before is None:  # no /proc: ru_maxrss, right only when the parent is small
        before, field = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, ""
    for _ in range(RSS_STEPS):
        step()
    after = _status_kib(field) if field else None
    if after is None:
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"rss_mib": (after - before) / 1024}))  # KiB on Linux


if __name__ == "__main__":
    _measure_rss(sys.argv[1], sys.argv[2])
