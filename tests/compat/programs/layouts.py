"""Dense layouts in memory order: a column-major `qd.root.dense(qd.j, ...).dense(qd.i, ...)`, a 3-D
permutation, a vector field and a field with a gradient laid out so; what kernels, host accesses,
`to_numpy` / `from_numpy` / `fill`, `x.snode._physical_index_position()` and the steps of
`qd.get_addr` give; each printed line must be Quadrants'."""

import importlib
import os

import numpy as np

qd = importlib.import_module(os.environ.get("QD_IMPL", "quadrants"))
qd.init(arch=qd.cpu, offline_cache=False)
b = qd.field(qd.f32)
qd.root.dense(qd.j, 32).dense(qd.i, 16).place(b)
c = qd.field(qd.i32)
qd.root.dense(qd.k, 4).dense(qd.i, 2).dense(qd.j, 8).place(c)
v = qd.Vector.field(3, qd.f32)
qd.root.dense(qd.j, 4).dense(qd.i, 8).place(v)
g = qd.field(qd.f32, needs_grad=True)
qd.root.dense(qd.j, 8).dense(qd.i, 4).place(g, g.grad)
loss = qd.field(qd.f32, shape=(), needs_grad=True)
a = qd.field(qd.f32, shape=(128, 32, 8))
print(a.snode._physical_index_position(), b.snode._physical_index_position())
print(c.snode._physical_index_position(), b.shape, c.shape, v.shape)


@qd.kernel
def fill():
    for i, j in b:
        b[i, j] = i * 10 + j
    for i, j, k in c:
        c[i, j, k] = i * 100 + j * 10 + k
    for i, j in v:
        v[i, j] = qd.Vector([i, j, i * j])


@qd.kernel
def addr_b(i: qd.i32, j: qd.i32) -> qd.u64:
    return qd.get_addr(b, [i, j])


@qd.kernel
def addr_c(i: qd.i32, j: qd.i32, k: qd.i32) -> qd.u64:
    return qd.get_addr(c, [i, j, k])


@qd.kernel
def sums() -> qd.f32:
    s = 0.0
    for i, j in b:
        s += b[i, j] * (j + 1)
    for i in range(2):
        for j in range(8):
            s += c[i, j, 3] - c[1 - i, 7 - j, 0]
    return s


@qd.kernel
def square():
    for i, j in g:
        loss[None] += g[i, j] * g[i, j] * (i + 1)


fill()
print(b[3, 5], c[1, 7, 3], v[5, 2], sums())
print(addr_b(0, 1) - addr_b(0, 0), addr_b(1, 0) - addr_b(0, 0), addr_b(15, 31) - addr_b(0, 0))
print(addr_c(1, 0, 0) - addr_c(0, 0, 0), addr_c(0, 1, 0) - addr_c(0, 0, 0))
print(addr_c(0, 0, 1) - addr_c(0, 0, 0))
print(b.to_numpy()[[0, 3, 15], [1, 5, 31]].tolist(), c.to_numpy()[:, 2, 1].tolist())
b.from_numpy(np.arange(16 * 32, dtype=np.float32).reshape(16, 32))
b[2, 3] = -1.0
print(b[2, 3], b[1, 0], b[0, 1], sums())
c.fill(7)
print(sums(), c[1, 5, 2])
g.from_numpy(np.arange(32, dtype=np.float32).reshape(4, 8))
with qd.ad.Tape(loss):
    square()
print(loss[None], g.grad.to_numpy()[2].tolist())
