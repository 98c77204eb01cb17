"""`qd.BufferView`: a view of the sub-range `[offset, offset + size)` of a 1-D ndarray, as Quadrants
has it. On the host: `data[a:b]` (a slice of a 1-D ndarray, step 1, negative bounds as Python's),
`qd.BufferView(data, offset, size)`, `view[a:b]` and `view.subview(offset, size)` (relative to the
view), each checked against what it views; `view.offset`, `.size`, `.shape`, `.get_ndarray()`.

A kernel parameter annotated `BufferView` or `BufferView[dtype]` takes one: it is a dataclass of
three members (`arr`, `offset`, `size`), so a launch passes them as a struct argument's members
(`struct_args.py`) and the frontend reads them as a view (`compiler/frontend/views.py`: `v[i]` is
`arr[offset + i]`, `v.size`, `v.subview`, `v[a:b]`, `BufferView(arr, off, n)` in a kernel, and
under `debug=True` Quadrants' range checks). `BufferView[dtype]` is the subclass whose `arr` is
typed `NDArray[dtype, 1]` (one per dtype).
"""

import dataclasses
from typing import ClassVar

from ..core.language import ArrayAnnotation, MatrixType
from ..core.types import DType

_TYPED: dict[object, type] = {}


class _ViewType(type):
    """`isinstance(view, BufferView[qd.f32])` holds for every view: the element type is checked
    where the view is passed, by the typed class's `arr` annotation."""

    def __instancecheck__(cls, obj: object) -> bool:
        return type.__instancecheck__(BufferView, obj)


@dataclasses.dataclass(init=False, eq=False)
class BufferView(metaclass=_ViewType):
    """A view of `arr[offset : offset + size]` (see the module's docstring)."""

    __qd_buffer_view__: ClassVar[bool] = True  # what the frontend recognises a view by
    arr: object  # annotated `NDArray[None, 1]` below: typed by its instance
    offset: int
    size: int

    def __class_getitem__(cls, dtype: object) -> type:
        """`BufferView[qd.f32]`: a parameter annotation that also checks the element type."""
        if isinstance(dtype, tuple):
            dtype = dtype[0]
        if not isinstance(dtype, (DType, MatrixType)):
            raise TypeError(f"BufferView[...] takes an element type such as qd.f32, not {dtype!r}")
        typed = _TYPED.get(dtype)
        if typed is None:
            name = f"BufferView[{dtype}]"
            typed = dataclasses.make_dataclass(
                name,
                [("arr", ArrayAnnotation(dtype, 1))],
                bases=(BufferView,),
                init=False,
                eq=False,
            )
            typed.__qualname__ = name
            typed.__module__ = __name__
            setattr(typed, "dtype", dtype)  # noqa: B010 - as Quadrants' BufferViewType has it
            _TYPED[dtype] = typed
        return typed

    def __init__(self, arr: object, offset: int, size: int) -> None:
        offset, size = int(offset), int(size)
        if isinstance(arr, BufferView):
            raise TypeError(
                "Cannot nest BufferView(view, ...); use view.subview(offset, size) instead"
            )
        if getattr(arr, "grad", None) is not None:
            raise TypeError("BufferView does not support ndarrays with gradients (needs_grad=True)")
        shape = getattr(arr, "shape", None)
        if shape is not None:
            if len(shape) != 1:
                raise TypeError(f"BufferView requires a 1D ndarray, got shape {shape}")
            if offset < 0 or size < 0 or offset + size > shape[0]:
                raise ValueError(
                    f"BufferView out of range: offset={offset}, size={size}, ndarray "
                    f"length={shape[0]}"
                )
        self.arr = arr
        self.offset = offset
        self.size = size

    @property
    def shape(self) -> tuple[int]:
        return (self.size,)

    def subview(self, offset: int, size: int) -> "BufferView":
        """The view `[offset, offset + size)` of this view (offsets relative to its start)."""
        offset, size = int(offset), int(size)
        if offset < 0 or size < 0 or offset + size > self.size:
            raise ValueError(
                f"subview out of range: offset={offset}, size={size}, parent size={self.size}"
            )
        return BufferView(self.arr, self.offset + offset, size)

    def __getitem__(self, key: object) -> "BufferView":
        """`view[a:b]`: a subview (on the host a view is indexed by slices only)."""
        if not isinstance(key, slice):
            raise TypeError(
                f"BufferView host-side indexing requires a slice, got {type(key).__name__}"
            )
        return self.subview(*_slice_range(key, self.size))

    def get_ndarray(self) -> object:
        """The ndarray viewed."""
        return self.arr

    def __repr__(self) -> str:
        return f"BufferView({self.arr!r}, offset={self.offset}, size={self.size})"


BufferView.__annotations__["arr"] = ArrayAnnotation(None, 1)  # what a launch passes it as


def _slice_range(key: slice, length: int) -> tuple[int, int]:
    start, stop, step = key.indices(length)
    if step != 1:
        raise ValueError(f"BufferView slice requires step=1, got step={step}")
    return start, max(stop - start, 0)


def of_slice(arr: object, key: slice) -> BufferView:
    """`data[a:b]` of an ndarray."""
    shape = getattr(arr, "shape", ())
    if len(shape) != 1:
        raise TypeError(f"ndarray slice to BufferView requires a 1D array, got shape {shape}")
    return BufferView(arr, *_slice_range(key, shape[0]))
