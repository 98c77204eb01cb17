"""PromoteLocals: a local assigned exactly once, at the top of its block, becomes a plain value.

Safe because the frontend creates a local at its first assignment, so every read comes after that
single store; replacing the reads with the stored value cannot change what they see. Fewer locals
make def-use chains direct, which keeps backward slices small.
"""

from __future__ import annotations

from .. import ir


class PromoteLocals:
    name = "promote-locals"
    feeds = frozenset({"fold-constants", "eliminate-common-subexpressions", "eliminate-dead-code"})
    """The passes whose work a run may make: a load replaced by the stored value may give a fold
    constant operands, two ops equal operands, or leave a value unused."""

    def run(self, kernel: ir.Kernel) -> bool:
        changed = False
        eraser = ir.Eraser()
        for alloca in [op for op in kernel.walk() if isinstance(op, ir.Alloca)]:
            ref = alloca.result
            users = list(ref.users)
            stores = [u for u in users if not isinstance(u, ir.LocalLoad)]
            if (
                len(stores) != 1
                or not isinstance(stores[0], ir.LocalStore)
                or stores[0].parent is not alloca.parent
            ):
                continue
            store = stores[0]
            value = store.operands[1]
            if not value.name and ref.name and not ref.name.startswith("_"):
                value.name = ref.name
            for load in users:
                if isinstance(load, ir.LocalLoad):
                    ir.replace_all_uses(load.result, value)
                    eraser.erase(load)
            eraser.erase(store)
            eraser.erase(alloca)
            changed = True
        eraser.done()
        return changed
