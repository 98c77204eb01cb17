"""Across processes, a manifest is served only while every compile-time input it baked in is
unchanged.

Each case is a kernel whose result comes from one input outside its own source (a helper's body, a
default, a global, a large array, an attribute, a `@qd.func` in another module, the global a
`@qd.func`'s string annotation names). A fresh process
compiles it, a second fresh process is served by the manifest, and after that one input is edited in
its file a third fresh process must return the new value.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from fresh import run_main

pytestmark = pytest.mark.process

INPUTS = """
    import numpy as np
    import consts

    def helper():
        return {body}

    def scaled(x={default}):
        return x

    FACTOR = {factor}

    def factor():
        return FACTOR

    def inner():
        return {inner}

    def outer():
        return inner() + 0.0

    def make(k):
        def closed():
            return k
        return closed

    closed = make({closure})

    def via_module():
        return consts.VALUE

    TABLE = np.zeros(2000, np.float32)
    TABLE[700] = {table}

    class Cfg:
        def __repr__(self):
            return "Cfg()"

    cfg = Cfg()
    cfg.scale = {attr}
"""

CONSTS = """
    VALUE = {module}
    SCALE = {module_attr}
"""

FUNCS = """
    from __future__ import annotations

    import qdlab as qd

    @qd.func
    def twice(v: qd.f32) -> qd.f32:
        return v * {func}

    ANN = qd.i32 if {ann} == 2.0 else qd.f32

    @qd.func
    def conv(v: ANN) -> qd.f32:  # a string annotation, naming a global: i32 truncates v
        return v * 6.0 - 10.0
"""

MAIN = """
    import json
    import sys

    import numpy as np

    import qdlab as qd
    import consts
    from funcs import conv, twice
    from inputs import TABLE, cfg, closed, factor, helper, outer, scaled, via_module

    qd.init(arch=qd.cpu)

    @qd.kernel
    def k(a: qd.types.NDArray[qd.f32, 1]):
        for i in range(a.shape[0]):
            value = {expr}  # a name: a qd.static(...) cannot be assigned to an element
            a[i] = value

    a = np.zeros(4, np.float32)
    k(a)
    total = k._primal.per_offload_cache_observations.frontend_constructs_total
    print(json.dumps([float(a[0]), total]))
"""

BASE = {
    "body": 2.0,
    "default": 2.0,
    "factor": 2.0,
    "inner": 2.0,
    "closure": 2.0,
    "module": 2.0,
    "table": 2.0,
    "attr": 2.0,
    "func": 2.0,
    "module_attr": 2.0,
    "ann": 2.0,
}

CASES = {  # the input that changes: the kernel's expression that reads it
    "body": "qd.static(helper())",
    "default": "qd.static(scaled())",
    "factor": "qd.static(factor())",
    "inner": "qd.static(outer())",
    "closure": "qd.static(closed())",
    "module": "qd.static(via_module())",
    "table": "qd.static(float(TABLE[700]))",
    "attr": "qd.static(cfg.scale * 1.0)",
    "func": "twice(1.0)",
    "module_attr": "qd.static(consts.SCALE)",
    "ann": "conv(2.5)",  # 2.0 while ANN is qd.i32 (v = 2), 5.0 once it is qd.f32
}


def write(folder: Path, expr: str, values: dict) -> None:
    for name, text in (("inputs", INPUTS), ("consts", CONSTS), ("funcs", FUNCS), ("main", MAIN)):
        text = textwrap.dedent(text).format(expr=expr, **{k: repr(v) for k, v in values.items()})
        (folder / f"{name}.py").write_text(text)


def run(folder: Path) -> tuple[float, int]:
    value, total = run_main(folder)
    return value, total


@pytest.mark.parametrize("changed", list(CASES))
def test_a_fresh_process_sees_the_changed_input(tmp_path: Path, changed: str) -> None:
    write(tmp_path, CASES[changed], BASE)
    value, total = run(tmp_path)
    assert value == 2.0 and total != -1
    assert run(tmp_path) == (2.0, -1)  # unchanged: served by the manifest, the frontend skipped
    write(tmp_path, CASES[changed], BASE | {changed: 5.0})
    value, total = run(tmp_path)
    assert value == 5.0 and total != -1
