"""`qd.linalg.SparseMatrix` and `qd.linalg.SparseMatrixBuilder`, on SciPy's sparse arrays where
Quadrants has Eigen's.

A builder holds its triplets in three fields (rows, columns, values) and a counter; a kernel that
takes it as a `qd.types.sparse_matrix_builder()` parameter appends one with `A[i, j] += v`
(`insert_triplet`, an atomic bump of the counter, as Quadrants' runtime does). `build()` sums
duplicate entries into a CSC (`col_major`) or CSR (`row_major`) matrix and empties the builder.
Triplets past `max_num_triplets` are dropped by the kernel and reported by `build()` (Quadrants
writes past its buffer).
"""

from __future__ import annotations

import warnings
from typing import Any, Self

import numpy as np
import scipy.sparse as sp

from ..core.errors import QuadrantsRuntimeError
from ..core.language import BUILTINS, TripletSink, func
from ..core.types import DType, f32, f64, i32
from ..host.data_oriented import data_oriented
from ..host.field import Field, field
from ..host.ndarray import Ndarray, ndarray

STORAGE = {"col_major": "csc", "row_major": "csr"}
"""Quadrants' storage formats, as SciPy's sparse formats."""
DTYPES = {f32: np.float32, f64: np.float64}
atomic_add = BUILTINS["atomic_add"]


def _dtype(dtype: object) -> DType:
    if dtype not in DTYPES:
        raise QuadrantsRuntimeError(f"Sparse matrices are f32 or f64, not {dtype}.")
    return dtype  # type: ignore[return-value]


def _storage(storage_format: str) -> str:
    if storage_format not in STORAGE:
        raise QuadrantsRuntimeError(
            f"Unsupported sparse matrix storage format {storage_format!r}: use 'col_major' or "
            "'row_major'."
        )
    return storage_format


class SparseMatrix:
    """A sparse matrix of f32 or f64 (`qd.linalg.SparseMatrix(n, m, dtype=...)`, or made by a
    builder); `.matrix` is the SciPy sparse array itself."""

    def __init__(
        self,
        n: int | None = None,
        m: int | None = None,
        sm: Any = None,
        dtype: Any = f32,
        storage_format: str = "col_major",
    ) -> None:
        self.dtype = _dtype(dtype)
        self.storage_format = _storage(storage_format)
        if sm is None:
            if n is None:
                raise QuadrantsRuntimeError("SparseMatrix(n, m) needs its number of rows n.")
            sm = sp.csc_array((n, m if m else n), dtype=DTYPES[self.dtype])
        self.matrix = sm.asformat(STORAGE[self.storage_format]).astype(DTYPES[self.dtype])
        self.n, self.m = self.matrix.shape

    def _like(self, sm: Any) -> SparseMatrix:
        return SparseMatrix(sm=sm, dtype=self.dtype, storage_format=self.storage_format)

    def _same_shape(self, other: SparseMatrix) -> None:
        assert self.n == other.n and self.m == other.m, (
            f"Dimension mismatch between sparse matrices ({self.n}, {self.m}) and "
            f"({other.n}, {other.m})"
        )

    def _same_dtype(self, other: SparseMatrix, op: str) -> None:
        if self.dtype != other.dtype:
            raise TypeError(
                f"unsupported operand type(s) for {op}: a {self.dtype} and a {other.dtype} sparse "
                "matrix."
            )

    def __add__(self, other: SparseMatrix) -> SparseMatrix:
        self._same_shape(other)
        self._same_dtype(other, "+")
        return self._like(self.matrix + other.matrix)

    def __sub__(self, other: SparseMatrix) -> SparseMatrix:
        self._same_shape(other)
        self._same_dtype(other, "-")
        return self._like(self.matrix - other.matrix)

    def __iadd__(self, other: SparseMatrix) -> Self:
        result = self + other
        self.matrix = result.matrix
        return self

    def __isub__(self, other: SparseMatrix) -> Self:
        result = self - other
        self.matrix = result.matrix
        return self

    def __mul__(self, other: object) -> SparseMatrix:
        """A scalar times the matrix, or the elementwise (Hadamard) product of two."""
        if isinstance(other, SparseMatrix):
            self._same_shape(other)
            self._same_dtype(other, "*")
            return self._like(self.matrix.multiply(other.matrix))
        if isinstance(other, (int, float, np.integer, np.floating)) and not isinstance(other, bool):
            return self._like(self.matrix * DTYPES[self.dtype](other))
        return NotImplemented

    def __rmul__(self, other: object) -> SparseMatrix:
        return self.__mul__(other)

    def transpose(self) -> SparseMatrix:
        return self._like(self.matrix.transpose())

    def __matmul__(self, other: object) -> Any:
        """The matrix product with a sparse matrix; with a vector (a field or a NumPy array: a
        NumPy array of the matrix's dtype; a qd.ndarray: a qd.ndarray of its own dtype)."""
        if isinstance(other, SparseMatrix):
            assert self.m == other.n, (
                f"Dimension mismatch between sparse matrices ({self.n}, {self.m}) and "
                f"({other.n}, {other.m})"
            )
            self._same_dtype(other, "@")
            return self._like(self.matrix @ other.matrix)
        if isinstance(other, Field):
            assert self.m == other.shape[0], (
                f"Dimension mismatch between sparse matrix ({self.n}, {self.m}) and vector "
                f"({other.shape})"
            )
            return self._matvec(np.asarray(other.to_numpy()))
        if isinstance(other, np.ndarray):
            assert self.m == other.shape[0], (
                f"Dimension mismatch between sparse matrix ({self.n}, {self.m}) and vector "
                f"({other.shape})"
            )
            return self._matvec(other)
        if isinstance(other, Ndarray):
            if self.m != other.shape[0]:
                raise QuadrantsRuntimeError(
                    f"Dimension mismatch between sparse matrix ({self.n}, {self.m}) and vector "
                    f"({other.shape})"
                )
            out = ndarray(other.dtype, self.n)
            out.from_numpy(self._matvec(np.asarray(other.to_numpy())))
            return out
        raise QuadrantsRuntimeError(
            f"Sparse matrix-matrix/vector multiplication does not support {type(other)} for now. "
            "Supported types are SparseMatrix, qd.field, qd.ndarray and numpy ndarray."
        )

    def _matvec(self, x: np.ndarray) -> np.ndarray:
        return self.matrix @ x.astype(DTYPES[self.dtype], copy=False)

    def _index(self, indices: tuple[int, int]) -> tuple[int, int]:
        i, j = indices
        if not (0 <= i < self.n and 0 <= j < self.m):
            raise IndexError(
                f"index ({i}, {j}) is out of range for a sparse matrix of shape {self.shape}."
            )
        return int(i), int(j)

    def __getitem__(self, indices: tuple[int, int]) -> float:
        i, j = self._index(indices)
        return float(self.matrix[i, j])

    def __setitem__(self, indices: tuple[int, int], value: float) -> None:
        i, j = self._index(indices)
        with warnings.catch_warnings():  # a new nonzero changes the structure: allowed here
            warnings.simplefilter("ignore", sp.SparseEfficiencyWarning)
            self.matrix[i, j] = value

    def __str__(self) -> str:
        """Dense rows as Quadrants (Eigen) prints them: 4 significant digits, right-aligned to the
        widest entry."""
        dense = np.asarray(self.matrix.todense(), dtype=np.float32)
        texts = [[f"{float(v):.4g}" for v in row] for row in dense]
        width = max((len(t) for row in texts for t in row), default=0)
        return "\n".join("[" + ", ".join(t.rjust(width) for t in row) + "]" for row in texts)

    __repr__ = __str__

    @property
    def shape(self) -> tuple[int, int]:
        return (self.n, self.m)

    def num_rows(self) -> int:
        return self.n

    def num_cols(self) -> int:
        return self.m

    def build_from_ndarray(self, array: object) -> None:
        """Fill the matrix from an ndarray of (row, column, value) triplets (a scalar ndarray of
        3k entries, or a vector or matrix ndarray of them); duplicates are summed."""
        if not isinstance(array, Ndarray):
            raise QuadrantsRuntimeError(
                "Sparse matrix only supports building from [qd.ndarray, qd.Vector.ndarray, "
                "qd.Matrix.ndarray]"
            )
        flat = np.asarray(array.to_numpy()).reshape(-1)
        if flat.size % 3:
            raise QuadrantsRuntimeError(
                "The number of ndarray elements must have a length that is divisible by 3."
            )
        t = flat.reshape(-1, 3)
        self.matrix = _from_triplets(
            t[:, 0].astype(np.int64), t[:, 1].astype(np.int64), t[:, 2], self.shape, self
        )

    def mmwrite(self, filename: str) -> None:
        """Write the matrix to a Matrix Market file (1-based coordinates)."""
        coo = self.matrix.tocoo()
        order = (
            np.lexsort((coo.row, coo.col))
            if self.storage_format == "col_major"
            else np.lexsort((coo.col, coo.row))
        )
        with open(filename, "w") as f:
            f.write("%%MatrixMarket matrix coordinate real general\n%\n")
            f.write(f"{self.n} {self.m} {coo.nnz}\n")
            f.writelines(
                f"{coo.row[k] + 1} {coo.col[k] + 1} {float(coo.data[k]):g}\n" for k in order
            )


def _from_triplets(
    rows: np.ndarray, cols: np.ndarray, values: np.ndarray, shape: tuple[int, int], sm: SparseMatrix
) -> Any:
    """The matrix of these triplets, duplicates summed, in `sm`'s format and dtype."""
    bad = (rows < 0) | (rows >= shape[0]) | (cols < 0) | (cols >= shape[1])
    if bad.any():
        k = int(np.argmax(bad))
        raise QuadrantsRuntimeError(
            f"triplet {k} is at ({rows[k]}, {cols[k]}), outside the {shape[0]}x{shape[1]} sparse "
            "matrix."
        )
    values = values.astype(DTYPES[sm.dtype], copy=False)
    coo = sp.coo_array((values, (rows, cols)), shape=shape)
    return coo.asformat(STORAGE[sm.storage_format])  # sums duplicates


@data_oriented
class SparseMatrixBuilder(TripletSink):
    """Collects (row, column, value) triplets from kernels, then `build()`s a SparseMatrix.

    Args:
        num_rows, num_cols: the matrix's shape (num_cols defaults to num_rows).
        max_num_triplets: how many `A[i, j] += v` the builder holds until it is built.
        dtype: qd.f32 or qd.f64.
        storage_format: 'col_major' (CSC) or 'row_major' (CSR).
    """

    def __init__(
        self,
        num_rows: int | None = None,
        num_cols: int | None = None,
        max_num_triplets: int = 0,
        dtype: Any = f32,
        storage_format: str = "col_major",
    ) -> None:
        self.num_rows = num_rows
        self.num_cols = num_cols if num_cols else num_rows
        self.dtype = _dtype(dtype)
        self.storage_format = _storage(storage_format)
        self.max_num_triplets = int(max_num_triplets)
        size = max(self.max_num_triplets, 1)
        self.count = field(i32, shape=())
        self.rows = field(i32, shape=size)
        self.cols = field(i32, shape=size)
        self.values = field(self.dtype, shape=size)

    @func
    def insert_triplet(self, i, j, v):
        k = atomic_add(self.count[None], 1)
        if k < self.max_num_triplets:
            self.rows[k] = i
            self.cols[k] = j
            self.values[k] = v

    def _triplets(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        count = int(self.count[None])
        if count > self.max_num_triplets:
            raise QuadrantsRuntimeError(
                f"the sparse matrix builder was given {count} triplets, more than its "
                f"max_num_triplets={self.max_num_triplets}; make it with a larger one."
            )
        return (
            np.asarray(self.rows.to_numpy())[:count],
            np.asarray(self.cols.to_numpy())[:count],
            np.asarray(self.values.to_numpy())[:count],
        )

    def print_triplets(self) -> None:
        """Print the shape, the triplet count and each triplet, as Quadrants does."""
        rows, cols, values = self._triplets()
        print(
            f"n={self.num_rows}, m={self.num_cols}, num_triplets={len(rows)} "
            f"(max={self.max_num_triplets})"
        )
        for i, j, v in zip(rows, cols, values):
            print(f"[{i}, {j}] = {float(v):g}")

    def build(self, dtype: Any = None, _format: str = "CSR") -> SparseMatrix:
        """The matrix of the triplets so far (duplicates summed), in the builder's dtype; the
        builder is empty afterwards."""
        if self.num_rows is None or self.num_cols is None:
            raise QuadrantsRuntimeError("SparseMatrixBuilder(num_rows, num_cols) has no shape.")
        rows, cols, values = self._triplets()
        sm = SparseMatrix(
            self.num_rows, self.num_cols, dtype=self.dtype, storage_format=self.storage_format
        )
        sm.matrix = _from_triplets(rows, cols, values, sm.shape, sm)
        self.count[None] = 0
        return sm


__all__ = ["SparseMatrix", "SparseMatrixBuilder"]
