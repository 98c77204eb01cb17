"""`qd.algorithms.sort`: a stable LSB radix sort of the first `n[()]` keys (and values), 8 bits a
pass over the low `end_bit` bits, as Quadrants' `sort` defines it: each pass moves the data
`keys -> tmp_keys` or back (values alike), so after an even pass count the result is in `keys`;
signed and float keys are mapped to an order-preserving unsigned pattern before the first pass and
back after the last (negatives first, as `numpy.sort`). `scratch` (u32, `sort_scratch_slots`
slots) holds the digit histogram.

The reference spreads each pass over the GPU's blocks (histogram, scan, scatter as separate
launches); here each pass is one serial loop (a CPU has few cores and the sort is stable by
construction), called at the top level of the caller's kernel like the reference's.
"""

from __future__ import annotations

from ..core.language import BUILTINS, func, static, template
from ..core.types import f32, f64, i32, i64, u32, u64
from ._reduce import (
    BLOCK_DIM,
    at_least_one,
    check_op_depth,
    depth_for,
    reduce_depth_for_n,
)

bit_cast = BUILTINS["bit_cast"]

RADIX_BITS = 8
RADIX_DIGITS = 1 << RADIX_BITS


def key_width(dtype: object) -> int:
    if dtype in (u32, i32, f32):
        return 32
    if dtype in (u64, i64, f64):
        return 64
    raise NotImplementedError(f"sort key dtype {dtype} not supported")


def _min_log256_for_n(n: int) -> int:
    """The smallest `log256_max_n >= 1` with `256 ** log256_max_n >= n` (at the reference's
    private path: its tests size their sorts with it)."""
    return reduce_depth_for_n(n)


@func
def _twiddle(
    keys: template(), n: i32, key_dtype: template(), width: template(), forward: template()
):
    """Signed / float keys <-> an unsigned pattern with the same order (forward before the first
    pass; the inverse after the last picks its mask from the output's sign bit)."""
    for i in range(n):
        if static(width == 32):
            v = bit_cast(keys[i], u32)
            if static(key_dtype == i32):
                keys[i] = bit_cast(v ^ u32(0x80000000), key_dtype)
            else:
                negative = (v & u32(0x80000000)) != u32(0)
                if static(forward):
                    negative = not negative
                if negative:
                    keys[i] = bit_cast(v ^ u32(0x80000000), key_dtype)
                else:
                    keys[i] = bit_cast(v ^ u32(0xFFFFFFFF), key_dtype)
        else:
            w = bit_cast(keys[i], u64)
            if static(key_dtype == i64):
                keys[i] = bit_cast(w ^ u64(0x8000000000000000), key_dtype)
            else:
                negative = (w & u64(0x8000000000000000)) != u64(0)
                if static(forward):
                    negative = not negative
                if negative:
                    keys[i] = bit_cast(w ^ u64(0x8000000000000000), key_dtype)
                else:
                    keys[i] = bit_cast(w ^ u64(0xFFFFFFFFFFFFFFFF), key_dtype)


@func
def _digit(key: template(), shift: template(), width: template()) -> i32:
    out = 0
    if static(width == 32):
        out = i32((bit_cast(key, u32) >> u32(shift)) & u32(0xFF))
    else:
        out = i32((bit_cast(key, u64) >> u64(shift)) & u64(0xFF))
    return out


@func
def _pass(
    src: template(),
    dst: template(),
    vsrc: template(),
    vdst: template(),
    scratch: template(),
    n: i32,
    shift: template(),
    width: template(),
    has_values: template(),
):
    """One digit: histogram into scratch[0:256], exclusive scan, stable scatter src -> dst."""
    for _ in range(1):
        if n > 0:  # n = 0: the scratch may be the one slot `sort_scratch_slots(0)` gives
            for d in range(RADIX_DIGITS):
                scratch[d] = u32(0)
            for i in range(n):
                scratch[_digit(src[i], shift, width)] += u32(1)
            total = u32(0)
            for d in range(RADIX_DIGITS):
                count = scratch[d]
                scratch[d] = total
                total += count
            for i in range(n):
                digit = _digit(src[i], shift, width)
                at = i32(scratch[digit])
                scratch[digit] += u32(1)
                dst[at] = src[i]
                if static(has_values):
                    vdst[at] = vsrc[i]


@func(requires_top_level=True)
def sort(
    keys: template(),
    tmp_keys: template(),
    values: template(),
    tmp_values: template(),
    scratch: template(),
    n: template(),
    key_dtype: template(),
    has_values: template(),
    end_bit: template(),
    log256_max_n: template(),
):
    """Sort `keys[0:n[()]]` (with `values` when `has_values`); see the module's docstring.
    `n` is a 0-d i32 array read on the device; `key_dtype` one of u32 i32 f32 u64 i64 f64."""
    static(check_op_depth(log256_max_n))
    width = static(key_width(key_dtype))
    twiddle = static(key_dtype in (i32, f32, i64, f64))
    count = n[()]
    if static(twiddle):
        _twiddle(keys, count, key_dtype, width, True)
    for p in static(range(end_bit // RADIX_BITS)):
        if static(p % 2 == 0):
            _pass(
                keys,
                tmp_keys,
                values,
                tmp_values,
                scratch,
                count,
                p * RADIX_BITS,
                width,
                has_values,
            )
        else:
            _pass(
                tmp_keys,
                keys,
                tmp_values,
                values,
                scratch,
                count,
                p * RADIX_BITS,
                width,
                has_values,
            )
    if static(twiddle):
        _twiddle(keys, count, key_dtype, width, False)


def sort_scratch_slots(n: int, log256_max_n: template() = None) -> int:
    """The u32 scratch slots `sort` needs for `n` keys, by the reference's formula (tile histograms
    plus its scan's partials; qdlab's sort uses the first 256), so one allocation fits both.
    Callable on the host and, with `log256_max_n` given, in a kernel."""
    depth = static(depth_for(n, log256_max_n))
    hist_len = (n + BLOCK_DIM - 1) // BLOCK_DIM * RADIX_DIGITS
    cursor = hist_len
    nn = hist_len
    for _ in static(range(depth - 1)):
        nn = (nn + BLOCK_DIM - 1) // BLOCK_DIM
        cursor = cursor + nn
    return at_least_one(cursor)
