"""`@qd.real_func`: returns in loops and `if`s, `qd.ref` parameters, serial loops, vector and
struct results, ndarray arguments; each printed line must be Quadrants'."""

import importlib
import os

qd = importlib.import_module(os.environ.get("QD_IMPL", "quadrants"))
qd.init(arch=qd.cpu, offline_cache=False)
x = qd.field(qd.i32, shape=8)
pair = qd.types.struct(a=qd.i32, b=qd.math.vec2)


@qd.real_func
def find(a: qd.types.NDArray[qd.f32, 1], t: qd.f32) -> qd.i32:
    for i in range(a.shape[0]):
        if a[i] >= t:
            return i
    return -1


@qd.real_func
def factors(p: qd.i32) -> qd.math.vec2:
    i = 2
    while i < p:
        for j in range(2, p):
            if i * j == p:
                return qd.math.vec2(i, j)
        i += 1
    return qd.math.vec2(1, p)


@qd.real_func
def accumulate(total: qd.ref(qd.f32), v: qd.f32):
    total += v * 2.0


@qd.real_func
def prefix():
    for i in range(1, 8):
        x[i] += x[i - 1]


@qd.real_func
def make(k: qd.i32) -> pair:
    return pair(a=k, b=qd.math.vec2(k * 0.5, k + 0.25))


@qd.kernel
def run(a: qd.types.NDArray[qd.f32, 1]) -> qd.f32:
    s = 0.0
    for k in range(4):
        accumulate(s, a[k])
    prefix()
    f = factors(35)
    p = make(3)
    return s * 1000 + find(a, 2.5) * 100 + f[0] * 10 + f[1] + p.a + p.b[0] + p.b[1]


@qd.func
def square(v: qd.i32) -> qd.i32:
    return v * v


@qd.real_func
def digits(n: qd.i32) -> qd.i32:
    count = 0
    m = n
    while True:
        count += 1
        m //= 10
        if m == 0:
            return count + square(0)


@qd.real_func
def mark_until(out: qd.types.NDArray[qd.i32, 1], stop: qd.i32) -> qd.i32:
    for i in range(out.shape[0]):
        if i == stop:
            return i * 1000
        out[i] = digits(square(i) * 37) + first_prime_after(i)
    return -1


@qd.real_func
def first_prime_after(n: qd.i32) -> qd.i32:
    k = n + 1
    while True:
        prime = 1
        for d in range(2, k):
            if d * d > k:
                break
            if k % d == 0:
                prime = 0
                break
        if prime == 1 and k > 1:
            return k
        k += 1


@qd.kernel
def per_element(out: qd.types.NDArray[qd.i32, 1], stop: qd.i32):
    for i in range(out.shape[0]):
        out[i] = first_prime_after(i * 3) * 100 + digits(i * 1234)
    out[0] += mark_until(out, stop)


a = qd.ndarray(qd.f32, shape=(4,))
for k in range(4):
    a[k] = k + 0.5
for k in range(8):
    x[k] = k
print(f"{run(a):.3f}")
print(x.to_numpy().tolist())
out = qd.ndarray(qd.i32, shape=(12,))
per_element(out, 5)
print(out.to_numpy().tolist())
