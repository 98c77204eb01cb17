"""The CPU pool runs a parallel task's chunks on whichever thread is free first: a worker that
has not started (here: held by another job) leaves its chunk to the caller, and the chunks, each
run once, are the same whoever runs them."""

from __future__ import annotations

import threading

import pytest

import qdlab as qd
from qdlab.compiler.runtime import Pool, check_pool


def test_a_busy_worker_leaves_its_chunk_to_the_caller() -> None:
    pool = Pool(2)
    assert pool.executor is not None
    hold = threading.Event()
    busy = pool.executor.submit(hold.wait, 30)  # the pool's one worker thread, held
    ran: list[tuple[int, int, str]] = []

    def task(words: int, tmp: int, chunk: int, nchunks: int) -> int:
        ran.append((chunk, nchunks, threading.current_thread().name))
        return 2 if chunk == 1 else 0

    try:
        status = pool.run(task, 0, 0, 100)  # returns without the held worker
        assert status == 2
        assert sorted(c for c, _, _ in ran) == [0, 1] and {n for _, n, _ in ran} == {2}
        assert {name for _, _, name in ran} == {threading.current_thread().name}
    finally:
        hold.set()
        busy.result()
        pool.executor.shutdown()


def test_every_chunk_runs_once() -> None:
    pool = Pool(4)
    seen: list[int] = []
    lock = threading.Lock()

    def task(words: int, tmp: int, chunk: int, nchunks: int) -> int:
        with lock:
            seen.append(chunk)
        return 0

    for _ in range(50):
        seen.clear()
        assert pool.run(task, 0, 0, 100) == 0
        assert sorted(seen) == [0, 1, 2, 3]
    assert pool.executor is not None
    pool.executor.shutdown()


def test_the_self_test_quadrants_exposes_passes_and_catches_a_lost_chunk(monkeypatch) -> None:
    """`qd._lib.core.test_threading()`, Quadrants' spelling of its pool's self-test."""
    assert qd._lib.core.test_threading() is True
    real = Pool.run

    def drops_the_last_chunk(self: Pool, fn, words: int, tmp: int, total: int) -> int:
        return real(self, lambda w, t, c, n: 0 if c == n - 1 else fn(w, t, c, n), words, tmp, total)

    monkeypatch.setattr(Pool, "run", drops_the_last_chunk)
    with pytest.raises(qd.QuadrantsRuntimeError, match="thread pool self-test: launch 0"):
        check_pool(threads=3, jobs=2)
