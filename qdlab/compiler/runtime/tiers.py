"""Tiered compiles: a unit runs from a quick object at once, and from its optimised one as soon as
that is ready.

LLVM's full pipeline takes ~25-35 ms on a one-loop construct on this project's 2-core machine; its
quick tier (no IR passes, LLVM's fast instruction selection and register allocation) ~2-3 ms. Both
compute the same bits by construction: no fast-math flags, one target machine setup, math library
calls LLVM may not rewrite or fold, and the rewrites of `**` made in qdlab's IR before either tier
(`codegen/arith.py`, `passes/lower_powers.py`); only a NaN's sign may differ. `tests/programs/
test_random_programs.py` and `tests/compiler/runtime/test_tier_bits.py` run programs on both tiers.
So each unit a CPU compile must build is loaded from its quick object, and its LLVM IR is optimised
at the full level in the background: in the compile pool when it runs or this compile starts it,
else in one thread of this process, handed the texts once the compile has loaded everything
(llvmlite runs one LLVM call at a time). Each `Upgrade` then replaces its unit's task functions in
place (`runtime.Tasks`): in the thread that finished the job, or at once, waiting, when a launch is
about to run one of the unit's loops in parallel (the quick code would cost more than the wait).
Only optimised objects reach the cache; the ones still on their way at exit are waited for and
stored. A fork waits for the LLVM call in hand (`_before_fork`). `QDLAB_TIERED=0` builds every unit
at the full level before it runs.
"""

from __future__ import annotations

import atexit
import logging
import os
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("qdlab")

QUICK = 0
"""The quick tier's optimisation level (`codegen/jit.py`: no passes, fast code generation)."""
pending: list[Upgrade] = []
"""The upgrades not installed yet, oldest first."""
WAIT_S = 120
"""The longest a launch waits for an optimised object (a pool job takes well under a second)."""
hold = False
"""Tests: install nothing, so launches run the quick objects (the tiers compared bit for bit)."""
_lock = threading.RLock()
_exit_hook = False
_thread: ThreadPoolExecutor | None = None
_working = threading.Lock()
"""Held by the optimising thread while it runs a job, and by a fork."""


def enabled() -> bool:
    return os.environ.get("QDLAB_TIERED", "1") != "0"


def in_thread(fn: Callable[[], object]) -> Future:
    """`fn()` in this process's optimising thread (one: LLVM runs one call at a time)."""
    global _thread
    with _lock:
        if _thread is None:
            _thread = ThreadPoolExecutor(1, thread_name_prefix="qdlab-optimise")
        return _thread.submit(_job, fn)


def _job(fn: Callable[[], object]) -> object:
    with _working:  # a fork waits for the job in hand (`_before_fork`)
        return fn()


def _llvm_lock() -> Any:
    """llvmlite's own lock (one LLVM call at a time), if llvmlite is loaded."""
    ffi = sys.modules.get("llvmlite.binding.ffi")
    return getattr(getattr(getattr(ffi, "lib", None), "_lock", None), "_lock", None)


def _before_fork() -> None:
    """No LLVM call is under way in another thread when the process forks (the compile pool's
    workers, or the program's own): a child would inherit llvmlite's lock held by a thread it
    does not have, and block on its first LLVM call (measured: the pool's workers hung). Taken in
    the order the threads take them: a job, an install, one LLVM call."""
    _working.acquire()
    _lock.acquire()
    llvm = _llvm_lock()
    if llvm is not None:
        llvm.acquire()


def _after_fork_in_parent() -> None:
    llvm = _llvm_lock()
    if llvm is not None:
        llvm.release()
    _lock.release()
    _working.release()


def _after_fork_in_child() -> None:
    """The child has neither the optimising thread nor the pool's result thread: its quick units
    keep their quick code."""
    global _thread
    _after_fork_in_parent()
    _thread = None
    for up in pending:
        up.done, up.tasks.pending = True, None
    pending.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(
        before=_before_fork,
        after_in_parent=_after_fork_in_parent,
        after_in_child=_after_fork_in_child,
    )


@dataclass(eq=False)
class Upgrade:
    """A unit loaded from its quick object, and the future of its optimised one."""

    name: str
    key: str | None
    """Its cache key; None when nothing is cached (a `fresh` compile)."""
    symbols: list[str]
    text: str
    opt: int
    future: Future | None
    """Of (object, seconds) from the worker pool; None until `watch` asks this process's
    optimising thread."""
    target: Any
    cache: Any
    tasks: Any = None
    """The unit's `runtime.Tasks` (set by `watch`)."""
    done: bool = False

    def optimised(self, now: bool = False) -> bytes | None:
        """The optimised object, waited for at most WAIT_S (None after that: the quick code
        stays, rather than a launch that never returns); `now`: made here if its job has not
        started yet (a launch that waits for it would wait for every job queued before it). The
        job stays queued: a cancelled future makes CPython 3.11's pool fail when a worker dies,
        and the worker's copy, when it comes, finds the upgrade done."""
        try:
            if self.future is not None:
                if now and not (self.future.running() or self.future.done()):
                    return self.build_here()[0]
                return self.future.result(timeout=WAIT_S)[0]
        except TimeoutError:
            log.warning(
                "[TIERS] %s: no optimised object after %d s; its unoptimised code stays",
                self.name,
                WAIT_S,
            )
            return None
        except Exception:  # noqa: BLE001 - a worker died: optimise here instead
            log.debug("[TIERS] %s: the pool failed; optimising in this process", self.name)
        return self.build_here()[0]

    def build_here(self) -> tuple[bytes, float]:
        """The optimised object made in this process, and the seconds it took."""
        return self.target.build([self.text], 1, self.opt)[0]

    def settle_quietly(self) -> None:
        """`settle`, from the pool's result thread: a failure there is logged, and the quick
        code keeps running."""
        try:
            self.settle()
        except Exception:  # noqa: BLE001 - no exception may escape into the pool's thread
            log.warning("[TIERS] %s: the optimised object was not installed", self.name)

    def settle(self, now: bool = False) -> None:
        """Install the optimised object (waiting for it; `now`, see `optimised`): the unit's
        tasks switch to it in place, and the cache gets it."""
        if self.done or hold:
            return
        obj = self.optimised(now)  # waited for without the lock: the pool's result thread takes it
        with _lock:
            if self.done:
                return
            if obj is not None:
                self.target.load([(self.name, obj, self.symbols)])
                if self.cache is not None and self.key is not None:
                    self.cache.put(self.key, obj)
            self.done, self.tasks.pending = True, None
            pending.remove(self)


def watch(up: Upgrade, tasks: Any) -> None:
    """Track `up`, whose unit's tasks (`runtime.Tasks`) now run its quick object: it is settled
    in the pool's result thread as soon as its object is ready."""
    global _exit_hook
    with _lock:
        up.tasks = tasks
        tasks.pending = up
        pending.append(up)
        if not _exit_hook:
            atexit.register(flush)  # registered after the pool's own hook: runs before it
            _exit_hook = True
    if up.future is None:  # no pool: this process's thread, now that the compile has loaded all
        up.future = in_thread(up.build_here)
    up.future.add_done_callback(lambda _: up.settle_quietly())


def settle_all() -> None:
    """Install every pending upgrade, waiting for each (a benchmark before it times launches)."""
    for up in tuple(pending):  # settling removes it
        up.settle()


def flush() -> None:
    """At exit: store the optimised objects still on their way (nothing is loaded any more). By
    now the pool and the thread have finished their jobs: exit waited for them."""
    for up in tuple(pending):
        if up.cache is None or up.key is None or up.future is None:
            continue
        try:
            up.cache.put(up.key, up.future.result()[0])
        except Exception:  # noqa: BLE001 - a failed job or a closed cache: compiled next time
            log.debug("[TIERS] %s: not stored at exit", up.name)
    pending.clear()
