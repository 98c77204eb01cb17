"""Tuples of fields passed for a `qd.template()` parameter: `t[0][i]`, `for i in t[j]` (a
struct-for over one of them, `j` a template argument too), `range(t[1].shape[0])`,
`qd.static(range(len(t)))` and `qd.static(t)` / `enumerate(t)` loops, the same field twice
(`k((f, f))`), nested tuples, vector, scalar and struct fields and `.grad`, through a @qd.func; an
ndarray inside a template tuple is refused, as a template ndarray is. Each printed line must be
Quadrants'; QD_WHOLE=1 runs qdlab's whole-kernel path."""

import importlib
import os

import numpy as np

qd = importlib.import_module(os.environ.get("QD_IMPL", "quadrants"))
WHOLE = {"per_offload": False} if os.environ.get("QD_WHOLE") == "1" else {}
qd.init(arch=qd.cpu, offline_cache=False, **WHOLE)

f = qd.field(qd.f32, shape=4, needs_grad=True)
g = qd.field(qd.f32, shape=(2, 3))
v = qd.Vector.field(2, qd.f32, shape=4)
S = qd.types.struct(a=qd.f32, b=qd.i32)
sf = S.field(shape=4)
out = qd.field(qd.f32, shape=16)


def reset() -> None:
    f.from_numpy(np.arange(4, dtype=np.float32) + 1)
    g.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3) + 10)
    v.from_numpy(np.arange(8, dtype=np.float32).reshape(4, 2))
    for i in range(4):
        sf[i] = S(a=i * 0.5, b=i)


def show(name: str, kernel: object, *args: object) -> None:
    reset()
    out.fill(0)
    kernel(*args)  # type: ignore[operator]
    print(name, out.to_numpy().tolist(), f.to_numpy().tolist())


@qd.kernel
def struct_for(t: qd.template()):
    for i in t[0]:
        out[i] += t[0][i]
    for i, j in t[1]:
        out[i * 3 + j + 4] += t[1][i, j]


@qd.kernel
def struct_for_at(t: qd.template(), j: qd.template()):
    for i in t[j]:
        out[i] += t[j][i] * 2


@qd.kernel
def shape_range(t: qd.template()):
    for i in range(t[1].shape[0]):
        out[i] = t[1][i] + t[0].shape[0]


@qd.kernel
def static_len(t: qd.template()):
    for j in qd.static(range(len(t))):
        for i in t[j]:
            out[i + 4 * j] += t[j][i]


@qd.kernel
def twice(t: qd.template()):
    for i in range(4):
        t[0][i] += 1.0
    for i in range(4):
        out[i] = t[0][i] + t[1][i]


@qd.kernel
def nested(t: qd.template()):
    for i in t[1][0]:
        out[i] = t[1][0][i] + t[0][i]
    for i, j in t[1][1]:
        out[4 + i * 3 + j] = t[1][1][i, j]


@qd.kernel
def static_items(t: qd.template()):
    for x in qd.static(t):
        for i in x:
            out[i] += x[i]


@qd.kernel
def enumerated(t: qd.template()):
    for k, x in qd.static(enumerate(t)):
        for i in x:
            out[i + 4 * k] = x[i] * (k + 1)


@qd.kernel
def kinds(t: qd.template()):
    for i in t[1]:
        out[i] = t[1][i][0] + t[1][i].y + t[0][i] + t[2][i].a + t[2][i].b
        t[0].grad[i] = 1.0
    for i in range(t[0].shape[0]):
        out[i + 4] = t[0].grad[i] * 3


@qd.func
def total(t: qd.template(), i: qd.i32) -> qd.f32:
    s = 0.0
    for j in qd.static(range(len(t))):
        s += t[j][i]
    return s


@qd.kernel
def through_a_func(t: qd.template()):
    for i in t[0]:
        out[i] = total(t, i)


show("struct_for", struct_for, (f, g))
show("struct_for_at", struct_for_at, (g, f), 1)
show("shape_range", shape_range, (g, f))
show("static_len", static_len, (f, f))
show("twice", twice, (f, f))
show("nested", nested, (f, (f, g)))
show("static_items", static_items, (f, f))
show("enumerated", enumerated, (f, f))
show("kinds", kinds, (f, v, sf))
show("through_a_func", through_a_func, (f, f, f))
a = qd.ndarray(qd.f32, shape=4)
try:
    struct_for((a, a))
except Exception as e:  # noqa: BLE001
    print("ndarray", isinstance(e, qd.QuadrantsRuntimeTypeError), "qd.template()" in str(e))
