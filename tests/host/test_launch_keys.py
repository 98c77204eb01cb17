"""Launch keys of a struct's compile-time members (`struct_args.launch_key`): a small numeric NumPy
array and a `qd.Vector` / `qd.Matrix` of one are keyed by dtype, shape and bytes instead of the
general fingerprint, and a `qd.Tensor` by what it wraps, not its data. A member changed in place
still compiles anew, an unchanged one does not, and results equal those of the general
description (the fast path turned off)."""

from __future__ import annotations

import enum
import threading

import numpy as np
import pytest

import qdlab as qd
from qdlab.host import struct_args


@qd.data_oriented
class Solver:
    def __init__(self) -> None:
        self.offset = np.array([1, 2, 3], np.int32)  # read at compile time: baked in
        self.gravity = qd.Vector([0.0, 0.0, -9.5])
        self.scale = qd.Matrix([[2.0, 0.0], [0.0, 3.0]])
        self.g = qd.Tensor(qd.Vector.field(3, qd.f32, shape=()))  # run-time data
        self.out = qd.field(qd.f32, shape=8)

    @qd.kernel
    def step(self):
        for i in qd.static(range(3)):
            self.out[i] = self.offset[i] + self.gravity[i]
        self.out[3] = self.scale[0, 0] + self.scale[1, 1]
        self.out[4] += self.g[None][0]


def run(s: Solver) -> list[np.ndarray]:
    """The kernel's output after each of a sequence of launches, members changed between them."""
    seen = []
    for k in range(6):
        if k == 2:
            s.offset[1] = 20  # in place
        if k == 3:
            s.gravity = qd.Vector([0.0, 1.0, -9.5])
        if k == 4:
            s.scale.entries[1, 1] = 5.0  # in place
        if k == 5:
            s.offset = s.offset.astype(np.float64) + 0.5  # another dtype
        s.g[None] = [float(k), 0.0, 0.0]  # data only: no new variant
        s.step()
        seen.append(s.out.to_numpy().copy())
    return seen


def test_members_changed_in_place_recompile_and_match_the_general_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    qd.init(arch=qd.cpu)
    fast = run(Solver())
    variants = len(Solver.step.specializations)  # type: ignore[attr-defined]
    assert variants == 5  # the first, and one per compile-time change (k = 2, 3, 4, 5)
    assert fast[0][:5].tolist() == [1.0, 2.0, -6.5, 5.0, 0.0]
    assert fast[2][:5].tolist() == [1.0, 20.0, -6.5, 5.0, 0.0 + 1.0 + 2.0]
    assert fast[4][:4].tolist() == [1.0, 21.0, -6.5, 7.0]
    assert fast[5][:3].tolist() == [1.5, 21.5, -6.0]
    qd.init(arch=qd.cpu)
    monkeypatch.setattr(struct_args, "numbers", lambda a: None)  # the general description
    slow = run(Solver())
    for a, b in zip(fast, slow):
        np.testing.assert_array_equal(a, b)


def test_tensor_data_makes_no_variant() -> None:
    qd.init(arch=qd.cpu)
    s = Solver()
    s.step()
    before = len(Solver.step.specializations)  # type: ignore[attr-defined]
    for k in range(4):
        s.g[None] = [float(k), 1.0, 2.0]
        s.step()
    assert len(Solver.step.specializations) == before  # type: ignore[attr-defined]
    assert s.out[4] == 0.0 + 1.0 + 2.0 + 3.0


def test_launch_key_distinctions() -> None:
    key = struct_args.launch_key
    a = np.array([1, 2, 3], np.int32)
    assert key(a) == key(a.copy())
    assert key(a) != key(a.astype(np.int64))
    assert key(a) != key(a.reshape(1, 3))
    assert key(np.array([0.0])) != key(np.array([-0.0]))
    assert key(a[::2]) == key(np.array([1, 3], np.int32))  # the elements, not the buffer
    v = qd.Vector([1.0, 2.0])
    assert key(v) == key(qd.Vector([1.0, 2.0])) != key(qd.Vector([1.0, 2.5]))
    assert key(v) != key(qd.Vector([1.0, 2.0], qd.f32))  # its dtype
    assert key(v) != key(qd.Matrix([[1.0], [2.0]]))
    v.extra = 1  # type: ignore[attr-defined]  # anything else it holds: the general description
    assert key(v) == struct_args.template_key(v)
    objects = np.array([1, "a"], dtype=object)
    assert key(objects) == struct_args.template_key(objects)
    big = np.zeros(struct_args.NUMBER_BYTES // 8 + 1)
    assert key(big) == struct_args.template_key(big)


@qd.data_oriented
class Material:
    def __init__(self, k: float) -> None:
        self.k = k
        self.table = {"pad": list(range(50))}  # content the old key described at every launch

    @qd.func
    def stress(self, x):
        return x * self.k


@qd.data_oriented
class Holder:
    def __init__(self, materials: list) -> None:
        self.fns = [m.stress for m in materials]
        self.out = qd.field(qd.f32, shape=len(materials))

    @qd.kernel
    def run(self, x: qd.f32):
        for i in qd.static(range(len(self.fns))):
            self.out[i] = self.fns[i](x)


def test_funcs_bound_to_a_data_oriented_object_are_keyed_by_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A list of funcs bound to data-oriented objects, held by the kernel's data-oriented `self`:
    keyed by each func and its object's instance token, never by the object's content (what a
    Genesis MPM step spent most of its time on), its primitives baked as the holder's are."""
    qd.init(arch=qd.cpu)
    a, b = Material(2.0), Material(3.0)
    h = Holder([a, b])
    h.run(1.0)

    def described(v: object) -> str:
        raise AssertionError(f"described by content at launch: {v!r}")

    monkeypatch.setattr(struct_args, "content", described)
    a.k = 10.0  # baked, as in Quadrants (tests/compat/programs/bound_funcs.py)
    h.run(2.0)
    assert h.out.to_numpy().tolist() == [4.0, 6.0]
    assert len(Holder.run.specializations) == 1  # type: ignore[attr-defined]
    monkeypatch.undo()
    h.fns[0] = Material(5.0).stress  # another object: another variant
    h.run(1.0)
    assert h.out.to_numpy().tolist() == [5.0, 3.0]
    assert len(Holder.run.specializations) == 2  # type: ignore[attr-defined]


def test_short_lists_of_numbers_are_keyed_by_their_values() -> None:
    key = struct_args.launch_key
    assert key([0, 1]) == key([0, 1]) != key([0, 2])
    assert key([1]) != key([True]) != key([1.0])  # their types too
    assert key([0.0]) != key([-0.0])  # as the general description tells them apart
    assert key([1, 2]) != key((1, 2))
    assert key(list(range(struct_args.SMALL_LIST + 1))) == struct_args.template_key(
        list(range(struct_args.SMALL_LIST + 1))
    )
    assert key([1, "a"]) == struct_args.template_key([1, "a"])


class Mode(enum.Enum):
    ADD = 1
    SUB = 2


@qd.data_oriented
class Switches:
    def __init__(self) -> None:
        self.mode = Mode.ADD
        self.src = qd.field(qd.f32, shape=4)
        self.other = qd.field(qd.f32, shape=4)
        self.tag = "a"
        self.out = qd.field(qd.f32, shape=4)

    @qd.kernel
    def run(self):
        for i in range(4):
            if qd.static(self.mode == Mode.ADD and self.tag == "a"):
                self.out[i] += self.src[i]
            else:
                self.out[i] -= self.src[i]


def test_members_that_cannot_change_are_not_described_again(monkeypatch) -> None:
    """A field, an enum member or a string on `self` keys the launch by what it is; while the
    member is the same object its part of the key is reused (Genesis' solvers hold hundreds), and
    another object in its place is keyed anew (Quadrants keeps running the instance's first code
    there: docs/known-limits.md)."""
    qd.init(arch=qd.cpu)
    s = Switches()
    s.src.from_numpy(np.arange(4, dtype=np.float32))
    s.other.fill(10.0)
    s.run()
    described = []
    original = struct_args.template_key
    monkeypatch.setattr(struct_args, "template_key", lambda v: described.append(v) or original(v))
    for _ in range(3):
        s.run()
    assert described == []
    assert s.out.to_numpy().tolist() == [0.0, 4.0, 8.0, 12.0]
    s.src = s.other  # another field: keyed anew
    s.run()
    assert s.out.to_numpy().tolist() == [10.0, 14.0, 18.0, 22.0]
    s.mode = Mode.SUB  # another enum member: a new variant
    s.run()
    assert s.out.to_numpy().tolist() == [0.0, 4.0, 8.0, 12.0]


def test_a_bound_func_read_again_is_the_same_member() -> None:
    """`self.f` is a new BoundFunc at each read: the launch-key memo takes one bound to the same
    object as the same member, and one of another object or func as another."""
    a, b = Material(1.0), Material(1.0)
    assert a.stress is not a.stress and struct_args.same(a.stress, a.stress)
    assert not struct_args.same(a.stress, b.stress)
    assert struct_args.same(3, 3) and not struct_args.same(a.stress, Material.stress)


def _check_cases() -> list[tuple[str, object, object, list]]:
    """(name, summary function, value, mutations): each mutation changes the value in place."""
    a, b = Material(1.0), Material(2.0)
    f1, f2 = qd.field(qd.f32, shape=2), qd.field(qd.f32, shape=2)
    return [
        (
            "array",
            struct_args.launch_key,
            np.array([1, 2, 3], np.int32),
            [
                lambda v: v.__setitem__(1, 20),
                lambda v: setattr(v, "shape", (3, 1)),
                lambda v: setattr(v, "dtype", np.uint32),
            ],
        ),
        (
            "vector",
            struct_args.launch_key,
            qd.Vector([1.0, 2.0]),
            [
                lambda v: v.entries.__setitem__(0, 5.0),
                lambda v: setattr(v, "entries", np.array([7.0, 2.0])),
                lambda v: setattr(v, "dt", qd.f32),
                lambda v: setattr(v, "extra", 1),
            ],
        ),
        (
            "matrix",
            struct_args.launch_key,
            qd.Matrix([[1.0, 0.0], [0.0, 1.0]]),
            [
                lambda v: v.entries.__setitem__((1, 1), 3.0),
            ],
        ),
        (
            "numbers",
            struct_args.launch_key,
            [1, 2.5, True],
            [
                lambda v: v.__setitem__(2, False),
                lambda v: v.append(4),
                lambda v: v.__setitem__(0, 1.0),
            ],
        ),
        (
            "bound funcs",
            struct_args.baked,
            [a.stress, b.stress],
            [
                lambda v: v.__setitem__(0, b.stress),
                lambda v: v.pop(),
            ],
        ),
        (
            "field tensor",
            struct_args.launch_key,
            qd.Tensor(f1),
            [
                lambda v: setattr(v, "_impl", f2),
            ],
        ),
    ]


@pytest.mark.parametrize("case", range(6))
def test_a_member_tested_unchanged_has_the_part_it_had(case: int) -> None:
    """`Paths.by_path` tests a member described by content (`struct_args.unchanged_check`) instead
    of describing it again: the test passes only while the description is still the same, and
    fails after each change in place (the tests above and below run kernels)."""
    qd.init(arch=qd.cpu)
    name, summarize, value, mutations = _check_cases()[case]
    part = summarize(value)
    unchanged = struct_args.unchanged_check(value, part)
    assert unchanged is not None, name
    assert unchanged(value)
    for k, mutate in enumerate(mutations):
        name, summarize, value, mutations = _check_cases()[case]  # each change to a fresh value
        part = summarize(value)
        unchanged = struct_args.unchanged_check(value, part)
        assert unchanged is not None
        mutations[k](value)
        assert summarize(value) != part, (name, k)  # a change the launch key sees
        assert not unchanged(value), (name, k)


def test_list_members_changed_in_place_recompile() -> None:
    """A data-oriented object's list of numbers and list of bound funcs, changed in place between
    launches of the same objects: each change compiles anew (the launch key's memo tests them)."""
    qd.init(arch=qd.cpu)
    a, b = Material(2.0), Material(3.0)
    h = Holder([a, b])
    h.run(1.0)
    h.run(1.0)
    h.fns[1] = a.stress  # in place
    h.run(1.0)
    assert h.out.to_numpy().tolist() == [2.0, 2.0]
    h.fns.append(b.stress)  # longer than the field: the third write is out of its range
    h.fns.pop()
    h.fns[0] = b.stress
    h.run(1.0)
    assert h.out.to_numpy().tolist() == [3.0, 2.0]


@qd.data_oriented
class Handler:
    def __init__(self, k: float) -> None:
        self.k = k
        self.lock = threading.Lock()  # content no fingerprint describes (a solver, an image)

    @qd.func
    def apply(self, x):
        return x * self.k


@qd.data_oriented
class Coupler:
    def __init__(self, handlers: list) -> None:
        self.handlers = handlers
        self.out = qd.field(qd.f32, shape=len(handlers))

    @qd.kernel
    def run(self, x: qd.f32):
        for i in qd.static(range(len(self.handlers))):
            self.out[i] = self.handlers[i].apply(x)


def test_data_oriented_objects_beyond_description_are_keyed_by_identity() -> None:
    """A list of data-oriented objects whose content no fingerprint describes (Genesis' SAP
    coupler iterates its contact handlers, each holding a solver): keyed by each object's identity,
    as Quadrants keys a data-oriented object, instead of a key never equal to another (each launch
    compiled the kernel again: a SAP step compiled its PCG kernel at each of its iterations); a
    handler swapped in place is another variant."""
    qd.init(arch=qd.cpu)
    a, b = Handler(2.0), Handler(3.0)
    c = Coupler([a, b])
    for x in (1.0, 2.0, 3.0):
        c.run(x)
        assert c.out.to_numpy().tolist() == [2.0 * x, 3.0 * x]
    assert len(Coupler.run.specializations) == 1  # type: ignore[attr-defined]
    c.handlers[1] = Handler(5.0)
    c.run(1.0)
    assert c.out.to_numpy().tolist() == [2.0, 5.0]
    assert len(Coupler.run.specializations) == 2  # type: ignore[attr-defined]
    c.run(2.0)
    assert len(Coupler.run.specializations) == 2  # type: ignore[attr-defined]


HANDLERS_PROGRAM = """
import sys, threading
import qdlab as qd
qd.init(arch=qd.cpu, offline_cache=True, offline_cache_file_path=sys.argv[2])

@qd.data_oriented
class Handler:
    def __init__(self, k):
        self.k = k
        self.lock = threading.Lock()

    @qd.func
    def apply(self, x):
        return x * self.k

@qd.data_oriented
class Coupler:
    def __init__(self, handlers):
        self.handlers = handlers
        self.out = qd.field(qd.f32, shape=2)

    @qd.kernel
    def run(self, x: qd.f32):
        for h in qd.static(self.handlers):
            self.out[0] += h.apply(x)

out = qd.field(qd.f32, shape=2)

@qd.kernel
def each(hs: qd.template(), x: qd.f32):
    for i in qd.static(range(len(hs))):
        out[i] = hs[i].apply(x)

k = float(sys.argv[1])
hs = [Handler(k), Handler(k + 1)]
c = Coupler(hs)
c.run(1.0)
each(hs, 1.0)
print(c.out.to_numpy()[0], out.to_numpy().tolist())
"""


@pytest.mark.process
def test_objects_keyed_by_identity_are_not_served_to_another_process(tmp_path) -> None:
    """Instance tokens are numbered alike in every process: a kernel keyed by one (a member list
    of handlers, a template list of them) is compiled again in a new process whose handlers hold
    other values, never served from the disk cache."""
    import subprocess
    import sys

    script = tmp_path / "handlers.py"
    script.write_text(HANDLERS_PROGRAM)
    outs = []
    for k in (2, 5, 5):
        run = subprocess.run(
            [sys.executable, str(script), str(k), str(tmp_path / "cache")],
            capture_output=True,
            text=True,
            check=True,
        )
        outs.append(run.stdout.strip())
    assert outs == ["5.0 [2.0, 3.0]", "11.0 [5.0, 6.0]", "11.0 [5.0, 6.0]"]


@qd.data_oriented
class Materials:
    def __init__(self, materials: list) -> None:
        self.mats = materials
        self.out = qd.field(qd.f32, shape=len(materials))

    @qd.kernel
    def run(self, x: qd.f32):
        for i in qd.static(range(len(self.mats))):
            self.out[i] = self.mats[i].stress(x)


def test_a_list_of_data_oriented_objects_is_keyed_by_identity(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A data-oriented object's list of other data-oriented objects (Genesis' FEM materials):
    keyed by each object's token, never described by content at a launch (the FEM and SAP
    kernels described their materials at each of thousands of launches a step); their primitives
    baked as the holder's are (`tests/compat/programs/bound_funcs.py`), an item replaced in place
    another variant."""
    qd.init(arch=qd.cpu)
    h = Materials([Material(2.0), Material(3.0)])
    h.run(1.0)

    def described(v: object) -> str:
        raise AssertionError(f"described by content at launch: {v!r}")

    monkeypatch.setattr(struct_args, "content", described)
    h.run(2.0)
    assert h.out.to_numpy().tolist() == [4.0, 6.0]
    monkeypatch.undo()
    h.mats[0] = Material(5.0)
    h.run(1.0)
    assert h.out.to_numpy().tolist() == [5.0, 3.0]
    assert len(Materials.run.specializations) == 2  # type: ignore[attr-defined]
