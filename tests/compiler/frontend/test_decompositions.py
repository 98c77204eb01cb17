"""`qd.svd` and `qd.polar_decompose` of 2x2 matrices against values measured on the reference
(quadrants 1.3.3, CPU): Quadrants' closed form, so a negative determinant gives a reflection U
(polar) and non-negative singular values, and a zero matrix gives (I, A)."""

import numpy as np
import pytest

import qdlab as qd

MATRICES = np.array(
    [[[1, 2], [3, 4]], [[2, 0], [0, 3]], [[0, 1], [1, 0]], [[-1, 0.5], [0.3, 2]], [[0, 0], [0, 0]]]
)
REFERENCE = [  # U, S, V of svd, then U, P of polar_decompose, per matrix (f64)
    (
        [[-0.404553584833757, -0.9145142956773045], [-0.9145142956773045, 0.404553584833757]],
        [[5.4649857042190435, 0.0], [0.0, 0.3659661906262581]],
        [[-0.5760484367663208, 0.8174155604703633], [-0.8174155604703633, -0.5760484367663208]],
        [[-0.5144957554275265, 0.8574929257125441], [0.8574929257125441, 0.5144957554275265]],
        [[2.057983021710106, 2.4009801919951235], [2.4009801919951235, 3.772968873135194]],
    ),
    (
        [[0.0, 1.0], [-1.0, 0.0]],
        [[3.0, 0.0], [0.0, 2.0]],
        [[0.0, 1.0], [-1.0, 0.0]],
        [[1.0, 0.0], [0.0, 1.0]],
        [[2.0, 0.0], [0.0, 3.0]],
    ),
    (
        [[0.0, 1.0], [1.0, 0.0]],
        [[1.0, 0.0], [0.0, 1.0]],
        [[1.0, 0.0], [0.0, 1.0]],
        [[0.0, 1.0], [1.0, 0.0]],
        [[1.0, 0.0], [0.0, 1.0]],
    ),
    (
        [[-0.22700274585011884, -0.9738941181547952], [-0.9738941181547952, 0.22700274585011884]],
        [[2.062319420985281, 0.0], [0.0, 1.042515518266724]],
        [[-0.031598155423075376, 0.9995006536135228], [-0.9995006536135228, -0.03159815542307537]],
        [[-0.9662349396012462, 0.25766265056033233], [0.25766265056033233, 0.9662349396012462]],
        [[1.043533734769346, 0.032207831320041534], [0.032207831320041534, 2.0613012044826586]],
    ),
    (
        [[1.0, 0.0], [0.0, 1.0]],
        [[0.0, 0.0], [0.0, 0.0]],
        [[1.0, 0.0], [0.0, 1.0]],
        [[1.0, 0.0], [0.0, 1.0]],
        [[0.0, 0.0], [0.0, 0.0]],
    ),
]


def decompose(dt: object) -> np.ndarray:
    M2 = qd.types.NDArray[qd.types.matrix(2, 2, dt), 1]

    @qd.kernel
    def run(a: M2, u: M2, s: M2, v: M2, r: M2, p: M2):
        for n in a:
            u[n], s[n], v[n] = qd.svd(a[n], dt)
            r[n], p[n] = qd.polar_decompose(a[n], dt)

    npdt = np.float64 if dt == qd.f64 else np.float32
    a = MATRICES.astype(npdt)
    outs = [np.zeros_like(a) for _ in range(5)]
    run(a, *outs)
    return np.stack(outs, axis=1)


@pytest.mark.parametrize("dt", [qd.f32, qd.f64])
def test_2x2_svd_and_polar_match_the_reference(dt: object) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, default_fp=dt)
    got = decompose(dt)
    tol = 1e-12 if dt == qd.f64 else 2e-6
    np.testing.assert_allclose(got, np.array(REFERENCE), atol=tol)
    u, s, v, r, p = (got[:, k].astype(np.float64) for k in range(5))
    np.testing.assert_allclose(u @ s @ v.transpose(0, 2, 1), MATRICES, atol=tol * 10)
    np.testing.assert_allclose(r @ p, MATRICES, atol=tol * 10)
    assert (np.linalg.eigvalsh(p) >= -tol).all()  # P positive semi-definite, det A < 0 too
    assert np.linalg.det(r[0]) == pytest.approx(-1.0)  # det A < 0: U of polar is a reflection
