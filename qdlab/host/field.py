"""Fields: `qd.field(dtype, shape)`, `qd.Vector.field(n, dtype, shape)`, `qd.Matrix.field(n, m,
dtype, shape)`, `qd.field(vec3, shape)`, with `needs_grad=True` a `.grad` field of the same shape.

A field is a global, zero-initialised array owned by qdlab. Its storage is allocated on first use
(a kernel launch that reads it, or host access) and never moves, so a kernel that uses it gets it as
a hidden array parameter whose launch words (data and gradient pointers, extents) are read once,
when the kernel's variant is compiled. `qd.init()` and `qd.reset()` drop every field made before
them. Layouts made with `qd.root.dense(...)` (`qdlab.host.snode`) decide the shape of the fields
they place."""

from __future__ import annotations

import itertools
import math
import os
import sys
import types
import uuid
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple, cast

import numpy as np

from ..compiler.runtime import cuda as cuda_runtime
from ..core import matrix
from ..core.errors import (
    QdCompileValueError,
    QdIndexError,
    QdRuntimeError,
    QdSyntaxError,
    QdValueError,
)
from ..core.fields import MAX_NUM_INDICES, FieldBase, Layout, SNodeGradType
from ..core.sparse import Level, flags, locate
from ..core.types import DType, from_numpy, u1
from . import pyquadrants, state, torch_bridge
from .launch import Storage, TorchTensor, array_launch, zeros
from .ndarray import shape_items

if TYPE_CHECKING:
    from .quant import QuantInfo
    from .snode import SNode

TOKEN = uuid.uuid4().hex[:12]
"""Names this process in field fingerprints: a field is never taken for one of another process."""
_uids = itertools.count()
SLACK = 4096
"""Elements allocated past a field's storage (bounds checks off): a kernel that writes a little
past its field corrupts nothing but that slack."""
_live: weakref.WeakSet = weakref.WeakSet()
"""Every field made since the latest `qd.init` (a Tape clears their gradients)."""
_tree = {"epoch": -1, "id": 0, "open": False}
"""The SNode tree fields made now join (`SNode._snode_tree_id`): as in Quadrants, the fields
made before the first launch or host access form tree 0, and each batch made after one the next
tree."""


def tree_id() -> int:
    """The tree a field or SNode made now belongs to."""
    if _tree["epoch"] != state.epoch:
        _tree.update(epoch=state.epoch, id=0, open=False)
    _tree["open"] = True
    return _tree["id"]


def live_fields() -> list[Field]:
    """The fields alive now, of every `qd.init` (check `epoch`)."""
    return list(_live)


def close_tree() -> None:
    """End the layout tree being built: what is made from here on belongs to the next one."""
    if _tree["open"] and _tree["epoch"] == state.epoch:
        _tree.update(id=_tree["id"] + 1, open=False)


class Field(FieldBase):
    """A dense field: `shape` outer axes of elements of shape `element` (`()` for scalars)."""

    _quant: QuantInfo | None = None
    """A quantised field's type and slots (`host/quant.py`): its elements live in words."""
    _soa_given = False
    """Made with `layout=qd.Layout.SOA`, or placed entry by entry (`get_scalar_field`)."""

    def __init__(
        self,
        dtype: DType,
        shape: tuple[int, ...] | None,
        element: tuple[int, ...] = (),
        needs_grad: bool = False,
        name: str = "",
        primal: Field | None = None,
        offset: tuple[int, ...] | None = None,
        needs_dual: bool = False,
        dual_of: Field | None = None,
    ) -> None:
        self._dtype, self.element, self.name = dtype, element, name
        if element:  # Quadrants' matrix fields have these instance attributes (a vector: m = 1)
            self.n, self.m, self.ndim = (
                element[0],
                element[1] if len(element) == 2 else 1,
                len(element),
            )
        self.given_offset = offset
        """The index of its first element along each axis (`qd.field(..., offset=(-4, 2))`)."""
        self.active = primal is None or needs_grad
        """A gradient field is allocated only with `needs_grad=True` or `qd.root.lazy_grad()`."""
        self.primal: Field | None = primal  # type: ignore[assignment]
        self.epoch = state.epoch
        self.uid = next(_uids)
        self.key = ("field", TOKEN, self.uid)
        self._tree_id = tree_id()
        """What tells this field apart as a template argument: one specialisation per field."""
        self._shape = shape
        self.placed = shape is not None
        """Placed: made with a shape, by `place()`, or (a gradient or dual) with its field's
        shape, by `place(x.grad)` or `lazy_grad()` / `lazy_dual()`; Quadrants' materialize check
        reads it (`check_declared`)."""
        self.member_shapes: dict[tuple[int, ...], tuple] = {}
        """A matrix field placed member by member (`get_scalar_field`): each member's placement."""
        self._arr: Storage = None
        self._order: tuple[int, ...] | None = None
        """The axis each axis of memory holds, outermost first, from its dense layout
        (`_memory_layout`)."""
        self._order_given = False
        """Its order came from `qd.field(..., order=...)` (the layout tag Quadrants reports)."""
        self._snode: object = None
        self._checkbits: np.ndarray | None = None
        self.blocked = False
        """Its layout splits an axis over levels with another between (`dense(qd.i, 4).dense(qd.j,
        4).dense(qd.i, 2)`): stored row-major here, so no address of it is the reference's."""
        _live.add(self)
        self.dual_of = dual_of
        """The field whose dual this is (`x.dual`: a field of its own, its shape and layout
        `x`'s)."""
        if dual_of is not None:
            self.active = needs_dual
        own = primal is None and dual_of is None and dtype.is_float
        self.grad: Field | None = (  # type: ignore[assignment]
            type(self)(
                dtype, None, element, needs_grad, f"{name}.grad" if name else "", self, offset
            )
            if own
            else None
        )  # a float field always has one, allocated with needs_grad=True or by lazy_grad()
        self.dual: Field | None = (
            type(self)(
                dtype,
                None,
                element,
                False,
                f"{name}.dual" if name else "",
                None,
                offset,
                needs_dual,
                self,
            )
            if own
            else None
        )  # and a dual, allocated with needs_dual=True or by lazy_dual() (forward mode)

    # -- what a kernel needs -----------------------------------------------------------------------
    @property
    def dtype(self) -> DType:
        """The scalar type of its elements (a vector field's entries' type)."""
        return self._dtype

    def has_grad(self) -> bool:
        """Whether its gradient is allocated (`needs_grad=True`, `qd.root.lazy_grad()`,
        `place(x.grad)`): a method, as in Quadrants."""
        return self.grad is not None and self.grad.active

    def has_dual(self) -> bool:
        """Whether its dual is allocated (forward mode reads and writes it): a method, as in
        Quadrants."""
        return self.dual is not None and self.dual.active

    def parent(self, n: int = 1) -> object:
        """The SNode `n` levels above its place, as in Quadrants: for `qd.field(shape=...)`, 1 is
        its dense level, 2 `qd.root`; past the root, None."""
        placed = self.snode
        return placed if n <= 0 else cast("SNode", placed.level).parent(n - 1)

    @property
    def _index_offset(self) -> tuple[int, ...]:
        return self.given_offset or (0,) * len(self.shape)

    def _dims(self) -> tuple[int, ...] | None:
        if self.dual_of is not None:
            return self.dual_of._shape
        return self.primal._shape if self.primal is not None else self._shape

    @property
    def shape(self) -> tuple[int, ...]:
        dims = self._dims()
        if dims is None:
            raise QdRuntimeError(_NOT_PLACED)
        return dims

    def _unusable(self) -> str | None:
        if self.epoch != state.epoch:
            return "it was made before the latest qd.init() / qd.reset(), which dropped it"
        if self._dims() is None or not self.active or not self.placed:
            return _NOT_PLACED  # a gradient or dual is placed of its own (`place(x.grad)`)
        return None

    def _place(
        self,
        shape: tuple[int, ...],
        order: tuple[int, ...] | None = None,
        snode: object = None,
        blocked: bool = False,
    ) -> None:
        """Give an unplaced field (and its gradient) its shape: `qd.root.dense(...).place(x)`, in
        the memory order of its layout (`order`: see `layout`); placing a gradient (`place(x,
        x.grad)`) allocates it."""
        if self.primal is not None or self.dual_of is not None:
            self.active = self.placed = True
            return
        if self._shape is not None:
            raise QdRuntimeError(
                f"field {self._label()} is already placed (it has shape {self._shape})."
            )
        self._shape, self._order, self._snode, self.blocked = shape, order, snode, blocked
        self.placed = True

    @property
    def _memory_layout(self) -> tuple[int, ...] | None:
        """Memory axis p holds axis `_memory_layout[p]` (a column-major `qd.root.dense(qd.j,
        m).dense(qd.i, n)` is `(1, 0)`), as the reference lays it out; None: row-major. Kernels
        index it through its type (`ArrayType.layout`); on the host the storage is a view in axis
        order. On the GPU qdlab stores every field row-major (the same values; `qd.get_addr` is
        refused there)."""
        f = self.primal or self.dual_of or self
        if f._order is None or state.config().arch == "cuda":
            return None
        return f._order

    @property
    def _soa(self) -> bool:
        """A vector or matrix field stored entry by entry (`layout=qd.Layout.SOA`): all the first
        entries, then all the second ones..., as the reference stores it; its entries are still
        the last axes of every host view. On the GPU qdlab stores them element by element."""
        f = self.primal or self.dual_of or self
        return bool(f.element) and f._soa_given and state.config().arch != "cuda"

    @property
    def layout(self) -> tuple[int, ...] | None:
        """The layout tag, as Quadrants reports it: the axis permutation `qd.field(...,
        order="ji")` or `qd.tensor(..., layout=...)` gave (`(1, 0)`), else None (a field placed
        by a column-major `qd.root.dense(...)` layout too: that order is its memory's only)."""
        f = self.primal or self.dual_of or self
        return self._memory_layout if f._order_given else None

    @property
    def _qd_layout(self) -> tuple[int, ...] | None:
        """Quadrants' name for the layout tag, which its programs read."""
        return self.layout

    @property
    def snode(self) -> PlacedSNode:
        """`x.snode`: the dense level it is placed in (one of its own for `qd.field(shape=...)`),
        seen from this field (`x.snode.ptr` answers for its own place)."""
        f = self.primal or self.dual_of or self
        if f._snode is None:
            f._snode = implicit_snode(f.shape)
        return PlacedSNode(self, f._snode)

    @property
    def _sparse_levels(self) -> tuple[Level, ...]:
        """The sparse levels above its elements (none for a dense layout): what a kernel's write
        activates and its struct-for tests (`qdlab.core.sparse`)."""
        f = self.primal or self.dual_of or self
        level = f._snode
        return cast("SNode", level)._activity() if level is not None else ()

    def _active_cells(self) -> np.ndarray | None:
        """Per element, whether its cell is active (None: a dense layout, all are)."""
        levels = self._sparse_levels
        if not levels:
            return None
        shape = self.shape
        out = np.ones(shape, bool)
        for lv in levels:
            mask = np.asarray(cast(Field, lv.mask).to_numpy())
            if lv.own:
                mask = flags(lv, mask)
            grids = np.indices(shape, sparse=True)
            cell = tuple(grids[p] // d for p, d in lv.cell)
            cells = mask[cell] if cell else np.broadcast_to(mask, shape)
            if lv.dyn is not None:
                p, d = lv.dyn
                out &= grids[p] // d < cells
            else:
                out &= cells != 0
        return out

    def _activate_at(self, key: tuple[int, ...]) -> None:
        """A host write to element `key` (counted from 0) activates its cell's levels."""
        for lv in self._sparse_levels:
            mask = lv.mask
            assert isinstance(mask, Field)
            cell = tuple(key[p] // d for p, d in lv.cell)
            new = 1
            if lv.own:  # its bit in a word
                word, bit = locate(lv, cell)
                mask[word] = int(mask._host()[word]) | bit
                continue
            if lv.dyn is not None:
                p, d = lv.dyn
                new = max(int(mask._host()[cell]), key[p] // d + 1)
            mask[cell or None] = new

    def _clear(self) -> None:
        """Zero every element, active or not (a deactivation's zero-fill)."""
        arr = self._storage()
        if isinstance(arr, np.ndarray):
            arr[...] = 0
        else:
            arr.set(np.zeros(arr.shape, self.dtype.np))

    def _only_active(self, array: np.ndarray, other: np.ndarray | int | None = None) -> np.ndarray:
        """`array` where the cells are active, `other` (by default the elements now) elsewhere:
        a bulk write of a sparse field (`fill`, `from_numpy`) writes its active cells only, and
        `to_numpy` reads zeros for the inactive ones, as Quadrants' struct-fors do."""
        active = self._active_cells()
        if active is None:
            return array
        kept = self._host().copy() if other is None else other
        return np.where(active.reshape(active.shape + (1,) * len(self.element)), array, kept)

    def _storage(self) -> Storage:
        """The array that holds the elements (outer shape, then the element's), allocated on first
        use: host memory, or the GPU's under `qd.init(arch=qd.cuda)`. Every host access comes
        through here, after the runtime's `materialize()` hook."""
        pyquadrants.current.materialize()
        if self._quant is not None:  # its elements are bits of words: a decoded copy, to read
            return quant_host().to_numpy(self)
        if self._arr is None:
            why = self._unusable()
            if why is not None:
                raise QdRuntimeError(f"field {self._label()}: {why}.")
            order = self._memory_layout or tuple(range(len(self.shape)))
            dims = tuple(self.shape[a] for a in order)  # memory's order
            if state.config().arch == "cuda" and cuda_runtime.available():
                self._arr = cuda_runtime.require().zeros(self.shape + self.element, self.dtype.np)
                return self._arr
            lead, trail = (self.element, ()) if self._soa else ((), self.element)
            if state.config().bounds_checks:  # an index past the shape is caught, as there
                arr = zeros(lead + dims + trail, self.dtype.np)
            else:  # packed row-major, as Quadrants' dense layout is (an index past one axis
                # lands in the next row there and here alike), and a slack after it, where
                # Quadrants' shared root buffer has the next field
                size = int(np.prod(dims + self.element, dtype=np.int64))
                flat = zeros((size + SLACK,), self.dtype.np)
                arr = flat[:size].reshape(lead + dims + trail)
            if lead:  # entry by entry in memory: a view with the entries last
                arr = np.moveaxis(arr, range(len(lead)), range(-len(lead), 0))
            if self._memory_layout is not None:  # the host sees it in axis order: a view
                axes = [order.index(d) for d in range(len(order))]
                arr = arr.transpose(axes + list(range(len(order), arr.ndim)))
            self._arr = arr
        return self._arr

    def _memory_shape(self, arr: Storage) -> tuple[int, ...]:
        """The storage's extents in memory's order (what a kernel's launch words hold)."""
        shape = tuple(arr.shape)
        order = self._memory_layout
        if order is None:
            return shape
        return tuple(shape[a] for a in order) + shape[len(order) :]

    def _logical(self, arr: Storage) -> Storage:
        """The elements of `arr` (the storage, or a host copy of it) within the field's shape."""
        if arr.shape[: len(self.shape)] == self.shape:
            return arr
        return arr[tuple(slice(0, n) for n in self.shape)]

    def _launch_words(self, second: str = "grad") -> tuple[int, ...]:
        """Its words in a launch: data pointer, gradient pointer (0 without one), extents. A
        forward-mode launch (`second="dual"`) gives its dual's pointer for the gradient's, a
        validating one (`"checkbit"`) its check bits'."""
        if self._quant is not None:  # unused: kernels reach its words as fields of their own
            word = cast("Field", next(iter(self._quant.slots.values())).word)
            return array_launch(word._storage(), None, self.shape + self.element)[0]
        arr, grad = self._launch_value(second)
        return array_launch(arr, grad, self._memory_shape(arr))[0]

    def _launch_value(self, second: str = "grad") -> tuple[Storage, Storage]:
        """(data, gradient) arrays, as a bound array argument is (the CUDA launcher's form); a
        forward-mode launch gives its dual for the gradient, a validating one its check bits, as
        `launch_words` does."""
        if second == "checkbit" and self.has_grad() and state.config().arch == "cpu":
            return self._storage(), self._check_bits()
        grad = self.dual if second == "dual" else self.grad  # allocated and active
        return self._storage(), grad._storage() if grad is not None and grad.active else None

    def _check_bits(self) -> np.ndarray:
        """One flag per element (of the field's dtype, laid out as its storage): set when a
        kernel under `qd.ad.Tape(validation=True)` read the element since the tape was entered
        (`compiler/passes/validation.py`)."""
        bits = self._checkbits
        if bits is None or bits.shape != self._storage().shape:
            bits = self._checkbits = np.zeros_like(self._storage())
        return bits

    def __qd_fingerprint__(self) -> str:
        return f"field:{TOKEN}:{self.uid}"

    def _label(self) -> str:
        return f"`{self.name}`" if self.name else f"#{self.uid}"

    def _described(self) -> str:
        """The field as a message names it: "field `x` of shape (4,)", or without a name, "a
        field of shape (4,)"."""
        shape = self.shape if self._unusable() is None else "(not placed)"
        return f"field `{self.name}` of shape {shape}" if self.name else f"a field of shape {shape}"

    # -- host access -------------------------------------------------------------------------------
    n: int
    m: int
    ndim: int

    def _host(self) -> np.ndarray:
        """The elements in host memory: a view of the storage on the CPU, a copy from the GPU."""
        arr = self._storage()
        return self._logical(arr if isinstance(arr, np.ndarray) else arr.get())

    def _store(self, array: np.ndarray) -> None:
        if self._quant is not None:
            quant_host().from_numpy(self, array)
            return
        arr = self._storage()
        if isinstance(arr, np.ndarray):
            self._logical(arr)[...] = array
        else:
            arr.set(np.ascontiguousarray(array, self.dtype.np))

    def to_numpy(
        self, dtype: object = None, keep_dims: bool = False, *, copy: bool | None = True
    ) -> np.ndarray:
        """The elements: a copy, or with `copy=False` / `None` a view of the storage where
        Quadrants gives one (host memory, a dtype DLPack carries, not a 0-d field)."""
        if self._quant is not None:
            view = quant_host().to_numpy(self)
        else:
            view = self._logical(self._storage())
        if self._sparse_levels:  # an inactive cell reads 0 (a bitmasked one keeps its elements)
            view = self._only_active(np.asarray(view), 0)
        np_dtype = None if dtype is None else _np_dtype(dtype)
        out = torch_bridge.to_numpy(view, self.dtype.name, np_dtype, copy, bool(self.shape))
        if keep_dims and len(self.element) == 1:
            out = out.reshape(out.shape + (1,))
        return out

    def from_numpy(self, array: object) -> None:
        array = np.asarray(array)
        want = self.shape + self.element
        if array.shape != want:
            if array.shape[: len(self.shape)] == self.shape and _column_as(
                self.element, array.shape[len(self.shape) :]
            ):
                array = array.reshape(want)
            else:
                raise QdValueError(
                    f"qd.field shape {self.shape} does not match the numpy array shape "
                    f"{array.shape}"
                    + (f" (field `{self.name}`)" if self.name else "")
                    + (
                        f": its elements have shape {self.element}, so it takes an array of "
                        f"shape {want}"
                        if self.element
                        else ""
                    )
                )
        self._store(self._only_active(_cast(array, self.dtype)))

    def to_torch(self, device: object = None, copy: bool | None = True) -> object:
        """A torch tensor of the elements: a copy, or with `copy=False` / `None` a zero-copy view
        of the storage (see `torch_bridge`)."""
        arr = self._storage()
        view = self._logical(arr) if isinstance(arr, np.ndarray) else arr
        return torch_bridge.to_torch(
            view, device, copy, f"field {self._label()}", self.dtype.name, bool(self.shape)
        )

    def from_torch(self, tensor: TorchTensor) -> None:
        self.from_numpy(tensor.detach().cpu().numpy())

    def to_dlpack(self, versioned: bool = False) -> object:
        """A DLPack capsule over the storage (zero-copy, in axis order); `versioned`: a DLPack
        1.0 one."""
        pyquadrants.current.materialize()
        return torch_bridge.dlpack(self._logical(self._storage()), versioned)

    def fill(self, value: object) -> None:
        if self._quant is not None:
            self._store(np.broadcast_to(self._element_value(value), self.shape + self.element))
            return
        arr = self._host().copy() if self._sparse_levels else self._host()
        arr[...] = self._element_value(value)
        self._store(self._only_active(arr))

    def _element_value(self, value: object) -> np.ndarray:
        """`value` as one element's entries (a scalar fills a vector's), in the field's type; a
        QdValueError naming the field when its shape cannot be an element's."""
        if isinstance(value, matrix.Matrix):
            value = value.entries
        array = np.asarray(value)
        try:
            np.broadcast_to(array, self.element)
        except ValueError:
            what = {0: "a scalar", 1: "a vector", 2: "a matrix"}[len(self.element)]
            raise QdValueError(
                f"an element of {self._described()} is {what} of {self.dtype} (shape "
                f"{self.element}); it cannot be given a value of shape {array.shape}."
            ) from None
        return _cast(array, self.dtype)

    def copy_from(self, other: object) -> None:
        if not isinstance(other, Field):
            raise TypeError("Cannot copy from a non-field object")
        if other.shape != self.shape:
            raise ValueError(
                f"qd.field shape {self.shape} does not match the source field shape {other.shape}"
            )
        self.from_numpy(other.to_numpy())

    def _key_of(self, index: object) -> tuple:
        key = (
            () if index is None else tuple(index) if isinstance(index, (tuple, list)) else (index,)
        )
        first = key[0] if len(key) == 1 else None
        if isinstance(first, matrix.Matrix):
            key = tuple(int(k) for k in np.ravel(first.entries))  # type: ignore[arg-type]
        if len(key) != len(self.shape):
            raise AssertionError("Slicing is not supported on qd.field")
        arr = self._storage()
        ints: list[int] = []
        for k in key:
            if not isinstance(k, (int, np.integer)):
                raise TypeError(
                    f"Detected illegal element of type: {type(k)}. Please be aware that slicing a "
                    "qd.field is not supported so far."
                )
            ints.append(int(k))
        out = tuple(k - o for k, o in zip(ints, self._index_offset))
        if all(0 <= k < n for k, n in zip(out, arr.shape)):
            return out
        slack = self._slack_index(out, arr)
        if slack is None:
            raise QdIndexError(
                f"index {tuple(key)} is out of bounds for field {self._label()} of shape "
                f"{self.shape}."
            )
        return slack

    def _in_storage(self, axis: int, k: int) -> bool:
        """Whether a constant index `k` on `axis` past the field's shape still lands in the memory
        it allocates with bounds checks off (`_storage`: packed row-major, and `SLACK` elements
        after the whole) whatever the other indices within their extents: Quadrants' layout has
        memory there too (the next row, or its root buffer's next field), and its tests read such
        elements back (`a[60]` of a 55-element field)."""
        if self._memory_layout is not None or self._soa or state.config().arch == "cuda":
            return False
        past = k - self._index_offset[axis]
        if past < 0:
            return False
        inner = math.prod(self.shape[axis + 1 :]) * math.prod(self.element)
        return (past - self.shape[axis] + 1) * max(inner, 1) <= SLACK

    def _slack_index(self, key: tuple[int, ...], arr: Storage) -> tuple | None:
        """An index past the field's storage (bounds checks off, on the CPU) that a kernel's
        address arithmetic puts in the slack after it, as the element's place in the flat
        buffer (what Quadrants' host accessor reads there: its root buffer holds the next
        field); None when it is outside both."""
        flat = getattr(arr, "base", None)
        if not isinstance(arr, np.ndarray) or flat is None or min(key, default=0) < 0:
            return None
        if self._memory_layout is not None or self._soa:  # memory not in axis order: no such
            return None
        linear = 0
        for k, n in zip(key, arr.shape):
            linear = linear * n + k
        size = math.prod(self.element)
        start = linear * size
        if start + size > flat.size:
            return None
        return Slack(slice(start, start + size), self.element, flat)

    def _view_of(self, arr: Storage, key: tuple) -> Storage:
        """The element (or the view of its entries) at a key `key_of` gave."""
        if isinstance(key, Slack):
            return key.flat[key.part].reshape(key.element) if key.element else key.flat[key.part]
        return arr[key]

    def __getitem__(self, index: object) -> object:
        """A scalar element as a Python number; a vector or matrix element as a `qd.Vector` /
        `qd.Matrix` over the field's own memory, so `m[None][i, j] = v` writes the field (as the
        reference's host accessors do; on the GPU it is a copy)."""
        if self._quant is not None:
            return quant_host().get(self, self._quant_key(index))
        arr = self._storage()
        key = self._key_of(index)
        view = self._view_of(arr if isinstance(arr, np.ndarray) else arr.get(), key)
        if not self.element:
            v = view.item() if view.ndim == 0 else view[0].item()
            return int(v) if isinstance(v, bool) else v  # a u1 element reads as 0 / 1, as there
        return (matrix.Vector if len(self.element) == 1 else matrix.Matrix)(view)

    def _quant_key(self, index: object) -> tuple[int, ...]:
        key = (
            () if index is None else tuple(index) if isinstance(index, (tuple, list)) else (index,)
        )
        return tuple(int(k) for k in key)  # type: ignore[call-overload]

    def __setitem__(self, index: object, value: object) -> None:
        if self._quant is not None:
            qkey = self._quant_key(index)
            quant_host().put(self, qkey, value)
            if self._sparse_levels:
                self._activate_at(qkey)
            return
        key = self._key_of(index)
        element = self._element_value(value)
        if not isinstance(key, Slack) and self._sparse_levels:
            self._activate_at(key)
        arr = self._storage()
        if isinstance(arr, np.ndarray):
            if isinstance(key, Slack):
                view = self._view_of(arr, key)
                view[...] = element
            else:
                arr[key] = element
        else:
            host = arr.get()
            host[key] = element
            arr.set(host)

    def __iter__(self) -> object:
        raise NotImplementedError("Struct for is only available in Quadrants scope.")

    def __array__(self, dtype: object = None, copy: object = None) -> np.ndarray:
        return self.to_numpy(dtype)

    def __str__(self) -> str:
        return str(self.to_numpy()) if self._unusable() is None else "<Field: not placed>"

    def __repr__(self) -> str:
        return "<qd.field>"


class Slack(NamedTuple):
    """An element past a field's storage, in its slack: entries `part` of `flat`."""

    part: slice
    element: tuple[int, ...]
    flat: np.ndarray


class ScalarField(Field):
    """`qd.field(qd.f32, shape)`."""


class MatrixField(Field):
    """`qd.Vector.field(n, ...)`, `qd.Matrix.field(n, m, ...)`, `qd.field(vec3, ...)`."""

    def get_scalar_field(self, *indices: int) -> MemberField:
        """Entry `(i, j)` of every element, as a scalar field over the same memory (Quadrants keeps
        one field per entry and hands that one out): reading or writing either name, in a kernel or
        from Python, reads or writes the same storage. Before the field is placed it is placed
        entry by entry (`qd.root.dense(qd.i, n).place(x.get_scalar_field(0, 0))`). As there, the
        entry is the flat one `i * m + j` (`j` 0 when left out, `m` 1 for a vector), taken as
        Python takes a tuple's item: a negative one counts from the end, one past either end is an
        IndexError."""
        if len(indices) not in (1, 2):
            raise AssertionError(
                f"get_scalar_field takes one or two indices, not {len(indices)} ({indices})."
            )
        size = math.prod(self.element)
        flat = int(indices[0]) * self.m + (int(indices[1]) if len(indices) == 2 else 0)
        if not -size <= flat < size:
            raise QdIndexError(
                f"get_scalar_field{tuple(indices)}: entry {flat} (i * m + j) is out of range for "
                f"elements of shape {self.element} (tuple index out of range)."
            )
        flat %= size
        members: dict[int, MemberField] = self.__dict__.setdefault("_members", {})
        if flat not in members:  # one per entry, so a kernel specialises on it once
            entry = tuple(int(k) for k in np.unravel_index(flat, self.element))
            members[flat] = MemberField(self, entry)
        return members[flat]


class MemberField(ScalarField):
    """`x.get_scalar_field(i, j)`: entry (i, j) of each element of matrix field `x`, a scalar
    field whose memory is `x`'s own (`_entry_of`). On the host it is a view of `x`'s storage; a
    kernel that reaches it indexes `x`'s hidden parameter with the entry's constant indices
    (`compiler/frontend/members.py`), so the split and the gate see one buffer. As in the
    reference it has no `.grad` of its own (a kernel's gradient of it is `x.grad`'s entry)."""

    def __init__(self, owner: Field, entry: tuple[int, ...]) -> None:
        # not Field.__init__: it allocates nothing
        self.owner, self.index = owner, entry
        self._entry_of = (owner, entry)
        self._dtype, self.element, self.name = owner.dtype, (), owner.name
        self.primal = self.dual_of = self.grad = self.dual = None
        self.uid = next(_uids)
        self.key = ("field", TOKEN, self.uid)
        self._arr, self._checkbits, self.member_shapes = None, None, {}

    # everything of its place is its owner's
    epoch = property(lambda self: self.owner.epoch)
    _tree_id = property(lambda self: self.owner._tree_id)
    active = property(lambda self: self.owner.active)
    placed = property(lambda self: self.owner.placed)
    given_offset = property(lambda self: self.owner.given_offset)
    blocked = property(lambda self: self.owner.blocked)
    _order_given = property(lambda self: (self.owner.primal or self.owner)._order_given)

    def _dims(self) -> tuple[int, ...] | None:
        return self.owner._dims()

    def has_grad(self) -> bool:
        return False

    def has_dual(self) -> bool:
        return False

    def _unusable(self) -> str | None:
        return self.owner._unusable()

    def _through_owner(self) -> bool:
        """Whether a host write goes through the owner's element (its storage is no NumPy view:
        a device array, a quantised field's decoded copy)."""
        return self.owner._quant is not None or not isinstance(self._storage(), np.ndarray)

    @property
    def _memory_layout(self) -> tuple[int, ...] | None:
        return self.owner._memory_layout

    @property
    def _soa(self) -> bool:
        return self.owner._soa

    @property
    def snode(self) -> PlacedSNode:
        return self.owner.snode

    @property
    def _sparse_levels(self) -> tuple[Level, ...]:
        return self.owner._sparse_levels

    def _storage(self) -> Storage:
        return self.owner._storage()[(Ellipsis, *self.index)]

    def _store(self, array: np.ndarray) -> None:
        if not self._through_owner():
            self._logical(self._storage())[...] = array
            return
        whole = self.owner.to_numpy()
        whole[(Ellipsis, *self.index)] = array
        self.owner._store(whole)

    def __setitem__(self, index: object, value: object) -> None:
        if self._through_owner():
            self.owner[index] = _entry_set(self.owner[index], self.index, value)
            return
        super().__setitem__(index, value)

    def _slack_index(self, key: tuple[int, ...], arr: Storage) -> tuple | None:
        return None  # past its shape: not an element of its owner's either

    def _in_storage(self, axis: int, k: int) -> bool:
        return self.owner._in_storage(axis, k)

    def __qd_fingerprint__(self) -> str:
        return f"{self.owner.__qd_fingerprint__()}:entry{self.index}"

    def _place(
        self,
        shape: tuple[int, ...],
        order: tuple[int, ...] | None = None,
        snode: object = None,
        blocked: bool = False,
    ) -> None:
        """`place(x.get_scalar_field(i, j))`: once every entry is placed with one shape the field
        has it; entries of different shapes are Quadrants' error at the next launch. Entries each
        placed in a level of their own are laid out entry by entry (SOA), as there."""
        f = self.owner
        if self.index in f.member_shapes or f.placed:
            raise QdRuntimeError(f"member {self.index} of field {f._label()} is already placed.")
        f.member_shapes[self.index] = (shape, order, snode, blocked)
        placements = list(f.member_shapes.values())
        if len(placements) == math.prod(f.element) and all(p[0] == shape for p in placements):
            f.member_shapes.clear()
            f._place(shape, order, snode, blocked)
            f._soa_given = len({id(p[2]) for p in placements}) == len(placements) > 1


def _entry_set(element: object, entry: tuple[int, ...], value: object) -> object:
    """`element` (a scalar's host value, or a vector's or matrix's) with `entry` set to `value`."""
    entries = np.array(element.entries if isinstance(element, matrix.Matrix) else element)
    entries[entry] = value
    return entries


_NOT_PLACED = (
    "Field has no allocation. Allocate via `qd.field(..., shape=...)` or "
    "`qd.root.dense(...).place(field)` before using it"
)


def field(
    dtype: object,
    shape: object = None,
    order: object = None,
    name: str = "",
    offset: object = None,
    needs_grad: bool = False,
    needs_dual: bool = False,
    layout: object = None,
) -> Field:
    """`qd.field(dtype, shape=..., needs_grad=...)`: zero-initialised; `shape=()` for a 0-d field
    (indexed `x[None]`); no shape: placed later by `qd.root.dense(...).place(x)`."""
    qtype = quant_host().quant_of(dtype)  # its entries' quantised types
    if isinstance(dtype, matrix.MatrixType) and qtype is not None:  # entries: the compute type
        vector = isinstance(dtype, matrix.VectorType)
        dtype = (
            matrix.VectorType(dtype.n, qtype.compute)
            if vector
            else matrix.MatrixType(dtype.n, dtype.m, qtype.compute)
        )
    elif qtype is not None:  # computed in its compute type, stored in words once placed
        dtype = qtype.compute
    scalar, element = _element(dtype)
    dims = None if shape is None else _shape(shape)
    if (needs_grad or needs_dual) and not scalar.is_float:
        raise QdRuntimeError(
            f"{scalar} is not supported for field with `needs_grad=True` or `needs_dual=True`."
        )
    cls = MatrixField if element else ScalarField
    axes = _order(order, dims)
    f = cls(scalar, dims, element, needs_grad, name, None, _offset(offset, dims), needs_dual)
    f._order = None if axes == tuple(range(len(axes or ()))) else axes
    f._order_given = f._order is not None
    f._soa_given = layout == Layout.SOA and dims is not None  # a layout's place() decides there
    for g in (f.grad, f.dual):
        if g is not None and dims is not None:
            g.placed = True  # a field made with a shape has its gradient and dual placed with it
    if qtype is not None:
        if dims is not None:
            raise QdValueError(
                "a field of a quantised type is placed by qd.BitpackedFields or a quant_array, "
                "without a shape."
            )
        quant_host().make_quant(f, qtype)
    if not pyquadrants.current.fields_checked:
        _declared.append((f, _declared_at()))
    return f


_quant_module: list[types.ModuleType] = []


def quant_host() -> types.ModuleType:
    """`host/quant.py`, registered by it on import (it imports this module)."""
    return _quant_module[0]


def set_quant_host(module: types.ModuleType) -> None:
    _quant_module[:] = [module]


_declared: list[tuple[Field, str]] = []
"""The fields declared before the program's first `materialize()` passed, and where
(`check_declared`)."""


def _declared_at() -> str:
    """Where the user's code declared a field: the first frame outside qdlab."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename.startswith(_QDLAB_DIR):
        frame = frame.f_back
    if frame is None:
        return "<unknown>\n"
    return (
        f'  File "{frame.f_code.co_filename}", line {frame.f_lineno}, in {frame.f_code.co_name}\n'
    )


_QDLAB_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_BAR = "=" * 44 + "\n"


def check_declared() -> None:
    """Quadrants' check at a program's first `materialize()` (its first launch or host access to
    a field) of the fields declared before it, in its words: each is placed, so are the gradients
    and duals asked for (`needs_grad=True` without a shape needs `place(x.grad)` or
    `qd.root.lazy_grad()`), and a matrix placed member by member has members of one shape. It runs
    again at each materialize until it passes; fields declared after that are not checked here
    (using one that is not placed is an error of its own)."""
    if not _declared:
        pyquadrants.current.fields_checked = True
        return
    now = [(f, at) for f, at in _declared if f.epoch == state.epoch]
    not_placed = [at for f, at in now if not f.placed and not f.member_shapes]
    if not_placed:
        raise QdRuntimeError(
            f"These field(s) are not placed:\n{_BAR}"
            + _BAR.join(not_placed)
            + f"{_BAR}Please consider specifying a shape for them. E.g.,"
            + "\n\n  x = qd.field(float, shape=(2, 3))"
        )
    for kind in ("grad", "dual"):
        missing = [
            at
            for f, at in now
            if (g := getattr(f, kind)) is not None and g.active and f.placed and not g.placed
        ]
        if missing:
            raise QdRuntimeError(
                f"These field(s) requrie `needs_{kind}=True`, however their {kind} field(s) are "
                f"not placed:\n{_BAR}"
                + _BAR.join(dict.fromkeys(missing))
                + f"{_BAR}Please consider place the {kind} field(s). E.g.,"
                + f"\n\n  qd.root.dense(qd.i, 1).place(x.{kind})"
                + "\n\n Or specify a shape for the field(s). E.g.,"
                + f"\n\n  x = qd.field(float, shape=(2, 3), needs_{kind}=True)"
            )
    for f, at in now:
        shapes = [p[0] for p in f.member_shapes.values()]
        if shapes and any(s != shapes[0] for s in shapes):
            raise QdRuntimeError(
                f"Members of the following field have different shapes {shapes}:\n{at}"
            )
    _declared.clear()
    pyquadrants.current.fields_checked = True


pyquadrants.CHECKS.append(check_declared)
pyquadrants.CHECKS.append(close_tree)
pyquadrants.TREE_FINISHERS.append(close_tree)


def _order(order: object, dims: tuple[int, ...] | None) -> tuple[int, ...] | None:
    """`qd.field(..., order="ji")`: the axis each level of memory holds, outermost first (`i` is
    axis 0), checked as the reference checks it."""
    if order is None:
        return None
    if dims is None:
        raise QdSyntaxError("shape cannot be None when order is set")
    text = str(order)
    if len(dims) != len(text):
        raise QdSyntaxError(
            f"The dimensionality of shape and order must be the same ({len(dims)} != {len(text)})"
        )
    if len(dims) != len(set(text)):
        raise QdSyntaxError("The axes in order must be different")
    axes = tuple(ord(ch) - ord("i") for ch in text)
    for ch, axis in zip(text, axes):
        if not 0 <= axis < len(dims):
            raise QdSyntaxError(f"Invalid axis {ch}")
    return axes


matrix.field_maker = field
_implicit: list[Callable[[tuple[int, ...]], object]] = []


class PlacedSNode:
    """`x.snode`: the dense level `x` is placed in, as `x` sees it. Its attributes are the
    level's; `ptr` (Quadrants' handle on the place node) answers for `x`'s own place: what it holds
    (`get_snode_grad_type()`), whether a gradient, a dual or the validation's check bits are
    allocated for it."""

    def __init__(self, f: Field, level: object) -> None:
        self.field, self.level = f, level

    def __getattr__(self, name: str) -> object:
        return getattr(self.level, name)

    def __repr__(self) -> str:
        return repr(self.level)

    @property
    def ptr(self) -> PlacedSNode:
        return self

    @property
    def _snode_tree_id(self) -> int:
        """The SNode tree its field joined when it was made (`field.tree_id`)."""
        f = self.field
        return cast(Field, f.primal or f.dual_of or f)._tree_id

    def parent(self, n: int = 1) -> object:
        """The level `n` steps up from the place node: `parent()` is the one it is placed in,
        `parent(0)` the place node itself."""
        if n <= 0:
            return self
        return self.level if n == 1 else cast("SNode", self.level).parent(n - 1)

    def __eq__(self, other: object) -> bool:
        """The same field's place node (each `x.snode` is a new view of it)."""
        if not isinstance(other, PlacedSNode):
            return NotImplemented
        return other.field is self.field and other.level is self.level

    def __hash__(self) -> int:
        return hash((id(self.field), id(self.level)))

    def __str__(self) -> str:
        return f"{self.level} => place {list(self.field.shape)}"

    def _path_from_root(self) -> list[object]:
        return [*cast("SNode", self.level)._path(), self]

    @property
    def _cell_size_bytes(self) -> int:
        return 0  # a place node has no cell of its own, as in Quadrants

    @property
    def _offset_bytes_in_parent_cell(self) -> int:
        """Where its field's scalars start in a cell of the level it is placed in."""
        return cast("SNode", self.level)._offset_of(self.field)

    def is_place(self) -> bool:
        return True

    def is_primal(self) -> bool:
        return self.field.primal is None and self.field.dual_of is None

    def get_snode_grad_type(self) -> SNodeGradType:
        if self.field.primal is not None:
            return SNodeGradType.ADJOINT
        return SNodeGradType.DUAL if self.field.dual_of is not None else SNodeGradType.PRIMAL

    def has_adjoint(self) -> bool:
        return self.is_primal() and self.field.has_grad()

    def has_dual(self) -> bool:
        return self.is_primal() and self.field.has_dual()

    def has_adjoint_checkbit(self) -> bool:
        """Whether a `qd.ad.Tape(validation=True)` checks this field's elements: a field with a
        gradient, under `qd.init(debug=True)`, as in Quadrants."""
        return self.has_adjoint() and state.config().debug


def implicit_snode(shape: tuple[int, ...]) -> object:
    """The dense level of a field made with a shape (`snode.implicit`, registered by host/snode.py,
    which imports this module)."""
    return _implicit[0](shape)


def set_implicit_snode(make: Callable[[tuple[int, ...]], object]) -> None:
    _implicit[:] = [make]


def launch_words(fields: list[Field], second: str = "grad") -> tuple[int, ...]:
    """The launch words of the fields a compiled variant uses (allocating their storage); a
    forward-mode variant's with their duals, a validating one's with their check bits
    (`Field.launch_words`)."""
    return tuple(w for f in fields for w in f._launch_words(second))


def lazy_dual() -> None:
    """`qd.root.lazy_dual()`: allocate the dual of every float field (forward mode)."""
    for f in list(_live):
        if f.dual is not None and f.epoch == state.epoch:
            f.dual.active = f.dual.placed = True


def clear_duals() -> None:
    """Zero the dual of every live field (`qd.ad.FwdMode` does on entry)."""
    for f in list(_live):
        if f.dual is not None and f.has_dual() and f._unusable() is None:
            f.dual.fill(0)


def lazy_grad() -> None:
    """`qd.root.lazy_grad()`: allocate the gradient of every float field."""
    for f in list(_live):
        if f.grad is not None and f.epoch == state.epoch:
            f.grad.active = f.grad.placed = True


def clear_gradients() -> None:
    """Zero the gradient of every live field (`qd.ad.Tape` does, as Quadrants' does)."""
    for f in list(_live):
        if f.has_grad() and f._unusable() is None:
            f.grad.fill(0)


def clear_checkbits() -> None:
    """Zero the check bits of every live field (a validating `qd.ad.Tape` does on entry)."""
    for f in list(_live):
        if f._checkbits is not None:
            f._checkbits.fill(0)


def primal_fields() -> list[Field]:
    """Every live, usable field that holds values (not a gradient or a dual), oldest first."""
    return sorted(
        (
            f
            for f in list(_live)
            if f.primal is None and f.dual_of is None and f._unusable() is None
        ),
        key=lambda f: f.uid,
    )


def gradient_groups() -> list[tuple[int, ...]]:
    """The fields with a gradient, grouped by the level they are placed in (the uids of each
    group): Quadrants compiles one kernel per group to clear them."""
    groups: dict[int, list[int]] = {}
    for f in primal_fields():
        if f.has_grad():
            groups.setdefault(id(f._snode) if f._snode is not None else -f.uid, []).append(f.uid)
    return [tuple(g) for g in groups.values()]


def _element(dtype: object) -> tuple[DType, tuple[int, ...]]:
    if isinstance(dtype, matrix.MatrixType):
        if dtype.shape is None or None in dtype.shape:
            raise QdValueError(f"a field of {dtype} needs the element's sizes.")
        inner = matrix.resolve_dtype(dtype.dtype) if dtype.dtype is not None else None
        return inner or matrix.DEFAULTS["fp"], tuple(dtype.shape)
    if isinstance(dtype, DType):
        return dtype, ()
    t = u1 if dtype is bool else matrix.resolve_dtype(dtype) if dtype in (float, int) else None
    if t is None and dtype is not None:
        try:
            t = from_numpy(np.dtype(dtype))  # type: ignore[arg-type]
        except TypeError:
            t = None
    if t is None:
        raise QdValueError(
            f"qd.field needs a dtype such as qd.f32 or a vector/matrix type, not {dtype!r}."
        )
    return t, ()


def _shape(shape: object) -> tuple[int, ...]:
    dims = shape_items(shape)
    for d, s in enumerate(dims):
        if isinstance(s, (int, np.integer)) and not isinstance(s, bool) and s <= 0:
            raise QdRuntimeError(
                f"Every dimension of a Quadrants field should be positive, got {s} in "
                f"dimension {d}."
            )
    ints = tuple(
        int(s)
        for s in dims
        if isinstance(s, (int, np.integer)) and not isinstance(s, bool) and s > 0
    )
    if len(ints) != len(dims):
        raise QdValueError(
            f"{shape!r} is not a valid shape for a field: every extent must be a positive integer."
        )
    if math.prod(ints) >= 2**31:
        raise QdValueError(f"a field of shape {shape} has more than 2**31 - 1 elements.")
    if len(ints) > MAX_NUM_INDICES:
        raise QdRuntimeError(
            f"a field of shape {shape}: too many dimensions. The maximum dimensionality is "
            f"{MAX_NUM_INDICES}."
        )
    return ints


def _offset(offset: object, dims: tuple[int, ...] | None) -> tuple[int, ...] | None:
    if offset is None:
        return None
    off = tuple(offset) if isinstance(offset, (tuple, list)) else (offset,)
    ints = tuple(o for o in off if isinstance(o, int))
    if dims is None:  # the reference's messages
        raise QdCompileValueError(
            f"qd.field(offset={offset!r}): shape cannot be None when offset is set."
        )
    if len(off) != len(dims):
        raise QdCompileValueError(
            f"qd.field(shape={dims}, offset={offset!r}): The dimensionality of shape and offset "
            "must be the same."
        )
    if len(ints) != len(off):
        raise QdCompileValueError(f"qd.field(offset={offset!r}): give one integer per axis.")
    return ints if any(ints) else None


def _column_as(element: tuple[int, ...], shape: tuple[int, ...]) -> bool:
    """Whether `from_numpy` takes elements of `shape` for a field of column `element` (an
    `(n,)` vector or an `(n, 1)` matrix), as Quadrants takes them: `(n,)`, `(n, 1)` or `(1, n)`,
    entries in order."""
    if len(element) not in (1, 2) or element[1:] not in ((), (1,)):
        return False
    n = element[0]
    return shape in ((n,), (n, 1), (1, n))


def _np_dtype(dtype: object) -> np.dtype:
    return dtype.np if isinstance(dtype, DType) else np.dtype(dtype)  # type: ignore[arg-type]


def _cast(array: np.ndarray, dtype: DType) -> np.ndarray:
    """`array` as `dtype`'s values, integers wrapping as a store in a kernel does."""
    if dtype.is_int and dtype.bits > 1 and array.dtype.kind in "iuO":
        wrapped = np.asarray(np.asarray(array, object) % (1 << dtype.bits), object)
        return wrapped.astype(np.dtype(f"u{dtype.bits // 8}")).view(dtype.np)
    return array.astype(dtype.np)
