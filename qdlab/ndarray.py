"""`qd.ndarray`: an array owned by qdlab that kernels read and write in place, with an optional
gradient buffer; in host memory, or on the GPU under `qd.init(arch=qd.cuda)`."""

from __future__ import annotations

import numpy as np

from . import state
from .compiler import abi, cuda_runtime
from .compiler.errors import QuadrantsIndexError, QuadrantsRuntimeError
from .compiler.types import DType, from_numpy


class Ndarray:
    """A C-contiguous host array. `.grad` is a second array of the same shape when `needs_grad`."""

    def __init__(
        self, dtype: DType, shape: int | tuple[int, ...], needs_grad: bool = False
    ) -> None:
        self.dtype = _dtype(dtype)
        if needs_grad and not self.dtype.is_float:
            raise QuadrantsRuntimeError(
                f"{self.dtype} is not supported for ndarray with needs_grad=True: gradients are "
                "floats."
            )
        self.arr = np.zeros(_shape(shape), self.dtype.np)
        self.grad = Ndarray(self.dtype, self.arr.shape) if needs_grad else None
        self._made(needs_grad)

    def _made(self, needs_grad: bool) -> None:
        data, grad = (
            cuda_runtime.pointer(self.arr),
            cuda_runtime.pointer(self.grad.arr) if self.grad else 0,
        )
        self._words = abi.array_words(data, grad, self.arr.shape)
        """Launch words: data pointer, gradient pointer, extents (the buffer never moves)."""
        self._sig = (self.dtype.name, self.arr.ndim, needs_grad)
        self._extent = (data, self.arr.nbytes, grad, self.grad.arr.nbytes if self.grad else 0)
        """(data pointer, bytes, gradient pointer, gradient bytes): what the launch's overlap check
        reads."""

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
            raise ValueError(
                f"from_numpy: shape {array.shape} does not match the ndarray's {self.arr.shape}"
            )
        self.arr[...] = array

    def copy_from(self, other: Ndarray) -> None:
        self.from_numpy(other.to_numpy())

    @property
    def element_shape(self) -> tuple[int, ...]:
        """The shape of one element: () for an array of scalars."""
        return ()

    def index(self, index: object) -> tuple:
        """A host-side index as a tuple of one integer per axis (`a[None]` and `a[()]` index a
        0-d array); QuadrantsIndexError for the wrong number of indices."""
        key = () if index is None else index if isinstance(index, tuple) else (index,)
        if len(key) != self.arr.ndim:
            raise QuadrantsIndexError(
                f"{self.arr.ndim}d ndarray indexed with {len(key)}d indices: {index!r}"
            )
        return key

    def __getitem__(self, index: object) -> object:
        return self.arr[self.index(index)].item()  # type: ignore[index]  # a Python number

    def __setitem__(self, index: object, value: object) -> None:
        self.arr[self.index(index)] = value  # type: ignore[index]

    def __array__(self, dtype: object = None, copy: object = None) -> np.ndarray:
        return self.arr.copy() if dtype is None else self.arr.astype(dtype)

    def __repr__(self) -> str:
        grad = ", needs_grad=True" if self.grad is not None else ""
        return f"qd.ndarray({self.dtype}, {self.shape}{grad})"


class DeviceNdarray(Ndarray):
    """`qd.ndarray` whose storage is a CuPy array on the current device; kernels get it by
    pointer."""

    def __init__(
        self, dtype: DType, shape: int | tuple[int, ...], needs_grad: bool = False
    ) -> None:
        cupy = cuda_runtime.require()
        self.dtype = _dtype(dtype)
        self.arr = cupy.zeros(_shape(shape), self.dtype.np)
        self.grad = DeviceNdarray(self.dtype, self.arr.shape) if needs_grad else None
        self._made(needs_grad)

    def to_numpy(self) -> np.ndarray:
        return self.arr.get()

    def from_numpy(self, array: np.ndarray) -> None:
        array = np.ascontiguousarray(np.asarray(array), self.dtype.np)
        if array.shape != self.arr.shape:
            raise ValueError(
                f"from_numpy: shape {array.shape} does not match the ndarray's {self.arr.shape}"
            )
        self.arr.set(array)

    def __getitem__(self, index: object) -> object:
        return self.arr[self.index(index)].get()

    def __array__(self, dtype: object = None, copy: object = None) -> np.ndarray:
        host = self.arr.get()
        return host if dtype is None else host.astype(dtype)

    def __repr__(self) -> str:
        return "qd.ndarray on cuda" + super().__repr__().removeprefix("qd.ndarray")


def ndarray(dtype: DType, shape: int | tuple[int, ...], needs_grad: bool = False) -> Ndarray:
    """`qd.ndarray(qd.f32, (n, m))`: zero-initialised; on the GPU under `qd.init(arch=qd.cuda)`."""
    if state.config().arch in ("cuda", "gpu") and cuda_runtime.available():
        return DeviceNdarray(dtype, shape, needs_grad)
    return Ndarray(dtype, shape, needs_grad)


def _dtype(dtype: object) -> DType:
    if isinstance(dtype, DType):
        return dtype
    if dtype in (int, float):  # as in Quadrants: the default integer / float type
        return state.config().default_ip if dtype is int else state.config().default_fp
    dt = from_numpy(dtype) if dtype is not None else None
    if dt is None:
        raise TypeError(f"qd.ndarray needs a qdlab dtype such as qd.f32, not {dtype!r}")
    return dt


def _shape(shape: object) -> tuple[int, ...]:
    """`shape` as a tuple of extents: integers (NumPy ones too) from 1 to 2**31 - 1, as Quadrants
    takes them; anything else is a QuadrantsRuntimeError."""
    dims = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    if not all(
        isinstance(s, (int, np.integer)) and not isinstance(s, bool) and 0 < s < 2**31 for s in dims
    ):
        raise QuadrantsRuntimeError(
            f"{shape!r} is not a valid shape for ndarray: every extent must be an integer from 1 "
            "to 2**31 - 1."
        )
    return tuple(int(s) for s in dims)
