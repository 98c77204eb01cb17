"""`qd.sparse`: Quadrants' sparse grids: `grid`, a struct field placed on a bitmasked SNode, and
`usage`, the fraction of its cells that are active."""

from __future__ import annotations

import math

from .core.language import BUILTINS, is_active, static, template
from .core.types import f32
from .host.kernel import kernel
from .host.snode import ij, ijk, root
from .host.struct_types import Struct

grouped = BUILTINS["grouped"]

__all__ = ["grid", "usage"]


def grid(field_dict: dict, shape: tuple) -> object:
    """`qd.sparse.grid({"pos": qd.math.vec2, "mass": qd.f32}, shape=(10, 10))`: a 2-D or 3-D
    struct field whose cells are a bitmasked level's (a write activates one)."""
    if len(shape) not in (2, 3):
        raise ValueError("Only 2D and 3D sparse grids are supported")
    x = Struct.field(field_dict)
    root.bitmasked(ij if len(shape) == 2 else ijk, tuple(shape)).place(x)
    return x


@kernel
def usage(x: template()) -> f32:  # type: ignore[valid-type]
    """The fraction (in [0, 1]) of a sparse grid's cells that are active."""
    cnt = 0
    for I in grouped(x.parent()):
        if is_active(x.parent(), I):
            cnt += 1
    return cnt / static(float(math.prod(x.shape)))
