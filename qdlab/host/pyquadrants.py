"""The runtime object `quadrants.lang.impl.get_runtime()` answers with (`PyQuadrants`), and the two
hooks programs patch on its class: `materialize` and `clear`.

Quadrants calls `materialize()` before storage must exist (a kernel variant's first compile, a
field's first host access, a DLPack export, `qd.sync()`), and `clear()` when `qd.init` / `qd.reset`
ends the runtime. Programs wrap them: Genesis defers the fill of a field still being declared to
the next `materialize()` and drops what is pending at `clear()`. So qdlab calls them at the same
points, with no exceptions: `materialize()` before every kernel launch (a superset of the
reference's first-compile point, so a deferred fill is never read stale by an already compiled
kernel), before every host access to a field's storage and at `qd.sync()`; `clear()` at every
`qd.init` / `qd.reset`, after which `get_runtime()` is a fresh object, as in Quadrants.

The runtime also tracks the live `qd.ndarray`s made under it (`ndarrays`, a weak set: tracking keeps
none alive, and passing one to a kernel adds nothing); `restart` releases each of them after the
fresh runtime replaces it, as Quadrants' `reset()` does (`Ndarray._reset`).

qdlab allocates a field on first use and has no tree to close, so its own `materialize()` only
records that it ran; what a program adds around it is what matters. A call that arrives while one
is running (the program's fill launching a kernel) runs again, as there.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..core.types import DType
from . import state

if TYPE_CHECKING:
    from .api import Settings
    from .ndarray import Ndarray

CHECKS: list[Callable[[], None]] = []
TREE_FINISHERS: list[Callable[[], None]] = []
"""What ends the layout tree being built (`field.close_tree`, registered as it loads)."""
"""What `materialize()` checks (`field.check_declared`, which registers itself as it loads)."""
API: dict = {}
"""`cfg` (`qd.cfg`) and `sync` (`qd.sync`), which `qdlab.host.api` puts here as it loads (it imports
this module, as do the kernel and array modules it stands on)."""


class Program:
    """`get_runtime().prog`: the program's config and its synchronisation."""

    def config(self) -> Settings:
        return API["cfg"]

    def synchronize(self) -> None:
        API["sync"]()

    # Quadrants' graph introspection. qdlab has no graph cache: a `graph=True` kernel launches its
    # tasks as any kernel does, as Quadrants does on the CPU.
    def get_graph_cache_size(self) -> int:
        return 0

    def get_graph_cache_used_on_last_call(self) -> bool:
        return False

    def get_graph_num_nodes_on_last_call(self) -> int:
        return 0

    def get_graph_num_checkpoints_on_last_call(self) -> int:
        return 0

    def get_num_offloaded_tasks_on_last_call(self) -> int:
        """The tasks the latest kernel launch ran."""
        units = getattr(state.last_launcher, "units", None) or []
        return sum(len(u.fns) for u in units)

    def get_graph_last_yield_cp_id_on_last_call(self) -> int:
        """The internal index of the checkpoint that paused the latest launch; -1: none."""
        return state.last_yield


class PyQuadrants:
    """`get_runtime()`: default types, compile counts, the program, and the `materialize` / `clear`
    hooks (looked up on the class at each call, so a patch of `PyQuadrants.materialize` applies
    to the live object)."""

    def __init__(self) -> None:
        self.materialized = False
        self.fields_checked = False
        """The program's first materialize passed its checks (`field.check_declared`): as in
        Quadrants, the fields declared after it are not checked."""
        self.prog = Program()
        self.ndarrays: weakref.WeakSet[Ndarray] = weakref.WeakSet()
        """The `qd.ndarray`s made under this runtime and still alive (their gradients too), held
        weakly; `restart` releases them."""

    def materialize_root_fb(self, is_first_call: bool) -> None:
        """Quadrants' finalization of the layout tree under `qd.root`: the levels made from here
        on form a tree of their own."""
        for finish in TREE_FINISHERS:
            finish()

    def materialize(self) -> None:
        """Storage must exist from here on (see the module's docstring for when it is called):
        the fields declared since the last call are checked as Quadrants checks them (placed,
        their gradients and duals placed, a matrix's members of one shape: `CHECKS`)."""
        self.materialized = True
        for check in CHECKS:
            check()

    def clear(self) -> None:
        """The runtime ends (`qd.init`, `qd.reset`)."""
        self.materialized = False

    @property
    def default_fp(self) -> DType:
        return state.config().default_fp

    @default_fp.setter
    def default_fp(self, dtype: DType) -> None:
        self.prog.config().default_fp = dtype

    @property
    def default_ip(self) -> DType:
        return state.config().default_ip

    @default_ip.setter
    def default_ip(self, dtype: DType) -> None:
        self.prog.config().default_ip = dtype

    def set_default_fp(self, dtype: DType) -> None:
        self.default_fp = dtype

    def set_default_ip(self, dtype: DType) -> None:
        self.default_ip = dtype

    def get_num_compiled_functions(self) -> int:
        """Kernel variants compiled since the latest `qd.init`: one per kernel and argument-type
        signature."""
        return state.compiled_count

    def sync(self) -> None:
        self.prog.synchronize()

    def __getattr__(self, name: str) -> object:
        if name in ("print_full_traceback", "short_circuit_operators", "unrolling_limit"):
            return getattr(self.prog.config(), name)
        raise AttributeError(f"qdlab's runtime has no attribute `{name}`")


current = PyQuadrants()
"""The live runtime object; replaced at each `qd.init` / `qd.reset` (after its `clear()`)."""


def materialize() -> None:
    current.materialize()


def restart() -> None:
    """`qd.init` / `qd.reset`: the old runtime's `clear()`, then a fresh one, then the release of
    every ndarray the old one tracked (their storage is freed; using one raises). The old runtime's
    set keeps its entries, as Quadrants' does."""
    global current
    old = current
    old.clear()
    current = PyQuadrants()
    for nd in list(old.ndarrays):
        nd._reset()
