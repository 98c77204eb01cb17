"""`quadrants.algorithms`: device-wide algorithms, most composed into the caller's kernel at its
top level (`reduce_*`, `exclusive_scan_*`, `select`, `reduce_by_key_add`, the radix `sort`), each
with a `*_scratch_slots` helper giving the reference's size of its caller-owned scratch; and the
deprecated host-called `parallel_sort` and `PrefixSumExecutor`. Quadrants runs these on GPUs
only; qdlab runs them on the CPU with the reference's results (see docs/lang/algorithms.md)."""

from ._merge_network import parallel_sort
from ._prefix_sum import PrefixSumExecutor
from ._radix_sort import sort, sort_scratch_slots
from ._reduce import reduce_add, reduce_max, reduce_min, reduce_scratch_slots
from ._reduce_by_key import reduce_by_key_add, reduce_by_key_scratch_slots
from ._scan import (
    exclusive_scan_add,
    exclusive_scan_max,
    exclusive_scan_min,
    exclusive_scan_scratch_slots,
)
from ._select import select, select_scratch_slots

__all__ = [
    "PrefixSumExecutor",
    "exclusive_scan_add",
    "exclusive_scan_max",
    "exclusive_scan_min",
    "exclusive_scan_scratch_slots",
    "parallel_sort",
    "reduce_add",
    "reduce_by_key_add",
    "reduce_by_key_scratch_slots",
    "reduce_max",
    "reduce_min",
    "reduce_scratch_slots",
    "select",
    "select_scratch_slots",
    "sort",
    "sort_scratch_slots",
]
