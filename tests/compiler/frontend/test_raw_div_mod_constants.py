"""`qd.raw_div` / `qd.raw_mod` on two Python numbers fold while compiling, as Quadrants 1.3.3
folds them: `a // b` for two integers (Python's floor: -7 // 2 is -4, where a runtime value gets
C's -3), else `a / b`; and `a - b * int(float(a) / b)`, C's truncated remainder (-7 -> -1).
Genesis' box-box contact calls `qd.raw_mod(k - j + 3, 3)` with `k` a `qd.static` index; qdlab
stopped with an internal KeyError on it. Expected values measured with quadrants 1.3.3 on the CPU
(`tests/compat/programs/raw_div_mod.py` runs the same against the reference)."""

from __future__ import annotations

import pytest

import qdlab as qd


def test_static_index_folds_and_runtime_divides_as_c() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    out = qd.field(qd.i32, shape=12)

    @qd.kernel
    def k(m: qd.i32):
        for j in range(1):
            for s in qd.static(range(3)):
                out[s] = qd.raw_mod(s + 7, 3) + qd.raw_div(s - 7, 2) * 10
        out[3] = qd.raw_mod(-7, 3)
        out[4] = qd.raw_div(-7, 2)  # folded: Python's floor
        out[5] = qd.raw_div(m, 2)  # a value: C's truncation
        out[6] = qd.raw_mod(m, 3)
        out[7] = qd.raw_mod(7, -3)
        out[8] = qd.raw_div(7, -2)

    k(-7)
    assert out.to_numpy().tolist()[:9] == [-39, -28, -30, -1, -4, -3, -1, 1, -4]


def test_floats_fold_to_floats() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    fo = qd.field(qd.f32, shape=4)

    @qd.kernel
    def k():
        fo[0] = qd.raw_mod(7.5, 2.0)
        fo[1] = qd.raw_mod(-7.5, 2)
        fo[2] = qd.raw_div(7, 2.0)
        fo[3] = qd.raw_mod(-7, 2.5)

    k()
    assert fo.to_numpy().tolist() == [1.5, -1.5, 3.5, -2.0]


def test_zero_divisor_is_a_clear_error() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)

    @qd.kernel
    def k() -> qd.i32:
        return qd.raw_mod(3, 0)

    with pytest.raises(Exception, match="division by zero"):
        k()
