"""`qd.simt.block`: block (workgroup) barriers, thread indices, shared arrays and block-wide
reductions and scans. GPU-only in Quadrants: on the CPU a kernel using one fails to compile
(`qd.block.sync is not supported for arch Arch.x64`, a `ValueError`), as there; qdlab compiles
them for no arch yet, so they fail so on every arch."""

from __future__ import annotations

from ...core.language import DeviceIntrinsic
from ._intrinsics import arch as _arch
from ._intrinsics import arch_uses_spv

sync = DeviceIntrinsic("qd.block.sync", _arch)
sync_all_nonzero = DeviceIntrinsic("qd.block.sync_all_nonzero", _arch)
sync_any_nonzero = DeviceIntrinsic("qd.block.sync_any_nonzero", _arch)
sync_count_nonzero = DeviceIntrinsic("qd.block.sync_count_nonzero", _arch)
mem_fence = DeviceIntrinsic("qd.block.mem_fence", _arch)
mem_sync = DeviceIntrinsic("qd.block.mem_sync", _arch)
thread_idx = DeviceIntrinsic("qd.block.thread_idx", _arch)
global_thread_idx = DeviceIntrinsic("qd.block.global_thread_idx", _arch)
reduce = DeviceIntrinsic("qd.block.reduce", _arch)
reduce_all = DeviceIntrinsic("qd.block.reduce_all", _arch)
reduce_add = DeviceIntrinsic("qd.block.reduce_add", _arch)
reduce_min = DeviceIntrinsic("qd.block.reduce_min", _arch)
reduce_max = DeviceIntrinsic("qd.block.reduce_max", _arch)
reduce_all_add = DeviceIntrinsic("qd.block.reduce_all_add", _arch)
reduce_all_min = DeviceIntrinsic("qd.block.reduce_all_min", _arch)
reduce_all_max = DeviceIntrinsic("qd.block.reduce_all_max", _arch)
inclusive_scan = DeviceIntrinsic("qd.block.inclusive_scan", _arch)
exclusive_scan = DeviceIntrinsic("qd.block.exclusive_scan", _arch)
inclusive_add = DeviceIntrinsic("qd.block.inclusive_add", _arch)
inclusive_min = DeviceIntrinsic("qd.block.inclusive_min", _arch)
inclusive_max = DeviceIntrinsic("qd.block.inclusive_max", _arch)
exclusive_add = DeviceIntrinsic("qd.block.exclusive_add", _arch)
exclusive_min = DeviceIntrinsic("qd.block.exclusive_min", _arch)
exclusive_max = DeviceIntrinsic("qd.block.exclusive_max", _arch)
radix_rank_match_atomic_or = DeviceIntrinsic("qd.block.radix_rank_match_atomic_or", _arch)


class SharedArray:
    """`qd.simt.block.SharedArray(shape, dtype)`: an array in a GPU block's shared memory. Its
    shape is checked as Quadrants checks it; making one in a kernel is refused (Quadrants' CPU
    backend cannot link one)."""

    _is_quadrants_class = True

    def __init__(self, shape: object, dtype: object) -> None:
        if isinstance(shape, int):
            self.shape: tuple[int, ...] = (shape,)
        elif isinstance(shape, (tuple, list)) and all(isinstance(s, int) for s in shape):
            self.shape = tuple(shape)
        else:
            raise ValueError(
                "qd.simt.block.shared_array shape must be an integer or a tuple of integers, but "
                f"got {shape}"
            )
        self.dtype = dtype
        DeviceIntrinsic("qd.simt.block.SharedArray", _arch)()


__all__ = [
    "SharedArray",
    "arch_uses_spv",
    "exclusive_add",
    "exclusive_max",
    "exclusive_min",
    "exclusive_scan",
    "global_thread_idx",
    "inclusive_add",
    "inclusive_max",
    "inclusive_min",
    "inclusive_scan",
    "mem_fence",
    "mem_sync",
    "radix_rank_match_atomic_or",
    "reduce",
    "reduce_add",
    "reduce_all",
    "reduce_all_add",
    "reduce_all_max",
    "reduce_all_min",
    "reduce_max",
    "reduce_min",
    "sync",
    "sync_all_nonzero",
    "sync_any_nonzero",
    "sync_count_nonzero",
    "thread_idx",
]
