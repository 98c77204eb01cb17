"""`qd.experimental`: `qd.experimental.real_func`, the older spelling of `qd.real_func`, kept with
a DeprecationWarning as in Quadrants."""

from __future__ import annotations

import warnings
from collections.abc import Callable

from .core.language import real_func as _real_func

__all__ = ["real_func"]


def real_func(func: Callable) -> object:
    warnings.warn(
        "qd.experimental.real_func is deprecated because it is no longer experimental. "
        "Use qd.real_func instead.",
        DeprecationWarning,
        stacklevel=2,
    )
    return _real_func(func)
