"""CUDA streams and events under PyTorch's names (``torch.cuda.Stream`` / ``Event``).

Each wraps the C++ object of ``ember.c10py.cuda`` (``_stream`` / ``_event``); two
wrappers of one stream compare equal. A Stream is also a context manager making it
current (``with ember.aten.cuda.Stream() as s:``), as is ``stream(s)``.

    >>> s = ember.aten.cuda.Stream()
    >>> start, end = ember.aten.cuda.Event(enable_timing=True), ember.aten.cuda.Event(enable_timing=True)
    >>> with ember.aten.cuda.stream(s):
    ...     start.record(); y = x @ x; end.record()
    >>> end.synchronize(); start.elapsed_time(end)   # milliseconds
"""

from __future__ import annotations

from typing import Any

from ember.c10py import cuda as _c10_cuda

from ._device import _get_device_index, _lazy_init, device


class Stream:
    """A CUDA stream of `device` (default: current) taken from the device's pool;
    lower `priority` is more urgent (clamped to the device's range)."""

    __slots__ = ("_prev", "_stream")

    def __init__(self, device: Any = None, priority: int = 0, *, _stream: Any = None) -> None:
        if _stream is None:
            _lazy_init("ember.aten.cuda.Stream")
            idx = _get_device_index(device, optional=True, what="ember.aten.cuda.Stream")
            _stream = _c10_cuda.Stream(idx, int(priority))
        self._stream = _stream
        self._prev: list[StreamContext] = []

    @classmethod
    def _wrap(cls, s: Any) -> Stream:
        return cls(_stream=s)

    # ---- what PyTorch's Stream offers ----
    def query(self) -> bool:
        """True if all work queued on the stream has finished."""
        return bool(self._stream.query())

    def synchronize(self) -> None:
        """Waits for all work queued on the stream to finish."""
        self._stream.synchronize()

    def wait_event(self, event: Event) -> None:
        """Makes all future work queued on this stream wait for `event`."""
        self._stream.wait_event(_event_of(event))

    def wait_stream(self, stream: Stream) -> None:
        """Makes all future work queued on this stream wait for the work queued so far on `stream`."""
        self._stream.wait_stream(_stream_of(stream))

    def record_event(self, event: Event | None = None) -> Event:
        """Records `event` (a new one if None) on this stream and returns it."""
        if event is None:
            event = Event()
        event.record(self)
        return event

    @property
    def cuda_stream(self) -> int:
        """The cudaStream_t as an int (0: the legacy default stream)."""
        return int(self._stream.handle)

    @property
    def device(self) -> Any:
        return self._stream.device

    @property
    def device_index(self) -> int:
        return int(self._stream.device_index)

    @property
    def priority(self) -> int:
        return int(self._stream.priority)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and self._stream == other._stream

    def __hash__(self) -> int:
        return hash(self._stream)

    def __repr__(self) -> str:
        return f"<ember.aten.cuda.Stream device={self.device} cuda_stream={self.cuda_stream:#x}>"

    # ---- context: this stream (and its device) is current inside ----
    def __enter__(self) -> Stream:
        # As PyTorch's Stream.__enter__: the stream's device becomes current too, and
        # both the device and that device's stream are restored on exit.
        ctx = StreamContext(self)
        ctx.__enter__()
        self._prev.append(ctx)
        return self

    def __exit__(self, *exc: object) -> None:
        self._prev.pop().__exit__(*exc)


class Event:
    """A CUDA event: a marker in a stream, to wait on, query, or time work between two."""

    __slots__ = ("_event", "enable_timing")

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False) -> None:
        if interprocess:
            raise NotImplementedError("ember.aten.cuda.Event: interprocess events are not supported")
        self.enable_timing = bool(enable_timing)
        self._event = _c10_cuda.Event(bool(enable_timing), bool(blocking), False)

    def record(self, stream: Stream | None = None) -> None:
        """Records the event on `stream` (default: the current stream)."""
        if stream is None:
            stream = current_stream()
        self._event.record(_stream_of(stream))

    def wait(self, stream: Stream | None = None) -> None:
        """Makes all future work on `stream` (default: the current stream) wait for this event."""
        if stream is None:
            stream = current_stream()
        self._event.wait(_stream_of(stream))

    def query(self) -> bool:
        """True if the work recorded before the event has finished (True if never recorded)."""
        return bool(self._event.query())

    def synchronize(self) -> None:
        """Waits for the work recorded before the event to finish."""
        self._event.synchronize()

    def elapsed_time(self, end_event: Event) -> float:
        """Milliseconds from this event to `end_event` (both enable_timing, recorded and completed)."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        return float(self._event.elapsed_time(end_event._event))

    @property
    def cuda_event(self) -> int:
        """The cudaEvent_t as an int (0 until first recorded)."""
        return int(self._event.handle)

    @property
    def device(self) -> Any:
        """The device of the stream it was first recorded on (None before)."""
        return self._event.device

    def __repr__(self) -> str:
        return (
            f"<ember.aten.cuda.Event {self.cuda_event:#x}>"
            if self.cuda_event
            else "<ember.aten.cuda.Event uninitialized>"
        )


def _stream_of(s: Any) -> Any:
    if isinstance(s, Stream):
        return s._stream
    if isinstance(s, _c10_cuda.Stream):
        return s
    raise TypeError(f"expected an ember.aten.cuda.Stream, got {type(s).__name__}")


def _event_of(e: Any) -> Any:
    if isinstance(e, Event):
        return e._event
    if isinstance(e, _c10_cuda.Event):
        return e
    raise TypeError(f"expected an ember.aten.cuda.Event, got {type(e).__name__}")


def current_stream(device: Any = None) -> Stream:
    """This thread's current stream on `device` (default: current device); the default stream unless set."""
    _lazy_init("ember.aten.cuda.current_stream")
    idx = _get_device_index(device, optional=True, what="ember.aten.cuda.current_stream")
    return Stream._wrap(_c10_cuda.current_stream(idx))


def default_stream(device: Any = None) -> Stream:
    """The default (legacy, handle 0) stream of `device` (default: current device)."""
    _lazy_init("ember.aten.cuda.default_stream")
    idx = _get_device_index(device, optional=True, what="ember.aten.cuda.default_stream")
    return Stream._wrap(_c10_cuda.default_stream(idx))


def set_stream(stream: Stream | None) -> None:
    """Makes `stream` the current stream of its device, and that device the current one, as
    PyTorch's (None does nothing). Prefer ``stream()``."""
    if stream is None:
        return
    s = _stream_of(stream)
    if _c10_cuda.current_device() != s.device_index:
        _c10_cuda.set_device(s.device_index)
    _c10_cuda.set_current_stream(s)


class StreamContext:
    """Context manager making `stream` current on its device (and that device current) inside;
    None (or no CUDA device at all) does nothing."""

    def __init__(self, stream: Stream | None) -> None:
        self.stream = stream
        self._device: device | None = None
        self._prev: Stream | None = None

    def __enter__(self) -> None:
        s = self.stream
        if s is None or not _c10_cuda.is_available():
            return
        self._device = device(s.device_index)
        self._device.__enter__()
        self._prev = current_stream(s.device_index)
        set_stream(s)

    def __exit__(self, *exc: object) -> None:
        if self._prev is not None:
            set_stream(self._prev)
            self._prev = None
        if self._device is not None:
            self._device.__exit__(*exc)
            self._device = None


def stream(stream: Stream | None) -> StreamContext:
    """``with ember.aten.cuda.stream(s):`` queues the work inside on `s` (None: no change)."""
    return StreamContext(stream)
