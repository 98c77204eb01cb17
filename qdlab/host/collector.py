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
collected then. One watcher thread, started with the first compile, waits for that moment: a
timer thread per compile cost ~1 ms of each edit, the time `Thread.start` waits for a new thread to
run on a busy machine.
"""

from __future__ import annotations

import contextlib
import gc
import os
import threading
import time
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
_due: float | None = None
"""When the program's thresholds come back (`time.monotonic`); None while a compile runs or none is
waited for."""
_wake = threading.Condition(_lock)
_watcher: threading.Thread | None = None


def _raise(thresholds: tuple[int, ...]) -> None:
    global _raised
    gc.set_threshold(*thresholds)
    _raised = gc.get_threshold()


@contextlib.contextmanager
def spaced_out() -> Iterator[None]:
    global _depth, _saved, _due
    with _lock:
        _due = None
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
                _due = time.monotonic() + IDLE_S
                _start_watcher()
                _wake.notify()  # cheap: the watcher runs when this thread next lets it


def _start_watcher() -> None:
    global _watcher
    if _watcher is None:
        _watcher = threading.Thread(target=_watch, name="qdlab-gc-idle", daemon=True)
        _watcher.start()


def _watch() -> None:
    """Restore the thresholds when `_due` comes; a compile that starts meanwhile puts it off."""
    with _lock:
        while True:
            left = None if _due is None else _due - time.monotonic()
            if left is not None and left <= 0:
                _restore()
            else:
                _wake.wait(left)


def restore() -> None:
    """The program's own thresholds, back now unless a compile is running (the watcher's job; a
    test or a benchmark may call it)."""
    with _lock:
        _restore()


def _restore() -> None:
    global _saved, _due
    if _depth == 0 and _saved is not None:
        if gc.get_threshold() == _raised:  # else the program has set its own meanwhile
            gc.set_threshold(*_saved)
        _saved = None
    if _depth == 0:
        _due = None


def _after_fork_in_child() -> None:
    """The child has no watcher thread, and its lock may have been held by another thread."""
    global _lock, _depth, _due, _wake, _watcher
    _lock, _depth, _due, _watcher = threading.Lock(), 0, None, None
    _wake = threading.Condition(_lock)
    restore()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
