"""Dense layouts: `qd.root.dense(qd.ij, (4, 8)).place(x, y)`, nested `dense(...).dense(...)`,
`qd.FieldsBuilder`.

A dense SNode tree decides the shape of the fields it places: along each axis, the product of the
extents every level of the path gives that axis (`dense(qd.i, 4).dense(qd.i, 8)` is 32 along i).
qdlab stores each placed field as its own array of that shape, its axes in memory in the order the
levels give them (`dense(qd.j, 32).dense(qd.i, 16)` is column-major, as in the reference, so
`qd.get_addr` steps as there); a layout that splits an axis over levels with another between is
stored in axis order (the same values; `qd.get_addr` is refused on it). How the reference
interleaves fields placed together in memory is not reproduced. Quantised fields are placed in
words by `qd.BitpackedFields` or under a `quant_array` level (`host/quant.py`).

Sparse levels (`pointer`, `bitmasked`, `dynamic`) keep their activity in a hidden field of their
own (`qdlab.core.sparse`): an i32 flag per cell, a bit per cell of a `bitmasked` one (u32 words), a
length per parent cell of a `dynamic` one. A
write activates its cell (and the levels above); deactivating a pointer or dynamic cell zero-fills
what it holds, a bitmasked one only clears its flag (its elements stay readable, as there).
`hash` and `bit_struct` / `bit_array` storage are refused by name."""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable
from typing import cast

import numpy as np

from ..core.errors import QdRuntimeError, QdValueError
from ..core.sparse import Level, Region, count_active, mask_shape
from ..core.types import i32, u32
from . import quant, snode_layout, state
from .field import Field, MemberField, lazy_dual, lazy_grad, set_implicit_snode, tree_id
from .struct_field import StructField

log = logging.getLogger("qdlab")


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
    "hash": "a hash SNode (sparse)",
    "bit_struct": "a bit_struct SNode (quantised types)",
    "bit_array": "a bit_array SNode (quantised types)",
}


_sparse_nodes: list[SNode] = []
"""Every sparse level made since the latest `qd.init` (`qd.deactivate_all_snodes()`)."""


class SNode:
    """One level of a layout tree (the root has no axes): `kind` is dense, pointer, bitmasked or
    dynamic."""

    def __init__(
        self,
        parent: SNode | None,
        axes_: tuple[int, ...],
        extents: tuple[int, ...],
        kind: str = "dense",
    ):
        self._parent, self.axes, self.extents, self.kind = parent, axes_, extents, kind
        self.fields: list[Field] = []
        self.quant_bits = 0
        """For a quant_array level: its words' bits."""
        self.children: list[SNode] = []
        self.members: list[tuple[int, int, object]] = []
        """(`qd.init` epoch, layout tree, item) of each level made under it and each thing placed
        in it, in order (`snode_layout.py`)."""
        self.mask: Field | None = None
        """A sparse level's activity: a flag per cell (a bit for a bitmasked one,
        `qdlab.core.sparse`), a dynamic one's length per parent cell."""
        self.epoch = state.epoch
        self.chunk_size = 0
        """A dynamic level's allocation unit (its extent unless given)."""
        self._tree = tree_id()
        self.allocated = 0
        """The most cells (a dynamic level's chunks) seen allocated at once (`_num_dynamically_
        allocated`): read at each query and before each `deactivate_all`."""
        if kind != "dense" and parent is not None:
            if kind == "bitmasked":
                self.mask = Field(u32, mask_shape(self.shape, self._own()), name="<bitmask>")
            else:
                cells = parent.shape if kind == "dynamic" else self.shape
                self.mask = Field(i32, cells, name=f"<{kind} activity>")
            if not any(n.epoch == state.epoch for n in _sparse_nodes[-1:]):
                _sparse_nodes.clear()  # those of an earlier `qd.init` are gone with their fields
            _sparse_nodes.append(self)

    def dense(self, indices: object, dimensions: object) -> SNode:
        """A dense level under this one: `dimensions` (an int, or a one-entry sequence, for every
        axis, or one per axis)."""
        return self._child("dense", indices, dimensions)

    def pointer(self, indices: object, dimensions: object) -> SNode:
        """A pointer level: a write to a cell activates it (its block, zero-filled)."""
        return self._child("pointer", indices, dimensions)

    def bitmasked(self, indices: object, dimensions: object) -> SNode:
        """A bitmasked level: one activity flag per cell."""
        return self._child("bitmasked", indices, dimensions)

    def dynamic(self, index: object, dimension: object, chunk_size: object = None) -> SNode:
        """A dynamic level along one axis: a length per parent cell, grown by `qd.append` or a
        write (`chunk_size` is the reference's allocation unit; it changes no value)."""
        ax = index.axes if isinstance(index, Axes) else tuple(cast("Iterable[int]", index))
        if len(ax) != 1:
            raise QdValueError(f"dynamic({index!r}, ...) takes one axis.")
        if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
            raise QdValueError(f"dynamic(..., chunk_size={chunk_size!r}): give a positive int.")
        node = self._child("dynamic", index, dimension)
        node.chunk_size = chunk_size if isinstance(chunk_size, int) else node.extents[0]
        return node

    def _child(self, kind: str, indices: object, dimensions: object) -> SNode:
        ax = indices.axes if isinstance(indices, Axes) else tuple(indices)  # type: ignore[arg-type]
        dims = (
            tuple(dimensions) if isinstance(dimensions, (tuple, list)) else (dimensions,) * len(ax)
        )
        if len(dims) == 1:  # `dense(qd.ij, (128,))`: one extent for every axis, as in Quadrants
            dims *= len(ax)
        ints = tuple(d for d in dims if isinstance(d, int) and not isinstance(d, bool) and d > 0)
        if len(dims) != len(ax) or len(ints) != len(dims):
            raise QdValueError(
                f"{kind}({indices!r}, {dimensions!r}): give one positive extent per axis."
            )
        node = SNode(self, ax, ints, kind)
        self.children = [c for c in self.children if c.epoch == state.epoch] + [node]
        self.members.append((state.epoch, tree_id(), node))
        return node

    def quant_array(self, indices: object, dimensions: object, max_num_bits: int) -> SNode:
        """A level whose cells' elements are packed into one word of the level above
        (`host/quant.py`): place one quantised field under it."""
        level = self.dense(indices, dimensions)
        level.quant_bits = max_num_bits
        return level

    def __getattr__(self, name: str) -> object:
        if name in _SPARSE:

            def refuse(*args: object, **kwargs: object) -> object:
                raise QdRuntimeError(
                    f"qd.root.{name}(...): {_SPARSE[name]} is not supported in qdlab, which has "
                    "dense layouts only; use dense(...) (qd.field(dtype, shape) is one)."
                )

            return refuse
        raise AttributeError(name)

    def _path(self) -> list[SNode]:
        out, node = [], self
        while node is not None:
            out.append(node)
            node = node._parent
        return out[::-1]

    def _memory_order(self) -> tuple[tuple[int, ...] | None, bool]:
        """(the axis each axis of memory holds for a field placed here, outermost first, or None
        when that is axis order; whether an axis is split over levels with another between, which
        is no order of whole axes). `dense(qd.j, 32).dense(qd.i, 16)` is column-major: `(1, 0)`."""
        seq: list[int] = []
        for node in self._path():
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
        used = sorted({a for node in self._path() for a in node.axes})
        return dict(enumerate(used))

    def _extents_by_axis(self) -> dict[int, int]:
        """Per axis used on the path to this level, the product of the path's extents."""
        ext: dict[int, int] = {}
        for node in self._path():
            for a, n in zip(node.axes, node.extents):
                ext[a] = ext.get(a, 1) * n
        return ext

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of a field placed here."""
        ext = self._extents_by_axis()
        return tuple(ext[a] for a in sorted(ext))  # the axes used, in axis order

    def _own(self) -> tuple[int, ...]:
        """Its own extent per axis of its cells (those of `shape`): 1 along an axis it does not
        split."""
        ext = dict.fromkeys(self._extents_by_axis(), 1)
        for a, n in zip(self.axes, self.extents):
            ext[a] *= n
        return tuple(ext[a] for a in sorted(ext))

    def _activity(self) -> tuple[Level, ...]:
        """The sparse levels on the path to this one (itself included), each mapped from this
        level's index space (its `shape`): what says whether an index here is active."""
        mine = self._extents_by_axis()
        axes_ = sorted(mine)
        out = []
        for node in self._path():
            if node.mask is None:
                continue
            theirs = (node.parent() or node)._extents_by_axis() if node.kind == "dynamic" else None
            ext = theirs if theirs is not None else node._extents_by_axis()
            cell = tuple((axes_.index(a), mine[a] // ext[a]) for a in sorted(ext))
            dyn = None
            if node.kind == "dynamic":
                a, full = node.axes[0], node._extents_by_axis()
                dyn = (axes_.index(a), mine[a] // full[a])
            own = node._own() if node.kind == "bitmasked" else ()
            out.append(Level(node.kind, node.mask, f"{node.kind}_activity", cell, dyn, own))
        return tuple(out)

    @property
    def _snode_tree_id(self) -> int:
        """The SNode tree it belongs to: that of the first field placed in it or below (the
        fields made before a launch form one tree), else its own."""
        for node in self._subtree():
            for f in node.fields:
                return f._tree_id
        return self._tree

    def _subtree(self) -> list[SNode]:
        out: list[SNode] = []
        todo: list[SNode] = [self]
        while todo:
            node = todo.pop()
            out.append(node)
            todo.extend(node.children)
        return out

    def _regions(self) -> list[Region]:
        """What deactivating one cell of this level zero-fills, as Quadrants frees it: for a
        pointer or dynamic level, the elements of every field placed in it or below and the
        activity of every sparse level below (a dynamic level's cell is its parent's: its whole
        length); for a bitmasked level nothing (only its flag is cleared: the elements stay, as
        a kernel's or `x[i]`'s read of them shows)."""
        if self.kind == "bitmasked":
            return []
        mine = ((self._parent or self) if self.kind == "dynamic" else self)._extents_by_axis()
        axes_ = sorted(mine)
        out = []
        for node in self._subtree():
            arrays: list[tuple[Field, dict[int, int], str]] = [
                (f, node._extents_by_axis(), f.name or "field") for f in node.fields
            ]
            words: tuple[tuple[int, int], ...] = ()
            if node is not self and node.mask is not None:
                cells = node.parent() if node.kind == "dynamic" else node
                ext = (cells or node)._extents_by_axis()
                if node.kind == "bitmasked":  # its words per parent cell, whole
                    ext = {a: n // o for (a, n), o in zip(sorted(ext.items()), node._own())}
                    words = ((-1, cast(Field, node.mask).shape[-1]),)
                arrays.append((node.mask, ext, f"{node.kind}_mask"))
            for f, ext, name in arrays:
                axes_spec = tuple(
                    (axes_.index(a), ext[a] // mine[a]) if a in mine else (-1, ext[a])
                    for a in sorted(ext)
                )
                out.append(Region(f, name, axes_spec + (words if f is node.mask else ())))
        return out

    def place(self, *fields: object, offset: object = None, shape: object = None) -> SNode:
        """Give each field this level's shape (its gradient too); a field is placed once."""
        dims = self.shape
        off = None
        if offset is not None:  # the index of the first element along each axis
            off = tuple(offset) if isinstance(offset, (tuple, list)) else (offset,) * len(dims)
            if len(off) != len(dims) or not all(
                isinstance(o, int) and not isinstance(o, bool) for o in off
            ):
                raise QdValueError(
                    f"place(..., offset={offset!r}): give one integer per axis of {dims}."
                )
        if math.prod(dims) >= 2**31:
            raise QdValueError(f"a layout of shape {dims} has more than 2**31 - 1 elements.")
        flat = [g for f in fields for g in (f._leaves() if isinstance(f, StructField) else [f])]
        order, blocked = self._memory_order()
        if self.quant_bits:  # a quant_array level
            parent = self._parent
            assert parent is not None
            ext = dict(zip(self.axes, self.extents))
            used = sorted({a for node in self._path() for a in node.axes})
            extents = tuple(ext.get(a, 1) for a in used)
            above = {a for node in parent._path() for a in node.axes}
            kept = tuple(a in above for a in used)
            quant.place_quant_array(self, parent.shape, dims, extents, kept, self.quant_bits, flat)
            self.fields.extend(f for f in flat if isinstance(f, Field))
            return self
        for f in flat:
            if isinstance(f, quant.BitpackedFields):
                f._place(self, dims, order, blocked)
                self.fields.extend(g for g, _, _ in f.fields if g.placed and g not in self.fields)
                continue
            if isinstance(f, MemberField):  # one entry's member of a matrix field
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
            if off is not None and any(off):
                for g in (f, f.grad, f.dual):
                    if g is not None:
                        g.given_offset = cast("tuple[int, ...]", off)
            self.fields.append(f)
        self.members.extend((state.epoch, tree_id(), f) for f in flat)
        return self

    def lazy_grad(self) -> None:
        """Allocate the gradient of every float field (those with `needs_grad=True` have one)."""
        lazy_grad()

    def lazy_dual(self) -> None:
        """Allocate the dual of every float field (forward mode: `qd.ad.FwdMode`)."""
        lazy_dual()

    @property
    def _cell_size_bytes(self) -> int:
        """The bytes of one of its cells in Quadrants' layout (`snode_layout.py`)."""
        return snode_layout.cell_size_bytes(self)

    @property
    def _offset_bytes_in_parent_cell(self) -> int:
        """Where it starts in a cell of its parent, in Quadrants' layout."""
        return snode_layout.offset_bytes_in_parent_cell(self._parent, self)

    def _offset_of(self, member: object) -> int:
        """Where `member` (a level under it, a field placed in it) starts in one of its cells."""
        return snode_layout.offset_bytes_in_parent_cell(self, member)

    def _get_children(self) -> list[object]:
        """The levels under it and the place nodes of the fields placed in it."""
        levels = [c for c in self.children if c.epoch == state.epoch]
        return [*levels, *(f.snode for f in self.fields)]

    def _path_from_root(self) -> list[SNode]:
        return self._path()

    def parent(self, n: int = 1) -> SNode | None:
        node: SNode | None = self
        for _ in range(n):
            node = node._parent if node is not None else None
        return node

    def deactivate_all(self) -> None:
        """Deactivate every cell of the sparse levels here and below, zero-filling what they
        hold; a layout with no sparse level has its own fields zeroed."""
        sparse = [n for n in self._subtree() if n.mask is not None]
        if not sparse:
            for f in self.fields:
                f.fill(0)
            return
        for node in sparse:
            node._observe()
            if node.kind != "bitmasked":  # freed: what it holds is zero-filled
                for f in node._subtree_fields():
                    f._clear()
            assert node.mask is not None
            node.mask._clear()

    @property
    def _num_dynamically_allocated(self) -> int:
        """Quadrants' count of the cells (a dynamic level's chunks) its allocator ever handed
        out, freed ones being reused: here the most seen active at once, when asked and before
        each `deactivate_all()` (an inactive cell stays counted, as there)."""
        self._observe()
        return self.allocated

    def _observe(self) -> None:
        if self.mask is None:
            return
        counts = np.asarray(self.mask.to_numpy())
        if self.kind == "bitmasked":
            now = count_active(counts)
        elif self.kind == "dynamic":
            now = int((-(-counts // max(1, self.chunk_size))).sum())
        else:
            now = int(np.count_nonzero(counts))
        self.allocated = max(self.allocated, now)

    def _subtree_fields(self) -> list[Field]:
        return [f for node in self._subtree() for f in node.fields]

    def __repr__(self) -> str:
        return f"<qd.SNode {self.kind} {self.shape}>" if self.axes else "<qd.root>"

    def __str__(self) -> str:
        if self._parent is None:
            return "qd.root"
        return f"{self._parent} => {self.kind} {list(self.shape)}"


def implicit(shape: tuple[int, ...]) -> SNode:
    """The dense level of a field made with `qd.field(dtype, shape)`: `qd.root.dense(qd.ij...,
    shape)`, in axis order."""
    return SNode(root, tuple(range(len(shape))), tuple(shape)) if shape else root


root = SNode(None, (), ())
set_implicit_snode(implicit)
"""`qd.root`: the top of every layout (each `dense(...)` call is a new branch)."""


def deactivate_all_snodes() -> None:
    """`qd.deactivate_all_snodes()`: every sparse level's cells deactivated (zero-filled)."""
    for node in _sparse_nodes:
        if node.epoch == state.epoch:
            node.deactivate_all()


class FieldsBuilder:
    """`qd.FieldsBuilder()`: a layout tree of its own under `root`, built with the SNode calls
    until `finalize()`, after which it takes no more levels (a later call is an error)."""

    @staticmethod
    def _finalized_roots() -> list[SNode]:
        """The roots of the trees finalized so far: in qdlab every tree hangs under `qd.root`."""
        return [root]

    def __init__(self) -> None:
        self.root = SNode(None, (), ())
        self.finalized = False
        self.empty = True

    def _grow(self) -> SNode:
        """The root, for one more level or field: refused once finalised."""
        if self.finalized:
            raise QdRuntimeError("FieldsBuilder finalized: it takes no more levels or fields.")
        self.empty = False
        return self.root

    def dense(self, indices: object, dimensions: object) -> SNode:
        return self._grow().dense(indices, dimensions)

    def pointer(self, indices: object, dimensions: object) -> SNode:
        return self._grow().pointer(indices, dimensions)

    def bitmasked(self, indices: object, dimensions: object) -> SNode:
        return self._grow().bitmasked(indices, dimensions)

    def dynamic(self, index: object, dimension: object, chunk_size: object = None) -> SNode:
        return self._grow().dynamic(index, dimension, chunk_size)

    def quant_array(self, indices: object, dimensions: object, max_num_bits: int) -> SNode:
        return self._grow().quant_array(indices, dimensions, max_num_bits)

    def place(self, *fields: object, offset: object = None) -> None:
        self._grow().place(*fields, offset=offset)

    def lazy_grad(self) -> None:
        self._grow().lazy_grad()

    def lazy_dual(self) -> None:
        self._grow().lazy_dual()

    def deactivate_all(self) -> None:
        """Deactivate every sparse cell of the tree (nothing before `finalize()`)."""
        if not self.finalized:
            log.warning("FieldsBuilder.deactivate_all() does nothing before finalize().")
            return
        self.root.deactivate_all()

    def finalize(self, raise_warning: bool = True) -> SNodeTree:
        if self.finalized:
            raise QdRuntimeError("FieldsBuilder finalized: finalize() is called once.")
        if self.empty and raise_warning:
            log.warning("Finalizing an empty FieldsBuilder.")
        self.finalized = True
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


BitpackedFields = quant.BitpackedFields
Mesh = Unsupported("Mesh", "meshes")
MeshInstance = Unsupported("MeshInstance", "meshes")
