"""The CPU's task driver (`codegen/driver.py`): a launch calls its tasks in one native call and the
host takes over only where a task needs it. Each launch here runs with the driver and with one
call per task (`driver = None`), and must print, write, return and raise the same: a loop long
enough for the thread pool between serial constructs, `print`s in order, an assertion that stops
the launch in its third construct (the fourth must not run), and under debug an integer overflow
reported before what the next construct prints."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd
from qdlab.compiler import runtime
from qdlab.host import state


@qd.kernel
def chain(a: qd.types.NDArray[qd.f32, 1], n: qd.i32) -> qd.f32:
    for i in range(n):  # long: cut into chunks on the pool
        a[i] = i * 0.5
    print("after the first loop", n)
    s = 0.0
    for i in range(n):  # a reduction: partials folded after the pool ran them
        s += a[i]
    for i in range(3):  # short: runs inside the driver's call
        a[i] += 1.0
    print("last", a[0])
    return s


def both(fn, *args) -> list:
    """`fn(*args)` with the driver, then with one call per task; what each returned."""
    out = [fn(*args)]
    launcher = state.last_launcher
    assert isinstance(launcher, runtime.Launcher) and launcher.driver is not None
    driver, launcher.driver = launcher.driver, None
    try:
        out.append(fn(*args))
    finally:
        launcher.driver = driver
    return out


@pytest.fixture
def cpu():
    qd.init(arch=qd.cpu)
    yield
    qd.init(arch=qd.cpu)


def test_the_driver_runs_what_one_call_per_task_runs(cpu, capfd) -> None:
    a = qd.ndarray(qd.f32, 200_000)
    capfd.readouterr()
    got = both(lambda: (chain(a, 200_000), a.to_numpy().copy()))
    assert got[0][0] == got[1][0] == pytest.approx(np.arange(200_000).sum() * 0.5, rel=1e-5)
    np.testing.assert_array_equal(got[0][1], got[1][1])
    text = "after the first loop 200000\nlast 1.000000\n"
    assert capfd.readouterr().out == text * 2
    assert len(state.last_launcher.flat) >= 4  # type: ignore[union-attr]


@qd.kernel
def stops(a: qd.types.NDArray[qd.i32, 1], k: qd.i32):
    a[0] = 1
    for i in range(4):
        a[1 + i] = 2
    assert k < 3, "k is too large"
    for i in range(4):
        a[5 + i] = 3


def test_an_assertion_stops_the_launch_where_it_failed(capfd) -> None:
    qd.init(arch=qd.cpu, debug=True)
    try:
        for driver in (True, False):
            a = qd.ndarray(qd.i32, 9)
            stops(a, 1)
            launcher = state.last_launcher
            assert isinstance(launcher, runtime.Launcher)
            saved = launcher.driver
            launcher.driver = launcher.driver if driver else None
            a.fill(0)
            with pytest.raises(AssertionError, match="k is too large"):
                stops(a, 5)
            launcher.driver = saved
            assert a.to_numpy().tolist() == [1, 2, 2, 2, 2, 0, 0, 0, 0]
    finally:
        qd.init(arch=qd.cpu)


@qd.kernel
def wraps(x: qd.types.NDArray[qd.i32, 1]):
    for i in range(1):
        x[0] = x[0] * 1000000
    print("next construct")
    for i in range(1):
        x[1] = 7


def test_an_overflow_is_reported_before_the_next_construct_prints(capfd) -> None:
    qd.init(arch=qd.cpu, debug=True)
    try:
        x = qd.ndarray(qd.i32, 2)
        for _ in both(lambda: (x.from_numpy(np.array([5000, 0], np.int32)), wraps(x))):
            pass
        out = capfd.readouterr().out.split("next construct\n")
        assert len(out) == 3 and "Multiplication overflow detected" in out[0]
        assert "Multiplication overflow detected" in out[1] and out[2] == ""
        assert x.to_numpy()[1] == 7
    finally:
        qd.init(arch=qd.cpu)


def test_the_table_follows_an_upgrade_of_the_tasks(cpu) -> None:
    """A unit's quick tasks replaced by its optimised ones (`tiers.py`): the next launch's driver
    calls the new addresses."""
    a = qd.ndarray(qd.f32, 16)
    chain(a, 16)
    launcher = state.last_launcher
    assert isinstance(launcher, runtime.Launcher)
    unit, _ = launcher.flat[0]
    old = list(unit.fns.addresses)  # type: ignore[attr-defined]
    unit.fns.replace(old)  # type: ignore[attr-defined]  # what an upgrade does (same code here)
    seen = runtime.Tasks.generation
    assert launcher.table_gen != seen
    chain(a, 16)
    assert launcher.table_gen == seen
    assert list(launcher.table)[: len(launcher.flat)] == [
        u.fns.addresses[t]  # type: ignore[attr-defined]
        for u, t in launcher.flat
    ]


def test_a_damaged_driver_object_leaves_one_call_per_task(tmp_path, monkeypatch) -> None:
    """A cache entry under the driver's key that is no sound object (a damaged disk or team
    cache): launches call each task themselves, with the same results."""
    from qdlab.compiler.cache import BinaryCache
    from qdlab.compiler.codegen import driver, targets
    from qdlab.core import keys

    cache = BinaryCache(tmp_path / "cache")
    cache.put(keys.runtime_key(driver.TEXT, targets.CPU.parts()), b"\x7fELF" + b"\0" * 60)
    monkeypatch.setattr(targets, "_DRIVER", [])
    assert targets.CPU.driver(cache) is None
