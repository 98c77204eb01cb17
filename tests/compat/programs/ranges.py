"""qd.ndrange in Python and in kernels (axes=, spread arguments, NumPy integers), static `if`
choosing a loop's iterable, casts to the default types: each line must be Quadrants'."""

# ruff: noqa: SIM113 - `k` counts iterations of a kernel loop, where enumerate() does not exist

import importlib
import os

import numpy as np

qd = importlib.import_module(os.environ.get("QD_IMPL", "quadrants"))
qd.init(arch=qd.cpu, offline_cache=False)
print(list(qd.ndrange(2, 3, axes=(1, 0))), list(qd.ndrange()), list(qd.ndrange((1, 3), 2)))


@qd.kernel
def order(a: qd.types.NDArray[qd.i32, 1]):
    k = 0
    qd.loop_config(serialize=True)
    for i, j in qd.ndrange(3, (1, 3), axes=(1, 0)):
        a[k] = i * 10 + j
        k += 1


a = np.zeros(6, np.int32)
order(a)
print(a.tolist())


@qd.kernel
def star() -> qd.i32:
    ret = 0
    for I in qd.grouped(qd.ndrange(*[[1, 3]] * 3)):
        ret += I[0] + I[1] + I[2]
    return ret


print(star())
lo, hi = np.int64(0), np.int32(10)


@qd.kernel
def npint() -> qd.i32:
    s = 0
    for i in qd.ndrange((lo, hi)):
        s += i
    for i in qd.static(qd.ndrange((lo, 3))):
        s += 100
    return s


print(npint())


@qd.kernel
def pick(a: qd.types.NDArray[qd.i32, 1], n: qd.i32, dynamic: qd.template()):
    for i in range(n) if qd.static(dynamic) else qd.static(range(3)):
        a[i] += 1


b = np.zeros(6, np.int32)
pick(b, 5, True)
pick(b, 5, False)
print(b.tolist())


@qd.kernel
def casts(x: qd.f32, y: qd.f32) -> qd.f32:
    return qd.cast(x, int) * int(y) + qd.cast(x, float)


print(casts(23.3, 4.6))
