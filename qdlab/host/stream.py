"""Streams and events (`qd.create_stream()`, `qd.create_event()`, `qd.lang.stream`): Quadrants'
objects for ordering kernels launched with `k(..., qd_stream=s)`.

qdlab runs every launch in program order on every arch (on the CPU each launch returns when it is
done; under CUDA they queue on one device stream), which is what Quadrants' CPU backend does with
streams: they are no-op objects whose `handle` is 0, a kernel given `qd_stream=` runs as without
it, and `record` / `wait` / `synchronize` return at once (after `qd.sync()`, so the host sees
finished work). What is kept of the reference: the owner check (a stream or event made before
`qd.init` / `qd.reset` ended its program raises `RuntimeError` when used), `destroy()` (twice is
fine; `with` destroys at the end; the handle reads 0 after), a `Stream(handle)` wrapping a handle
from elsewhere (never destroyed by qdlab), and the launch checks `check_launch` makes.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

from . import pyquadrants, state

if TYPE_CHECKING:
    from typing_extensions import Self


def _current_prog() -> pyquadrants.Program:
    return pyquadrants.current.prog  # qdlab runs before `qd.init` too, under the defaults


class _Handle:
    """What a stream and an event share: the handle, the owning program, and destruction."""

    _what = "Stream"

    def __init__(self, handle: int, prog_ref: weakref.ref | None = None) -> None:
        self._handle = handle
        self._prog_ref = prog_ref

    @property
    def handle(self) -> int:
        return self._handle

    def _prog(self) -> pyquadrants.Program | None:
        """The owning program; None once `qd.init` / `qd.reset` ended it."""
        if self._prog_ref is not None:
            return self._prog_ref()
        return _current_prog()

    def _require_prog(self) -> pyquadrants.Program:
        prog = self._prog()
        if prog is None:
            raise RuntimeError(
                f"{self._what}'s owning Program has been destroyed (e.g. after qd.reset())"
            )
        return prog

    def destroy(self) -> None:
        """Release it; safe to call more than once. A wrapped external handle stays as it is."""
        if self._prog_ref is not None:
            self._handle = 0

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.destroy()


class Stream(_Handle):
    """A stream kernels launch on (`k(..., qd_stream=s)`); see the module's docstring."""

    def synchronize(self) -> None:
        """Block until everything launched on this stream is done."""
        self._require_prog().synchronize()


class Event(_Handle):
    """A point in a stream's work that another stream, or the host, waits for."""

    _what = "Event"

    def record(self, qd_stream: Stream | None = None) -> None:
        """Record this event on a stream (None: the default stream)."""
        self._require_prog()

    def wait(self, qd_stream: Stream | None = None) -> None:
        """Make a stream (None: the default stream) wait for this event."""
        self._require_prog()

    def synchronize(self) -> None:
        """Block the host until the recorded point is reached."""
        self._require_prog().synchronize()


def create_stream() -> Stream:
    """A new stream, owned by the current program."""
    return Stream(0, weakref.ref(_current_prog()))


def create_event() -> Event:
    """A new event, owned by the current program."""
    return Event(0, weakref.ref(_current_prog()))


def check_launch(stream: object, kernel_name: str, autodiff: bool, graph: bool) -> None:
    """What Quadrants refuses of `k(..., qd_stream=s)`, in its words (a stream of None is no
    stream)."""
    if stream is None:
        return
    if autodiff or state.fwd is not None:
        raise RuntimeError(
            "qd_stream is not compatible with autodiff kernels. Streams cannot be used with "
            "reverse-mode or forward-mode differentiation."
        )
    if state.tape is not None:
        raise RuntimeError(
            "qd_stream is not compatible with autograd Tape. Launch the kernel outside the Tape "
            "context, or omit qd_stream."
        )
    if graph:
        raise RuntimeError(
            "qd_stream is not compatible with graph=True kernels. "
            "See docs/source/user_guide/streams.md for details."
        )
    if not isinstance(stream, Stream):
        raise TypeError(
            f"kernel `{kernel_name}`: qd_stream must be a stream (`qd.create_stream()`), "
            f"not {type(stream).__name__}."
        )
