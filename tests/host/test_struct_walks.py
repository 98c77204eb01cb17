"""A struct argument's walk kept between binds (`struct_args.Walk`): an object a kernel reads by
what it holds is walked once, and the next kernel to bind it (or the same kernel, after a member
changed) is served that walk only while walking again would declare the same parameters. Each test
changes the object in one way the walk must see between two launches and checks the results
against NumPy; each would read stale parameter types if that change went unseen."""

from __future__ import annotations

import gc
import pickle
import weakref

import numpy as np
import pytest

import qdlab as qd
from qdlab.host import struct_args


@qd.data_oriented
class Part:
    def __init__(self, dtype: object, value: float) -> None:
        self.x = qd.ndarray(dtype, shape=4)
        self.x.fill(value)


@qd.data_oriented
class Holder:
    def __init__(self) -> None:
        self.a = qd.ndarray(qd.f32, shape=4)
        self.a.from_numpy(np.arange(4, dtype=np.float32) + 0.5)
        self.inner = Part(qd.f32, 1.5)
        self.parts: list = [Part(qd.f32, 1.0)]
        self.later: list = []
        self.out = qd.ndarray(qd.f64, shape=4)

    @qd.kernel
    def read_a(self):
        for i in range(4):
            self.out[i] = self.a[i] * 2

    @qd.kernel
    def read_inner(self):
        for i in range(4):
            self.out[i] = self.inner.x[i] * 2

    @qd.kernel
    def sum_parts(self):
        for i in range(4):
            self.out[i] = 0
            for p in qd.static(self.parts):
                self.out[i] += p.x[i]

    @qd.kernel
    def sum_later(self):
        for i in range(4):
            self.out[i] = 0
            for p in qd.static(self.later):
                self.out[i] += p.x[i]


def out(h: Holder) -> np.ndarray:
    return h.out.to_numpy()


@pytest.fixture(autouse=True)
def _runtime() -> None:
    qd.init(arch=qd.cpu)


def test_a_walk_is_served_to_the_next_kernel_while_nothing_changed(monkeypatch) -> None:
    h = Holder()
    classified = []
    untyped = struct_args.StructArg.untyped
    monkeypatch.setattr(
        struct_args.StructArg,
        "untyped",
        lambda self, owner, *a: classified.append(owner) or untyped(self, owner, *a),
    )
    h.read_a()
    assert h in classified and h.parts[0] in classified
    classified.clear()
    h.read_inner()  # another kernel of the same object: its walk is served
    assert classified == []
    np.testing.assert_array_equal(out(h), np.full(4, 3.0))
    h.later.append(Part(qd.f32, 0.0))
    h.sum_later()  # walked again: `h` changed (a list it holds), its parts did not
    assert h in classified and h.later[0] in classified
    assert h.parts[0] not in classified and h.inner not in classified
    assert "self.later[0].x" in dict(struct_args._walks.get(h).items)


def test_an_ndarray_rebound_to_another_dtype_is_declared_anew() -> None:
    h = Holder()
    h.read_a()
    np.testing.assert_array_equal(out(h), (np.arange(4) + 0.5) * 2)
    h.read_inner()  # binds `h` again through the kept walk
    h.a = qd.ndarray(qd.i32, shape=4)
    h.a.from_numpy(np.array([7, 8, 9, 10], np.int32))
    h.read_a()
    np.testing.assert_array_equal(out(h), [14, 16, 18, 20])


def test_a_nested_struct_rebound_is_declared_anew() -> None:
    h = Holder()
    h.read_inner()
    np.testing.assert_array_equal(out(h), np.full(4, 3.0))
    h.inner = Part(qd.i64, 2**40)
    h.read_inner()
    np.testing.assert_array_equal(out(h), np.full(4, 2.0**41))


def test_a_member_ndarray_of_a_nested_struct_rebound_is_declared_anew() -> None:
    h = Holder()
    h.read_inner()
    h.inner.x = qd.ndarray(qd.i32, shape=4)
    h.inner.x.from_numpy(np.array([1, 2, 3, 4], np.int32))
    h.read_inner()
    np.testing.assert_array_equal(out(h), [2, 4, 6, 8])


def test_a_list_of_structs_grown_in_place_is_walked_again() -> None:
    h = Holder()
    h.sum_parts()
    np.testing.assert_array_equal(out(h), np.full(4, 1.0))
    h.parts.append(Part(qd.i32, 5))
    h.sum_parts()
    np.testing.assert_array_equal(out(h), np.full(4, 6.0))
    kept = h.parts[0]  # alive: only the list tells the walk of the change
    h.parts[0] = Part(qd.i64, 3)  # an item replaced in place
    h.sum_parts()
    np.testing.assert_array_equal(out(h), np.full(4, 8.0))
    assert kept.x.dtype == qd.f32


def test_an_empty_list_that_gains_structs_is_walked_again() -> None:
    h = Holder()
    h.sum_later()
    np.testing.assert_array_equal(out(h), np.zeros(4))
    h.later.append(Part(qd.i32, 4))
    h.later.append(Part(qd.f32, 0.25))
    h.sum_later()
    np.testing.assert_array_equal(out(h), np.full(4, 4.25))


def test_a_kept_walk_holds_nothing_it_visited() -> None:
    h = Holder()
    h.read_a()
    h.sum_parts()
    assert struct_args._walks.get(h) is not None
    gone = weakref.ref(h)
    part = weakref.ref(h.parts[0])
    del h
    gc.collect()
    assert gone() is None and part() is None


def test_a_walk_whose_ndarray_died_is_not_served() -> None:
    h = Holder()
    h.read_a()
    walk, known = struct_args._walks.get(h), struct_args._known.get(h)
    assert walk is not None and walk.holds() and known.check() is not None
    h.a = qd.ndarray(qd.f32, shape=4)  # the old one is freed: its id may be reused
    h.read_a()  # the same launch key: not bound again
    gc.collect()
    assert not known.live and known.check() is None and not walk.holds()
    h.read_inner()  # bound: walked again
    kept = struct_args._walks.get(h)
    assert kept is not walk and kept.holds()
    struct_args._known.get(h)._dead(weakref.ref(h))  # as when what it read dies
    assert not kept.holds()


def test_a_member_added_after_the_walk_is_declared_with_its_type() -> None:
    @qd.data_oriented
    class Grows:
        def __init__(self) -> None:
            self.out = qd.ndarray(qd.f64, shape=2)
            self.p = qd.ndarray(qd.f32, shape=2)
            self.p.fill(2.0)

        @qd.kernel
        def first(self):
            self.out[0] = self.p[0]

        @qd.kernel
        def second(self):
            self.out[1] = self.q[1] * 3

    g = Grows()
    g.first()
    g.q = qd.ndarray(qd.f32, shape=2)  # type: ignore[attr-defined]
    g.q.fill(2.0)  # type: ignore[attr-defined]
    g.second()
    assert g.out.to_numpy()[1] == 6.0
    g.q = qd.ndarray(qd.i32, shape=2)  # type: ignore[attr-defined]
    g.q.fill(5)  # type: ignore[attr-defined]
    g.second()  # a new variant, for an i32 member
    np.testing.assert_array_equal(g.out.to_numpy(), [2.0, 15.0])


def test_member_parameters_hash_once_and_pickle_without_their_hash() -> None:
    params = struct_args.MemberParams((("self.x", qd.f32), ("self.y", qd.i32)))
    assert hash(params) == hash(tuple(params)) and repr(params) == repr(tuple(params))
    assert params.__dict__.keys() == {"hash", "repr"}  # made once, kept
    back = pickle.loads(pickle.dumps(params))
    assert type(back) is struct_args.MemberParams and back == params
    assert "hash" not in back.__dict__  # a string's hash is of its process
