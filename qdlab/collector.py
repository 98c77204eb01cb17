"""Python's cyclic garbage collector, spaced out while a kernel compiles.

A compile allocates hundreds of thousands of IR and llvmlite objects that reference each other and
live until it ends. At the default thresholds the collector's full passes, each over the whole heap,
run again and again meanwhile: a Genesis scene's cold `scene.build()` spent 14 s in the collector,
12 s of it in 16 full passes (`gc.callbacks` timing); with the thresholds below, 7 s, 2 s in full
passes. While any compile runs, the young generation's threshold is raised and full passes are put
off (mypy does the same around its build); the program's own thresholds come back when the last
compile in the process ends, and its garbage is collected at the next pass after that.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

THRESHOLDS = (50_000, 20, 100)
"""Young-generation allocations between passes, and passes between older ones, while compiling."""

_lock = threading.Lock()
_depth = 0
_saved: tuple[int, ...] = ()


@contextlib.contextmanager
def spaced_out() -> Iterator[None]:
    global _depth, _saved
    with _lock:
        if _depth == 0:
            _saved = gc.get_threshold()
            if _saved[0]:  # a program that turned collection off (threshold 0) keeps it off
                gc.set_threshold(*(max(a, b) for a, b in zip(THRESHOLDS, _saved)))
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                gc.set_threshold(*_saved)
