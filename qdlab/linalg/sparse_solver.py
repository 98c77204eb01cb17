"""`qd.linalg.SparseSolver` (direct: LLT, LDLT, LU) and `qd.linalg.SparseCG`.

Quadrants factors with Eigen: SimplicialLLT / SimplicialLDLT, which read only the lower triangle
of the matrix, and SparseLU. Here:

- LLT and LDLT are QDLDL (the `qdldl` package, OSQP's sparse L D L^T with SuiteSparse's AMD
  ordering, in double precision) on the symmetric matrix the lower triangle stands for. Its
  pivots D decide `info()`: LLT succeeds when they are all positive (the matrix is positive
  definite, and L sqrt(D) is its Cholesky factor), LDLT when none is zero (QDLDL stops there).
  The ordering is always AMD (Eigen's 'COLAMD' for a symmetric matrix only changes the fill).
- LU is SciPy's SuperLU with partial pivoting, like Eigen's SparseLU; 'AMD' is SuperLU's minimum
  degree on A^T + A, 'COLAMD' its COLAMD.

A solve after a failed factorization gives NaNs (Eigen gives whatever the partial factor does).
`SparseCG` is Eigen's ConjugateGradient as Quadrants calls it: Jacobi preconditioner, the
relative tolerance `atol`, a zero start (Quadrants passes `x0` on but Eigen's `solve` ignores it),
and its two lines of report.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import qdldl
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..core.errors import QuadrantsRuntimeError
from ..core.types import f32, f64
from ..host.field import Field
from ..host.ndarray import Ndarray, ndarray
from .sparse_matrix import DTYPES, SparseMatrix

SOLVER_TYPES = ("LLT", "LDLT", "LU")
ORDERINGS = {"AMD": "MMD_AT_PLUS_A", "COLAMD": "COLAMD"}
"""Quadrants' orderings, as SuperLU's `permc_spec` (LU)."""


def _symmetric_upper(a: Any) -> sp.csc_matrix:
    """The upper triangle (CSC, float64) of the symmetric matrix whose lower triangle is `a`'s,
    every diagonal entry stored (QDLDL needs them, zero or not)."""
    n = a.shape[0]
    low = sp.tril(a, format="coo")
    diag = np.arange(n)
    rows = np.concatenate([low.col, diag])
    cols = np.concatenate([low.row, diag])
    vals = np.concatenate([low.data.astype(np.float64), np.zeros(n)])
    return sp.csc_matrix((vals, (rows, cols)), shape=(n, n))


def _rhs(b: object, what: str) -> np.ndarray:
    if isinstance(b, (Field, Ndarray)):
        return np.asarray(b.to_numpy())
    if isinstance(b, np.ndarray):
        return b
    raise QuadrantsRuntimeError(f"The parameter type: {type(b)} is not supported in {what}.")


class SparseSolver:
    """Solves A x = b by a sparse factorization of A.

    Args:
        dtype: the matrices' dtype (qd.f32 or qd.f64).
        solver_type: 'LLT', 'LDLT' (symmetric A: its lower triangle is read) or 'LU'.
        ordering: the fill-reducing ordering, 'AMD' or 'COLAMD'.
    """

    def __init__(self, dtype: Any = f32, solver_type: str = "LLT", ordering: str = "AMD") -> None:
        if solver_type not in SOLVER_TYPES or ordering not in ORDERINGS:
            raise QuadrantsRuntimeError(
                f"The solver type {solver_type} with {ordering} is not supported for now. Only "
                f"{list(SOLVER_TYPES)} with {list(ORDERINGS)} are supported."
            )
        if dtype not in (f32, f64):
            raise QuadrantsRuntimeError(f"SparseSolver takes f32 or f64 matrices, not {dtype}.")
        self.dtype = dtype
        self.solver_type = solver_type
        self.ordering = ordering
        self.matrix: SparseMatrix | None = None
        self.factor: Any = None
        self._pattern: tuple[np.ndarray, np.ndarray] | None = None
        self.success = False

    def _check(self, sparse_matrix: object) -> SparseMatrix:
        if not isinstance(sparse_matrix, SparseMatrix):
            raise QuadrantsRuntimeError(
                f"The parameter type: {type(sparse_matrix)} is not supported in linear solvers "
                "for now."
            )
        if sparse_matrix.dtype != self.dtype:
            raise QuadrantsRuntimeError(
                f"The SparseSolver's dtype {self.dtype} is not consistent with the "
                f"SparseMatrix's dtype {sparse_matrix.dtype}."
            )
        if sparse_matrix.n != sparse_matrix.m:
            raise QuadrantsRuntimeError(
                f"SparseSolver needs a square matrix, not {sparse_matrix.n}x{sparse_matrix.m}."
            )
        return sparse_matrix

    def compute(self, sparse_matrix: SparseMatrix) -> None:
        """`analyze_pattern` then `factorize`."""
        self.analyze_pattern(sparse_matrix)
        self.factorize(sparse_matrix)

    def analyze_pattern(self, sparse_matrix: SparseMatrix) -> None:
        """Check the matrix; the ordering is computed as part of `factorize` (for LLT and LDLT a
        matrix of the last factorized one's pattern reuses its ordering and elimination tree)."""
        self.matrix = self._check(sparse_matrix)

    def factorize(self, sparse_matrix: SparseMatrix) -> None:
        self.matrix = self._check(sparse_matrix)
        previous, pattern = self.factor, self._pattern
        self.factor, self.success = None, False
        a = self.matrix.matrix
        try:
            if self.solver_type == "LU":
                self.factor = spla.splu(sp.csc_matrix(a), permc_spec=ORDERINGS[self.ordering])
                self.success = True
                return
            upper = _symmetric_upper(a)
            same = (
                isinstance(previous, qdldl.Solver)
                and pattern is not None
                and np.array_equal(pattern[0], upper.indptr)
                and np.array_equal(pattern[1], upper.indices)
            )
            if same:
                previous.update(upper, upper=True)
                factor = previous
            else:
                factor = qdldl.Solver(upper, upper=True)
        except (RuntimeError, ValueError):  # a zero pivot (QDLDL), a singular matrix (SuperLU)
            return
        self._pattern = (upper.indptr, upper.indices)
        pivots = factor.factors()[1]
        ok = bool(np.all(np.isfinite(pivots)))
        ok = ok and bool(np.all(pivots > 0) if self.solver_type == "LLT" else np.all(pivots != 0))
        self.factor, self.success = factor, ok

    def solve(self, b: object) -> Any:
        """x with A x = b: a NumPy array of the solver's dtype for a NumPy array or a field `b`,
        a qd.ndarray of `b`'s dtype for a qd.ndarray."""
        if self.matrix is None:
            raise QuadrantsRuntimeError("Please call compute() before calling solve().")
        rhs = _rhs(b, "linear solvers for now")
        if rhs.shape != (self.matrix.n,):
            raise QuadrantsRuntimeError(
                f"The right-hand side has shape {rhs.shape}; the matrix is "
                f"{self.matrix.n}x{self.matrix.m}."
            )
        np_dtype = DTYPES[self.dtype]
        if self.success:
            t = np_dtype if self.solver_type == "LU" else np.float64  # QDLDL is double only
            x = self.factor.solve(rhs.astype(t)).astype(np_dtype, copy=False)
        else:
            x = np.full(self.matrix.m, np.nan, np_dtype)
        if isinstance(b, Ndarray):
            out = ndarray(b.dtype, self.matrix.m)
            out.from_numpy(x)
            return out
        return x

    def info(self) -> bool:
        """Whether the last factorization succeeded."""
        return self.success


class SparseCG:
    """Conjugate gradients on a SparseMatrix (taken as symmetric positive definite), as Eigen's
    ConjugateGradient with a Jacobi preconditioner.

    Args:
        A: the matrix. b: the right-hand side (NumPy array, qd.ndarray or field).
        x0: accepted, and unused, as in Quadrants (the iteration starts at zero).
        max_iter: the most iterations. atol: the tolerance on |r| / |b|.
    """

    def __init__(
        self,
        A: SparseMatrix,
        b: object,
        x0: object = None,
        max_iter: int = 50,
        atol: float = 1e-6,
    ) -> None:
        if A.dtype not in (f32, f64):
            raise QuadrantsRuntimeError(f"Unsupported CG dtype: {A.dtype}")
        self.dtype = A.dtype
        self.matrix = A
        self.b = np.array(_rhs(b, "SparseCG"))
        self.x0 = x0
        self.max_iter = max_iter
        self.atol = atol
        self.x = np.zeros(A.m, DTYPES[A.dtype])
        self.success = False

    def solve(self) -> tuple[np.ndarray, bool]:
        """(x, whether |r| / |b| reached atol)."""
        t = DTYPES[self.dtype]
        a = self.matrix.matrix
        b = self.b.astype(t)
        x = np.zeros(self.matrix.m, t)
        tol = t(np.float32(self.atol))  # Quadrants passes it on as a float
        diag = a.diagonal()
        inv_diag = np.where(diag != 0, 1 / np.where(diag != 0, diag, 1), 1).astype(t)
        r = b - a @ x
        rhs_norm2 = b @ b
        iters, error = 0, t(0)
        if rhs_norm2 != 0:
            threshold = max(tol * tol * rhs_norm2, np.finfo(t).tiny)
            r_norm2 = r @ r
            if r_norm2 >= threshold:
                p = inv_diag * r
                abs_new = r @ p
                while iters < self.max_iter:
                    ap = a @ p
                    alpha = abs_new / (p @ ap)
                    x += alpha * p
                    r -= alpha * ap
                    r_norm2 = r @ r
                    if r_norm2 < threshold:
                        break
                    z = inv_diag * r
                    abs_old, abs_new = abs_new, r @ z
                    p = z + (abs_new / abs_old) * p
                    iters += 1
            error = np.sqrt(r_norm2 / rhs_norm2)
        print(f"#iterations:     {iters}")
        print(f"estimated error: {float(error):g}")
        self.x, self.success = x, bool(error <= tol)
        return x, self.success


__all__ = ["SparseCG", "SparseSolver"]
