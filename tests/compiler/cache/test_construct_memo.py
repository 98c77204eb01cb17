"""The construct memo serves unchanged constructs, and never a stale one: a construct whose slice
changed (an edited loop, a shared definition it uses, a global or `@qd.func` it reads, the compile
options) is prepared again, a served construct reports where the kernel is now, and every key and
result equals a compile without the memo."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from fresh import run_main
from memo_kernels import ASSERTS, BOUNDS, FUNC, X, keys, load, run_loops, texts

import qdlab as qd
from qdlab.compiler.cache import construct_memo, stmt_memo

_plain = itertools.count()


def counts() -> tuple[int, int]:
    return construct_memo.stats["served"], construct_memo.stats["prepared"]


def delta(before: tuple[int, int]) -> tuple[int, int]:
    now = counts()
    return now[0] - before[0], now[1] - before[1]


@pytest.fixture(autouse=True)
def _init(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("QDLAB_STMT_MEMO", raising=False)
    monkeypatch.delenv("QDLAB_CONSTRUCT_MEMO", raising=False)
    stmt_memo.clear()
    construct_memo.clear()
    qd.init(arch=qd.cpu, offline_cache_file_path=str(tmp_path / "cache"))


def without_memo(monkeypatch, make, folder, debug: bool = False):
    """What `make()` gives with neither memo, compiled into a cache of its own (so nothing comes
    from a manifest)."""
    monkeypatch.setenv("QDLAB_CONSTRUCT_MEMO", "0")
    monkeypatch.setenv("QDLAB_STMT_MEMO", "0")
    qd.init(arch=qd.cpu, debug=debug, offline_cache_file_path=str(folder / f"plain{next(_plain)}"))
    try:
        return make()
    finally:
        monkeypatch.delenv("QDLAB_CONSTRUCT_MEMO")
        monkeypatch.delenv("QDLAB_STMT_MEMO")


def test_an_edit_prepares_one_construct_and_serves_the_rest(tmp_path, monkeypatch) -> None:
    run_loops(tmp_path)
    before = counts()
    k = run_loops(tmp_path, k2=7.75)
    assert delta(before) == (3, 1)
    assert k.per_offload_cache_observations.frontend_constructs_recompiled == 1
    plain = without_memo(monkeypatch, lambda: run_loops(tmp_path, k2=7.75), tmp_path)
    assert keys(k) == keys(plain) and texts(k) == texts(plain)


def test_a_changed_global_prepares_its_construct_again(tmp_path, monkeypatch) -> None:
    run_loops(tmp_path)
    before = counts()
    k = run_loops(tmp_path, c=1.75)  # loop 1 reads C
    assert delta(before) == (3, 1)
    plain = without_memo(monkeypatch, lambda: run_loops(tmp_path, c=1.75), tmp_path)
    assert keys(k) == keys(plain)


SHARED = """
    import qdlab as qd

    @qd.kernel
    def k(x: qd.types.NDArray[qd.f32, 1], a: qd.types.NDArray[qd.f32, 2]):
        for i in range(x.shape[0]):
            a[3, i] = x[i] * 5.0
        s = {s}
        t = x[0] * 0.0 + {t}
        for i in range(x.shape[0]):
            a[0, i] = x[i] * s
        for i in range(x.shape[0]):
            a[1, i] = x[i] + t
        for i in range(x.shape[0]):
            a[2, i] = x[i] - 1.0
"""


def run_shared(folder, s: float, t: float):
    mod = load(folder, SHARED.format(s=s, t=t))
    a = np.zeros((4, X.size), np.float32)
    mod.k(X, a)
    want = np.stack([X * np.float32(s), X + (X[0] * np.float32(0) + np.float32(t)), X - 1, X * 5])
    np.testing.assert_array_equal(a, want)
    return mod.k


@pytest.mark.parametrize(("s", "t", "rebuilt"), [(2.5, 0.5, 1), (1.25, 4.0, 1), (3.5, 8.0, 2)])
def test_editing_a_shared_definition_rebuilds_every_construct_that_uses_it(
    tmp_path, monkeypatch, s, t, rebuilt
) -> None:
    run_shared(tmp_path, 1.25, 0.5)
    before = counts()
    k = run_shared(tmp_path, s, t)
    assert delta(before) == (4 - rebuilt, rebuilt)
    assert k.per_offload_cache_observations.frontend_constructs_recompiled == rebuilt
    plain = without_memo(monkeypatch, lambda: run_shared(tmp_path, s, t), tmp_path)
    assert keys(k) == keys(plain) and texts(k) == texts(plain)


def test_a_changed_func_rebuilds_the_construct_that_inlines_it(tmp_path) -> None:
    def run(factor: float, k1: float):
        mod = load(tmp_path, FUNC.format(factor=factor, k1=k1))
        a = np.zeros((2, X.size), np.float32)
        mod.k(X, a)
        np.testing.assert_array_equal(a, np.stack([X * np.float32(factor), X * np.float32(k1)]))
        return mod.k

    run(2.0, 1.0)
    before = counts()
    run(2.0, 4.0)
    assert delta(before) == (1, 1)  # the func did not change: its construct is served
    before = counts()
    run(6.0, 4.0)
    assert delta(before) == (1, 1)


TEMPLATED = """
    import qdlab as qd

    @qd.kernel
    def k(x: qd.types.NDArray[qd.f32, 1], a: qd.types.NDArray[qd.f32, 2], n: qd.template()):
        for i in range(x.shape[0]):
            a[0, i] = x[i] * n
        for i in range(x.shape[0]):
            a[1, i] = x[i] + {k1}
"""


def test_a_template_value_is_part_of_the_construct(tmp_path) -> None:
    mod = load(tmp_path, TEMPLATED.format(k1=1.0))
    for n in (2, 3, 2):
        a = np.zeros((2, X.size), np.float32)
        mod.k(X, a, n)
        np.testing.assert_array_equal(a, np.stack([X * np.float32(n), X + 1]))


@pytest.mark.parametrize("stmt_memo_on", ["1", "0"])
def test_a_served_construct_reports_where_the_kernel_is_now(
    tmp_path, monkeypatch, stmt_memo_on
) -> None:
    monkeypatch.setenv("QDLAB_STMT_MEMO", stmt_memo_on)
    qd.init(arch=qd.cpu, debug=True, offline_cache_file_path=str(tmp_path / "cache"))
    x = np.array([1.0, 20.0], np.float32)
    a = np.zeros(2, np.float32)
    first = load(tmp_path, BOUNDS.format(k1=1.0))
    with pytest.raises(qd.QdIndexError, match=r"line 7\b"):
        first.k(x, a)
    before = counts()
    moved = load(tmp_path, BOUNDS.format(k1=2.0), moved=5)  # five lines lower, loop 2 edited
    with pytest.raises(qd.QdIndexError, match=r"line 12\b") as e:
        moved.k(x, a)
    assert os.path.basename(moved.__file__) in str(e.value)
    assert delta(before) == (1, 1)
    served = moved.k.latest.built[0]
    assert {op.loc.lineno for op in served.kernel.walk() if op.loc} <= {10, 11, 12}
    assert [t.lines for t in qd.explain(moved.k).constructs[0].tasks] == [(11, 12)]
    assert {op.loc.lineno for op in first.k.latest.built[0].kernel.walk() if op.loc} <= {5, 6, 7}
    plain = without_memo(
        monkeypatch, lambda: load(tmp_path, BOUNDS.format(k1=2.0), moved=5).k, tmp_path, True
    )
    with pytest.raises(qd.QdIndexError):
        plain(x, a)
    assert texts(moved.k) == texts(plain)


@pytest.mark.parametrize("stmt_memo_on", ["1", "0"])
def test_a_moved_assert_is_served_and_names_where_it_is_now(
    tmp_path, monkeypatch, stmt_memo_on
) -> None:
    """An assert's key text holds no line (its message is found by index in the current compile's
    messages): moved, its construct is served, its failure names the line it is on now, and its
    text is what a compile without either memo gives."""
    monkeypatch.setenv("QDLAB_STMT_MEMO", stmt_memo_on)
    qd.init(arch=qd.cpu, debug=True, offline_cache_file_path=str(tmp_path / "cache"))
    x = np.array([1.0, 20.0], np.float32)
    a = np.zeros(2, np.float32)
    with pytest.raises(AssertionError, match=r"line 7\b"):
        load(tmp_path, ASSERTS.format(k1=1.0)).k(x, a)
    before = counts()
    moved = load(tmp_path, ASSERTS.format(k1=2.0), moved=5)
    with pytest.raises(AssertionError, match=r"line 12\b"):
        moved.k(x, a)
    assert delta(before) == (1, 1)
    plain = without_memo(
        monkeypatch, lambda: load(tmp_path, ASSERTS.format(k1=2.0), moved=5), tmp_path, True
    )
    with pytest.raises(AssertionError):
        plain.k(x, a)
    same_file = [t.replace(plain.__file__, moved.__file__) for t in texts(plain.k)]
    assert texts(moved.k) == [
        t.replace(os.path.basename(plain.__file__), os.path.basename(moved.__file__))
        for t in same_file
    ]


def test_compile_options_are_part_of_the_construct(tmp_path) -> None:
    x = np.array([1.0, 20.0], np.float32)
    a = np.zeros(2, np.float32)
    load(tmp_path, ASSERTS.format(k1=1.0)).k(x, a)  # no debug: the assert is not checked
    qd.init(arch=qd.cpu, debug=True, offline_cache_file_path=str(tmp_path / "cache"))
    before = counts()
    with pytest.raises(AssertionError, match=r"line 7\b"):
        load(tmp_path, ASSERTS.format(k1=2.0)).k(x, a)
    assert delta(before) == (0, 2)


def test_a_sequence_of_edits_equals_compiles_without_the_memo(tmp_path, monkeypatch) -> None:
    edits = [(1.5, 3.0, 0.5, 0), (1.5, 7.75, 0.5, 2), (4.5, 7.75, 0.5, 2), (4.5, 7.75, 2.25, 0)]
    with_memo = [keys(run_loops(tmp_path, *e)) for e in edits]
    plain = without_memo(
        monkeypatch, lambda: [keys(run_loops(tmp_path, *e)) for e in edits], tmp_path
    )
    assert with_memo == plain


SCRIPT = """
import json
import numpy as np
import qdlab as qd
qd.init(arch=qd.cpu, offline_cache=True)

@qd.kernel
def k(x: qd.types.NDArray[qd.f32, 1], a: qd.types.NDArray[qd.f32, 2]):
    s = {s}
    for i in range(x.shape[0]):
        a[0, i] = x[i] * s
    for i in range(x.shape[0]):
        a[1, i] = x[i] * {k1}

x = np.arange(4, dtype=np.float32)
a = np.zeros((2, 4), np.float32)
k(x, a)
print(json.dumps(a.tolist()))
"""


@pytest.mark.process
def test_a_new_process_edit_of_a_shared_definition_is_exact(tmp_path) -> None:

    for s, k1 in ((2.0, 3.0), (2.0, 5.0), (7.0, 5.0)):
        (tmp_path / "main.py").write_text(SCRIPT.format(s=s, k1=k1))
        x = np.arange(4, dtype=np.float32)
        assert run_main(tmp_path) == [(x * s).tolist(), (x * k1).tolist()]


@pytest.mark.process
def test_a_new_process_with_the_memo_off_gets_the_same_keys(tmp_path) -> None:
    script = tmp_path / "keys.py"
    script.write_text(
        SCRIPT.format(s=2.0, k1=3.0).replace("qd.init(arch=qd.cpu, offline_cache=True)", "")
        + "print(json.dumps([b.key for b in k.latest.built]))\n"
    )
    outs = []
    for off in ("0", "1"):
        env = dict(os.environ, QDLAB_CONSTRUCT_MEMO=off, QDLAB_CACHE_DIR=str(tmp_path / off))
        run = subprocess.run(
            [sys.executable, str(script)], env=env, capture_output=True, text=True, check=False
        )
        assert run.returncode == 0, run.stderr
        outs.append(json.loads(run.stdout.splitlines()[-1]))
    assert outs[0] == outs[1]


def test_a_loop_moved_inside_the_kernel_reports_its_new_line(tmp_path) -> None:
    qd.init(arch=qd.cpu, debug=True, offline_cache_file_path=str(tmp_path / "cache"))
    x = np.array([1.0, 20.0], np.float32)
    a = np.zeros(2, np.float32)
    with pytest.raises(qd.QdIndexError, match=r"line 7\b"):
        load(tmp_path, BOUNDS.format(k1=1.0)).k(x, a)
    inside = BOUNDS.format(k1=1.0).replace("        for i", "        # a comment\n        for i", 1)
    with pytest.raises(qd.QdIndexError, match=r"line 8\b"):
        load(tmp_path, inside).k(x, a)
