"""Compile-time values that no fingerprint covers (issue 35, items 4 and 5).

A `qd.static(...)` expression that calls a helper may read a file, the environment, or state a
fingerprint cannot see (a `contextvars.ContextVar`); a compiled kernel is served again (by the
manifest, or by the statement memo replaying its statements) only after the expression, evaluated
again, gives the same value. Re-running the definition (a new kernel object, the same source: a
notebook cell run again) in the same process or a new one must give what a compile gives: what
Quadrants gives, as it compiles a new kernel object afresh. The kernel object that was already
called keeps what it was compiled with (as in Quadrants). The source of a `@qd.func` is read
again when its file or its code object changed (IPython's `%autoreload` replaces a function's
code in place, and leaves a `@qd.func` object as it was while its file changes).
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import os
import textwrap
from pathlib import Path

import numpy as np
import pytest
from fresh import run_main
from memo_kernels import load

import qdlab as qd

HELPERS = """
    import contextvars
    import json
    import os

    SCENE = {scene!r}

    def load_cfg():
        with open(SCENE) as fh:
            return json.load(fh)

    def from_env():
        return int(os.getenv("QDLAB_TEST_SUBSTEPS", "4"))

    CFG = {{"substeps": 4}}

    def from_global():
        return CFG["substeps"]

    VAR = contextvars.ContextVar("substeps")  # no fingerprint describes it: C state
    VAR.set(4)

    def from_context():
        return VAR.get()

    class Scene:
        def __init__(self, path):
            self.path = path

        def substeps(self):
            with open(self.path) as fh:
                return json.load(fh)["substeps"]

    scene = Scene(SCENE)
"""

KERNEL = """
    import qdlab as qd

    @qd.func
    def times(n: qd.template()):
        return qd.static(load_cfg()["substeps"] * n)

    @qd.func
    def of(s: qd.template()):
        return qd.static(s.substeps())

    @qd.kernel
    def k(a: qd.types.NDArray[qd.i32, 1]{template}):
        for i in range(a.shape[0]):
            value = {expr}  # a name: a qd.static(...) cannot be assigned to an element
            a[i] = value
"""

CASES = {  # the kernel's expression: what changes from 4 to 10 between the runs
    "file": 'qd.static(load_cfg()["substeps"])',
    "environ": "qd.static(from_env())",
    "global_mutated": "qd.static(from_global())",
    "c_state": "qd.static(from_context())",
    "template_method": "qd.static(t.substeps())",
    "func_literal_param": "times(1)",
}

_modules = itertools.count()


def helpers(folder: Path) -> object:
    """The helpers' module, loaded once (a notebook's earlier cell); `scene.json` holds 4."""
    scene = folder / "scene.json"
    scene.write_text(json.dumps({"substeps": 4}))
    path = folder / f"scene_helpers_{next(_modules)}.py"
    path.write_text(textwrap.dedent(HELPERS).format(scene=str(scene)))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def define(folder: Path, h: object, expr: str) -> object:
    """The kernel's definition run again: a new file, the same source, the same helpers."""
    names = ("load_cfg", "from_env", "from_global", "from_context", "scene")
    template = ", t: qd.template()" if "t." in expr else ""  # a template kernel: no statement memo
    source = KERNEL.format(expr=expr, template=template)
    return load(folder, source, **{n: getattr(h, n) for n in names}).k


def run(k, h: object) -> tuple[int, bool]:
    """(the value the kernel baked in, whether it was compiled rather than served whole)."""
    a = np.zeros(3, np.int32)
    k(a, *[h.scene][: len(k.param_names) - 1])
    return int(a[0]), k._primal.per_offload_cache_observations.frontend_constructs_total != -1


def change(h: object, monkeypatch) -> None:
    """Every input of the cases goes from 4 to 10."""
    Path(h.SCENE).write_text(json.dumps({"substeps": 10}))
    monkeypatch.setenv("QDLAB_TEST_SUBSTEPS", "10")
    h.CFG["substeps"] = 10
    h.VAR.set(10)


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("QDLAB_TEST_SUBSTEPS", raising=False)
    qd.init(arch=qd.cpu, offline_cache_file_path=str(tmp_path / "cache"))


@pytest.mark.parametrize("memos", [True, False], ids=["memos", "no_memos"])
@pytest.mark.parametrize("case", list(CASES))
def test_running_the_definition_again_sees_the_changed_input(
    tmp_path: Path, monkeypatch, case: str, memos: bool
) -> None:
    if not memos:
        monkeypatch.setenv("QDLAB_STMT_MEMO", "0")
        monkeypatch.setenv("QDLAB_CONSTRUCT_MEMO", "0")
    h = helpers(tmp_path)
    first = define(tmp_path, h, CASES[case])
    assert run(first, h) == (4, True)
    if case == "template_method":  # a struct argument's first compile learns what it reads: the
        assert run(first, h) == (4, True)  # second call compiles with it declared (a manifest)
    assert run(define(tmp_path, h, CASES[case]), h) == (4, False)  # unchanged: served whole
    change(h, monkeypatch)
    assert run(define(tmp_path, h, CASES[case]), h) == (10, True)
    assert run(define(tmp_path, h, CASES[case]), h) == (10, False)
    assert run(first, h)[0] == 4  # the kernel already called keeps its code, as in Quadrants


def test_an_expression_that_cannot_be_evaluated_again_is_always_compiled(tmp_path: Path) -> None:
    """`s.substeps()` in a @qd.func whose `s` is an object: the check could not evaluate it again
    outside the compile, so the kernel is never served whole (its constructs still are reused)."""
    h = helpers(tmp_path)
    assert run(define(tmp_path, h, "of(scene)"), h) == (4, True)
    assert run(define(tmp_path, h, "of(scene)"), h) == (4, True)
    Path(h.SCENE).write_text(json.dumps({"substeps": 10}))
    assert run(define(tmp_path, h, "of(scene)"), h) == (10, True)


MAIN = """
    import json
    import os

    import numpy as np

    import qdlab as qd

    qd.init(arch=qd.cpu)

    def load_cfg():
        with open("scene.json") as fh:
            return json.load(fh)

    def from_env():
        return int(os.getenv("QDLAB_TEST_SUBSTEPS", "4"))

    @qd.kernel
    def k(a: qd.types.NDArray[qd.i32, 1]):
        for i in range(a.shape[0]):
            value = qd.static({expr})  # a name: an element cannot be, as in Quadrants
            a[i] = value

    a = np.zeros(3, np.int32)
    k(a)
    print(json.dumps([int(a[0]), k.per_offload_cache_observations.frontend_constructs_total]))
"""


@pytest.mark.process
@pytest.mark.parametrize("case", ["file", "environ"])
def test_a_new_process_sees_the_changed_input(tmp_path: Path, case: str) -> None:
    expr = 'load_cfg()["substeps"]' if case == "file" else "from_env()"
    (tmp_path / "main.py").write_text(textwrap.dedent(MAIN).format(expr=expr))
    (tmp_path / "scene.json").write_text(json.dumps({"substeps": 4}))
    value, total = run_main(tmp_path)
    assert value == 4 and total != -1
    assert run_main(tmp_path) == [4, -1]  # unchanged: served by the manifest
    if case == "file":
        (tmp_path / "scene.json").write_text(json.dumps({"substeps": 10}))
    extra = {"QDLAB_TEST_SUBSTEPS": "10"} if case == "environ" else {}
    value, total = run_main(tmp_path, **extra)
    assert value == 10 and total != -1
    assert run_main(tmp_path, **extra) == [10, -1]


FUNC = """
    import qdlab as qd

    @qd.func
    def f(x):
        return x * {factor}
"""

USES_F = """
    import qdlab as qd

    @qd.kernel
    def k(a: qd.types.NDArray[qd.i32, 1]):
        for i in range(a.shape[0]):
            a[i] = f(10)
"""


def import_file(path: Path, name: str) -> object:
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def calls_f(folder: Path, f: object) -> int:
    a = np.zeros(2, np.int32)
    load(folder, USES_F, f=f).k(a)
    return int(a[0])


def test_a_func_whose_code_is_replaced_in_place_compiles_its_new_body(tmp_path: Path) -> None:
    """What `%autoreload` does to a plain function: its `__code__` replaced by the edited one's.
    The file keeps its size and time, so only the code object tells the edit."""
    path = tmp_path / "fmod.py"
    path.write_text(textwrap.dedent(FUNC).format(factor=2))
    f = import_file(path, "fmod_code").f
    assert calls_f(tmp_path, f) == 20
    before = os.stat(path)
    path.write_text(textwrap.dedent(FUNC).format(factor=3))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    f.fn.__code__ = import_file(path, "fmod_code_new").f.fn.__code__
    assert calls_f(tmp_path, f) == 30


def test_a_func_whose_file_changed_compiles_what_the_file_says(tmp_path: Path) -> None:
    """What `%autoreload` does to a `@qd.func` held by `from fmod import f`: nothing (it updates
    functions and classes, not other objects) while the file changes; the kernel compiles the
    func's source as the file has it now, as Quadrants does."""
    path = tmp_path / "fmod.py"
    path.write_text(textwrap.dedent(FUNC).format(factor=2))
    f = import_file(path, "fmod_file").f
    assert calls_f(tmp_path, f) == 20
    path.write_text(textwrap.dedent(FUNC).format(factor=3))
    later = os.stat(path).st_mtime_ns + 2_000_000_000
    os.utime(path, ns=(later, later))
    assert calls_f(tmp_path, f) == 30


def test_a_func_that_moved_in_its_changed_file_is_an_error_not_another_func(tmp_path) -> None:
    """Where the func's code says it starts, the file now defines another function: compiling
    that would be a wrong answer; the error says to import the func again."""
    path = tmp_path / "fmod.py"
    path.write_text(textwrap.dedent(FUNC).format(factor=2))
    f = import_file(path, "fmod_moved").f
    assert calls_f(tmp_path, f) == 20
    path.write_text(
        textwrap.dedent(FUNC).replace("def f", "def g").format(factor=1)
        + textwrap.dedent(FUNC).format(factor=3)
    )
    with pytest.raises(qd.QdError, match="'f' is no longer where it was defined"):
        calls_f(tmp_path, f)
