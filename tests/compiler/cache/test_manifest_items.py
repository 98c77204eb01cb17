"""A solver whose kernels read through a list of data-oriented objects (Genesis' SAP coupler loops
over its contact handlers, `for h in qd.static(self.handlers)`; its FEM solver calls
`self._mats[k].f(...)` at a static index), a struct field's member bound to a local
(`g = qd.static(self.pairs.info.g)`), and a func another module calls through a template
parameter (Genesis' BVH query calls the `filter` its caller names). Each item is a struct reached
by its index (`self.handlers[1]`): what the kernel reads through it is keyed and checked path by
path, the list by its length. A new process serves such a kernel from its manifest while each holds,
compiles it again as soon as one changed, and the answers are right every time. Within a process a
number read through an item is baked per instance, as Quadrants bakes it; an item replaced or
added is a new variant."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest
from fresh import run_main

pytestmark = pytest.mark.process

HELPERS = """
import qdlab as qd


@qd.func
def each(f: qd.template(), i, ctx: qd.template()):  # calls the func its caller passes
    f(i, ctx)
"""

PROGRAM = """
import json, threading
import qdlab as qd
from helpers import each

qd.init(arch=qd.cpu)

Info = qd.types.struct(g=qd.f32, h=qd.f32)
Pair = qd.types.struct(a=qd.f32, info=Info)


@qd.func
def bump(i, ctx: qd.template()):
    ctx.pairs.a[i] += {bump}


@qd.data_oriented
class Handler:
    def __init__(self, w, n):
        self.w = w
        self.on = True
        self.acc = qd.field(qd.f32, shape=n)

    @qd.func
    def apply(self, i):
        self.acc[i] += self.w * {hw}


class Handlers(list):  # Genesis' gs.List
    pass


@qd.data_oriented
class Solver:
    def __init__(self, n):
        self.lock = threading.Lock()  # no fingerprint describes it: keyed by its members
        self._handlers = Handlers([Handler(1.0, n), Handler({w2}, n)][:{nh}])
        self.index = list(range({nh}))
        self.pairs = Pair.field(shape=n)

    @property
    def handlers(self):  # as Genesis' solvers give their entities
        return self._handlers

    @qd.kernel
    def run(self):
        g = qd.static(self.pairs.info.g)  # a struct field's member, bound to a local
        for i in range(self.pairs.shape[0]):
            for h in qd.static(self.handlers):
                h.apply(i)
            for k in qd.static(self.index):
                if qd.static(self.handlers[k].on):
                    self.handlers[k].apply(i)
            g[i] += 0.5
            each(bump, i, self)


solver = Solver({n})
solver.run()
print(json.dumps([
    [h.acc.to_numpy().tolist() for h in solver.handlers],
    solver.pairs.info.g.to_numpy().tolist(),
    solver.pairs.a.to_numpy().tolist(),
    Solver.run._primal.per_offload_cache_observations.frontend_constructs_total,
]))
"""

DEFAULT = {"n": 3, "hw": 1.0, "w2": 2.0, "nh": 2, "bump": 1.0}


def run(folder: Path, **changes: float) -> int:
    v = {**DEFAULT, **changes}
    (folder / "helpers.py").write_text(textwrap.dedent(HELPERS))
    (folder / "main.py").write_text(textwrap.dedent(PROGRAM).format(**v))
    handlers, g, a, total = run_main(folder)
    n = int(v["n"])
    assert handlers == [[2 * w * v["hw"]] * n for w in [1.0, v["w2"]][: int(v["nh"])]]
    assert g == [0.5] * n
    assert a == [v["bump"]] * n
    return total


def test_a_kernel_reading_through_items_is_served_and_never_stale(tmp_path: Path) -> None:
    assert run(tmp_path) != -1  # compiled
    assert run(tmp_path) == -1  # a new process: served, nothing lowered
    for change in ({"hw": 3.0}, {"w2": 5.0}, {"nh": 1}, {"bump": 2.0}, {"n": 4}):
        assert run(tmp_path, **change) != -1, change  # what it read changed: compiled again
    assert run(tmp_path) == -1  # the first variant still holds


def test_an_item_replaced_or_added_is_a_new_variant() -> None:
    import qdlab as qd

    qd.init(arch=qd.cpu, offline_cache=False)

    @qd.data_oriented
    class Handler:
        def __init__(self, w: float) -> None:
            self.w = w
            self.acc = qd.field(qd.f32, shape=2)

        @qd.func
        def apply(self, i):
            self.acc[i] += self.w

    @qd.data_oriented
    class Solver:
        def __init__(self) -> None:
            self.handlers = [Handler(1.0), Handler(2.0)]

        @qd.kernel
        def run(self):
            for i in range(2):
                for h in qd.static(self.handlers):
                    h.apply(i)

    s = Solver()
    s.run()
    s.handlers[1].w = 5.0  # a number read through an item: baked per instance, as in Quadrants
    s.run()
    assert [h.acc.to_numpy().tolist() for h in s.handlers] == [[2.0, 2.0], [4.0, 4.0]]
    s.handlers[0] = Handler(3.0)  # another object at the same index (Quadrants runs the code
    s.handlers.append(Handler(4.0))  # of the old list: qdlab compiles anew, reading them now)
    s.run()
    got = [h.acc.to_numpy() for h in s.handlers]
    np.testing.assert_array_equal(got, [[3.0, 3.0], [9.0, 9.0], [4.0, 4.0]])
