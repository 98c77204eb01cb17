"""Expressions with control flow inside: `and`/`or` (short-circuit, value-returning, as in Python),
the ternary `a if c else b` (only the chosen arm runs) and chained comparisons. A part of the
frontend's visitor."""

from __future__ import annotations

import ast

from ...core.errors import QdTypeError, QuadrantsSyntaxError
from ...core.types import LocalType, promote
from .. import ir
from .scope import dtype_of
from .vectors import Vec

CMPS = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}


class Conditionals:
    """Mixed into `Frontend`; uses its `visit`, `value`, `truth`, `emit`, `cast` and `block` (and
    `is_vec`, `vmap`, `vec_of`, `vec_binop`, `filled` for vectors)."""

    def visit_BoolOp(self, node: ast.BoolOp) -> object:
        """`and`/`or` short-circuit and give an operand's value, as in Python: `(5 and 7) == 7`."""
        is_and = isinstance(node.op, ast.And)
        acc = self.visit(node.values[0])
        for rest in node.values[1:]:
            if self.is_vec(acc):  # entry by entry, both sides evaluated, 0 or 1 (as Quadrants)
                op = "and" if is_and else "or"
                acc = self.vmap(
                    lambda x, y, op=op: self.binop(op, self.truth(x), self.truth(y)),
                    acc,
                    self.visit(rest),
                )
                continue
            acc = self.short_circuit(acc, rest, is_and)
        return acc

    def short_circuit(self, first: object, rest: ast.expr, is_and: bool) -> object:
        if isinstance(first, (int, float)):
            if bool(first) != is_and:
                return first
            return self.visit(rest)
        v0 = self.value(first)
        go, skip = ir.Block(), ir.Block()
        outer = self.block
        self.block = go
        v1 = self.value(self.visit(rest))
        self.block = outer
        t0, t1 = dtype_of(v0), dtype_of(v1)
        t = t0 if t0 == t1 else promote(t0, t1)
        ref = self.emit(ir.Alloca, (), LocalType(t), "_cond")
        self.emit(ir.LocalStore, [ref, self.cast(v0, t)])
        cond = self.truth(v0)
        self.block = go
        self.emit(ir.LocalStore, [ref, self.cast(v1, t)])
        self.block = outer
        self.block.append(ir.If([cond], None, {}, [go, skip] if is_and else [skip, go], self.loc))
        return self.emit(ir.LocalLoad, [ref], t)

    def visit_IfExp(self, node: ast.IfExp) -> object:
        static = self.static_condition(node.test)
        if static is not None:
            return self.visit(node.body if static else node.orelse)
        test = self.visit(node.test)
        if self.is_vec(test):
            raise self.error(
                "a vector or matrix condition in a conditional expression (an entry-by-entry "
                'select) is not supported, as in Quadrants: Please use "qd.select" instead.',
                QuadrantsSyntaxError,
            )
        cond = self.truth(test)
        then, other = ir.Block(), ir.Block()
        outer = self.block
        self.block = then
        a = self.visit(node.body)
        self.block = other
        b = self.visit(node.orelse)
        self.block = outer
        if self.is_vec(a) or self.is_vec(b) or isinstance(a, (tuple, list)):
            # tuples and lists of scalars select as a vector, as Quadrants' `ifte` makes one of
            # them (`x[(i, j) if c else (j, i)]` indexes with its entries)
            return self.vector_ifexp(cond, (then, a), (other, b))
        va_t = dtype_of(a) if isinstance(a, ir.Value) else None
        vb_t = dtype_of(b) if isinstance(b, ir.Value) else None
        t = promote(va_t or dtype_of(self.value(a)), vb_t or dtype_of(self.value(b)))
        ref = self.emit(ir.Alloca, (), LocalType(t), "_ifexp")
        for blk, x in ((then, a), (other, b)):
            self.block = blk
            self.emit(ir.LocalStore, [ref, self.cast(self.value(x, t), t)])
        self.block = outer
        self.block.append(ir.If([cond], None, {}, [then, other], self.loc))
        return self.emit(ir.LocalLoad, [ref], t)

    def vector_ifexp(self, cond: ir.Value, *arms: tuple[ir.Block, object]) -> object:
        """`u if c else w` of vectors: one local per entry, stored in the arm that runs."""
        outer = self.block
        vecs = []
        for blk, x in arms:
            self.block = blk
            vecs.append(self.vec_of(x))
        shape = next(v.shape for v in vecs if v is not None)
        full: list[Vec] = []
        if any(v is not None and v.shape != shape for v in vecs):
            a, b = (v.shape if v is not None else () for v in vecs)
            raise self.error(
                f"Cannot broadcast tensor to tensor: the arms of this conditional expression are "
                f"a vector/matrix of shape {a} and one of shape {b}.",
                QdTypeError,
            )
        for (blk, x), v in zip(arms, vecs):
            self.block = blk
            if v is None or v.shape != shape:
                v = self.vec_binop("add", self.filled(shape, 0, None), x)  # shapes checked
            full.append(v)
        refs = []
        self.block = outer
        for ea, eb in zip(full[0].entries, full[1].entries):
            t = promote(dtype_of(ea), dtype_of(eb))
            refs.append(self.emit(ir.Alloca, (), LocalType(t), "_ifexp"))
        for (blk, _), v in zip(arms, full):
            self.block = blk
            for ref, e in zip(refs, v.entries):
                self.emit(ir.LocalStore, [ref, self.cast(e, dtype_of(ref))])
        self.block = outer
        self.block.append(ir.If([cond], None, {}, [arms[0][0], arms[1][0]], self.loc))
        return Vec(tuple(self.emit(ir.LocalLoad, [r], dtype_of(r)) for r in refs), shape)

    def visit_Compare(self, node: ast.Compare) -> object:
        result: object = None
        left = self.visit(node.left)
        for op, right_node in zip(node.ops, node.comparators):
            pred = CMPS.get(type(op))
            if isinstance(op, (ast.In, ast.NotIn)):
                raise self.error(
                    f'"{type(op).__name__}" is only supported inside `qd.static`. Write '
                    f"`qd.static({ast.unparse(node)})` to test Python values."
                )
            if isinstance(op, (ast.Is, ast.IsNot)):
                name = "is" if isinstance(op, ast.Is) else "is not"
                raise self.error(
                    f'Operator "{name}" in Quadrants scope is not supported. Write '
                    f"`qd.static({ast.unparse(node)})` to test Python values.",
                    QuadrantsSyntaxError,
                )
            if pred is None:
                raise self.error(f"comparison `{type(op).__name__}` is not supported in a kernel.")
            right = self.visit(right_node)
            c = self.compare(pred, left, right)
            result = c if result is None else self.binop("and", result, c)
            left = right
        return result
