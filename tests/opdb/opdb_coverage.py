"""PyTorch's operator database against ember: coverage of op_db's 702 OpInfo entries.

Run by ``nox -s opdb`` (PyTorch 2.13 and every ember layer installed); never by the
project's tests, which do not import torch. For each entry of
``torch.testing._internal.common_methods_invocations.op_db``:

* **resolved** -- an ember callable of the same PyTorch spelling exists (``ember.torch``'s
  namespaces, then ``ember.aten``, then a Tensor method);
* **forward** -- every float32 and float64 sample input of PyTorch's, converted to ember,
  gives PyTorch's outputs (values within ``torch.testing.assert_close``'s default
  tolerances of the dtype, same shape and dtype; random ops: shape and dtype only);
* **grad** -- where the entry supports autograd, the float64 samples' vector-Jacobian
  products w.r.t. every input that requires grad match PyTorch's;
* **errors** -- every ``error_inputs`` sample raises an exception of PyTorch's type.

Each entry runs in a forked worker with a wall-clock limit (``--timeout``): a hang or a
crash is that entry's failure, not the run's. The table goes to stdout, every entry's
record to ``--json``; ``--floor`` fails the run when a figure falls below the floor file's
or when an entry that passed all checks there no longer does (``--update-floor`` rewrites it).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import time
import traceback
import types
from typing import Any

SAMPLE_LIMIT = 40  # samples per entry and dtype (some entries generate hundreds)


# ---------------------------------------------------------------- resolving a callable
def _walk(root: Any, dotted: str) -> Any:
    obj = root
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


def _method(name: str) -> Any:
    """ember's Tensor.<name>, called unbound as op_db calls torch.Tensor.<name>: a sample whose
    self is not a Tensor (Tensor.__radd__(2, t)) meets the method, not int.__radd__."""
    import ember.aten as ea

    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(ea.Tensor, name)(self, *args, **kwargs)

    call.__name__ = name
    return call


def _ember_namespaces() -> dict[str, Any]:
    import ember.aten as ea
    import ember.torch as et

    return {"torch": et, "aten": ea}


NAMESPACES = ("nn", "special", "linalg", "fft", "masked", "signal", "sparse")


def _first(candidates: list[tuple[Any, str]]) -> tuple[Any, str] | None:
    import ember.torch as et

    for root, dotted in candidates:
        try:
            found = _walk(root, dotted)
        except (AttributeError, ImportError):
            continue
        if callable(found):
            where = "ember.torch" if root is et else "ember.aten"
            return found, f"{where}.{dotted}"
    return None


def resolve(opinfo: Any) -> tuple[Any, str] | None:
    """The ember callable for an OpInfo entry and how it was found, or None."""
    import ember.aten as ea
    import ember.torch as et
    import torch

    op = opinfo.op
    name = opinfo.name
    kind = type(op).__name__
    candidates: list[tuple[Any, str]] = []
    if kind in ("method_descriptor", "wrapper_descriptor") or name.startswith("__"):
        attr = getattr(op, "__name__", name)
        if hasattr(ea.Tensor, attr):
            return _method(attr), f"Tensor.{attr}"
        return None
    candidates.append((et, name))
    namespace = name.split(".")[0] if "." in name else None
    if namespace in NAMESPACES:
        # torch.masked.sum is not torch.sum: a namespaced entry resolves in its namespace only
        # (or as aten's flat spelling of it, special_erf for special.erf)
        aten = getattr(opinfo, "aten_name", None) or ""
        if namespace != "nn" and aten.startswith(namespace + "_"):
            candidates.append((ea, aten))
        return _first(candidates)
    if name.startswith("_refs.") or kind in ("OpOverloadPacket", "OpOverload"):
        short = name.split(".")[-1]
        candidates.append((ea, short))
    aten = getattr(opinfo, "aten_name", None)
    if aten:
        candidates.append((ea, aten))
    fn_name = getattr(op, "__name__", None)
    if fn_name and fn_name != "<lambda>" and not fn_name.startswith("_"):
        candidates.append((et, fn_name))
    hit = _first(candidates)
    if hit is not None:
        return hit
    # a Tensor method only (torch.Tensor.xxx, not torch.xxx; torch.double is a dtype, not a function)
    if hasattr(torch.Tensor, name) and not callable(getattr(torch, name, None)) and hasattr(ea.Tensor, name):
        return _method(name), f"Tensor.{name}"
    # an entry named for an in-place Tensor method (uniform: torch.Tensor.uniform_ under a fixed seed)
    if _is_suite_function(op) and hasattr(torch.Tensor, name + "_") and hasattr(ea.Tensor, name + "_"):
        return _method(name + "_"), f"Tensor.{name}_"
    return None


def _rebound(fn: Any) -> Any:
    """A test-suite wrapper (a lambda over torch.xxx) with torch/F/np names pointing at
    ember.torch: the wrapper's own argument juggling is kept, the operator becomes ember's."""
    import ember.torch as et
    import ember.torch.nn.functional as ef

    if not isinstance(fn, types.FunctionType):
        return None
    glb = dict(fn.__globals__)
    glb["torch"] = et
    glb["F"] = ef
    return types.FunctionType(fn.__code__, glb, fn.__name__, fn.__defaults__, fn.__closure__)


def _is_suite_function(fn: Any) -> bool:
    return isinstance(fn, types.FunctionType) and (fn.__module__ or "").startswith("torch.testing")


# ---------------------------------------------------------------- conversion
class Converter:
    def __init__(self) -> None:
        import ember.aten as ea
        import torch

        self.ea = ea
        self.torch = torch
        self.leaves: list[tuple[Any, Any]] = []  # (torch leaf, ember leaf) requiring grad
        self.shared: dict[int, Any] = {}  # storage address -> ember copy of that storage (see share)

    def share(self, obj: Any) -> None:
        """Tensors of one sample that share a storage (an error input's out= aliasing its input)
        or that are not the whole of their storage (an expanded out=, a view) become views of one
        ember copy of that storage, with PyTorch's sizes, strides and offsets, so that an
        overlap check can see them; other tensors are copied alone."""
        torch = self.torch
        seen: dict[int, list[Any]] = {}
        for t in _flatten_all(obj):
            if isinstance(t, torch.Tensor) and t.layout == torch.strided and not t.requires_grad and t.numel():
                seen.setdefault(t.untyped_storage().data_ptr(), []).append(t)
        for ptr, ts in seen.items():
            whole = ts[0].is_contiguous() and ts[0].storage_offset() == 0
            whole = whole and ts[0].untyped_storage().nbytes() == ts[0].numel() * ts[0].element_size()
            if (len(ts) > 1 or not whole) and len({t.dtype for t in ts}) == 1 and not ts[0].is_complex():
                n = ts[0].untyped_storage().nbytes() // ts[0].element_size()
                flat = ts[0].detach().as_strided((n,), (1,), 0)
                self.shared[ptr] = self.ea.from_numpy(flat.numpy().copy())

    def cotangent(self, v: Any) -> Any:
        """A torch cotangent as an ember tensor of its dtype (bfloat16 through float32: NumPy has none)."""
        if v.dtype == self.torch.bfloat16:
            return self.ea.from_numpy(v.float().numpy().copy()).to(self.ea.bfloat16)
        return self.ea.from_numpy(v.numpy().copy())

    def dtype(self, dt: Any) -> Any:
        return getattr(self.ea, str(dt).split(".")[-1])

    def function(self, fn: Any) -> Any:
        import ember.torch as et

        if isinstance(fn, self.torch.nn.Module):  # a stateless module (nn.PairwiseDistance()): ember's, same options
            cls = getattr(et.nn, type(fn).__name__, None)
            if cls is None:
                return fn
            twin = cls()
            for k, v in vars(fn).items():
                if not k.startswith("_") and isinstance(v, (bool, int, float, str, type(None))):
                    setattr(twin, k, v)
            return twin
        module = fn.__module__.replace("torch._C._nn", "torch.nn.functional").split(".")[1:]
        for path in (".".join([*module, fn.__name__]), f"nn.functional.{fn.__name__}", fn.__name__):
            try:
                return _walk(et, path)
            except AttributeError:
                continue
        return fn

    def __call__(self, obj: Any) -> Any:
        torch = self.torch
        if isinstance(obj, torch.Tensor):
            if obj.layout != torch.strided or obj.is_complex() or obj.dtype in (torch.bfloat16, torch.float16):
                raise NotImplementedError(f"unsupported sample tensor ({obj.dtype}, {obj.layout})")
            base = self.shared.get(obj.untyped_storage().data_ptr()) if obj.numel() else None
            if base is not None and not obj.requires_grad:
                return base.as_strided(tuple(obj.shape), tuple(obj.stride()), obj.storage_offset())
            arr = obj.detach().cpu().resolve_conj().resolve_neg().numpy().copy()
            t = self.ea.from_numpy(arr)
            if obj.requires_grad:
                t.requires_grad_(True)
                self.leaves.append((obj, t))
            return t
        if isinstance(obj, torch.dtype):
            return self.dtype(obj)
        if isinstance(obj, torch.device):
            return str(obj)
        if isinstance(obj, torch.Size):
            return tuple(obj)
        if isinstance(obj, torch.memory_format):
            return getattr(self.ea, str(obj).split(".")[-1])
        if isinstance(obj, torch.layout):
            return getattr(self.ea, str(obj).split(".")[-1], obj)
        if callable(obj) and (getattr(obj, "__module__", None) or "").startswith("torch"):
            return self.function(obj)  # a torch function passed as an argument (distance_function=...)
        if isinstance(obj, torch.Generator):
            return None
        if isinstance(obj, tuple) and hasattr(obj, "_fields"):
            return tuple(self(x) for x in obj)
        if isinstance(obj, tuple):
            return tuple(self(x) for x in obj)
        if isinstance(obj, list):
            return [self(x) for x in obj]
        if isinstance(obj, dict):
            return {k: self(v) for k, v in obj.items()}
        return obj


def _flatten_all(obj: Any) -> list[Any]:
    """Every leaf of nested tuples, lists and dict values."""
    if isinstance(obj, dict):
        obj = list(obj.values())
    if isinstance(obj, (tuple, list)):
        return [x for o in obj for x in _flatten_all(o)]
    return [obj]


def _tolerances(dtype: Any) -> tuple[float, float]:
    import torch

    return {torch.float32: (1e-5, 1e-5), torch.float64: (1e-7, 1e-7)}.get(dtype, (1e-5, 1e-5))


def _flatten(obj: Any) -> list[Any]:
    if isinstance(obj, (tuple, list)):
        out: list[Any] = []
        for x in obj:
            out += _flatten(x)
        return out
    return [obj]


def compare(expected: Any, actual: Any, metadata_only: bool = False) -> str | None:
    """None when ember's result matches PyTorch's, else a one-line reason."""
    import ember.aten as ea
    import numpy as np
    import torch

    exp, act = _flatten(expected), _flatten(actual)
    if len(exp) != len(act):
        return f"{len(act)} outputs, PyTorch has {len(exp)}"
    for i, (e, a) in enumerate(zip(exp, act, strict=True)):
        if isinstance(e, torch.Tensor):
            if not isinstance(a, ea.Tensor):
                return f"output {i}: {type(a).__name__}, PyTorch gives a Tensor"
            if tuple(a.shape) != tuple(e.shape):
                return f"output {i}: shape {tuple(a.shape)} != {tuple(e.shape)}"
            if str(a.dtype).split(".")[-1] != str(e.dtype).split(".")[-1]:
                return f"output {i}: dtype {a.dtype} != {e.dtype}"
            if metadata_only or e.is_complex():
                continue
            if e.dtype == torch.bfloat16:  # NumPy has no bfloat16: both compared as float32
                e, a = e.float(), a.float()
            en = e.detach().cpu().numpy(force=True)
            an = np.asarray(a.detach().cpu().numpy())
            rtol, atol = _tolerances(e.dtype)
            if en.dtype.kind in "fc":
                ok = np.allclose(an, en, rtol=rtol, atol=atol, equal_nan=True)
            else:
                ok = np.array_equal(an, en)
            if not ok:
                diff = np.abs(an.astype(np.float64) - en.astype(np.float64)) if en.size else np.zeros(0)
                worst = float(np.nanmax(diff)) if diff.size and not np.all(np.isnan(diff)) else float("nan")
                return f"output {i}: values differ (max abs err {worst:.3g})"
        elif isinstance(e, (torch.dtype, torch.device)):
            if str(a).split(".")[-1] != str(e).split(".")[-1]:
                return f"output {i}: {a!r} != {e!r}"
        elif isinstance(e, (bool, int, float)):
            if isinstance(a, ea.Tensor):
                a = a.item()
            if not isinstance(a, (bool, int, float)):
                return f"output {i}: {type(a).__name__}, PyTorch gives {type(e).__name__}"
            if isinstance(e, float) and not (metadata_only or np.isclose(a, e, rtol=1e-6, atol=1e-6, equal_nan=True)):
                return f"output {i}: {a} != {e}"
            if not isinstance(e, float) and a != e and not metadata_only:
                return f"output {i}: {a} != {e}"
        elif e is None and a is not None:
            return f"output {i}: {type(a).__name__}, PyTorch gives None"
    return None


# ---------------------------------------------------------------- one entry
def _ember_callable(opinfo: Any) -> tuple[Any, Any, str] | None:
    hit = resolve(opinfo)
    if hit is None:
        return None
    fn, where = hit
    call = _rebound(opinfo.op) if _is_suite_function(opinfo.op) else fn
    return fn, call, where


def _short(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".replace("\n", " ")
    return text[:240]


def _seeded(opinfo: Any) -> bool:
    """op_db wraps random ops in wrapper_set_seed (a fixed seed before each call): PyTorch's
    results are reproducible, but ember's generator is another one."""
    code = getattr(opinfo.op, "__code__", None)
    return code is not None and "wrapper_set_seed" in code.co_names


def _is_random(opinfo: Any, sample: Any) -> bool:
    import torch

    if _seeded(opinfo):
        return True
    outs = []
    for seed in (1, 2, 3, 4):
        torch.manual_seed(seed)
        try:
            outs.append(_flatten(opinfo.op(sample.input, *sample.args, **sample.kwargs)))
        except Exception:
            return False
    try:
        for a, b in (pair for other in outs[1:] for pair in zip(outs[0], other, strict=False)):
            if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape:
                if not torch.equal(a.detach(), b.detach()) and not (a.isnan().any() or b.isnan().any()):
                    return True
    except Exception:  # a layout torch.equal does not take (sparse): not probed
        return False
    return False


def _grad_outputs(outs: list[Any]) -> list[Any]:
    import torch

    return [t for t in outs if isinstance(t, torch.Tensor) and t.requires_grad and t.is_floating_point()]


def check_entry(index: int) -> dict[str, Any]:
    import ember.aten as ea
    import ember.autograd as eag
    import torch
    from torch.testing._internal.common_methods_invocations import op_db

    opinfo = op_db[index]
    rec: dict[str, Any] = {"name": opinfo.name, "variant": opinfo.variant_test_name, "resolved": False}
    found = _ember_callable(opinfo)
    if found is None:
        return rec
    _, call, where = found
    rec.update(resolved=True, ember=where)
    fwd = {"ok": 0, "fail": 0, "first": None}
    grad = {"ok": 0, "fail": 0, "first": None}
    err = {"ok": 0, "fail": 0, "first": None}
    supported = opinfo.supported_dtypes("cpu")
    random, probed = False, 0  # an op whose output follows the seed: probed on 3 samples
    for dtype in (torch.float32, torch.float64):
        if dtype not in supported:
            continue
        want_grad = (
            bool(opinfo.supports_autograd)
            and dtype == torch.float64
            and dtype in opinfo.supported_backward_dtypes("cpu")
        )
        torch.manual_seed(0)
        try:
            samples = list(opinfo.sample_inputs("cpu", dtype, requires_grad=want_grad))[:SAMPLE_LIMIT]
        except Exception as exc:  # PyTorch's own generator failing is not ember's
            rec.setdefault("notes", []).append(f"sample_inputs {dtype}: {_short(exc)}")
            continue
        for sample in samples:
            if not random and probed < 3:
                random, probed = _is_random(opinfo, sample), probed + 1
            torch.manual_seed(0)
            try:
                expected = opinfo.op(sample.input, *sample.args, **sample.kwargs)
            except Exception:
                continue  # PyTorch refuses its own sample (rare): nothing to compare
            conv = Converter()
            try:
                e_in = conv(sample.input)
                e_args = conv(sample.args)
                e_kwargs = conv(sample.kwargs)
                actual = call(e_in, *e_args, **e_kwargs)
                reason = compare(expected, actual, metadata_only=random)
            except Exception as exc:
                reason = _short(exc)
                actual = None
            if reason is None:
                fwd["ok"] += 1
            else:
                fwd["fail"] += 1
                fwd["first"] = fwd["first"] or f"{dtype}: {reason}"
                continue
            if not want_grad or random:
                continue
            # vector-Jacobian products w.r.t. every input leaf that requires grad
            t_leaves = [t for t, _ in conv.leaves]
            if not t_leaves:
                continue
            t_outs = _grad_outputs(_flatten(sample.output_process_fn_grad(expected)))
            if not t_outs:
                continue
            try:
                proc = sample.output_process_fn_grad
                proc = _rebound(proc) if _is_suite_function(proc) else proc
                e_all = _flatten(proc(actual))
                t_all = _flatten(sample.output_process_fn_grad(expected))
                pairs = [(t, e) for t, e in zip(t_all, e_all, strict=False) if any(t is o for o in t_outs)]
                gen = torch.Generator().manual_seed(1)
                vs = [torch.randn(t.shape, dtype=t.dtype, generator=gen) for t, _ in pairs]
                t_grads = torch.autograd.grad([t for t, _ in pairs], t_leaves, vs, allow_unused=True)
                # an ember output that does not require grad is constant: its VJP is zero
                live = [
                    (e, v) for (_, e), v in zip(pairs, vs, strict=True) if isinstance(e, ea.Tensor) and e.requires_grad
                ]
                e_leaves = [e for _, e in conv.leaves]
                if live:
                    e_grads = eag.grad(
                        [e for e, _ in live],
                        e_leaves,
                        [conv.cotangent(v) for _, v in live],
                        allow_unused=True,
                    )
                else:
                    e_grads = [None] * len(e_leaves)
                t_grads = [g if g is not None else torch.zeros_like(t) for g, t in zip(t_grads, t_leaves, strict=True)]
                e_grads = [
                    g if g is not None else ea.zeros_like(e) for g, (_, e) in zip(e_grads, conv.leaves, strict=True)
                ]
                reason = compare(t_grads, e_grads)
            except Exception as exc:
                reason = _short(exc)
            if reason is None:
                grad["ok"] += 1
            else:
                grad["fail"] += 1
                grad["first"] = grad["first"] or reason
    try:
        errors = list(opinfo.error_inputs("cpu"))
    except Exception:
        errors = []
    for ei in errors:
        si = ei.sample_input
        try:
            conv = Converter()
            conv.share((si.input, si.args, si.kwargs))
            e_in, e_args, e_kwargs = conv(si.input), conv(si.args), conv(si.kwargs)
        except Exception:
            continue
        try:
            call(e_in, *e_args, **e_kwargs)
        except Exception as exc:
            if isinstance(exc, ei.error_type):
                err["ok"] += 1
            else:
                err["fail"] += 1
                err["first"] = err["first"] or f"raised {_short(exc)}; PyTorch: {ei.error_type.__name__}"
            continue
        err["fail"] += 1
        err["first"] = err["first"] or f"accepted; PyTorch raises {ei.error_type.__name__}({ei.error_regex!r})"
    rec.update(forward=fwd, grad=grad, errors=err)
    return rec


# ---------------------------------------------------------------- workers with a limit
def _worker(conn: Any) -> None:
    while True:
        index = conn.recv()
        if index is None:
            return
        try:
            rec = check_entry(index)
        except BaseException as exc:
            from torch.testing._internal.common_methods_invocations import op_db

            rec = {"name": op_db[index].name, "variant": op_db[index].variant_test_name, "resolved": True}
            rec.update(crash=_short(exc), trace=traceback.format_exc()[-800:])
        conn.send(rec)


class Worker:
    def __init__(self, ctx: Any) -> None:
        self.parent, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker, args=(child,), daemon=True)
        self.proc.start()
        self.index: int | None = None
        self.started = 0.0

    def submit(self, index: int) -> None:
        self.index, self.started = index, time.monotonic()
        self.parent.send(index)

    def kill(self) -> None:
        self.proc.kill()
        self.proc.join()


def run_all(indices: list[int], jobs: int, timeout: float) -> list[dict[str, Any]]:
    from torch.testing._internal.common_methods_invocations import op_db

    ctx = mp.get_context("fork")
    workers = [Worker(ctx) for _ in range(jobs)]
    pending = list(indices)
    results: dict[int, dict[str, Any]] = {}
    busy: list[Worker] = []
    while pending or busy:
        for w in workers:
            if w not in busy and pending:
                w.submit(pending.pop(0))
                busy.append(w)
        time.sleep(0.02)
        for w in list(busy):
            index = w.index
            assert index is not None
            name = op_db[index].name + (f".{op_db[index].variant_test_name}" if op_db[index].variant_test_name else "")
            rec = None
            if w.parent.poll():
                try:
                    rec = w.parent.recv()
                except EOFError:
                    rec = None
            if rec is None and (not w.proc.is_alive() or time.monotonic() - w.started > timeout):
                why = "timeout" if w.proc.is_alive() else f"worker died (exit {w.proc.exitcode})"
                w.kill()
                rec = {
                    "name": op_db[index].name,
                    "variant": op_db[index].variant_test_name,
                    "resolved": True,
                    "crash": why,
                }
                workers[workers.index(w)] = Worker(ctx)
            if rec is not None:
                rec["index"] = index
                rec["seconds"] = round(time.monotonic() - w.started, 2)
                results[index] = rec
                busy.remove(w)
                print(f"[{len(results):3d}/{len(indices)}] {name}: {verdict(rec)}", flush=True)
    for w in workers:
        if w.proc.is_alive():
            w.parent.send(None)
            w.proc.join(5)
    return [results[i] for i in indices]


# ---------------------------------------------------------------- figures
def _part_ok(rec: dict[str, Any], part: str) -> bool:
    p = rec.get(part)
    return p is not None and p["fail"] == 0


def verdict(rec: dict[str, Any]) -> str:
    if "crash" in rec:
        return f"FAIL ({rec['crash'][:100]})"
    if not rec.get("resolved"):
        return "unresolved"
    if all_ok(rec):
        return "ok"
    bits = [f"{p}: {rec[p]['first']}" for p in ("forward", "grad", "errors") if rec.get(p) and rec[p]["fail"]]
    return "FAIL " + "; ".join(b[:160] for b in bits)


def all_ok(rec: dict[str, Any]) -> bool:
    return (
        "crash" not in rec
        and bool(rec.get("resolved"))
        and all(_part_ok(rec, p) for p in ("forward", "grad", "errors"))
    )


def figures(records: list[dict[str, Any]]) -> dict[str, int]:
    ok = [r for r in records if "crash" not in r and r.get("resolved")]
    return {
        "entries": len(records),
        "resolved": sum(1 for r in records if r.get("resolved")),
        "forward_ok": sum(1 for r in ok if _part_ok(r, "forward")),
        "grad_ok": sum(1 for r in ok if _part_ok(r, "grad")),
        "errors_ok": sum(1 for r in ok if _part_ok(r, "errors")),
        "all_checks": sum(1 for r in records if all_ok(r)),
    }


def key(rec: dict[str, Any]) -> str:
    return rec["name"] + (f".{rec['variant']}" if rec.get("variant") else "")


def table(fig: dict[str, int]) -> str:
    n = fig["entries"]
    rows = [("resolved", fig["resolved"]), ("forward ok", fig["forward_ok"]), ("grad ok", fig["grad_ok"])]
    rows += [("errors ok", fig["errors_ok"]), ("all checks", fig["all_checks"])]
    width = max(len(r[0]) for r in rows)
    lines = [f"{'check':<{width}}  {'entries':>7}  {'of ' + str(n):>7}"]
    lines += [f"{label:<{width}}  {value:>7}  {100.0 * value / max(n, 1):6.1f}%" for label, value in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", default="opdb-out/opdb.json", help="where every entry's record goes")
    parser.add_argument("--floor", default=None, help="floor file: fail when a figure falls below it")
    parser.add_argument("--update-floor", action="store_true", help="rewrite the floor file with this run's figures")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds one entry may take")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes")
    parser.add_argument(
        "-k", dest="filter", default=None, help="only entries whose name contains one of these (comma-separated)"
    )
    args = parser.parse_args(argv)

    import torch

    torch.set_num_threads(1)
    import ember.aten
    import ember.autograd
    import ember.torch
    import ember.torch.nn.functional  # noqa: F401
    from torch.testing._internal.common_methods_invocations import op_db

    wanted = None if args.filter is None else args.filter.split(",")
    indices = [i for i, o in enumerate(op_db) if wanted is None or any(w in o.name for w in wanted)]
    started = time.monotonic()
    records = run_all(indices, max(1, args.jobs), args.timeout)
    fig = figures(records)
    print()
    print(table(fig))
    print(f"({len(records)} entries in {time.monotonic() - started:.0f} s; load {os.getloadavg()[0]:.2f})")
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as fh:
            json.dump({"torch": torch.__version__, "figures": fig, "entries": records}, fh, indent=1)
    passing = sorted(key(r) for r in records if all_ok(r))
    if args.floor and args.update_floor and args.filter is None:
        with open(args.floor, "w") as fh:
            json.dump({"torch": torch.__version__, "figures": fig, "all_checks_entries": passing}, fh, indent=1)
            fh.write("\n")
        print(f"floor written to {args.floor}")
        return 0
    if args.floor and args.filter is None:
        with open(args.floor) as fh:
            floor = json.load(fh)
        failed = [f"{k}: {fig[k]} < floor {v}" for k, v in floor["figures"].items() if fig.get(k, 0) < v]
        lost = sorted(set(floor.get("all_checks_entries", [])) - set(passing))
        if lost:
            failed.append(f"entries that passed all checks at the floor and no longer do: {', '.join(lost)}")
        if failed:
            print("coverage fell below the floor:\n  " + "\n  ".join(failed), file=sys.stderr)
            return 1
        print(f"at or above the floor ({args.floor})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
