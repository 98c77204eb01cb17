"""Simplify passes. One pass per file, one job per pass; `run_passes` applies them until nothing
changes."""

from __future__ import annotations

from collections.abc import Callable

from ..ir import Kernel
from .eliminate_common_subexpressions import EliminateCommonSubexpressions
from .eliminate_dead_code import EliminateDeadCode
from .fold_constants import FoldConstants
from .forward_stores import ForwardStores
from .lower_powers import LowerPowers
from .promote_locals import PromoteLocals

SIMPLIFY = (
    PromoteLocals(),
    ForwardStores(),
    FoldConstants(),
    LowerPowers(),
    EliminateCommonSubexpressions(),
    EliminateDeadCode(),
)
"""The simplify pipeline, in order."""

CONSTRUCT_SIMPLIFY = (
    PromoteLocals(),
    FoldConstants(truncate=False),
    LowerPowers(),
    EliminateCommonSubexpressions(),
    EliminateDeadCode(),
)
"""SIMPLIFY for a construct's slice: integer `//` and `%` are folded in the whole kernel only
(`fold_constants.py`)."""

OnPass = Callable[[str, Kernel], None]


def run_passes(
    kernel: Kernel, passes: tuple = SIMPLIFY, on_pass: OnPass | None = None, max_rounds: int = 8
) -> None:
    """Apply `passes` in order, again while a round changed the kernel in a way that may give a
    pass of it that ran before new work; call `on_pass` after each.

    Each pass says whose work its changes may make (`feeds`); one that ran later in the round has
    seen them already. In SIMPLIFY each pass feeds only the ones after it, so one round reaches the
    fixed point, where a second round, which would change nothing, cost a third of a warm edit's
    simplify time (the random-program test checks that point on every program it makes)."""
    for _ in range(max_rounds):
        again = False
        for index, p in enumerate(passes):
            if p.run(kernel):
                again |= any(q.name in p.feeds for q in passes[: index + 1])
            if on_pass is not None:
                on_pass(p.name, kernel)
        if not again:
            return
