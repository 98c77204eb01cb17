"""`qd.simt.subgroup`: subgroup (warp / wave) barriers, votes, ballots, shuffles, reductions,
scans and sorts. GPU-only: qdlab compiles them for no arch yet, so a kernel using one fails to
compile, naming it (Quadrants' CPU backend aborts there). `group_size()` is 0 on the CPU, as
Quadrants' is. The deprecated names `barrier`, `memory_barrier` and `ballot_full_subgroup` warn
once a process and forward to `sync`, `mem_fence` and `ballot`, looked up when called, as there."""

from __future__ import annotations

import warnings

from ...core.language import DeviceIntrinsic
from ._intrinsics import arch as _arch

all_equal = DeviceIntrinsic("qd.simt.subgroup.all_equal", _arch)
all_equal_tiled = DeviceIntrinsic("qd.simt.subgroup.all_equal_tiled", _arch)
all_true = DeviceIntrinsic("qd.simt.subgroup.all_true", _arch)
all_true_tiled = DeviceIntrinsic("qd.simt.subgroup.all_true_tiled", _arch)
any_true = DeviceIntrinsic("qd.simt.subgroup.any_true", _arch)
any_true_tiled = DeviceIntrinsic("qd.simt.subgroup.any_true_tiled", _arch)
ballot = DeviceIntrinsic("qd.simt.subgroup.ballot", _arch)
ballot_first_n = DeviceIntrinsic("qd.simt.subgroup.ballot_first_n", _arch)
bitonic_sort_kv = DeviceIntrinsic("qd.simt.subgroup.bitonic_sort_kv", _arch)
bitonic_sort_kv_tiled = DeviceIntrinsic("qd.simt.subgroup.bitonic_sort_kv_tiled", _arch)
broadcast = DeviceIntrinsic("qd.simt.subgroup.broadcast", _arch)
broadcast_first = DeviceIntrinsic("qd.simt.subgroup.broadcast_first", _arch)
elect = DeviceIntrinsic("qd.simt.subgroup.elect", _arch)
exclusive_add = DeviceIntrinsic("qd.simt.subgroup.exclusive_add", _arch)
exclusive_add_tiled = DeviceIntrinsic("qd.simt.subgroup.exclusive_add_tiled", _arch)
exclusive_and = DeviceIntrinsic("qd.simt.subgroup.exclusive_and", _arch)
exclusive_and_tiled = DeviceIntrinsic("qd.simt.subgroup.exclusive_and_tiled", _arch)
exclusive_max = DeviceIntrinsic("qd.simt.subgroup.exclusive_max", _arch)
exclusive_max_tiled = DeviceIntrinsic("qd.simt.subgroup.exclusive_max_tiled", _arch)
exclusive_min = DeviceIntrinsic("qd.simt.subgroup.exclusive_min", _arch)
exclusive_min_tiled = DeviceIntrinsic("qd.simt.subgroup.exclusive_min_tiled", _arch)
exclusive_mul = DeviceIntrinsic("qd.simt.subgroup.exclusive_mul", _arch)
exclusive_mul_tiled = DeviceIntrinsic("qd.simt.subgroup.exclusive_mul_tiled", _arch)
exclusive_or = DeviceIntrinsic("qd.simt.subgroup.exclusive_or", _arch)
exclusive_or_tiled = DeviceIntrinsic("qd.simt.subgroup.exclusive_or_tiled", _arch)
exclusive_xor = DeviceIntrinsic("qd.simt.subgroup.exclusive_xor", _arch)
exclusive_xor_tiled = DeviceIntrinsic("qd.simt.subgroup.exclusive_xor_tiled", _arch)
inclusive_add = DeviceIntrinsic("qd.simt.subgroup.inclusive_add", _arch)
inclusive_add_tiled = DeviceIntrinsic("qd.simt.subgroup.inclusive_add_tiled", _arch)
inclusive_and = DeviceIntrinsic("qd.simt.subgroup.inclusive_and", _arch)
inclusive_and_tiled = DeviceIntrinsic("qd.simt.subgroup.inclusive_and_tiled", _arch)
inclusive_max = DeviceIntrinsic("qd.simt.subgroup.inclusive_max", _arch)
inclusive_max_tiled = DeviceIntrinsic("qd.simt.subgroup.inclusive_max_tiled", _arch)
inclusive_min = DeviceIntrinsic("qd.simt.subgroup.inclusive_min", _arch)
inclusive_min_tiled = DeviceIntrinsic("qd.simt.subgroup.inclusive_min_tiled", _arch)
inclusive_mul = DeviceIntrinsic("qd.simt.subgroup.inclusive_mul", _arch)
inclusive_mul_tiled = DeviceIntrinsic("qd.simt.subgroup.inclusive_mul_tiled", _arch)
inclusive_or = DeviceIntrinsic("qd.simt.subgroup.inclusive_or", _arch)
inclusive_or_tiled = DeviceIntrinsic("qd.simt.subgroup.inclusive_or_tiled", _arch)
inclusive_xor = DeviceIntrinsic("qd.simt.subgroup.inclusive_xor", _arch)
inclusive_xor_tiled = DeviceIntrinsic("qd.simt.subgroup.inclusive_xor_tiled", _arch)
invocation_id = DeviceIntrinsic("qd.simt.subgroup.invocation_id", _arch)
lanemask_eq = DeviceIntrinsic("qd.simt.subgroup.lanemask_eq", _arch)
lanemask_ge = DeviceIntrinsic("qd.simt.subgroup.lanemask_ge", _arch)
lanemask_gt = DeviceIntrinsic("qd.simt.subgroup.lanemask_gt", _arch)
lanemask_le = DeviceIntrinsic("qd.simt.subgroup.lanemask_le", _arch)
lanemask_lt = DeviceIntrinsic("qd.simt.subgroup.lanemask_lt", _arch)
mem_fence = DeviceIntrinsic("qd.simt.subgroup.mem_fence", _arch)
reduce_add = DeviceIntrinsic("qd.simt.subgroup.reduce_add", _arch)
reduce_add_tiled = DeviceIntrinsic("qd.simt.subgroup.reduce_add_tiled", _arch)
reduce_all_add = DeviceIntrinsic("qd.simt.subgroup.reduce_all_add", _arch)
reduce_all_add_tiled = DeviceIntrinsic("qd.simt.subgroup.reduce_all_add_tiled", _arch)
reduce_all_max = DeviceIntrinsic("qd.simt.subgroup.reduce_all_max", _arch)
reduce_all_max_tiled = DeviceIntrinsic("qd.simt.subgroup.reduce_all_max_tiled", _arch)
reduce_all_min = DeviceIntrinsic("qd.simt.subgroup.reduce_all_min", _arch)
reduce_all_min_tiled = DeviceIntrinsic("qd.simt.subgroup.reduce_all_min_tiled", _arch)
reduce_max = DeviceIntrinsic("qd.simt.subgroup.reduce_max", _arch)
reduce_max_tiled = DeviceIntrinsic("qd.simt.subgroup.reduce_max_tiled", _arch)
reduce_min = DeviceIntrinsic("qd.simt.subgroup.reduce_min", _arch)
reduce_min_tiled = DeviceIntrinsic("qd.simt.subgroup.reduce_min_tiled", _arch)
segmented_reduce_add = DeviceIntrinsic("qd.simt.subgroup.segmented_reduce_add", _arch)
segmented_reduce_add_tiled = DeviceIntrinsic("qd.simt.subgroup.segmented_reduce_add_tiled", _arch)
segmented_reduce_max = DeviceIntrinsic("qd.simt.subgroup.segmented_reduce_max", _arch)
segmented_reduce_max_tiled = DeviceIntrinsic("qd.simt.subgroup.segmented_reduce_max_tiled", _arch)
segmented_reduce_min = DeviceIntrinsic("qd.simt.subgroup.segmented_reduce_min", _arch)
segmented_reduce_min_tiled = DeviceIntrinsic("qd.simt.subgroup.segmented_reduce_min_tiled", _arch)
shuffle = DeviceIntrinsic("qd.simt.subgroup.shuffle", _arch)
shuffle_down = DeviceIntrinsic("qd.simt.subgroup.shuffle_down", _arch)
shuffle_up = DeviceIntrinsic("qd.simt.subgroup.shuffle_up", _arch)
shuffle_xor = DeviceIntrinsic("qd.simt.subgroup.shuffle_xor", _arch)
sync = DeviceIntrinsic("qd.simt.subgroup.sync", _arch)


def group_size() -> int:
    """The subgroup's lane count on the current arch, a Python int: none on the CPU (0)."""
    return 32 if _arch() == "cuda" else 0


def log2_group_size() -> int:
    """`log2(group_size())`; asserts a power of two (on the CPU, 0 is not)."""
    size = group_size()
    assert size > 0 and (size & (size - 1)) == 0, f"subgroup size {size} is not a power of two"
    return size.bit_length() - 1


_barrier_deprecation_warned = False
_memory_barrier_deprecation_warned = False
_ballot_full_subgroup_deprecation_warned = False


def barrier() -> object:
    """Deprecated name of `sync`: warns on the first call of the process."""
    global _barrier_deprecation_warned
    if not _barrier_deprecation_warned:
        _barrier_deprecation_warned = True
        warnings.warn(
            "qd.simt.subgroup.barrier() is deprecated; use qd.simt.subgroup.sync() instead "
            "(matching block.sync()).",
            DeprecationWarning,
            stacklevel=2,
        )
    return sync()


def memory_barrier() -> object:
    """Deprecated name of `mem_fence`: warns on the first call of the process."""
    global _memory_barrier_deprecation_warned
    if not _memory_barrier_deprecation_warned:
        _memory_barrier_deprecation_warned = True
        warnings.warn(
            "qd.simt.subgroup.memory_barrier() is deprecated; use qd.simt.subgroup.mem_fence() "
            "instead (matching the planned block.mem_fence() / grid.mem_fence()).",
            DeprecationWarning,
            stacklevel=2,
        )
    return mem_fence()


def ballot_full_subgroup(predicate: object) -> object:
    """Deprecated name of `ballot`: warns on the first call of the process."""
    global _ballot_full_subgroup_deprecation_warned
    if not _ballot_full_subgroup_deprecation_warned:
        _ballot_full_subgroup_deprecation_warned = True
        warnings.warn(
            "qd.simt.subgroup.ballot_full_subgroup() is deprecated; use qd.simt.subgroup.ballot() "
            "instead (full-subgroup ops are unsuffixed; tiled forms use _tiled, e.g. "
            "reduce_add_tiled).",
            DeprecationWarning,
            stacklevel=2,
        )
    return ballot(predicate)


__all__ = [
    "all_equal",
    "all_equal_tiled",
    "all_true",
    "all_true_tiled",
    "any_true",
    "any_true_tiled",
    "ballot",
    "ballot_first_n",
    "ballot_full_subgroup",
    "barrier",
    "bitonic_sort_kv",
    "bitonic_sort_kv_tiled",
    "broadcast",
    "broadcast_first",
    "elect",
    "exclusive_add",
    "exclusive_add_tiled",
    "exclusive_and",
    "exclusive_and_tiled",
    "exclusive_max",
    "exclusive_max_tiled",
    "exclusive_min",
    "exclusive_min_tiled",
    "exclusive_mul",
    "exclusive_mul_tiled",
    "exclusive_or",
    "exclusive_or_tiled",
    "exclusive_xor",
    "exclusive_xor_tiled",
    "group_size",
    "inclusive_add",
    "inclusive_add_tiled",
    "inclusive_and",
    "inclusive_and_tiled",
    "inclusive_max",
    "inclusive_max_tiled",
    "inclusive_min",
    "inclusive_min_tiled",
    "inclusive_mul",
    "inclusive_mul_tiled",
    "inclusive_or",
    "inclusive_or_tiled",
    "inclusive_xor",
    "inclusive_xor_tiled",
    "invocation_id",
    "lanemask_eq",
    "lanemask_ge",
    "lanemask_gt",
    "lanemask_le",
    "lanemask_lt",
    "log2_group_size",
    "mem_fence",
    "memory_barrier",
    "reduce_add",
    "reduce_add_tiled",
    "reduce_all_add",
    "reduce_all_add_tiled",
    "reduce_all_max",
    "reduce_all_max_tiled",
    "reduce_all_min",
    "reduce_all_min_tiled",
    "reduce_max",
    "reduce_max_tiled",
    "reduce_min",
    "reduce_min_tiled",
    "segmented_reduce_add",
    "segmented_reduce_add_tiled",
    "segmented_reduce_max",
    "segmented_reduce_max_tiled",
    "segmented_reduce_min",
    "segmented_reduce_min_tiled",
    "shuffle",
    "shuffle_down",
    "shuffle_up",
    "shuffle_xor",
    "sync",
]
