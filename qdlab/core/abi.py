"""The launch ABI: what a task finds in its argument words and in its temporary buffer.

Decided here once, for the code generators that read it and for everything that fills it: the CPU
and CUDA launchers, and on the host `qdlab.host.launch` (its `array_launch` makes every array's
words: a `qd.ndarray`'s when it is allocated, a field's when a variant is compiled, a NumPy array's
or a torch tensor's at each launch).

- **Argument words**, 8 bytes each, in parameter order: a scalar fills one word (an f32 in its low 4
  bytes; an integer in the width of its type, so packing refuses a value its type cannot hold); a
  vector or matrix by value fills one such word per entry, row-major; an array fills `2 + rank`
  words: its data pointer, its gradient buffer's pointer (0 when it has none) and its extents (each
  an i32, the width of a kernel's indices), the element's extents too for an ndarray of vectors
  (the code bakes those in; they are there so a NumPy array's shape fills the words as it is).
- **Temporary buffer**: a header of `HEADER_BYTES` (below), then the slots of values that cross
  tasks and the per-chunk partial results of reductions (`offload.Plan`). A task's return values sit
  at `ret_offset(k)`: the first `RET_WORDS` in the header, the rest (a matrix return) just after
  it, where the plan leaves room for them (`ret_bytes`).
- **Interface buffer**: `IFACE_SLOTS` words that carry values from one construct to the next, per
  launch.
"""

from __future__ import annotations

import itertools
import struct
from typing import Any

from .types import ArrayType, DType, TensorType

HEADER_BYTES = 128
RET_OFFSET = 64
HDR_CODE, HDR_MSG, HDR_INDEX, HDR_EXTENT, HDR_PRINT, HDR_RNG, HDR_IFACE, HDR_STOP = (
    *range(0, 64, 8),
)
"""Header words: error code, failing op's message number, index and extent of a failed bounds check,
print callback, random key of the launch, interface buffer pointer, and the word the host sets when
a task reported an integer overflow (debug), so that the CPU's task driver stops after that task."""
HEADER = struct.Struct("<8q")
"""The header as a launcher writes it once per launch (offsets HDR_CODE ... HDR_STOP)."""
RET_WORDS = (HEADER_BYTES - RET_OFFSET) // 8
"""Return words that fit in the header."""
IFACE_SLOTS = 64
ERR_BOUNDS, ERR_ASSERT, ERR_DEPTH = 1, 2, 3
"""Error codes a task records at HDR_CODE: a failed bounds check, a failed assertion, a call of a
recursive `@qd.real_func` deeper than MAX_CALL_DEPTH."""
MAX_CALL_DEPTH = 10_000
"""The deepest chain of real calls a task makes (each call passes its depth on). A call frame of
qdlab's functions takes ~50-100 bytes (the quick tier's most), so this stays well inside the 8 MiB
stack of the threads that run tasks (Python's main thread; the launch pool's threads, whose size
glibc takes from the same limit) even for frames ten times that; without it a recursion that never
reaches its base case overflowed the stack: a segfault, the notebook's kernel gone. Quadrants
runs 10,000 deep and crashes at 100,000."""
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


def ret_offset(k: int) -> int:
    """Byte offset in the temporary buffer of return word `k`."""
    return RET_OFFSET + 8 * k if k < RET_WORDS else HEADER_BYTES + 8 * (k - RET_WORDS)


def ret_bytes(returns: int) -> int:
    """Room after the header for the return words that do not fit in it."""
    return 8 * max(0, returns - RET_WORDS)


def param_words(t: object) -> int:
    """How many argument words a parameter of type `t` fills."""
    return _layout(t)[1]


def arg_words(params: list) -> list[int]:
    """The first word of each parameter (`ir.Param`s)."""
    words, out = 0, []
    for p in params:
        out.append(words)
        words += _layout(p.type)[1]
    return out


def words_struct(params: list) -> struct.Struct:
    """Packs a launch's argument words (per array: data, gradient, extents; per scalar: its
    value)."""
    return struct.Struct("<" + "".join([_layout(p.type)[2] for p in params]))


def _layout(t: Any) -> tuple[object, int, str]:
    """(`t`, the words a parameter of type `t` fills, their `struct` format), kept per type object
    (a Genesis kernel has ~1,000 member parameters of a few dozen types, laid out at each
    compile)."""
    got = _LAYOUTS.get(id(t))
    if got is not None and got[0] is t:
        return got
    if isinstance(t, ArrayType):
        got = (t, 2 + t.rank, "qq" + "i4x" * t.rank)  # an extent must fit the i32 index
    elif isinstance(t, TensorType):
        got = (t, t.size, _scalar_format(t.dtype) * t.size)
    else:
        got = (t, 1, _scalar_format(t))
    if len(_LAYOUTS) >= 4096:
        _LAYOUTS.clear()
    _LAYOUTS[id(t)] = got
    return got


_LAYOUTS: dict[int, tuple[object, int, str]] = {}
"""`_layout`'s, by the type's id (the entry holds the type, so the id is its own)."""


def segment_structs(params: list, cuts: tuple[int, ...]) -> list[tuple[struct.Struct, int]]:
    """`words_struct` of each run of `params` the parameter indices `cuts` divide them into, with
    the byte offset it packs at (every parameter fills whole words)."""
    layouts = [_layout(p.type) for p in params]
    starts = [0, *itertools.accumulate(words for _, words, _ in layouts)]
    return [
        (struct.Struct("<" + "".join([fmt for _, _, fmt in layouts[a:b]])), 8 * starts[a])
        for a, b in itertools.pairwise([0, *cuts, len(params)])
    ]


def array_words(data: int, grad: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    """An array argument's words."""
    return (data, grad, *shape)


def _scalar_format(t: DType) -> str:
    if t.is_float:
        return {16: "e6x", 32: "f4x"}.get(t.bits, "d")
    return INT_FORMATS[t.name]
