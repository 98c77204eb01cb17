"""`qd.algorithms.PrefixSumExecutor(length)`: the deprecated in-place inclusive prefix sum of the
first `length` elements of an `i32` field (`.run(arr)`).

Quadrants warns on construction (a `DeprecationWarning`, its words), refuses other dtypes in
`run` with a `RuntimeError`, and runs only on CUDA and Vulkan (on its CPU backend `run` raises
`RuntimeError: Arch.x64 is not supported for prefix sum.`). qdlab runs it on the CPU, on the host
(NumPy's `cumsum` in `i32`, which wraps as the GPU's adds do), for fields and ndarrays. The
constructor allocates the reference's buffer (`large_arr`, unused here), so a length below 2 fails
as there (a field cannot have 0 elements).
"""

from __future__ import annotations

import warnings

import numpy as np

from ..core.errors import QuadrantsIndexError
from ..core.types import i32
from ..host.field import field
from ._merge_network import host_view

DEPRECATION = (
    "qd.algorithms.PrefixSumExecutor is deprecated. Use qd.algorithms.exclusive_scan_add (the "
    "@qd.func) instead. See docs/source/user_guide/algorithms.md for migration."
)
BLOCK_SIZE = 64
"""The block of the reference's Kogge-Stone hierarchy (its buffer layout, `ele_nums`)."""


class PrefixSumExecutor:
    """Inclusive in-place prefix sum of a 1-D `i32` field of `length` elements (deprecated)."""

    def __init__(self, length: int) -> None:
        warnings.warn(DEPRECATION, DeprecationWarning, stacklevel=2)
        self.sorting_length = length
        self.ele_nums = [length]
        self.ele_nums_pos = [0]
        count, start = length, 0
        while count > 1:
            count = (count + BLOCK_SIZE - 1) // BLOCK_SIZE
            start += BLOCK_SIZE * count
            self.ele_nums.append(count)
            self.ele_nums_pos.append(start)
        self.large_arr = field(i32, shape=start)  # the reference's buffer (and its error for 0)

    def run(self, input_arr: object) -> None:
        """`input_arr[i] = sum(input_arr[0:i+1])` for `i < length`, in place."""
        if getattr(input_arr, "dtype", None) != i32:
            raise RuntimeError("Only qd.i32 type is supported for prefix sum.")
        arr, store = host_view(input_arr, "input_arr", "PrefixSumExecutor.run")
        length = self.sorting_length
        if arr.ndim != 1 or arr.shape[0] < length:
            raise QuadrantsIndexError(
                f"qd.algorithms.PrefixSumExecutor.run: input_arr (shape {tuple(arr.shape)}) must "
                f"be 1-D with at least the executor's {length} elements"
            )
        np.cumsum(arr[:length], dtype=np.int32, out=arr[:length])
        if store is not None:
            store()
