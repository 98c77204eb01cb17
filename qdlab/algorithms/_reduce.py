"""`qd.algorithms.reduce_{add,min,max}` and what the other device algorithms share with them: the
capacity `log256_max_n` (its cap and the reference's error), the scratch-size arithmetic, the
element dtypes and the identity of each operation.

Quadrants emits each algorithm as a staircase of GPU phases over tiles of `BLOCK_DIM` threads,
staged through a caller-owned scratch buffer; its CPU backend refuses them (the block barrier they
use does not exist there). qdlab runs them on the CPU as one serial loop inside the caller's
kernel, at its top level like the reference's: integer results are the reference's bit for bit,
a float sum is accumulated left to right in the element dtype (the GPU's tree order depends on the
device's subgroup width). The scratch is accepted and left untouched, and the `*_scratch_slots`
helpers give the reference's sizes, so a program allocates the same buffers on both.
"""

from __future__ import annotations

import struct

from ..core.errors import QdCompileNotImplementedError, QdCompileValueError
from ..core.language import BUILTINS, func, static, template
from ..core.types import f32, f64, i32, i64, u32, u64

cast = BUILTINS["cast"]
bit_cast = BUILTINS["bit_cast"]

BLOCK_DIM = 256
"""The reference's tile: each level of its staircase divides the count by this many."""
MAX_LOG256_MAX_N = 4
"""The deepest staircase the reference accepts: 256**4 = 2**32 covers any i32-indexed tensor."""
MAX_SCRATCH_LEVELS = 8
"""Levels the branch-free slot arithmetic unrolls (256**8 = 2**64: past any tensor)."""

ADD, MIN, MAX = "add", "min", "max"

DTYPES_4B = (i32, u32, f32)
DTYPES_8B = (i64, u64, f64)
MIN_IDENTITY = {
    i32: (1 << 31) - 1,
    u32: (1 << 32) - 1,
    f32: float("inf"),
    i64: (1 << 63) - 1,
    u64: (1 << 64) - 1,
    f64: float("inf"),
}
MAX_IDENTITY = {
    i32: -(1 << 31),
    u32: 0,
    f32: float("-inf"),
    i64: -(1 << 63),
    u64: 0,
    f64: float("-inf"),
}


def validate_log256_max_n(log256_max_n: int) -> None:
    """The reference's cap on the capacity, in its words (a `ValueError`)."""
    if log256_max_n > MAX_LOG256_MAX_N:
        raise ValueError(
            f"log256_max_n={log256_max_n} exceeds the maximum of {MAX_LOG256_MAX_N}. Quadrants "
            "tensors are indexed by signed 32-bit integers, so they hold at most 2**31 - 1 "
            f"elements; BLOCK_DIM ** {MAX_LOG256_MAX_N} == 256 ** {MAX_LOG256_MAX_N} == 2**32 "
            "already covers that range, so a larger depth can never address a valid tensor."
        )


def check_op_depth(log256_max_n: object) -> None:
    """An op's compile-time capacity: an int from 1 to `MAX_LOG256_MAX_N` (the reference's error
    above it, raised while compiling; below 1 the reference recurses without end, and the slot
    helpers accept it, as there)."""
    if not isinstance(log256_max_n, int) or isinstance(log256_max_n, bool):
        raise QdCompileValueError(
            f"log256_max_n must be a compile-time int, not {type(log256_max_n).__name__}"
        )
    try:
        validate_log256_max_n(log256_max_n)
    except ValueError as e:
        raise QdCompileValueError(str(e)) from None
    if log256_max_n < 1:
        raise QdCompileValueError(f"log256_max_n={log256_max_n} must be at least 1")


def check_dtype(dtype: object) -> None:
    """The element dtypes of reduce and scan, with the reference's words (raised while
    compiling)."""
    if dtype not in DTYPES_4B + DTYPES_8B:
        raise QdCompileNotImplementedError(f"device reduce dtype {dtype} not supported")


def identity_bits(dtype: object, op: str) -> int:
    """The bits of the value `op` leaves unchanged in `dtype`: 0 for add, the dtype's largest value
    for min (`+inf` for floats), its smallest for max. Bits, as a literal that size would not fit
    the default integer type."""
    check_dtype(dtype)
    value = {MIN: MIN_IDENTITY, MAX: MAX_IDENTITY}[op][dtype] if op != ADD else 0
    width = 4 if dtype in DTYPES_4B else 8
    if dtype in (f32, f64):
        return int.from_bytes(struct.pack("<f" if width == 4 else "<d", value), "little")
    return value & ((1 << (8 * width)) - 1)


def reduce_depth_for_n(n: int) -> int:
    """The smallest `log256_max_n >= 1` with `256 ** log256_max_n >= n`."""
    depth = 1
    cap = BLOCK_DIM
    while cap < n:
        cap *= BLOCK_DIM
        depth += 1
    return depth


_reduce_depth_for_n = reduce_depth_for_n
"""At the reference's private path too: its tests size their ops with it."""


def at_least_one(slots: int) -> int:
    """`max(slots, 1)` for `slots >= 0`, branch-free as the reference writes it."""
    return slots + (slots < 1)


def level_partials_slots(n: int, start_cursor: int = 0) -> int:
    """The scratch the per-level partials of an `n`-element scan take above `start_cursor`:
    each level turns the count into `ceil(t / BLOCK_DIM)` partials, kept while more than one.
    Branch-free, so it also compiles in a kernel on a count the kernel reads."""
    cursor = start_cursor
    t = n
    for _ in static(range(MAX_SCRATCH_LEVELS)):
        t = (t + BLOCK_DIM - 1) // BLOCK_DIM
        cursor = cursor + t * (t > 1)
    return cursor


def depth_for(n: int, log256_max_n: int | None) -> int:
    """The capacity a slot helper sizes for: the given one (checked), or the smallest covering
    `n`, which needs `n` known (on the host, or a constant in a kernel), as in the reference."""
    if log256_max_n is None:
        log256_max_n = reduce_depth_for_n(n)
    validate_log256_max_n(log256_max_n)
    return log256_max_n


def reduce_scratch_slots(n: int, log256_max_n: template() = None) -> int:
    """Scratch slots `reduce_{add,min,max}` take for `n` elements (`u32` slots for 4-byte dtypes,
    `u64` for 8-byte ones): the partials of each level but the last, at least 1. Without
    `log256_max_n`, the smallest depth that covers `n`. Callable on the host and, with
    `log256_max_n` given, in a kernel (`n` then may be a count the kernel reads)."""
    depth = static(depth_for(n, log256_max_n))
    cursor = 0
    cur = n
    for _ in static(range(depth - 1)):
        cur = (cur + (BLOCK_DIM - 1)) // BLOCK_DIM
        cursor = cursor + cur
    return at_least_one(cursor)


@func
def typed_identity(dtype: template(), op: template()):
    """The identity of `op` as a `dtype` value."""
    bits = static(identity_bits(dtype, op))
    out = cast(0, dtype)
    if static(dtype in DTYPES_4B):
        out = bit_cast(u32(bits), dtype)
    else:
        out = bit_cast(u64(bits), dtype)
    return out


@func
def fold(acc: template(), value: template(), op: template()):
    """`acc op value` for op add, min or max (min and max skip a NaN, as the GPU's do)."""
    out = acc
    if static(op == ADD):
        out = acc + value
    elif static(op == MIN):
        out = min(acc, value)
    else:
        out = max(acc, value)
    return out


@func
def _reduce(
    arr: template(),
    out: template(),
    n: i32,
    dtype: template(),
    log256_max_n: template(),
    op: template(),
):
    """`out[0] = op(arr[0:n])`, the identity for `n <= 0`; the arguments checked at compile time."""
    static(check_op_depth(log256_max_n))
    static(check_dtype(dtype))
    for _ in range(1):
        acc = typed_identity(dtype, op)
        for i in range(n):
            acc = fold(acc, cast(arr[i], dtype), op)
        out[0] = acc


@func(requires_top_level=True)
def reduce_add(
    arr: template(),
    out: template(),
    scratch: template(),
    n: i32,
    dtype: template(),
    log256_max_n: template(),
):
    """`out[0] = sum(arr[0:n])`, summed left to right in `dtype` (integers wrap). Call at the top
    level of a kernel; `dtype` one of i32 u32 f32 i64 u64 f64; `scratch` is not used here."""
    _reduce(arr, out, n, dtype, log256_max_n, ADD)


@func(requires_top_level=True)
def reduce_min(
    arr: template(),
    out: template(),
    scratch: template(),
    n: i32,
    dtype: template(),
    log256_max_n: template(),
):
    """`out[0] = min(arr[0:n])` (the dtype's largest value, or `+inf`, for `n == 0`)."""
    _reduce(arr, out, n, dtype, log256_max_n, MIN)


@func(requires_top_level=True)
def reduce_max(
    arr: template(),
    out: template(),
    scratch: template(),
    n: i32,
    dtype: template(),
    log256_max_n: template(),
):
    """`out[0] = max(arr[0:n])` (the dtype's smallest value, or `-inf`, for `n == 0`)."""
    _reduce(arr, out, n, dtype, log256_max_n, MAX)
