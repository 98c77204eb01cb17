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
from .field import Field, field
from .launch import HostArray
from .ndarray import Ndarray, ScalarNdarray, ndarray


class Backend(enum.IntEnum):
    """Which storage `qd.tensor(...)` makes: a field or an ndarray."""

    FIELD = 0
    NDARRAY = 1


made = False
"""Whether any `Tensor` was made in this process: until then kernel calls skip the unwrap."""


class Tensor:
    """A `qd.ndarray` or a `qd.field`, under one surface; also the annotation `x: qd.Tensor`."""

    def __init__(self, impl: object) -> None:
        global made
        if not isinstance(impl, (Ndarray, Field)):
            raise TypeError(f"Tensor(impl) requires an Ndarray or Field; got {type(impl).__name__}")
        self._impl: Ndarray | Field = impl
        made = True

    def __repr__(self) -> str:
        return f"Tensor(shape={self.shape!r}, dtype={self.dtype!r}, backend={self._backend().name})"

    def _backend(self) -> Backend:
        return Backend.NDARRAY if isinstance(self._impl, Ndarray) else Backend.FIELD

    def _unwrap(self) -> object:
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

    def _ndarray(self) -> Ndarray:
        if isinstance(self._impl, Ndarray):
            return self._impl
        raise AttributeError("a field tensor has no launch words of its own")

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._impl.shape)

    @property
    def dtype(self) -> object:
        return self._impl.dtype

    given_layout: tuple[int, ...] | None = None
    """The layout a field tensor was made with (its storage is canonical: values are the same)."""

    @property
    def layout(self) -> tuple[int, ...] | None:
        """The physical axis order (`qd.tensor(..., layout=(1, 0))`), None for the identity."""
        return getattr(self._impl, "layout", None) or self.given_layout

    def __getitem__(self, key: object) -> object:
        return self._impl[key]

    def __setitem__(self, key: object, value: object) -> None:
        self._impl[key] = value

    def to_numpy(
        self, dtype: npt.DTypeLike | None = None, *, copy: bool | None = True
    ) -> np.ndarray:
        out = self._impl.to_numpy()
        return out if dtype is None else out.astype(dtype)

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
        return getattr(self._impl, "grad", None) is not None

    @cached_property
    def grad(self) -> Tensor | None:
        g = getattr(self._impl, "grad", None)
        return None if g is None else wrap(g)

    def __reduce__(self) -> tuple:
        data = self.to_numpy()
        return (_rebuild, (type(self), self._backend(), self.dtype, self.shape, data, self.layout))


class VectorTensor(Tensor):
    """A `Tensor` of vectors (`qd.Vector.tensor(n, dtype, shape)`)."""

    @property
    def n(self) -> int:
        return self.element_shape[0]

    @property
    def element_shape(self) -> tuple[int, ...]:
        return element_of(self._impl)


class MatrixTensor(VectorTensor):
    """A `Tensor` of matrices (`qd.Matrix.tensor(n, m, dtype, shape)`)."""

    @property
    def m(self) -> int:
        return self.element_shape[1]


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


ACCEPTED = ("backend", "dtype", "layout", "needs_grad", "shape")


def tensor(
    dtype: object,
    shape: int | tuple[int, ...] | list[int],
    *,
    backend: Backend = Backend.NDARRAY,
    layout: Sequence[int] | None = None,
    **kwargs: object,
) -> Tensor:
    """`qd.tensor(dtype, shape, backend=qd.Backend.NDARRAY | FIELD, needs_grad=False)`."""
    unknown = sorted(set(kwargs) - {"needs_grad"})
    if unknown:
        raise TypeError(
            f"qd.tensor() got unexpected keyword argument(s) {unknown}; accepted: "
            f"{', '.join(ACCEPTED)}"
        )
    dims = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    order = None if layout is None else _layout(layout, dims, dtype)
    needs_grad = bool(kwargs.get("needs_grad", False))
    try:
        backend = Backend(backend)
    except ValueError:
        raise ValueError(
            f"qd.tensor(backend={backend!r}): use qd.Backend.NDARRAY or FIELD"
        ) from None
    if backend is Backend.FIELD:  # a field's storage order is qdlab's own: every value the same
        out = wrap(field(dtype, shape=shape, needs_grad=needs_grad))
        out.given_layout = order
        return out
    if order is None:
        return wrap(ndarray(dtype, dims, needs_grad=needs_grad))
    arr = ndarray(dtype, tuple(dims[a] for a in order), needs_grad=needs_grad)  # memory's order
    if type(arr) not in (Ndarray, ScalarNdarray):
        raise NotImplementedError(
            f"qd.tensor(layout={order!r}) on the GPU: qdlab lays out host ndarrays only."
        )
    arr.set_layout(order)
    return wrap(arr)


def _layout(layout: Sequence[int], dims: tuple, dtype: object) -> tuple[int, ...] | None:
    """A `layout=` as a permutation of the axes (None for the identity), checked as the
    reference checks it."""
    if isinstance(dtype, matrix.MatrixType):
        raise TypeError(
            "layout= is not supported with compound dtypes (vector/matrix). "
            "Use qd.Vector.tensor(...) or qd.Matrix.tensor(...) without layout= instead."
        )
    order = tuple(layout)
    if len(order) != len(dims):
        raise ValueError(
            f"layout has {len(order)} entries but shape has {len(dims)} dimensions; they must match"
        )
    if sorted(order) != list(range(len(dims))):
        raise ValueError(f"layout={order!r} is not a permutation of range({len(dims)})")
    return None if order == tuple(range(len(dims))) else order


def _rebuild(
    cls: type,
    backend: Backend,
    dtype: object,
    shape: tuple,
    data: np.ndarray,
    layout: Sequence[int] | None = None,
) -> Tensor:
    out = tensor(dtype, shape, backend=backend, layout=layout)
    out.from_numpy(data)
    return out


matrix.tensor_maker = tensor
