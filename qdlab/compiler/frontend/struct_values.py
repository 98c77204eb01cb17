"""Struct values inside a kernel: `Foo(1, 2)` of a `@qd.dataclass` or `qd.types.struct(...)` type,
struct locals (one local per member, so `x.a = 3` and reassigning `x` under a runtime `if` work),
members read and written, `@qd.func` methods (`x.norm()`), and structs passed to and returned by
`@qd.func`s by value.

As vectors are, a struct is unrolled: the IR only ever sees its members' scalar ops. A part of the
frontend's visitor: mixed into `Frontend`; uses its `visit`, `visit_args`, `value`, `cast`, `emit`,
`error`, `type_dtype`, `from_type`, `vec_of`, `new_vec_local`, `load_vec_local`, `store_vec_local`,
`parallel_depth` and the `Structs` mixin's `member`.
"""

from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass

from qdlab.core import language as lang

from ...core.errors import QdTypeError, QuadrantsSyntaxError
from ...core.types import LocalType
from .. import ir
from .scope import Local, describe, dtype_of
from .struct_fields import FieldSlot, StructFields
from .structs import BoundMethod, StructRef, Structs
from .vectors import ElementRef, Vec, VecLocal
from .views import View, is_view_type


def members_of(t: object) -> dict[str, object] | None:
    """A `@qd.dataclass` / `qd.types.struct` type's members and their types; None otherwise."""
    return getattr(t, "__qd_struct__", None) if isinstance(t, type) else None


@dataclass(frozen=True, eq=False)
class StructValue:
    """A struct value in a kernel: its type and one value per member (a scalar value, a `Vec`, or a
    nested StructValue)."""

    type: type
    members: dict[str, object]

    def __repr__(self) -> str:
        return f"a {self.type.__name__} value"


@dataclass(frozen=True, eq=False)
class StructLocal:
    """A struct local variable: one local per member (`Local`, `VecLocal` or StructLocal)."""

    type: type
    members: dict[str, object]

    def __repr__(self) -> str:
        return f"a {self.type.__name__} local"


STRUCTS = (StructRef, StructValue, StructLocal)
"""What `s.a` reads a member of in a kernel: a struct argument, value or local."""


class StructValues:
    """Mixed into `Frontend`: making, reading, storing and passing struct values."""

    def make_struct(self, t: type, node: ast.Call) -> StructValue:
        """`Foo(1, 2)`, `Foo(a=1)`: each member converted to its type, a missing one zero."""
        members = members_of(t) or {}
        args = self.visit_args(node.args)
        if len(args) > len(members):
            raise self.error(
                f"{t.__name__} has {len(members)} members, not {len(args)}.", QdTypeError
            )
        given = dict(zip(members, args))
        for kw in node.keywords:
            if kw.arg not in members:
                raise self.error(f"{t.__name__} has no member `{kw.arg}`.", QdTypeError)
            given[kw.arg] = self.visit(kw.value)
        return StructValue(
            t, {k: self.member_value(k, mt, given.get(k)) for k, mt in members.items()}
        )

    def anonymous_struct(self, node: ast.Call) -> StructValue:
        """`qd.Struct(a=v, b=2)`, `qd.Struct({"a": v, "b": {"c": 1}})`: a struct whose members have
        the types of their values (a dict's, a nested struct's)."""
        args = self.visit_args(node.args)
        if len(args) == 1 and not node.keywords and isinstance(args[0], dict):
            given = dict(args[0])
        elif not args and all(kw.arg is not None for kw in node.keywords):
            given = {kw.arg: self.visit(kw.value) for kw in node.keywords}
        else:
            raise self.error(
                "Custom structs need to be initialized using either dictionary or keyword "
                "arguments: qd.Struct({'a': 1}) or qd.Struct(a=1).",
                QuadrantsSyntaxError,
            )
        return self.struct_of(given)

    def struct_of(self, given: dict) -> StructValue:
        """An anonymous struct of the members `given` (a dict among them: a nested struct)."""
        members: dict[str, object] = {}
        types: dict[str, object] = {}
        for k, x in given.items():
            v = self.struct_of(x) if isinstance(x, dict) else self.struct_value(x)
            if v is None:
                vec = self.vec_of(x)
                v = vec if vec is not None else self.value(x)
            members[k] = v
            types[k] = (
                v.type
                if isinstance(v, StructValue)
                else self.vec_type(v)
                if isinstance(v, Vec)
                else v.type
            )
        t = type("Struct", (), {"__qd_struct__": types, "__qd_anonymous_struct__": True})
        return StructValue(t, members)

    def vec_type(self, v: Vec) -> object:
        dtype = v.dtype
        if len(v.shape) == 1:
            return lang.VectorType(v.shape[0], dtype)
        return lang.MatrixType(v.shape[0], v.shape[1], dtype)

    def member_value(self, name: str, t: object, x: object) -> object:
        """`x` as a value of member type `t` (None: its zero)."""
        fields = members_of(t)
        if fields is not None and isinstance(t, type):
            if x is None:
                return StructValue(
                    t, {k: self.member_value(k, mt, None) for k, mt in fields.items()}
                )
            if isinstance(x, dict):  # `{"linedir": v, "length": 1}`: its members by name
                x = self.struct_of(x)
            value = self.struct_value(x)
            if value is None:  # as `t(x)`: its first member `x`, the others zero (Quadrants')
                first = next(iter(fields), None)
                return StructValue(
                    t,
                    {
                        k: self.member_value(k, mt, x if k == first else None)
                        for k, mt in fields.items()
                    },
                )
            if value.type is not t and getattr(value.type, "__qd_anonymous_struct__", False):
                value = self.retyped(value, t, name)
            return value
        if isinstance(t, lang.MatrixType):
            return self.from_type(t, [0 if x is None else x])
        dtype = self.type_dtype(t)
        return self.cast(self.value(0 if x is None else x, dtype), dtype)

    def struct_value(self, x: object) -> StructValue | None:
        """A struct's members as values (a local's loaded, a struct argument's read); None for
        anything that is not a struct of a struct type."""
        if isinstance(x, StructValue):
            return x
        if isinstance(x, StructLocal):
            return StructValue(x.type, {k: self.load_member(m) for k, m in x.members.items()})
        if isinstance(x, StructRef) and members_of(type(x.value)) is not None:
            values = {k: self.member(x, k) for k in members_of(type(x.value)) or {}}
            return StructValue(
                type(x.value), {k: self.struct_value(v) or v for k, v in values.items()}
            )
        return None

    def check_struct_param(self, name: str, annotation: object, x: object) -> None:
        """A `@qd.func` parameter annotated with a dataclass takes a struct (of that class, or of
        one redefined since: its members are checked as they are read)."""
        if is_view_type(annotation):
            if not isinstance(x, View):
                raise self.error(
                    f"parameter `{name}` takes a BufferView, not {describe(x)}.", QdTypeError
                )
            return
        struct = isinstance(annotation, type) and (
            hasattr(annotation, "__dataclass_fields__") or members_of(annotation) is not None
        )
        if struct and isinstance(annotation, type) and not isinstance(x, STRUCTS):
            raise self.error(
                f"parameter `{name}` takes a {annotation.__name__}, not {describe(x)}.",
                QdTypeError,
            )

    def struct_leaves(self, x: object) -> object:
        """A struct's members (of its nested structs too) as a tuple, in member order, as a
        kernel returns them; anything else as it is."""
        v = self.struct_value(x)
        if v is None:
            return x
        out: list = []
        for m in v.members.values():
            leaves = self.struct_leaves(m)
            out.extend(leaves if isinstance(m, StructValue) else [leaves])
        return tuple(out)

    def slot_struct(self, t: type, slots: dict[str, object]) -> StructLocal:
        """A struct field's element: members that are field elements (`struct_fields.py`)."""
        return StructLocal(t, slots)

    def load_member(self, m: object) -> object:
        if isinstance(m, (FieldSlot, ElementRef)):
            return self.slot_load(m)
        if isinstance(m, Local):
            return self.emit(ir.LocalLoad, [m.ref], dtype_of(m.ref), m.ref.name)
        if isinstance(m, VecLocal):
            return self.load_vec_local(m)
        return self.struct_value(m)

    def new_struct_local(self, name: str, v: StructValue) -> StructLocal:
        members: dict[str, object] = {}
        for k, x in v.members.items():
            member = f"{name}_{k}"
            if isinstance(x, StructValue):
                members[k] = self.new_struct_local(member, x)
            elif isinstance(x, Vec):
                members[k] = self.new_vec_local(member, x)
            else:
                assert isinstance(x, ir.Value), x  # else a scalar value
                ref = self.emit(ir.Alloca, (), LocalType(dtype_of(x)), member)
                self.emit(ir.LocalStore, [ref, x])
                members[k] = Local(ref, self.parallel_depth)
        return StructLocal(v.type, members)

    def retyped(self, v: StructValue, t: type, name: str) -> StructValue:
        """`v` as a struct of type `t`: an anonymous struct (`qd.Struct(a=1)`) of the same member
        names, in the same order, is one, each member converted (as in Quadrants)."""
        fields = members_of(t) or {}
        if not getattr(v.type, "__qd_anonymous_struct__", False) or list(v.members) != list(fields):
            raise self.error(f"`{name}` is a {t.__name__}; it cannot be given {v!r}.", QdTypeError)
        return StructValue(
            t, {k: self.member_value(k, mt, v.members[k]) for k, mt in fields.items()}
        )

    def store_struct(self, local: StructLocal, x: object, name: str) -> None:
        v = self.struct_value(x)
        if v is not None and v.type is not local.type:
            v = self.retyped(v, local.type, name)
        if v is None:
            raise self.error(
                f"`{name}` is a {local.type.__name__}; it cannot be given {x!r}.", QdTypeError
            )
        for k, m in local.members.items():
            self.store_member(m, v.members[k], f"{name}.{k}")

    def store_member(self, m: object, x: object, name: str) -> None:
        if isinstance(m, (FieldSlot, ElementRef)):
            self.slot_store(m, x)
        elif isinstance(m, Local):
            dtype = dtype_of(m.ref)
            self.emit(ir.LocalStore, [m.ref, self.cast(self.value(x, dtype), dtype)])
        elif isinstance(m, VecLocal):
            self.store_vec_local(m, x, name)
        else:
            assert isinstance(m, StructLocal), m
            self.store_struct(m, x, name)

    def struct_attribute(self, base: StructValue | StructLocal, attr: str) -> object:
        """`x.a` of a struct value or local; `x.method` of its type."""
        if attr in base.members:
            m = base.members[attr]
            return self.load_member(m) if isinstance(base, StructLocal) else m
        found = inspect.getattr_static(base.type, attr, None)
        if isinstance(found, lang.Func):
            return BoundMethod(found, base)
        raise self.error(f"{base!r} has no member `{attr}`.", QdTypeError)

    def struct_store(self, target: ast.expr, value: object) -> bool:
        """`x.a = v` (and `x.a.b = v`) on a struct local; False for any other target."""
        if not isinstance(target, ast.Attribute):
            return False
        base = self.struct_target(target.value)
        if base is None:
            return False
        if target.attr not in base.members:
            raise self.error(f"{base!r} has no member `{target.attr}`.", QdTypeError)
        self.store_member(base.members[target.attr], value, ast.unparse(target))
        return True

    def struct_vec_member(self, node: ast.expr) -> VecLocal | ElementRef | None:
        """The vector local of `v.p` when `v` is a struct local (so `v.p.x = 1` writes it)."""
        if not isinstance(node, ast.Attribute):
            return None
        base = self.struct_target(node.value)
        member = base.members.get(node.attr) if base is not None else None
        return member if isinstance(member, (VecLocal, ElementRef)) else None

    def struct_target(self, node: ast.expr) -> StructLocal | None:
        if isinstance(node, ast.Name):
            local = self.find_local(node.id)
            return local if isinstance(local, StructLocal) else None
        if isinstance(node, ast.Attribute):
            base = self.struct_target(node.value)
            member = base.members.get(node.attr) if base is not None else None
            return member if isinstance(member, StructLocal) else None
        return None


class StructParts(Structs, StructValues, StructFields):
    """The frontend's struct parts: struct arguments (`structs.py`), struct values (above) and
    struct fields (`struct_fields.py`)."""
