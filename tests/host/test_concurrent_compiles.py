"""Kernels compiled and launched from several threads at once (Quadrants locks its kernel
materialisation for this): each thread's kernels give their own values, and a kernel that two
threads launch for the first time together is compiled for both."""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import qdlab as qd
from qdlab.host import kernel as kernel_module

N = 64


@pytest.fixture(autouse=True)
def _init() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)


@qd.func
def halve_toward(v, c):
    for _ in range(3):
        v = v * 0.5 + c
    return v


@qd.kernel
def shared(x: qd.types.NDArray[qd.f32, 1], c: qd.f32) -> qd.f32:
    s = 0.0
    for i in x:
        x[i] = halve_toward(x[i], c) + i
        s += x[i]
    return s


def own(c: float):
    @qd.kernel
    def k(x: qd.types.NDArray[qd.f32, 1]):
        for i in x:
            x[i] = halve_toward(x[i], c) + i
        for i in range(3):
            x[i] += c

    return k


def expected(c: float) -> np.ndarray:
    v = np.ones(N, np.float32)
    for _ in range(3):
        v = v * np.float32(0.5) + np.float32(c)
    return v + np.arange(N, dtype=np.float32)


def test_threads_compile_and_launch_kernels_at_once() -> None:
    threads = 4
    start = threading.Barrier(threads)

    def work(t: int) -> list[tuple]:
        wrong = []
        start.wait(timeout=30)
        for r in range(4):
            c = float(t * 10 + r)
            a = qd.ndarray(qd.f32, (N,))
            a.fill(1)
            want = expected(c)
            if r % 2:
                s = shared(a, c)
                if not np.isclose(s, want.sum(), rtol=1e-5):
                    wrong.append(("sum", t, r, s))
            else:
                own(c)(a)
                want[:3] += c
            if not np.array_equal(a.to_numpy(), want):
                wrong.append(("values", t, r, a.to_numpy()[:4], want[:4]))
        return wrong

    with ThreadPoolExecutor(threads) as pool:
        results = [f.result(timeout=120) for f in [pool.submit(work, t) for t in range(threads)]]
    assert results == [[]] * threads


@pytest.mark.process
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_process_forked_while_another_thread_compiles_can_compile() -> None:
    """The compile lock (`kernel.COMPILING`) is new in a forked child: a fork made while another
    thread holds it (compiling) leaves the child able to compile, not waiting for ever."""
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with kernel_module.COMPILING:
            held.set()
            release.wait(timeout=60)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(timeout=30)
    pid = os.fork()
    if pid == 0:  # the child: compile and run a kernel, then leave without pytest's teardown
        code = 1
        try:
            a = qd.ndarray(qd.f32, (N,))
            a.fill(1)
            own(2.0)(a)
            code = 0 if a.to_numpy()[0] == expected(2.0)[0] + 2.0 else 2
        finally:
            os._exit(code)
    release.set()
    holder.join()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            return
        time.sleep(0.2)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    pytest.fail("the forked child never finished compiling: it waited on the parent's lock")
