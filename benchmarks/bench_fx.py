"""ember.fx: eager vs compiled (replay, fused) vs PyTorch eager (and torch.compile when it works)
and jax.jit (CPU JAX, when installed: tiny, MLP Adam, bandwidth).

    python benchmarks/bench_fx.py [--no-torch] [--no-jax] [--only tiny,mlp,...]

Workloads (the targets of issue 19):
- tiny: 100 ops on 3-element tensors + backward (benchmarks/workloads/autograd.py's chain);
  target: compiled <= 50 us.
- mlp_adam: MLP 784-512-512-10, Adam step, batch 128; target: compiled <= 0.75x PyTorch eager.
- bandwidth: transposed 2048^2 add, and a 5-op pointwise chain on 16M floats, as GB/s
  against this machine's memory bandwidth measured by a plain copy (ember `copy_`) of four
  times the last-level cache, so that it reads and writes memory, not the cache; target:
  >= 0.9x of the copy. A 16 MiB copy is printed beside it: on a CPU with a 32 MiB L3 it
  runs from the cache.
- lenet / char_transformer: training steps; target: compiled faster than PyTorch eager.
- capture + first compile of each, and the fused kernels' cache hit in a second process.

Medians of batches (benchmarks/harness.py), ratios from one process; `uptime` printed first.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import ember.aten as ea
import ember.fx as fx
import ember.nn as nn
import ember.nn.functional as F
import ember.optim as optim
from harness import time_callable as _harness_time


class Timing(float):
    """Median seconds per call (a float, as harness.time_callable returns), and `.best`: the
    fastest batch. On a loaded machine the median measures the scheduler; the best batch is
    the figure that compares code."""

    best: float


def time_callable(fn: Any) -> Timing:
    batches: list[float] = []

    def timed() -> Any:
        t0 = time.perf_counter()
        out = fn()
        batches.append(time.perf_counter() - t0)
        return out

    median = _harness_time(timed)
    t = Timing(median)
    t.best = min(batches) if batches else median
    return t


def _torch(enabled: bool) -> Any:
    if not enabled:
        return None
    try:
        import torch

        torch.set_num_threads(os.cpu_count() or 1)
        return torch
    except ImportError:
        return None


def _jax(enabled: bool) -> Any:
    """A CPU JAX for jax.jit side-by-side rows (benchmarks only; never a dependency)."""
    if not enabled:
        return None
    try:
        import jax

        jax.config.update("jax_platforms", "cpu")
        return jax
    except ImportError:
        return None


def _jax_time(jax: Any, fn: Any, *args: Any) -> float:
    """Median seconds of a jitted call, waiting for its result (JAX dispatches asynchronously)."""
    jf = jax.jit(fn)
    jax.block_until_ready(jf(*args))
    return time_callable(lambda: jax.block_until_ready(jf(*args)))


JAX: Any = None  # set by main()


def _us(s: float) -> str:
    return f"{s * 1e6:9.1f} us" if s < 1e-3 else f"{s * 1e3:9.2f} ms"


def _compiled(fn: Any, backend: str, *args: Any) -> tuple[Any, float]:
    """The compiled function after its warm-up and capture calls, and the capture+compile seconds."""
    cf = fx.compile(fn, backend=backend)
    cf(*args)  # warm-up (eager)
    t0 = time.perf_counter()
    cf(*args)  # capture + compile
    return cf, time.perf_counter() - t0


def _torch_compiled(torch: Any, fn: Any, *args: Any) -> Any:
    try:
        cf = torch.compile(fn)
        cf(*args)
        cf(*args)
        return cf
    except Exception as e:
        print(f"    (torch.compile unavailable: {type(e).__name__}: {str(e).splitlines()[0][:80]})")
        return None


def report(name: str, times: dict[str, float], extra: str = "") -> None:
    base = times.get("torch")
    print(f"  {name}  (median; best call)")
    for k, t in times.items():
        best = getattr(t, "best", t)
        ratio = f"  {t / base:5.2f}x torch" if base else ""
        bratio = f"  {best / getattr(base, 'best', base):5.2f}x torch" if base else ""
        print(f"    {k:16s} {_us(t)}{ratio};  best {_us(best)}{bratio}")
    if extra:
        print(f"    {extra}")


# ---------------------------------------------------------------------------


def tiny(torch: Any) -> None:
    def chain(x: Any, w: Any) -> Any:
        y = x
        for _ in range(20):
            y = y * w
            y = y + 1.0
            y = y.exp()
            y = -y
            y = y / 3.0
        return y

    x = ea.tensor([0.1, 0.2, 0.3], requires_grad=True)
    w = ea.tensor([0.5, 0.25, 0.125], requires_grad=True)

    def step(x: Any, w: Any) -> Any:
        x.grad = None
        w.grad = None
        chain(x, w).sum().backward()

    times = {"ember eager": time_callable(lambda: step(x, w))}
    compile_s = {}
    for backend in ("replay", "fused"):
        cf, compile_s[backend] = _compiled(step, backend, x, w)
        times[f"ember {backend}"] = time_callable(lambda cf=cf: cf(x, w))
    if torch is not None:
        tx = torch.tensor([0.1, 0.2, 0.3], requires_grad=True)
        tw = torch.tensor([0.5, 0.25, 0.125], requires_grad=True)
        times["torch"] = time_callable(lambda: step(tx, tw))
        tc = _torch_compiled(torch, step, tx, tw)
        if tc is not None:
            times["torch.compile"] = time_callable(lambda: tc(tx, tw))
    if JAX is not None:
        jnp = JAX.numpy

        def jchain(x: Any, w: Any) -> Any:
            y = x
            for _ in range(20):
                y = -jnp.exp(y * w + 1.0) / 3.0
            return y.sum()

        jgrad = JAX.grad(jchain, argnums=(0, 1))
        jx, jw = jnp.array([0.1, 0.2, 0.3]), jnp.array([0.5, 0.25, 0.125])
        times["jax.jit"] = _jax_time(JAX, jgrad, jx, jw)
    extra = ", ".join(f"capture+compile {b} {v * 1e3:.0f} ms" for b, v in compile_s.items())
    report("100 tiny ops + backward (target: compiled <= 50 us)", times, extra)


def mlp_adam(torch: Any) -> None:
    ea.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
    opt = optim.Adam(model.parameters(), lr=1e-3, fused=True)
    x, y = ea.randn(128, 784), ea.randint(0, 10, (128,))

    def step(x: Any, y: Any) -> Any:
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.detach()

    times = {"ember eager": time_callable(lambda: step(x, y))}
    compile_s = {}
    for backend in ("replay", "fused"):
        cf, compile_s[backend] = _compiled(step, backend, x, y)
        times[f"ember {backend}"] = time_callable(lambda cf=cf: cf(x, y))
    if torch is not None:
        tm = torch.nn.Sequential(
            torch.nn.Linear(784, 512),
            torch.nn.ReLU(),
            torch.nn.Linear(512, 512),
            torch.nn.ReLU(),
            torch.nn.Linear(512, 10),
        )
        topt = torch.optim.Adam(tm.parameters(), lr=1e-3)
        tx, ty = torch.randn(128, 784), torch.randint(0, 10, (128,))

        def tstep(x: Any, y: Any) -> Any:
            topt.zero_grad()
            loss = torch.nn.functional.cross_entropy(tm(x), y)
            loss.backward()
            topt.step()
            return loss.detach()

        times["torch"] = time_callable(lambda: tstep(tx, ty))
    if JAX is not None:
        times["jax.jit"] = _jax_mlp_adam(JAX)
    extra = ", ".join(f"capture+compile {b} {v * 1e3:.0f} ms" for b, v in compile_s.items())
    report("MLP 784-512-512-10 Adam step b128 (target: compiled <= 0.75x torch)", times, extra)


def _jax_mlp_adam(jax: Any) -> float:
    """The same step in JAX: forward, cross entropy, grad, Adam (written out: optax is not needed)."""
    jnp = jax.numpy
    keys = jax.random.split(jax.random.PRNGKey(0), 4)
    sizes = [(784, 512), (512, 512), (512, 10)]
    params = [(jax.random.normal(k, s) * 0.03, jnp.zeros(s[1])) for k, s in zip(keys, sizes, strict=False)]
    state = (jax.tree_util.tree_map(jnp.zeros_like, params), jax.tree_util.tree_map(jnp.zeros_like, params), 0)
    x, y = jax.random.normal(keys[3], (128, 784)), jnp.arange(128) % 10

    def loss_fn(params: Any, x: Any, y: Any) -> Any:
        h = x
        for i, (w, b) in enumerate(params):
            h = h @ w + b
            if i < len(params) - 1:
                h = jax.nn.relu(h)
        logp = jax.nn.log_softmax(h)
        return -jnp.take_along_axis(logp, y[:, None], axis=1).mean()

    def step(params: Any, state: Any, x: Any, y: Any) -> Any:
        m, v, t = state
        loss, g = jax.value_and_grad(loss_fn)(params, x, y)
        t = t + 1
        m = jax.tree_util.tree_map(lambda m, g: 0.9 * m + 0.1 * g, m, g)
        v = jax.tree_util.tree_map(lambda v, g: 0.999 * v + 0.001 * g * g, v, g)
        c1, c2 = 1 - 0.9**t, 1 - 0.999**t
        params = jax.tree_util.tree_map(lambda p, m, v: p - 1e-3 * (m / c1) / (jnp.sqrt(v / c2) + 1e-8), params, m, v)
        return params, (m, v, t), loss

    jstep = jax.jit(step, donate_argnums=(0, 1))
    box = [params, state]

    def run() -> None:
        box[0], box[1], loss = jstep(box[0], box[1], x, y)
        jax.block_until_ready(loss)

    run()
    return time_callable(run)


def _last_level_cache_bytes() -> int:
    """The largest CPU cache of cpu0 from sysfs (Linux); 32 MiB where sysfs does not say."""
    sizes = []
    for f in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*/size"):
        text = f.read_text().strip().upper()
        scale = {"K": 1 << 10, "M": 1 << 20}.get(text[-1:], 1)
        sizes.append(int(text.rstrip("KM")) * scale)
    return max(sizes, default=32 << 20)


def _copy_gbs(nbytes: int) -> tuple[float, float]:
    """GB/s of ember `copy_` between two float32 buffers of `nbytes` each (bytes read +
    written): median and best call."""
    src, dst = ea.randn(nbytes // 4), ea.empty(nbytes // 4)
    t = time_callable(lambda: dst.copy_(src))
    return 2 * nbytes / t / 1e9, 2 * nbytes / t.best / 1e9


def bandwidth(torch: Any) -> None:
    n = 2048
    a, b = ea.randn(n, n), ea.randn(n, n)
    llc = _last_level_cache_bytes()
    copy_gbs, copy_best = _copy_gbs(4 * llc)
    cached_gbs, cached_best = _copy_gbs(16 << 20)

    def tadd(a: Any, b: Any) -> Any:
        return a.t() + b

    def chain5(x: Any) -> Any:
        return ((x * 1.5 + 0.5).abs() - 0.25).relu() * 2.0

    x16 = ea.randn(16 * 1024 * 1024)
    print(
        f"  memory bandwidth of a plain copy (ember copy_, {4 * llc >> 20} MiB = 4x the {llc >> 20} MiB "
        f"last-level cache): {copy_gbs:.1f} GB/s (best call {copy_best:.1f} GB/s); a 16 MiB copy: "
        f"{cached_gbs:.1f} GB/s (best {cached_best:.1f})"
    )
    for label, fn, args, nbytes in (
        ("transposed 2048^2 add", tadd, (a, b), 3 * 4 * n * n),
        ("5-op pointwise chain, 16M floats", chain5, (x16,), 2 * 4 * x16.numel()),
    ):
        times = {"ember eager": time_callable(lambda fn=fn, args=args: fn(*args))}
        cf, _ = _compiled(fn, "fused", *args)
        times["ember fused"] = time_callable(lambda cf=cf, args=args: cf(*args))
        if torch is not None:
            targs = tuple(torch.from_numpy(t.numpy()) for t in args)
            times["torch"] = time_callable(lambda fn=fn, targs=targs: fn(*targs))
            tc = _torch_compiled(torch, fn, *targs)
            if tc is not None:
                times["torch.compile"] = time_callable(lambda tc=tc, targs=targs: tc(*targs))
        if JAX is not None:
            jargs = tuple(JAX.numpy.asarray(t.numpy()) for t in args)
            jnp = JAX.numpy
            jfn = (
                (lambda a, b: a.T + b)
                if fn is tadd
                else (lambda x, jnp=jnp: jnp.maximum(jnp.abs(x * 1.5 + 0.5) - 0.25, 0) * 2.0)
            )
            times["jax.jit"] = _jax_time(JAX, jfn, *jargs)
        gbs = {k: (nbytes / t / 1e9, nbytes / getattr(t, "best", t) / 1e9) for k, t in times.items()}
        extra = "GB/s (median; best call): " + ", ".join(
            f"{k} {v:.1f} ({v / copy_gbs:.2f}x copy); {b:.1f} ({b / copy_best:.2f}x)" for k, (v, b) in gbs.items()
        )
        report(f"{label} (target: fused >= 0.9x copy bandwidth)", times, extra)


def _model_step(torch: Any, name: str) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "fx"))
    import test_models as tm  # the models of the correctness tests

    make_model, make_batch, make_opt = tm.MODELS[name]
    ea.manual_seed(0)
    model = make_model()
    opt = make_opt(model.parameters())
    x, y = make_batch(ea.Generator().manual_seed(1))

    def step(x: Any, y: Any) -> Any:
        opt.zero_grad()
        loss = tm._cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.detach()

    times = {"ember eager": time_callable(lambda: step(x, y))}
    compile_s = {}
    for backend in ("replay", "fused"):
        cf, compile_s[backend] = _compiled(step, backend, x, y)
        times[f"ember {backend}"] = time_callable(lambda cf=cf: cf(x, y))
    if torch is not None and name == "lenet":
        tmod = torch.nn.Sequential(
            torch.nn.Conv2d(1, 6, 5, padding=2), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
            torch.nn.Conv2d(6, 16, 5), torch.nn.ReLU(), torch.nn.MaxPool2d(2), torch.nn.Flatten(),
            torch.nn.Linear(400, 120), torch.nn.ReLU(), torch.nn.Linear(120, 84), torch.nn.ReLU(),
            torch.nn.Linear(84, 10),
        )  # fmt: skip
        topt = torch.optim.SGD(tmod.parameters(), lr=0.05, momentum=0.9)
    elif torch is not None:
        layer = torch.nn.TransformerEncoderLayer(32, 4, 128, 0.1, activation="gelu", batch_first=True, norm_first=True)

        class TT(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.tok, self.pos = torch.nn.Embedding(20, 32), torch.nn.Embedding(16, 32)
                self.blocks = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
                self.norm, self.head = torch.nn.LayerNorm(32), torch.nn.Linear(32, 20)
                self.mask = torch.nn.Transformer.generate_square_subsequent_mask(16)

            def forward(self, idx: Any) -> Any:
                h = self.tok(idx) + self.pos(torch.arange(idx.shape[1]))
                return self.head(self.norm(self.blocks(h, mask=self.mask, is_causal=True)))

        tmod = TT()
        topt = torch.optim.AdamW(tmod.parameters(), lr=3e-3)
    if torch is not None:
        tx, ty = torch.from_numpy(x.numpy()), torch.from_numpy(y.numpy())

        def tstep(x: Any, y: Any) -> Any:
            topt.zero_grad()
            out = tmod(x)
            loss = torch.nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
            loss.backward()
            topt.step()
            return loss.detach()

        times["torch"] = time_callable(lambda: tstep(tx, ty))
    extra = ", ".join(f"capture+compile {b} {v * 1e3:.0f} ms" for b, v in compile_s.items())
    report(f"{name} training step (shapes of tests/fx/test_models.py)", times, extra)


def _maker(name: str) -> Any:
    """(fn, args) of one workload's ember step, built as its row above builds it."""
    if name == "tiny":

        def step(x: Any, w: Any) -> Any:
            x.grad = None
            w.grad = None
            y = x
            for _ in range(20):
                y = -(((y * w) + 1.0).exp()) / 3.0
            y.sum().backward()

        return step, (ea.tensor([0.1, 0.2, 0.3], requires_grad=True), ea.tensor([0.5, 0.25, 0.125], requires_grad=True))
    if name == "mlp":
        ea.manual_seed(0)
        model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
        opt = optim.Adam(model.parameters(), lr=1e-3, fused=True)

        def mstep(x: Any, y: Any) -> Any:
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss.detach()

        return mstep, (ea.randn(128, 784), ea.randint(0, 10, (128,)))
    if name == "bandwidth":
        return (lambda x: ((x * 1.5 + 0.5).abs() - 0.25).relu() * 2.0), (ea.randn(16 * 1024 * 1024),)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "fx"))
    import test_models as tm

    make_model, make_batch, make_opt = tm.MODELS[{"lenet": "lenet", "transformer": "char_transformer"}[name]]
    ea.manual_seed(0)
    model = make_model()
    opt = make_opt(model.parameters())

    def tstep(x: Any, y: Any) -> Any:
        opt.zero_grad()
        loss = tm._cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.detach()

    return tstep, make_batch(ea.Generator().manual_seed(1))


def compile_time(name: str) -> None:
    """Child process: capture + compile of one workload (fused), printed in seconds."""
    fn, args = _maker(name)
    fn(*args)  # once eagerly, as each row's eager timing does first: the .grads now exist (guarded)
    cf, seconds = _compiled(fn, "fused", *args)
    if not cf.entries_list():
        raise SystemExit(f"{name}: not captured by its second call")
    print(seconds)


def second_process_cache_hit() -> None:
    """Capture + first compile of each workload in a fresh kernel cache, then the same in a second
    process (the generated C++ is found in the on-disk cache: capture and codegen only)."""
    rows = []
    for name in ("tiny", "mlp", "bandwidth", "lenet", "transformer"):
        with tempfile.TemporaryDirectory() as d:
            env = dict(os.environ, EMBER_FX_CACHE_DIR=d)
            cmd = [sys.executable, __file__, "--compile-time", name]
            got = []
            for _ in range(2):
                done = subprocess.run(cmd, env=env, capture_output=True, text=True)
                got.append(float(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else float("nan"))
        rows.append((name, *got))
    print("  capture + compile (fused), fresh cache -> second process (cache hit):")
    for name, first, second in rows:
        print(f"    {name:12s} {first * 1e3:8.0f} ms -> {second * 1e3:7.0f} ms")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--no-jax", action="store_true")
    ap.add_argument("--only", default="", help="comma-separated: tiny,mlp,bandwidth,lenet,transformer,cache")
    ap.add_argument("--compile-time", default="", help=argparse.SUPPRESS)  # the cache row's child process
    args = ap.parse_args()
    if args.compile_time:
        compile_time(args.compile_time)
        return 0
    torch = _torch(not args.no_torch)
    global JAX
    JAX = _jax(not args.no_jax)
    print("uptime:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    jv = "not installed" if JAX is None else JAX.__version__
    tv = "not installed" if torch is None else torch.__version__
    print(f"ember.fx bench, {os.cpu_count()} cores, torch {tv}, jax {jv}")
    todo = {
        "tiny": lambda: tiny(torch),
        "mlp": lambda: mlp_adam(torch),
        "bandwidth": lambda: bandwidth(torch),
        "lenet": lambda: _model_step(torch, "lenet"),
        "transformer": lambda: _model_step(torch, "char_transformer"),
        "cache": second_process_cache_hit,
    }
    only = [s for s in args.only.split(",") if s] or list(todo)
    for name in only:
        todo[name]()
    print("uptime:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
