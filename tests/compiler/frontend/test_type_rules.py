"""Quadrants' type rules and their errors in kernels: a `qd.grouped` index is a vector (arithmetic,
comparisons, `&`/`|` entry by entry), a vector condition in `a if c else b` asks for `qd.select`,
arms of two shapes do not broadcast, a float index and a bitwise op on floats are Quadrants'
`QuadrantsTypeError`s in its words; split and whole kernel, checked against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd


@pytest.mark.parametrize("mode", [{}, {"per_offload": False}], ids=["split", "whole"])
def test_grouped_index_is_a_vector(mode: dict) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, **mode)
    x = qd.field(qd.i32, (3, 4))
    y = qd.field(qd.i32, (3, 4))

    @qd.kernel
    def k():
        for I in qd.grouped(x):
            J = I * 2 + 1
            c = (I < 1) | (I > 2)
            x[I] = J[0] * 10 + J[1]
            y[I] = c[0] + c[1] * 10 + (I == qd.Vector([1, 1])).all() * 100

    k()
    i, j = np.indices((3, 4))
    np.testing.assert_array_equal(x.to_numpy(), (2 * i + 1) * 10 + 2 * j + 1)
    want = ((i < 1) | (i > 2)) + ((j < 1) | (j > 2)) * 10 + ((i == 1) & (j == 1)) * 100
    np.testing.assert_array_equal(y.to_numpy(), want)


def test_quadrants_type_errors() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    v = qd.Vector.field(2, qd.f32, shape=(3,))

    @qd.kernel
    def vector_condition():
        for i in v:
            v[i] = 0 if v[i] > 0 else v[i]  # noqa: FURB136

    @qd.kernel
    def two_shapes(c: qd.i32):
        a = qd.math.vec2(1.0, 1.0)
        b = qd.math.vec3(1.0, 1.0, 2.0)
        d = a if c else b  # noqa: F841

    @qd.kernel
    def float_index(a: qd.types.ndarray()):
        a[1, 1.5] = 0

    @qd.kernel
    def bitwise_float(x: qd.i32) -> qd.i32:
        return x | 1.5

    with pytest.raises(qd.QuadrantsSyntaxError, match='Please use "qd.select" instead'):
        vector_condition()
    with pytest.raises(qd.QuadrantsTypeError, match="Cannot broadcast tensor to tensor"):
        two_shapes(1)
    with pytest.raises(qd.QuadrantsTypeError, match="indices must be integers, however 'f32'"):
        float_index(np.zeros((2, 2), np.int32))
    with pytest.raises(qd.QuadrantsTypeError, match=r"unsupported operand type\(s\) for '\|'"):
        bitwise_float(1)
