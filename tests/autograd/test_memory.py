"""The graph and its saved tensors are freed after backward; a training loop's memory is flat."""

from __future__ import annotations

import gc
import weakref

import ember.autograd as ag
from ember.c10py import memory_stats
from helpers import rand


def _no_gc(fn):  # type: ignore[no-untyped-def]
    """Runs fn with the cycle collector off: anything it frees is freed by reference counting."""
    gc.collect()
    gc.disable()
    try:
        return fn()
    finally:
        gc.enable()


def test_graph_is_freed_by_reference_counting() -> None:
    def run():  # type: ignore[no-untyped-def]
        x = rand(4, requires_grad=True)
        h = x * 2
        h.register_hook(lambda g: g)
        h.retain_grad()
        y = h.exp()
        z = (y * h).sum()
        refs = [weakref.ref(z.grad_fn), weakref.ref(y.grad_fn), weakref.ref(h.grad_fn), weakref.ref(y), weakref.ref(h)]
        z.backward()
        del z, y, h
        return x, refs

    x, refs = _no_gc(run)
    assert all(r() is None for r in refs)
    assert x.grad is not None


def test_saved_tensors_are_released_by_backward() -> None:
    def run():  # type: ignore[no-untyped-def]
        x = rand(8, requires_grad=True)
        big = rand(8, seed=2) * 1  # saved by the mul below, not referenced elsewhere afterwards
        ref = weakref.ref(big)
        y = (x * big).sum()
        del big
        alive_before = ref() is not None
        y.backward()
        return alive_before, ref, y

    alive_before, ref, y = _no_gc(run)
    assert alive_before
    assert ref() is None  # released although y (and its graph) is still alive
    assert y.grad_fn is not None


def test_custom_function_and_accumulate_grad_do_not_cycle() -> None:
    from ember.autograd import Function

    class Sq(Function):
        @staticmethod
        def forward(ctx, a):  # type: ignore[no-untyped-def]
            out = a * a
            ctx.save_for_backward(a, out)
            return out

        @staticmethod
        def backward(ctx, g):  # type: ignore[no-untyped-def]
            a, _ = ctx.saved_tensors
            return 2 * g * a

    def run():  # type: ignore[no-untyped-def]
        x = rand(3, requires_grad=True)
        y = Sq.apply(x)
        acc_ref = weakref.ref(y.grad_fn.next_functions[0][0])
        node_ref = weakref.ref(y.grad_fn)
        y.sum().backward()
        del y
        return x, node_ref, acc_ref

    x, node_ref, acc_ref = _no_gc(run)
    assert node_ref() is None and acc_ref() is None
    assert weakref.ref(x)() is x


def test_training_loop_memory_is_flat() -> None:
    w = rand(64, 64, requires_grad=True)
    b = rand(64, requires_grad=True, seed=1)
    data = rand(32, 64, seed=2)

    def step() -> None:
        h = (data * w.sum(0) + b).tanh()
        loss = (h * h).mean()
        loss.backward()
        with ag.no_grad():
            w.sub_(w.grad * 0.01)
            b.sub_(b.grad * 0.01)
        w.grad = None
        b.grad = None

    for _ in range(5):
        step()
    gc.collect()
    objects_before = len(gc.get_objects())
    mem_before = memory_stats()["allocated_bytes"]
    for _ in range(50):
        step()
    gc.collect()
    objects_after = len(gc.get_objects())
    mem_after = memory_stats()["allocated_bytes"]
    assert objects_after - objects_before < 50
    assert mem_before > 0
    assert mem_after <= mem_before
