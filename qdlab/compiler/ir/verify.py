"""`verify(kernel)`: the IR invariants every pass relies on. Tests call it after every pass."""

from __future__ import annotations

from ...core.types import ArrayType, DType, LocalType
from .. import ir


class VerifyError(Exception):
    """The IR broke an invariant: a compiler bug, never a user error."""


def verify(kernel: ir.Kernel, replayed: frozenset[int] = frozenset()) -> None:
    """`replayed`: the ids of top-level ops the statement memo replayed (`stmt_memo.py`), built
    from rows of ops that passed here when their statement was lowered: only what they define is
    taken in, until a pass has run over them."""
    _block(kernel.body, set(), 0, replayed)
    args = {op.result for op in kernel.body.ops if isinstance(op, ir.Arg)}
    for fn in ir.functions_of(kernel):  # a function sees its parameters and the kernel's arrays
        _block(fn.body, args, 0)
        if not fn.body.ops or not isinstance(fn.body.ops[-1], ir.Result):
            raise VerifyError(f"function {fn.name} does not end with its result")


_LOOP_EXITS = (ir.Break, ir.Continue)
_ON_LOCALS = (ir.LocalLoad, ir.LocalStore, ir.LocalAtomic)
_ON_ARRAYS = (ir.Load, ir.Store, ir.Atomic, ir.AtomicCas, ir.VolatileLoad)
_RESULT_TYPES = (DType, ArrayType, LocalType)
_kinds: dict[type, tuple[bool, bool, bool, bool, bool, bool]] = {}
"""Per op class, which checks apply: (loop exit, local op, array op, binary, loop, gives a
value)."""


def _kind(cls: type[ir.Op]) -> tuple[bool, bool, bool, bool, bool, bool]:
    got = _kinds.get(cls)
    if got is None:
        got = _kinds[cls] = (
            issubclass(cls, _LOOP_EXITS),
            issubclass(cls, _ON_LOCALS),
            issubclass(cls, _ON_ARRAYS),
            issubclass(cls, (ir.BinOp, ir.Cmp)),
            issubclass(cls, (ir.For, ir.Loop)),
            ir.gives_value(cls),
        )
    return got


def _int_exponent(op: ir.Op) -> bool:
    """A float raised to an integer (`x ** n`), which keeps its integer exponent."""
    base, exp = (v.type for v in op.operands)
    pow_ = isinstance(op, ir.BinOp) and op.attrs.get("op") == "pow" and op.result.type == base
    floats = isinstance(base, DType) and base.is_float
    return pow_ and floats and isinstance(exp, DType) and not exp.is_float


def _block(
    block: ir.Block, visible: set[ir.Value], loops: int, replayed: frozenset[int] = frozenset()
) -> None:
    """Check `block`; `visible` holds the values defined before it and is left as it was given
    (what the block defines is taken out again after it: one set for the whole walk, where a copy
    per block is quadratic in a Genesis kernel's 10^4 blocks)."""
    added = [a for a in block.args if a not in visible]
    visible.update(added)
    try:
        for op in block.ops:
            if id(op) not in replayed:
                _op(op, block, visible, loops)
            if op.result is not None and op.result not in visible:
                visible.add(op.result)
                added.append(op.result)
    finally:
        visible.difference_update(added)


def _op(op: ir.Op, block: ir.Block, visible: set[ir.Value], loops: int) -> None:
    if op.parent is not block:
        raise VerifyError(f"{op.name} has a stale parent")
    for v in op.operands:
        if v not in visible:
            raise VerifyError(f"{op.name} uses {v} before its definition or outside its scope")
        if op not in v.users:
            raise VerifyError(f"{op.name} is missing from the users of {v}")
    exit_, on_local, on_array, binary, loop, valued = _kind(type(op))
    if exit_ and loops == 0:
        raise VerifyError(f"{op.name} outside a loop")
    if on_local and not isinstance(op.operands[0].type, LocalType):
        raise VerifyError(f"{op.name} on a non-local")
    if on_array and not isinstance(op.operands[0].type, ArrayType):
        raise VerifyError(f"{op.name} on a non-array")
    if binary and op.operands[0].type != op.operands[1].type and not _int_exponent(op):
        raise VerifyError(
            f"{op.name} {op.attrs} mixes {op.operands[0].type} and {op.operands[1].type}"
        )
    if valued and op.result is None:
        raise VerifyError(f"{op.name} has no result")
    if op.result is not None:
        if not isinstance(op.result.type, _RESULT_TYPES):
            raise VerifyError(f"{op.name} has a result of unknown type")
        for u in op.result.users:
            if op.result not in u.operands:
                raise VerifyError(f"stale user of {op.name}")
    inner_loops = loops + loop
    for r in op.regions:
        if r.parent is not op:
            raise VerifyError(f"region of {op.name} has a stale parent")
        _block(r, visible, inner_loops)
