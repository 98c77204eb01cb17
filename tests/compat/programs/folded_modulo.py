"""`%` and `//` on integers of mixed signs: Quadrants computes them at run time as Python does
(floored), but folds one whose operands became constants while compiling (a `@qd.func` called with
literals, a local assigned a literal) as C does (truncated); a literal expression is Python's (the
front end evaluates it). Each printed line must be Quadrants'. The random-program generator keeps
its own `//` and `%` to non-negative operands, where the two agree."""

import importlib
import os

import numpy as np

qd = importlib.import_module(os.environ.get("QD_IMPL", "quadrants"))
kw = {"per_offload": False} if os.environ.get("QD_WHOLE") else {}
qd.init(arch=qd.cpu, offline_cache=False, **kw)


@qd.func
def mod_or(n: qd.i32):
    return 1 % (n | 1)


@qd.func
def reassigned(n: qd.i32):
    if (1 % (n | 1)) > 0:
        n = 0
    return n


@qd.func
def floor_of(n: qd.i32, d: qd.i32):
    return n // d


@qd.kernel
def mixed(a: qd.types.ndarray(), out: qd.types.ndarray()):
    out[0] = mod_or(-3)
    out[1] = mod_or(a[0])
    out[2] = 1 % -3
    x = -3
    out[3] = 1 % x
    out[4] = reassigned(-3)
    out[5] = reassigned(a[0])
    out[6] = 7 % -3
    out[7] = -7 % 3
    out[8] = floor_of(-7, 2)
    out[9] = floor_of(a[1], 2)
    y = -7
    out[10] = y // 2
    out[11] = -7 // 2
    out[12] = floor_of(7, -2) + floor_of(a[2], -2) * 100
    for i in range(2):  # in a loop: a local assigned a literal, and a run-time operand
        z = -5
        out[13 + i] = z % 3 + (a[1] % 3) * 10 + i


a = np.array([-3, -7, 7], np.int32)
out = np.zeros(15, np.int32)
mixed(a, out)
print("mixed", out.tolist())
