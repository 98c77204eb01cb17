"""Struct fields in kernels (`s = S.field(shape=n)`): each member is a field of its own.

Before a statement is lowered, every `s[i].m` whose `s` is a struct field (a global, a closure
value, an attribute chain, a template argument) is read as `s.m[i]` (`s[i].inner.c` as
`s.inner.c[i]`), so reads, writes, `+=` (atomic, as on any field element), atomics and vector
parts of a member are those of the member's field, and the gate sees which member each access
touches. `s[i]` on its own is the element as a struct whose members are the fields' elements
(`FieldSlot`, or an `ElementRef` for a vector or matrix member): `p = s[i]` copies it into a struct
local, `s[i] = S(...)` stores every member, and a `@qd.func` method called on `s[i]` reads and
writes the field through `self`. A struct-for `for i in s` walks the first member's index space
(every member has the same shape).

A part of the frontend's visitor: mixed into `Frontend`; uses its `visit`, `find_local`, `scope`,
`tensor_of`, `subscript_target`, `record`, `store_struct` and `error`.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass

import numpy as np

from qdlab.core.errors import QdSyntaxError
from qdlab.core.fields import StructFieldBase

from .. import ir
from .scope import GradOf, array_type, dotted, dtype_of
from .source import MISSING, resolve_name
from .structs import TEMPLATE, StructRef
from .vectors import ElementRef


@dataclass(frozen=True, eq=False)
class FieldSlot:
    """A scalar member of a struct field's element: `array[indices]` (of its gradient buffer with
    `grad`: an element of `s.grad`)."""

    array: ir.Value
    indices: tuple[ir.Value, ...]
    grad: bool = False


def any_struct_field() -> bool:
    """Whether this process has made a struct field (until it has, no statement is rewritten)."""
    return StructFieldBase._made


class StructFields:
    """Mixed into `Frontend`: struct fields' elements and members."""

    # -- `s[i].m` is `s.m[i]` ----------------------------------------------------------------------
    def unstruct(self, stmt: ast.stmt) -> ast.stmt:
        """`stmt` with every `s[i].m` of a struct field `s` as `s.m[i]` (a copy: the source's
        tree is shared by every compile, and another may bind `s` to something else); the
        statements a compound statement holds are rewritten when they are lowered."""
        return self.rewrite(stmt)  # type: ignore[return-value]

    def rewrite(self, node: ast.AST) -> ast.AST:
        changed = {}
        for name, value in ast.iter_fields(node):
            if isinstance(value, list):
                if not value or isinstance(value[0], (ast.stmt, ast.excepthandler)):
                    continue
                new = [self.rewrite(v) if isinstance(v, ast.AST) else v for v in value]
                if any(a is not b for a, b in zip(new, value)):
                    changed[name] = new
            elif isinstance(value, ast.AST) and not isinstance(value, ast.stmt):
                new_value = self.rewrite(value)
                if new_value is not value:
                    changed[name] = new_value
        if changed:
            node = copy.copy(node)
            for name, value in changed.items():
                setattr(node, name, value)
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute):
            alias = self.unpacked_member(node.value, node.slice)
            if alias is not None:
                node = alias
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Subscript):
            owner, grad = node.value.value, False
            sf = self.peek_struct_field(owner)
            if sf is None and isinstance(owner, ast.Attribute) and owner.attr == "grad":
                owner, grad = owner.value, True  # `s.grad[i].m`, unless `s.grad` names a member
                sf = self.peek_struct_field(owner)
            if sf is not None and node.attr in sf.members:
                member: ast.expr = ast.copy_location(
                    ast.Attribute(owner, node.attr, ast.Load()), node
                )
                if grad:  # as `s.m.grad[i]`
                    member = ast.copy_location(ast.Attribute(member, "grad", ast.Load()), node)
                return ast.copy_location(ast.Subscript(member, node.value.slice, node.ctx), node)
        return node

    def unpacked_member(self, group: ast.Attribute, index: ast.expr) -> ast.Attribute | None:
        """`obj.r[i]` of a struct whose member `r` is an unpacked vector, as `obj._r<i>` (`i` must
        be known while compiling); None for any other subscript."""
        groups = getattr(self.struct_type_of(group.value), "_unpacked_groups", None)
        if not groups or group.attr not in groups:
            return None
        count, _, naming = groups[group.attr]
        i = self.visit(index)
        where = self.scope.source.loc(group, self.scope.name)  # (unstruct runs before visit's)
        if not isinstance(i, (int, np.integer)) or isinstance(i, bool):
            raise QdSyntaxError(
                f"unpacked vector {group.attr}[i] requires a python-int index (possibly via "
                f"qd.static); got a runtime index ({ast.unparse(index)}).",
                where,
            )
        if not 0 <= int(i) < count:
            raise QdSyntaxError(
                f"unpacked vector index out of bounds: {group.attr}[{int(i)}] (count={count}).",
                where,
            )
        return ast.copy_location(
            ast.Attribute(group.value, naming(group.attr, int(i)), ast.Load()), group
        )

    def struct_type_of(self, node: ast.expr) -> object:
        """The struct type of what `node` names (a struct local or value, a struct argument, an
        element of a struct field, a member of one of these), found without lowering; None for
        anything else."""
        if isinstance(node, ast.Subscript):
            sf = self.peek_struct_field(node.value)
            return sf.struct_type if sf is not None else None
        if isinstance(node, ast.Attribute):
            outer = self.struct_type_of(node.value)
            return (getattr(outer, "__qd_struct__", None) or {}).get(node.attr)
        if isinstance(node, ast.Name):
            bound = self.find_local(node.id)
            if isinstance(bound, StructRef):
                return bound.annotation or type(bound.value)
            t = getattr(bound, "type", None)  # a struct local or value
            return t if isinstance(t, type) else None
        return None

    def peek_struct_field(self, node: ast.expr) -> StructFieldBase | None:
        """The struct field a name or an attribute chain names, found without lowering anything;
        None for anything else."""
        value = self.peek(node)
        return value if isinstance(value, StructFieldBase) else None

    def peek(self, node: ast.expr) -> object:
        if isinstance(node, ast.Name):
            for frame in reversed(self.scope.frames):
                if node.id in frame:
                    return frame[node.id]
            return resolve_name(self.scope.source.fn, node.id)
        if isinstance(node, ast.Attribute):
            base = self.peek(node.value)
            if base is MISSING or isinstance(base, (ir.Value, ElementRef, FieldSlot)):
                return MISSING
            base = base.value if isinstance(base, StructRef) else base
            if isinstance(base, StructFieldBase):
                return base.members.get(node.attr, MISSING)
            try:
                return getattr(base, node.attr)
            except Exception:  # noqa: BLE001 - the lowering reports it
                return MISSING
        return MISSING

    # -- `s[i]`, `s[i] = S(...)`, `for i in s` -----------------------------------------------------
    def member_arrays(self, sf: StructFieldBase, node: ast.expr) -> dict[str, object]:
        """Each member of `sf` (reached by `node`) as the hidden parameter of its field (a nested
        struct's as a dict)."""
        path = dotted(node)
        outside = path is not None and path.split(".")[0] not in {
            k for f in self.scope.frames for k in f
        }
        member = None if outside else self.struct_field_path(sf)
        if member is None and not outside and isinstance(node, ast.Attribute):
            seen = self.visit(node)  # `self.particles[i] = ...`: the member read, and recorded
            member = self.struct_field_path(sf) if seen is sf else None
        if member is not None:  # `self.particles`: found again from the template argument
            return self.arrays_of(sf, member, TEMPLATE)
        return self.arrays_of(sf, path or "struct", outside)

    def arrays_of(self, sf: StructFieldBase, path: str, outside: bool | str) -> dict[str, object]:
        out: dict[str, object] = {}
        for k, m in sf.members.items():
            name = f"{path}.{k}"
            if isinstance(m, StructFieldBase):
                out[k] = self.arrays_of(m, name, outside)
                continue
            if outside is True:
                self.record(name, m)
            out[k] = self.tensor_of(m, name, outside)
        return out

    def struct_element(self, sf: StructFieldBase, node: ast.Subscript) -> object:
        """`s[i]`: a struct local whose members are the members' elements at `i`."""
        arrays = self.member_arrays(sf, node.value)
        first = arrays
        while isinstance(first, dict):
            first = next(iter(first.values()))
        _, indices = self.subscript_target(node, first)

        def build(t: type, members: dict[str, object]) -> object:
            slots: dict[str, object] = {}
            for k, a in members.items():
                if isinstance(a, dict):
                    slots[k] = build(t.__qd_struct__[k], a)  # type: ignore[attr-defined]
                else:
                    array, grad = GradOf.unpack(a)  # `s.grad[i]`: each member's gradient buffer
                    assert isinstance(array, ir.Value), a  # a member's array
                    if array_type(array).element:
                        slots[k] = ElementRef(array, grad, tuple(indices))
                    else:
                        slots[k] = FieldSlot(array, tuple(indices), grad)
            return self.slot_struct(t, slots)

        return build(sf.struct_type, arrays)

    def struct_element_store(self, target: ast.Subscript, value: object) -> bool:
        """`s[i] = S(...)` (or another struct's value) of a struct field; False for any other
        target."""
        sf = self.peek_struct_field(target.value)
        if sf is None:
            return False
        self.store_struct(self.struct_element(sf, target), value, ast.unparse(target))
        return True

    def loop_array(self, base: object, node: ast.expr) -> object:
        """What `for i in s` walks: a struct field's first member; anything else as it is."""
        if not isinstance(base, StructFieldBase):
            return base
        first = self.member_arrays(base, node)
        while isinstance(first, dict):
            first = next(iter(first.values()))
        return first

    # -- struct members that are field elements ----------------------------------------------------
    def slot_load(self, m: FieldSlot | ElementRef) -> object:
        if isinstance(m, FieldSlot):
            return self.emit(ir.Load, [m.array, *m.indices], dtype_of(m.array), grad=m.grad)
        return self.element_load(m)

    def slot_store(self, m: FieldSlot | ElementRef, x: object) -> None:
        if isinstance(m, FieldSlot):
            dtype = dtype_of(m.array)
            value = self.cast(self.value(x, dtype), dtype)
            self.emit(ir.Store, [m.array, *m.indices, value], grad=m.grad)
        else:
            self.element_store(m, None, x)
