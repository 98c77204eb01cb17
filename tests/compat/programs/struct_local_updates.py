"""`x op= v` and `qd.atomic_*(x, v)` on the members of struct locals (`qd.types.struct` and
`@qd.dataclass`; nested structs, vector members and their entries), on parts of vector locals
(`v[0]`, `v.x`, `v[j]` with a runtime `j`), in serial code, in parallel loops (the struct made
outside the loop: shared, atomic; inside: one per iteration) and in @qd.funcs; a struct, vector or
scalar local passed for a `qd.template()` parameter is the caller's own; `+=` converts its value to
the target's type first (`x += 1.5` adds 1 to an i32). Each printed line must be Quadrants';
QD_WHOLE=1 runs qdlab's whole-kernel path."""

import importlib
import os

qd = importlib.import_module(os.environ.get("QD_IMPL", "quadrants"))
WHOLE = {"per_offload": False} if os.environ.get("QD_WHOLE") == "1" else {}
qd.init(arch=qd.cpu, offline_cache=False, **WHOLE)

vec2 = qd.types.vector(2, qd.f32)
In = qd.types.struct(k=qd.i32, w=qd.f32)
S = qd.types.struct(m=qd.i32, f=qd.f32, v=vec2, inner=In)
out = qd.field(qd.f32, shape=16)


def show(name: str, kernel: object, *args: object) -> None:
    out.fill(0)
    r = kernel(*args)  # type: ignore[operator]
    print(name, out.to_numpy().tolist(), r)


@qd.kernel
def every_operator():
    s = S(m=7, f=7.5)
    s.m += 3
    out[0] = s.m
    s.m -= 1
    out[1] = s.m
    s.m *= 5
    out[2] = s.m
    s.m //= 3
    out[3] = s.m
    s.m %= 7
    out[4] = s.m
    s.m <<= 2
    out[5] = s.m
    s.m >>= 1
    out[6] = s.m
    s.m |= 9
    out[7] = s.m
    s.m &= 12
    out[8] = s.m
    s.m ^= 5
    out[9] = s.m
    s.m **= 2
    out[10] = s.m
    s.f /= 4
    out[11] = s.f
    s.f //= 0.5
    out[12] = s.f
    s.f %= 1.5
    out[13] = s.f
    s.f **= 2
    out[14] = s.f


@qd.kernel
def every_atomic() -> qd.i32:
    s = S(m=6, f=2.5)
    out[0] = qd.atomic_add(s.m, 3)
    out[1] = qd.atomic_sub(s.m, 2)
    out[2] = qd.atomic_max(s.m, 20)
    out[3] = qd.atomic_min(s.m, 4)
    out[4] = qd.atomic_and(s.m, 6)
    out[5] = qd.atomic_or(s.m, 9)
    out[6] = qd.atomic_xor(s.m, 3)
    out[7] = qd.atomic_add(s.f, 1.5)
    out[8] = qd.atomic_max(s.f, 10.0)
    out[9] = qd.atomic_min(s.f, -1.0)
    out[10] = s.f
    return s.m


@qd.kernel
def nested_and_vector_members():
    s = S(v=vec2(1, 2), inner=In(k=2, w=0.5))
    s.inner.k += 5
    s.inner.w *= 4
    qd.atomic_add(s.inner.k, 10)
    qd.atomic_max(s.inner.w, 3.0)
    s.v += 1
    s.v[0] += 10
    s.v.y *= 3
    out[0] = qd.atomic_add(s.v[0], 0.5)
    old = qd.atomic_add(s.v, vec2(1, 1))
    out[1] = old[1]
    out[2] = qd.atomic_sub(s.v.y, 2.0)
    out[3] = s.inner.k
    out[4] = s.inner.w
    out[5] = s.v[0]
    out[6] = s.v[1]


@qd.kernel
def shared_by_a_parallel_loop():
    s = S(m=0, f=0.0)
    t = S()
    v = vec2(0, 0)
    for i in range(1000):
        s.m += 1
        s.f += 0.5
        s.inner.k -= 2
        s.v += vec2(1.0, 2.0)
        s.v[1] += 1.0
        v.x += 1.0
        qd.atomic_add(s.inner.w, 0.25)
        qd.atomic_max(t.m, i)
        qd.atomic_add(v[1], 3.0)
    out[0] = s.m
    out[1] = s.f
    out[2] = s.inner.k
    out[3] = s.inner.w
    out[4] = s.v[0]
    out[5] = s.v[1]
    out[6] = v[0]
    out[7] = v[1]
    out[8] = t.m


@qd.kernel
def runtime_index(j: qd.i32):
    v = vec2(0, 0)
    s = S()
    for i in range(1000):
        v[j] += 1.0
        qd.atomic_add(v[1 - j], 2.0)
        s.v[j] -= 1.0
    w = vec2(5, 6)
    out[2] = qd.atomic_add(w[j], 10.0)
    out[0] = v[0]
    out[1] = v[1]
    out[3] = w[0]
    out[4] = w[1]
    out[5] = s.v[0]
    out[6] = s.v[1]


@qd.kernel
def one_per_iteration():
    for i in range(8):
        s = S(m=i, f=i * 0.5)
        s.m += 2
        s.m *= 3
        qd.atomic_add(s.m, 1)
        s.f -= 1.0
        s.v[0] += s.f
        s.inner.k += s.m
        out[i] = s.m + s.f + s.v[0] + s.inner.k


@qd.func
def bump(x: qd.i32) -> qd.f32:
    s = S(m=x)
    s.m += 4
    qd.atomic_add(s.m, 1)
    s.v += 1.0
    s.inner.w += 0.5
    return s.m + s.v[0] + s.inner.w


@qd.kernel
def in_a_func():
    for i in range(4):
        out[i] = bump(i)


@qd.func
def by_template(s: qd.template()):
    s.m += 10
    s.v[1] += 2.0
    qd.atomic_add(s.inner.k, 3)


@qd.func
def by_value(s: S) -> qd.i32:
    s.m += 5
    qd.atomic_add(s.inner.k, 3)
    return s.m


@qd.func
def add_one(x: qd.template()):
    x += 1


@qd.func
def bump_inner(p: qd.template()):
    p.k += 100


@qd.func
def bump_vector(v: qd.template()):
    v[0] += 5.0
    v += 1.0


@qd.kernel
def templates_are_the_callers():
    s = S(m=1)
    v = vec2(1, 2)
    n = 0
    by_template(s)
    out[0] = by_value(s)
    bump_inner(s.inner)
    add_one(s.m)
    add_one(s.inner.w)
    add_one(n)
    bump_vector(v)
    bump_vector(s.v)
    out[1] = s.m
    out[2] = s.v[0]
    out[3] = s.v[1]
    out[4] = s.inner.k
    out[5] = s.inner.w
    out[6] = v[0]
    out[7] = v[1]
    out[8] = n


@qd.dataclass
class Body:
    m: qd.i32
    p: vec2

    @qd.func
    def push(self, by: qd.i32):
        self.m += by
        qd.atomic_add(self.p[0], 2.0)
        self.p.y -= 1.0

    @qd.func
    def tally(self, by: qd.i32):
        self.m += by
        qd.atomic_sub(self.m, 2 * by)


bodies = Body.field(shape=4)


@qd.kernel
def methods():
    d = Body(m=1)
    d.push(3)
    d.m *= 3
    qd.atomic_max(d.m, 5)
    out[0] = d.m
    out[1] = d.p[0]
    out[2] = d.p[1]


@qd.kernel
def methods_on_elements():
    for i in range(400):
        bodies[i % 4].tally(i)  # the field's elements: shared, atomic


@qd.kernel
def copied_elements():
    for i in bodies:
        b = bodies[i]
        b.m += 100
        qd.atomic_add(b.p[1], 0.5)
        out[i] = b.m + b.p[1]


@qd.kernel
def converts_first():
    x = -3
    x += 1.5
    out[0] = x
    s = S(m=-3)
    s.m += 1.5
    out[1] = s.m
    v = qd.Vector([-3, 1])
    v[0] += 1.5
    v += 0.5
    out[2] = v[0]
    out[3] = v[1]
    y = -3
    y *= 1.5
    out[4] = y


show("every_operator", every_operator)
show("every_atomic", every_atomic)
show("nested_and_vector_members", nested_and_vector_members)
show("shared_by_a_parallel_loop", shared_by_a_parallel_loop)
show("runtime_index", runtime_index, 1)
show("runtime_index", runtime_index, 0)
show("one_per_iteration", one_per_iteration)
show("in_a_func", in_a_func)
show("templates_are_the_callers", templates_are_the_callers)
show("methods", methods)
show("methods_on_elements", methods_on_elements)
print(bodies.m.to_numpy().tolist(), bodies.p.to_numpy().tolist())
show("copied_elements", copied_elements)
print(bodies.m.to_numpy().tolist(), bodies.p.to_numpy().tolist())
show("converts_first", converts_first)
