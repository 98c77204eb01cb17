"""`qd.clock_counter()`: the processor's cycle counter read in a kernel, an i64 that grows as a
serial loop runs (Quadrants reads the time-stamp counter on the CPU)."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd


@pytest.fixture(autouse=True)
def _init() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)


def test_clock_counter_grows_along_a_serial_loop() -> None:
    a = qd.field(qd.i64, shape=8)

    @qd.kernel
    def stamp() -> None:
        qd.loop_config(serialize=True)
        for i in range(8):
            x = 0.0
            for j in range(i * 200):
                x = qd.sin(x + j)
            if x < 10.0:
                a[i] = qd.clock_counter()

    stamp()
    v = a.to_numpy()
    assert v.dtype == np.int64 and (v > 0).all() and (np.diff(v) > 0).all()


def test_clock_counter_is_read_where_written() -> None:
    @qd.kernel
    def elapsed() -> qd.i64:
        t0 = qd.clock_counter()
        t1 = qd.clock_counter()
        return t1 - t0

    assert elapsed() >= 0
