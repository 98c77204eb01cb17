"""Struct fields with gradients (`S.field(..., needs_grad=True)`, as Genesis' differentiable MPM
grid and particles): `s.grad[i].m` read and written in kernels (members, vector members and their
entries, whole elements), the reverse mode filling each member's gradient through a struct
field, both layouts. Each printed line must be Quadrants'; QD_WHOLE=1 runs qdlab's whole-kernel
path."""

import importlib
import os

qd = importlib.import_module(os.environ.get("QD_IMPL", "quadrants"))
WHOLE = {"per_offload": False} if os.environ.get("QD_WHOLE") == "1" else {}
qd.init(arch=qd.cpu, offline_cache=False, **WHOLE)
S = qd.types.struct(v=qd.types.vector(3, qd.f32), m=qd.f32)


def run(layout) -> None:
    s = S.field(shape=(2, 4), needs_grad=True, layout=layout)
    out = qd.field(qd.f32, shape=4)
    loss = qd.field(qd.f32, shape=(), needs_grad=True)

    @qd.kernel
    def reset(f: qd.i32):
        for i in range(4):
            s[f, i].v = qd.Vector([1.0, 2.0, 3.0]) * i
            s[f, i].m = 0.5 * i
            s.grad[f, i].v = qd.Vector.zero(qd.f32, 3) + f
            s.grad[f, i].m = 7.0 + i
            s.grad[f, i].v[1] += s[f, i].v[2]

    @qd.kernel
    def read(f: qd.i32):
        for i in range(4):
            e = s.grad[f, i]
            out[i] = e.m + e.v[1] * 10.0

    @qd.kernel
    def energy():
        for f, i in s:
            loss[None] += s[f, i].m * s[f, i].v.dot(s[f, i].v)

    reset(1)
    read(1)
    print(layout, s.grad.m.to_numpy().tolist(), s.grad.v.to_numpy()[1].tolist())
    print(out.to_numpy().tolist(), s.grad[1, 2].m, s.grad[1, 2].v.to_numpy().tolist())
    reset(0)
    s.grad.m.fill(0)
    s.grad.v.fill(0)
    with qd.ad.Tape(loss=loss):
        energy()
    print(loss[None], s.grad.m.to_numpy().tolist(), s.grad.v.to_numpy()[1].tolist())


for layout in (qd.Layout.SOA, qd.Layout.AOS):
    run(layout)
