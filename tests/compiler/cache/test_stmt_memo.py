"""The statement memo replays unchanged top-level statements, and never a stale one: a changed
definition, global, `@qd.func` or random draw is lowered again, locations follow a moved kernel, and
the result (and every construct's key) is what lowering everything gives."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from memo_kernels import ASSERTS, FUNC, LOOPS, X, keys, load, run_loops

import qdlab as qd
from qdlab.compiler.cache import stmt_memo


def counts() -> tuple[int, int]:
    return stmt_memo.stats["replayed"], stmt_memo.stats["lowered"]


def delta(before: tuple[int, int]) -> tuple[int, int]:
    now = counts()
    return now[0] - before[0], now[1] - before[1]


@pytest.fixture(autouse=True)
def _init(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("QDLAB_STMT_MEMO", raising=False)
    stmt_memo.clear()
    qd.init(arch=qd.cpu, offline_cache_file_path=str(tmp_path / "cache"), random_seed=3)


def test_an_edit_lowers_one_loop_and_replays_the_rest(tmp_path) -> None:
    run_loops(tmp_path)
    before = counts()
    k = run_loops(tmp_path, k2=7.0)
    assert delta(before) == (3, 1)
    assert k.per_offload_cache_observations.frontend_constructs_recompiled == 1


def test_the_memo_gives_what_lowering_gives(tmp_path, monkeypatch) -> None:
    run_loops(tmp_path)
    with_memo = keys(run_loops(tmp_path, k2=7.0))
    monkeypatch.setenv("QDLAB_STMT_MEMO", "0")
    before = counts()
    without = keys(run_loops(tmp_path, k2=9.0))
    assert delta(before) == (0, 0)
    assert with_memo[:2] == without[:2] and with_memo[3] == without[3]
    assert with_memo[2] != without[2]


def test_a_changed_global_is_lowered_again(tmp_path) -> None:
    run_loops(tmp_path)
    before = counts()
    run_loops(tmp_path, k2=7.0, c=1.25)  # loop 1 reads C: its entry no longer holds
    assert delta(before) == (2, 2)


SHARED = """
    import qdlab as qd

    @qd.kernel
    def k(x: qd.types.NDArray[qd.f32, 1], a: qd.types.NDArray[qd.f32, 2]):
        for i in range(x.shape[0]):
            a[3, i] = x[i] * 5.0
        s = {s}
        for i in range(x.shape[0]):
            a[0, i] = x[i] * s
        for i in range(x.shape[0]):
            a[1, i] = x[i] + s
        for i in range(x.shape[0]):
            a[2, i] = x[i] - 1.0
"""


@pytest.mark.parametrize("s", [2.0, 3.0])
def test_editing_a_shared_definition_rebuilds_every_construct_that_uses_it(tmp_path, s) -> None:
    def run(value: float):
        mod = load(tmp_path, SHARED.format(s=value))
        a = np.zeros((4, X.size), np.float32)
        mod.k(X, a)
        v = np.float32(value)
        np.testing.assert_array_equal(a, np.stack([X * v, X + v, X - 1, X * 5]))
        return mod.k

    run(1.5)
    before = counts()
    k = run(s)
    # the loop above `s` is replayed; `s` leaves a local behind, so everything after it is lowered
    assert delta(before) == (1, 4)
    assert k.per_offload_cache_observations.frontend_constructs_recompiled == 2


def test_a_changed_func_is_lowered_again(tmp_path) -> None:
    def run(factor: float, k1: float) -> None:
        mod = load(tmp_path, FUNC.format(factor=factor, k1=k1))
        a = np.zeros((2, X.size), np.float32)
        mod.k(X, a)
        np.testing.assert_array_equal(a, np.stack([X * np.float32(factor), X * np.float32(k1)]))

    run(2.0, 1.0)
    run(2.0, 4.0)  # only the second loop changed: the first is still lowered (it inlines f)
    run(6.0, 4.0)


RANDOM = """
    import qdlab as qd

    @qd.kernel
    def k(a: qd.types.NDArray[qd.f32, 2]):
        for i in range(a.shape[1]):
            a[0, i] = {first}
        for i in range(a.shape[1]):
            a[1, i] = qd.random()
"""


def test_random_draws_equal_a_compile_without_the_memo(tmp_path, monkeypatch) -> None:
    def run(first: str) -> np.ndarray:
        qd.init(arch=qd.cpu, offline_cache_file_path=str(tmp_path / "cache"), random_seed=3)
        a = np.zeros((2, 32), np.float32)
        load(tmp_path, RANDOM.format(first=first)).k(a)
        return a

    run("qd.random()")
    edited = "qd.random() * 0.5 + qd.random()"  # one more draw before the second loop's
    with_memo = run(edited)
    monkeypatch.setenv("QDLAB_STMT_MEMO", "0")
    np.testing.assert_array_equal(with_memo, run(edited))


def test_a_replayed_statement_reports_where_the_kernel_is_now(tmp_path) -> None:
    qd.init(arch=qd.cpu, debug=True, offline_cache_file_path=str(tmp_path / "cache"))
    x = np.array([1.0, 20.0], np.float32)
    a = np.zeros(2, np.float32)
    first = load(tmp_path, ASSERTS.format(k1=1.0))
    with pytest.raises(AssertionError, match=r"line 7\b"):
        first.k(x, a)
    before = counts()
    moved = load(tmp_path, ASSERTS.format(k1=2.0), moved=5)  # five lines lower, loop 2 edited
    with pytest.raises(AssertionError, match=r"line 12\b") as e:
        moved.k(x, a)
    assert os.path.basename(moved.__file__) in str(e.value)
    assert delta(before) == (1, 1)


def test_a_statement_replayed_where_it_was_lowered_reports_the_same_place(tmp_path) -> None:
    """The file edited in place (a module run again): the replayed loop's assertion names what it
    named when it was lowered, line, column and text (its locations are the lowered ones)."""
    qd.init(arch=qd.cpu, debug=True, offline_cache_file_path=str(tmp_path / "cache"))
    x, a = np.array([1.0, 20.0], np.float32), np.zeros(2, np.float32)
    path = tmp_path / "same.py"
    errors = []
    for n, k1 in enumerate((1.0, 2.0)):  # loop 2 edited, loop 1 (the assert) replayed
        path.write_text(textwrap.dedent(ASSERTS.format(k1=k1)))
        spec = importlib.util.spec_from_file_location(f"same_{n}", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        before = counts()
        with pytest.raises(AssertionError) as e:
            mod.k(x, a)
        errors.append(str(e.value))
    assert delta(before) == (1, 1)
    assert errors[1] == errors[0] and "same.py, line 7" in errors[0]
    assert "assert x[i] < 10.0" in errors[0]


SHIFTED = """
    import qdlab as qd

    @qd.kernel
    def k(x: qd.types.NDArray[qd.f32, 1], a: qd.types.NDArray[qd.f32, 2]):
        for i in range(x.shape[0]):
            a[0, i] = x[i] * {k0}
{extra}        for i, j in qd.ndrange(1, x.shape[0]):
            assert x[j] < 10.0
            a[1, j] = x[j] + 1.0
"""


def test_lines_added_above_a_loop_leave_its_key_and_its_errors_follow_it(tmp_path) -> None:
    """A construct's key holds no source line (its error messages are found by index at run time,
    from the current compile), so a line added above it compiles nothing, and its assertion still
    names the line it is on now."""
    qd.init(arch=qd.cpu, debug=True, offline_cache_file_path=str(tmp_path / "cache"))
    x, a = np.array([1.0, 20.0], np.float32), np.zeros((2, 2), np.float32)
    first = load(tmp_path, SHIFTED.format(k0=1.0, extra=""))
    with pytest.raises(AssertionError, match=r"line 9\b"):
        first.k(x, a)
    edits = (("        # a comment\n", 1.0, []), ("        y = 0\n" * 3, 3.0, [0]))
    for extra, k0, compiled in edits:
        again = load(tmp_path, SHIFTED.format(k0=k0, extra=extra))
        with pytest.raises(AssertionError, match=rf"line {9 + extra.count(chr(10))}\b"):
            again.k(x, a)
        report = qd.explain(again.k)
        assert [c.index for c in report.constructs if c.status == "compiled"] == compiled
        assert keys(again.k)[1] == keys(first.k)[1]


SCRIPT = """
import json, sys
import numpy as np
import qdlab as qd
qd.init(arch=qd.cpu, offline_cache=True, offline_cache_file_path={cache!r})

@qd.kernel
def k(x: qd.types.NDArray[qd.f32, 1], a: qd.types.NDArray[qd.f32, 2]):
    for i in range(x.shape[0]):
        a[0, i] = x[i] * 2.0
    for i in range(x.shape[0]):
        a[1, i] = x[i] * {k1}

x = np.arange(4, dtype=np.float32)
a = np.zeros((2, 4), np.float32)
k(x, a)
print(json.dumps(a.tolist()))
"""


@pytest.mark.process
def test_a_new_process_edit_is_exact(tmp_path) -> None:
    script = tmp_path / "edit.py"
    outs = []
    for k1 in (3.0, 5.0):
        script.write_text(SCRIPT.format(cache=str(tmp_path / "pcache"), k1=k1))
        run = subprocess.run(
            [sys.executable, str(script)], check=False, capture_output=True, text=True
        )
        assert run.returncode == 0, run.stderr
        outs.append(json.loads(run.stdout.splitlines()[-1]))
    x = np.arange(4, dtype=np.float32)
    assert outs[1] == [(x * 2).tolist(), (x * 5).tolist()]


def test_a_compile_makes_no_report_until_one_is_asked_for(tmp_path) -> None:
    k = run_loops(tmp_path)
    assert k.latest._report is None  # reading the compiled kernel does not build the report
    assert qd.explain(k).mode == "per_offload"
    assert k.latest._report is not None


def test_threads_compiling_edits_at_once_get_their_own_results(tmp_path) -> None:
    from concurrent.futures import ThreadPoolExecutor  # lazy: this test's threads only

    run_loops(tmp_path)
    mods = [load(tmp_path, LOOPS.format(k0=1.0, k2=float(10 + t)), C=0.5) for t in range(4)]

    def call(t: int) -> np.ndarray:
        a = np.zeros((4, X.size), np.float32)
        mods[t].k(X, a)
        return a

    with ThreadPoolExecutor(4) as ex:
        outs = list(ex.map(call, range(4)))
    for t, a in enumerate(outs):
        np.testing.assert_array_equal(a[2], X * np.float32(10 + t))
        np.testing.assert_array_equal(a[1], X * 2 + np.float32(0.5))
