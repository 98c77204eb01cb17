"""`qd.linalg.SparseMatrixBuilder` filled from kernels and `qd.linalg.SparseMatrix`, against SciPy
and NumPy and against what the real quadrants 1.3.3 prints and returns on the same cases."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

import qdlab as qd


def fill_random(n: int, m: int, k: int, dtype: object, storage: str = "col_major"):
    """A builder with k random triplets (duplicates among them), and the SciPy matrix they make."""
    rng = np.random.default_rng(n * 100 + m)
    rows, cols = rng.integers(0, n, k), rng.integers(0, m, k)
    vals = rng.standard_normal(k)
    builder = qd.linalg.SparseMatrixBuilder(
        n, m, max_num_triplets=k, dtype=dtype, storage_format=storage
    )

    @qd.kernel
    def fill(
        A: qd.types.sparse_matrix_builder(),
        r: qd.types.ndarray(),
        c: qd.types.ndarray(),
        v: qd.types.ndarray(),
    ):
        for t in range(k):
            A[r[t], c[t]] += v[t]

    fill(builder, rows.astype(np.int32), cols.astype(np.int32), vals)
    np_dtype = np.float32 if dtype == qd.f32 else np.float64
    want = sp.coo_array((vals.astype(np_dtype), (rows, cols)), shape=(n, m)).toarray()
    return builder, want


@pytest.mark.parametrize("dtype", [qd.f32, qd.f64])
@pytest.mark.parametrize("storage", ["col_major", "row_major"])
def test_builder_sums_duplicates_and_ops_match_scipy(dtype: object, storage: str) -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    ba, a = fill_random(7, 5, 60, dtype, storage)
    bb, b = fill_random(7, 5, 40, dtype, storage)
    A, B = ba.build(), bb.build()
    tol = 1e-5 if dtype == qd.f32 else 1e-12
    dense = lambda M: np.array([[M[i, j] for j in range(M.m)] for i in range(M.n)])
    np.testing.assert_allclose(dense(A), a, rtol=tol, atol=tol)
    np.testing.assert_allclose(dense(A + B), a + b, rtol=tol, atol=tol)
    np.testing.assert_allclose(dense(A - B), a - b, rtol=tol, atol=tol)
    np.testing.assert_allclose(dense(A * B), a * b, rtol=tol, atol=tol)
    np.testing.assert_allclose(dense(A * 2.5), a * 2.5, rtol=tol, atol=tol)
    np.testing.assert_allclose(dense(2.5 * A), a * 2.5, rtol=tol, atol=tol)
    np.testing.assert_allclose(dense(A.transpose()), a.T, rtol=tol, atol=tol)
    np.testing.assert_allclose(dense(A @ B.transpose()), a @ b.T, rtol=1e-4, atol=1e-4)
    x = np.arange(5.0)
    y = A @ x
    assert y.dtype == (np.float32 if dtype == qd.f32 else np.float64)
    np.testing.assert_allclose(y, a @ x, rtol=1e-4, atol=1e-4)
    xn = qd.ndarray(qd.f64, 5)
    xn.from_numpy(x)
    np.testing.assert_allclose((A @ xn).to_numpy(), a @ x, rtol=1e-4, atol=1e-4)
    assert A.shape == (7, 5) and A.dtype == dtype
    assert dense(ba.build()).sum() == 0  # built: the builder is empty again


def test_printing_and_errors_as_quadrants() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    builder = qd.linalg.SparseMatrixBuilder(3, 4, max_num_triplets=100)

    @qd.kernel
    def fill(A: qd.types.sparse_matrix_builder()):
        for i in range(3):
            A[i, i] += 1.5
            A[i, i] += 1.0
            A[i, (i + 1) % 4] -= 0.333333

    fill(builder)
    A = builder.build()
    assert str(A) == (  # what quadrants 1.3.3 prints for the same matrix
        "[    2.5, -0.3333,       0,       0]\n"
        "[      0,     2.5, -0.3333,       0]\n"
        "[      0,       0,     2.5, -0.3333]"
    )
    assert isinstance(A[0, 0], float) and A[0, 0] == 2.5 and A[0, 3] == 0.0
    A[0, 3] = 7.0
    assert A[0, 3] == 7.0
    with pytest.raises(AssertionError, match="Dimension mismatch"):
        A @ np.ones(3)
    with pytest.raises(AssertionError, match="Dimension mismatch"):
        A + A.transpose()
    with pytest.raises(qd.QuadrantsRuntimeError, match="does not support"):
        A @ [1, 2, 3, 4]
    with pytest.raises(IndexError):
        A[3, 0]


def test_too_many_triplets_is_an_error_not_a_wild_write() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    builder = qd.linalg.SparseMatrixBuilder(3, 3, max_num_triplets=4)

    @qd.kernel
    def fill(A: qd.types.sparse_matrix_builder(), k: qd.i32):
        for i in range(k):
            A[i % 3, i % 3] += 1

    fill(builder, 3)
    fill(builder, 2)
    with pytest.raises(qd.QuadrantsRuntimeError, match="max_num_triplets=4"):
        builder.build()


def test_only_add_and_sub_update_a_builder() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    builder = qd.linalg.SparseMatrixBuilder(2, 2, max_num_triplets=4)

    @qd.kernel
    def fill(A: qd.types.sparse_matrix_builder()):
        A[0, 0] *= 2.0

    with pytest.raises(qd.QuadrantsSyntaxError, match="'\\+=' and '-='"):
        fill(builder)


def test_build_from_ndarray_and_mmwrite(tmp_path) -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    triplets = qd.Vector.ndarray(3, qd.f32, shape=4)
    triplets.from_numpy(np.array([[0, 0, 1], [1, 0, 2], [0, 1, 3], [0, 0, 4]], np.float32))
    A = qd.linalg.SparseMatrix(n=2, m=2, dtype=qd.f64)
    A.build_from_ndarray(triplets)
    assert (A[0, 0], A[1, 0], A[0, 1], A[1, 1]) == (5.0, 2.0, 3.0, 0.0)
    path = tmp_path / "m.mtx"
    A.mmwrite(str(path))
    assert path.read_text() == (  # column by column, as quadrants writes a col_major matrix
        "%%MatrixMarket matrix coordinate real general\n%\n2 2 3\n1 1 5\n2 1 2\n1 2 3\n"
    )


@pytest.mark.process
def test_import_qdlab_loads_neither_scipy_nor_cvxopt():
    """`qd.linalg`'s names load on first use: `import qdlab` stays fast, and a program (Genesis)
    that never solves a sparse system runs where SciPy or cvxopt is not installed."""
    code = (
        "import sys, qdlab as qd\n"
        "assert 'scipy' not in sys.modules and 'cvxopt' not in sys.modules\n"
        "assert qd.linalg.SparseSolver.__name__ == 'SparseSolver' and 'cvxopt' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=300)
