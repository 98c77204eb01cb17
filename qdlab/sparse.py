"""`qd.sparse`: Quadrants' sparse grids: `grid`, a struct field placed on a bitmasked SNode, and
`usage`, the fraction of its cells that are active."""

import math as _math

from .core.language import BUILTINS as _BUILTINS
from .core.language import is_active as _is_active
from .core.language import static as _static
from .core.language import template as _template
from .core.types import f32 as _f32
from .host.kernel import kernel as _kernel
from .host.snode import ij as _ij
from .host.snode import ijk as _ijk
from .host.snode import root as _root
from .host.struct_types import Struct as _Struct

_grouped = _BUILTINS["grouped"]
"""(Names this module uses are private: `dir(qd.sparse)` is `grid` and `usage`, as in Quadrants.)"""

__all__ = ["grid", "usage"]


def grid(field_dict: dict, shape: tuple) -> object:
    """`qd.sparse.grid({"pos": qd.math.vec2, "mass": qd.f32}, shape=(10, 10))`: a 2-D or 3-D
    struct field whose cells are a bitmasked level's (a write activates one)."""
    if len(shape) not in (2, 3):
        raise ValueError("Only 2D and 3D sparse grids are supported")
    x = _Struct.field(field_dict)
    _root.bitmasked(_ij if len(shape) == 2 else _ijk, tuple(shape)).place(x)
    return x


@_kernel
def usage(x: _template()) -> _f32:  # type: ignore[valid-type]
    """The fraction (in [0, 1]) of a sparse grid's cells that are active."""
    cnt = 0
    for I in _grouped(x.parent()):
        if _is_active(x.parent(), I):
            cnt += 1
    return cnt / _static(float(_math.prod(x.shape)))
