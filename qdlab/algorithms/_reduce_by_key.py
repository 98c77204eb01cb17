"""`qd.algorithms.reduce_by_key_add`: each run of consecutive equal keys becomes one entry,
`(its key, the sum of its values)`, and `num_runs[0]` their count; `reduce_by_key_scratch_slots`,
the reference's size of its `u32` scratch.

As in the reference, `values_out[0:n]` is zeroed first (so its slots past the runs are 0), keys
compare with `!=` (each NaN key is a run of its own), and `keys_out` past the runs is untouched.
One serial loop at the caller's kernel's top level (see `_reduce`): a run's values are added in
input order in the value dtype (the reference adds them with atomics, in no fixed order), and a
run's key is its first key (`-0.0` and `0.0` are one run). For `n == 0`, where the reference reads
before its buffers, the count is 0.
"""

from __future__ import annotations

from ..core.language import func, static, template
from ..core.types import i32
from ._reduce import BLOCK_DIM, at_least_one, cast, check_op_depth
from ._scan import scan_total_scratch_slots


@func(requires_top_level=True)
def reduce_by_key_add(
    keys_in: template(),
    values_in: template(),
    keys_out: template(),
    values_out: template(),
    num_runs: template(),
    scratch: template(),
    n: i32,
    value_dtype: template(),
    log256_max_n: template(),
):
    """Collapse the runs of equal keys in `keys_in[0:n]` into `keys_out` / `values_out` (sums of
    `values_in`), their count into `num_runs[0]`. Call at the top level of a kernel."""
    static(check_op_depth(log256_max_n))
    for _ in range(1):
        runs = 0
        total = cast(0, value_dtype)
        for i in range(n):
            head = i == 0
            if i > 0:
                head = keys_in[i] != keys_in[i - 1]
            if head:
                if runs > 0:
                    values_out[runs - 1] = total
                keys_out[runs] = keys_in[i]
                runs += 1
                total = cast(0, value_dtype)
            total = total + cast(values_in[i], value_dtype)
        if runs > 0:
            values_out[runs - 1] = total
        for i in range(runs, n):
            values_out[i] = cast(0, value_dtype)
        num_runs[0] = runs


def reduce_by_key_scratch_slots(n: int) -> int:
    """`u32` scratch slots `reduce_by_key_add` takes for `n` elements: `n` run positions (and, past
    one tile, the partials of their scan), at least 1."""
    pos = n > 0
    big = n > BLOCK_DIM
    small_pos = pos * (1 - big)
    b0 = (n + BLOCK_DIM - 1) // BLOCK_DIM
    return at_least_one(n * small_pos + scan_total_scratch_slots(b0, partials_cursor=n + b0) * big)
