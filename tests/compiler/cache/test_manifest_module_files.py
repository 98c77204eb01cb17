"""A kernel reads values of an importable module file at compile time (a global, a class's
attribute by a chain or through a compile-time local, a property of a template argument that reads
a global, a helper called in `qd.static`, a `@qd.func`): the manifest serves it again while they
hold, and compiles it again as soon as one changes, whether the file was edited (and the module
reloaded, in this process or a new one) or the program changed a value at run time.

A class of a module file is described by its definition as first met in a process (its fields,
annotations, generated methods), checked again by the identity of what its names hold, and by its
own attributes and the methods its source defines, described at every check
(`fingerprint._Fingerprint.module_class`): these tests pin down that what a program can change at
run time is still seen, and that an unchanged class is still a manifest hit.
"""

from __future__ import annotations

import importlib
import itertools
import os
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from fresh import run_main
from memo_kernels import load

import qdlab as qd
from qdlab.compiler.frontend import fingerprint as fp
from qdlab.compiler.frontend import source

MODULE = """
    import dataclasses
    import enum

    import qdlab as qd

    SCALE = {scale}

    def helper():
        return SCALE + 1.0

    class Cfg:
        factor = {factor}
        table = [1.0, 4.0]

        @property
        def scaled(self):
            return SCALE * 10.0

    class Mode(enum.IntEnum):
        SLOW = 1
        FAST = {fast}

    @dataclasses.dataclass(frozen=True)
    class Shape:
        n: int = 3
        scale: float = {shape}

    @qd.func
    def twice(x):
        return x * {func}

    cfg = Cfg()
    shape = Shape()
"""

DEFAULTS = {"scale": 2.0, "factor": 3.0, "fast": 2, "shape": 0.5, "func": 2.0}

CASES = {  # the kernel's expression, and what it gives from the module's values
    "global": ("m.SCALE", lambda v: v["scale"]),
    "class_chain": ("m.Cfg.factor", lambda v: v["factor"]),
    "class_alias": ("c.factor", lambda v: v["factor"]),  # c = qd.static(m.Cfg): no chain
    "class_list_alias": ("qd.static(c.table[1])", lambda v: v["table"]),
    "property_of_template": ("t.scaled", lambda v: v["scale"] * 10.0),
    "enum_member": ("qd.static(int(m.Mode.FAST))", lambda v: v["fast"]),
    "dataclass_default": ("qd.static(m.Shape().scale)", lambda v: v["shape"]),
    "helper_static": ("qd.static(m.helper())", lambda v: v["scale"] + 1.0),
    "func": ("m.twice(1.0)", lambda v: v["func"]),
}

KERNEL = """
    import qdlab as qd

    @qd.kernel
    def k(a: qd.types.NDArray[qd.f32, 1], t: qd.template()):
        c = qd.static(m.Cfg)
        for i in range(a.shape[0]):
            value = {expr}  # a name: a qd.static(...) cannot be assigned to an element
            a[i] = value
"""

_names = itertools.count()


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path) -> None:
    qd.init(arch=qd.cpu, offline_cache_file_path=str(tmp_path / "cache"))


@pytest.fixture
def module(tmp_path: Path):
    """An importable module file (its folder on `sys.path`), imported by name; `write` rewrites
    it with other values (its size and modification time moved on, as an editor would)."""
    folder = tmp_path / "pkg"
    folder.mkdir()
    name = f"qd_module_file_{next(_names)}"
    path = folder / f"{name}.py"

    def write(**values: object) -> None:
        before = path.stat().st_mtime_ns if path.exists() else 0
        path.write_text(textwrap.dedent(MODULE).format(**{**DEFAULTS, **values}))
        later = max(before + 2_000_000_000, path.stat().st_mtime_ns)
        os.utime(path, ns=(later, later))

    write()
    sys.path.insert(0, str(folder))
    try:
        mod = importlib.import_module(name)
        mod.write = write  # type: ignore[attr-defined]
        yield mod
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop(name, None)


def run(folder: Path, mod: object, expr: str) -> tuple[float, bool]:
    """A new kernel object (the same source in a new file, as a cell run again) reading `mod`:
    (what it baked in, whether it was compiled rather than served by its manifest)."""
    k = load(folder, KERNEL.format(expr=expr), m=mod).k
    a = np.zeros(2, np.float32)
    k(a, mod.cfg)  # type: ignore[attr-defined]
    return float(a[0]), k._primal.per_offload_cache_observations.frontend_constructs_total != -1


EDITS = {  # the file edited (and the module reloaded): every value the kernels read changes
    "scale": 5.0,
    "factor": 7.0,
    "fast": 6,
    "shape": 0.25,
    "func": 5.0,
}


@pytest.mark.parametrize("case", list(CASES))
def test_an_edited_and_reloaded_module_is_compiled_again(tmp_path, module, case) -> None:
    expr, want = CASES[case]
    start = {**DEFAULTS, "table": 4.0}
    assert run(tmp_path, module, expr) == (want(start), True)
    assert run(tmp_path, module, expr) == (want(start), False)  # unchanged: a manifest hit
    module.write(**EDITS)
    importlib.reload(module)
    edited = {**EDITS, "table": 4.0}
    assert run(tmp_path, module, expr) == (want(edited), True)
    assert run(tmp_path, module, expr) == (want(edited), False)


RUN_TIME = {  # what a program can change at run time, without the file changing
    "global": lambda m: setattr(m, "SCALE", 5.0),
    "class_chain": lambda m: setattr(m.Cfg, "factor", 7.0),
    "class_alias": lambda m: setattr(m.Cfg, "factor", 7.0),
    "class_list_alias": lambda m: m.Cfg.table.__setitem__(1, 9.0),  # mutated in place
    "property_of_template": lambda m: setattr(m, "SCALE", 5.0),  # a global the property reads
    "helper_static": lambda m: setattr(m, "SCALE", 5.0),  # a global the helper reads
}


@pytest.mark.parametrize("case", list(RUN_TIME))
def test_a_value_changed_at_run_time_is_compiled_again(tmp_path, module, case) -> None:
    expr, want = CASES[case]
    before = {**DEFAULTS, "table": 4.0}
    assert run(tmp_path, module, expr) == (want(before), True)
    assert run(tmp_path, module, expr) == (want(before), False)
    RUN_TIME[case](module)
    after = {
        **DEFAULTS,
        "scale": module.SCALE,
        "factor": module.Cfg.factor,
        "table": module.Cfg.table[1],
    }
    assert want(after) != want(before)
    assert run(tmp_path, module, expr) == (want(after), True)
    assert run(tmp_path, module, expr) == (want(after), False)


def test_a_method_replaced_at_run_time_is_seen(tmp_path, module) -> None:
    """A property of the template argument's class replaced by another function: the class's
    attribute is bound to another object, and described afresh."""
    expr, _ = CASES["property_of_template"]
    assert run(tmp_path, module, expr) == (20.0, True)
    module.Cfg.scaled = property(lambda self: 42.0)
    assert run(tmp_path, module, expr) == (42.0, True)
    assert run(tmp_path, module, expr) == (42.0, False)


def test_a_module_class_is_described_by_its_content_now(module) -> None:
    """The fingerprint of a module file's class: the same while nothing changes (and the same for
    the same source loaded again), another after any change a program can make at run time."""
    m = module
    base = {c: fp.fingerprint(c) for c in (m.Cfg, m.Mode, m.Shape)}
    assert all(v != fp.UNKNOWN for v in base.values())
    assert {c: fp.fingerprint(c) for c in base} == base
    assert fp.fingerprint(m.cfg) == fp.fingerprint(m.cfg)
    steps = [
        lambda: setattr(m.Cfg, "factor", 4.0),  # an attribute rebound
        lambda: m.Cfg.table.append(5.0),  # one mutated in place
        lambda: setattr(m, "SCALE", 9.0),  # a global a method reads
        lambda: setattr(m.Cfg, "extra", 1),  # an attribute added
    ]
    seen = [fp.fingerprint(m.Cfg)]
    for step in steps:
        step()
        assert fp.fingerprint(m.Cfg) not in seen
        seen.append(fp.fingerprint(m.Cfg))
    del m.Cfg.extra  # deleted again: what the class holds is what it held before
    assert fp.fingerprint(m.Cfg) == seen[-2]
    importlib.reload(m)  # the same source again: new objects, the same content
    assert {c: fp.fingerprint(c) for c in (m.Cfg, m.Mode, m.Shape)} == dict(
        zip((m.Cfg, m.Mode, m.Shape), base.values(), strict=True)
    )
    m.write(fast=3, shape=0.75)
    importlib.reload(m)
    assert fp.fingerprint(m.Mode) != base_of(base, "Mode")
    assert fp.fingerprint(m.Shape) != base_of(base, "Shape")


def base_of(base: dict, name: str) -> str:
    return next(v for c, v in base.items() if c.__name__ == name)


def test_a_stamp_follows_its_file(tmp_path, monkeypatch) -> None:
    """A library file's stamp is taken again when its size or time changed (an installed package
    edited in place and reloaded in a long-lived process), not kept for the process's life."""
    monkeypatch.setattr(fp, "_roots", lambda: (os.path.join(str(tmp_path), ""),))
    path = tmp_path / "installed.py"  # under a library root
    path.write_text("X = 1\n")
    first = fp._library(str(path))
    assert first is not None and fp._library(str(path)) == first
    path.write_text("X = 22\n")
    assert fp._library(str(path)) not in (None, first)


def test_kept_lines_are_read_again_after_any_write(tmp_path, monkeypatch) -> None:
    """A file's lines are kept only once its times are settled, and read again after a write that
    keeps its size and sets its modification time back (its change time moves on)."""
    path = tmp_path / "lines.py"
    path.write_text("a = 1\n")
    assert source._read_lines(str(path)) == ["a = 1\n"]
    assert str(path) not in source._files  # just written: not kept
    monkeypatch.setattr(source, "_SETTLED_NS", 0)
    time.sleep(0.01)
    assert source._read_lines(str(path)) == ["a = 1\n"]
    assert str(path) in source._files
    before = path.stat()
    time.sleep(0.01)
    path.write_text("a = 2\n")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert source._read_lines(str(path)) == ["a = 2\n"]


MAIN = """
    import json

    import numpy as np

    import qdlab as qd
    import cfgmod as m

    qd.init(arch=qd.cpu)

    @qd.kernel
    def k(a: qd.types.NDArray[qd.f32, 1], t: qd.template()):
        c = qd.static(m.Cfg)
        for i in range(a.shape[0]):
            a[i] = (
                m.SCALE + c.factor * 10 + t.scaled * 100 + m.twice(1.0) * 10000
                + qd.static(int(m.Mode.FAST)) * 100000 + qd.static(m.Shape().scale) * 1000000
            )

    a = np.zeros(2, np.float32)
    k(a, m.cfg)
    print(json.dumps([float(a[0]), k.per_offload_cache_observations.frontend_constructs_total]))
"""


def expected(v: dict) -> float:
    return float(
        np.float32(
            v["scale"]
            + v["factor"] * 10
            + v["scale"] * 10 * 100
            + v["func"] * 10000
            + v["fast"] * 100000
            + v["shape"] * 1000000
        )
    )


@pytest.mark.process
def test_a_new_process_after_an_edit_compiles_what_the_file_says(tmp_path: Path) -> None:
    (tmp_path / "main.py").write_text(textwrap.dedent(MAIN))
    cfg = tmp_path / "cfgmod.py"
    cfg.write_text(textwrap.dedent(MODULE).format(**DEFAULTS))
    value, total = run_main(tmp_path)
    assert value == expected(DEFAULTS) and total != -1
    assert run_main(tmp_path) == [expected(DEFAULTS), -1]  # unchanged: served by the manifest
    for edit in ({"factor": 7.0}, {"fast": 6}, {"shape": 0.25}, {"func": 5.0}):
        now = {**DEFAULTS, **edit}
        cfg.write_text(textwrap.dedent(MODULE).format(**now))
        value, total = run_main(tmp_path)
        assert value == expected(now) and total != -1, edit
        assert run_main(tmp_path) == [expected(now), -1], edit


ENV_MODULE = """
    import os

    class Cfg:
        factor = float(os.environ.get("QDLAB_TEST_FACTOR", "3"))
"""

ENV_MAIN = """
    import json

    import numpy as np

    import qdlab as qd
    import envmod

    qd.init(arch=qd.cpu)

    @qd.kernel
    def k(a: qd.types.NDArray[qd.f32, 1]):
        c = qd.static(envmod.Cfg)
        for i in range(a.shape[0]):
            a[i] = c.factor

    a = np.zeros(2, np.float32)
    k(a)
    print(json.dumps([float(a[0]), k.per_offload_cache_observations.frontend_constructs_total]))
"""


@pytest.mark.process
def test_a_class_body_that_read_the_environment_is_seen_by_a_new_process(tmp_path) -> None:
    """The same file makes another class in another environment: a class is described by what it
    holds in the process, never by its file alone."""
    (tmp_path / "main.py").write_text(textwrap.dedent(ENV_MAIN))
    (tmp_path / "envmod.py").write_text(textwrap.dedent(ENV_MODULE))
    value, total = run_main(tmp_path)
    assert value == 3.0 and total != -1
    assert run_main(tmp_path) == [3.0, -1]
    value, total = run_main(tmp_path, QDLAB_TEST_FACTOR="7")
    assert value == 7.0 and total != -1
    assert run_main(tmp_path, QDLAB_TEST_FACTOR="7") == [7.0, -1]
