"""`quadrants.types.enums`: the enumerations Quadrants programs name (`qd.Layout.SOA`, ...).

In Quadrants they come from its C++ core; here they are Python enums with the same members. A
field's layout (`layout=qd.Layout.SOA` on `qd.field`, `qd.Vector.field`, a struct's `.field`)
decides where its components sit in memory and never a value, so qdlab's fields accept it and lay
every field out one way.
"""

from __future__ import annotations

import enum

from ..core.fields import AutodiffMode, Layout, SNodeGradType


class BoundaryMode(enum.Enum):
    UNSAFE = 0
    CLAMP = 1


def to_boundary_enum(boundary: str) -> BoundaryMode:
    if boundary == "clamp":
        return BoundaryMode.CLAMP
    if boundary == "unsafe":
        return BoundaryMode.UNSAFE
    raise ValueError(f"Invalid boundary argument: {boundary}. Valid options: 'unsafe', 'clamp'")


__all__ = ["AutodiffMode", "BoundaryMode", "Layout", "SNodeGradType", "to_boundary_enum"]
