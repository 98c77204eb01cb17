"""Field programs run on both implementations: each function uses the backend module `qd`
(`qdlab` or `quadrants`, set here and initialised by the runner), declares its fields, defines and
runs its kernels, and returns its results as NumPy arrays. It imports neither implementation, so
the same source runs in the reference's process and in qdlab's."""

from __future__ import annotations

from typing import Any

import field_structs
import numpy as np

PROGRAMS: dict = {}
qd: Any = None
"""The backend under test, set by the runner before any program runs."""


def program(fn: Any) -> Any:
    PROGRAMS[fn.__name__] = fn
    return fn


@program
def scalar_fields() -> dict:
    n = 64
    x = qd.field(qd.f32, shape=n)
    y = qd.field(qd.i32, shape=(8, 8))
    total = qd.field(qd.f32, shape=())
    x.from_numpy(np.linspace(-2, 2, n).astype(np.float32))

    @qd.kernel
    def run(a: qd.f32):
        for i in x:
            x[i] = a * x[i] + 1.0
        for i, j in y:
            y[i, j] = i * 8 - j
        for i in range(n):
            total[None] += x[i]
        for i, j in qd.ndrange(8, 8):
            y[i, j] += qd.atomic_max(y[j, i], 0) * 0

    run(1.5)
    return {"x": x.to_numpy(), "y": y.to_numpy(), "total": np.array(total[None])}


@program
def vector_matrix_fields() -> dict:
    n = 16
    p = qd.Vector.field(3, qd.f32, shape=n)
    v = qd.Vector.field(3, qd.f32, shape=n)
    m = qd.Matrix.field(2, 2, qd.f32, shape=n)
    d = qd.field(qd.f32, shape=n)
    p.from_numpy(np.arange(3 * n, dtype=np.float32).reshape(n, 3) / 7)
    v.fill(0.5)

    @qd.kernel
    def step(dt: qd.f32):
        for i in p:
            p[i] += v[i] * dt
            p[i].y -= 1.0
            d[i] = p[i].norm()
            m[i] = qd.Matrix([[p[i].x, 1.0], [0.0, p[i].z]])
            m[i][0, 1] += d[i]

    step(0.25)
    step(0.5)
    return {"p": p.to_numpy(), "d": d.to_numpy(), "m": m.to_numpy()}


@program
def vec_type_field() -> dict:
    vec3 = qd.types.vector(3, qd.f32)
    a = qd.field(vec3, shape=(4, 5))
    b = vec3.field(shape=(4, 5))

    @qd.kernel
    def fill():
        for I in qd.grouped(a):
            a[I] = qd.Vector([I[0], I[1], I[0] * I[1]])
        for i, j in b:
            b[i, j] = a[i, j] * 2.0 + a[3 - i, 4 - j]

    fill()
    return {"a": a.to_numpy(), "b": b.to_numpy()}


@program
def column_major_layouts() -> dict:
    b = qd.field(qd.f32)
    c = qd.field(qd.i32)
    v = qd.Vector.field(2, qd.i32)
    w = qd.field(qd.i32, shape=())
    qd.root.dense(qd.j, 6).dense(qd.i, 4).place(b)  # column-major
    qd.root.dense(qd.k, 3).dense(qd.ij, (2, 5)).place(c)  # memory holds k, then i, j
    qd.root.dense(qd.j, 3).dense(qd.i, 5).place(v)

    @qd.kernel
    def run():
        for i, j in b:
            b[i, j] = i * 10 + j
        for i, j, k in c:
            c[i, j, k] = i * 100 + j * 10 + k + qd.i32(b[i, j % 6])
        for i, j in v:
            v[i, j] = [i + j, qd.i32(b[i % 4, j]) * 2]
        for i in range(4):
            b[i, 0] += b[i, 5]
        for i, j in b:
            qd.atomic_add(w[None], qd.i32(b[i, j]) * (i + 1))

    @qd.kernel
    def step(i: qd.i32, j: qd.i32) -> qd.i64:
        return qd.i64(qd.get_addr(b, [i, j]) - qd.get_addr(b, [0, 0]))

    run()
    steps = np.array([step(1, 0), step(0, 1), step(3, 5)], np.int64)
    out = {"b": b.to_numpy(), "c": c.to_numpy(), "v": v.to_numpy(), "w": w.to_numpy()}
    return out | {"steps": steps}


@program
def root_dense_layouts() -> dict:
    a = qd.field(qd.i32)
    b = qd.field(qd.f32)
    c = qd.field(qd.i32)
    s = qd.field(qd.i32)
    qd.root.dense(qd.ij, (4, 6)).place(a, b)
    qd.root.dense(qd.i, 3).dense(qd.j, 5).place(c)
    qd.root.place(s)

    @qd.kernel
    def run():
        for i, j in a:
            a[i, j] = i * 100 + j
            b[i, j] = a[i, j] * 0.5
        for i, j in c:
            c[i, j] = i - j
            qd.atomic_add(s[None], c[i, j])

    run()
    return {"a": a.to_numpy(), "b": b.to_numpy(), "c": c.to_numpy(), "s": np.array(s[None])}


@program
def template_fields() -> dict:
    a = qd.field(qd.f32, shape=32)
    b = qd.field(qd.f32, shape=32)
    out = qd.field(qd.f32, shape=2)

    @qd.kernel
    def ramp(f: qd.template(), k: qd.f32):
        for i in f:
            f[i] = i * k

    @qd.kernel
    def total(f: qd.template(), slot: qd.i32):
        for i in f:
            out[slot] += f[i]

    ramp(a, 1.0)
    ramp(b, -0.5)
    total(a, 0)
    total(b, 1)
    return {"a": a.to_numpy(), "b": b.to_numpy(), "out": out.to_numpy()}


@program
def fields_in_funcs() -> dict:
    x = qd.field(qd.f32, shape=20)
    y = qd.field(qd.f32, shape=20)

    @qd.func
    def neighbours(i: qd.i32) -> qd.f32:
        lo = qd.max(i - 1, 0)
        hi = qd.min(i + 1, 19)
        return x[lo] + x[hi]

    @qd.kernel
    def run():
        for i in x:
            x[i] = i * i * 0.25
        for i in y:
            y[i] = neighbours(i) - 2.0 * x[i]

    run()
    return {"x": x.to_numpy(), "y": y.to_numpy()}


@program
def snapshot_then_other_field() -> dict:
    a = qd.field(qd.i32, shape=16)
    b = qd.field(qd.i32, shape=16)
    c = qd.field(qd.i32, shape=16)

    @qd.kernel
    def run():
        for i in a:
            a[i] = i + 1
        t = a[3]
        for i in b:
            b[i] = a[i] * 2
        for i in a:
            a[i] = -a[i]
        for i in c:
            c[i] = t + b[i] + a[i]

    run()
    return {"a": a.to_numpy(), "b": b.to_numpy(), "c": c.to_numpy()}


@program
def host_access() -> dict:
    x = qd.field(qd.i32, shape=(3, 4))
    v = qd.Vector.field(2, qd.f32, shape=5)
    z = qd.field(qd.f64, shape=())
    x[1, 2] = 7
    x[2, 3] = -5
    v[3] = [1.5, -2.0]
    z[None] = 0.125
    y = qd.field(qd.i32, shape=(3, 4))
    y.copy_from(x)

    @qd.kernel
    def run():
        for i, j in x:
            x[i, j] += y[i, j] + i
        for i in v:
            v[i] += qd.Vector([z[None], 1.0])

    run()
    return {
        "x": x.to_numpy(),
        "v": v.to_numpy(),
        "x12": np.array(x[1, 2]),
        "v3": np.array(v[3].to_numpy() if hasattr(v[3], "to_numpy") else list(v[3])),
    }


@program
def gradients() -> dict:
    n = 8
    x = qd.field(qd.f32, shape=n, needs_grad=True)
    loss = qd.field(qd.f32, shape=(), needs_grad=True)
    x.from_numpy(np.linspace(0.5, 2.0, n).astype(np.float32))

    @qd.kernel
    def compute():
        for i in x:
            loss[None] += x[i] * x[i] * 0.5 + qd.sin(x[i])

    with qd.ad.Tape(loss=loss):
        compute()
    return {"loss": np.array(loss[None]), "grad": x.grad.to_numpy()}


@program
def struct_for_reduction() -> dict:
    n = 1000
    x = qd.field(qd.i64, shape=n)
    acc = qd.field(qd.i64, shape=4)

    @qd.kernel
    def run():
        for i in x:
            x[i] = i * 3 - 700
        for i in x:
            acc[0] += x[i]
            qd.atomic_min(acc[1], x[i])
            qd.atomic_max(acc[2], x[i])
            acc[3] ^= x[i]

    run()
    return {"x": x.to_numpy(), "acc": acc.to_numpy()}


@program
def offsets_and_attributes() -> dict:
    x = qd.field(qd.i32, shape=(4, 3), offset=(-2, 5))
    v = qd.Vector.field(3, qd.f32, shape=6, offset=-3)
    sizes = qd.field(qd.i32, shape=3)

    @qd.kernel
    def run():
        for i, j in x:
            x[i, j] = i * 10 + j
        x[-2, 5] += 1000
        for i in v:
            v[i] = qd.Vector([i, i * 0.5, 1.0])
        sizes[0] = v.n
        sizes[1] = x.shape[0] * x.shape[1]
        for I in qd.grouped(x):
            sizes[2] += I[0] + I[1]

    run()
    x[1, 7] = x[1, 7] + 1
    return {
        "x": x.to_numpy(),
        "v": v.to_numpy(),
        "sizes": sizes.to_numpy(),
        "x17": np.array(x[1, 7]),
    }


def _flat(prefix: str, value: Any) -> dict:
    """A struct field's `to_numpy()` dict (nested for nested structs) as flat named arrays."""
    if isinstance(value, dict):
        return {k2: v2 for k, v in value.items() for k2, v2 in _flat(f"{prefix}.{k}", v).items()}
    return {prefix: np.asarray(value)}


@program
def struct_fields() -> dict:
    n = 12
    vec3 = qd.types.vector(3, qd.f32)
    inner = qd.types.struct(c=qd.i32, d=vec3)
    particle = qd.types.struct(
        a=qd.f32, v=vec3, m=qd.types.matrix(2, 2, qd.f32), b=qd.u1, inner=inner
    )
    s = particle.field(shape=n)
    total = qd.field(qd.i32, shape=())
    s.a.from_numpy(np.linspace(-1, 1, n).astype(np.float32))
    s[2] = particle(a=4.5, v=vec3(1, 2, 3), b=True)
    s[3].inner.c = 7

    @qd.func
    def weight(i: qd.i32) -> qd.f32:
        return s[i].a * 2.0 + s[i].v.x

    @qd.kernel
    def step(dt: qd.f32):
        for i in s:
            s[i].v += qd.Vector([1.0, dt, i * dt])
            s[i].v[2] -= s[i].a
            s[i].m[0, 1] = s[i].v.norm()
            s[i].m = s[i].m + qd.Matrix([[1.0, 0.0], [0.0, s[i].a]])
            s[i].b = s[i].a > 0
            s[i].inner.c += i * 3
            s[i].inner.d.y = weight(i)
            qd.atomic_add(total[None], s[i].inner.c)
        for i in range(n):
            p = s[i]
            p.a = 100.0  # a copy: the field keeps its value
            if i % 4 == 1:
                s[i] = particle(a=p.inner.c * 0.5, v=p.v * 2.0, b=True, inner=p.inner)

    step(0.25)
    step(0.5)
    out = _flat("s", s.to_numpy())
    out["total"] = np.array(total[None])
    out["s2a"] = np.array(s[2].a)
    out["s5v"] = np.array(list(s[5].v))
    return out


@program
def struct_field_methods_templates() -> dict:
    Body = field_structs.body_type(qd)

    @qd.func
    def by_value(b, dk: qd.i32):  # a struct argument is a copy: this writes nothing
        b.k += dk

    a = Body.field()
    b = Body.field()
    qd.root.dense(qd.i, 16).place(a, b)
    hits = qd.Struct.field({"n": qd.i32, "w": qd.f32}, shape=4)

    @qd.kernel
    def run(x: qd.template(), y: qd.template(), h: qd.template()):
        for i in x:
            x[i].blend(y[i], qd.Vector([0.0, 1.0, 2.0]))
            by_value(x[i], 1000)
            y[i].push(i)
            h[i % 4].n += 1
            qd.atomic_max(h[i % 4].w, x[i].p.z)

    for i in range(16):
        a[i] = Body(p=[i, 2, 3], q=[4, 5, 6], k=i)
        b[i] = Body(p=[4, 5, i], q=[1, 2, 3], k=2 * i)
    run(a, b, hits)
    run(b, a, hits)
    return {**_flat("a", a.to_numpy()), **_flat("b", b.to_numpy()), **_flat("h", hits.to_numpy())}


@program
def struct_field_dense_2d() -> dict:
    cell = qd.types.struct(t=qd.f32, id=qd.i16)
    g = cell.field(shape=(6, 5))
    acc = qd.field(qd.f32, shape=6)

    @qd.kernel
    def run():
        for i, j in g:
            g[i, j].t = i * 0.5 - j
            g[i, j].id = i * 100 + j * 7
        for I in qd.grouped(g):
            acc[I[0]] += g[I].t * g[I].id

    run()
    return {**_flat("g", g.to_numpy()), "acc": acc.to_numpy()}


@program
def struct_field_members_and_grads() -> dict:
    particle = qd.types.struct(x=qd.f32, v=qd.math.vec2)
    ps = particle.field(shape=8, needs_grad=True)
    loss = qd.field(qd.f32, shape=(), needs_grad=True)

    @qd.data_oriented
    class Sim:
        def __init__(self) -> None:
            self.p = particle.field(shape=4)

        @qd.kernel
        def step(self):
            for i in self.p:
                self.p[i].x += 1.0 + i
                self.p[i].v.y = self.p[i].x * 2

    @qd.kernel
    def seed(s: qd.template()):
        for i in s:
            s[i].x = i * 0.75 - 2.0
            s[i].v = qd.Vector([i * 0.5, 1.0])

    @qd.kernel
    def compute():
        for i in ps:
            loss[None] += ps[i].x * ps[i].x + ps[i].v.x * qd.sin(ps[i].x)

    sim = Sim()
    sim.step()
    sim.step()
    seed(ps)
    with qd.ad.Tape(loss=loss):
        compute()
    return {
        **_flat("sim", sim.p.to_numpy()),
        "loss": np.array(loss[None]),
        "x_grad": ps.x.grad.to_numpy(),
        "v_grad": ps.v.grad.to_numpy(),
    }
