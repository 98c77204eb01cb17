"""`quadrants.lang.impl`: the runtime hooks Quadrants programs and tests reach for.

`current_cfg()` is the live view of the active settings (`qd.cfg`); `get_runtime()` answers the
questions Quadrants' runtime object answers (the default types, the number of kernels compiled, the
program's config) and carries the `materialize` / `clear` hooks programs patch on `PyQuadrants`
(`qdlab/host/pyquadrants.py` says where qdlab calls them). Nothing here is a second copy of qdlab's
state: each attribute reads or changes `qdlab.host.state`.
"""

from __future__ import annotations

from ..core.errors import QuadrantsSyntaxError
from ..core.language import Builtin, qd_bool, qd_float, qd_int
from ..host import api, pyquadrants, state
from ..host.kernel import Kernel
from ..host.pyquadrants import Program, PyQuadrants

__all__ = [
    "Kernel",
    "Program",
    "PyQuadrants",
    "QuadrantsSyntaxError",
    "call_internal",
    "current_cfg",
    "get_max_shared_memory_bytes",
    "get_runtime",
    "qd_bool",
    "qd_float",
    "qd_int",
]


def current_cfg() -> api.Settings:
    """The active settings (the same object as `qd.cfg`)."""
    return api.cfg


def get_runtime() -> PyQuadrants:
    """The live runtime object (a fresh one after each `qd.init` / `qd.reset`)."""
    return pyquadrants.current


def get_max_shared_memory_bytes(*, is_lowerbound_ok: bool) -> int:
    """The shared memory a block may use, in bytes: the device's (its opt-in maximum) under
    `arch=qd.cuda`; on the CPU, which has no shared memory, 0 when a lower bound will do, else a
    RuntimeError, as in Quadrants."""
    arch = state.config().arch
    if arch == "cuda":
        import cupy  # lazy: only where a GPU is the target

        attributes = cupy.cuda.Device().attributes
        return int(
            attributes.get("MaxSharedMemoryPerBlockOptin", attributes["MaxSharedMemoryPerBlock"])
        )
    if is_lowerbound_ok:
        return 0
    raise RuntimeError(f"get_max_shared_memory_bytes not implemented for arch {api.cfg.arch.name}")


call_internal = Builtin("call_internal")
"""`impl.call_internal(name, *args)` in a kernel: one of Quadrants' internal runtime functions
(`compiler/frontend/builtins.py`'s `INTERNAL_FUNCTIONS` lists those qdlab has)."""
