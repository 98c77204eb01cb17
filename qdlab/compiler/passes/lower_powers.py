"""LowerPowers: a float raised to a constant, or a power of two raised to a float, becomes what the
reference computes for it, here in qdlab's IR, where both compile tiers see the same ops
(`compiler/runtime/tiers.py`).

The reference's algebraic simplification rewrites a constant exponent: `x ** 1` is x, `x ** 0` is
1, `x ** 0.5` is `sqrt(x)`, `x ** n` for an integral n in [1, 32] multiplications by squaring from
the lowest bit (`x ** 3` = `x * (x * x)`, `x ** 4` = `(x * x) * (x * x)`), and `x ** -n` is
`1 / x ** n`, whether n is written as an int or a float (`x ** 2.0`); the exponent is taken in its
own type (0.50000001 is 0.5 as an f32). Its LLVM then makes `2.0 ** k * x` (`8.0 ** x`,
`0.25 ** x`) `exp2(x * k)`. Any other power stays: an integer exponent is multiplied out the same
way at run time, a float one is a call of the math library's `pow`, which LLVM may not rewrite
(`codegen/arith.py`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from .. import ir
from .fold_constants import FoldConstants, scalar

MAX_EXPONENT = 32
"""The largest |n| multiplied out while compiling, as in the reference."""
MAX_LOG2_BASE = 63
"""The largest |k| of a base 2.0 ** k made an `exp2` (LLVM's: 2 ** |k| fits an unsigned i64)."""


class LowerPowers:
    name = "lower-powers"
    feeds = frozenset({"eliminate-common-subexpressions", "eliminate-dead-code"})
    """A product may equal another one; the constant may be left unused. Products of constants it
    folds itself (`FoldConstants` ran before it)."""

    def run(self, kernel: ir.Kernel) -> bool:
        changed = False
        for op in list(kernel.walk()):
            if (
                isinstance(op, ir.BinOp)
                and op.attrs["op"] == "pow"
                and op.parent is not None
                and op.result.dtype.is_float
            ):
                changed |= lower(op)
        return changed


def lower(op: ir.BinOp) -> bool:
    """`op` (a float `x ** y`, in a block) replaced by what it lowers to, if it lowers."""
    x, y = op.operands
    t = op.result.dtype
    new: list[ir.Op] = []

    def emit(cls: type[ir.Op], operands: list[ir.Value], **attrs: object) -> ir.Value:
        o = cls(operands, t, attrs, None, op.loc, op.result.name)
        new.append(o)
        assert o.result is not None
        return o.result

    if isinstance(y.owner, ir.Const):
        result = _constant_exponent(x, float(scalar(y)), emit)
    elif isinstance(x.owner, ir.Const) and y.type == t:
        k = _log2(float(scalar(x)))
        if k is None:
            return False
        if k in (1, -1):  # `y * -1.0` is `-y`, as LLVM makes it (the sign of a NaN shows)
            scaled = y if k == 1 else emit(ir.Unary, [y], fn="neg")
        else:
            scaled = emit(ir.BinOp, [y, emit(ir.Const, [], value=float(k))], op="mul")
        result = emit(ir.Unary, [scaled], fn="exp2")
    else:
        result = None
    if result is None:
        return False
    block = op.parent
    assert block is not None
    at = block.ops.index(op)
    block.ops[at:at] = new
    for o in new:
        o.parent = block
    ir.replace_all_uses(op.result, result)
    ir.erase(op)
    fold = FoldConstants()
    for o in new:  # a constant raised to a constant: its products are constants too
        if (
            isinstance(o, (ir.BinOp, ir.Unary))  # (a `Const` is one already)
            and o.parent is not None
            and all(isinstance(v.owner, ir.Const) for v in o.operands)
        ):
            fold.replace(o)
    return True


def _constant_exponent(x: ir.Value, c: float, emit: Callable[..., ir.Value]) -> ir.Value | None:
    """What `x ** c` is made of (the ops made by `emit`), or None where it stays a power."""
    if c == 1:
        return x
    if c == 0:
        return emit(ir.Const, [], value=1.0)
    if c == 0.5:
        return emit(ir.Unary, [x], fn="sqrt")
    if not (c.is_integer() and abs(c) <= MAX_EXPONENT):
        return None
    n, power, product = int(abs(c)), x, None
    while True:
        if n & 1:
            product = power if product is None else emit(ir.BinOp, [product, power], op="mul")
        n >>= 1
        if not n:
            break
        power = emit(ir.BinOp, [power, power], op="mul")
    if c < 0:
        return emit(ir.BinOp, [emit(ir.Const, [], value=1.0), product], op="truediv")
    return product


def _log2(base: float) -> int | None:
    """k where `base` is 2.0 ** k, 1 <= |k| <= MAX_LOG2_BASE; else None."""
    if not (base > 0 and math.isfinite(base)):
        return None
    mantissa, e = math.frexp(base)
    k = e - 1
    return k if mantissa == 0.5 and 1 <= abs(k) <= MAX_LOG2_BASE else None
