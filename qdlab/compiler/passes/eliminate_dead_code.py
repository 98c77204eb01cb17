"""EliminateDeadCode: remove pure ops nobody uses, reads of locals nobody uses, and locals nobody
reads.

A pure op has no effect, so removing it when its result is unused changes nothing; nor does removing
a local's load whose value is unused (a vector local read for one of its entries loads them all). A
local that is never read (no load, no atomic whose old value is used) only receives stores, and
those stores are invisible.
"""

from __future__ import annotations

from .. import ir


class EliminateDeadCode:
    name = "eliminate-dead-code"
    feeds: frozenset[str] = frozenset()
    """Removing ops makes no operands constant or equal and no local single-stored; it repeats
    itself until nothing is left to remove."""

    def run(self, kernel: ir.Kernel) -> bool:
        changed = False
        again = True
        while again:
            again = False
            eraser = ir.Eraser()
            for op in reversed(list(kernel.walk())):
                if op.parent is None:
                    continue
                if isinstance(op, ir.Alloca):
                    users = op.result.users
                    if not any(_reads(u) for u in users):
                        for u in list(users):
                            eraser.erase(u)
                        eraser.erase(op)
                        again = changed = True
                elif (
                    (op.pure or isinstance(op, ir.LocalLoad))
                    and op.result is not None
                    and not (op.result.users)
                ):
                    eraser.erase(op)
                    again = changed = True
            eraser.done()
        return changed


def _reads(op: ir.Op) -> bool:
    return isinstance(op, ir.LocalLoad) or (
        isinstance(op, ir.LocalAtomic) and op.result is not None and bool(op.result.users)
    )
