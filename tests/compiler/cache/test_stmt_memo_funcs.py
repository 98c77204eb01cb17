"""The statement memo inside `@qd.func`s: a kernel whose top-level statement calls a function (as
every Genesis kernel does) has that function's statements replayed one by one, so an edit inside it
lowers the edited statement and its callers' statements only. Template kernels take part; a
replayed statement restores the settings and struct members it left; locations follow a function
moved in its file; and the result and every construct's IR are what lowering everything gives."""

from __future__ import annotations

import dataclasses
import importlib.util
import itertools
import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from memo_kernels import load

import qdlab as qd
from qdlab.compiler.cache import stmt_memo

_n = itertools.count()
X = np.linspace(0.5, 2.0, 8, dtype=np.float32)

HELPERS = """
import qdlab as qd

@qd.func
def check(x: qd.types.NDArray[qd.f32, 1]):
    for i in range(x.shape[0]):
        assert x[i] < 10.0

@qd.func
def step(x: qd.types.NDArray[qd.f32, 1], a: qd.types.NDArray[qd.f32, 2], flag: qd.template()):
    B = qd.static(flag)
    qd.loop_config(serialize=True)
    for i in range(1, x.shape[0]):
        a[0, i] = a[0, i - 1] + x[i]
    for i in range(x.shape[0]):
        a[1, i] = x[i] * {k1}
    for i in range(x.shape[0]):
        a[2, i] = x[i] + (1.0 if qd.static(B) else 2.0)
"""

KERNEL = """
import qdlab as qd

@qd.kernel
def k(x: qd.types.NDArray[qd.f32, 1], a: qd.types.NDArray[qd.f32, 2], flag: qd.template()):
    check(x)
    step(x, a, flag)
"""


def helpers(folder, k1: float, moved: int = 0, text: str = HELPERS, **module_globals):
    """The helpers' file, written at one path (edited in place, as a source checkout is) and
    imported anew."""
    path = folder / ("helpers.py" if text is HELPERS else "more_helpers.py")
    path.write_text("# above\n" * moved + textwrap.dedent(text.format(k1=k1)))
    spec = importlib.util.spec_from_file_location(f"helpers_{next(_n)}", path)
    mod = importlib.util.module_from_spec(spec)
    mod.__dict__.update(module_globals)
    spec.loader.exec_module(mod)
    return mod


def run(folder, k1: float, flag: bool = False, moved: int = 0):
    h = helpers(folder, k1, moved)
    k = load(folder, KERNEL, check=h.check, step=h.step).k
    a = np.zeros((3, X.size), np.float32)
    k(X, a, flag)
    want = np.stack(
        [
            np.concatenate([[0.0], np.cumsum(X[1:], dtype=np.float32)]),
            X * np.float32(k1),
            X + np.float32(1.0 if flag else 2.0),
        ]
    ).astype(np.float32)
    np.testing.assert_array_equal(a, want)  # row 0 holds only if the loop ran serialized
    return k


def counts() -> tuple[int, int]:
    return stmt_memo.stats["replayed"], stmt_memo.stats["lowered"]


@pytest.fixture(autouse=True)
def _init(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("QDLAB_STMT_MEMO", raising=False)
    stmt_memo.clear()
    qd.init(arch=qd.cpu, offline_cache_file_path=str(tmp_path / "cache"))


def test_an_edit_inside_a_func_lowers_that_statement_and_replays_its_neighbours(
    tmp_path,
) -> None:
    run(tmp_path, 3.0)
    r, lo = counts()
    k = run(tmp_path, 5.0)
    # replayed: check's loop, the loop setting, the prefix loop, the last loop; lowered: the
    # calls of check and step (their bodies went statement by statement), `B = ...` (it binds
    # a name) and the edited loop
    assert (counts()[0] - r, counts()[1] - lo) == (4, 4)
    assert k.per_offload_cache_observations.frontend_constructs_recompiled == 1


def test_replaying_inside_funcs_gives_what_lowering_gives(tmp_path) -> None:
    run(tmp_path, 3.0)
    with_memo = run(tmp_path, 5.0)
    h = helpers(tmp_path, 5.0)
    plain = load(tmp_path, KERNEL, check=h.check, step=h.step).k
    plain.options["fresh"] = True  # neither memo, nothing reused (`%%qdkernel --no-cache`)
    before = counts()
    plain(X, np.zeros((3, X.size), np.float32), False)
    assert counts() == before
    assert [b.text for b in with_memo.latest.built] == [b.text for b in plain.latest.built]


def test_a_template_argument_changed_is_lowered_again(tmp_path) -> None:
    run(tmp_path, 3.0, flag=False)
    r = counts()[0]
    run(tmp_path, 3.0, flag=True)  # another signature: no entry of the first is replayed
    assert counts()[0] == r
    run(tmp_path, 7.0, flag=False)
    assert counts()[0] > r


def test_a_replayed_func_statement_reports_where_its_func_is_now(tmp_path) -> None:
    qd.init(arch=qd.cpu, debug=True, offline_cache_file_path=str(tmp_path / "cache"))
    bad = np.array([1.0, 20.0], np.float32)

    def fails(k1: float, moved: int) -> str:
        h = helpers(tmp_path, k1, moved)
        k = load(tmp_path, KERNEL, check=h.check, step=h.step).k
        with pytest.raises(AssertionError) as e:
            k(bad, np.zeros((3, 2), np.float32), False)
        return str(e.value)

    assert "helpers.py, line 7" in fails(3.0, 0)
    before = counts()[0]
    moved = fails(5.0, 4)  # four lines above everything, and `step` edited: `check` replayed
    assert counts()[0] > before
    assert "helpers.py, line 11" in moved and "assert x[i] < 10.0" in moved


@dataclasses.dataclass
class State:
    x: qd.types.NDArray[qd.f32, 1]
    y: qd.types.NDArray[qd.f32, 1]


STRUCT_HELPERS = """
import qdlab as qd

@qd.func
def double(s: State):
    for i in range(s.x.shape[0]):
        s.y[i] = s.x[i] * 2.0

@qd.func
def shift(s: State, a: qd.types.NDArray[qd.f32, 1]):
    for i in range(s.x.shape[0]):
        a[i] = s.y[i] + {k1}
"""

STRUCT_KERNEL = """
import qdlab as qd

@qd.kernel
def k(s: State, a: qd.types.NDArray[qd.f32, 1]):
    double(s)
    shift(s, a)
"""


def test_a_replayed_statement_passes_the_struct_members_it_reads(tmp_path) -> None:
    for k in (1.0, 4.0):
        h = helpers(tmp_path, k, text=STRUCT_HELPERS, State=State)
        kernel = load(tmp_path, STRUCT_KERNEL, State=State, double=h.double, shift=h.shift).k
        x = qd.ndarray(qd.f32, shape=(8,))
        x.from_numpy(X)
        s = State(x, qd.ndarray(qd.f32, shape=(8,)))
        a = np.zeros(8, np.float32)
        before = counts()[0]
        kernel(s, a)
        np.testing.assert_array_equal(s.y.to_numpy(), X * 2)
        np.testing.assert_array_equal(a, X * 2 + np.float32(k))
    assert counts()[0] > before  # `double(s)` was replayed, its members declared all the same


SCRIPT = """
import json, sys
import numpy as np
sys.path.insert(0, {folder!r})
import qdlab as qd
from qdlab.compiler.cache import stmt_memo
qd.init(arch=qd.cpu, offline_cache=True, offline_cache_file_path={cache!r})
from helpers import check, step

@qd.kernel
def k(x: qd.types.NDArray[qd.f32, 1], a: qd.types.NDArray[qd.f32, 2], flag: qd.template()):
    check(x)
    step(x, a, flag)

x = np.linspace(0.5, 2.0, 8, dtype=np.float32)
a = np.zeros((3, 8), np.float32)
k(x, a, False)
print(json.dumps([a.tolist(), stmt_memo.stats["replayed"]]))
"""


@pytest.mark.process
def test_a_new_process_edit_inside_a_func_replays_the_rest_from_disk(tmp_path) -> None:
    script = tmp_path / "edit.py"
    script.write_text(SCRIPT.format(folder=str(tmp_path), cache=str(tmp_path / "pcache")))
    outs = []
    for k1 in (3.0, 5.0):
        (tmp_path / "helpers.py").write_text(textwrap.dedent(HELPERS.format(k1=k1)))
        got = subprocess.run(
            [sys.executable, str(script)], check=False, capture_output=True, text=True
        )
        assert got.returncode == 0, got.stderr
        outs.append(json.loads(got.stdout.splitlines()[-1]))
    a, replayed = outs[1]
    np.testing.assert_array_equal(np.asarray(a, np.float32)[1], X * np.float32(5.0))
    assert replayed == 4


DEFAULTS = """
import qdlab as qd

D = {k1}

@qd.func
def scale(x: qd.types.NDArray[qd.f32, 1], a: qd.types.NDArray[qd.f32, 1], c=D):
    for i in range(x.shape[0]):
        a[i] = x[i] * c
"""

DEFAULTS_KERNEL = """
import qdlab as qd

@qd.kernel
def k(x: qd.types.NDArray[qd.f32, 1], a: qd.types.NDArray[qd.f32, 1]):
    scale(x, a)
"""


@pytest.mark.parametrize("memo", ["1", "0"])
def test_a_func_default_changed_with_its_text_unchanged_is_compiled_again(
    tmp_path, monkeypatch, memo
) -> None:
    """`def f(x, c=D)` with `D` rebound: the default is a value the `def` made, which its text
    does not show; the manifest and the memo check it (they once served the old one)."""
    monkeypatch.setenv("QDLAB_STMT_MEMO", memo)
    for d in (1.0, 2.0):
        h = helpers(tmp_path, d, text=DEFAULTS)
        k = load(tmp_path, DEFAULTS_KERNEL, scale=h.scale).k
        a = np.zeros(X.size, np.float32)
        k(X, a)
        np.testing.assert_array_equal(a, X * np.float32(d))
