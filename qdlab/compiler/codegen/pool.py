"""LLVM IR texts to native objects, several at once: in forked worker processes that stay warm.

llvmlite serialises LLVM calls within a process, so only processes can share LLVM work. The pool is
forked on the first compile with several units and kept for the process's life (a notebook compiles
many kernels); `warm` makes each worker pay LLVM's first-compile costs while the parent is still
emitting IR. Texts are taken from an iterator, so each batch is handed to a worker as soon as its IR
exists: the front end of the later units overlaps LLVM's work on the earlier ones. Small units go in
batches (one round trip for several objects). Imported only when several units must be compiled: a
process whose units all come from the cache, or that compiles one edited construct, never imports
`multiprocessing`.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor

from . import jit

_pool: ProcessPoolExecutor | None = None
_warmed = False


def workers() -> int:
    """How many worker processes compile (`QDLAB_COMPILE_WORKERS`; 0 or 1: compile in this
    process)."""
    return int(os.environ.get("QDLAB_COMPILE_WORKERS", os.cpu_count() or 1))


def _compile_batch(texts: list[str], opt: int) -> list[tuple[bytes, float]]:
    return [jit.compile_text(t, opt) for t in texts]


def _warm_one(opt: int) -> int:
    jit.compile_text(jit.WARM_IR, opt)
    return os.getpid()


WORKER_NICE = 10
"""How much lower than the program's the workers' scheduling priority is."""


def _leave_with_parent(parent: int) -> None:
    """A worker's initializer: the worker exits within a second of its parent's death (a notebook
    kernel killed or restarted never leaves compile workers behind; a killed parent cannot shut its
    pool down, and its workers would wait on their queue for ever)."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, name="qdlab-parent-watch", daemon=True).start()
    os.nice(WORKER_NICE)


def _get_pool() -> ProcessPoolExecutor | None:
    global _pool
    if _pool is None and workers() > 1 and hasattr(os, "fork"):
        _pool = ProcessPoolExecutor(
            workers(),
            mp_context=multiprocessing.get_context("fork"),
            initializer=_leave_with_parent,
            initargs=(os.getpid(),),
        )
        atexit.register(_pool.shutdown, wait=True)  # before interpreter teardown, not during it
    return _pool


def warm(opt: int) -> None:
    """Start the workers (once per process) and let each compile a small module, without waiting:
    called as soon as a compile knows it has several units to build."""
    global _pool, _warmed
    if _warmed:
        return
    try:
        pool = _get_pool()
        if pool is not None:
            for _ in range(workers()):
                pool.submit(_warm_one, opt)
        _warmed = True
    except Exception:  # noqa: BLE001 - a refused pool: compile_many compiles here instead
        _pool = None


def started() -> bool:
    return _pool is not None


def submit(text: str, opt: int) -> Future | None:
    """`jit.compile_text(text, opt)` in a worker, in the background: its future, or None when
    there is no pool or it refuses the job."""
    global _pool
    pool = _get_pool()
    if pool is None:
        return None
    try:
        return pool.submit(jit.compile_text, text, opt)
    except Exception:  # noqa: BLE001 - a broken or refused pool: the caller compiles here
        _pool = None
        return None


def batch_size(count: int) -> int:
    """Units per worker job: about four jobs per worker, so the load stays balanced while small
    units share a round trip."""
    return max(1, count // (4 * max(1, workers())))


def _batches(texts: Iterator[str], size: int) -> Iterator[list[str]]:
    batch: list[str] = []
    for t in texts:
        batch.append(t)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def compile_many(
    texts: Iterable[str], count: int, opt: int, on_done: Callable[[int], None] | None = None
) -> list[tuple[bytes, float]]:
    """`jit.compile_text` for each of `count` texts, in order: in the worker pool when there are
    several and several workers, else in this process. Any trouble with the workers compiles the
    rest here (an error while making a text is the caller's and propagates). `on_done(k)` is told
    as text k's object is ready, in order."""
    global _pool
    done = on_done or (lambda k: None)
    pool = _get_pool() if count >= 4 else None
    kept: list[str] = []
    futures: list[Future] = []
    for batch in _batches(iter(texts), batch_size(count) if pool is not None else 1):
        kept.extend(batch)
        if pool is not None:
            try:
                futures.append(pool.submit(_compile_batch, batch, opt))
            except Exception:  # noqa: BLE001 - a broken or refused pool: compile here instead
                pool = _pool = None
    out: list[tuple[bytes, float]] = []
    for f in futures:
        try:
            objs = f.result()
        except Exception:  # noqa: BLE001 - a worker died: the rest is compiled here
            _pool = None
            break
        for obj in objs:
            out.append(obj)
            done(len(out) - 1)
    for t in kept[len(out) :]:
        out.append(jit.compile_text(t, opt))
        done(len(out) - 1)
    return out
