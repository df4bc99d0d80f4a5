"""no_grad, enable_grad, set_grad_enabled, inference_mode: context managers, decorators, thread-local."""

from __future__ import annotations

import threading

import ember.autograd as ag
from ember.aten import _dispatch
from helpers import t


def _x():  # type: ignore[no-untyped-def]
    return t([1.0, 2.0], requires_grad=True)


def test_no_grad_context_and_decorator() -> None:
    x = _x()
    with ag.no_grad():
        assert not ag.is_grad_enabled()
        y = x * 2
    assert ag.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None

    @ag.no_grad()
    def f(a):  # type: ignore[no-untyped-def]
        return a * 2

    assert not f(x).requires_grad
    assert (x * 2).requires_grad


def test_no_grad_skips_the_autograd_kernels() -> None:
    with ag.no_grad():
        assert _dispatch.excluded_keys() & _dispatch.AUTOGRAD_FUNCTIONALITY
    assert not _dispatch.excluded_keys() & _dispatch.AUTOGRAD_FUNCTIONALITY


def test_enable_grad_inside_no_grad() -> None:
    x = _x()
    with ag.no_grad():
        with ag.enable_grad():
            y = x * 2
        z = x * 2
    assert y.requires_grad and not z.requires_grad

    @ag.enable_grad()
    def f(a):  # type: ignore[no-untyped-def]
        return a * 2

    with ag.no_grad():
        assert f(x).requires_grad


def test_set_grad_enabled_function_and_context() -> None:
    x = _x()
    with ag.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert ag.is_grad_enabled()
    ag.set_grad_enabled(False)
    try:
        assert not ag.is_grad_enabled()
        assert not (x * 2).requires_grad
    finally:
        ag.set_grad_enabled(True)
    assert (x * 2).requires_grad

    @ag.set_grad_enabled(False)
    def f(a):  # type: ignore[no-untyped-def]
        return a * 2

    assert ag.is_grad_enabled()
    assert not f(x).requires_grad


def test_inference_mode() -> None:
    x = _x()
    with ag.inference_mode():
        assert ag.is_inference_mode_enabled()
        assert not ag.is_grad_enabled()
        assert not (x * 2).requires_grad
    assert not ag.is_inference_mode_enabled()
    with ag.inference_mode(False):
        assert (x * 2).requires_grad

    @ag.inference_mode()
    def f(a):  # type: ignore[no-untyped-def]
        return a * 2

    assert not f(x).requires_grad

    @ag.inference_mode
    def g(a):  # type: ignore[no-untyped-def]
        return a * 2

    assert not g(x).requires_grad


def test_modes_restore_after_exceptions() -> None:
    try:
        with ag.no_grad():
            raise KeyError("x")
    except KeyError:
        pass
    assert ag.is_grad_enabled()


def test_generator_functions_are_decorated_per_step() -> None:
    x = _x()

    @ag.no_grad()
    def gen():  # type: ignore[no-untyped-def]
        yield x * 2
        yield x * 3

    outs = list(gen())
    assert [o.requires_grad for o in outs] == [False, False]
    assert ag.is_grad_enabled()


def test_grad_mode_is_thread_local() -> None:
    x = _x()
    results = {}
    inside = threading.Event()
    release = threading.Event()

    def worker() -> None:
        with ag.no_grad():
            inside.set()
            release.wait(5)
            results["worker"] = (x * 2).requires_grad

    th = threading.Thread(target=worker)
    th.start()
    inside.wait(5)
    results["main"] = (x * 2).requires_grad  # the other thread is inside no_grad
    release.set()
    th.join()
    assert results == {"worker": False, "main": True}


def test_no_grad_allows_in_place_on_leaves() -> None:
    x = _x()
    with ag.no_grad():
        x.mul_(2)
    assert x.tolist() == [2.0, 4.0]
    assert x.is_leaf and x.requires_grad


def test_every_mode_is_thread_local() -> None:
    x = _x()
    seen: dict[str, tuple[bool, bool, bool]] = {}
    inside = threading.Event()
    release = threading.Event()

    def worker(name: str, make) -> None:  # type: ignore[no-untyped-def]
        with make():  # made on the worker: set_grad_enabled(False) takes effect when called
            inside.set()
            release.wait(5)
            seen[name] = (ag.is_grad_enabled(), ag.is_inference_mode_enabled(), (x * 2).requires_grad)

    for name, make in [
        ("inference_mode", ag.inference_mode),
        ("set_grad_enabled", lambda: ag.set_grad_enabled(False)),
    ]:
        inside.clear()
        release.clear()
        th = threading.Thread(target=worker, args=(name, make))
        th.start()
        assert inside.wait(5)
        # the other thread is inside the mode; this one is not
        assert ag.is_grad_enabled() and not ag.is_inference_mode_enabled() and (x * 2).requires_grad
        assert _dispatch.tls.exclude_not == _dispatch.ALL_BITS
        release.set()
        th.join()
    assert seen == {"inference_mode": (False, True, False), "set_grad_enabled": (False, False, False)}

    # and a thread starts in the default mode whatever its parent is in
    started: list[bool] = []
    with ag.no_grad():
        th = threading.Thread(target=lambda: started.append(ag.is_grad_enabled() and (x * 2).requires_grad))
        th.start()
        th.join()
    assert started == [True]
