"""EliminateCommonSubexpressions: a pure op equal to an earlier one in scope reuses its result.

Two pure ops of the same class, attributes and operands compute the same value. An op in a nested
block may reuse one from an enclosing block that comes before it; never the other way round.
"""

from __future__ import annotations

from .. import ir

CSE_OPS = (ir.Const, ir.Arg, ir.Shape, ir.BinOp, ir.Cmp, ir.Unary, ir.Cast, ir.Select)


class EliminateCommonSubexpressions:
    name = "eliminate-common-subexpressions"
    feeds = frozenset({"eliminate-dead-code"})
    """Its own work it finishes in one run (an op's users come after it, and are keyed with the
    value it reuses); a reused value is as constant as the one it replaces."""

    def run(self, kernel: ir.Kernel) -> bool:
        eraser = ir.Eraser()
        changed = self.block(kernel.body, {}, eraser)
        for fn in ir.functions_of(kernel):  # a function's body: in a scope of its own
            changed |= self.block(fn.body, {}, eraser)
        eraser.done()
        return changed

    def block(self, block: ir.Block, seen: dict, eraser: ir.Eraser) -> bool:
        changed = False
        scope = dict(seen)
        for op in list(block.ops):
            if isinstance(op, CSE_OPS):
                key = (
                    type(op),
                    tuple(map(id, op.operands)),
                    ir.attrs_key(op.attrs),
                    op.result.type,  # frozen: equal when its text is
                )
                if key in scope:
                    ir.replace_all_uses(op.result, scope[key])
                    eraser.erase(op)
                    changed = True
                    continue
                scope[key] = op.result
            for r in op.regions:
                changed |= self.block(r, scope, eraser)
        return changed
