"""`qd.ndarray`: an array owned by qdlab that kernels read and write in place, with an optional
gradient buffer; in host memory, or on the GPU under `qd.init(arch=qd.cuda)`. Its elements are
scalars, or vectors and matrices (`qd.ndarray(qd.math.vec3, n)`, `qd.Vector.ndarray(3, qd.f32, n)`):
memory then holds the outer shape followed by the element's, as the NumPy array `to_numpy` gives.

Every ndarray is tracked, weakly, by the runtime it was made under (`get_runtime().ndarrays`), and
`qd.reset()` / `qd.init()` release it (`Ndarray._reset`), as in Quadrants: `arr`, `grad`, `shape`,
`dtype` and `element_type` then read None, and reading, writing or passing it to a kernel raises an
error that names it (Quadrants fails there on None, or reads freed memory)."""

from __future__ import annotations

import copy

import numpy as np
import numpy.typing as npt

from ..compiler.runtime import cuda as cuda_runtime
from ..core import matrix
from ..core.errors import QuadrantsIndexError, QuadrantsRuntimeError
from ..core.fields import Layout
from ..core.types import DTYPES, DType, from_numpy
from . import buffer_view, pyquadrants, state, torch_bridge
from .launch import HostArray, Storage, TorchTensor, array_launch, zeros


class ElementType:
    """What an element of a vector or matrix ndarray is (`a.element_type.shape()`, as in
    Quadrants)."""

    def __init__(self, dtype: DType, shape: tuple[int, ...]) -> None:
        self.dtype, self._shape = dtype, shape

    def shape(self) -> list[int]:
        return list(self._shape)

    def element_type(self) -> DType:
        return self.dtype

    def __repr__(self) -> str:
        return f"[Tensor ({', '.join(map(str, self._shape))}) {self.dtype}]"


class NdarrayTypeMetadata:
    """`a.get_type()`: an ndarray's type as a kernel parameter sees it (Quadrants' class of that
    name): its element type, its shape in memory's order, whether it has a gradient."""

    def __init__(
        self, element_type: object, shape: tuple[int, ...] | None = None, needs_grad: bool = False
    ) -> None:
        self.element_type, self.shape, self.needs_grad = element_type, shape, needs_grad
        self.layout = Layout.AOS


RELEASED = "qd.reset() or a later qd.init() released it (they free every ndarray made before them)"
"""Why a released ndarray cannot be used (`Ndarray._reset`)."""


class Allocation(np.ndarray):
    """An ndarray's host memory, `a.arr`: the NumPy array its kernels read and write in place, which
    also answers what Quadrants programs ask of `.arr` (there a C++ ndarray object). NumPy makes its
    views and copies Allocations too; everything else about it is NumPy's, `shape` (in memory's
    order, the element's axes included) too."""

    def device_allocation_ptr(self) -> int:
        """The address of the data that kernels read and write: the same for the ndarray's whole
        life (its buffer never moves), another for every other live ndarray and for its gradient
        buffer, as Quadrants' (there the address of the allocation's record)."""
        return cuda_runtime.pointer(self)

    def total_shape(self) -> list[int]:
        """The shape in memory's order with the element's axes, a list (Quadrants' method)."""
        return list(self.shape)


class Ndarray:
    """A C-contiguous host array. `.grad` is a second array of the same shape when `needs_grad`."""

    _released: str | None = None
    """What it was (its `repr`) once `qd.reset()` / `qd.init()` released it; None while it lives."""

    def __init__(
        self, dtype: object, shape: int | tuple[int, ...], needs_grad: bool = False
    ) -> None:
        self.dtype, self.element = _dtype(dtype)
        if needs_grad and not self.dtype.is_float:
            raise QuadrantsRuntimeError(
                f"{self.dtype} is not supported for ndarray with needs_grad=True: gradients are "
                "floats."
            )
        self.arr = zeros(_shape(shape) + self.element, self.dtype.np).view(Allocation)
        self.grad = type(self)(dtype, _shape(shape)) if needs_grad else None
        self._made(needs_grad)

    def _made(self, needs_grad: bool) -> None:
        self._words, self._extent = array_launch(
            self.arr, self.grad.arr if self.grad is not None else None
        )
        """Launch words (data pointer, gradient pointer, extents) and (data pointer, bytes,
        gradient pointer, gradient bytes), what the launch's overlap check reads: made once, the
        buffer never moves."""
        self.ndim = self.arr.ndim - len(self.element)
        """Its outer axes."""
        self.element_type: ElementType | DType = (
            ElementType(self.dtype, self.element) if self.element else self.dtype
        )
        """The element's type: the dtype, or a vector's or matrix's (`.shape()`), as Quadrants'
        instance attribute."""
        if self.element:  # Quadrants' vector and matrix ndarrays have these instance attributes
            self.n = self.element[0]
            if len(self.element) == 2:
                self.m = self.element[1]
        self._sig = (self.dtype.name, self.ndim, needs_grad, self.element) + (
            (self.layout,) if self.layout is not None else ()
        )
        pyquadrants.current.ndarrays.add(self)  # so that `qd.reset()` releases it

    def _reset(self) -> None:
        """Released by `qd.reset()` / `qd.init()` (`pyquadrants.restart`): the storage and the
        gradient are dropped and read None, as do `shape`, `dtype` and `element_type`, as in
        Quadrants. Its launch words and signature go too, so no launch cache can match it: a
        kernel binds it the slow way, where `array_args` refuses it by name."""
        if self._released is None:
            self._released = repr(self)
        # Quadrants' released state: None, outside these attributes' live types (every use
        # checks `_storage()` first)
        self.__dict__.update(arr=None, grad=None, dtype=None, element_type=None)
        for name in ("_words", "_extent", "_sig"):
            self.__dict__.pop(name, None)

    def _storage(self) -> Storage:
        """`arr`, or a QuadrantsRuntimeError naming the ndarray once it is released."""
        if self.arr is None:
            raise QuadrantsRuntimeError(f"{self._released} cannot be used: {RELEASED}.")
        return self.arr

    _layout: tuple[int, ...] | None = None

    @property
    def layout(self) -> tuple[int, ...] | None:
        """`qd.tensor(..., layout=(1, 0))`: the canonical axis each axis of memory holds, outermost
        first (None: none); `arr` is in memory's order, everything else (`shape`, indexing,
        `to_numpy`) canonical."""
        return self._layout

    def _set_layout(self, layout: tuple[int, ...] | None) -> None:
        """Tag an array allocated in memory's order with its layout (its gradient too); None or the
        identity: none."""
        self._storage()
        order = None if layout is None else tuple(layout)
        self._layout = None if order == tuple(range(len(order or ()))) else order
        if self.grad is not None:
            self.grad._set_layout(layout)
        self._made(self.grad is not None)

    @property
    def _qd_layout(self) -> tuple[int, ...] | None:
        """Quadrants' name for the layout tag, which its programs read and set directly."""
        return self.layout

    @_qd_layout.setter
    def _qd_layout(self, layout: tuple[int, ...] | None) -> None:
        self._set_layout(layout)

    def _canonical(self, a: Storage) -> Storage:
        """`a` (in memory's order) with its axes in the canonical order: a view."""
        if self.layout is None:
            return a
        axes = [self.layout.index(d) for d in range(len(self.layout))]
        return a.transpose(axes + list(range(len(axes), a.ndim)))

    def _physical(self, a: Storage) -> Storage:
        """`a` (canonical) with its axes in memory's order: a view."""
        if self.layout is None:
            return a
        n = len(self.layout)
        return a.transpose(list(self.layout) + list(range(n, a.ndim)))

    @property
    def shape(self) -> tuple[int, ...] | None:
        """The outer shape (an ndarray of n vec3s has shape (n,)), canonical; None once
        released, as in Quadrants."""
        return None if self.arr is None else self._outer()

    def _outer(self) -> tuple[int, ...]:
        """The outer shape, canonical (`shape` of a live ndarray)."""
        arr = self._storage()
        outer = arr.shape[: arr.ndim - len(self.element)]
        return (
            outer
            if self.layout is None
            else tuple(outer[self.layout.index(d)] for d in range(len(outer)))
        )

    @property
    def element_shape(self) -> tuple[int, ...]:
        self._storage()
        return self.element

    n: int
    m: int

    def get_type(self) -> NdarrayTypeMetadata:
        """Its type as a kernel parameter sees it: element type, outer dimensions, whether it has
        a gradient (Quadrants' `NdarrayTypeMetadata`); all None once released, as there."""
        if self.arr is None:
            return NdarrayTypeMetadata(None)
        outer = tuple(self.arr.shape[: self.ndim])  # memory's order, as there
        return NdarrayTypeMetadata(self.element_type, outer, self.grad is not None)

    def has_grad(self) -> bool:
        """Whether it was made with `needs_grad=True` (a method, as in Quadrants)."""
        return self.grad is not None

    def has_dual(self) -> bool:
        """Whether it has a dual: never (qdlab's ndarrays have none, as Quadrants' 1.3.3)."""
        return False

    def _get_element_size(self) -> int:
        """Bytes per element (a vec3 of f32: 12), as Quadrants' ndarrays answer it."""
        return self._storage().itemsize * int(np.prod(self.element, dtype=np.int64))

    def _get_nelement(self) -> int:
        """Elements in the outer shape."""
        return int(np.prod(self._outer(), dtype=np.int64))

    def fill(self, value: object) -> None:
        pyquadrants.current.materialize()  # host access: the runtime's hook first, as there
        entries = value.entries if isinstance(value, matrix.Matrix) else value
        self._storage()[...] = np.asarray(entries)

    def _to_numpy(
        self, dtype: npt.DTypeLike | None = None, *, copy: bool | None = True
    ) -> np.ndarray:
        """The elements in canonical order: a copy, or with `copy=False` / `None` a view of the
        storage (strided when a layout permutes it), as Quadrants' zero-copy export is: a plain
        NumPy array, not an `Allocation`."""
        view = torch_bridge.to_numpy(self._canonical(self._storage()), self.dtype.name, dtype, copy)
        return np.asarray(view)

    def to_dlpack(self, versioned: bool = False) -> object:
        """A DLPack capsule over the storage, in canonical order (strided when a layout permutes
        it, as Quadrants exports it); `versioned`: a DLPack 1.0 one."""
        pyquadrants.current.materialize()
        return torch_bridge.dlpack(self._canonical(self._storage()), versioned)

    def _from_numpy(self, array: npt.ArrayLike) -> None:
        array = np.asarray(array)
        if array.shape != self._outer() + self.element:
            raise ValueError(
                f"from_numpy: shape {array.shape} does not match the ndarray's "
                f"{self._outer() + self.element}"
            )
        self.arr[...] = self._physical(array)

    def copy_from(self, other: HostArray) -> None:
        self._from_numpy(other.to_numpy())

    def _to_torch(self, device: object = None, *, copy: bool | None = True) -> object:
        """A torch tensor of the elements (canonical outer shape, then the element's): a copy, or
        with `copy=False` / `None` a zero-copy view of the storage (see `torch_bridge`), strided
        into the canonical order when a layout permutes it, as Quadrants' DLPack view is."""
        return torch_bridge.to_torch(
            self._canonical(self._storage()), device, copy, "this qd.ndarray", self.dtype.name
        )

    def _from_torch(self, tensor: TorchTensor) -> None:
        self._from_numpy(tensor.detach().cpu().numpy())

    def __reduce__(self) -> tuple:
        """Pickle by value, as Quadrants does: the dtype's name, the outer and element shapes and
        a canonical NumPy copy of the elements. The copy comes back as a fresh, layout-free array
        without a gradient (`qd.init` must have run where it is unpickled)."""
        self._storage()
        return _unpickle, (self.dtype.name, self._outer(), self.element, self._to_numpy())

    def __deepcopy__(self, memo: dict) -> Ndarray:
        out = copy.copy(self)
        out.arr = self._storage().copy()
        out.grad = copy.deepcopy(self.grad, memo)
        out._made(self.grad is not None)
        return out

    def _index(self, index: object) -> tuple:
        """A host-side index as a tuple of outer indices (`a[None]` and `a[()]` index a 0-d array;
        an element of a vector ndarray is indexed apart); QuadrantsIndexError for the wrong number
        of indices. It indexes the canonical view (`_canonical(arr)`), slices too. Every element
        access comes through here, after the runtime's `materialize()` hook."""
        pyquadrants.current.materialize()
        key = () if index is None else index if isinstance(index, tuple) else (index,)
        if len(key) != self.ndim and not any(isinstance(k, slice) for k in key):
            raise QuadrantsIndexError(
                f"{self.ndim}d ndarray indexed with {len(key)}d indices: {index!r}"
            )
        return key

    def __getitem__(self, index: object) -> object:
        if isinstance(index, slice):  # `data[a:b]`: a view, as in Quadrants
            self._storage()
            return buffer_view.of_slice(self, index)
        view = self._canonical(self._storage())[self._index(index)]
        if not self.element:
            if view.ndim:
                return np.asarray(view)  # a plain NumPy view, not an `Allocation`
            v = view.item()  # a Python number, as Quadrants gives (a u1 as 0 / 1)
            return int(v) if isinstance(v, bool) else v
        return (matrix.Vector if len(self.element) == 1 else matrix.Matrix)(np.asarray(view))

    def __setitem__(self, index: object, value: object) -> None:
        if isinstance(value, matrix.Matrix):
            value = value.entries
        self._canonical(self._storage())[self._index(index)] = value

    def __array__(self, dtype: npt.DTypeLike | None = None, copy: object = None) -> np.ndarray:
        out = self._to_numpy()
        return out if dtype is None else out.astype(dtype)

    def __repr__(self) -> str:
        if self._released is not None:
            return f"{self._released} (released)"
        grad = ", needs_grad=True" if self.grad is not None else ""
        what = f"{self.dtype}{list(self.element)}" if self.element else str(self.dtype)
        return f"qd.ndarray({what}, {self._outer()}{grad})"


class HostNdarray(Ndarray):
    """What every ndarray a program holds is: Quadrants defines the NumPy and torch exchange on
    its subclasses (`ScalarNdarray`, ...), not on `Ndarray`."""

    def to_numpy(
        self, dtype: npt.DTypeLike | None = None, *, copy: bool | None = True
    ) -> np.ndarray:
        """The elements in canonical order: a copy, or with `copy=False` / `None` a view of the
        storage (strided when a layout permutes it), as Quadrants' zero-copy export is."""
        return self._to_numpy(dtype, copy=copy)

    def from_numpy(self, array: npt.ArrayLike) -> None:
        self._from_numpy(array)

    def to_torch(self, device: object = None, *, copy: bool | None = True) -> object:
        """A torch tensor of the elements (canonical outer shape, then the element's): a copy, or
        with `copy=False` / `None` a zero-copy view of the storage (see `torch_bridge`)."""
        return self._to_torch(device, copy=copy)

    def from_torch(self, tensor: TorchTensor) -> None:
        self._from_torch(tensor)


class ScalarNdarray(HostNdarray):
    """An ndarray of scalars (`qd.ndarray(qd.f32, n)`), as Quadrants names its class."""


class VectorNdarray(HostNdarray):
    """An ndarray of vectors (`qd.Vector.ndarray(3, qd.f32, n)`)."""


class MatrixNdarray(HostNdarray):
    """An ndarray of matrices (`qd.Matrix.ndarray(2, 2, qd.f32, n)`)."""


class DeviceNdarray(HostNdarray):
    """`qd.ndarray` whose storage is a CuPy array on the current device; kernels get it by
    pointer."""

    def __init__(
        self, dtype: object, shape: int | tuple[int, ...], needs_grad: bool = False
    ) -> None:
        cupy = cuda_runtime.require()
        self.dtype, self.element = _dtype(dtype)
        self.arr = cupy.zeros(_shape(shape) + self.element, self.dtype.np)
        self.grad = DeviceNdarray(dtype, _shape(shape)) if needs_grad else None
        self._made(needs_grad)

    def _from_numpy(self, array: npt.ArrayLike) -> None:
        array = np.asarray(array)
        if array.shape != self._outer() + self.element:
            raise ValueError(
                f"from_numpy: shape {array.shape} does not match the ndarray's "
                f"{self._outer() + self.element}"
            )
        self.arr.set(np.ascontiguousarray(self._physical(array), self.dtype.np))

    def fill(self, value: object) -> None:
        pyquadrants.current.materialize()
        self._storage()[...] = self.device_value(value)

    def __setitem__(self, index: object, value: object) -> None:
        self._canonical(self._storage())[self._index(index)] = self.device_value(value)

    def device_value(self, value: object) -> object:
        """A host value (a number, a `qd.Vector`, a NumPy array) on the device: CuPy refuses to
        assign a non-scalar NumPy array to its arrays."""
        if isinstance(value, matrix.Matrix):
            value = value.entries
        return cuda_runtime.require().asarray(np.asarray(value, self.dtype.np))

    def __getitem__(self, index: object) -> object:
        if isinstance(index, slice):  # `data[a:b]`: a view, as in Quadrants
            self._storage()
            return buffer_view.of_slice(self, index)
        host = self._canonical(self._storage())[self._index(index)].get()
        if not self.element:
            return host.item() if host.ndim == 0 else host
        return (matrix.Vector if len(self.element) == 1 else matrix.Matrix)(host)

    def __array__(self, dtype: npt.DTypeLike | None = None, copy: object = None) -> np.ndarray:
        host = self._to_numpy()
        return host if dtype is None else host.astype(dtype)

    def __repr__(self) -> str:
        if self._released is not None:
            return super().__repr__()
        return "qd.ndarray on cuda" + super().__repr__().removeprefix("qd.ndarray")


def ndarray(dtype: object, shape: int | tuple[int, ...], needs_grad: bool = False) -> HostNdarray:
    """`qd.ndarray(qd.f32, (n, m))`, `qd.ndarray(qd.math.vec3, n)`: zero-initialised; on the GPU
    under `qd.init(arch=qd.cuda)`."""
    if state.config().arch in ("cuda", "gpu") and cuda_runtime.available():
        return DeviceNdarray(dtype, shape, needs_grad)
    if isinstance(dtype, matrix.MatrixType):
        cls = VectorNdarray if dtype.ndim == 1 else MatrixNdarray
        return cls(dtype, shape, needs_grad)
    return ScalarNdarray(dtype, shape, needs_grad)


matrix.ndarray_maker = ndarray


def _unpickle(
    dtype: str, shape: tuple[int, ...], element: tuple[int, ...], data: object
) -> HostNdarray:
    """The ndarray `Ndarray.__reduce__` pickled: made by `ndarray` (so on the GPU under
    `arch=qd.cuda`), then filled."""
    dt = DTYPES[dtype]
    if len(element) == 1:
        out = ndarray(matrix.vector(element[0], dt), shape)
    else:
        out = ndarray(matrix.matrix(*element, dtype=dt) if element else dt, shape)
    out.from_numpy(np.asarray(data))
    return out


def _dtype(dtype: object) -> tuple[DType, tuple[int, ...]]:
    """The scalar dtype and the element shape of an ndarray's `dtype` argument."""
    if isinstance(dtype, matrix.MatrixType):
        return _dtype(dtype.dtype)[0], dtype.shape
    if isinstance(dtype, DType):
        return dtype, ()
    if dtype in (float, int):
        return matrix.resolve_dtype(dtype), ()
    dt = from_numpy(dtype) if dtype is not None else None  # type: ignore[arg-type]
    if dt is None:
        raise TypeError(f"qd.ndarray needs a qdlab dtype such as qd.f32, not {dtype!r}")
    return dt, ()


def shape_items(shape: object) -> tuple[object, ...]:
    """The extents a shape lists, as Quadrants reads a field's or an ndarray's shape: a tuple, a
    list, a `range` or a 1-d NumPy array of them, or one extent (checked by the caller)."""
    if isinstance(shape, np.ndarray) and shape.ndim == 1:
        return tuple(shape.tolist()) if shape.dtype.kind in "iu" else tuple(shape)
    return tuple(shape) if isinstance(shape, (tuple, list, range)) else (shape,)


def _shape(shape: object) -> tuple[int, ...]:
    """`shape` as a tuple of extents: integers (NumPy ones too) from 1 to 2**31 - 1, as Quadrants
    takes them; anything else is a QuadrantsRuntimeError."""
    dims = shape_items(shape)
    ints = tuple(
        int(s)
        for s in dims
        if isinstance(s, (int, np.integer)) and not isinstance(s, bool) and 0 < s < 2**31
    )
    if len(ints) != len(dims):
        raise QuadrantsRuntimeError(
            f"{shape!r} is not a valid shape for ndarray: every extent must be an integer from 1 "
            "to 2**31 - 1."
        )
    return ints
