"""Quantised fields on the host: `qd.BitpackedFields`, `qd.root.quant_array(...)`, and host access
(`x[i]`, `to_numpy`) to a field whose elements live in the bits of physical words.

A field made with a quantised dtype (`qd.field(dtype=qd.types.quant.int(13))`) computes in the
type's compute type (i32, f32); placing it in a `BitpackedFields` (or under a `quant_array`) gives
each of its scalars a `Slot` in a field of physical words (`core/quant.py`), which holds its
storage: kernels read and write that word field (`compiler/frontend/quant.py`), host access
runs the same conversions on Python numbers."""

from __future__ import annotations

import itertools
import math
import sys
from dataclasses import dataclass, field
from typing import cast

import numpy as np

from ..core import matrix
from ..core import quant as q
from ..core.errors import QdRuntimeError, QdSyntaxError, QdValueError
from ..core.types import DType
from .field import Field, MemberField, set_quant_host

_OPS = q.NpOps()


@dataclass(eq=False)
class QuantInfo:
    """A quantised field's type per entry (`()` for a scalar field) and, once placed, each entry's
    slot."""

    types: dict[tuple[int, ...], q.QuantType]
    slots: dict[tuple[int, ...], q.Slot] = field(default_factory=dict)

    @property
    def compute(self) -> DType:
        return next(iter(self.types.values())).compute

    def text(self) -> str:
        return ";".join(f"{k}={s.text()}" for k, s in sorted(self.slots.items()))


def quant_of(dtype: object) -> QuantInfo | None:
    """The quantised types a field's dtype names: itself, a vector or matrix type's entries' (one
    type, or one per entry: `qd.Matrix.field(2, 2, dtype=[[qflt, qfxt], [qflt, qfxt]])`)."""
    if q.is_quant(dtype):
        return QuantInfo({(): dtype})
    if not isinstance(dtype, matrix.MatrixType):
        return None
    inner = dtype._dtype
    shape = dtype.shape
    entries = list(itertools.product(*(range(n) for n in shape)))
    if q.is_quant(inner):
        return QuantInfo(dict.fromkeys(entries, inner))
    if not isinstance(inner, (list, tuple)):
        return None
    rows = [list(r) if isinstance(r, (list, tuple)) else [r] for r in inner]
    flat = [t for r in rows for t in r]
    if not any(q.is_quant(t) for t in flat):
        return None
    if len(flat) != len(entries) or not all(q.is_quant(t) for t in flat):
        raise QdValueError(f"a {dtype.to_string()} field needs one quantised type per entry.")
    if len({t.compute for t in flat}) != 1:
        raise QdRuntimeError("Member fields of a matrix field must have the same compute type")
    return QuantInfo(dict(zip(entries, flat)))


def make_quant(f: Field, info: QuantInfo) -> None:
    """Make `f` (made with the compute type) a quantised field: no gradient, no dual."""
    f._quant = info
    f.grad = f.dual = None


def _info(f: Field) -> QuantInfo:
    info = f._quant
    assert info is not None, f"field {f._label()} is not quantised"
    return info


def _word(slot: q.Slot) -> Field:
    return cast("Field", slot.word)


def physical(max_num_bits: object) -> DType:
    if not isinstance(max_num_bits, int) or max_num_bits not in q.UNSIGNED:
        raise QdValueError(f"max_num_bits must be 8, 16, 32 or 64, not {max_num_bits!r}.")
    return q.UNSIGNED[max_num_bits]


def _entries(arg: object) -> list[tuple[Field, tuple[int, ...]]]:
    """The (field, entry) scalars a placed argument stands for."""
    if isinstance(arg, MemberField):
        return [(arg.owner, arg.index)]
    if not isinstance(arg, Field):
        raise QdValueError(f"BitpackedFields.place() takes quantised fields, not {arg!r}.")
    if getattr(arg, "_quant", None) is None:
        raise QdValueError(
            f"BitpackedFields.place(): field {arg._label()} is not of a quantised type "
            "(qd.types.quant.int/fixed/float)."
        )
    return [(arg, e) for e in itertools.product(*(range(n) for n in arg.element))]


class BitpackedFields:
    """`qd.BitpackedFields(max_num_bits)`: quantised fields packed into one word per cell."""

    def __init__(self, max_num_bits: int) -> None:
        self.struct = q.BitStruct(physical(max_num_bits))
        self.fields: list[tuple[Field, tuple[int, ...], int]] = []
        self.placed = False

    def place(self, *args: object, shared_exponent: bool = False) -> None:
        """Pack the fields' scalars in order; `shared_exponent=True`: the floats among them share
        one exponent."""
        scalars = [s for a in args for s in _entries(a)]
        shared = -1
        for f, e in scalars:
            t = _info(f).types[e]
            try:
                if isinstance(t, q.QuantFloat):
                    if shared >= 0:
                        if self.struct.members[shared].qtype != t.exponent:
                            raise QdRuntimeError(
                                "QuantFloatTypes with shared exponents must have exactly the "
                                "same exponent type."
                            )
                        exp = shared
                    else:
                        exp = self.struct.add(t.exponent)
                        if shared_exponent:
                            shared = exp
                    k = self.struct.add(t)
                    self.struct.members[k].exponent = exp
                    self.struct.members[exp].users.append(k)
                else:
                    k = self.struct.add(t)
            except ValueError as err:
                raise QdRuntimeError(str(err)) from None
            self.fields.append((f, e, k))
        if shared_exponent and len(scalars) <= 1:
            raise QdSyntaxError("At least 2 fields need to be placed when shared_exponent=True")

    def _place(
        self, level: object, dims: tuple[int, ...], order: tuple[int, ...] | None, blocked: bool
    ) -> None:
        """Place the words at `level` (an SNode) and each field's scalars in them."""
        if self.placed:
            raise QdRuntimeError("this BitpackedFields is already placed.")
        self.placed = True
        word = Field(self.struct.physical, None, name="bitpacked")
        word._place(dims, order, level, blocked)
        for f, e, k in self.fields:
            slot = q.Slot(word, _info(f).types[e], self.struct, k)
            _give_slot(f, e, slot, dims, order, level, blocked)


def _give_slot(
    f: Field,
    entry: tuple[int, ...],
    slot: q.Slot,
    dims: tuple[int, ...],
    order: tuple[int, ...] | None,
    level: object,
    blocked: bool,
) -> None:
    info = _info(f)
    if entry in info.slots:
        raise QdRuntimeError(f"member {entry} of field {f._label()} is already placed.")
    info.slots[entry] = slot
    if len(info.slots) == math.prod(f.element):
        shapes = {s.word.shape for s in info.slots.values()}
        arrays = {s.array for s in info.slots.values()}
        if len(shapes) != 1 or len(arrays) != 1:
            raise QdRuntimeError(f"the members of field {f._label()} are placed in two shapes.")
        f._place(dims, order, level, blocked)


def place_quant_array(
    level: object,
    parent_dims: tuple[int, ...],
    dims: tuple[int, ...],
    extents: tuple[int, ...],
    kept: tuple[bool, ...],
    max_num_bits: int,
    fields: list[object],
) -> None:
    """`parent.quant_array(axes, n, max_num_bits).place(x)`: x's elements packed `n` to a word of
    the parent's cells; `extents` is the level's extent along each axis of x."""
    phys = physical(max_num_bits)
    if len(fields) != 1:
        raise QdValueError("a quant_array holds one field.")
    f = fields[0]
    if not isinstance(f, Field) or getattr(f, "_quant", None) is None or f.element:
        raise QdValueError("quant_array(...).place() takes one scalar field of a quantised type.")
    t = _info(f).types[()]
    if isinstance(t, q.QuantFloat):
        raise QdValueError("a quant_array holds quantised integers or fixed-point numbers.")
    if math.prod(extents) * t.bits > phys.bits:
        raise QdRuntimeError(
            f"quant_array: {math.prod(extents)} elements of {t.bits} bits do not fit in "
            f"{phys.bits} bits."
        )
    word = Field(phys, None, name="quant_array")
    word._place(parent_dims, None, level, False)
    _give_slot(f, (), q.Slot(word, t, None, 0, extents, kept), dims, None, level, False)


# Host access --------------------------------------------------------------------------------------


def _places(
    f: Field, slot: q.Slot, index: tuple[np.ndarray, ...]
) -> tuple[tuple[np.ndarray, ...], np.ndarray | None]:
    """The word index (an array per axis of the words) and, in a quant_array, the bit offset of
    each element `index` names (one array per axis of `f`)."""
    if not slot.array:
        return index, None
    outer = tuple(i // n for i, n, k in zip(index, slot.array, slot.kept) if k)
    lin = np.zeros_like(index[0]) if index else np.zeros(1, np.int32)
    for i, n in zip(index, slot.array):
        lin = lin * n + i % n
    return outer, (lin * slot.qtype.bits).astype(np.int32)


def _words(slot: q.Slot) -> np.ndarray:
    return _word(slot)._host()


def _put_words(slot: q.Slot, arr: np.ndarray) -> None:
    w = _word(slot)
    if not isinstance(w._storage(), np.ndarray):
        w._store(arr)


def _read(f: Field, entry: tuple[int, ...], index: tuple[np.ndarray, ...]) -> np.ndarray:
    slot = _info(f).slots[entry]
    at, off = _places(f, slot, index)
    words = np.atleast_1d(_words(slot)[at])
    return q.decode(_OPS, words, slot, off)


def _write(
    f: Field, entry: tuple[int, ...], index: tuple[np.ndarray, ...], values: np.ndarray
) -> None:
    """Store `values` at `index` (each word named once)."""
    slot = _info(f).slots[entry]
    at, off = _places(f, slot, index)
    arr = _words(slot)
    old = np.atleast_1d(arr[at])
    ct = slot.qtype.compute
    vals = np.atleast_1d(values)
    if vals.dtype.kind == "f" and not ct.is_float:  # a float converts as a kernel converts it
        v = _OPS.cast(vals.astype(np.float64), ct)
    else:
        v = _OPS.cast(vals.astype(np.float64 if ct.is_float else np.int64), ct)
    bits, mask = q.encode(_OPS, old, slot, v, off)
    new = (old & ~mask) | (bits & mask)
    arr[at] = new.reshape(np.shape(arr[at]))  # a 0-d field's word is one
    _put_words(slot, arr)


def _check(f: Field, index: tuple[int, ...]) -> tuple[np.ndarray, ...]:
    if len(index) != len(f.shape) or not all(0 <= i < n for i, n in zip(index, f.shape)):
        raise QdValueError(
            f"index {index} is out of bounds for field {f._label()} of shape {f.shape}."
        )
    return tuple(np.array([i], np.int32) for i in index)


def _all(f: Field, slot: q.Slot) -> list[tuple[np.ndarray, ...]]:
    """Every index of `f`, in groups that name each word once (a quant_array's elements of one
    word go in separate groups)."""
    grid = [g.ravel().astype(np.int32) for g in np.indices(f.shape)] if f.shape else []
    if not slot.array:
        return [tuple(grid)]
    lin = np.zeros(grid[0].shape if grid else (1,), np.int64)
    for i, n in zip(grid, slot.array):
        lin = lin * n + i % n
    return [tuple(g[lin == k] for g in grid) for k in range(math.prod(slot.array))]


def to_numpy(f: Field) -> np.ndarray:
    out = np.zeros(f.shape + f.element, f.dtype.np)
    for e, slot in _info(f).slots.items():
        for index in _all(f, slot):
            if f.shape and not len(index[0]):
                continue
            out[(*index, *e)] = _read(f, e, index) if f.shape else _read(f, e, ())[0]
    return out


def from_numpy(f: Field, array: np.ndarray) -> None:
    array = np.asarray(array)
    for e, slot in _info(f).slots.items():
        for index in _all(f, slot):
            if f.shape and not len(index[0]):
                continue
            _write(f, e, index, array[(*index, *e)] if f.shape else array[e])


def get(f: Field, index: tuple[int, ...]) -> object:
    at = _check(f, index)
    if not f.element:
        return _read(f, (), at)[0].item()
    vals = np.zeros(f.element, f.dtype.np)
    for e in _info(f).slots:
        vals[e] = _read(f, e, at)[0]
    return (matrix.Vector if len(f.element) == 1 else matrix.Matrix)(vals)


def put(f: Field, index: tuple[int, ...], value: object) -> None:
    at = _check(f, index)
    if isinstance(value, matrix.Matrix):
        value = value.entries
    arr = np.broadcast_to(np.asarray(value), f.element)
    for e in _info(f).slots:
        _write(f, e, at, np.asarray(arr[e]))


set_quant_host(sys.modules[__name__])
