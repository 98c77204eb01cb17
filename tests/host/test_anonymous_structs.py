"""`qd.Struct(...)` values in kernels and in Python, struct types given one value (`M(2)`: its first
member, as Quadrants), and appending structs to a dynamic SNode; the values are quadrants
1.3.3's for the same programs."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd

L = qd.types.struct(d=qd.types.vector(3, qd.f32), n=qd.f32)
M = qd.types.struct(line=L, idx=qd.i32)


@pytest.fixture(autouse=True)
def _init() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)


def test_a_struct_type_given_one_value_fills_its_first_member() -> None:
    @qd.kernel
    def k() -> M:
        return M(2)

    r = k()
    np.testing.assert_array_equal(r.line.d, [2.0, 2.0, 2.0])
    assert (r.line.n, r.idx) == (0.0, 0)
    g = M.field(shape=(1,))
    g[0] = M(5)
    np.testing.assert_array_equal(g[0].line.d, [5.0, 5.0, 5.0])
    assert (g[0].line.n, g[0].idx) == (0.0, 0)


def test_qd_struct_from_a_dict_in_a_kernel() -> None:
    @qd.kernel
    def k() -> qd.f32:
        s = qd.Struct({"a": 2, "b": {"c": 1.5, "d": 3}, "e": 4})
        return s.a + s.b.c * 10 + s.b.d * 100 + s.e * 1000

    assert k() == 4317.0

    @qd.kernel
    def both():
        qd.Struct({"a": 1}, b=2)

    with pytest.raises(qd.QuadrantsSyntaxError, match="either dictionary or keyword"):
        both()


def test_qd_struct_stored_to_a_struct_field_element() -> None:
    f = qd.Struct.field({"a": qd.i32, "b": qd.f32}, shape=(3,))

    @qd.kernel
    def k():
        for i in range(3):
            f[i] = qd.Struct(a=i * 2.7, b=i + 0.25)

    k()
    np.testing.assert_array_equal(f.a.to_numpy(), [0, 2, 5])
    np.testing.assert_array_equal(f.b.to_numpy(), [0.25, 1.25, 2.25])
    f[1] = qd.Struct(a=9, b=1.5)
    assert (f[1].a, f[1].b) == (9, 1.5)
    g = M.field(shape=(1,))
    g[0] = qd.Struct({"line": {"d": qd.Vector([1.0, 2.0, 3.0]), "n": 0.5}, "idx": 4})
    np.testing.assert_array_equal(g[0].line.d, [1.0, 2.0, 3.0])
    assert (g[0].line.n, g[0].idx) == (0.5, 4)


def test_append_a_struct_to_a_dynamic_snode() -> None:
    t = qd.types.struct(a=qd.u8, v=qd.types.vector(2, qd.f32), c=qd.i64)
    y = t.field()
    qd.root.dense(qd.i, 3).dynamic(qd.j, 4, 2).place(y)

    @qd.kernel
    def fill():
        for i in range(3):
            for j in range(i + 2):
                y[i].append(
                    t(i * 100 + j + 200, qd.Vector([i, j * 0.5]), (i + 1) * qd.i64(10**10) + j)
                )

    @qd.kernel
    def total() -> qd.i32:
        n = 0
        for i in range(3):
            n += y[i].length()
        return n

    fill()
    assert total() == 9
    for i in range(3):
        for j in range(4):
            e = y[i, j]
            if j < i + 2:
                assert e.a == (i * 100 + j + 200) % 256
                np.testing.assert_array_equal(e.v, [i, j * 0.5])
                assert e.c == (i + 1) * 10**10 + j
            else:
                assert (e.a, e.c) == (0, 0)
