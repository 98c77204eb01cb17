"""`qd.f16`: ndarrays and fields stored as half, arithmetic rounded to half after each operation,
atomics, math functions, conversions, scalar arguments and results; each printed line must be
Quadrants'."""

import importlib
import os

import numpy as np

qd = importlib.import_module(os.environ.get("QD_IMPL", "quadrants"))
qd.init(arch=qd.cpu, offline_cache=False)
half2 = qd.types.vector(2, qd.f16)
f = qd.field(qd.f16, shape=8)


@qd.kernel
def fill(a: qd.types.NDArray[half2, 1], s: qd.f16) -> qd.f16:
    for i in range(a.shape[0]):
        a[i] = half2(s * i + 0.1, qd.sqrt(qd.f16(i)))
    for i in f:
        f[i] = qd.sin(qd.f16(i) * s) / 3 + qd.exp(qd.f16(i) * 0.25)
    total = qd.f16(0.0)
    for i in range(8):
        total += f[i] * 0.37
    return total


@qd.kernel
def atomics(out: qd.types.NDArray[qd.f16, 1]):
    for i in range(96):
        v = qd.cast(i % 17 * 0.173, qd.f16)
        qd.atomic_max(out[0], v)
        qd.atomic_min(out[1], -v)
        out[2] += 0.5


@qd.kernel
def mixed(x: qd.f16) -> qd.f32:
    y = x * 3 + 0.7  # f16 * int, then an f32 literal: the result is f32
    z = qd.f16(y) / 7
    return qd.cast(z, qd.f32) + qd.cast(qd.cast(x, qd.i32), qd.f32)


@qd.kernel
def extremes(
    a: qd.types.NDArray[qd.f16, 1], b: qd.types.NDArray[qd.f16, 1], o: qd.types.NDArray[qd.f16, 1]
):
    for i in range(a.shape[0]):  # a NaN gives the other operand
        o[2 * i] = qd.min(a[i], b[i])
        o[2 * i + 1] = qd.max(a[i], b[i])
    lo, hi = qd.f16(9.0), qd.f16(-9.0)
    for i in range(96):  # a loop reducing halves by min and max (once aborted LLVM's vectorizer)
        lo = qd.min(lo, qd.cast(i % 32 * 0.1523, qd.f16))
        hi = qd.max(hi, qd.cast(i % 32 * 0.1523, qd.f16))
    o[10], o[11] = lo, hi


a = qd.ndarray(half2, shape=(5,))
print(f"{fill(a, 1.7):.6f}")
print(a.to_numpy().tolist())
print(f.to_numpy().tolist(), f.to_numpy().dtype)
out = qd.ndarray(qd.f16, shape=(3,))
out.from_numpy(np.array([-5.0, 5.0, 0.0], np.float16))
atomics(out)
print(out.to_numpy().tolist())
print(f"{mixed(2.3):.6f}", f"{mixed(-70.1):.6f}")
# not -0.0 against 0.0: Quadrants compiles with fast-math (no signed zeros), and which
# zero its min/max give for them differs from machine to machine (the first operand on
# one, the second on another)
x = np.array([-1.5, 2.0, np.nan, 1.0, np.nan], np.float16)
y = np.array([2.0, -1.5, 1.0, np.nan, np.nan], np.float16)
o = np.zeros(12, np.float16)
extremes(x, y, o)
print(o.tolist(), np.signbit(o).tolist())
