"""Gradients through serial loops, ifs and locals: each printed gradient must be Quadrants'."""

import importlib
import os

import numpy as np

qd = importlib.import_module(os.environ.get("QD_IMPL", "quadrants"))
qd.init(arch=qd.cpu, offline_cache=False, ad_stack_experimental_enabled=True)
N = 8


@qd.kernel
def loops(a: qd.types.ndarray(), b: qd.types.ndarray(), p: qd.types.ndarray()):
    for i in range(N):
        ret = 1.0
        w = 1
        for j in range(b[i]):
            ret = ret * a[i] + w * 0.5
            w *= 2
        s = 0.0
        for j in range(b[i] * 2):
            if j % 3 == 0:
                s += ret * a[i]
            else:
                s += qd.sin(a[i])
        p[i] = s


@qd.kernel
def mixed(x: qd.types.ndarray(), y: qd.types.ndarray()):
    for j in range(2):
        for i in range(3):
            y[None] += x[None]
        for i in range(3):
            for ii in range(2):
                y[None] += x[None] * x[None]


def show(name, arr):
    print(name, " ".join(f"{v:.4f}" for v in np.asarray(arr.to_numpy()).ravel()))


a = qd.ndarray(qd.f32, shape=N, needs_grad=True)
b = qd.ndarray(qd.i32, shape=N)
p = qd.ndarray(qd.f32, shape=N, needs_grad=True)
for i in range(N):
    a[i] = 0.5 + 0.1 * i
    b[i] = i % 4
loops(a, b, p)
p.grad.fill(1.0)
loops.grad(a, b, p)
show("p", p)
show("a.grad", a.grad)

x = qd.ndarray(qd.f32, shape=(), needs_grad=True)
y = qd.ndarray(qd.f32, shape=(), needs_grad=True)
x[None] = 1.5
with qd.ad.Tape(loss=y):
    mixed(x, y)
show("y", y)
show("x.grad", x.grad)


@qd.kernel
def remainders(u: qd.types.ndarray(), v: qd.types.ndarray(), w: qd.types.ndarray()):
    for i in range(N):
        w[i] = u[i] % v[i] + (u[i] // v[i]) * u[i] + qd.raw_div(u[i], v[i]) + 1.3 % (v[i] + 1.0)


u = qd.ndarray(qd.f32, shape=N, needs_grad=True)
v = qd.ndarray(qd.f32, shape=N, needs_grad=True)
w = qd.ndarray(qd.f32, shape=N, needs_grad=True)
for i in range(N):
    u[i] = 0.7 * i - 2.1
    v[i] = 0.45 if i % 3 else -0.35
remainders(u, v, w)
w.grad.fill(1.0)
remainders.grad(u, v, w)
show("w", w)
show("u.grad", u.grad)
show("v.grad", v.grad)
