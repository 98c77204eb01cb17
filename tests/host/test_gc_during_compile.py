"""While a kernel compiles, Python's collector runs its passes further apart (`qdlab/collector.py`),
and the program's own thresholds are back `collector.IDLE_S` after the last compile ends, however
it ends."""

from __future__ import annotations

import gc
import threading
import time

import numpy as np
import pytest

import qdlab as qd
from qdlab.compiler.cache import stmt_memo
from qdlab.host import collector

SEEN: list[tuple[int, ...]] = []


def during() -> int:
    SEEN.append(gc.get_threshold())  # evaluated by qd.static while the kernel compiles
    return 1


@pytest.fixture(autouse=True)
def _init():
    qd.init(arch=qd.cpu, offline_cache=False)
    stmt_memo.clear()  # each test's compile evaluates `during()` again
    saved = gc.get_threshold()
    SEEN.clear()
    yield
    collector.restore()
    gc.set_threshold(*saved)


def back(expected: tuple[int, ...]) -> bool:
    """Whether the thresholds come back to `expected` by themselves, soon after IDLE_S."""
    end = time.monotonic() + collector.IDLE_S + 5
    while gc.get_threshold() != expected and time.monotonic() < end:
        time.sleep(0.01)
    return gc.get_threshold() == expected


def make():
    @qd.kernel
    def k(a: qd.types.NDArray[qd.f32, 1]):
        for i in range(a.shape[0]):
            a[i] = qd.static(during()) * 2.0

    return k


def test_thresholds_are_raised_while_compiling_and_restored_after() -> None:
    gc.set_threshold(700, 10, 10)
    a = np.zeros(4, np.float32)
    make()(a)
    assert a.tolist() == [2.0] * 4
    assert SEEN == [collector.THRESHOLDS]
    assert back((700, 10, 10))


def test_they_stay_raised_between_compiles_close_together() -> None:
    """The young pass over what a compile left runs once the process is idle, not at the end of
    each compile (a notebook's edit does not pay for it)."""
    gc.set_threshold(700, 10, 10)
    first = time.monotonic()
    make()(np.zeros(4, np.float32))
    if time.monotonic() - first < collector.IDLE_S / 2:  # a loaded machine: nothing to see
        assert gc.get_threshold()[0] == collector.THRESHOLDS[0]
    make()(np.zeros(4, np.float32))
    assert SEEN == [collector.THRESHOLDS] * 2
    assert back((700, 10, 10))


def test_thresholds_the_program_sets_meanwhile_are_its_own() -> None:
    gc.set_threshold(700, 10, 10)
    make()(np.zeros(4, np.float32))
    gc.set_threshold(800, 10, 10)  # within IDLE_S of that compile's end, most likely
    make()(np.zeros(4, np.float32))
    assert SEEN == [collector.THRESHOLDS] * 2
    assert back((800, 10, 10))
    gc.set_threshold(900, 10, 10)
    collector.restore()
    assert gc.get_threshold() == (900, 10, 10)


def test_a_failed_compile_restores_them() -> None:
    gc.set_threshold(700, 10, 10)

    @qd.kernel
    def bad(a: qd.types.NDArray[qd.f32, 1]):
        for i in range(a.shape[0]):
            a[i] = qd.static(during()) + undefined_name  # noqa: F821

    with pytest.raises(NameError):
        bad(np.zeros(4, np.float32))
    assert SEEN and back((700, 10, 10))


def test_a_program_that_turned_collection_off_keeps_it_off() -> None:
    gc.set_threshold(0)
    make()(np.zeros(4, np.float32))
    assert SEEN[0][0] == 0 and gc.get_threshold()[0] == 0
    collector.restore()
    assert gc.get_threshold()[0] == 0


def test_compiles_in_threads_restore_the_thresholds_once_all_end() -> None:
    gc.set_threshold(700, 10, 10)
    start = threading.Barrier(4)

    def compile_one() -> None:
        start.wait()
        make()(np.zeros(4, np.float32))

    threads = [threading.Thread(target=compile_one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert SEEN and set(SEEN) == {collector.THRESHOLDS}  # a later thread may replay the memo
    assert back((700, 10, 10))
