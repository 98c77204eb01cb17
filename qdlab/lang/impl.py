"""`quadrants.lang.impl`: the runtime hooks Quadrants programs and tests reach for.

`current_cfg()` is the live view of the active settings (`qd.cfg`); `get_runtime()` answers the
questions Quadrants' runtime object answers (the default types, the number of kernels compiled, the
program's config) and carries the `materialize` / `clear` hooks programs patch on `PyQuadrants`
(`qdlab/host/pyquadrants.py` says where qdlab calls them). Nothing here is a second copy of qdlab's
state: each attribute reads or changes `qdlab.host.state`.
"""

from __future__ import annotations

from ..core.errors import QuadrantsSyntaxError
from ..host import api, pyquadrants
from ..host.kernel import Kernel
from ..host.pyquadrants import Program, PyQuadrants

__all__ = [
    "Kernel",
    "Program",
    "PyQuadrants",
    "QuadrantsSyntaxError",
    "current_cfg",
    "get_runtime",
]


def current_cfg() -> api.Settings:
    """The active settings (the same object as `qd.cfg`)."""
    return api.cfg


def get_runtime() -> PyQuadrants:
    """The live runtime object (a fresh one after each `qd.init` / `qd.reset`)."""
    return pyquadrants.current
