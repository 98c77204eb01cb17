"""`qd.linalg`: sparse matrices built from kernels, direct and conjugate-gradient solvers on them
(SciPy's sparse arrays, SuperLU and CHOLMOD), and matrix-free Krylov solvers whose matrix is a
kernel.

Its names load on first use (PEP 562): SciPy and cvxopt take about 0.2 s to import, which
`import qdlab` does not pay, and a program that never solves a sparse system does not need them
installed."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .matrixfree_cg import LinearOperator, MatrixFreeBICGSTAB, MatrixFreeCG
    from .sparse_matrix import SparseMatrix, SparseMatrixBuilder
    from .sparse_solver import SparseCG, SparseSolver

_MODULE_OF = {
    "LinearOperator": "matrixfree_cg",
    "MatrixFreeBICGSTAB": "matrixfree_cg",
    "MatrixFreeCG": "matrixfree_cg",
    "SparseMatrix": "sparse_matrix",
    "SparseMatrixBuilder": "sparse_matrix",
    "SparseCG": "sparse_solver",
    "SparseSolver": "sparse_solver",
}

__all__ = [
    "LinearOperator",
    "MatrixFreeBICGSTAB",
    "MatrixFreeCG",
    "SparseCG",
    "SparseMatrix",
    "SparseMatrixBuilder",
    "SparseSolver",
]


def __getattr__(name: str) -> object:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
