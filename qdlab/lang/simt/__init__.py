"""`qd.simt` (`quadrants.lang.simt`): the GPU's block, grid, subgroup and warp intrinsics, and the
register tiles. The modules and every name in them exist on every arch (programs reach them in GPU
branches); a kernel that calls one compiles on no arch qdlab targets yet, and says so, naming it."""

from __future__ import annotations

from . import block, grid, subgroup, warp
from ._tile import Tile16x16, Tile32x32

__all__ = ["Tile16x16", "Tile32x32", "block", "grid", "subgroup", "warp"]
