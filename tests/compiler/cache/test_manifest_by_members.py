"""A template argument with no content of its own to key on, across processes: a data-oriented
solver that holds an object no fingerprint describes (Genesis' solvers reach a C object), and a
field passed as a template. The manifest keys such an argument by its type and checks every member
path the compile read (a field by its type and shape, a number by its value, a method by its
source, a nested object by its type), and finds again the funcs the kernel inlined (a method
calling a method, a func a member holds, bound funcs in a list at a `qd.static` index, a method
passed as a template, a builtin such as `qd.svd`, the methods of the items of a list a `qd.static`
loop reads, as Genesis' SAP coupler reads its contact handlers) and the fields it reached (one
inside a `qd.Tensor`, a struct field assigned whole, an item's): a new process serves the kernel
while each holds, and compiles it again as soon as one changed, with the right values every
time."""

from __future__ import annotations

import textwrap
import threading
from pathlib import Path

import pytest
from fresh import run_main

from qdlab.compiler.frontend.fingerprint import UNKNOWN, fingerprint

pytestmark = pytest.mark.process

PROGRAM = """
import json, threading
import numpy as np
import qdlab as qd

qd.init(arch=qd.cpu)


@qd.func
def half(v):
    return v * 0.5


class Sim:
    def __init__(self, dt):
        self.dt = dt
        self.half = half  # a module's func held as a member, called as `self.sim.half(...)`


P = qd.types.struct(a=qd.f32, b=qd.f32)


@qd.data_oriented
class Material:
    def __init__(self, k):
        self.k = k

    @qd.func
    def stress(self, v):
        return v * self.k


@qd.data_oriented
class Handler:
    def __init__(self, w, n):
        self.w = w
        self.acc = qd.field(qd.f32, shape=n)

    @qd.func
    def apply(self, i):
        self.acc[i] += self.w * {hw}


@qd.data_oriented
class Solver:
    def __init__(self, n, scale, dt):
        self.lock = threading.Lock()  # no fingerprint describes it: the solver has no content key
        self.scale = scale
        self.sim = Sim(dt)
        self.x = qd.field(qd.f32, shape=n)
        self.g = qd.tensor(qd.f32, (n,), backend=qd.Backend.FIELD)  # a field in a qd.Tensor
        self.g.from_numpy(np.full(n, 3.0, np.float32))
        self.stresses = [Material(1.0).stress, Material({k}).stress]  # bound funcs in a list
        self.ps, self.qs = P.field(shape=n), P.field(shape=n)
        self.handlers = [Handler(1.0, n), Handler({w2}, n)][:{nh}]  # read item by item

    @qd.func
    def each(self, i, task: qd.template()):  # a method passed in as a template and called
        task(i)

    @qd.func
    def bump(self, i):
        self.qs[i].a += 1.0

    @qd.func
    def push(self, i):
        self.x[i] += {push} * self.sim.dt

    @qd.func
    def outer(self, i):  # a method calling a method and a member's func
        self.push(i)
        self.x[i] += self.sim.half(0.0)

    @qd.kernel
    def run(self):
        for i in self.x:
            self.x[i] = i * qd.static(self.scale)
            self.outer(i)
            s = 0.0
            for m in qd.static(range(2)):
                s += self.stresses[m](1.0)
            self.qs[i] = self.ps[i]  # a whole struct element, through the solver
            self.each(i, self.bump)
            self.g[i] = s + qd.svd(qd.Matrix([[2.0, 0.0], [0.0, 1.0]]), qd.f32)[1][0, 0]
            for h in qd.static(self.handlers):
                h.apply(i)


@qd.kernel
def fill(y: qd.template(), v: qd.f32):
    for i in y:
        y[i] = v + i


s = Solver({n}, {scale}, {dt})
s.run()
y = qd.field(qd.f32, shape={n})
fill(y, 1.5)
assert s.g.to_numpy().tolist() == [1.0 + {k} + 2.0] * {n}
assert s.qs.a.to_numpy().tolist() == [1.0] * {n}
print(json.dumps([
    s.x.to_numpy().tolist(),
    y.to_numpy().tolist(),
    Solver.run._primal.per_offload_cache_observations.frontend_constructs_total,
    fill._primal.per_offload_cache_observations.frontend_constructs_total,
    [h.acc.to_numpy().tolist() for h in s.handlers],
]))
"""

DEFAULT = {"n": 4, "scale": 2.0, "dt": 0.5, "push": 1.0, "k": 2.0, "hw": 1.0, "w2": 2.0, "nh": 2}


def run(folder: Path, **changes: float) -> tuple[list, list, int, int]:
    v = {**DEFAULT, **changes}
    (folder / "main.py").write_text(textwrap.dedent(PROGRAM).format(**v))
    x, y, run_total, fill_total, handlers = run_main(folder)
    n = int(v["n"])
    assert x == [i * v["scale"] + v["push"] * v["dt"] for i in range(n)]
    assert y == [1.5 + i for i in range(n)]
    assert handlers == [[w * v["hw"]] * n for w in [1.0, v["w2"]][: int(v["nh"])]]
    return x, y, run_total, fill_total


def test_the_solver_is_unfingerprintable() -> None:
    """What makes this the by-members case: the object's content cannot be described."""
    assert fingerprint(threading.Lock()) == UNKNOWN


CHANGES = {
    "members": [{"scale": 3.0}, {"dt": 0.25}, {"push": 2.0}, {"k": 4.0}, {"n": 6}],
    "items": [{"hw": 3.0}, {"w2": 5.0}, {"nh": 1}],  # a handler's method, number, the list's length
}


@pytest.mark.parametrize("what", list(CHANGES))
def test_a_solver_and_a_field_template_are_served_and_never_stale(
    tmp_path: Path, what: str
) -> None:
    *_, run_total, fill_total = run(tmp_path)
    assert run_total != -1 and fill_total != -1  # compiled
    *_, run_total, fill_total = run(tmp_path)
    assert (run_total, fill_total) == (-1, -1)  # a new process: both served, nothing lowered
    for change in CHANGES[what]:
        *_, run_total, fill_total = run(tmp_path, **change)
        assert run_total != -1, change  # a member the compile read changed: compiled again
        assert (fill_total != -1) == ("n" in change), change  # the field template's shape
    *_, run_total, fill_total = run(tmp_path)
    assert (run_total, fill_total) == (-1, -1)  # the first variant still holds
