"""What the compiler knows of sparse SNodes (`pointer`, `bitmasked`, `dynamic`): activity is plain
memory. Each sparse level owns a hidden field, its `mask`: an i32 flag per cell of a `pointer`
level, an i32 length per parent cell of a `dynamic` one, and for a `bitmasked` level one bit per
cell, as in Quadrants: per cell of its parent, u32 words of 32 flags (`Level.own`, `mask_shape`,
`flags`). A kernel reads and writes it as it does any field (loads, stores, atomics), so the split,
its backward slice and the gate see an activation as a write and a struct-for's activity test as a
read. The bit layout is decided here, in the compiler's digest (`core.keys.compiler_version`), and
shows in every construct's IR text (the mask's type and shape), so no binary of another layout is
served from a cache.

The elements of an inactive cell are zero (a deactivation zero-fills them, as Quadrants' runtime
does), so a read needs no test; a write activates its cell's levels first. The host side
(`qdlab.host.snode`) builds these descriptions from a layout."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .fields import FieldBase

WORD_BITS = 32
"""The flags per word of a bitmasked level's mask (a u32)."""


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
    own: tuple[int, ...] = ()
    """A bitmasked level's extent per entry of `cell` within one cell of its parent (1 along an
    axis it does not split): its mask holds, per parent cell, the flag of the cell numbered `n`
    row-major within it as bit `n % 32` of word `n // 32`. Empty for the other kinds."""

    @property
    def words(self) -> int:
        """The words per parent cell of a bitmasked level."""
        return -(-math.prod(self.own) // WORD_BITS)


def mask_shape(cells: tuple[int, ...], own: tuple[int, ...]) -> tuple[int, ...]:
    """The shape of a bitmasked level's mask: its parent's cells per axis of `cells` (the level's
    cells per axis), then the words per parent cell."""
    return (*(c // o for c, o in zip(cells, own)), -(-math.prod(own) // WORD_BITS))


def flags(level: Level, words: np.ndarray) -> np.ndarray:
    """A bitmasked level's mask (`mask_shape`) as one bool per cell of the level."""
    own = level.own
    parents = words.shape[:-1]
    bits = np.unpackbits(
        np.ascontiguousarray(words, dtype="<u4").view(np.uint8), axis=-1, bitorder="little"
    )
    local = bits[..., : math.prod(own)].reshape(parents + own).astype(bool)
    n = len(own)  # interleave (parent cell, position in it) per axis
    order = [k for a in range(n) for k in (a, n + a)]
    return local.transpose(order).reshape(tuple(p * o for p, o in zip(parents, own)))


def count_active(words: np.ndarray) -> int:
    """The active cells of a bitmasked level (the set bits of its mask)."""
    return int(np.unpackbits(np.ascontiguousarray(words, dtype="<u4").view(np.uint8)).sum())


@dataclass(frozen=True)
class Region:
    """What deactivating one cell of an SNode clears in one array below it: per axis of `array`,
    (the SNode's index axis, block size) — the range `[c * size, (c + 1) * size)` of the cell's
    index `c` — or (-1, extent): the whole axis."""

    array: FieldBase
    name: str
    axes: tuple[tuple[int, int], ...]


def locate(level: Level, cell: tuple[int, ...]) -> tuple[tuple[int, ...], int]:
    """Where a bitmasked level keeps the flag of `cell` (its coordinates per entry of `cell`): the
    word's index in the mask, and the bit's value in that word."""
    n = 0
    for c, o in zip(cell, level.own):
        n = n * o + c % o
    parent = tuple(c // o for c, o in zip(cell, level.own))
    return (*parent, n // WORD_BITS), 1 << (n % WORD_BITS)
