"""`quadrants.algorithms`: device algorithms composed into the caller's kernel. So far the LSB radix
`sort` (a `@qd.func` called at the top level of a kernel) and `sort_scratch_slots` (the size of the
caller-owned `u32` scratch it needs, the reference's formula, so a program sizes its buffers the
same on both)."""

from __future__ import annotations

from .merge_network import parallel_sort
from .radix_sort import sort, sort_scratch_slots

__all__ = ["parallel_sort", "sort", "sort_scratch_slots"]
