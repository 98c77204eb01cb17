"""ForwardStores: a local's load that the last store before it gave a constant reads the constant.

Quadrants forwards a local's stores to its later loads within a task before it folds constants, so
`x = -7` then `x //= 2` divides two constants, which it folds toward zero (`fold_constants.py`):
-3, where a division at run time floors to -4. PromoteLocals sees a local assigned once; this pass
sees one assigned again. Only constants are forwarded, and each op they complete is folded at once,
so a chain (`x //= 2; x //= 2`) folds in one walk, as Quadrants' does.

Safe because the walk goes in program order through straight-line code and into `if` branches,
holding the constant each local was last given: a store of anything else, or an op whose regions
store the local, forgets it, and a loop's body starts knowing nothing (its loads may see a later
iteration's store, and Quadrants does not forward into a parallel loop either). Only locals that
are just loaded and stored take part: one reduced into atomically is left alone.
"""

from __future__ import annotations

from .. import ir
from .fold_constants import FOLDABLE, FoldConstants, all_constant


class ForwardStores:
    name = "forward-stores"
    feeds = frozenset({"fold-constants", "eliminate-common-subexpressions", "eliminate-dead-code"})
    """A forwarded constant may complete a fold or equal another; a local all of whose loads were
    forwarded is left unread."""

    def __init__(self) -> None:
        self.fold = FoldConstants()

    def run(self, kernel: ir.Kernel) -> bool:
        allocas = [op for op in kernel.walk() if isinstance(op, ir.Alloca)]
        plain = {
            a.result
            for a in allocas
            if all(isinstance(u, (ir.LocalLoad, ir.LocalStore)) for u in a.result.users)
            and any(isinstance(u, ir.LocalLoad) for u in a.result.users)
        }
        if not plain:
            return False
        stored_in: dict[ir.Op, set[ir.Value]] = {}
        for ref in plain:  # each op with regions: the locals stored somewhere inside it
            for store in ref.users:
                if isinstance(store, ir.LocalStore):
                    block = store.parent
                    while block is not None and block.parent is not None:
                        stored_in.setdefault(block.parent, set()).add(ref)
                        block = block.parent.parent
        self.changed = False
        self.settled: set[ir.Value] = set()
        self.walk(kernel.body, {}, plain, stored_in)
        return self.changed

    def walk(
        self,
        block: ir.Block,
        known: dict[ir.Value, ir.Value],
        plain: set[ir.Value],
        stored_in: dict[ir.Op, set[ir.Value]],
    ) -> None:
        """Forward through `block`, `known` holding each local's constant on entry."""
        for op in list(block.ops):
            if op.parent is None:
                continue  # folded away while forwarding an earlier load
            if isinstance(op, ir.LocalStore) and op.operands[0] in plain:
                value = self.settle(op.operands[1])
                if isinstance(value.owner, ir.Const):
                    known[op.operands[0]] = value
                else:
                    known.pop(op.operands[0], None)
            elif isinstance(op, ir.LocalLoad) and op.operands[0] in known:
                self.forward(op, known[op.operands[0]])
            elif op.regions:
                inner = known if isinstance(op, ir.If) else {}
                for region in op.regions:
                    self.walk(region, dict(inner), plain, stored_in)
                for ref in stored_in.get(op, ()):
                    known.pop(ref, None)

    def settle(self, v: ir.Value) -> ir.Value:
        """`v`, or the constant it folds to (`qd.i32(-7)`, a sum of constants): what a store of it
        gives the local, as FoldConstants, which runs after this pass, would leave it. A value once
        settled is not walked again (an autodiff kernel's shared subexpressions made the walk
        exponential): it stays settled, since `forward` folds the users of each constant it
        makes."""
        op = v.owner
        if v in self.settled or not isinstance(op, FOLDABLE) or op.parent is None:
            return v
        for operand in list(op.operands):
            self.settle(operand)
        const = self.fold.replace(op) if all_constant(op) else None
        if const is None:
            self.settled.add(v)
            return v
        self.changed = True
        return const.result

    def forward(self, load: ir.LocalLoad, value: ir.Value) -> None:
        """`load` replaced by `value`, then each op that leaves with constant operands folded, and
        the ops that their constants complete, in turn."""
        work = list(load.result.users)
        ir.replace_all_uses(load.result, value)
        ir.erase(load)
        self.changed = True
        while work:
            op = work.pop()
            if op.parent is not None and all_constant(op):
                const = self.fold.replace(op)
                if const is not None:
                    work.extend(const.result.users)
