"""`qd.algorithms.select`: stream compaction. `out` gets the `arr[i]` whose `flags[i]` is non-zero,
in input order, and `num_out[0]` their count; `select_scratch_slots`, the reference's size of its
`u32` scratch.

The reference prefix-sums the flags as counts (it does not normalise them): `arr[i]` goes to
`out[flags[0] + ... + flags[i-1]]`, and the count is that sum up to `n - 1` plus one if
`flags[n-1]` is set. With 0/1 flags, as it requires, that is plain compaction; qdlab does the same
arithmetic (in `i32`), so other flags give the reference's indices too. One serial loop at the
caller's kernel's top level (see `_reduce`); the scratch is not used. For `n == 0`, where the
reference reads before its buffers, the count is 0.
"""

from __future__ import annotations

from ..core.language import func, static, template
from ..core.types import i32
from ._reduce import BLOCK_DIM, at_least_one, check_op_depth
from ._scan import scan_total_scratch_slots


@func(requires_top_level=True)
def select(
    arr: template(),
    flags: template(),
    out: template(),
    num_out: template(),
    scratch: template(),
    n: i32,
    log256_max_n: template(),
):
    """Pack the `arr[i]` with `flags[i] != 0` (`i < n`) into a dense prefix of `out`, in order;
    `num_out[0]` the count. Any element type `out[j] = arr[i]` can copy. Call at the top level of
    a kernel."""
    static(check_op_depth(log256_max_n))
    for _ in range(1):
        at = 0
        before_last = 0
        last = 0
        for i in range(n):
            flag = i32(flags[i])
            if flag != 0:
                out[at] = arr[i]
            before_last = at
            last = i32(flag != 0)
            at += flag
        num_out[0] = before_last + last


def select_scratch_slots(n: int) -> int:
    """`u32` scratch slots `select` takes for `n` elements: the `n` indices and the partials of the
    scan above them, at least 1."""
    pos = n > 0
    b0 = (n + BLOCK_DIM - 1) // BLOCK_DIM
    return at_least_one(scan_total_scratch_slots(b0, partials_cursor=n + b0) * pos)
