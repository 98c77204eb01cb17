"""`qd.ndarray`: a host array that kernels read and write in place, with an optional gradient buffer."""

from __future__ import annotations

import numpy as np

from .compiler.types import DType, from_numpy


class Ndarray:
    """A C-contiguous array owned by qdlab. `.grad` is a second array of the same shape when `needs_grad`."""

    def __init__(self, dtype: DType, shape: int | tuple[int, ...], needs_grad: bool = False) -> None:
        if not isinstance(dtype, DType):
            dt = from_numpy(dtype) if dtype is not None else None
            if dt is None:
                raise TypeError(f"qd.ndarray needs a qdlab dtype such as qd.f32, not {dtype!r}")
            dtype = dt
        shape = (shape,) if isinstance(shape, int) else tuple(int(s) for s in shape)
        if any(s < 0 for s in shape):
            raise ValueError(f"qd.ndarray shape must not be negative: {shape}")
        self.dtype = dtype
        self.arr = np.zeros(shape, dtype.np)
        self.grad = Ndarray(dtype, shape) if needs_grad else None
        self._words = (self.arr.ctypes.data, self.grad.arr.ctypes.data if self.grad is not None else 0, *shape)
        """Launch words: data pointer, gradient pointer, extents (the buffer never moves)."""
        self._sig = (dtype.name, len(shape), needs_grad)
        self._extent = (self._words[0], self.arr.nbytes, self._words[1], self.grad.arr.nbytes if self.grad else 0)
        """(data pointer, bytes, gradient pointer, gradient bytes): what the launch's overlap check reads."""

    @property
    def shape(self) -> tuple[int, ...]:
        return self.arr.shape

    @property
    def ndim(self) -> int:
        return self.arr.ndim

    def fill(self, value: object) -> None:
        self.arr.fill(value)

    def to_numpy(self) -> np.ndarray:
        return self.arr.copy()

    def from_numpy(self, array: np.ndarray) -> None:
        array = np.asarray(array)
        if array.shape != self.arr.shape:
            raise ValueError(f"from_numpy: shape {array.shape} does not match the ndarray's {self.arr.shape}")
        self.arr[...] = array

    def copy_from(self, other: Ndarray) -> None:
        self.from_numpy(other.arr)

    def __getitem__(self, index: object) -> object:
        return self.arr[index]  # type: ignore[index]

    def __setitem__(self, index: object, value: object) -> None:
        self.arr[index] = value  # type: ignore[index]

    def __array__(self, dtype: object = None, copy: object = None) -> np.ndarray:
        return self.arr.copy() if dtype is None else self.arr.astype(dtype)

    def __repr__(self) -> str:
        grad = ", needs_grad=True" if self.grad is not None else ""
        return f"qd.ndarray({self.dtype}, {self.shape}{grad})"


def ndarray(dtype: DType, shape: int | tuple[int, ...], needs_grad: bool = False) -> Ndarray:
    """`qd.ndarray(qd.f32, (n, m))`: zero-initialised; on the GPU under `qd.init(arch=qd.cuda)`."""
    from . import state
    if state.config().arch in ("cuda", "gpu"):
        from .compiler import cuda
        if cuda.available():
            return cuda.ndarray(dtype, shape, needs_grad)
    return Ndarray(dtype, shape, needs_grad)
