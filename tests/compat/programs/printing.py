"""print in kernels: every line must read as Quadrants prints it (C's printf conversions).

`.format` here is the kernel's, not Python's: ruff must not turn it into f-strings."""

# ruff: noqa: UP032, F525, PLE1300

import importlib
import os

import numpy as np

qd = importlib.import_module(os.environ.get("QD_IMPL", "quadrants"))
qd.init(arch=qd.cpu, offline_cache=False)


@qd.kernel
def scalars(x: qd.f32, n: qd.i32, u: qd.u8, d: qd.f64, w: qd.u64, m: qd.i64):
    print(x > 0, x, n, u, d, w, m)
    print("a", x, sep="|")
    print(f"x={x} n={n:5d} y={x:.3f} d={d:e} u={u:x}", end="!\n")
    print("n", n, end="")
    print()
    print(1.5, 7, "s", True)


@qd.kernel
def formats(k: qd.f32):
    print("P: {:d} abc".format(123))
    print("P: {:i} {:.1} {:.10d}".format(1, 2, 3))
    print("P: {:.2} {name:i} {value:d}".format(k, name=999, value=123))
    print("P: {:.2e} {name:.3G} {value:.4f}".format(k, name=123.4, value=456.7))
    print("P: {2:.1} {:.2} {1:.3} {k:.4e} {0:.5} {k:.5f} {0:.5} {k:.4g}".format(3.0, 2.0, 1.0, k=k))
    print(f"P: {k:.1f} {4} {True} {1.23} {k:+.2f}")


@qd.kernel
def in_loop(a: qd.types.NDArray[qd.i32, 1]):
    qd.loop_config(serialize=True)
    for i in range(a.shape[0]):
        print("a[", i, "] =", a[i])


scalars(1.25, -3, 200, 2.5, 2**64 - 1, -(2**40))
formats(233.3)
in_loop(np.array([4, 5, 6], np.int32))
