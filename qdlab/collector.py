"""Python's cyclic garbage collector, spaced out while kernels compile.

A compile allocates hundreds of thousands of IR and llvmlite objects that reference each other and
live until it ends. At the default thresholds the collector's full passes, each over the whole heap,
run again and again meanwhile: a Genesis scene's cold `scene.build()` spent 14 s in the collector,
12 s of it in 16 full passes (`gc.callbacks` timing); with the thresholds below, 7 s, 2 s in full
passes. While any compile runs, the young generation's threshold is raised and full passes are put
off (mypy does the same around its build).

The program's own thresholds come back IDLE_S after the last compile in the process ends, not at
once: the first allocation after that runs a young pass over everything the compile left (most of
it the compiled kernel's IR, alive), ~3 ms after an edit of a 50-loop kernel, which would otherwise
be a tenth of that edit's time. So a notebook's edit, or a script's next compile, does not pay for
it; the pass runs when the process has been that long without a compile, and its garbage is
collected then.
"""

from __future__ import annotations

import contextlib
import gc
import os
import threading
from collections.abc import Iterator

THRESHOLDS = (50_000, 20, 100)
"""Young-generation allocations between passes, and passes between older ones, while compiling."""
IDLE_S = 0.5
"""How long after the last compile ends the program's own thresholds come back."""

_lock = threading.Lock()
_depth = 0
_saved: tuple[int, ...] | None = None
"""The program's thresholds while they are raised; None when they are its own."""
_raised: tuple[int, ...] = ()
"""The thresholds set while raised."""
_timer: threading.Timer | None = None


def _raise(thresholds: tuple[int, ...]) -> None:
    global _raised
    gc.set_threshold(*thresholds)
    _raised = gc.get_threshold()


@contextlib.contextmanager
def spaced_out() -> Iterator[None]:
    global _depth, _saved, _timer
    with _lock:
        if _timer is not None:
            _timer.cancel()
            _timer = None
        if _saved is None or gc.get_threshold() != _raised:  # else: still raised, as we left them
            _saved = gc.get_threshold()
            if _saved[0]:  # a program that turned collection off (threshold 0) keeps it off
                _raise(tuple(max(a, b) for a, b in zip(THRESHOLDS, _saved)))
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                _timer = threading.Timer(IDLE_S, restore)
                _timer.daemon = True
                _timer.start()


def restore() -> None:
    """The program's own thresholds, back now unless a compile is running (the timer's job; a test
    or a benchmark may call it)."""
    global _saved, _timer
    with _lock:
        if _depth == 0 and _saved is not None:
            if gc.get_threshold() == _raised:  # else the program has set its own meanwhile
                gc.set_threshold(*_saved)
            _saved, _timer = None, None


def _after_fork_in_child() -> None:
    """The child has no timer thread, and its lock may have been held by another thread."""
    global _lock, _depth, _timer
    _lock, _depth, _timer = threading.Lock(), 0, None
    restore()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
