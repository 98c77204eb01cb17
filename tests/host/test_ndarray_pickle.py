"""Pickling an ndarray round-trips it by value, as Quadrants does: the dtype (every one), the outer
shape, the element shape of vector / matrix elements and the values; the copy is a fresh array
without gradient, and a kernel takes it. `qd.f32.to_string()` names a dtype."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import qdlab as qd

DTYPES = [qd.f16, qd.f32, qd.f64, qd.i8, qd.i16, qd.i32, qd.i64, qd.u1, qd.u8, qd.u16, qd.u32]


@pytest.mark.parametrize("dtype", DTYPES + [qd.u64], ids=lambda d: d.to_string())
def test_every_dtype_round_trips(dtype) -> None:
    qd.init(arch=qd.cpu)
    a = qd.ndarray(dtype, (3, 2))
    a[0, 1] = 1
    a[2, 0] = 1 if dtype == qd.u1 else 5
    b = pickle.loads(pickle.dumps(a))
    assert type(b) is type(a) and b.dtype == dtype and b.shape == (3, 2)
    np.testing.assert_array_equal(b.to_numpy(), a.to_numpy())
    a[0, 0] = 1
    assert b[0, 0] == 0  # a copy, not a view


def test_vector_and_matrix_elements_round_trip() -> None:
    qd.init(arch=qd.cpu)
    v = qd.Vector.ndarray(3, qd.f64, shape=(2,), needs_grad=True)
    v[1] = [1.5, -2.0, 3.25]
    m = qd.Matrix.ndarray(2, 3, qd.i32, shape=(2, 2))
    m[1, 0] = [[1, 2, 3], [4, 5, 6]]
    v2, m2 = pickle.loads(pickle.dumps((v, m)))
    assert isinstance(v2, qd.VectorNdarray) and v2.element_shape == (3,) and v2.grad is None
    assert isinstance(m2, qd.MatrixNdarray) and m2.element_shape == (2, 3) and m2.dtype == qd.i32
    np.testing.assert_array_equal(v2.to_numpy(), v.to_numpy())
    np.testing.assert_array_equal(m2.to_numpy(), m.to_numpy())

    @qd.kernel
    def total(a: qd.types.ndarray()) -> qd.f64:
        s = 0.0
        for i in range(a.shape[0]):
            s += a[i].sum()
        return s

    assert total(v2) == 2.75


def test_dtype_to_string() -> None:
    assert [t.to_string() for t in (qd.u1, qd.i8, qd.f64)] == ["u1", "i8", "f64"]
    assert all(t.to_string() == str(t) for t in DTYPES)
