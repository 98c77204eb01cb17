"""The primitive members (`int`, `float`, `bool`) of a `@qd.data_oriented` object: baked per
instance when a kernel first compiles for it (a later change is not seen by that instance, a new
instance with other values gets code of its own, never another's), and with
`template_primitives=False` scalar parameters read at every launch. Expected values were recorded
from Quadrants 1.3.3 on the same programs."""

from __future__ import annotations

import dataclasses
import gc

import numpy as np
import pytest

import qdlab as qd
from qdlab.host import struct_args


@qd.data_oriented
class Sim:
    def __init__(self, n: int, s: float, on: bool) -> None:
        self.n, self.s, self.on = n, s, on
        self.x = qd.field(qd.f32, shape=8)

    @qd.kernel
    def run(self):
        for i in range(self.n):
            if self.on:
                self.x[i] += self.s


@qd.kernel
def step(s: qd.template()):
    for i in range(s.n):
        s.x[i] += s.s * 2


def test_baked_per_instance_as_quadrants() -> None:
    qd.init(arch=qd.cpu)
    a, b, c = Sim(3, 1.5, True), Sim(5, 2.0, False), Sim(3, 1.5, True)
    a.run()
    b.run()
    step(a)
    step(b)
    assert a.x.to_numpy().tolist() == [4.5] * 3 + [0.0] * 5
    assert b.x.to_numpy().tolist() == [4.0] * 5 + [0.0] * 3
    a.n, a.s, b.on = 7, -1.0, True  # baked: neither instance sees these
    a.run()
    b.run()
    step(a)
    assert a.x.to_numpy().tolist() == [9.0] * 3 + [0.0] * 5
    assert b.x.to_numpy().tolist() == [4.0] * 5 + [0.0] * 3
    c.run()  # equal to a's first values: a's first code, a's first answer
    assert c.x.to_numpy().tolist() == [1.5] * 3 + [0.0] * 5


@pytest.mark.parametrize("tier", ["memory", "disk"])
def test_two_instances_never_share_stale_code(tier: str, tmp_path, monkeypatch) -> None:
    """The instance made second, with other values, after the first compiled (in this process, or
    with the first's code on disk and the memory emptied by `qd.init`): its own values."""
    if tier == "disk":
        monkeypatch.setenv("QDLAB_CACHE_DIR", str(tmp_path))
    qd.init(arch=qd.cpu, offline_cache=tier == "disk")
    first = Sim(4, 1.0, True)
    first.run()
    if tier == "disk":
        qd.init(arch=qd.cpu, offline_cache=True)
        first = Sim(4, 1.0, True)
        first.run()  # served from the disk
    second = Sim(2, 5.0, True)
    second.run()
    assert first.x.to_numpy().tolist() == [1.0] * 4 + [0.0] * 4
    assert second.x.to_numpy().tolist() == [5.0] * 2 + [0.0] * 6


def test_a_new_object_at_a_dead_ones_address_is_keyed_anew() -> None:
    """Instance tokens come from a counter, never from `id()`: an object made where a collected one
    lived compiles its own values in."""
    qd.init(arch=qd.cpu)
    for n in range(1, 6):
        s = Sim(n, 1.0, True)
        s.run()
        assert s.x.to_numpy().sum() == n
        del s
        gc.collect()


def test_nested_dataclass_primitive_is_baked_with_its_object() -> None:
    @dataclasses.dataclass
    class P:
        k: int

    @qd.data_oriented
    class Holder:
        def __init__(self, k: int) -> None:
            self.p = P(k)
            self.out = qd.field(qd.i32, shape=1)

    @qd.kernel
    def read(h: qd.template()):
        h.out[0] = h.p.k

    qd.init(arch=qd.cpu)
    h = Holder(4)
    read(h)
    h.p.k = 9
    read(h)
    h.p = P(11)
    read(h)
    assert h.out.to_numpy()[0] == 4  # Quadrants: 4, 4, 4
    g = Holder(11)
    read(g)
    assert g.out.to_numpy()[0] == 11


def test_numpy_scalar_is_baked_even_when_primitives_are_lifted() -> None:
    @qd.data_oriented(template_primitives=False)
    class NpS:
        def __init__(self) -> None:
            self.v = np.int32(4)
            self.r = qd.field(qd.i32, shape=1)

    @qd.kernel
    def read(o: qd.template()):
        o.r[0] = o.v

    qd.init(arch=qd.cpu)
    o = NpS()
    read(o)
    o.v = np.int32(9)
    read(o)
    assert o.r.to_numpy()[0] == 4


@qd.data_oriented(template_primitives=False)
class Live:
    def __init__(self) -> None:
        self.n, self.g, self.neg = 2, 0.5, False
        self.o = qd.field(qd.f32, shape=8)

    @qd.kernel
    def run(self):
        for i in range(self.n):
            self.o[i] += self.g if not self.neg else -self.g


def test_lifted_primitives_are_read_at_every_launch_without_compiling() -> None:
    qd.init(arch=qd.cpu)
    live = Live()
    live.run()
    assert live.o.to_numpy().tolist() == [0.5, 0.5] + [0.0] * 6
    live.n, live.g, live.neg = 4, 3, 1  # an int where a float was, an int where a bool was
    live.run()
    assert live.o.to_numpy().tolist() == [-2.5, -2.5, -3.0, -3.0] + [0.0] * 4
    live.n = True
    live.run()
    assert live.o.to_numpy().tolist() == [-5.5, -2.5, -3.0, -3.0] + [0.0] * 4
    assert len(Live.run.variants) == 1
    live.n = 2.0  # a float where an integer was lifted: refused, never truncated
    with pytest.raises(TypeError, match="would truncate"):
        live.run()


def test_lifted_primitive_wraps_to_its_type_and_flag_is_the_roots() -> None:
    @qd.data_oriented(template_primitives=False)
    class Big:
        def __init__(self) -> None:
            self.v = 7
            self.r = qd.field(qd.i64, shape=1)

    @qd.data_oriented(template_primitives=False)
    class Inner:
        def __init__(self) -> None:
            self.v = 1

    @qd.data_oriented
    class Outer:  # the root's flag decides: Inner's primitives are baked here
        def __init__(self) -> None:
            self.inner = Inner()
            self.r = qd.field(qd.i32, shape=1)

    @qd.kernel
    def read(o: qd.template()):
        o.r[0] = o.v

    @qd.kernel
    def read_inner(o: qd.template()):
        o.r[0] = o.inner.v

    qd.init(arch=qd.cpu)
    b = Big()
    read(b)
    b.v = 2**33 + 5  # an i32 parameter (default_ip): wrapped, as Quadrants
    read(b)
    assert b.r.to_numpy()[0] == 5
    o = Outer()
    read_inner(o)
    o.inner.v = 5
    read_inner(o)
    assert o.r.to_numpy()[0] == 1


def test_lifted_primitive_in_static_names_the_cause() -> None:
    @qd.data_oriented(template_primitives=False)
    class S:
        def __init__(self) -> None:
            self.n = 2
            self.out = qd.field(qd.i32, shape=4)

    @qd.kernel
    def fill(s: qd.template()):
        for i in qd.static(range(s.n)):
            s.out[i] = 1

    qd.init(arch=qd.cpu)
    with pytest.raises(qd.QuadrantsSyntaxError, match="runtime kernel argument") as e:
        fill(S())
    assert "qd.static" in str(e.value) and "s.n" in str(e.value)


def test_only_the_members_read_are_parameters() -> None:
    @qd.data_oriented(template_primitives=False)
    class Wide:
        def __init__(self) -> None:
            for i in range(300):
                setattr(self, f"unused_{i}", i)
            self.used = 7
            self.out = qd.field(qd.i32, shape=1)

    @qd.kernel
    def read(w: qd.template()):
        w.out[0] = w.used

    qd.init(arch=qd.cpu)
    w = Wide()
    read(w)
    w.used = 11
    read(w)
    assert w.out.to_numpy()[0] == 11
    read_ = read.latest.members  # type: ignore[union-attr]
    assert [path for (_, path), kind in read_.items() if kind == "param"] == [("used",)]


def test_tokens_leave_with_their_objects_and_are_never_reused() -> None:
    class Obj:
        pass

    gc.collect()  # objects earlier tests dropped leave first
    before = len(struct_args._tokens)
    tokens = set()
    for _ in range(50):  # CPython gives a freed object's address to the next one made
        o = Obj()
        t = struct_args.instance_token(o)
        assert t == struct_args.instance_token(o) and t not in tokens
        tokens.add(t)
        del o
    gc.collect()
    assert len(struct_args._tokens) == before
    assert struct_args.instance_token(1.5) is None  # no weak references: keyed by value


def test_an_object_of_undescribable_content_is_keyed_by_the_values_it_holds() -> None:
    """A solver holding a lock (content no fingerprint describes) is keyed by the member paths its
    compiles read: instances holding equal values share one variant, other values compile theirs,
    and a change stays baked for the instance, as for any data-oriented object."""
    import threading

    @qd.data_oriented
    class Solver:
        def __init__(self, n: int) -> None:
            self.lock = threading.Lock()
            self.n = n
            self.out = qd.field(qd.i32, shape=1)

        @qd.kernel
        def run(self):
            self.out[0] = self.n * 10

    qd.init(arch=qd.cpu)
    a, b, c = Solver(1), Solver(2), Solver(1)
    for s in (a, b, c):
        s.run()
    assert [s.out.to_numpy()[0] for s in (a, b, c)] == [10, 20, 10]
    a.n = 5
    a.run()
    assert a.out.to_numpy()[0] == 10
    d = Solver(5)
    d.run()
    assert d.out.to_numpy()[0] == 50
    assert len(Solver.run.variants) <= 4
