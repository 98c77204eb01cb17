"""Tiered compiles (`compiler/tiers.py`): a unit runs from its quick object at once and from its
optimised one once that is ready; the two give the same bits, only the optimised object is cached,
a loop long enough to run in parallel waits for it, and a dead worker leaves the quick code running
until the object is made in this process."""

from __future__ import annotations

import ctypes
import itertools
import time

import numpy as np
import pytest
from memo_kernels import load

import qdlab as qd
from qdlab.compiler.cache import BinaryCache
from qdlab.compiler.codegen import pool
from qdlab.compiler.runtime import tiers

_k = itertools.count(1)
LOOPS = """
    import qdlab as qd

    @qd.kernel
    def k(x: qd.types.NDArray[qd.f32, 1], a: qd.types.NDArray[qd.f32, 2]):
        for i in range(x.shape[0]):
            a[0, i] = x[i] * {c} + 1.5 * x[i] * x[i]
        for i in range(x.shape[0]):
            a[1, i] = qd.sin(x[i]) * {c}
        for i in range(x.shape[0]):
            a[2, i] = qd.sqrt(qd.abs(x[i])) / {c}
        for i in range(x.shape[0]):
            a[3, i] = qd.max(x[i], 0.0) - qd.min(x[i] * {c}, 0.25)
"""


C: dict = {}
"""Each kernel's constant."""


def fresh_kernel(folder):
    """The four-loop kernel with a constant no other test used (nothing of it is loaded yet)."""
    c = next(_k) + 0.125
    k = load(folder, LOOPS.format(c=c)).k
    C[k] = c
    return k


def run(kernel, n: int) -> np.ndarray:
    x = np.linspace(-2.0, 2.0, n, dtype=np.float32)
    a = np.zeros((4, n), np.float32)
    kernel(x, a)
    return a


def addresses(kernel) -> list[list[int]]:
    return [
        [ctypes.cast(f, ctypes.c_void_p).value for f in b.unit.fns] for b in kernel.latest.built
    ]


@pytest.fixture
def held():
    tiers.hold = True
    yield
    tiers.hold = False
    tiers.settle_all()


def test_quick_code_first_then_the_optimised_object_same_bits_and_only_it_cached(
    tmp_path, held
) -> None:
    qd.init(arch=qd.cpu, offline_cache=True, offline_cache_file_path=str(tmp_path / "c"))
    k = fresh_kernel(tmp_path)
    quick = run(k, 1000)
    built = k.latest.built
    assert len(built) == 4 and all(b.status == "compiled" for b in built)
    assert all(b.unit.fns.pending is not None for b in built)  # running the quick objects
    disk = BinaryCache(str(tmp_path / "c"))
    assert all(disk.get(b.key) is None for b in built)  # a quick object is never cached
    before = addresses(k)
    tiers.hold = False
    tiers.settle_all()
    assert all(b.unit.fns.pending is None for b in built)
    after = addresses(k)
    assert all(x != y for a, b in zip(before, after) for x, y in zip(a, b))  # swapped in place
    assert all(disk.get(b.key) is not None for b in built)
    np.testing.assert_array_equal(run(k, 1000), quick)  # the same bits from either tier


def test_without_tiering_the_same_bits(tmp_path, monkeypatch) -> None:
    qd.init(arch=qd.cpu, offline_cache=True, offline_cache_file_path=str(tmp_path / "c"))
    k = fresh_kernel(tmp_path)
    tiered = run(k, 777)
    tiers.settle_all()
    objects = [BinaryCache(str(tmp_path / "c")).get(b.key) for b in k.latest.built]
    monkeypatch.setenv("QDLAB_TIERED", "0")
    qd.init(arch=qd.cpu, offline_cache=True, offline_cache_file_path=str(tmp_path / "d"))
    k.options["fresh"] = True  # compiled again, at the full level before it runs
    np.testing.assert_array_equal(run(k, 777), tiered)
    assert all(b.unit.fns.pending is None for b in k.latest.built)
    assert all(obj is not None for obj in objects)  # the tiered compile cached the optimised ones


def busy_workers(seconds: float) -> None:
    """Give every worker a job that sleeps, so the optimised objects queue behind them."""
    pool.warm(3)
    executor = pool._get_pool()
    if executor is None:
        pytest.skip("no worker pool on this platform")
    for _ in range(pool.workers()):
        executor.submit(time.sleep, seconds)


def test_a_loop_long_enough_to_run_in_parallel_waits_for_the_optimised_code(tmp_path) -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    busy_workers(3.0)
    k = fresh_kernel(tmp_path)
    run(k, 100)  # short loops run inline: the quick code, at once
    assert all(b.unit.fns.pending is not None for b in k.latest.built)
    big = run(k, 50_000)  # each loop runs in parallel: it waits for its optimised code first
    assert all(b.unit.fns.pending is None for b in k.latest.built)
    x = np.linspace(-2.0, 2.0, 50_000, dtype=np.float32)
    np.testing.assert_allclose(big[2], np.sqrt(np.abs(x)) / np.float32(C[k]), rtol=1e-6)


def test_a_waiting_loop_takes_its_job_out_of_the_queue_and_optimises_here(tmp_path) -> None:
    """The workers busy with other jobs (a cold build's other kernels): a long loop that waits for
    its optimised code does not wait for them: a job still queued is made here."""
    qd.init(arch=qd.cpu, offline_cache=False)
    busy_workers(6.0)
    executor = pool._get_pool()
    assert executor is not None
    for _ in range(pool.workers() + 1):  # the jobs the pool has already taken off its queue
        executor.submit(time.sleep, 0.01)
    k = fresh_kernel(tmp_path)
    run(k, 100)
    ups = [b.unit.fns.pending for b in k.latest.built]
    if any(u is None or u.future is None for u in ups):
        pytest.skip("no worker pool on this platform")
    big = run(k, 50_000)
    assert all(b.unit.fns.pending is None for b in k.latest.built)
    assert not any(u.future.done() for u in ups)  # the workers still sleep
    x = np.linspace(-2.0, 2.0, 50_000, dtype=np.float32)
    np.testing.assert_allclose(big[3], np.maximum(x, 0) - np.minimum(x * np.float32(C[k]), 0.25))


def test_a_dead_worker_leaves_the_quick_code_running_until_it_is_optimised_here(tmp_path) -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    busy_workers(3.0)
    k = fresh_kernel(tmp_path)
    quick = run(k, 300)
    for process in list(pool._get_pool()._processes.values()):  # the workers die mid-job
        process.kill()
    deadline = time.monotonic() + 30
    while any(b.unit.fns.pending is not None for b in k.latest.built):
        assert time.monotonic() < deadline, "the upgrades were never installed"
        time.sleep(0.05)
    np.testing.assert_array_equal(run(k, 300), quick)
    pool._pool = None  # the broken pool is dropped; the next compile starts a new one


FORK = """
import os, sys, json
import numpy as np
import qdlab as qd
qd.init(arch=qd.cpu, offline_cache=False)

@qd.kernel
def one(x: qd.types.NDArray[qd.f32, 1]):
    for i in range(x.shape[0]):
        x[i] = x[i] * 3.0 + 1.0

@qd.kernel
def two(x: qd.types.NDArray[qd.f32, 1]):
    for i in range(x.shape[0]):
        x[i] = x[i] - 2.0

x = np.ones(16, np.float32)
one(x)  # one construct, no pool: optimised in this process's thread, right now
pid = os.fork()  # waits for the thread's LLVM call in hand
if pid == 0:
    y = np.ones(16, np.float32)
    two(y)  # the child compiles: LLVM's lock must not be held by a thread it lacks
    one(y)
    os._exit(0 if y.tolist() == [-2.0] * 16 else 3)
_, status = os.waitpid(pid, 0)
print(json.dumps({"child": os.waitstatus_to_exitcode(status), "x": x.tolist(),
                  "pool": "qdlab.compiler.codegen.pool" in sys.modules}))
"""


@pytest.mark.process
def test_a_fork_while_the_thread_optimises_leaves_the_child_able_to_compile(tmp_path) -> None:
    import json
    import subprocess
    import sys

    script = tmp_path / "fork.py"
    script.write_text(FORK)
    for _ in range(3):  # the fork lands in the thread's first LLVM calls
        out = subprocess.run(
            [sys.executable, str(script)], capture_output=True, text=True, timeout=60, check=True
        )
        got = json.loads(out.stdout.splitlines()[-1])
        assert got == {"child": 0, "x": [4.0] * 16, "pool": False}


def test_a_timed_perf_dispatch_trial_runs_optimised_code(tmp_path) -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    busy_workers(2.0)
    ks = [fresh_kernel(tmp_path) for _ in range(2)]

    @qd.perf_dispatch(get_geometry_hash=lambda x, a: 0)
    def proto(x: qd.types.NDArray[qd.f32, 1], a: qd.types.NDArray[qd.f32, 2]) -> None: ...

    seen = []

    def register(k) -> None:
        @proto.register
        def impl(x, a):
            seen.append(
                k.latest is not None and all(b.unit.fns.pending is None for b in k.latest.built)
            )
            k(x, a)

    for k in ks:
        register(k)

    x = np.linspace(-2.0, 2.0, 64, dtype=np.float32)
    for _ in range(4):  # one warm-up call each (compiled: quick code), then one timed trial each
        proto(x, np.zeros((4, 64), np.float32))
    assert seen == [False, False, True, True]
