"""`qd.algorithms.exclusive_scan_{add,min,max}`: `out[i] = op(arr[0:i])`, `out[0]` the identity,
for `i < n`; and `exclusive_scan_scratch_slots`, the reference's size of its scratch.

One serial loop at the caller's kernel's top level (see `_reduce`): a float sum runs left to
right in the element dtype, so `exclusive_scan_add` gives NumPy's `cumsum` in that dtype shifted
by one, bit for bit. `arr` is read before `out` is written at each index, so `out` may be `arr`.
"""

from __future__ import annotations

from ..core.language import func, static, template
from ..core.types import i32
from ._reduce import (
    ADD,
    BLOCK_DIM,
    MAX,
    MIN,
    at_least_one,
    cast,
    check_dtype,
    check_op_depth,
    depth_for,
    fold,
    level_partials_slots,
    typed_identity,
)


@func
def _scan(
    arr: template(),
    out: template(),
    n: i32,
    dtype: template(),
    log256_max_n: template(),
    op: template(),
):
    """The exclusive scan of `arr[0:n]` into `out[0:n]`; the arguments checked at compile time."""
    static(check_op_depth(log256_max_n))
    static(check_dtype(dtype))
    for _ in range(1):
        acc = typed_identity(dtype, op)
        for i in range(n):
            value = cast(arr[i], dtype)
            out[i] = acc
            acc = fold(acc, value, op)


@func(requires_top_level=True)
def exclusive_scan_add(
    arr: template(),
    out: template(),
    scratch: template(),
    n: i32,
    dtype: template(),
    log256_max_n: template(),
):
    """`out[i] = sum(arr[0:i])` for `i < n` (integers wrap). Call at the top level of a kernel;
    `dtype` one of i32 u32 f32 i64 u64 f64; `scratch` is not used here."""
    _scan(arr, out, n, dtype, log256_max_n, ADD)


@func(requires_top_level=True)
def exclusive_scan_min(
    arr: template(),
    out: template(),
    scratch: template(),
    n: i32,
    dtype: template(),
    log256_max_n: template(),
):
    """`out[i] = min(arr[0:i])`, `out[0]` the dtype's largest value (`+inf` for floats)."""
    _scan(arr, out, n, dtype, log256_max_n, MIN)


@func(requires_top_level=True)
def exclusive_scan_max(
    arr: template(),
    out: template(),
    scratch: template(),
    n: i32,
    dtype: template(),
    log256_max_n: template(),
):
    """`out[i] = max(arr[0:i])`, `out[0]` the dtype's smallest value (`-inf` for floats)."""
    _scan(arr, out, n, dtype, log256_max_n, MAX)


def scan_total_scratch_slots(n: int, partials_cursor: int) -> int:
    """The highest scratch slot an in-place scan of `n` elements with its partials from
    `partials_cursor` reaches (the reference's `_scan_total_scratch_slots`)."""
    return level_partials_slots(n, partials_cursor)


def exclusive_scan_scratch_slots(n: int, log256_max_n: template() = None) -> int:
    """Scratch slots `exclusive_scan_{add,min,max}` take for `n` elements (`u32` slots for 4-byte
    dtypes, `u64` for 8-byte ones): the first level's `ceil(n / 256)` partials and those of the
    `log256_max_n - 2` levels above, at least 1. Callable on the host and, with `log256_max_n`
    given, in a kernel."""
    depth = static(depth_for(n, log256_max_n))
    cursor = 0
    if static(depth > 1):
        cursor = (n + (BLOCK_DIM - 1)) // BLOCK_DIM
        cur = cursor
        for _ in static(range(depth - 2)):
            cur = (cur + (BLOCK_DIM - 1)) // BLOCK_DIM
            cursor = cursor + cur
    return at_least_one(cursor)
