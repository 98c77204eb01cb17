"""Two tapes over the same kernels, with a vec2 ndarray: the tape zeroes its loss on entry, the
gradients of ndarrays accumulate unless cleared; a loss of two elements, or without a gradient
buffer, is refused. Each printed line must be Quadrants'."""

import importlib
import os

qd = importlib.import_module(os.environ.get("QD_IMPL", "quadrants"))
qd.init(arch=qd.cpu, offline_cache=False)
N = 4


@qd.kernel
def compute_sum(a: qd.types.ndarray(), p: qd.types.ndarray()):
    for i in a:
        p[None] += a[i][0] * 2 + a[i][1] * 3


@qd.kernel
def square(p: qd.types.ndarray(), q: qd.types.ndarray()):
    q[None] = p[None] * p[None]


a = qd.ndarray(qd.math.vec2, shape=N, needs_grad=True)
p = qd.ndarray(qd.f32, shape=(), needs_grad=True)
q = qd.ndarray(qd.f32, shape=(), needs_grad=True)
for i in range(N):
    a[i] = [i + 1.0, 2.0 * i]
for run in range(3):
    if run == 2:
        a.grad.fill(0)
    with qd.ad.Tape(loss=q):
        p.fill(0)
        compute_sum(a, p)
        square(p, q)
    print("run", run, "p", p[None], "q", q[None])
    print("grad", [[float(a.grad[i][k]) for k in range(2)] for i in range(N)])

for run in range(2):  # the loss is accumulated into: the tape's zeroing is what keeps it right
    a.grad.fill(0)
    with qd.ad.Tape(loss=p):
        compute_sum(a, p)
    print("sum", run, p[None], [float(a.grad[i][1]) for i in range(N)])

for bad in (qd.ndarray(qd.f32, shape=2, needs_grad=True), qd.ndarray(qd.f32, shape=())):
    try:
        with qd.ad.Tape(loss=bad):
            pass
    except RuntimeError as e:
        print(type(e).__name__, e)
