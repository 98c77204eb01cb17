"""Forward-mode autodiff (`qd.ad.FwdMode`): duals through arithmetic, math functions, `min` /
`max`, `if`s, casts, locals, a serial loop carrying a value, a reduction into a local in a parallel
loop, atomics into a 0-d field, a 2-D column-major field, a seed picking one element and the
default seed of a 0-d parameter; each printed line must be Quadrants'."""

import importlib
import os

import numpy as np

qd = importlib.import_module(os.environ.get("QD_IMPL", "quadrants"))
qd.init(arch=qd.cpu, offline_cache=False)
N = 8
x = qd.field(qd.f32, shape=N, needs_dual=True)
y = qd.field(qd.f32, shape=N, needs_dual=True)
z = qd.field(qd.f32, shape=N, needs_dual=True)
total = qd.field(qd.f32, shape=(), needs_dual=True)
s0 = qd.field(qd.f32, shape=(), needs_dual=True)
out = qd.field(qd.f32, shape=(), needs_dual=True)
grid = qd.field(qd.f32)
img = qd.field(qd.f32)
qd.root.dense(qd.j, 4).dense(qd.i, 3).place(grid, img)
colw = qd.field(qd.f32, shape=4)
qd.root.lazy_dual()


@qd.kernel
def maths():
    for i in range(N):
        a = x[i]
        b = qd.sin(a) * qd.exp(a * 0.5) + a * a / (a + 3.0)
        c = qd.sqrt(a + 1.0) - qd.tanh(a) + a**3
        if a > 0.3:
            c = c * 2.0 + qd.cos(a)
        y[i] = qd.max(b, c) - qd.min(b, 0.1) + qd.log(a + 2.0)
        z[i] = qd.cast(qd.cast(a * 10.0, qd.i32), qd.f32) + qd.cast(a, qd.f64) * 2.0


@qd.kernel
def reduce():
    s = 0.0
    for i in range(N):
        s += x[i] * x[i] + y[i]
    total[None] = s
    for i in range(N):
        qd.atomic_add(total[None], qd.sin(x[i]))


@qd.kernel
def carried():
    v = x[0]
    for i in range(1, N):
        v = v * 0.5 + x[i] * v
    out[None] = v + s0[None] * s0[None]


@qd.kernel
def columns():
    for i, j in grid:
        img[i, j] = grid[i, j] * colw[j] * colw[j] * (i + 1) + grid[(i + 1) % 3, j] * colw[j]


x.from_numpy(np.linspace(0.1, 0.9, N).astype(np.float32))
with qd.ad.FwdMode(loss=y, param=x, seed=[1.0] * N):
    maths()
print(np.round(y.to_numpy(), 5).tolist())
print(np.round(y.dual.to_numpy(), 4).tolist(), np.round(z.dual.to_numpy(), 4).tolist())
seed = [0.0] * N
seed[3] = 1.0
with qd.ad.FwdMode(loss=[total], param=x, seed=seed):
    maths()
    reduce()
print(round(float(total[None]), 4), round(float(total.dual[None]), 4), x.dual.to_numpy().tolist())
with qd.ad.FwdMode(loss=out, param=x, seed=[1.0] * N):
    carried()
print(round(float(out[None]), 5), round(float(out.dual[None]), 4))
s0[None] = 1.5
with qd.ad.FwdMode(loss=out, param=s0):
    carried()
print(round(float(out[None]), 5), round(float(out.dual[None]), 4))
grid.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4) * 0.25)
colw.from_numpy(np.array([1.0, 0.5, -2.0, 3.0], np.float32))
with qd.ad.FwdMode(loss=img, param=colw, seed=[1.0, 0.0, 1.0, 0.5]):
    columns()
print(img.to_numpy().tolist(), img.dual.to_numpy().tolist())
