"""`qd.types`: the annotation namespace, as a package, since Quadrants code imports its submodules
(`quadrants.types.primitive_types`, `quadrants.types.annotations`).

The names themselves live with the language (`qdlab.core.language.types`); this module hands out
every one of them, so a name added there is here too.
"""

from __future__ import annotations

from ..core.language import types as namespace
from ..core.types import DType
from . import annotations, enums, primitive_types, quant
from .primitive_types import *

__all__ = [  # noqa: PLE0604
    "annotations",
    "enums",
    "primitive_types",
    "quant",
    "is_integral",
    "is_real",
    "is_signed",
    *primitive_types.__all__,
]


def is_signed(dt: DType) -> bool:
    """`qd.types.is_signed(qd.i8)`: a signed integer type (floats count as signed, as in
    Quadrants)."""
    return dt.is_signed or dt.is_float


def is_integral(dt: DType) -> bool:
    return dt.is_int


def is_real(dt: DType) -> bool:
    return dt.is_float


def __getattr__(name: str) -> object:
    try:
        return getattr(namespace, name)
    except AttributeError:
        raise AttributeError(f"module 'qdlab.types' has no attribute '{name}'") from None
