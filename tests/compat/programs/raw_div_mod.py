"""`qd.raw_div` and `qd.raw_mod` on Python numbers (folded while compiling, as Quadrants folds
them: `//` for two integers, C's truncated remainder), on a static loop index mixed with a runtime
one, on runtime values and on floats; each printed line must be Quadrants'. Genesis' box-box
contact calls `qd.raw_mod(k - j + 3, 3)` with `k` a `qd.static` index."""

import importlib
import os

qd = importlib.import_module(os.environ.get("QD_IMPL", "quadrants"))
qd.init(arch=qd.cpu, offline_cache=False)
out = qd.field(qd.i32, shape=32)
fo = qd.field(qd.f32, shape=8)


@qd.kernel
def ints(m: qd.i32):
    n = 0
    for j in range(3):
        for k in qd.static(range(3)):
            out[n] = qd.raw_mod(k - j + 3, 3)
            out[n + 1] = qd.raw_div(k - j + 3, 2)
            n += 2
    for k in qd.static(range(3)):
        out[18 + k] = qd.raw_mod(k + 7, 3) + qd.raw_div(k - 7, 2) * 10
    out[21] = qd.raw_mod(-7, 3)
    out[22] = qd.raw_div(-7, 2)
    out[23] = qd.raw_mod(m, 3)
    out[24] = qd.raw_div(m, 2)
    out[25] = qd.raw_mod(7, -3)
    out[26] = qd.raw_div(7, -2)
    out[27] = qd.raw_mod(m, -3)
    out[28] = qd.raw_mod(-7, 3) * 0 + qd.raw_div(-9, 4)


@qd.kernel
def floats():
    fo[0] = qd.raw_mod(7.5, 2.0)
    fo[1] = qd.raw_div(7.0, 2.0)
    fo[2] = qd.raw_mod(-7.5, 2)
    fo[3] = qd.raw_div(7, 2.0)
    fo[4] = qd.raw_mod(-7, 2.5)
    fo[5] = qd.raw_div(-7, 2) * 0.5


ints(-7)
floats()
print(out.to_numpy().tolist())
print(fo.to_numpy().tolist())
