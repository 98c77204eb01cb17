"""The launch ABI: what a task finds in its argument words and in its temporary buffer.

Decided here once, for the code generators that read it and for everything that fills it: the CPU
launcher, the CUDA launcher and `qd.ndarray`, whose words are made when it is allocated.

- **Argument words**, 8 bytes each, in parameter order: a scalar fills one word (an f32 in its low 4
  bytes; an integer in the width of its type, so packing refuses a value its type cannot hold); an
  array fills `2 + ndim` words: its data pointer, its gradient buffer's pointer (0 when it has none)
  and its extents (each an i32, the width of a kernel's indices).
- **Temporary buffer**: a header of `HEADER_BYTES` (below), then the slots of values that cross
  tasks and the per-chunk partial results of reductions (`offload.Plan`). A task's return values sit
  at `RET_OFFSET`.
- **Interface buffer**: `IFACE_SLOTS` words that carry values from one construct to the next, per
  launch.
"""

from __future__ import annotations

import struct

from .types import ArrayType, DType

HEADER_BYTES = 128
RET_OFFSET = 64
HDR_CODE, HDR_MSG, HDR_INDEX, HDR_EXTENT, HDR_PRINT, HDR_RNG, HDR_IFACE = 0, 8, 16, 24, 32, 40, 48
"""Header words: error code, failing op's message number, index and extent of a failed bounds check,
print callback, random key of the launch, interface buffer pointer."""
HEADER = struct.Struct("<7q")
"""The header as a launcher writes it before each unit (offsets HDR_CODE ... HDR_IFACE)."""
IFACE_SLOTS = 64
MAX_CHUNKS = 64
"""Most chunks a parallel task is cut into (its reduction partials have this many slots)."""

INT_FORMATS = {
    "i8": "b7x",
    "i16": "h6x",
    "i32": "i4x",
    "i64": "q",
    "u1": "?7x",
    "u8": "B7x",
    "u16": "H6x",
    "u32": "I4x",
    "u64": "Q",
}
"""How an integer argument fills its word."""


def arg_words(params: list) -> list[int]:
    """The first word of each parameter (`ir.Param`s)."""
    words, out = 0, []
    for p in params:
        out.append(words)
        words += (2 + p.type.ndim) if isinstance(p.type, ArrayType) else 1
    return out


def words_struct(params: list) -> struct.Struct:
    """Packs a launch's argument words (per array: data, gradient, extents; per scalar: its
    value)."""
    fmt = "<"
    for p in params:
        t = p.type
        if isinstance(t, ArrayType):
            fmt += "qq" + "i4x" * t.ndim  # an extent must fit the i32 index
        else:
            fmt += _scalar_format(t)
    return struct.Struct(fmt)


def array_words(data: int, grad: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    """An array argument's words."""
    return (data, grad, *shape)


def _scalar_format(t: DType) -> str:
    if t.is_float:
        return "f4x" if t.bits == 32 else "d"
    return INT_FORMATS[t.name]
