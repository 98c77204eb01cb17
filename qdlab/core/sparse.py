"""What the compiler knows of sparse SNodes (`pointer`, `bitmasked`, `dynamic`): activity is plain
memory. Each sparse level owns a hidden i32 field, its `mask`: one flag per cell of a `pointer` or
`bitmasked` level, one length per parent cell of a `dynamic` one. A kernel reads and writes it as
it does any field (loads, stores, atomics), so the split, its backward slice and the gate see an
activation as a write and a struct-for's activity test as a read.

The elements of an inactive cell are zero (a deactivation zero-fills them, as Quadrants' runtime
does), so a read needs no test; a write activates its cell's levels first. The host side
(`qdlab.host.snode`) builds these descriptions from a layout."""

from __future__ import annotations

from dataclasses import dataclass

from .fields import FieldBase


@dataclass(frozen=True)
class Level:
    """One sparse level above an index space (a field's, or an SNode's own cells).

    `cell`: per axis of `mask`, (the index space's axis, the divisor that maps an index to the
    level's cell). A `dynamic` level's `mask` holds the length per parent cell, and `dyn` is
    (the index space's axis, divisor) of its dynamic axis: a cell is active below the length."""

    kind: str
    mask: FieldBase
    name: str
    cell: tuple[tuple[int, int], ...]
    dyn: tuple[int, int] | None = None


@dataclass(frozen=True)
class Region:
    """What deactivating one cell of an SNode clears in one array below it: per axis of `array`,
    (the SNode's index axis, block size) — the range `[c * size, (c + 1) * size)` of the cell's
    index `c` — or (-1, extent): the whole axis."""

    array: FieldBase
    name: str
    axes: tuple[tuple[int, int], ...]
