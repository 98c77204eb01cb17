"""Assignment: to names (locals, compile-time bindings), array elements and tuples; annotated and
augmented assignment (`+=` on an array element, and on an outer local inside a parallel loop, is
atomic). A part of the frontend's visitor."""

from __future__ import annotations

import ast

from . import ir
from .errors import QdTypeError
from .scope import ATOMIC_AUG, BINOPS, GradOf, Local, describe
from .types import DType, LocalType


class Assignments:
    """Mixed into `Frontend`; uses its `visit`, `value`, `cast`, `binop`, `emit`, `error`,
    `find_local`, `resolve_static`, `subscript_target`, `scope` and `parallel_depth`."""

    def assign_name(self, name: str, x: object, declared: DType | None = None) -> None:
        existing = self.find_local(name)
        if isinstance(existing, Local):
            ref = existing.ref
            if declared is not None and declared != ref.type.dtype:  # type: ignore[union-attr]
                raise self.error(
                    f"`{name}` is a {ref.type.dtype} local; it cannot be annotated again as "  # type: ignore[union-attr]
                    f"{declared} (a local keeps the type of its first assignment)."
                )
            self.emit(
                ir.LocalStore, [ref, self.cast(self.value(x, ref.type.dtype), ref.type.dtype)]
            )  # type: ignore
            return
        if existing is not None and not self.scope.is_func:
            if (
                isinstance(existing, ir.Value)
                and existing.owner is not None
                and isinstance(existing.owner, ir.Arg)
            ):
                raise self.error(
                    f"kernel argument `{name}` cannot be assigned; copy it into a local first "
                    f"(`{name}_ = {name}`)."
                )
            if isinstance(existing, ir.Value):
                raise self.error(f"loop index `{name}` cannot be assigned in the loop body.")
        if not isinstance(x, (ir.Value, int, float, bool)):
            self.scope.frames[-1][name] = (
                x  # a Python object (tuple, dtype ...) bound at compile time
            )
            return
        v = self.value(x)
        dtype = declared or v.type
        ref = self.emit(ir.Alloca, (), LocalType(dtype), name)  # type: ignore[arg-type]
        self.emit(ir.LocalStore, [ref, self.cast(v, dtype)])  # type: ignore[arg-type]
        self.scope.frames[-1][name] = Local(ref, self.parallel_depth)

    def visit_Assign(self, node: ast.Assign) -> None:
        value = self.visit(node.value)
        for target in node.targets:
            self.assign_target(target, value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        declared = self.resolve_static(node.annotation)
        if not isinstance(declared, DType):
            raise self.error(
                "a local's annotation must be a scalar type such as `qd.f32`.", QdTypeError
            )
        if node.value is None:
            raise self.error("a local must be given a value where it is declared.")
        if not isinstance(node.target, ast.Name):
            raise self.error("only a plain name can be annotated.")
        self.assign_name(node.target.id, self.visit(node.value), declared)

    def assign_target(self, target: ast.expr, value: object) -> None:
        if isinstance(target, ast.Name):
            self.assign_name(target.id, value)
        elif isinstance(target, ast.Subscript):
            array, indices = self.subscript_target(target)
            dtype = array.type.dtype if isinstance(array, ir.Value) else array.array.type.dtype  # type: ignore
            v = self.cast(self.value(value, dtype), dtype)
            base, grad = GradOf.unpack(array)
            self.emit(ir.Store, [base, *indices, v], grad=grad)
        elif isinstance(target, ast.Tuple):
            if not isinstance(value, tuple) or len(value) != len(target.elts):
                raise self.error(f"cannot unpack {describe(value)} into {len(target.elts)} names.")
            for t, v in zip(target.elts, value):
                self.assign_target(t, v)
        else:
            raise self.error(f"cannot assign to {type(target).__name__}.")

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        op = BINOPS.get(type(node.op))
        if op is None:
            raise self.error("this augmented assignment is not supported.")
        rhs = self.visit(node.value)
        if isinstance(node.target, ast.Name):
            local = self.find_local(node.target.id)
            if (
                isinstance(local, Local)
                and op in ATOMIC_AUG
                and local.parallel_depth < self.parallel_depth
            ):
                ref = local.ref
                self.emit(
                    ir.LocalAtomic,
                    [ref, self.cast(self.value(rhs, ref.type.dtype), ref.type.dtype)],  # type: ignore
                    op=op,
                )
                return
            self.assign_name(
                node.target.id,
                self.binop(op, self.visit(ast.Name(node.target.id, ast.Load())), rhs),
            )
            return
        if isinstance(node.target, ast.Subscript):
            array, indices = self.subscript_target(node.target)
            base, grad = GradOf.unpack(array)
            dtype = base.type.dtype  # type: ignore[union-attr]
            if op in ATOMIC_AUG:
                self.emit(
                    ir.Atomic,
                    [base, *indices, self.cast(self.value(rhs, dtype), dtype)],
                    dtype,
                    op=op,
                    grad=grad,
                )
                return
            old = self.emit(ir.Load, [base, *indices], dtype, grad=grad)
            new = self.cast(self.value(self.binop(op, old, rhs), dtype), dtype)
            self.emit(ir.Store, [base, *indices, new], grad=grad)
            return
        raise self.error("augmented assignment needs a name or an array element on the left.")
