"""`qd.types.ndarray(element_dim=, element_shape=)`, the older spelling of a vector / matrix
element type: element_dim=1 takes vectors of any size (the trailing axis of a NumPy array, or a
vector ndarray), element_shape=(2, 2) 2x2 matrices, element_dim=0 scalars; the reference's errors
for inconsistent or unsupported ones. Split and whole kernel, checked against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd


@pytest.mark.parametrize("mode", [{}, {"per_offload": False}], ids=["split", "whole"])
def test_element_dim_and_shape_take_vectors_and_matrices(mode: dict) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, **mode)

    @qd.kernel
    def norms(v: qd.types.ndarray(element_dim=1), out: qd.types.ndarray(element_dim=0)):
        for i in range(v.shape[0]):
            out[i] = v[i].norm_sqr()

    @qd.kernel
    def traces(m: qd.types.ndarray(qd.f64, element_shape=(2, 2)), out: qd.types.ndarray()):
        for i in range(m.shape[0]):
            out[i] = m[i][0, 0] + m[i][1, 1]

    v = np.arange(12, dtype=np.float32).reshape(4, 3)
    out = np.zeros(4, np.float32)
    norms(v, out)
    np.testing.assert_allclose(out, (v * v).sum(axis=1))
    nd = qd.Vector.ndarray(2, qd.f32, shape=3)
    nd.from_numpy(np.array([[1, 2], [3, 4], [5, 6]], np.float32))
    out3 = np.zeros(3, np.float32)
    norms(nd, out3)
    assert out3.tolist() == [5.0, 25.0, 61.0]
    m = np.arange(20, dtype=np.float64).reshape(5, 2, 2)
    t = np.zeros(5, np.float64)
    traces(m, t)
    assert t.tolist() == np.trace(m, axis1=1, axis2=2).tolist()


def test_inconsistent_element_arguments_are_the_references_errors() -> None:
    with pytest.raises(ValueError, match="shape doesn't match specified dim: 1!=2"):
        qd.types.ndarray(element_dim=2, element_shape=(3,))
    with pytest.raises(ValueError, match="Only scalars, vectors, and matrices"):
        qd.types.ndarray(element_dim=3)
    with pytest.raises(TypeError, match="Cannot specifiy matrix dtype"):
        qd.types.ndarray(qd.math.vec3, element_dim=1)
    with pytest.raises(
        ValueError, match="field_dim argument for ndarray type is already deprecated"
    ):
        qd.types.ndarray(field_dim=2)
    assert qd.types.ndarray(qd.f32, element_dim=0).dtype == qd.f32
