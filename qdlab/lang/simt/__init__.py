"""`qd.simt` (`quadrants.lang.simt`): the GPU's block, grid, subgroup and warp intrinsics. The
modules and every name in them exist on every arch (programs reach them in GPU branches); a
kernel that calls one compiles on no arch qdlab targets yet, and says so, naming it."""

from __future__ import annotations

from . import block, grid, subgroup, warp

__all__ = ["block", "grid", "subgroup", "warp"]
