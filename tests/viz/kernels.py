"""Kernels whose reports the visualizer tests draw: splittable ones and one per reachable fallback
code.

They live in a real file because qdlab reads kernel source with `inspect`."""

from __future__ import annotations

import qdlab as qd

F1 = qd.types.NDArray[qd.f32, 1]
I1 = qd.types.NDArray[qd.i32, 1]


@qd.kernel
def shared_scale(x: F1, y: F1, z: F1, s: qd.f32):
    k = s * 0.5
    for i in range(x.shape[0]):
        y[i] = x[i] * k
    for i in range(x.shape[0]):
        z[i] = x[i] + k


@qd.kernel
def three_loops(x: F1, y: F1, z: F1):
    n = x.shape[0]
    for i in range(n):
        y[i] = x[i] * 2.0
    for i in range(n):
        z[i] = x[i] + 1.0
    if n > 0:
        z[0] = 7.0


@qd.kernel
def running_total(x: F1, out: F1):
    total = 0.0
    for i in range(x.shape[0]):
        total += x[i]
    for i in range(out.shape[0]):
        out[i] = total


@qd.kernel
def stale_snapshot(a: F1, out: F1):
    first = a[0]
    for i in range(a.shape[0]):
        a[i] = 0.0
    for i in range(out.shape[0]):
        out[i] = first


@qd.kernel
def shared_draw(x: F1, y: F1):
    r = qd.random()
    for i in range(x.shape[0]):
        x[i] = r
    for i in range(y.shape[0]):
        y[i] = r


@qd.kernel
def ticket(c: I1, out: I1, out2: I1):
    old = qd.atomic_add(c[0], 1)
    for i in range(out.shape[0]):
        out[i] = old
    for i in range(out2.shape[0]):
        out2[i] = old


@qd.kernel
def concurrent(x: F1, y: F1):
    with qd.stream_parallel():
        for i in range(x.shape[0]):
            x[i] = 1.0
        for i in range(y.shape[0]):
            y[i] = 2.0


@qd.kernel
def grad_snapshot(
    a: qd.types.ndarray(dtype=qd.f32, ndim=1, needs_grad=True),
    b: qd.types.ndarray(dtype=qd.f32, ndim=1, needs_grad=True),
    out: F1,
):
    g = a.grad[0]
    for i in range(b.shape[0]):
        b.grad[i] = 0.0
    for i in range(out.shape[0]):
        out[i] = g


def many_loops_source(n: int) -> str:
    """A kernel with `n` top-level loops sharing one pure definition (for the render-time check)."""
    body = "".join(
        f"    for i in range(x.shape[0]):\n        o[i] = x[i] * k + {j}.0\n" for j in range(n)
    )
    return (
        "import qdlab as qd\n\nF1 = qd.types.NDArray[qd.f32, 1]\n\n\n@qd.kernel\n"
        f"def many_loops(x: F1, o: F1, s: qd.f32):\n    k = s * 0.5\n{body}"
    )
