"""`qd.simt.warp`: CUDA warp intrinsics (votes, shuffles, matches, masks, the warp barrier).
GPU-only: qdlab compiles them for no arch yet, so a kernel using one fails to compile, naming it
(Quadrants' CPU backend compiles them to values of no meaning)."""

from __future__ import annotations

from ...core.language import DeviceIntrinsic
from ._intrinsics import arch as _arch

all_nonzero = DeviceIntrinsic("qd.simt.warp.all_nonzero", _arch)
any_nonzero = DeviceIntrinsic("qd.simt.warp.any_nonzero", _arch)
unique = DeviceIntrinsic("qd.simt.warp.unique", _arch)
ballot = DeviceIntrinsic("qd.simt.warp.ballot", _arch)
shfl_sync_i32 = DeviceIntrinsic("qd.simt.warp.shfl_sync_i32", _arch)
shfl_sync_f32 = DeviceIntrinsic("qd.simt.warp.shfl_sync_f32", _arch)
shfl_up_i32 = DeviceIntrinsic("qd.simt.warp.shfl_up_i32", _arch)
shfl_up_f32 = DeviceIntrinsic("qd.simt.warp.shfl_up_f32", _arch)
shfl_down_i32 = DeviceIntrinsic("qd.simt.warp.shfl_down_i32", _arch)
shfl_down_f32 = DeviceIntrinsic("qd.simt.warp.shfl_down_f32", _arch)
shfl_xor_i32 = DeviceIntrinsic("qd.simt.warp.shfl_xor_i32", _arch)
match_any = DeviceIntrinsic("qd.simt.warp.match_any", _arch)
match_all = DeviceIntrinsic("qd.simt.warp.match_all", _arch)
active_mask = DeviceIntrinsic("qd.simt.warp.active_mask", _arch)
sync = DeviceIntrinsic("qd.simt.warp.sync", _arch)

__all__ = [
    "active_mask",
    "all_nonzero",
    "any_nonzero",
    "ballot",
    "match_all",
    "match_any",
    "shfl_down_f32",
    "shfl_down_i32",
    "shfl_sync_f32",
    "shfl_sync_i32",
    "shfl_up_f32",
    "shfl_up_i32",
    "shfl_xor_i32",
    "sync",
    "unique",
]
