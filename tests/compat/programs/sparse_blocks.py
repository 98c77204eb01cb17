"""Struct-fors over `pointer(...).dense(...)` trees of 2 and 3 axes with blocks of unequal extents
(`(2, 3, 4)`): each active block's cells in the order of its axes, the last innermost, with a
`continue`, a write through the loop's own indices, an integer reduction weighted by each index, a
`qd.grouped` loop, and a struct-for over the pointer level itself. Each printed line must be
Quadrants'; QD_WHOLE=1 runs qdlab's whole-kernel path."""

import importlib
import os

import numpy as np

qd = importlib.import_module(os.environ.get("QD_IMPL", "quadrants"))
WHOLE = {"per_offload": False} if os.environ.get("QD_WHOLE") == "1" else {}
qd.init(arch=qd.cpu, offline_cache=False, **WHOLE)

x, y = qd.field(qd.i32), qd.field(qd.i32)
ptr = qd.root.pointer(qd.ijk, (3, 2, 2))
ptr.dense(qd.ijk, (2, 3, 4)).place(x, y)
u = qd.field(qd.f32)
qd.root.pointer(qd.ij, (4, 3)).dense(qd.ij, (3, 2)).place(u)


@qd.kernel
def fill(cells: qd.types.ndarray(dtype=qd.i32, ndim=2)):
    for p in range(cells.shape[0]):
        i, j, k = cells[p, 0], cells[p, 1], cells[p, 2]
        x[i, j, k] = i * 100 + j * 10 + k + 1


@qd.kernel
def sweep() -> qd.i64:
    total = qd.cast(0, qd.i64)
    for i, j, k in x:
        if (i + j + k) % 5 == 0:
            continue
        y[i, j, k] = x[i, j, k] * 2 - k
        total += qd.cast(y[i, j, k], qd.i64) * (i * 97 + j * 13 + k + 1)
    return total


@qd.kernel
def blocks() -> qd.i32:
    n = 0
    for i, j, k in ptr:
        n += i * 16 + j * 4 + k + 1
    return n


@qd.kernel
def grouped_2d() -> qd.f32:
    s = 0.0
    for I in qd.grouped(u):
        u[I] = I[0] * 10.0 + I[1]
        s += u[I] * (I[0] + 1)
    return s


rng = np.random.default_rng(3)
cells = np.stack([rng.integers(0, n, 12) for n in (6, 6, 8)], 1).astype(np.int32)
fill(cells)
print("sweep", sweep())
print("x", x.to_numpy().sum(), "y", y.to_numpy().sum(), (y.to_numpy() * np.arange(8)).sum())
print("blocks", blocks())
u[0, 0] = 1.0
u[7, 5] = 1.0
u[11, 0] = 1.0
print("grouped", grouped_2d(), u.to_numpy().sum())
