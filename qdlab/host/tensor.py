"""`qd.Tensor`, `qd.tensor(...)`, `qd.Backend`: Quadrants' backend-agnostic tensor, a thin wrapper
around a `qd.ndarray` or a `qd.field` that shows the same surface whichever it holds (shape,
dtype, host indexing, `to_numpy` / `from_numpy` / `fill` / `copy_from` / `to_torch` /
`from_torch`, `.grad`).

A kernel sees what the wrapper holds: `Kernel.__call__` unwraps a `Tensor` argument (`unwrap`,
only once any `Tensor` was made, so programs that never make one pay nothing), and a parameter
annotated `qd.Tensor` takes either kind: an ndarray as `qd.types.ndarray()` would, a field as
`qd.template()` would. `layout=(1, 0)` lays an ndarray out in that axis order (its kernels index
it canonically, `host/ndarray.py`); a field's storage order is qdlab's own, so a field tensor only
keeps the layout it was given.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from functools import cached_property

import numpy as np
import numpy.typing as npt

from ..core import matrix
from ..core.fields import TensorBase
from ..core.types import DType
from .field import Field, field
from .launch import HostArray
from .ndarray import HostNdarray, Ndarray, ScalarNdarray, ndarray


class Backend(enum.IntEnum):
    """Which storage `qd.tensor(...)` makes: a field or an ndarray."""

    FIELD = 0
    NDARRAY = 1


made = False
"""Whether any `Tensor` was made in this process: until then kernel calls skip the unwrap."""


class Tensor(TensorBase):
    """A `qd.ndarray` or a `qd.field`, under one surface; also the annotation `x: qd.Tensor`."""

    def __init__(self, impl: object) -> None:
        global made
        if not isinstance(impl, (HostNdarray, Field)):
            raise TypeError(f"Tensor(impl) requires an Ndarray or Field; got {type(impl).__name__}")
        self._impl: HostNdarray | Field = impl
        made = True

    def __repr__(self) -> str:
        if isinstance(self._impl, Ndarray) and self._impl.arr is None:
            return f"Tensor({self._impl!r})"  # released by `qd.reset()`
        layout = "" if self.layout is None else f", layout={self.layout!r}"
        return (
            f"Tensor(shape={self.shape!r}, dtype={self.dtype!r}, "
            f"backend={self._backend().name}{layout})"
        )

    def _backend(self) -> Backend:
        return Backend.NDARRAY if isinstance(self._impl, Ndarray) else Backend.FIELD

    def _unwrap(self) -> object:
        return self._impl

    def held(self) -> object:
        return self._impl

    # A struct member's launch words are read by attribute paths (`s.x._sig`, `struct_args.Paths`):
    # an ndarray tensor answers with its ndarray's, a field tensor with an AttributeError (the
    # launch then binds the slow way).
    @property
    def _sig(self) -> tuple:
        return self._ndarray()._sig

    @property
    def _words(self) -> tuple[int, ...]:
        return self._ndarray()._words

    @property
    def _extent(self) -> tuple[int, int, int, int]:
        return self._ndarray()._extent

    def _ndarray(self) -> HostNdarray:
        if isinstance(self._impl, HostNdarray):
            return self._impl
        raise AttributeError("a field tensor has no launch words of its own")

    @property
    def shape(self) -> tuple[int, ...]:
        if isinstance(self._impl, Ndarray):  # released by `qd.reset()`: the error that names it
            return self._impl._outer()
        return tuple(self._impl.shape)

    @property
    def dtype(self) -> object:
        return self._impl.dtype

    @property
    def layout(self) -> tuple[int, ...] | None:
        """The physical axis order (`qd.tensor(..., layout=(1, 0))`), None for the identity: the
        ndarray's or the field's own."""
        return self._impl.layout

    def __getitem__(self, key: object) -> object:
        return self._impl[key]

    def __setitem__(self, key: object, value: object) -> None:
        self._impl[key] = value

    def to_numpy(
        self, dtype: npt.DTypeLike | None = None, *, copy: bool | None = True
    ) -> np.ndarray:
        """The elements in canonical order: a copy, or with `copy=False` / `None` a view of the
        storage (see `torch_bridge.to_numpy`)."""
        return self._impl.to_numpy(dtype, copy=copy)

    def to_dlpack(self, versioned: bool = False) -> object:
        """A DLPack capsule over the storage, in canonical order (strided when a layout permutes
        it); `versioned`: a DLPack 1.0 one."""
        return self._impl.to_dlpack(versioned)

    def from_numpy(self, array: npt.ArrayLike) -> None:
        self._impl.from_numpy(array)

    def fill(self, value: object) -> None:
        self._impl.fill(value)

    def copy_from(self, other: Tensor | HostArray) -> None:
        self._impl.copy_from(other._impl if isinstance(other, Tensor) else other)

    def to_torch(self, device: object = None, *, copy: bool | None = True) -> object:
        return self._impl.to_torch(device, copy=copy)

    def from_torch(self, tensor: object) -> None:
        self._impl.from_torch(tensor)

    def has_grad(self) -> bool:
        """Whether its gradient storage is allocated."""
        return self._impl.has_grad()

    def has_dual(self) -> bool:
        """Whether its dual storage (forward mode) is allocated."""
        return self._impl.has_dual()

    @cached_property
    def grad(self) -> Tensor | None:
        g = getattr(self._impl, "grad", None)
        return None if g is None else wrap(g)

    def __reduce__(self) -> tuple:
        """Pickled as its backend, dtype, canonical shape, element shape, layout and values: made
        again by the factory on the other side, so a field tensor pickles too."""
        element = element_of(self._impl)
        data = self.to_numpy()
        return (_rebuild, (self._backend(), self.dtype, self.shape, element, self.layout, data))


class VectorTensor(Tensor):
    """A `Tensor` of vectors (`qd.Vector.tensor(n, dtype, shape)`)."""

    @property
    def n(self) -> int:
        return self.element_shape[0]

    @property
    def element_shape(self) -> tuple[int, ...]:
        return element_of(self._impl)


class MatrixTensor(Tensor):
    """A `Tensor` of matrices (`qd.Matrix.tensor(n, m, dtype, shape)`)."""

    @property
    def n(self) -> int:
        return self.element_shape[0]

    @property
    def m(self) -> int:
        return self.element_shape[1]

    @property
    def element_shape(self) -> tuple[int, ...]:
        return element_of(self._impl)


def element_of(impl: object) -> tuple[int, ...]:
    """The element shape of an ndarray (`element_shape`) or a field (`element`)."""
    return tuple(getattr(impl, "element_shape", None) or getattr(impl, "element", ()) or ())


def wrap(impl: object) -> Tensor:
    """`impl` in the wrapper its element shape calls for."""
    element = element_of(impl)
    cls = Tensor if not element else VectorTensor if len(element) == 1 else MatrixTensor
    return cls(impl)


def unwrap(value: object) -> object:
    return value._impl if isinstance(value, Tensor) else value


SCALAR_KWARGS = frozenset({"backend", "needs_grad", "layout"})
COMPOUND_KWARGS = frozenset({"backend", "needs_grad"})
"""The keywords the factories take (besides `dtype` / `shape`): backend-specific ones (`offset=`,
`order=`) belong to `qd.field` / `qd.ndarray`, as in Quadrants, which checks them the same way."""


def check_kwargs(kwargs: dict[str, object], factory: str, accepted: frozenset[str]) -> None:
    """A TypeError, in the reference's words, for a keyword `factory` does not take."""
    if "order" in kwargs:
        if "layout" in accepted:
            raise TypeError(f"{factory}(...) does not accept order=; pass layout=(...) instead")
        raise TypeError(
            f"{factory}(...) does not accept order= (or layout=); use the underlying "
            "qd.Vector.field / qd.Matrix.field for non-default storage order"
        )
    extra = set(kwargs) - accepted
    if extra:
        names = ", ".join(sorted(accepted | {"dtype", "shape"}))
        raise TypeError(
            f"{factory}() got unexpected keyword argument(s) {sorted(extra)!r}; accepted: {names}"
        )


def coerce_backend(backend: object) -> Backend:
    """`backend=` as a `Backend` (one of its values, as `Backend(v)` takes them)."""
    for member in Backend:
        if member == backend:
            return member
    valid = ", ".join(f"qd.Backend.{m.name}" for m in Backend)
    raise ValueError(f"backend={backend!r} is not a valid qd.Backend; expected one of {valid}")


def tensor(
    dtype: object,
    shape: int | tuple[int, ...] | list[int],
    *,
    backend: Backend = Backend.NDARRAY,
    layout: Sequence[int] | None = None,
    **kwargs: object,
) -> Tensor:
    """`qd.tensor(dtype, shape, backend=qd.Backend.NDARRAY | FIELD, layout=None,
    needs_grad=False)`: `shape` is the canonical one, `layout` the canonical axis each level of
    memory holds, outermost first."""
    if isinstance(dtype, (Ndarray, Field, Tensor)):
        raise TypeError(
            f"qd.tensor() allocates a new tensor; to wrap an existing {type(dtype).__name__}, use "
            "qd.wrap(impl) instead"
        )
    if layout is not None and isinstance(dtype, matrix.MatrixType):
        raise TypeError(
            "layout= is not supported with compound dtypes (vector/matrix). "
            "Use qd.Vector.tensor(...) or qd.Matrix.tensor(...) without layout= instead."
        )
    check_kwargs(kwargs, "qd.tensor", SCALAR_KWARGS)
    backend = coerce_backend(backend)
    needs_grad = bool(kwargs.get("needs_grad", False))
    dims = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    order = None if layout is None else _layout(layout, dims)
    if backend is Backend.FIELD:
        letters = None if order is None else "".join(chr(ord("i") + a) for a in order)
        return wrap(field(dtype, shape=shape, order=letters, needs_grad=needs_grad))
    if order is None:
        return wrap(ndarray(dtype, dims, needs_grad=needs_grad))
    arr = ndarray(dtype, tuple(dims[a] for a in order), needs_grad=needs_grad)  # memory's order
    if type(arr) not in (Ndarray, ScalarNdarray):
        raise NotImplementedError(
            f"qd.tensor(layout={order!r}) on the GPU: qdlab lays out host ndarrays only."
        )
    arr._set_layout(order)
    return wrap(arr)


def compound_tensor(
    factory: str,
    dtype: matrix.MatrixType,
    shape: int | tuple[int, ...],
    *,
    backend: Backend = Backend.NDARRAY,
    **kwargs: object,
) -> Tensor:
    """`qd.Vector.tensor(n, dtype, shape, ...)` / `qd.Matrix.tensor(n, m, dtype, shape, ...)`
    (`factory` names which): no layout, as in Quadrants."""
    check_kwargs(kwargs, factory, COMPOUND_KWARGS)
    backend = coerce_backend(backend)
    needs_grad = bool(kwargs.get("needs_grad", False))
    if backend is Backend.FIELD:
        return wrap(field(dtype, shape=shape, needs_grad=needs_grad))
    return wrap(ndarray(dtype, shape, needs_grad=needs_grad))


def _layout(layout: Sequence[int], dims: tuple) -> tuple[int, ...] | None:
    """A `layout=` as a permutation of the axes (None for the identity), checked as the
    reference checks it."""
    order = tuple(layout)
    if len(order) != len(dims):
        raise ValueError(
            f"layout has {len(order)} entries but shape has {len(dims)} dimensions; they must match"
        )
    if sorted(order) != list(range(len(dims))):
        raise ValueError(f"layout={order!r} is not a permutation of range({len(dims)})")
    return None if order == tuple(range(len(dims))) else order


def with_layout(array: Ndarray | Tensor, layout: Sequence[int]) -> Ndarray:
    """Tag an ndarray allocated in memory's order (or the one a `Tensor` holds) with `layout`, its
    gradient too: from then on its shape, host indexing and kernels are canonical, as
    `qd.tensor(..., layout=)` makes them (`quadrants._tensor._with_layout`)."""
    impl = array._impl if isinstance(array, Tensor) else array
    if not isinstance(impl, Ndarray):
        raise TypeError(f"_with_layout needs a qd.ndarray, not {type(impl).__name__}")
    order = tuple(layout)
    ndim = impl.ndim  # memory's rank
    if len(order) != ndim:
        raise ValueError(f"layout has {len(order)} entries but ndarray has {ndim} dims")
    if sorted(order) != list(range(ndim)):
        raise ValueError(f"layout={order!r} is not a permutation of range({ndim})")
    impl._set_layout(order)
    return impl


def _rebuild(
    backend: Backend,
    dtype: DType,
    shape: tuple[int, ...],
    element: tuple[int, ...],
    layout: tuple[int, ...] | None,
    data: np.ndarray,
) -> Tensor:
    if not element:
        out = tensor(dtype, shape, backend=backend, layout=layout)
    elif len(element) == 1:
        out = compound_tensor(
            "qd.Vector.tensor", matrix.VectorType(element[0], dtype), shape, backend=backend
        )
    else:
        out = compound_tensor(
            "qd.Matrix.tensor",
            matrix.MatrixType(element[0], element[1], dtype),
            shape,
            backend=backend,
        )
    out.from_numpy(data)
    return out


matrix.tensor_maker = compound_tensor
