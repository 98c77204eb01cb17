"""`qd.linalg.SparseSolver`, `SparseCG`, the matrix-free solvers and `qd.solve`, against NumPy and
against what the real quadrants 1.3.3 returns on the same cases."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd


def build(a: np.ndarray, dtype: object = qd.f64) -> qd.linalg.SparseMatrix:
    n = a.shape[0]
    builder = qd.linalg.SparseMatrixBuilder(n, n, max_num_triplets=n * n, dtype=dtype)

    @qd.kernel
    def fill(A: qd.types.sparse_matrix_builder(), x: qd.types.ndarray()):
        for i, j in qd.ndrange(n, n):
            if x[i, j] != 0:
                A[i, j] += x[i, j]

    fill(builder, a)
    return builder.build()


@pytest.mark.parametrize("solver_type", ["LLT", "LDLT", "LU"])
@pytest.mark.parametrize("ordering", ["AMD", "COLAMD"])
@pytest.mark.parametrize("dtype", [qd.f32, qd.f64])
def test_direct_solvers_match_numpy(solver_type: str, ordering: str, dtype: object) -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    rng = np.random.default_rng(5)
    m = rng.random((12, 12))
    a = m @ m.T + np.eye(12)
    A = build(a, dtype)
    solver = qd.linalg.SparseSolver(dtype=dtype, solver_type=solver_type, ordering=ordering)
    solver.compute(A)
    assert solver.info()
    b = np.arange(1.0, 13.0)
    x = solver.solve(b)
    assert x.dtype == (np.float32 if dtype == qd.f32 else np.float64)
    tol = 1e-3 if dtype == qd.f32 else 1e-9
    np.testing.assert_allclose(x, np.linalg.solve(a, b), rtol=tol, atol=tol)
    bn = qd.ndarray(qd.f64, 12)
    bn.from_numpy(b)
    np.testing.assert_allclose(
        solver.solve(bn).to_numpy(), np.linalg.solve(a, b), rtol=tol, atol=tol
    )


def test_llt_and_ldlt_read_the_lower_triangle_and_report_failure() -> None:
    """Measured on quadrants 1.3.3: for [[1, 5], [0, -2]], LLT fails (not positive definite),
    LDLT solves diag(1, -2) (the upper 5 is not read) and LU the whole matrix."""
    qd.init(arch=qd.cpu, offline_cache=False)
    A = build(np.array([[1.0, 5.0], [0.0, -2.0]]))
    got = {}
    for t in ("LLT", "LDLT", "LU"):
        s = qd.linalg.SparseSolver(dtype=qd.f64, solver_type=t)
        s.analyze_pattern(A)
        s.factorize(A)
        got[t] = (s.info(), s.solve(np.ones(2)))
    assert not got["LLT"][0] and np.isnan(got["LLT"][1]).all()
    assert got["LDLT"][0] and got["LDLT"][1].tolist() == [1.0, -0.5]
    assert got["LU"][0] and got["LU"][1].tolist() == [3.5, -0.5]
    singular = build(np.ones((2, 2)))
    for t in ("LLT", "LDLT", "LU"):
        s = qd.linalg.SparseSolver(dtype=qd.f64, solver_type=t)
        s.compute(singular)
        assert not s.info()


@pytest.mark.parametrize(
    "a, llt, ldlt",
    [
        ([[0.0, 1.0], [1.0, 0.0]], False, None),
        ([[1.0, 0.0], [0.0, 0.0]], False, None),
        ([[1.0, 1.0], [1.0, 0.0]], False, [1.0, 0.0]),
        ([[0.0, 1.0], [1.0, 1.0]], False, None),
        ([[2.0, 1.0, 0.0], [1.0, 0.0, 1.0], [0.0, 1.0, 2.0]], False, [0.5, 0.0, 0.5]),
        ([[0.0, 1.0, 0.0], [1.0, 2.0, 1.0], [0.0, 1.0, 2.0]], False, None),
    ],
)
def test_llt_ldlt_pivots_as_quadrants(a: list, llt: bool, ldlt: list | None) -> None:
    """info() and x for b = 1, measured on quadrants 1.3.3 (Eigen's Simplicial solvers): LLT fails
    on a pivot that is not positive, LDLT on a zero one (a missing diagonal entry is a zero)."""
    qd.init(arch=qd.cpu, offline_cache=False)
    A = build(np.array(a))
    s = qd.linalg.SparseSolver(dtype=qd.f64, solver_type="LLT")
    s.compute(A)
    assert s.info() == llt
    s = qd.linalg.SparseSolver(dtype=qd.f64, solver_type="LDLT")
    s.compute(A)
    assert s.info() == (ldlt is not None)
    if ldlt is not None:
        np.testing.assert_allclose(s.solve(np.ones(len(a))), ldlt, atol=1e-15)


@pytest.mark.parametrize("solver_type", ["LLT", "LDLT"])
def test_refactorize_the_same_pattern(solver_type: str) -> None:
    """factorize() again with new values (the pattern's ordering reused), a failing matrix in
    between, then a matrix of another pattern: each solve is the new matrix's."""
    qd.init(arch=qd.cpu, offline_cache=False)
    rng = np.random.default_rng(7)
    s = qd.linalg.SparseSolver(dtype=qd.f32, solver_type=solver_type)
    tri = np.eye(8, k=1) + np.eye(8, k=-1)
    for scale in (4.0, -0.5, 9.0):
        a = scale * np.eye(8) + tri * rng.random()
        s.analyze_pattern(build(a, qd.f32))
        s.factorize(build(a, qd.f32))
        assert s.info() == (scale > 0 or solver_type == "LDLT")
        if s.info():
            x = s.solve(np.ones(8, np.float32))
            assert x.dtype == np.float32
            np.testing.assert_allclose(x, np.linalg.solve(a, np.ones(8)), rtol=1e-5)
    a = 3.0 * np.eye(8) + np.eye(8, k=2)
    a = a + a.T
    s.compute(build(a, qd.f32))
    assert s.info()
    np.testing.assert_allclose(s.solve(np.ones(8)), np.linalg.solve(a, np.ones(8)), rtol=1e-5)


def test_solver_errors() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    with pytest.raises(qd.QuadrantsRuntimeError, match="QR with AMD is not supported"):
        qd.linalg.SparseSolver(solver_type="QR")
    s = qd.linalg.SparseSolver(dtype=qd.f64)
    with pytest.raises(qd.QuadrantsRuntimeError, match="call compute"):
        s.solve(np.ones(2))
    with pytest.raises(qd.QuadrantsRuntimeError, match="not consistent"):
        qd.linalg.SparseSolver(dtype=qd.f32).compute(build(np.eye(2)))


def test_sparse_cg_as_eigen(capsys) -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    A = build(np.array([[2.0, 1.0], [1.0, 1.0]]))
    x, ok = qd.linalg.SparseCG(A, np.ones(2), max_iter=50, atol=1e-6).solve()
    assert ok and np.allclose(x, [0.0, 1.0], atol=1e-12)
    assert capsys.readouterr().out.startswith("#iterations:     1\nestimated error: ")
    x, ok = qd.linalg.SparseCG(A, np.ones(2), max_iter=1).solve()
    assert not ok and np.allclose(x, [0.3, 0.6])  # quadrants 1.3.3 gives [0.3 0.6] False


@pytest.mark.parametrize("dtype", [qd.f32, qd.f64])
def test_matrix_free_solvers(dtype: object) -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    n = 16
    x, b, ax = (qd.field(dtype, shape=(n, n)) for _ in range(3))
    rng = np.random.default_rng(1)
    b.from_numpy(rng.random((n, n)))

    @qd.kernel
    def matvec(v: qd.template(), mv: qd.template()):
        for i, j in v:
            left = v[i - 1, j] if i > 0 else 0.0
            right = v[i + 1, j] if i < n - 1 else 0.0
            down = v[i, j - 1] if j > 0 else 0.0
            up = v[i, j + 1] if j < n - 1 else 0.0
            mv[i, j] = 6.0 * v[i, j] - left - right - down - up

    A = qd.linalg.LinearOperator(matvec)
    tol = 1e-4 if dtype == qd.f32 else 1e-10
    assert qd.linalg.MatrixFreeCG(A, b, x, tol=tol * 1e-2)
    matvec(x, ax)
    np.testing.assert_allclose(ax.to_numpy(), b.to_numpy(), atol=tol)
    x.fill(0)
    assert qd.linalg.MatrixFreeBICGSTAB(A, b, x, tol=tol * 1e-2)
    matvec(x, ax)
    np.testing.assert_allclose(ax.to_numpy(), b.to_numpy(), atol=tol)


@pytest.mark.parametrize("dt", [qd.f32, qd.f64])
def test_qd_solve_small_dense(dt: object) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, default_fp=dt)
    rng = np.random.default_rng(2)
    a2, a3 = rng.standard_normal((8, 2, 2)), rng.standard_normal((8, 3, 3))
    b2, b3 = rng.standard_normal((8, 2)), rng.standard_normal((8, 3))

    @qd.kernel
    def solve(
        a2: qd.types.ndarray(),
        b2: qd.types.ndarray(),
        x2: qd.types.ndarray(),
        a3: qd.types.ndarray(),
        b3: qd.types.ndarray(),
        x3: qd.types.ndarray(),
    ):
        for k in range(8):
            m2 = qd.Matrix([[a2[k, i, j] for j in range(2)] for i in range(2)])
            v2 = qd.Vector([b2[k, i] for i in range(2)])
            s2 = qd.solve(m2, v2)
            m3 = qd.Matrix([[a3[k, i, j] for j in range(3)] for i in range(3)])
            v3 = qd.Vector([b3[k, i] for i in range(3)])
            s3 = qd.solve(m3, v3)
            for i in qd.static(range(2)):
                x2[k, i] = s2[i]
            for i in qd.static(range(3)):
                x3[k, i] = s3[i]

    x2, x3 = np.zeros((8, 2)), np.zeros((8, 3))
    solve(a2, b2, x2, a3, b3, x3)
    tol = 1e-3 if dt == qd.f32 else 1e-10
    np.testing.assert_allclose(x2, np.linalg.solve(a2, b2[..., None])[..., 0], rtol=tol, atol=tol)
    np.testing.assert_allclose(x3, np.linalg.solve(a3, b3[..., None])[..., 0], rtol=tol, atol=tol)


def test_qd_solve_sizes() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)

    @qd.kernel
    def four() -> qd.f32:
        return qd.solve(qd.Matrix.identity(qd.f32, 4), qd.Vector([1.0, 2.0, 3.0, 4.0]))[0]

    with pytest.raises(qd.QuadrantsTypeError, match="2×2 and 3×3"):
        four()


def test_one_field_for_two_template_parameters_then_two() -> None:
    """`dot(r, r)` compiles with one field; `dot(r, p)` after it must read p (it read r twice)."""
    qd.init(arch=qd.cpu, offline_cache=False)
    a, b = qd.field(qd.f64, shape=8), qd.field(qd.f64, shape=8)
    a.fill(1.0)
    b.fill(2.0)

    @qd.kernel
    def dot(p: qd.template(), q: qd.template()) -> qd.f64:
        s = 0.0
        for i in p:
            s += p[i] * q[i]
        return s

    assert (dot(a, a), dot(a, b), dot(b, b)) == (8.0, 16.0, 32.0)
