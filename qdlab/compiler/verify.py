"""`verify(kernel)`: the IR invariants every pass relies on. Tests call it after every pass."""

from __future__ import annotations

from . import ir
from .types import ArrayType, DType, LocalType


class VerifyError(Exception):
    """The IR broke an invariant: a compiler bug, never a user error."""


def verify(kernel: ir.Kernel) -> None:
    _block(kernel.body, set(), 0)
    args = {op.result for op in kernel.body.ops if isinstance(op, ir.Arg)}
    for fn in ir.functions_of(kernel):  # a function sees its parameters and the kernel's arrays
        _block(fn.body, args, 0)  # type: ignore[arg-type]
        if not fn.body.ops or not isinstance(fn.body.ops[-1], ir.Result):
            raise VerifyError(f"function {fn.name} does not end with its result")


def _block(block: ir.Block, visible: set[ir.Value], loops: int) -> None:
    visible = visible | set(block.args)
    for op in block.ops:
        if op.parent is not block:
            raise VerifyError(f"{op.name} has a stale parent")
        for v in op.operands:
            if v not in visible:
                raise VerifyError(f"{op.name} uses {v} before its definition or outside its scope")
            if op not in v.users:
                raise VerifyError(f"{op.name} is missing from the users of {v}")
        if isinstance(op, (ir.Break, ir.Continue)) and loops == 0:
            raise VerifyError(f"{op.name} outside a loop")
        if isinstance(op, (ir.LocalLoad, ir.LocalStore, ir.LocalAtomic)) and not isinstance(
            op.operands[0].type, LocalType
        ):
            raise VerifyError(f"{op.name} on a non-local")
        if isinstance(op, (ir.Load, ir.Store, ir.Atomic, ir.VolatileLoad)) and not isinstance(
            op.operands[0].type, ArrayType
        ):
            raise VerifyError(f"{op.name} on a non-array")
        if isinstance(op, (ir.BinOp, ir.Cmp)) and op.operands[0].type != op.operands[1].type:
            raise VerifyError(
                f"{op.name} {op.attrs} mixes {op.operands[0].type} and {op.operands[1].type}"
            )
        if op.result is not None:
            if not isinstance(op.result.type, (DType, ArrayType, LocalType)):
                raise VerifyError(f"{op.name} has a result of unknown type")
            for u in op.result.users:
                if op.result not in u.operands:
                    raise VerifyError(f"stale user of {op.name}")
        inner_loops = loops + isinstance(op, (ir.For, ir.Loop))
        for r in op.regions:
            if r.parent is not op:
                raise VerifyError(f"region of {op.name} has a stale parent")
            _block(r, visible, inner_loops)
        if op.result is not None:
            visible = visible | {op.result}
