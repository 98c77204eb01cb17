"""`qd.linalg.SparseSolver` (direct: LLT, LDLT, LU) and `qd.linalg.SparseCG`.

Quadrants factors with Eigen: SimplicialLLT / SimplicialLDLT, which read only the lower triangle
of the matrix, and SparseLU. Here:

- LLT and LDLT are CHOLMOD (SuiteSparse, through `cvxopt.cholmod`, in double precision) on the
  lower triangle, ordered by CHOLMOD's AMD. LLT is its supernodal L L^T, which stops at a pivot
  that is not positive (`info()` False: the matrix is not positive definite), as Eigen's does.
  LDLT tries the same L L^T first (a positive definite matrix, the usual case, gets the fast
  supernodal factor; its D is positive) and otherwise CHOLMOD's simplicial L D L^T, which stops
  at a zero pivot only, as Eigen's. A factorization of the pattern of the previous one reuses its
  symbolic analysis (ordering and elimination tree).
- LU is SciPy's SuperLU with partial pivoting, like Eigen's SparseLU; 'AMD' is SuperLU's minimum
  degree on A^T + A, 'COLAMD' its COLAMD. (For LLT and LDLT the ordering is CHOLMOD's AMD either
  way: Eigen's COLAMD on a symmetric matrix only changes the fill.)

A solve after a failed factorization gives NaNs (Eigen gives whatever the partial factor does).
`SparseCG` is Eigen's ConjugateGradient as Quadrants calls it: Jacobi preconditioner, the
relative tolerance `atol`, a zero start (Quadrants passes `x0` on but Eigen's `solve` ignores it),
and its two lines of report.
"""

from __future__ import annotations

from typing import Any

import cvxopt
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from cvxopt import cholmod

from ..core.errors import QuadrantsRuntimeError
from ..core.types import f32, f64
from ..host.field import Field
from ..host.ndarray import Ndarray, ndarray
from .sparse_matrix import DTYPES, SparseMatrix

SOLVER_TYPES = ("LLT", "LDLT", "LU")
ORDERINGS = {"AMD": "MMD_AT_PLUS_A", "COLAMD": "COLAMD"}
"""Quadrants' orderings, as SuperLU's `permc_spec` (LU)."""


SUPERNODAL_LLT, SIMPLICIAL_LDLT = 2, 0
"""CHOLMOD's `supernodal` option: L L^T by supernodes, or L D L^T column by column."""


def _lower(a: Any) -> tuple[Any, tuple[np.ndarray, np.ndarray]]:
    """The lower triangle of `a` as a CHOLMOD (cvxopt, double) matrix, and its pattern."""
    low = sp.tril(a, format="csc")
    low.sort_indices()
    n = a.shape[0]
    cols = np.repeat(np.arange(n, dtype=np.int64), np.diff(low.indptr))
    m = cvxopt.spmatrix(
        cvxopt.matrix(low.data.astype(np.float64)),
        cvxopt.matrix(low.indices.astype(np.int64)),
        cvxopt.matrix(cols),
        (n, n),
    )
    return m, (low.indptr, low.indices)


def _factor(m: Any, supernodal: int, symbolic: Any) -> Any:
    """CHOLMOD's factor of `m` (`symbolic`, or a new analysis when None); ArithmeticError at a
    pivot it cannot take. The module-wide option is restored."""
    old = cholmod.options.get("supernodal")
    cholmod.options["supernodal"] = supernodal
    try:
        f = cholmod.symbolic(m, uplo="L") if symbolic is None else symbolic
        cholmod.numeric(m, f)
        return f
    finally:
        if old is None:
            del cholmod.options["supernodal"]
        else:
            cholmod.options["supernodal"] = old


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
        self._symbolic: dict[int, Any] = {}
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
        """Check the matrix; the analysis (ordering, elimination tree) is made by `factorize` and
        kept for the next matrix of the same pattern."""
        self.matrix = self._check(sparse_matrix)

    def factorize(self, sparse_matrix: SparseMatrix) -> None:
        self.matrix = self._check(sparse_matrix)
        self.factor, self.success = None, False
        a = self.matrix.matrix
        if self.solver_type == "LU":
            try:
                self.factor = spla.splu(sp.csc_matrix(a), permc_spec=ORDERINGS[self.ordering])
            except RuntimeError:  # SuperLU: the matrix is singular
                return
            self.success = True
            return
        m, pattern = _lower(a)
        old = self._pattern
        if old is None or not all(np.array_equal(x, y) for x, y in zip(old, pattern)):
            self._pattern, self._symbolic = pattern, {}
        modes = [SUPERNODAL_LLT] + ([SIMPLICIAL_LDLT] if self.solver_type == "LDLT" else [])
        for mode in modes:
            try:
                factor = _factor(m, mode, self._symbolic.get(mode))
            except ArithmeticError:  # a pivot not positive (L L^T), zero (L D L^T)
                continue
            except ValueError:  # an empty matrix
                return
            self._symbolic[mode] = factor
            if mode == SUPERNODAL_LLT and not np.all(np.isfinite(np.array(cholmod.diag(factor)))):
                return
            self.factor, self.success = factor, True
            return

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
        if self.success and self.solver_type == "LU":
            x = self.factor.solve(rhs.astype(np_dtype)).astype(np_dtype, copy=False)
        elif self.success:
            x_cvx = cvxopt.matrix(rhs.astype(np.float64))
            cholmod.solve(self.factor, x_cvx)
            x = np.array(x_cvx).reshape(-1).astype(np_dtype)
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
