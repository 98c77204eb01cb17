"""`**` and `qd.pow` of two constants (a local assigned a float literal, a Python float) fold as
Quadrants folds them: C's `pow` in double, rounded once to the type, where run time multiplies in
the type; each printed line must be Quadrants'. Genesis' SPH kernel computes
`k = 8.0 / np.pi / h**3` with `h` a local assigned the support radius."""

import importlib
import os

import numpy as np

qd = importlib.import_module(os.environ.get("QD_IMPL", "quadrants"))
qd.init(arch=qd.cpu, offline_cache=False)


@qd.kernel
def f32s() -> qd.types.vector(8, qd.f32):
    h = 0.08
    g = 1.37
    k = 8.0 / np.pi / h**3
    return qd.Vector([h**3, h**2.5, h**-2, qd.pow(h, 3), g**7, g**0.5, (h + g) ** 3, k])


@qd.kernel
def at_run_time(h: qd.f32) -> qd.f32:
    return h**3


@qd.kernel
def f64s() -> qd.types.vector(2, qd.f64):
    h = qd.f64(0.08)
    return qd.Vector([h**3, h**7])


@qd.kernel
def ints() -> qd.types.vector(3, qd.i32):
    n = 3
    m = -2
    return qd.Vector([n**5, m**3, n**19])


print(*[np.float32(v).tobytes().hex() for v in f32s()])
print(np.float32(at_run_time(0.08)).tobytes().hex())
print(*[float(v).hex() for v in f64s()])
print(ints())
