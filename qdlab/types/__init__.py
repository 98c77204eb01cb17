"""`qd.types`: the annotation namespace, as a package, since Quadrants code imports its submodules
(`quadrants.types.primitive_types`, `quadrants.types.annotations`).

The names themselves live with the language (`qdlab.lang.types`); this module hands out every one
of them, so a name added there is here too.
"""

from __future__ import annotations

from ..lang import types as namespace
from . import annotations, primitive_types
from .primitive_types import *

__all__ = ["annotations", "primitive_types", *primitive_types.__all__]  # noqa: PLE0604


def __getattr__(name: str) -> object:
    try:
        return getattr(namespace, name)
    except AttributeError:
        raise AttributeError(f"module 'qdlab.types' has no attribute '{name}'") from None
