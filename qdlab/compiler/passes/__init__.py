"""Simplify passes. One pass per file, one job per pass; `run_passes` applies them until nothing
changes."""

from __future__ import annotations

from collections.abc import Callable

from ..ir import Kernel
from .eliminate_common_subexpressions import EliminateCommonSubexpressions
from .eliminate_dead_code import EliminateDeadCode
from .fold_constants import FoldConstants
from .promote_locals import PromoteLocals

SIMPLIFY = (PromoteLocals(), FoldConstants(), EliminateCommonSubexpressions(), EliminateDeadCode())
"""The simplify pipeline, in order."""

OnPass = Callable[[str, Kernel], None]


def run_passes(
    kernel: Kernel, passes: tuple = SIMPLIFY, on_pass: OnPass | None = None, max_rounds: int = 8
) -> None:
    """Apply `passes` in order, repeating while any of them changes the kernel; call `on_pass` after
    each."""
    for _ in range(max_rounds):
        changed = False
        for p in passes:
            if p.run(kernel):
                changed = True
            if on_pass is not None:
                on_pass(p.name, kernel)
        if not changed:
            return
