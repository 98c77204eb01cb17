"""Entries of matrix fields lowered (before quantised fields, as the last steps of lowering): a
kernel that reaches `s = x.get_scalar_field(i, j)` reads and writes `x`'s memory, so every access
of `s`'s hidden parameter becomes the same access of `x`'s, with the entry's constant indices
after the outer ones. The split, the gate and autodiff then see one buffer, `x`'s, whichever
name the kernel wrote: a write through `s` is a write of `x` (as in the reference, where `s` is
the field of `x`'s entry). `s`'s own parameter is left unused.
"""

from __future__ import annotations

from ...core.errors import QdTypeError
from ...core.types import i32
from .. import ir
from .fields import add_field_param

ACCESSES = (ir.Load, ir.VolatileLoad, ir.Store, ir.Atomic, ir.AtomicCas, ir.Addr)
"""What a kernel does with an entry's parameter (a field's extents are compile-time values)."""


def run(kernel: ir.Kernel) -> None:
    fields = kernel.flags.fields
    entries = {i: f._entry_of for i, f in fields.items() if f._entry_of is not None}
    if not entries:
        return
    args = {
        op.attrs["index"]: op.out
        for op in kernel.body.ops
        if isinstance(op, ir.Arg) and op.attrs.get("field")
    }
    owners = {id(f): args[i] for i, f in fields.items() if f._entry_of is None and i in args}
    for index, (owner, entry) in entries.items():
        member = args.get(index)
        if member is None:
            continue
        if getattr(owner, "dual_of", None) is not None:
            raise QdTypeError(
                "an entry of a dual field (`x.dual.get_scalar_field(...)`) cannot be used in a "
                "kernel in qdlab; index the dual field itself (`x.dual[i][j]`).",
                kernel.flags.def_loc,
            )
        grad = owner.primal is not None  # `x.grad.get_scalar_field(...)`: `x`'s gradient buffer
        base = owner.primal or owner
        target = owners.get(id(base))
        if target is None:
            target = owners[id(base)] = add_field_param(kernel, base, f"{member.name}_matrix")
        for op in list(member.users):
            _redirect(op, member, target, entry, grad)


def _redirect(
    op: ir.Op, member: ir.Value, target: ir.Value, entry: tuple[int, ...], grad: bool
) -> None:
    """`op`, an access of `member`, made the same access of entry `entry` of `target` (of its
    gradient buffer when `grad`)."""
    if not isinstance(op, ACCESSES) or op.operands[0] is not member:
        raise QdTypeError(
            f"qdlab cannot lower `{op.name}` on an entry of a matrix field (`get_scalar_field`).",
            op.loc,
        )
    if grad:
        op.attrs["grad"] = True
    block = op.parent
    assert block is not None
    consts = [ir.Const([], i32, {"value": k}, None, op.loc) for k in entry]
    at = block.ops.index(op)
    block.ops[at:at] = consts
    for c in consts:
        c.parent = block
    ndim = member.array_type.ndim
    operands = [target, *op.operands[1 : 1 + ndim], *(c.out for c in consts)]
    operands += op.operands[1 + ndim :]
    for v in op.operands:
        v.users.remove(op)
    op.operands = []
    for v in operands:
        op.add_operand(v)
