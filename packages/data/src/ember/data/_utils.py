"""ExceptionWrapper: an exception caught in a worker process (or the pin-memory thread),
carried to the main process and raised there with its type and the worker's traceback."""

from __future__ import annotations

import pickle
import sys
import traceback
from typing import Any

__all__ = ["ExceptionWrapper"]


class KeyErrorMessage(str):
    """KeyError shows repr() of its argument, which would turn the traceback's newlines
    into literal "\\n"; this string shows itself as is."""

    def __repr__(self) -> str:
        return self


def _picklable(obj: Any) -> bool:
    try:
        pickle.dumps(obj)
        return True
    except Exception:
        return False


class ExceptionWrapper:
    """Holds the type and formatted traceback of the exception being handled."""

    def __init__(self, exc_info: tuple[Any, Any, Any] | None = None, where: str = "in background") -> None:
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type: type[BaseException] = exc_info[0]  # type: ignore[assignment]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def __getstate__(self) -> dict[str, Any]:
        # A type the main process could not unpickle (defined inside a function, say)
        # travels as RuntimeError: the message and traceback are what matter.
        state = dict(self.__dict__)
        if not _picklable(self.exc_type):
            state["exc_type"] = RuntimeError
        return state

    def reraise(self) -> None:
        """Raises the wrapped exception in this process, its message naming where it came from."""
        # No local may hold the exception: a frame of its own traceback referring to it is
        # a reference cycle, which would keep (say) a DataLoader iterator and its workers
        # alive until the garbage collector runs.
        raise _build_exception(self.exc_type, f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}")


def _build_exception(exc_type: type[BaseException], msg: str) -> BaseException:
    if exc_type is KeyError:
        # str(KeyError(m)) is repr(m): keep the traceback's line breaks readable.
        return KeyError(KeyErrorMessage(msg))
    if getattr(exc_type, "message", None):
        return exc_type(message=msg)  # type: ignore[call-arg]
    try:
        return exc_type(msg)
    except Exception:
        # Types whose constructor needs other arguments: the text still gets through.
        return RuntimeError(msg)
