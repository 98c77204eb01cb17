"""Dense layouts: `qd.root.dense(qd.ij, (4, 8)).place(x, y)`, nested `dense(...).dense(...)`,
`qd.FieldsBuilder`.

A dense SNode tree decides the shape of the fields it places: along each axis, the product of the
extents every level of the path gives that axis (`dense(qd.i, 4).dense(qd.i, 8)` is 32 along i).
qdlab stores each placed field as its own array of that shape, its axes in memory in the order the
levels give them (`dense(qd.j, 32).dense(qd.i, 16)` is column-major, as in the reference, so
`qd.get_addr` steps as there); a layout that splits an axis over levels with another between is
stored in axis order (the same values; `qd.get_addr` is refused on it). How the reference
interleaves fields placed together in memory is not reproduced. Sparse SNodes (`pointer`,
`bitmasked`, `dynamic`, `hash`), bit-level and quantised storage are refused by name."""

from __future__ import annotations

import math

from ..core.errors import QdRuntimeError, QdValueError
from .field import Field, MatrixMember, lazy_dual, lazy_grad, set_implicit_snode
from .struct_field import StructField


class Axes:
    """`qd.i`, `qd.ij`, `qd.axes(0, 2)`: the axes an SNode level spans."""

    def __init__(self, *axes: int) -> None:
        self.axes = tuple(int(a) for a in axes)

    def __repr__(self) -> str:
        return f"qd.axes{self.axes}"


def axes(*indices: int) -> Axes:
    return Axes(*indices)


i, j, k, l = Axes(0), Axes(1), Axes(2), Axes(3)
ij, ik, jk, ijk, ijkl = Axes(0, 1), Axes(0, 2), Axes(1, 2), Axes(0, 1, 2), Axes(0, 1, 2, 3)
il, jl, kl, ijl, ikl, jkl = (
    Axes(0, 3),
    Axes(1, 3),
    Axes(2, 3),
    Axes(0, 1, 3),
    Axes(0, 2, 3),
    Axes(1, 2, 3),
)

_SPARSE = {
    "pointer": "a pointer SNode (sparse)",
    "bitmasked": "a bitmasked SNode (sparse)",
    "dynamic": "a dynamic SNode",
    "hash": "a hash SNode (sparse)",
    "bit_struct": "a bit_struct SNode (quantised types)",
    "quant_array": "a quant_array SNode (quantised types)",
    "bit_array": "a bit_array SNode (quantised types)",
}


class SNode:
    """One level of a dense layout tree (the root has no axes)."""

    def __init__(self, parent: SNode | None, axes_: tuple[int, ...], extents: tuple[int, ...]):
        self._parent, self.axes, self.extents = parent, axes_, extents
        self.fields: list[Field] = []

    def dense(self, indices: object, dimensions: object) -> SNode:
        """A dense level under this one: `dimensions` (an int, or a one-entry sequence, for every
        axis, or one per axis)."""
        ax = indices.axes if isinstance(indices, Axes) else tuple(indices)  # type: ignore[arg-type]
        dims = (
            tuple(dimensions) if isinstance(dimensions, (tuple, list)) else (dimensions,) * len(ax)
        )
        if len(dims) == 1:  # `dense(qd.ij, (128,))`: one extent for every axis, as in Quadrants
            dims *= len(ax)
        ints = tuple(d for d in dims if isinstance(d, int) and not isinstance(d, bool) and d > 0)
        if len(dims) != len(ax) or len(ints) != len(dims):
            raise QdValueError(
                f"dense({indices!r}, {dimensions!r}): give one positive extent per axis."
            )
        return SNode(self, ax, ints)

    def __getattr__(self, name: str) -> object:
        if name in _SPARSE:

            def refuse(*args: object, **kwargs: object) -> object:
                raise QdRuntimeError(
                    f"qd.root.{name}(...): {_SPARSE[name]} is not supported in qdlab, which has "
                    "dense layouts only; use dense(...) (qd.field(dtype, shape) is one)."
                )

            return refuse
        raise AttributeError(name)

    def path(self) -> list[SNode]:
        out, node = [], self
        while node is not None:
            out.append(node)
            node = node._parent
        return out[::-1]

    def memory_order(self) -> tuple[tuple[int, ...] | None, bool]:
        """(the axis each axis of memory holds for a field placed here, outermost first, or None
        when that is axis order; whether an axis is split over levels with another between, which
        is no order of whole axes). `dense(qd.j, 32).dense(qd.i, 16)` is column-major: `(1, 0)`."""
        seq: list[int] = []
        for node in self.path():
            for a in node.axes:
                if seq and seq[-1] == a:
                    continue  # the same axis again right away: still one axis of memory
                if a in seq:
                    return None, True
                seq.append(a)
        used = sorted(seq)
        order = tuple(used.index(a) for a in seq)
        return (None if order == tuple(range(len(order))) else order), False

    def _physical_index_position(self) -> dict[int, int]:
        """The reference's map from a placed field's axes to the index space's (`qd.i` is 0,
        `qd.j` 1, ...), for the axes its levels use."""
        used = sorted({a for node in self.path() for a in node.axes})
        return dict(enumerate(used))

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of a field placed here."""
        ext: dict[int, int] = {}
        for node in self.path():
            for a, n in zip(node.axes, node.extents):
                ext[a] = ext.get(a, 1) * n
        return tuple(ext[a] for a in sorted(ext))  # the axes used, in axis order

    def place(self, *fields: object, offset: object = None, shape: object = None) -> SNode:
        """Give each field this level's shape (its gradient too); a field is placed once."""
        if offset is not None:
            raise QdValueError("place(..., offset=...) is not supported in qdlab; index from 0.")
        dims = self.shape
        if math.prod(dims) >= 2**31:
            raise QdValueError(f"a layout of shape {dims} has more than 2**31 - 1 elements.")
        flat = [g for f in fields for g in (f._leaves() if isinstance(f, StructField) else [f])]
        order, blocked = self.memory_order()
        for f in flat:
            if isinstance(f, MatrixMember):  # one entry's member of a matrix field
                f._place(dims, order, self, blocked)
                if f.owner.placed:
                    self.fields.append(f.owner)
                continue
            if not isinstance(f, Field):
                raise QdValueError(
                    f"place() takes fields made by qd.field(dtype) without a shape, not "
                    f"{type(f).__name__}."
                )
            f._place(dims, order, self, blocked)
            self.fields.append(f)
        return self

    def lazy_grad(self) -> None:
        """Allocate the gradient of every float field (those with `needs_grad=True` have one)."""
        lazy_grad()

    def lazy_dual(self) -> None:
        """Allocate the dual of every float field (forward mode: `qd.ad.FwdMode`)."""
        lazy_dual()

    def parent(self, n: int = 1) -> SNode | None:
        node: SNode | None = self
        for _ in range(n):
            node = node._parent if node is not None else None
        return node

    def deactivate_all(self) -> None:
        """Dense cells are always active; the reference zeroes them."""
        for node in [self]:
            for f in node.fields:
                f.fill(0)

    def __repr__(self) -> str:
        return f"<qd.SNode dense {self.shape}>" if self.axes else "<qd.root>"


def implicit(shape: tuple[int, ...]) -> SNode:
    """The dense level of a field made with `qd.field(dtype, shape)`: `qd.root.dense(qd.ij...,
    shape)`, in axis order."""
    return SNode(root, tuple(range(len(shape))), tuple(shape)) if shape else root


root = SNode(None, (), ())
set_implicit_snode(implicit)
"""`qd.root`: the top of every dense layout (each `dense(...)` call is a new branch)."""


class FieldsBuilder(SNode):
    """`qd.FieldsBuilder()`: a layout tree of its own; `finalize()` makes its fields usable."""

    def __init__(self) -> None:
        super().__init__(None, (), ())

    def finalize(self, raise_warning: bool = True) -> SNodeTree:
        return SNodeTree()


class SNodeTree:
    """What `FieldsBuilder.finalize()` gives; `destroy()` is accepted."""

    def destroy(self) -> None:
        pass


class Unsupported:
    """`qd.BitpackedFields`, `qd.Mesh`...: names of the reference that qdlab refuses, saying why."""

    def __init__(self, name: str, what: str) -> None:
        self.name, self.what = name, what

    def __call__(self, *args: object, **kwargs: object) -> object:
        raise QdRuntimeError(f"qd.{self.name}: {self.what} are not supported in qdlab.")

    def __getattr__(self, attr: str) -> object:
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise QdRuntimeError(f"qd.{self.name}.{attr}: {self.what} are not supported in qdlab.")


BitpackedFields = Unsupported("BitpackedFields", "bit-packed fields (quantised types)")
Mesh = Unsupported("Mesh", "meshes")
MeshInstance = Unsupported("MeshInstance", "meshes")
