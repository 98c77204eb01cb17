"""`qd.simt.grid`: the grid-wide memory fence (GPU-only, as in Quadrants; see `block`)."""

from __future__ import annotations

import warnings

from ...core.language import DeviceIntrinsic
from ._intrinsics import arch as _arch
from ._intrinsics import arch_uses_spv

mem_fence = DeviceIntrinsic("qd.simt.grid.mem_fence", _arch)


def memfence() -> object:
    """Deprecated name of `mem_fence` (it warns, as Quadrants)."""
    warnings.warn(
        "qd.simt.grid.memfence() is deprecated; use qd.simt.grid.mem_fence() instead.",
        DeprecationWarning,
        stacklevel=2,
    )
    return mem_fence()


__all__ = ["arch_uses_spv", "mem_fence", "memfence"]
