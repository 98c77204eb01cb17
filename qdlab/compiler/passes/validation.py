"""The global data access rule check of `qd.ad.Tape(validation=True)` (with `qd.init(debug=True)`):
a kernel of the tape must not overwrite an element of a field with a gradient after the tape read
it, since the gradient kernels would then see the new value where the forward run saw the old.

As in Quadrants, each such field has a check bit per element, zeroed when the tape is entered: a
read sets it, and a store or an atomic first asserts that it is clear, failing with
"Breaks the global data access rule". qdlab keeps the check bits where the field's gradient is
in a kernel launch: the validation variant of a kernel is launched with each field's check bits
in place of its gradient (`host/field.py`). A kernel that reads or writes a field's `.grad`
itself is not checked on that field.
"""

from __future__ import annotations

from ...core.fields import FieldBase
from ...core.types import u1
from .. import ir


def instrument(kernel: ir.Kernel) -> ir.Kernel:
    """`kernel` with its accesses to fields with a gradient checked (in place)."""
    fields = kernel.flags.fields
    arrays: dict[ir.Value, FieldBase] = {}
    own_grad: set[ir.Value] = set()
    for op in kernel.body.walk():
        if isinstance(op, (ir.Load, ir.Store, ir.Atomic)):
            arr = op.operands[0]
            owner = arr.owner
            f = fields.get(owner.attrs.get("index", -1)) if isinstance(owner, ir.Arg) else None
            if f is None or not f.has_grad() or f.primal is not None:
                continue
            arrays[arr] = f
            if op.attrs.get("grad"):
                own_grad.add(arr)
    checked = {a: f for a, f in arrays.items() if a not in own_grad}
    if checked:
        _rewrite(kernel.body, checked, kernel.name)
    return kernel


def _rewrite(block: ir.Block, checked: dict[ir.Value, FieldBase], kernel: str) -> None:
    ops, block.ops = block.ops, []
    for op in ops:
        for region in op.regions:
            _rewrite(region, checked, kernel)
        arr = op.operands[0] if isinstance(op, (ir.Load, ir.Store, ir.Atomic)) else None
        if arr is None or arr not in checked or op.attrs.get("grad"):
            block.append(op)
            continue
        t = arr.array_type.dtype
        if isinstance(op, ir.Load):
            block.append(op)
            one = _value(block, ir.Const([], t, {"value": 1.0 if t.is_float else 1}, None, op.loc))
            block.append(ir.Store([arr, *op.operands[1:], one], None, {"grad": True}, None, op.loc))
            continue
        index = op.operands[1:-1]
        bit = _value(block, ir.Load([arr, *index], t, {"grad": True}, None, op.loc))
        zero = _value(block, ir.Const([], t, {"value": 0.0 if t.is_float else 0}, None, op.loc))
        clear = _value(block, ir.Cmp([bit, zero], u1, {"pred": "eq"}, None, op.loc))
        name = checked[arr].name or "a field"
        block.append(
            ir.Assert(
                [clear],
                None,
                {
                    "message": f"(kernel={kernel}) Breaks the global data access rule. Snode "
                    f"{name} is overwritten unexpectedly."
                },
                None,
                op.loc,
            )
        )
        block.append(op)


def _value(block: ir.Block, op: ir.Op) -> ir.Value:
    block.append(op)
    assert op.result is not None
    return op.result
