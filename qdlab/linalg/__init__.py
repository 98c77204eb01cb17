"""`qd.linalg`: sparse matrices built from kernels, direct and conjugate-gradient solvers on them
(on SciPy's sparse arrays and SuperLU), and matrix-free Krylov solvers whose matrix is a kernel."""

from .matrixfree_cg import LinearOperator, MatrixFreeBICGSTAB, MatrixFreeCG
from .sparse_matrix import SparseMatrix, SparseMatrixBuilder
from .sparse_solver import SparseCG, SparseSolver

__all__ = [
    "LinearOperator",
    "MatrixFreeBICGSTAB",
    "MatrixFreeCG",
    "SparseCG",
    "SparseMatrix",
    "SparseMatrixBuilder",
    "SparseSolver",
]
