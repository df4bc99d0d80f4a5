"""Grad modes: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.

Each is a context manager and a decorator, and each is thread-local, as in PyTorch.
Turning grad mode off does two things on the calling thread:

* it clears a flag, read by ``is_grad_enabled()`` (and by the engine, which runs a
  backward pass with grad mode equal to ``create_graph``);
* it adds the Autograd dispatch keys to aten's thread-local *excluded* set, so
  every operator call skips the Autograd kernels and goes straight to the backend
  kernel: code under ``no_grad`` runs at aten speed and records nothing.

The two always change together (``_set_grad_enabled``); nothing else writes them.
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from ember.aten import extension as ext

F = TypeVar("F", bound=Callable[..., Any])


class _GradState(threading.local):
    enabled = True
    inference = False


_state = _GradState()


def is_grad_enabled() -> bool:
    """True when operations on tensors that require grad are recorded (thread-local)."""
    return _state.enabled


def is_inference_mode_enabled() -> bool:
    return _state.inference


def _set_grad_enabled(mode: bool) -> None:
    _state.enabled = mode
    ext.set_autograd_excluded(not mode)


class _DecoratorContextManager:
    """A context manager that can also decorate a function (each call gets a fresh copy)."""

    def clone(self) -> _DecoratorContextManager:
        return self.__class__()

    def __call__(self, func: F) -> F:
        if inspect.isclass(func):
            raise RuntimeError(f"{type(self).__name__} cannot decorate a class; decorate its methods instead")
        if inspect.isgeneratorfunction(func):

            @functools.wraps(func)
            def gen_wrapper(*args: Any, **kwargs: Any) -> Any:
                gen = func(*args, **kwargs)
                try:
                    with self.clone():
                        response = gen.send(None)
                    while True:
                        try:
                            request = yield response
                        except GeneratorExit:
                            with self.clone():
                                gen.close()
                            raise
                        except BaseException as e:
                            with self.clone():
                                response = gen.throw(e)
                        else:
                            with self.clone():
                                response = gen.send(request)
                except StopIteration as e:
                    return e.value

            return gen_wrapper  # type: ignore[return-value]

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self.clone():
                return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    def __enter__(self) -> None:
        raise NotImplementedError

    def __exit__(self, *exc: object) -> None:
        raise NotImplementedError


class no_grad(_DecoratorContextManager):
    """Disables gradient recording on this thread.

    >>> x = ember.aten.ones(3, requires_grad=True)
    >>> with no_grad():
    ...     y = x * 2
    >>> y.requires_grad
    False
    """

    def __init__(self) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = _state.enabled
        _set_grad_enabled(False)

    def __exit__(self, *exc: object) -> None:
        _set_grad_enabled(self.prev)


class enable_grad(_DecoratorContextManager):
    """Enables gradient recording on this thread (inside ``no_grad``, for example)."""

    def __init__(self) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = _state.enabled
        _set_grad_enabled(True)

    def __exit__(self, *exc: object) -> None:
        _set_grad_enabled(self.prev)


class set_grad_enabled(_DecoratorContextManager):
    """``set_grad_enabled(mode)``: sets grad mode now; as a context manager, restores it on exit.

    >>> with set_grad_enabled(False):
    ...     ...
    """

    def __init__(self, mode: bool) -> None:
        self.prev = _state.enabled
        self.mode = bool(mode)
        _set_grad_enabled(self.mode)

    def __call__(self, func: F) -> F:
        _set_grad_enabled(self.prev)  # used as a decorator: only the calls change the mode
        return super().__call__(func)

    def __enter__(self) -> None:
        _set_grad_enabled(self.mode)

    def __exit__(self, *exc: object) -> None:
        _set_grad_enabled(self.prev)

    def clone(self) -> set_grad_enabled:
        prev = _state.enabled
        c = self.__class__(self.mode)
        _set_grad_enabled(prev)
        c.prev = prev
        return c


class inference_mode(_DecoratorContextManager):
    """``inference_mode(mode=True)``: like ``no_grad`` for recording; ``is_inference_mode_enabled()`` is True inside.

    ember does not mark tensors created here as inference tensors (PyTorch does, to skip
    version counting); everything else behaves as under ``no_grad``.
    """

    def __init__(self, mode: bool = True) -> None:
        self.mode = bool(mode)
        self.prev: tuple[bool, bool, Any] = (True, False, ext.NO_GRAD_VIEW)

    def __new__(cls, mode: Any = True) -> Any:
        if callable(mode) and not isinstance(mode, bool):
            # @inference_mode used without parentheses
            return cls()(mode)
        return super().__new__(cls)

    def clone(self) -> inference_mode:
        return self.__class__(self.mode)

    def __enter__(self) -> None:
        self.prev = (_state.enabled, _state.inference, ext.view_creation_marker())
        if self.mode:
            _state.inference = True
            ext.set_view_creation_marker(ext.INFERENCE_MODE_VIEW)  # views made here refuse in-place ops outside
            _set_grad_enabled(False)
        else:
            _state.inference = False
            ext.set_view_creation_marker(ext.NO_GRAD_VIEW)

    def __exit__(self, *exc: object) -> None:
        _state.inference = self.prev[1]
        ext.set_view_creation_marker(self.prev[2])
        _set_grad_enabled(self.prev[0])
