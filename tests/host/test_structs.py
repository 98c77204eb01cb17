"""Struct arguments: dataclass parameters, data-oriented methods and template objects, each run
split and whole-kernel against NumPy; what a launch reads and keys; when a change recompiles."""

from __future__ import annotations

import dataclasses
import logging
import warnings

import numpy as np
import pytest

import qdlab as qd
from qdlab.core.errors import QdTypeError
from qdlab.viz import construct_graph

N = 64
F32 = qd.types.NDArray[qd.f32, 1]
V3 = qd.types.NDArray[qd.math.vec3, 1]


@pytest.fixture(autouse=True)
def _init() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)


@dataclasses.dataclass(frozen=True)
class Body:
    pos: V3
    vel: V3
    mass: F32


@dataclasses.dataclass(frozen=True)
class World:
    body: Body
    dt: qd.f32
    n: qd.i32
    scratch: F32
    """Never read by the kernels below."""


@qd.func
def advance(b: Body, i: qd.i32, dt: qd.f32):
    b.pos[i] += b.vel[i] * dt


@qd.kernel
def world_step(w: World, energy: F32):
    for i in range(w.n):
        w.body.vel[i] = w.body.vel[i] * 0.5 + qd.Vector([0.0, -9.8, 0.0]) * w.dt
    for i in range(w.n):
        advance(w.body, i, dt=w.dt)
    for i in range(w.n):
        energy[i] = 0.5 * w.body.mass[i] * w.body.vel[i].norm_sqr()


def make_world(rng: np.random.Generator) -> tuple[World, np.ndarray]:
    pos, vel = qd.ndarray(qd.math.vec3, N), qd.ndarray(qd.math.vec3, N)
    mass = qd.ndarray(qd.f32, N)
    pos.from_numpy(rng.random((N, 3), dtype=np.float32))
    vel.from_numpy(rng.random((N, 3), dtype=np.float32))
    mass.from_numpy(rng.random(N, dtype=np.float32) + 1)
    return World(Body(pos, vel, mass), 0.01, N, qd.ndarray(qd.f32, 3)), np.zeros(N, np.float32)


def numpy_step(w: World) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    dt = np.float32(w.dt)
    vel = w.body.vel.to_numpy() * np.float32(0.5) + np.float32([0, -9.8, 0]) * dt
    pos = w.body.pos.to_numpy() + vel * dt
    energy = np.float32(0.5) * w.body.mass.to_numpy() * (vel * vel).sum(axis=1)
    return pos, vel, energy


@pytest.mark.parametrize("options", [{}, {"per_offload": False}, {"split_carried": False}])
def test_nested_dataclass_of_vector_ndarrays_matches_numpy(options: dict) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, **options)
    w, energy = make_world(np.random.default_rng(1))
    pos, vel, e = numpy_step(w)
    world_step(w, energy)
    np.testing.assert_allclose(w.body.vel.to_numpy(), vel, rtol=1e-6)
    np.testing.assert_allclose(w.body.pos.to_numpy(), pos, rtol=1e-6)
    np.testing.assert_allclose(energy, e, rtol=1e-5)


def test_split_equals_whole_bit_for_bit() -> None:
    runs = []
    for options in ({}, {"per_offload": False}):
        qd.init(arch=qd.cpu, offline_cache=False, **options)
        w, energy = make_world(np.random.default_rng(2))
        world_step(w, energy)
        runs.append((w.body.pos.to_numpy(), w.body.vel.to_numpy(), energy))
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)
    assert qd.explain(world_step).mode == "whole_kernel"


def test_members_are_parameters_of_their_own() -> None:
    w, energy = make_world(np.random.default_rng(3))
    world_step(w, energy)
    text = qd.explain(world_step).ir_before_split
    assert "w.body.pos: ndarray<f32[3], 1>" in text and "w.dt: f32" in text
    assert "%w.body.vel = arg" in text
    assert "%w.scratch = arg" not in text  # declared (the signature), never read
    members = world_step.latest.members
    assert (("w", ("scratch",)) in members) is False
    assert members[("w", ("body", "pos"))] == "param"
    assert "w.body.pos" in construct_graph(world_step).source  # members are named in the graphs


def test_a_new_instance_with_equal_member_types_reuses_the_variant() -> None:
    w1, e1 = make_world(np.random.default_rng(4))
    world_step(w1, e1)
    w2, e2 = make_world(np.random.default_rng(5))
    world_step(w2, e2)
    assert len(world_step.variants) == 1 and len(world_step.fast) == 1
    _, _, expect = numpy_step(make_world(np.random.default_rng(5))[0])
    np.testing.assert_allclose(e2, expect, rtol=1e-5)


@dataclasses.dataclass
class TensorState:  # members made by qd.tensor, as Genesis makes them
    pos: V3
    mass: F32
    k: qd.Tensor  # an ndarray or a field, whichever the member holds


@qd.kernel
def tensor_step(s: TensorState):
    for i in s.pos:
        s.pos[i] += s.mass[i] * s.k[i] * qd.math.vec3(1.0, 2.0, 3.0)


def make_tensor_state(rng: np.random.Generator, backend: qd.Backend) -> TensorState:
    s = TensorState(
        qd.Vector.tensor(3, qd.f32, (N,)),
        qd.tensor(qd.f32, (N,)),
        qd.tensor(qd.f32, (N,), backend=backend),
    )
    for t, shape in ((s.pos, (N, 3)), (s.mass, (N,)), (s.k, (N,))):
        t.from_numpy(rng.random(shape, dtype=np.float32))
    return s


def test_tensor_members_launch_without_binding_again(monkeypatch: pytest.MonkeyPatch) -> None:
    binds = []
    kernel_type = type(tensor_step)
    bind = kernel_type.bind
    monkeypatch.setattr(kernel_type, "bind", lambda k, *a: binds.append(k.name) or bind(k, *a))
    for backend in (qd.Backend.NDARRAY, qd.Backend.FIELD):
        for seed in (1, 2, 3):
            s = make_tensor_state(np.random.default_rng(seed), backend)
            pos, mass, k = (t.to_numpy() for t in (s.pos, s.mass, s.k))
            tensor_step(s)
            expect = pos + (mass * k)[:, None] * np.float32([1, 2, 3])
            np.testing.assert_allclose(s.pos.to_numpy(), expect, rtol=1e-6)
    # one bind per kind of `k`: a new instance of a known kind is keyed and filled by its paths
    # (a field-backed `k` is keyed by that field, so each new one binds again)
    assert binds.count("tensor_step") == 1 + 3
    assert len(tensor_step.variants) == 4


@dataclasses.dataclass
class Loose:
    a: qd.types.NDArray  # dtype and ndim from the argument


@dataclasses.dataclass
class Params:
    k: qd.f32
    offset: int


@dataclasses.dataclass(frozen=True)
class Pair:
    src: F32
    dst: F32


def test_a_member_of_another_dtype_compiles_a_variant() -> None:
    @qd.kernel
    def double(s: Loose):
        for i in range(s.a.shape[0]):
            s.a[i] = s.a[i] * 2

    f = np.arange(4, dtype=np.float32)
    i = np.arange(4, dtype=np.int32)
    double(Loose(f))
    double(Loose(i))
    np.testing.assert_array_equal(f, [0, 2, 4, 6])
    np.testing.assert_array_equal(i, [0, 2, 4, 6])
    assert len(double.variants) == 2


def test_scalar_members_are_runtime_values() -> None:
    @qd.kernel
    def affine(p: Params, x: F32):
        for i in range(x.shape[0]):
            x[i] = x[i] * p.k + p.offset

    x = np.ones(4, np.float32)
    affine(Params(2.0, 3), x)
    affine(Params(0.5, -1), x)
    np.testing.assert_array_equal(x, [1.5] * 4)
    assert len(affine.variants) == 1  # a scalar member is a parameter: no recompile
    with pytest.raises(qd.QuadrantsRuntimeTypeError, match="p.offset"):
        affine(Params(1.0, 2**70), x)  # past 64 bits (within, it wraps)


def test_two_members_bound_to_one_buffer_take_the_whole_kernel(caplog) -> None:
    @qd.kernel
    def snapshot(p: Pair, out: F32):
        s = p.src[0]
        for i in range(p.dst.shape[0]):
            p.dst[i] = -1.0
        for i in range(out.shape[0]):
            out[i] = s

    a, b, out = np.full(4, 3.0, np.float32), np.zeros(4, np.float32), np.zeros(4, np.float32)
    snapshot(Pair(a, b), out)
    assert qd.explain(snapshot).alias_pairs == [("p.src", "p.dst")]
    c = np.full(4, 3.0, np.float32)
    with caplog.at_level(logging.WARNING, logger="qdlab"):
        snapshot(Pair(c, c), out)
    assert "aliased_arguments" in caplog.text and "`p.src` and `p.dst`" in caplog.text
    np.testing.assert_array_equal(out, [3, 3, 3, 3])  # the snapshot before the overwrite


# -- data-oriented classes -------------------------------------------------------------------------
@qd.data_oriented
class Particles:
    def __init__(self, n: int, gravity: float = -9.8) -> None:
        self.x = qd.ndarray(qd.f32, n)
        self.v = qd.ndarray(qd.f32, n)
        self.gravity = gravity
        self.damped = True

    @qd.func
    def accel(self, i: qd.i32) -> qd.f32:
        return self.gravity - (0.1 * self.v[i] if qd.static(self.damped) else 0.0)

    @qd.kernel
    def step(self, dt: qd.f32):
        for i in range(self.x.shape[0]):
            self.v[i] += self.accel(i) * dt
        for i in range(self.x.shape[0]):
            self.x[i] += self.v[i] * dt


@qd.data_oriented
class HeavyParticles(Particles):
    @qd.func
    def accel(self, i: qd.i32) -> qd.f32:
        return 2.0 * self.gravity


def particles_numpy(p: Particles, dt: float, steps: int) -> np.ndarray:
    x, v = p.x.to_numpy(), p.v.to_numpy()
    for _ in range(steps):
        a = np.float32(p.gravity) - (np.float32(0.1) * v if p.damped else np.float32(0))
        if isinstance(p, HeavyParticles):
            a = np.full_like(v, np.float32(2.0) * np.float32(p.gravity))
        v = v + a * np.float32(dt)
        x = x + v * np.float32(dt)
    return x


def test_data_oriented_method_with_methods_and_inheritance() -> None:
    for cls in (Particles, HeavyParticles):
        p = cls(N)
        expect = particles_numpy(p, 0.01, 3)
        for _ in range(3):
            p.step(0.01)
        np.testing.assert_allclose(p.x.to_numpy(), expect, rtol=1e-5)


def test_instances_with_equal_values_share_the_variant_and_a_changed_value_stays_baked() -> None:
    """A primitive member is baked when the kernel first compiles for the instance: a later change
    is not seen by that instance (as in Quadrants), a new instance holding it compiles it in."""
    a, b = Particles(N), Particles(N)
    a.step(0.01)
    b.step(0.01)
    assert len(Particles.step.variants) == 1
    b.gravity = -1.0  # baked as -9.8 for b: the same variant runs
    b.step(0.01)
    assert len(Particles.step.variants) == 1
    v1 = -9.8 * 0.01
    assert b.v.to_numpy()[0] == pytest.approx(v1 + (-9.8 - 0.1 * v1) * 0.01, rel=1e-5)
    c = Particles(N, gravity=-1.0)  # a new instance: its value is compiled in
    c.step(0.01)
    assert len(Particles.step.variants) == 2
    assert c.v.to_numpy()[0] == pytest.approx(-1.0 * 0.01, rel=1e-5)


def test_reassigned_ndarray_member_is_used_by_the_next_launch() -> None:
    p = Particles(4)
    p.step(1.0)
    old = p.x
    p.x = qd.ndarray(qd.f32, 4)
    p.step(1.0)
    assert old.to_numpy()[0] != 0 and p.x.to_numpy()[0] == pytest.approx(p.v.to_numpy()[0])
    p.x = qd.ndarray(qd.i32, 4)  # another dtype: another variant, never the f32 one
    p.step(1.0)
    assert p.x.to_numpy()[0] == int(p.v.to_numpy()[0] * 1.0)


def test_kernel_methods_need_a_data_oriented_class() -> None:
    class Plain:
        @qd.kernel
        def k(self):
            pass

    with pytest.raises(qd.QuadrantsSyntaxError, match="@qd.data_oriented"):
        Plain().k()


# -- template objects ------------------------------------------------------------------------------
class Config:
    def __init__(self, scale: float, mode: str) -> None:
        self.scale = scale
        self.mode = mode
        self.table = qd.ndarray(qd.f32, 4)
        self.unread = list(range(1000))


@qd.kernel
def configured(c: qd.template(), x: F32):
    for i in range(x.shape[0]):
        if qd.static(c.mode == "add"):
            x[i] = x[i] + c.scale + c.table[i]
        else:
            x[i] = x[i] * c.scale


def test_template_object_read_through_attributes_and_static() -> None:
    c = Config(2.0, "add")
    c.table.from_numpy(np.arange(4, dtype=np.float32))
    x = np.ones(4, np.float32)
    configured(c, x)
    np.testing.assert_array_equal(x, [3, 4, 5, 6])
    c.mode = "mul"
    configured(c, x)
    np.testing.assert_array_equal(x, [6, 8, 10, 12])
    c.unread.append(1)  # never read: no recompile
    configured(c, x)
    assert len(configured.variants) == 2
    assert qd.explain(configured).specializations[-1].startswith("c: Config")


@qd.data_oriented
class Costly:
    """An object whose `repr` is expensive (Genesis' walks the call stack) or fails."""

    calls = 0

    def __init__(self, n: int) -> None:
        self.n = n

    @qd.func
    def f(self) -> qd.i32:
        return self.n

    def __repr__(self) -> str:
        Costly.calls += 1
        raise AssertionError("repr of a template member value was called")


@qd.data_oriented
class Holding:
    def __init__(self) -> None:
        self.part = Costly(3)
        self.sizes = [Costly(1), 2]
        self.use = [Costly(2).f]
        self.out = qd.ndarray(qd.i32, 4)

    @qd.kernel
    def run(self, extra: qd.template()):
        for i in range(qd.static(self.part.n)):
            self.out[i] = self.sizes[1] + extra.n + self.use[0]()


def test_a_specialisation_never_runs_a_programs_repr() -> None:
    """`qd.explain(k).specializations` names a program's object by its type: its `repr` can be
    costly, and a specialisation is listed at each compile, whether or not anyone looks."""
    h = Holding()
    h.run(Costly(5))
    assert h.out.to_numpy().tolist() == [9, 9, 9, 0]
    assert Costly.calls == 0
    text = Holding.run.specializations[-1]  # type: ignore[attr-defined]
    want = "self: Holding {part.n=3, sizes=[<Costly>, 2], use=[<bound qd.func f of <Costly>>], "
    want += "out: ndarray<i32, 1>}, "
    assert text == want + "extra: Costly {n=5}"


def test_a_dataclass_passed_to_a_template_warns() -> None:
    @dataclasses.dataclass(frozen=True)
    class Foo:
        x: object = None

    @qd.kernel
    def run(foo: qd.template()):
        for i in range(4):
            foo.x[i] = float(i)

    x = qd.ndarray(qd.f32, 4)
    with pytest.warns(DeprecationWarning, match="qd.Template-annotated kernel parameter"):
        run(Foo(x))
    np.testing.assert_array_equal(x.to_numpy(), [0, 1, 2, 3])


def test_a_dtype_passed_to_a_template_is_a_dtype() -> None:
    """A dtype is a frozen dataclass inside qdlab, but to a kernel a template value, as in
    Quadrants (whose algorithm tests pass theirs so): `qd.cast` and `qd.static` see the dtype, one
    specialisation each, with no dataclass warning (Quadrants: `qd.cast(3, qd.i32) / 2` is 1.5)."""

    @qd.kernel
    def run(dtype: qd.template(), x: F32):
        for i in range(x.shape[0]):
            x[i] = qd.cast(3.75, dtype) / 2 + qd.static(10 if dtype == qd.i32 else 0)

    x = np.zeros(2, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        run(qd.i32, x)
        np.testing.assert_array_equal(x, [11.5, 11.5])
        run(qd.f32, x)
        np.testing.assert_array_equal(x, [1.875, 1.875])
    assert len(run.variants) == 2


def test_a_cycle_in_a_template_object_is_walked_once() -> None:
    @qd.data_oriented
    class Sim:
        def __init__(self) -> None:
            self.me = self
            self.a = qd.ndarray(qd.i32, 4)

    @qd.kernel
    def run(s: qd.template()):
        for i in range(4):
            s.me.me.a[i] = i + 7

    s = Sim()
    run(s)
    np.testing.assert_array_equal(s.a.to_numpy(), np.arange(4) + 7)


# -- @qd.dataclass and qd.types.struct parameters --------------------------------------------------
S0 = qd.types.struct(a=qd.i16, b=qd.f32)
S1 = qd.types.struct(a=qd.f32, b=S0, m=qd.types.matrix(2, 2, qd.f32))


@qd.kernel
def struct_sum(s: S1) -> qd.f32:
    return s.a + s.b.a + s.b.b + s.m[0, 1] + s.m[1, 0] * 10.0


@qd.dataclass
class Complex:
    re: qd.f32
    im: qd.f32

    @qd.func
    def norm_sqr(self) -> qd.f32:
        return self.re * self.re + self.im * self.im

    def conj(self) -> Complex:
        return Complex(self.re, -self.im)


@qd.kernel
def complex_norms(c: Complex, out: F32):
    for i in range(out.shape[0]):
        out[i] = c.norm_sqr() * i


def test_struct_type_members_are_typed_and_flattened() -> None:
    s = S1(a=1, b=S0(a=65537, b=123), m=[[1, 2], [3, 4]])  # i16 65537 holds 1, as in Quadrants
    assert s.b.a == 1
    assert struct_sum(s) == pytest.approx(1 + 1 + 123 + 2 + 30)
    assert "s.b.a: i16" in qd.explain(struct_sum).ir_before_split


def test_qd_dataclass_methods_run_in_kernels_and_in_python() -> None:
    out = np.zeros(4, np.float32)
    complex_norms(Complex(3, 4).conj(), out)
    np.testing.assert_array_equal(out, [0, 25, 50, 75])
    assert Complex(1, 2) == Complex(1.0, 2.0) and repr(Complex(1, 2)) == "Complex(re=1.0, im=2.0)"


def test_qd_dataclass_refuses_defaults() -> None:
    with pytest.raises(qd.QuadrantsSyntaxError, match="Default value in @dataclass"):

        @qd.dataclass
        class Bad:
            a: int
            b: float = 3.14


# -- struct values made in kernels -----------------------------------------------------------------
@qd.dataclass
class Particle:
    p: qd.math.vec3
    m: qd.f32

    @qd.func
    def moved(self, d: qd.f32) -> Particle:
        return Particle(self.p + d, self.m)


@qd.func
def heavier(a: Particle, b: Particle) -> Particle:
    out = a
    if b.m > a.m:
        out = b
    return out


@qd.kernel
def struct_locals(xs: F32, out: F32):
    for i in range(xs.shape[0]):
        a = Particle(qd.Vector([xs[i], 0.0, 1.0]), xs[i])
        b = Particle(m=2.0)  # p is zero
        b.p.y = 3.0
        b.m += 0.5
        c = heavier(a, b).moved(1.0)
        out[i] = c.p.sum() * 100.0 + c.m


@pytest.mark.parametrize("options", [{}, {"per_offload": False}])
def test_struct_values_locals_methods_and_funcs(options: dict) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, **options)
    xs = np.array([1.0, 2.5, 3.0], np.float32)
    out = np.zeros(3, np.float32)
    struct_locals(xs, out)
    want = []
    for x in xs:
        a, b = (np.float32([x, 0, 1]), x), (np.float32([0, 3, 0]), np.float32(2.5))
        p, m = a if not b[1] > a[1] else b
        want.append((p + 1).sum() * 100 + m)
    np.testing.assert_allclose(out, want, rtol=1e-6)


Ret = qd.types.struct(p=qd.math.vec3, n=qd.i32, c=Complex)


@qd.kernel
def returns_a_struct(c: Complex, k: qd.i32) -> Ret:
    return Ret(qd.Vector([1.0, 2.0, k]), k * 2, Complex(c.im, c.re))


def test_a_kernel_returns_a_struct() -> None:
    r = returns_a_struct(Complex(1, 2), 3)
    assert isinstance(r, Ret) and isinstance(r.c, Complex)
    np.testing.assert_array_equal(r.p, [1, 2, 3])
    assert (r.n, r.c.re, r.c.im) == (6, 2.0, 1.0)


def test_a_kernel_stored_on_a_class_stays_unbound() -> None:
    class Holder:
        run = configured  # a module-level kernel, not a method

    c, x = Config(1.0, "mul"), np.ones(4, np.float32)
    Holder().run(c, x)
    np.testing.assert_array_equal(x, [1.0] * 4)


@dataclasses.dataclass
class Mixed:
    x: F32
    k: qd.f32
    n: qd.i32


class SolverConfig:
    def __init__(self) -> None:
        self.double = False


@qd.data_oriented
class Solver:
    def __init__(self, n: int) -> None:
        self.x = qd.tensor(qd.f32, n)
        self.cfg = SolverConfig()
        self.scale = 3
        self.weights = [1.0, 1.0]

    @qd.kernel
    def run(self, m: Mixed):
        for i in range(m.n):
            m.x[i] = m.x[i] * m.k + self.x[i] * (2 if qd.static(self.cfg.double) else self.scale)
            m.x[i] *= self.weights[1]


def test_a_launch_with_the_same_member_objects_reuses_their_words_never_stale_values() -> None:
    """A struct's member words and launch key are reused while every member is the same object and
    one whose words cannot change (a number, a qdlab ndarray): a new number, a new array or an
    object changed in place (described again each launch) is seen by the next launch. The
    data-oriented object's primitives (on itself or on objects it holds) are baked when the kernel
    compiles for it, as in Quadrants: a change is seen once something else compiles it again."""
    s = Solver(4)
    s.x.from_numpy(np.float32([1, 2, 3, 4]))
    m = Mixed(qd.ndarray(qd.f32, 4), 2.0, 4)
    baked = [3]

    def run_and_check() -> None:
        x, sx = m.x.to_numpy(), s.x.to_numpy()
        want = x.copy()
        want[: m.n] = x[: m.n] * np.float32(m.k) + sx[: m.n] * np.float32(baked[0])
        want[: m.n] *= np.float32(s.weights[1])
        s.run(m)
        np.testing.assert_array_equal(m.x.to_numpy(), want)

    run_and_check()
    run_and_check()  # the same objects: the words and key of the last launch
    m.k = 0.5  # a new number
    run_and_check()
    m.n = 2  # a new trip count
    run_and_check()
    a, m.x = m.x, qd.ndarray(qd.f32, 4)  # a new array: its own words
    before = a.to_numpy()
    run_and_check()
    np.testing.assert_array_equal(a.to_numpy(), before)
    s.scale = 5  # a compile-time number of the object: baked as 3
    run_and_check()
    s.cfg.double = True  # a number of an object it holds: baked as False
    run_and_check()
    assert len(Solver.run.variants) == 1
    s.weights[1] = 0.5  # a list changed in place: compiled again, with the numbers as they are
    baked[0] = 2
    run_and_check()
    s.x = qd.tensor(qd.f32, 4)  # a new tensor member
    s.x.from_numpy(np.float32([7, 8, 9, 10]))
    run_and_check()
    assert len(Solver.run.variants) == 2


def test_an_undescribable_object_is_not_walked_again_at_each_bind(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A data-oriented object whose content no fingerprint describes (it holds a lock; Genesis'
    solvers reach a C object) is keyed by the member paths its kernels read: its content is walked
    at its first bind only (a Genesis solver: ~3 ms a bind, at every kernel's first launch), and
    the keys stay exact: a member changed to another dtype compiles a variant."""
    import threading

    from qdlab.host import struct_args

    walked = []
    content = struct_args.content
    monkeypatch.setattr(struct_args, "content", lambda v: walked.append(type(v)) or content(v))

    @qd.data_oriented
    class Solver:
        def __init__(self) -> None:
            self.lock = threading.Lock()
            self.x = qd.ndarray(qd.f32, 4)

        @qd.kernel
        def first(self):
            for i in self.x:
                self.x[i] += 1.0

        @qd.kernel
        def second(self):
            for i in self.x:
                self.x[i] *= 3.0

    s = Solver()
    s.first()
    s.second()
    s.first()
    assert walked.count(Solver) == 1  # the first bind's walk found it undescribable
    np.testing.assert_array_equal(s.x.to_numpy(), [4.0, 4.0, 4.0, 4.0])
    s.x = qd.ndarray(qd.f64, 4)  # keyed by its members: another dtype, another variant
    s.x.fill(1.0)
    s.second()
    np.testing.assert_array_equal(s.x.to_numpy(), [3.0, 3.0, 3.0, 3.0])
    assert s.x.to_numpy().dtype == np.float64
    assert walked.count(Solver) == 1


def test_a_frozen_struct_of_ndarrays_is_walked_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Genesis passes ~10 frozen dataclasses of ndarrays to each kernel; the members a walk
    declares cannot change while the instance lives (its members cannot be rebound, an ndarray's
    type is fixed), so a second kernel's first launch does not walk it again; a new instance or a
    `qd.init()` does, and an ndarray released by it is refused by name, not by an internal error."""
    from qdlab.host import struct_args

    walked = []  # the structs a walk visits
    attributes = struct_args.StructArg.attributes
    monkeypatch.setattr(
        struct_args.StructArg,
        "attributes",
        lambda self, ref: walked.append(type(ref.value)) or attributes(self, ref),
    )

    @qd.kernel
    def first(p: Pair):
        for i in p.src:
            p.dst[i] = p.src[i] + 1.0

    @qd.kernel
    def second(p: Pair):
        for i in p.src:
            p.dst[i] *= 2.0

    src, dst = qd.ndarray(qd.f32, 3), qd.ndarray(qd.f32, 3)
    src.from_numpy(np.float32([1, 2, 3]))
    p = Pair(src, dst)
    first(p)
    second(p)
    np.testing.assert_array_equal(dst.to_numpy(), [4.0, 6.0, 8.0])
    assert walked == [Pair]  # the second kernel's first launch did not walk it again

    @qd.kernel
    def third(p: Pair):
        for i in p.src:
            p.dst[i] = p.src[i]

    third(Pair(dst, src))  # another instance: walked
    assert walked == [Pair, Pair]
    np.testing.assert_array_equal(src.to_numpy(), [4.0, 6.0, 8.0])
    qd.init(arch=qd.cpu)
    with pytest.raises(QdTypeError, match="argument `p.src` .* released it"):
        second(p)
