"""What Genesis' solvers reach for on the host, with Quadrants' semantics (issue 37): `qd.Layout`
on every kind of field (it moves components in memory, never a value), a shape given as a NumPy
array, `range` or NumPy integers, and `qd.lang.impl.get_max_shared_memory_bytes` on the CPU. Each
was checked on quadrants 1.3.3 first; the values here are what it gives."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import qdlab as qd
from qdlab.host import state


def test_layout_is_quadrants_enum_and_changes_no_value() -> None:
    assert [m.name for m in qd.Layout] == ["AOS", "SOA", "NULL"]
    assert qd.lang.Layout is qd.Layout is qd.types.enums.Layout
    qd.init(arch=qd.cpu)

    @qd.dataclass
    class P:
        x: qd.types.vector(3, qd.f32)
        m: qd.f32

    soa = qd.Vector.field(3, qd.f32, shape=(4, 2), layout=qd.Layout.SOA)
    aos = qd.Vector.field(3, qd.f32, shape=(4, 2), layout=qd.Layout.AOS)
    s = P.field(shape=(4,), layout=qd.Layout.SOA)
    plain = qd.field(qd.f32, shape=(4,), layout=qd.Layout.SOA)

    @qd.kernel
    def fill():
        for i, j in soa:
            soa[i, j] = qd.Vector([i, j, i * j])
            aos[i, j] = soa[i, j] * 2.0
        for i in s:
            s[i].x = soa[i, 1]
            s[i].m = i + 0.5
            plain[i] = s[i].m + s[i].x[2]

    fill()
    i, j = np.meshgrid(np.arange(4), np.arange(2), indexing="ij")
    want = np.stack([i, j, i * j], axis=-1).astype(np.float32)
    np.testing.assert_array_equal(soa.to_numpy(), want)
    np.testing.assert_array_equal(aos.to_numpy(), 2 * want)
    np.testing.assert_array_equal(s.x.to_numpy(), want[:, 1])
    np.testing.assert_array_equal(plain.to_numpy(), np.arange(4) + 0.5 + np.arange(4))


@pytest.mark.parametrize(
    "shape, want",
    [
        (np.array([2, 3], dtype=np.int32), (2, 3)),
        (np.array([5], dtype=np.int64), (5,)),
        (np.int64(3), (3,)),
        ((np.int32(2), 3), (2, 3)),
        (range(2, 4), (2, 3)),
    ],
)
def test_a_shape_may_be_numpy_integers_or_a_range(shape: object, want: tuple) -> None:
    qd.init(arch=qd.cpu)
    assert qd.field(qd.f32, shape=shape).shape == want
    assert qd.Vector.field(2, qd.i32, shape=shape).shape == want
    assert qd.ndarray(qd.f32, shape=shape).shape == want


@pytest.mark.parametrize("shape", [np.array(4), np.array([2.0, 3.0]), 2.0, np.array([2, 0])])
def test_a_shape_that_is_not_positive_integers_is_refused(shape: object) -> None:
    qd.init(arch=qd.cpu)
    with pytest.raises((qd.QdValueError, qd.QdRuntimeError)):
        qd.field(qd.f32, shape=shape)


def test_max_shared_memory_on_the_cpu() -> None:
    qd.init(arch=qd.cpu)
    assert qd.lang.impl.get_max_shared_memory_bytes(is_lowerbound_ok=True) == 0
    with pytest.raises(RuntimeError, match="not implemented for arch x64"):
        qd.lang.impl.get_max_shared_memory_bytes(is_lowerbound_ok=False)


@qd.data_oriented
class Material:
    def __init__(self, k: float) -> None:
        self.k = k
        self.update = self._scale if k > 0 else self._shift  # Genesis' MPM materials do this

    @qd.func
    def _scale(self, x):
        return x * self.k

    @qd.func
    def _shift(self, x):
        return x - self.k


@qd.data_oriented
class Solver:
    def __init__(self) -> None:
        self.materials = [Material(2.0), Material(-3.0)]
        self.updates = [m.update for m in self.materials]  # bound funcs held in a list
        self.out = qd.field(qd.f32, shape=(2, 3))
        self.own = self.scaled

    @qd.func
    def scaled(self, x):
        return x * 10.0

    @qd.kernel
    def run(self, a: qd.types.ndarray(qd.f32, 1)):
        for i in range(3):
            for m in qd.static(range(2)):
                self.out[m, i] = self.updates[m](x=a[i]) + self.own(a[i])


def test_a_bound_func_keeps_its_object_wherever_it_is_kept() -> None:
    """`obj.f` of a `@qd.func` method is bound, as Quadrants binds it: kept in a list or an
    attribute and called in a kernel, its `self` is `obj` (values from quadrants 1.3.3)."""
    qd.init(arch=qd.cpu)
    assert (
        Material(1.0).update.__self__ is not None and Material._scale is Material.__dict__["_scale"]
    )
    glob = Material(4.0)
    res = qd.field(qd.f32, shape=3)

    @qd.kernel
    def use_global(a: qd.types.ndarray(qd.f32, 1)):
        for i in range(3):
            res[i] = glob.update(a[i]) + glob._shift(1.0)

    s = Solver()
    a = np.array([1.0, 2.0, 3.0], np.float32)
    s.run(a)
    assert s.out.to_numpy().tolist() == [[12.0, 24.0, 36.0], [14.0, 25.0, 36.0]]
    compiled = state.compiled_count
    s.run(a)
    assert state.compiled_count == compiled  # bound funcs key the launch by func and object
    s.materials[0].k = 5.0  # baked for this solver, as in Quadrants (its first code runs)
    s.run(a)
    assert s.out.to_numpy().tolist() == [[12.0, 24.0, 36.0], [14.0, 25.0, 36.0]]
    assert state.compiled_count == compiled
    use_global(a)
    assert res.to_numpy().tolist() == [1.0, 5.0, 9.0]
    with pytest.raises(RuntimeError, match="can only be called from a kernel"):
        glob.update(1.0)


@qd.func
def three():
    return 3


@qd.func
def pairs(k: qd.template()):
    return qd.ndrange(k, 2)


@qd.data_oriented
class Stencil:
    def __init__(self) -> None:
        self.out = qd.field(qd.i32, shape=())

    @qd.func
    def stencil(self):
        return qd.ndrange(2, 3)

    @qd.kernel
    def run(self):
        for o in qd.static(qd.grouped(self.stencil())):  # Genesis' MPM p2g / g2p
            self.out[None] += o[0] * 10 + o[1]
        for _ in qd.static(range(three())):
            self.out[None] += 1000
        for a, b in qd.static(pairs(2)):
            self.out[None] += 100000 * (a + b)


def test_a_func_called_in_qd_static_is_inlined_for_its_compile_time_result() -> None:
    """Quadrants builds `qd.static`'s argument as any expression, so a `@qd.func` returning a
    `qd.ndrange` (or a number) may be called there; quadrants 1.3.3 gives 403036."""
    qd.init(arch=qd.cpu)
    s = Stencil()
    s.run()
    assert s.out[None] == 403036
    compiled = state.compiled_count
    s.run()  # the method path `self.stencil` keys the launch by its func: no compile
    assert s.out[None] == 2 * 403036 and state.compiled_count == compiled

    @qd.func
    def runtime(x):
        return x + 1

    @qd.kernel
    def bad(x: qd.i32) -> qd.i32:
        t = 0
        for i in qd.static(range(runtime(x))):
            t += i
        return t

    with pytest.raises(qd.QuadrantsCompilationError, match="known while compiling"):
        bad(2)


def test_a_python_list_is_indexed_by_an_entry_of_a_static_vector() -> None:
    """MPM's quadratic B-spline weights: `w[offset[d]][d]` with `offset` from
    `qd.static(qd.grouped(qd.ndrange(3, 3, 3)))`; quadrants 1.3.3 gives 4.200000286102295."""
    qd.init(arch=qd.cpu)
    out = qd.field(qd.f32, shape=())

    @qd.kernel
    def k(x: qd.types.ndarray(qd.f32, 1)):
        for _ in range(1):
            fx = qd.Vector([x[0], x[1], x[2]])
            w = [0.5 * (1.5 - fx) ** 2, 0.75 - (fx - 1) ** 2, 0.5 * (fx - 0.5) ** 2]
            for offset in qd.static(qd.grouped(qd.ndrange(3, 3, 3))):
                weight = 1.0
                for d in qd.static(range(3)):
                    weight *= w[offset[d]][d]
                out[None] += weight * (offset[0] + 2 * offset[1] + 3 * offset[2])

    k(np.array([0.3, 0.6, 0.9], np.float32))
    assert out[None] == 4.200000286102295


def test_ndrange_spreads_a_numpy_array() -> None:
    """`qd.ndrange(*solver.grid_res, B)` with `grid_res` a NumPy array (Genesis' MPM coupler);
    quadrants 1.3.3 sums the result to 726."""
    qd.init(arch=qd.cpu)
    res = np.array([2, 3], dtype=np.int32)
    out = qd.field(qd.i32, shape=(2, 3, 2))

    @qd.kernel
    def k():
        for i, j, b in qd.ndrange(*res, 2):
            out[i, j, b] = i * 100 + j * 10 + b

    k()
    assert out.to_numpy().sum() == 726


@qd.data_oriented
class Slots:
    def __init__(self) -> None:
        self.a = qd.field(qd.i32, shape=(4, 2))
        self.v = qd.Vector.field(3, qd.f32, shape=5)
        self.s = qd.field(qd.f32, shape=())

    @qd.func
    def reset(self, x):  # Genesis' spatial hasher clears its slots so
        self.a.fill(7)
        self.v.fill(x)
        self.s.fill(2.5)

    @qd.kernel
    def run(self, x: qd.f32):
        self.reset(x)
        for i in range(4):
            self.a[i, 1] += i


@pytest.mark.parametrize("split", [True, False])
def test_field_fill_in_a_kernel_is_a_loop_over_its_elements(split: bool) -> None:
    """`field.fill(v)` in a kernel, as quadrants 1.3.3 runs it (a loop before the next one)."""
    qd.init(arch=qd.cpu, per_offload=split)
    h = Slots()
    h.run(1.5)
    assert h.a.to_numpy().tolist() == [[7, 7], [7, 8], [7, 9], [7, 10]]
    assert h.v.to_numpy().tolist() == [[1.5] * 3] * 5
    assert h.s[None] == 2.5


def test_a_struct_field_member_fills_in_a_kernel() -> None:
    """`self.particles.active.fill(False)` (Genesis' SPH and PBD reorder kernels)."""
    qd.init(arch=qd.cpu)

    @qd.dataclass
    class P:
        active: qd.i32
        x: qd.f32

    ps = P.field(shape=(3,))
    ps.active.from_numpy(np.array([1, 0, 1], np.int32))

    @qd.kernel
    def reorder():
        ps.active.fill(False)
        for i in range(3):
            ps.x[i] = ps.active[i] + i

    reorder()
    assert ps.active.to_numpy().tolist() == [0, 0, 0]
    assert ps.x.to_numpy().tolist() == [0.0, 1.0, 2.0]


@qd.data_oriented
class Neighbours:
    @qd.func
    def for_all(self, i, ret: qd.template(), task: qd.template()):
        for j in range(4):
            if i != j:
                task(i, j, ret)


@qd.data_oriented
class Density:
    def __init__(self) -> None:
        self.sh = Neighbours()
        self.x = qd.field(qd.f32, shape=4)
        self.rho = qd.field(qd.f32, shape=4)
        self.w = 0.5

    @qd.func
    def _task(self, i, j, ret: qd.template()):
        ret += self.w * (self.x[i] - self.x[j]) ** 2

    @qd.func
    def add_one(self, ret: qd.template()):
        ret += 1.0

    @qd.kernel
    def run(self):
        for i in range(4):
            den = 0.0
            self.sh.for_all(i, den, self._task)  # Genesis' SPH: for_all_neighbors(..., den, task)
            self.add_one(den)
            self.rho[i] = den


@pytest.mark.parametrize("split", [True, False])
def test_a_method_writes_the_callers_local_through_a_template_parameter(split: bool) -> None:
    """A `qd.template()` parameter of a `@qd.func` method is the caller's own variable, as for a
    plain func, also when the method is passed on as a template and called there. Before this,
    qdlab passed the value (Genesis' SPH summed no neighbour: no pressure, no viscosity, the
    liquid fell as dust). quadrants 1.3.3 gives [24, 16, 12, 36]."""
    qd.init(arch=qd.cpu, per_offload=split)
    s = Density()
    s.x.from_numpy(np.array([0, 1, 3, 6], np.float32))
    s.run()
    assert s.rho.to_numpy().tolist() == [24.0, 16.0, 12.0, 36.0]


class Sub(np.ndarray):
    """A NumPy subclass: bound the slow way at every launch, as a torch tensor was."""


@qd.data_oriented
class Holder:
    def __init__(self) -> None:
        self.lock = threading.Lock()  # no fingerprint describes it (Genesis' solvers reach images)
        self.scale = 2
        self.out = qd.field(qd.i32, shape=4)

    @qd.kernel
    def run(self, a: qd.types.ndarray(qd.i32, 1)):
        for i in range(4):
            self.out[i] = a[i] * self.scale


def test_an_object_no_fingerprint_describes_is_keyed_by_what_its_kernels_read() -> None:
    """A data-oriented object that holds something no fingerprint describes, launched the slow
    way: once a compile has read its members, they key it, so it is not compiled at every launch
    (Genesis' FEM checkpoint kernel compiled at every step), and a member it reads still tells
    two variants apart."""
    qd.init(arch=qd.cpu)
    h = Holder()
    a = np.arange(4, dtype=np.int32).view(Sub)
    h.run(a)
    compiled = state.compiled_count
    for _ in range(3):
        h.run(a)
    assert state.compiled_count <= compiled + 1
    assert h.out.to_numpy().tolist() == [0, 2, 4, 6]
    other = Holder()
    other.scale = 3
    other.run(a)
    assert other.out.to_numpy().tolist() == [0, 3, 6, 9]


@qd.data_oriented
class Counter:
    def __init__(self) -> None:
        self.n = qd.field(qd.i32, shape=())

    @qd.func
    def bump(self) -> qd.i32:
        self.n[None] += 1
        return 1

    @qd.kernel
    def run(self):
        assert self.bump()


def test_an_assert_runs_the_method_it_calls_with_debug_off() -> None:
    """As in Quadrants, an `assert` whose test calls a `@qd.func` runs the call with debug off
    (the check is skipped): a method through `self` or through a global object too."""
    qd.init(arch=qd.cpu)
    c, g = Counter(), Counter()

    @qd.kernel
    def run_global():
        assert g.bump()

    c.run()
    run_global()
    assert (c.n[None], g.n[None]) == (1, 1)
