"""Recursive `@qd.real_func`s: a field summed by halves (a template parameter), an ndarray, mutual
recursion, a recursive call in a parallel loop, recursion that writes, a call whose result a later
construct uses after an array it read was written, and a deep one; each printed line must be
Quadrants'."""

import importlib
import os

import numpy as np

qd = importlib.import_module(os.environ.get("QD_IMPL", "quadrants"))
qd.init(arch=qd.cpu, offline_cache=False)
I32 = qd.types.NDArray[qd.i32, 1]
f = qd.field(qd.i32, shape=50)
g = qd.field(qd.f32, shape=10)


@qd.real_func
def halves(x: qd.template(), lo: qd.i32, hi: qd.i32) -> qd.i32:
    if lo == hi:
        return x[lo]
    return halves(x, lo, (lo + hi) // 2) + halves(x, (lo + hi) // 2 + 1, hi)


@qd.real_func
def total(a: I32, lo: qd.i32, hi: qd.i32) -> qd.i32:
    if lo > hi:
        return 0
    return a[lo] + total(a, lo + 1, hi)


@qd.real_func
def is_even(n: qd.i32) -> qd.i32:
    if n == 0:
        return 1
    return is_odd(n - 1)


@qd.real_func
def is_odd(n: qd.i32) -> qd.i32:
    if n == 0:
        return 0
    return is_even(n - 1)


@qd.real_func
def fib(n: qd.i32) -> qd.i32:
    r = n
    if n >= 2:
        r = fib(n - 1) + fib(n - 2)
    return r


@qd.real_func
def fill(x: qd.template(), n: qd.i32, v: qd.f32):
    if n >= 0:
        x[n] = v
        fill(x, n - 1, v * 0.5)


@qd.real_func
def power(b: qd.f32, e: qd.i32) -> qd.f32:
    for _ in range(1):  # a return inside a loop leaves the call
        if e == 0:
            return 1.0
    return b * power(b, e - 1)


@qd.real_func
def depth(n: qd.i32) -> qd.i32:
    if n == 0:
        return 0
    return depth(n - 1) + n


@qd.kernel
def run(a: I32, out: I32) -> qd.i32:
    s = total(a, 0, a.shape[0] - 1)
    a[0] = 100  # the sum above read a[0] before this
    out[0] = s
    out[1] = total(a, 0, a.shape[0] - 1)
    for i in range(10):
        out[2 + i] = fib(i) + is_even(i) * 1000
    fill(g, 9, 64.0)
    out[12] = qd.i32(power(2.0, 10))
    return halves(f, 0, 49)


@qd.kernel
def deep(n: qd.i32) -> qd.i32:
    return depth(n)


for i in range(50):
    f[i] = i * 3
a = np.arange(6, dtype=np.int32)
out = np.zeros(13, np.int32)
print(run(a, out))
print(out.tolist())
print(a.tolist())
print([float(g[i]) for i in range(10)])
print(deep(100), deep(1000))
