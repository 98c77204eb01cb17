"""FoldConstants: an arithmetic op whose operands are all constants becomes a constant.

Folding uses NumPy scalars of the op's own type, so it rounds and wraps exactly as the generated
code does, and flushes subnormal float operands and results to zero as kernels run
(`types.flush_subnormal`). Only ops whose compile-time result is certain to equal the run-time one
are folded (no transcendental functions, no division by a constant zero).

Integer `//` and `%` of two i32 or i64 constants fold toward zero, as C divides: Quadrants folds
them so (`x = -7` then `x // 2` is -3, `x % 2` is -1), while at run time it floors (-4 and 1). The
generated code floors; this pass gives the reference's values where it sees two constants in the
whole kernel. A construct's slice (`truncate=False`) leaves them to the code: a local its slice
recomputes may be constant there (assigned once in it) and not in the kernel, where Quadrants
reads it at run time and floors.

A float `a ** b` (and `qd.pow`) of two constants folds as Quadrants folds it: C's `pow` of the
two as doubles, rounded once to the type (`h = 0.08` then `h ** 3` is f32(0.08d ** 3), one ulp off
the f32 products `h * h * h` that run time gives). Left to the code in a construct's slice, as
`//` and `%` are. Genesis' SPH kernel `8.0 / np.pi / h**3` differed so.
"""

from __future__ import annotations

import math
from typing import Any, TypeGuard

import numpy as np

from ...core.types import INT_OPS, DType, flush_subnormal
from .. import ir

INT_FOLDS = INT_OPS
FLOAT_FOLDS = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "truediv": np.divide,
    "min": np.fmin,
    "max": np.fmax,
}
CMP_FOLDS = {
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
    "eq": np.equal,
    "ne": np.not_equal,
}


TRUNCATED = ("floordiv", "mod")
"""Integer ops that Quadrants folds toward zero (see the module's docstring)."""

Foldable = ir.BinOp | ir.Cmp | ir.Cast | ir.Unary
FOLDABLE = (ir.BinOp, ir.Cmp, ir.Cast, ir.Unary)


def scalar(v: ir.Value) -> Any:
    """The constant `v` as a numpy scalar of its dtype (numpy's stubs give those no arithmetic),
    a subnormal float read as the zero a kernel reads it as."""
    value = ir.defining_op(v).attrs["value"]
    t = v.dtype
    return t.np.type(flush_subnormal(float(value), t) if t.is_float else value)


def _python(x: Any, t: DType) -> int | float:
    return flush_subnormal(float(x), t) if t.is_float else int(x)


def truncated(op: str, a: int, b: int, t: DType) -> int:
    """`a // b` (`op` "floordiv") or `a % b` ("mod") rounded toward zero, wrapped to `t`."""
    q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
    value = q if op == "floordiv" else a - q * b
    return int(np.array(value).astype(np.int64).astype(t.np)[()]) if t.is_signed else value


def fold(op: Foldable, truncate: bool = True) -> int | float | None:
    t = op.result.dtype
    if isinstance(op, ir.BinOp) and op.attrs["op"] in TRUNCATED:
        if not (truncate and t.is_int and t.bits >= 32):
            return None
        a, b = (int(scalar(v)) for v in op.operands)
        return None if b == 0 else truncated(op.attrs["op"], a, b, t)
    if isinstance(op, ir.BinOp) and op.attrs["op"] == "pow" and t.is_float:
        if not (truncate and t.bits >= 32):
            return None
        a, b = (float(scalar(v)) for v in op.operands)
        try:
            value = math.pow(a, b)
        except (ValueError, OverflowError):
            return (
                None  # a negative base's fractional power, 0 ** -1, an overflow: left to the code
            )
        with np.errstate(all="ignore"):
            return _python(np.array(value).astype(t.np)[()], t)
    if isinstance(op, ir.BinOp):
        table = FLOAT_FOLDS if t.is_float else INT_FOLDS
        fn = table.get(op.attrs["op"])
        if fn is None:
            return None
        a, b = (scalar(v) for v in op.operands)
        with np.errstate(all="ignore"):
            return _python(fn(a, b), t)
    if isinstance(op, ir.Cmp):
        a, b = (scalar(v) for v in op.operands)
        return int(bool(CMP_FOLDS[op.attrs["pred"]](a, b)))
    if isinstance(op, ir.Cast) and not op.attrs.get("bitcast"):
        src = op.operands[0].dtype
        if src.is_float and not t.is_float:
            return None  # saturating float-to-int conversion is left to the code generator
        with np.errstate(all="ignore"):
            if t.name == "u1":
                return int(bool(scalar(op.operands[0])))
            return _python(np.array(scalar(op.operands[0])).astype(t.np)[()], t)
    if isinstance(op, ir.Unary) and op.attrs["fn"] == "neg":
        with np.errstate(all="ignore"):
            return _python(-scalar(op.operands[0]), t)
    return None


def all_constant(op: ir.Op) -> TypeGuard[Foldable]:
    """`op` is one this pass folds, and each of its operands is a constant."""
    if not isinstance(op, FOLDABLE):
        return False
    for v in op.operands:  # a loop, not all(...): this runs for every op of the kernel
        if not isinstance(v.owner, ir.Const):
            return False
    return True


class FoldConstants:
    def __init__(self, truncate: bool = True) -> None:
        self.truncate = truncate
        """Fold integer `//` and `%` of constants (toward zero); see the module's docstring."""

    name = "fold-constants"
    feeds = frozenset({"eliminate-common-subexpressions", "eliminate-dead-code"})
    """A new constant may equal another; a folded op's operands may be left unused. Its own work
    it finishes in one run: an op's users come after it in the walk, and see its constant."""

    def run(self, kernel: ir.Kernel) -> bool:
        changed = False
        for op in list(kernel.walk()):
            if op.parent is not None and all_constant(op):
                changed |= self.replace(op) is not None
        return changed

    def replace(self, op: Foldable) -> ir.Const | None:
        """`op` (in a block) replaced by the constant it folds to, if it folds: that constant."""
        value = fold(op, self.truncate)
        if value is None:
            return None
        const = ir.Const([], op.result.type, {"value": value}, None, op.loc, op.result.name)
        block = op.parent
        assert block is not None
        block.ops.insert(block.ops.index(op), const)
        const.parent = block
        ir.replace_all_uses(op.result, const.result)
        ir.erase(op)
        return const
