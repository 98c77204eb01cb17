"""`qd.func(f)(x)` inside a kernel makes the Python function `f` a @qd.func there and inlines it
(Quadrants' test_unary_ops writes its kernels so); each printed line must be Quadrants'."""

import importlib
import os

qd = importlib.import_module(os.environ.get("QD_IMPL", "quadrants"))
qd.init(arch=qd.cpu, offline_cache=False)
n = 4
val = qd.field(qd.f64, shape=n)


def f(i):
    return i * 0.1 + 0.4


@qd.kernel
def fill():
    for i in range(n):
        val[i] = qd.sin(qd.func(f)(qd.cast(i, qd.f64)))


fill()
print([f"{x:.15f}" for x in val.to_numpy()])
