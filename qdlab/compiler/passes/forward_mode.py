"""Forward-mode autodiff: the kernel a launch runs under `qd.ad.FwdMode` (`jvp`).

It is the kernel itself with every float value paired with its tangent (its dual): the kernel's ops
are cloned in order, and after each one the tangent of its result is computed from its operands'
tangents by the derivative rules of the reverse mode (`autodiff.RULES`, which give the derivative of
an op with respect to each operand times a factor; here the factor is that operand's tangent). A
field with a dual (`needs_dual=True`, `qd.root.lazy_dual()`) feeds it through its gradient word,
which a forward launch fills from the dual's storage: a load of the field loads the element's dual
as its tangent, a store stores the tangent to the dual, an atomic add adds it. A mutable float local
has a tangent local beside it. Values with no tangent (integers, constants, ndarrays and fields
without a dual) count as constants.

Refused, with the line: reading or writing a `.grad` buffer or a `.dual` field itself, atomic min /
max / exchange of a field with a dual, a local's atomic min / max, calls of recursive real_funcs.
"""

from __future__ import annotations

import dataclasses

from ...core.errors import QuadrantsCompilationError, SourceLoc
from ...core.types import ArrayType, DType, LocalType
from .. import ir
from ..ir import field_params
from .autodiff import RULES, RuleBuilder

TANGENT_UPDATES = ("add", "sub")
"""The atomics whose tangent is the same atomic on the dual."""


def _float(v: ir.Value) -> bool:
    return isinstance(v.type, DType) and v.type.is_float


def _refuse(op: ir.Op, what: str) -> QuadrantsCompilationError:
    return QuadrantsCompilationError(
        f"forward-mode autodiff (qd.ad.FwdMode): {what} is not supported.",
        op.loc,
    )


class Forward(RuleBuilder):
    """Builds the forward-mode kernel; also what `autodiff.RULES` call back (`emit`, `const`,
    `primal`, `bin`, `un`, `add`)."""

    def __init__(self, duals: set[int]) -> None:
        self.duals = duals
        """The parameters (fields) whose gradient word holds their dual."""
        self.mapping: dict[ir.Value, ir.Value] = {}
        self.tan: dict[ir.Value, ir.Value] = {}
        """The tangent of each float value of the kernel (absent: zero)."""
        self.tan_local: dict[ir.Value, ir.Value] = {}
        self.into = ir.Block()
        self.loc: SourceLoc | None = None
        self.wrt: ir.Value | None = None
        self.terms: list[ir.Value] = []

    # -- what the rules use ------------------------------------------------------------------------
    def add(self, v: ir.Value, g: ir.Value) -> None:
        """A rule's term for operand `v`: kept when `v` is the operand being differentiated."""
        if v is self.wrt:
            self.terms.append(g)

    # -- the kernel --------------------------------------------------------------------------------
    def tangent(self, v: ir.Value) -> ir.Value:
        """`v`'s tangent as a value (a zero when it has none)."""
        t = self.tan.get(v)
        return t if t is not None else self.const(0.0, v.dtype)

    def has_dual(self, arr: ir.Value) -> bool:
        return isinstance(arr.owner, ir.Arg) and arr.owner.attrs["index"] in self.duals

    def block(self, src: ir.Block, into: ir.Block) -> None:
        outer, self.into = self.into, into
        try:
            for op in src.ops:
                self.op(op)
        finally:
            self.into = outer

    def op(self, op: ir.Op) -> None:
        self.loc = op.loc
        if isinstance(op, ir.Call):
            raise _refuse(op, f"a call of recursive @qd.real_func `{op.function.name}`")
        if op.attrs.get("grad") and not isinstance(op, ir.Addr):
            raise _refuse(op, "reading or writing a `.grad` buffer")
        new = ir.clone_op(op, self.mapping)
        if isinstance(op, ir.Arg) and self.has_dual(op.result):
            assert new.result is not None
            new.result.type = dataclasses.replace(op.result.array_type, needs_grad=True)
        self.into.append(new)
        for r, nr in zip(op.regions, new.regions):
            self.block(r, nr)
        self.dual_of(op, new)

    def dual_of(self, op: ir.Op, new: ir.Op) -> None:
        """The tangent of `op`'s result (or the dual side of its effect)."""
        m = self.mapping
        if isinstance(op, (ir.Load, ir.VolatileLoad)) and _float(op.result):
            if self.has_dual(op.operands[0]):
                self.tan[op.result] = self.emit(
                    ir.Load, [m.get(v, v) for v in op.operands], op.result.type, grad=True
                )
        elif isinstance(op, (ir.Store, ir.Atomic)) and self.has_dual(op.operands[0]):
            value = op.operands[-1]
            if not _float(value):
                return
            where = [m.get(v, v) for v in op.operands[:-1]]
            if isinstance(op, ir.Store):
                self.put(ir.Store, [*where, self.tangent(value)], grad=True)
            elif op.attrs["op"] in TANGENT_UPDATES:
                t = self.emit(
                    ir.Atomic,
                    [*where, self.tangent(value)],
                    value.type,
                    op=op.attrs["op"],
                    grad=True,
                )
                self.tan[op.result] = t  # the old value's dual
            else:
                raise _refuse(op, f"an atomic {op.attrs['op']} on a field with a dual")
        elif isinstance(op, ir.Alloca) and op.result.element.is_float:
            t = op.result.element
            ref = ir.Alloca([], LocalType(t), {}, None, op.loc, f"{op.result.name}_dual")
            self.into.append(ref)
            self.tan_local[op.result] = ref.result
        elif isinstance(op, ir.LocalStore) and op.operands[0] in self.tan_local:
            self.put(ir.LocalStore, [self.tan_local[op.operands[0]], self.tangent(op.operands[1])])
        elif isinstance(op, ir.LocalLoad) and op.operands[0] in self.tan_local:
            self.tan[op.result] = self.emit(
                ir.LocalLoad, [self.tan_local[op.operands[0]]], op.result.type
            )
        elif isinstance(op, ir.LocalAtomic) and op.operands[0] in self.tan_local:
            if op.attrs["op"] not in TANGENT_UPDATES:
                raise _refuse(op, f"a local's atomic {op.attrs['op']}")
            ref, value = op.operands
            t = self.emit(
                ir.LocalAtomic,
                [self.tan_local[ref], self.tangent(value)],
                value.type,
                op=op.attrs["op"],
            )
            if op.result is not None:
                self.tan[op.result] = t
        elif isinstance(op, ir.Cast) and _float(op.result) and _float(op.operands[0]):
            if op.operands[0] in self.tan and not op.attrs.get("bitcast"):
                self.tan[op.result] = self.emit(ir.Cast, [self.tan[op.operands[0]]], op.result.type)
        elif type(op) in RULES and op.result is not None and _float(op.result):
            self.by_rule(op, op.result)

    def by_rule(self, op: ir.Op, result: ir.Value) -> None:
        """Σ over the operands with a tangent: d result / d operand × its tangent."""
        total: ir.Value | None = None
        for v in dict.fromkeys(op.operands):
            if v not in self.tan:
                continue
            self.wrt, self.terms = v, []
            RULES[type(op)](self, op, self.tan[v])
            for g in self.terms:
                if g.type != result.type:
                    g = self.emit(ir.Cast, [g], result.type)
                total = g if total is None else self.emit(ir.BinOp, [total, g], g.type, op="add")
        self.wrt = None
        if total is not None:
            self.tan[result] = total


def jvp(kernel: ir.Kernel) -> ir.Kernel:
    """The forward-mode kernel of `kernel` (simplified IR): its fields with a dual take it through
    their gradient word (the launch fills it from the dual's storage)."""
    fields = field_params(kernel)
    for f in fields.values():
        if getattr(f, "dual_of", None) is not None:  # the same memory as a dual word: refused
            raise QuadrantsCompilationError(
                "forward-mode autodiff (qd.ad.FwdMode): a kernel launched under it reads or "
                "writes a field's `.dual` itself, which forward mode computes; read it after.",
                kernel.flags.def_loc,
            )
    duals = {i for i, f in fields.items() if f.has_dual()}
    fw = Forward(duals)
    params = [
        ir.Param(p.name, dataclasses.replace(p.type, needs_grad=True))
        if i in duals and isinstance(p.type, ArrayType)
        else p
        for i, p in enumerate(kernel.params)
    ]
    out = ir.Kernel(kernel.name, params, kernel.returns, ir.Block(), kernel.flags.copy())
    fw.block(kernel.body, out.body)
    return out
