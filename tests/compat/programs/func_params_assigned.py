"""A @qd.func assigns its own parameters under `if`, in `for` and `while` loops, with `+=`, by
unpacking and across a type: each parameter is a variable of the func's body (passed by value), so
the value it holds after the `if` or the loop is what the func returns, and the caller's variable
is untouched. Each printed line must be Quadrants'."""

import importlib
import os

import numpy as np

qd = importlib.import_module(os.environ.get("QD_IMPL", "quadrants"))
qd.init(arch=qd.cpu, offline_cache=False)


@qd.func
def bump_if(n: qd.i32, flag: qd.i32):
    if flag:
        n = n + 1
    return n


@qd.func
def bump_else(n: qd.i32, flag: qd.i32) -> qd.i32:
    if flag > 1:
        n += 10
    elif flag == 1:
        n -= 3
    else:
        n = n * 2
    return n


@qd.func
def sum_to(n: qd.i32, x: qd.f32):
    for i in range(n):
        x += 0.5 * i
    return x


@qd.func
def phases(phase: qd.i32, alpha: qd.f32) -> qd.f32:
    w = 0
    while phase < 3 and w < 20:  # a line search that advances its phase argument
        w += 1
        alpha = alpha * 0.5
        if alpha < 0.2:
            phase = phase + 2
        else:
            phase += 1
    return alpha + phase


@qd.func
def truncated(n: qd.i32):
    if n > 0:
        n = n * 0.5 + 1.7  # cast to the parameter's type, i32
    return n


@qd.func
def untyped(n, x):
    for _ in range(3):
        n += 1
        x = x * 1.5
    return n, x


@qd.func
def swapped(a: qd.i32, b: qd.i32):
    if a > b:
        a, b = b, a
    return a * 100 + b


@qd.func
def nested(n: qd.i32, flag: qd.i32) -> qd.i32:
    n = bump_if(n, flag)  # the callee's parameter and the caller's both assigned
    if n > 3:
        n = bump_else(n, 2)
    return n


@qd.func
def stopped(n: qd.i32, limit: qd.i32) -> qd.i32:
    for i in range(100):
        if n >= limit:
            break
        n += i
    return n


@qd.func
def scaled(v: qd.math.vec3, m: qd.math.mat2, flag: qd.i32):
    if flag:
        v = v * 2.0
        m[0, 1] = m[0, 1] + 7.0
    return v.sum() + m.sum()


Pair = qd.types.struct(a=qd.i32, b=qd.f32)


@qd.func
def pair_shift(p: Pair, flag: qd.i32) -> qd.f32:
    if flag:
        p.a = p.a + 3
        p = Pair(a=p.a * 2, b=p.b + 1.0)
    return p.a + p.b


@qd.kernel
def serial(out: qd.types.NDArray[qd.f32, 1]):
    out[0] = bump_if(5, 1)
    out[1] = bump_if(5, 0)
    c = 0
    for d in range(3):
        c = bump_if(c, 1)
    out[2] = c
    out[3] = bump_else(4, 2) + bump_else(4, 1) * 100 + bump_else(4, 0) * 10000
    out[4] = sum_to(5, 1.0)
    out[5] = phases(0, 1.0)
    out[6] = truncated(7)
    n, x = untyped(1, 2.0)
    out[7] = n + x
    out[8] = swapped(9, 4) + swapped(2, 3) * 10000
    out[9] = nested(3, 1)
    if out[0] > -1:  # under a runtime `if`, stopped's loop is serial and may break
        out[10] = stopped(0, 20)
    out[11] = scaled(qd.math.vec3(1.0, 2.0, 3.0), qd.math.mat2([[1.0, 2.0], [3.0, 4.0]]), 1)
    out[12] = pair_shift(Pair(a=2, b=0.5), 1)
    k = 6
    kept = bump_if(k, 1)  # the caller's `k` is passed by value
    out[13] = k * 100 + kept


@qd.kernel
def parallel(a: qd.types.NDArray[qd.i32, 1], b: qd.types.NDArray[qd.f32, 1]):
    for i in range(a.shape[0]):
        a[i] = nested(a[i], i % 2) + stopped(i, 2 * i + 1)
        b[i] = phases(i % 4, b[i]) + bump_if(i, i % 3)


out = np.zeros(14, np.float32)
serial(out)
print("serial", out.tolist())
a = np.arange(-4, 12, dtype=np.int32)
b = np.linspace(0.1, 3.0, 16).astype(np.float32)
parallel(a, b)
print("parallel", a.tolist(), [f"{x:.6f}" for x in b])
