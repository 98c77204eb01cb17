"""Struct fields (`S.field(shape=...)` of `qd.types.struct` and `@qd.dataclass` types,
`qd.Struct.field({...})`): host access (members as fields, element get and set, `to_numpy` as a
dict, `from_numpy`, `fill`), kernels over members (`s[i].m`, `s[i] = S(...)`, struct-for, atomics,
`@qd.func` methods on elements, template arguments) and nested structs. Each printed line must be
Quadrants'."""

import importlib
import os

import numpy as np

qd = importlib.import_module(os.environ.get("QD_IMPL", "quadrants"))
qd.init(arch=qd.cpu, offline_cache=False)
vec2 = qd.types.vector(2, qd.f32)
inner = qd.types.struct(c=qd.i32, d=vec2)
S = qd.types.struct(a=qd.f32, v=vec2, flag=qd.u1, inner=inner)
s = S.field(shape=5)
print(s.shape, s.keys, s.a.shape, s.v.shape, s.inner.d.shape, s.inner.c.dtype)
s[1] = S(a=2.5, v=vec2(1, 2), flag=True, inner=inner(c=3, d=vec2(4, 5)))
s[2].a = 7
s[2].inner.c = -4
print(s[1].a, s[1].v.to_numpy().tolist(), s[1].flag, s[1].inner.c, s[2].a, s[2].inner.c)
d = s.to_numpy()
print(sorted(d), d["a"].tolist(), d["v"].dtype, d["inner"]["c"].tolist(), d["flag"].dtype)
arrays = s.to_numpy()
arrays["a"] = np.arange(5, dtype=np.float32)
arrays["inner"]["c"] = np.arange(5, dtype=np.int32) * 3
s.from_numpy(arrays)
print(s.a.to_numpy().tolist(), s.inner.c.to_numpy().tolist(), s.v.to_numpy()[1].tolist())
total = qd.field(qd.i32, shape=())


@qd.kernel
def step(dt: qd.f32):
    for i in s:
        s[i].v += qd.Vector([dt, i * dt])
        s[i].v.y -= s[i].a
        s[i].flag = s[i].inner.c > 5
        s[i].inner.d[0] = s[i].v.x * 2
        qd.atomic_add(total[None], s[i].inner.c)
    for i in range(5):
        if i % 2 == 0:
            s[i] = S(a=-s[i].a, v=s[i].v, flag=False, inner=s[i].inner)


step(0.5)
print(s.a.to_numpy().tolist(), s.v.to_numpy().tolist(), s.flag.to_numpy().tolist(), total[None])
print(s.inner.d.to_numpy().tolist())


@qd.dataclass
class Body:
    p: qd.math.vec3
    k: qd.i32

    @qd.func
    def push(self, other):
        self.p += other.p * 0.5
        self.k += other.k


bodies = Body.field()
others = Body.field()
qd.root.dense(qd.i, 4).place(bodies, others)
hits = qd.Struct.field({"n": qd.i32, "w": qd.f32}, shape=2)


@qd.kernel
def run(x: qd.template(), y: qd.template(), h: qd.template()):
    for i in x:
        x[i].push(y[i])
        h[i % 2].n += 1
        qd.atomic_max(h[i % 2].w, x[i].p.z)


for i in range(4):
    bodies[i] = Body(p=[i, 1, 2], k=i)
    others[i] = Body(p=[1, 2, i], k=10)
run(bodies, others, hits)
run(others, bodies, hits)
print(bodies.p.to_numpy().tolist(), bodies.k.to_numpy().tolist(), others.k.to_numpy().tolist())
print(hits.n.to_numpy().tolist(), hits.w.to_numpy().tolist())
s.fill(1)
print(s.a.to_numpy().tolist(), s.inner.c.to_numpy().tolist(), s.flag.to_numpy().tolist())
g = qd.types.struct(x=qd.f32, y=qd.f32).field(shape=3, needs_grad=True)
print(g.x.grad.shape, g.y.grad is not None)
try:
    qd.Struct.field({"n": qd.i32, "w": qd.f32}, shape=2, needs_grad=True)
except RuntimeError as e:
    print("RuntimeError", e)
