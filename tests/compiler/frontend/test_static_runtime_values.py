"""`qd.static(...)` may hold runtime values it does not compute with: `for i_k, i_c in
qd.static(enumerate((i_x, i_y)))` unrolls over the two runtime values, as in Quadrants (expected
values are the reference's output for this program). Computing with one, or a static condition on
one, is a clear compile error, never a silent answer."""

from __future__ import annotations

import pytest

import qdlab as qd


@pytest.mark.parametrize("mode", [{}, {"per_offload": False}], ids=["split", "whole"])
def test_static_enumerate_over_runtime_values(mode: dict) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, **mode)
    g = qd.field(qd.f32, shape=4)
    out = qd.field(qd.f32, shape=4)

    @qd.func
    def after(i_x, i_y):
        keys = qd.Vector.zero(qd.f32, 2)
        for i_k, i_c in qd.static(enumerate((i_x, i_y))):
            keys[i_k] = g[i_c] * (i_k + 1)
        return keys[0] - keys[1]

    @qd.kernel
    def k():
        for i in range(4):
            g[i] = i * 1.5
        for i in range(4):
            j = (i + 1) % 4
            out[i] = after(i, j)

    k()
    assert out.to_numpy().tolist() == [-3.0, -4.5, -6.0, 4.5]


def test_computing_with_a_runtime_value_at_compile_time_is_an_error() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    out = qd.field(qd.i32, shape=2)

    @qd.kernel
    def compares():
        for i in range(2):
            if qd.static(i > 0):
                out[i] = 1

    @qd.kernel
    def tests_it():
        for i in range(2):
            j = i + 1
            if qd.static(j):
                out[i] = 1

    @qd.kernel
    def asserts_it():
        value = False
        qd.static_assert(value, "Oh, no!")

    with pytest.raises(qd.QuadrantsCompilationError, match="`i` is a runtime value"):
        compares()
    with pytest.raises(qd.QuadrantsTypeError, match="Static assert with non-static condition"):
        asserts_it()
    with pytest.raises(qd.QuadrantsCompilationError, match="`j` is a runtime value"):
        tests_it()
