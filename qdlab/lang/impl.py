"""`quadrants.lang.impl`: the runtime hooks Quadrants programs and tests reach for.

`current_cfg()` is the live view of the active settings (`qd.cfg`); `get_runtime()` answers the
questions Quadrants' runtime object answers (the default types, the number of kernels compiled, the
program's config). Nothing here is a second copy of qdlab's state: each attribute reads or changes
`qdlab.state`.
"""

from __future__ import annotations

from .. import api, state
from ..compiler.errors import QuadrantsSyntaxError
from ..compiler.types import DType
from ..kernel import Kernel

__all__ = ["Kernel", "QuadrantsSyntaxError", "current_cfg", "get_runtime"]


def current_cfg() -> api.Settings:
    """The active settings (the same object as `qd.cfg`)."""
    return api.cfg


class Program:
    """`get_runtime().prog`: the program's config."""

    def config(self) -> api.Settings:
        return api.cfg


class Runtime:
    """`get_runtime()`: default types, compile counts, and the program."""

    prog = Program()

    @property
    def default_fp(self) -> DType:
        return state.config().default_fp

    @default_fp.setter
    def default_fp(self, dtype: DType) -> None:
        api.cfg.default_fp = dtype

    @property
    def default_ip(self) -> DType:
        return state.config().default_ip

    @default_ip.setter
    def default_ip(self, dtype: DType) -> None:
        api.cfg.default_ip = dtype

    def set_default_fp(self, dtype: DType) -> None:
        self.default_fp = dtype

    def set_default_ip(self, dtype: DType) -> None:
        self.default_ip = dtype

    def get_num_compiled_functions(self) -> int:
        """Kernel variants compiled since the latest `qd.init`: one per kernel and argument-type
        signature."""
        return state.compiled_count

    def sync(self) -> None:
        api.sync()

    def __getattr__(self, name: str) -> object:
        if name in ("print_full_traceback", "short_circuit_operators", "unrolling_limit"):
            return getattr(api.cfg, name)
        raise AttributeError(f"qdlab's runtime has no attribute `{name}`")


_runtime = Runtime()


def get_runtime() -> Runtime:
    return _runtime
