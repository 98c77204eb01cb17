"""Struct arguments in a kernel: a `dataclasses.dataclass` parameter, `self` of a data-oriented
method and an object a `qd.template()` parameter passes, each flattened into plain parameters.

The host (`qdlab/host/struct_args.py`) declares one kernel parameter per member that is a kernel
argument (an ndarray, or a scalar or vector member of a dataclass), named after its attribute path
(`s.x`, `s.inner.v`), so the gate, the alias check, the keys and the launch ABI only ever see plain
parameters. The frontend sees the struct as a `StructRef`: reading `s.x` asks the host what that
member is (`StructArg.member`) and gives the parameter's value, a nested `StructRef` (`s.inner`,
which a `@qd.func` may take), a bound `@qd.func` method, or a compile-time Python value. Every read
is recorded in `kernel.flags.members`: the host keys a launch on the members read, and a member
never read costs nothing at launch. A new kind of member (a field) is a new `Member.kind` here and
in the host's classification.

A part of the frontend's visitor: mixed into `Frontend`; uses its `emit`, `error`, `block`, `loc`,
`kernel`, `config`, `arguments`, `scope`, `param_vec` and `inline_call`.
"""

from __future__ import annotations

import ast
import copy
import functools
import types
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, cast

from ...core.errors import QdError, QdSyntaxError, QdValueError, QuadrantsCompilationError
from ...core.fields import StructFieldBase
from ...core.types import ArrayType, TensorType
from .. import ir
from .vectors import Vec
from .views import is_view_type

if TYPE_CHECKING:
    from .struct_values import StructLocal, StructValue

PARAM, STRUCT, METHOD, VALUE, OPAQUE = "param", "struct", "method", "value", "opaque"
"""What a member is: a kernel parameter; a nested struct; a `@qd.func` of its class, bound to it; a
compile-time Python value; OPAQUE (never answered by the host) records a struct used whole at
compile time (`qd.static(helper(s))`), which the launch key then describes by content."""
ITEMS = "items"
"""A list or tuple of structs (Genesis' SAP coupler's contact handlers). A `qd.static` loop over it
reads each item as a struct of its own, reached by its index (`self.handlers[0]`), so the launch
key and the manifest describe what the loop read through the items, each by its path, and the list
by its length; read any other way it is a VALUE, described by content."""


def path_text(root: str, path: tuple[str, ...]) -> str:
    """A member's name: `root.a.b`, an item's step glued on (`self.handlers[0].x`); with no root,
    the path from it (`a.b`)."""
    text = ".".join((root, *path) if root else path)
    return text.replace(".[", "[") if ".[" in text else text


def path_steps(text: str) -> list[str | int]:
    """The steps of a name `path_text` made (the root first): attribute names, and each item's
    index as an int. ValueError for a step that is neither."""
    steps: list[str | int] = []
    for part in text.split("."):
        name, *items = part.split("[")
        if name:
            steps.append(name)
        for item in items:
            if not (item.endswith("]") and item[:-1].isdigit()):
                raise ValueError(f"not a member path: {text!r}")
            steps.append(int(item[:-1]))
    return steps


def follow(value: object, steps: list[str | int], missing: object) -> object:
    """What `steps` (`path_steps`, without the root) reach from `value`, or `missing`."""
    for step in steps:
        if isinstance(step, int):
            if not isinstance(value, (list, tuple)) or step >= len(value):
                return missing
            value = value[step]
        else:
            value = getattr(value, step, missing)
        if value is missing:
            return missing
    return value


TEMPLATE = "<template>"
"""The owner of a field's path (and of a manifest dependency) reached from a template argument:
the path (`self.sim.x`) is looked up in the kernel's template arguments, not in a function."""
FROM_TEMPLATE = "@"
"""An owner step that starts at a template argument (`@self.sim.f`), wherever the call is."""
ITEM_VALUE = "__qd_item"
"""The names `qd.static(...)` binds the items of a list of structs under (`ITEMS`)."""
MEMBER_VALUE = "__qd_member"
"""The names `qd.static(...)` binds struct members' values under while it evaluates. A
member's value is part of its argument's content, which the kernel's signature holds
(`struct_args.bind`), so these names are not manifest dependencies (a new process could not resolve
them)."""


@dataclass(frozen=True)
class Member:
    """The host's answer for one member of a struct argument."""

    kind: str
    """PARAM, STRUCT, METHOD or VALUE."""
    value: object
    """The Python object the attribute holds (for METHOD, the `@qd.func`)."""
    type: object = None
    """For PARAM: the parameter's type (ArrayType, DType, TensorType)."""
    annotation: object = None
    """For STRUCT: the dataclass its members are typed by (None: typed by their values)."""


class StructArg(Protocol):
    """What the host passes for a struct parameter (`qdlab.host.struct_args.StructArg`)."""

    root: str
    """The kernel parameter's name."""
    lifts: bool
    """Whether its primitives are scalar parameters
    (`@qd.data_oriented(template_primitives=False)`)."""

    def member(self, ref: StructRef, attr: str) -> Member:
        """What `ref.attr` is; AttributeError when it has no such attribute, a QdError when its
        value does not fit its annotation."""
        ...


@dataclass(frozen=True, eq=False)
class StructRef:
    """A struct argument, or a struct inside one, while compiling: `s`, `s.inner`."""

    arg: StructArg
    path: tuple[str, ...]
    value: object
    """The Python object at this path."""
    annotation: object = None
    """The dataclass that types its members, or None."""

    @functools.cached_property
    def name(self) -> str:
        return path_text(self.arg.root, self.path)

    def __repr__(self) -> str:
        return f"struct argument `{self.name}`"


@dataclass(frozen=True)
class BoundMethod:
    """`s.helper`: a `@qd.func` of the struct's class, called with the struct as its first
    argument."""

    func: object
    self: StructRef | StructValue | StructLocal


class Structs:
    """Mixed into `Frontend`: struct members, methods, `qd.static` over them, and the errors for
    rebinding them."""

    arguments: dict[str, object]
    """The kernel's parameters by name (a struct member's is `s.x`), set by `lower_kernel`."""

    def member(self, ref: StructRef | StructValue | StructLocal, attr: str) -> object:
        """`ref.attr` in a kernel: a parameter's value, a StructRef, a BoundMethod or a Python
        value; the read is recorded. (A struct value made in the kernel: its member.)"""
        if not isinstance(ref, StructRef):
            return self.struct_attribute(ref, attr)
        try:
            m = ref.arg.member(ref, attr)
        except AttributeError:
            raise self.error(
                f"{ref} ({type(ref.value).__name__}) has no member `{attr}`.",
                QuadrantsCompilationError,
            ) from None
        except QdError as e:
            raise type(e)(e.message, e.loc or self.loc) from None
        path = (*ref.path, attr)
        self.note_member(ref.arg.root, path, VALUE if m.kind == ITEMS else m.kind)
        if m.kind == PARAM:
            return self.member_param(path_text(ref.arg.root, path), m.type)
        if m.kind == STRUCT:
            member = StructRef(ref.arg, path, m.value, m.annotation)
            return self.view_of(member) if is_view_type(m.value) else member
        if m.kind == METHOD:
            return BoundMethod(m.value, ref)
        if isinstance(m.value, float) and self.config.raise_on_templated_floats:
            raise self.error(
                f"`{ref.name}.{attr}` is a Python float ({m.value!r}) baked into the kernel, which "
                "qd.init(raise_on_templated_floats=True) refuses: pass it as a `qd.f32` parameter.",
                QdValueError,
            )
        if isinstance(m.value, StructFieldBase):  # its members' fields are found by this path
            self.note_struct_field(m.value, f"{ref.name}.{attr}")
        return self.tensor_of(m.value, f"{ref.name}.{attr}", TEMPLATE)  # a field: its parameter

    def note_struct_field(self, sf: object, path: str) -> None:
        """Struct field `sf` (or a field among its members) was reached from a template argument
        by `path` (`self.pairs.info`): wherever the kernel uses it later, bound to a local name
        (`info = qd.static(self.pairs.info)`) or passed to a func, the manifest finds it again by
        that path."""
        self.__dict__.setdefault("struct_field_members", {}).setdefault(id(sf), (sf, path))

    def struct_field_path(self, sf: object) -> str | None:
        """The path from a template argument by which struct field `sf` (or a field among a
        struct field's members) was reached (`self.particles`), for the manifest to find its
        members' fields again; None if it was not reached so."""
        found = self.__dict__.get("struct_field_members", {}).get(id(sf))
        return found[1] if found is not None and found[0] is sf else None

    def note_member(self, root: str, path: tuple[str, ...], kind: str) -> None:
        members = self.kernel.flags.members
        was = members.get((root, path))
        if was != OPAQUE and (kind != ITEMS or was is None):  # read whole: described whole
            members[(root, path)] = kind

    def struct_item(self, node: ast.Subscript) -> StructRef | None:
        """`s.list[k]` at a compile-time index `k` of a list of structs (`ITEMS`): that item as a
        struct reached by its index; None otherwise (the subscript is lowered as any other)."""
        if not isinstance(node.value, ast.Attribute):
            return None
        items = self.struct_items(node.value)
        if items is None:
            return None
        key = self.visit(node.slice)
        if isinstance(key, ir.Value) and isinstance(key.owner, ir.Const) and key.dtype.is_int:
            key = key.owner.attrs["value"]  # `objs[offset[d]]`, an entry of a static vector
        if isinstance(key, int) and not isinstance(key, bool) and -len(items) <= key < len(items):
            return items[key]
        return None

    def struct_items(self, node: ast.expr) -> list[StructRef] | None:
        """The items of `s.a.list` (a `qd.static` loop's iterable, or the base of a compile-time
        index), each a struct reached by its index (`ITEMS`), when `s` is a struct argument and the
        list's items are structs; None otherwise (it is evaluated as any compile-time value)."""
        chain: list[str] = []
        base = node
        while isinstance(base, ast.Attribute):
            chain.insert(0, base.attr)
            base = base.value
        if not (chain and isinstance(base, ast.Name)):
            return None
        ref = next((f[base.id] for f in reversed(self.scope.frames) if base.id in f), None)
        if not isinstance(ref, StructRef):
            return None
        raw = ref.value
        for attr in chain:
            raw = getattr(raw, attr, None)
        if not isinstance(raw, (list, tuple)):
            return None  # (cheaply) not a list
        for attr in chain[:-1]:
            ref = self.member(ref, attr)
            if not isinstance(ref, StructRef):
                return None
        if ref.annotation is not None:
            return None
        try:
            m = ref.arg.member(ref, chain[-1])
        except (AttributeError, QdError):  # reported where the loop evaluates it
            return None
        if m.kind != ITEMS:
            return None
        path = (*ref.path, chain[-1])
        self.note_member(ref.arg.root, path, ITEMS)
        return [
            StructRef(ref.arg, (*path, f"[{k}]"), item)
            for k, item in enumerate(cast("list", m.value))
        ]

    def member_param(self, name: str, t: object) -> object:
        """The value of the parameter of member `name`: declared by the host before lowering, or
        (a member reached along a second path to the same object) declared here, at the top of the
        kernel's body."""
        value = self.arguments.get(name)
        if value is not None:
            return value
        if self.kernel.flags.fields:  # the launch fills members' words, then fields'
            raise self.error(
                f"`{name}` is a member reached along a second path after a field was read; in this "
                "kernel read it by the path its struct parameter names first."
            )
        index = len(self.kernel.params)
        self.kernel.params.append(ir.Param(name, t))  # type: ignore[arg-type]
        self.kernel.flags.late_params = True
        outer, self.block = self.block, ir.Block()
        try:
            if isinstance(t, TensorType):
                value = self.param_vec(name, t, index)
            else:
                value = self.emit(ir.Arg, (), t, name, index=index)
            body = self.kernel.body
            top = next((k for k, op in enumerate(body.ops) if not isinstance(op, ir.Arg)), None)
            for k, op in enumerate(self.block.ops):
                op.parent = body
                body.ops.insert(len(body.ops) if top is None else top + k, op)
        finally:
            self.block = outer
        self.arguments[name] = value
        return value

    def call_bound(self, method: BoundMethod, node: ast.Call) -> object:
        """`s.helper(x)`: the method's body inlined with the struct as its first argument."""
        args = self.template_refs(method.func, node.args, self.visit_args(node.args), skip=1)
        kwargs = {kw.arg: self.visit(kw.value) for kw in node.keywords}
        return self.inline_call(
            method.func,
            [method.self, *args],
            kwargs,
            self.call_path(node.func, method.self, getattr(method.func.fn, "__name__", None)),
            method=getattr(method.func, "classfunc", False),
        )

    def call_path(self, callee: ast.expr, bound: object, name: str | None = None) -> str:
        """How the manifest finds a bound func again (an owner step): a method of the kernel's
        struct argument by its path from that argument, `@self.sim.f` (wherever it is called,
        `self` inside a method included; one passed in as a template, `task(...)`, by its `name`
        on that struct); a func held in a list at a compile-time index (`objs[k].f` in a
        `qd.static` loop) by that index's value, `objs[2].f`."""
        chain, base = [], callee
        while isinstance(base, ast.Attribute):
            chain.insert(0, base.attr)
            base = base.value
        if isinstance(base, ast.Name) and chain:  # `self.rigid_solver.f`, `self` a struct's
            ref = next((f[base.id] for f in reversed(self.scope.frames) if base.id in f), None)
            if isinstance(ref, StructRef):
                return f"{FROM_TEMPLATE}{'.'.join((ref.name, *chain))}"
        if isinstance(bound, StructRef) and isinstance(callee, ast.Attribute):
            return f"{FROM_TEMPLATE}{bound.name}.{callee.attr}"
        if isinstance(bound, StructRef) and isinstance(callee, ast.Name) and name:
            return f"{FROM_TEMPLATE}{bound.name}.{name}"
        if isinstance(callee, ast.Subscript) and isinstance(callee.slice, ast.Name):
            k = next(
                (f[callee.slice.id] for f in reversed(self.scope.frames) if callee.slice.id in f),
                None,
            )
            if isinstance(k, int) and not isinstance(k, bool):
                return f"{ast.unparse(callee.value)}[{k}]"
        return ast.unparse(callee)

    def rebind_error(self, name: str, ref: StructRef) -> QdError:
        return self.error(
            f"`{name}` is {ref} and cannot be assigned; give the new value a name of its own.",
            QdSyntaxError,
        )

    def member_assign_error(self, ref: StructRef, attr: str) -> QdError:
        return self.error(
            f"member `{ref.name}.{attr}` of {ref} cannot be assigned in a kernel: members are "
            f"fixed at the launch (write an ndarray member's elements, `{ref.name}.{attr}[i] = "
            f"...`, or copy a scalar member into a local, `{attr} = {ref.name}.{attr}`).",
            QdSyntaxError,
        )

    # -- qd.static over struct members -------------------------------------------------------------
    def static_members(self, node: ast.expr, env: dict) -> ast.expr:
        """`node` with each attribute chain that starts at a struct argument replaced by the
        member's value (bound in `env`), so reading it is recorded; a struct used whole is recorded
        OPAQUE and passed as its object. Returns `node` itself when it reads no struct."""
        structs = {k for k, v in env.items() if isinstance(v, StructRef)}
        if not structs or not any(
            isinstance(n, ast.Name) and n.id in structs for n in ast.walk(node)
        ):
            return node
        fe = self

        class Substitute(ast.NodeTransformer):
            def visit_Attribute(self, n: ast.Attribute) -> ast.AST:
                value = fe.static_chain(n, env)
                if value is None:
                    n = cast(ast.Attribute, self.generic_visit(n))
                    item = n.value  # `s.items[k].flag`: the item substituted, then its member
                    if not (isinstance(item, ast.Name) and item.id.startswith(ITEM_VALUE)):
                        return n
                    value = fe.static_chain(n, env)
                    if value is None:
                        return n
                name = f"{MEMBER_VALUE}{len(env)}"
                env[name] = value
                return ast.copy_location(ast.Name(name, ast.Load()), n)

            def visit_Subscript(self, n: ast.Subscript) -> ast.AST:
                key = n.slice
                k = (
                    key.value
                    if isinstance(key, ast.Constant)
                    else env.get(key.id)
                    if isinstance(key, ast.Name)
                    else None
                )
                items = (
                    fe.struct_items(n.value)
                    if isinstance(n.value, ast.Attribute) and type(k) is int
                    else None
                )
                if items is None or not -len(items) <= cast(int, k) < len(items):
                    return self.generic_visit(n)
                name = f"{ITEM_VALUE}{len(env)}"  # an item of a list of structs (`ITEMS`)
                env[name] = items[cast(int, k)]
                return ast.copy_location(ast.Name(name, ast.Load()), n)

            def visit_Name(self, n: ast.Name) -> ast.AST:
                ref = env.get(n.id)
                if isinstance(ref, StructRef):
                    fe.note_member(ref.arg.root, ref.path, OPAQUE)
                    name = f"__qd_struct{len(env)}"
                    env[name] = ref.value
                    return ast.copy_location(ast.Name(name, ast.Load()), n)
                return n

        out = Substitute().visit(copy.deepcopy(node))
        for n in ast.walk(out):  # an item used whole: its content decides what compiles
            if isinstance(n, ast.Name) and n.id.startswith(ITEM_VALUE):
                item = env[n.id]
                if isinstance(item, StructRef):
                    fe.note_member(item.arg.root, item.path, OPAQUE)
                    env[n.id] = item.value
        return out

    def static_chain(self, node: ast.Attribute, env: dict) -> object:
        """The compile-time value of `s.a.b` (None when the chain does not start at a struct)."""
        chain: list[str] = []
        base: ast.expr = node
        while isinstance(base, ast.Attribute):
            chain.append(base.attr)
            base = base.value
        if not (isinstance(base, ast.Name) and isinstance(env.get(base.id), StructRef)):
            return None
        x, parent = env[base.id], None
        for attr in reversed(chain):
            parent = x
            x = self.member(x, attr) if isinstance(x, StructRef) else getattr(x, attr)
            if isinstance(parent, StructFieldBase):  # `self.pairs.info`: a member of a struct field
                outer = self.struct_field_path(parent)
                if outer is not None:
                    self.note_struct_field(x, f"{outer}.{attr}")
            if attr is chain[0] and (
                isinstance(x, BoundMethod)
                or (isinstance(x, ir.Value) and isinstance(x.type, ArrayType))
            ):
                return x  # `qd.static(self.f)`, `qd.static(self.a)`: used later as `self.f` is
            if isinstance(x, ir.Value) and isinstance(parent, StructRef) and parent.arg.lifts:
                raise self.error(
                    f"`{ast.unparse(node)}` is a primitive member of a "
                    "@qd.data_oriented(template_primitives=False) object, so it is a runtime "
                    "kernel argument and cannot be used inside qd.static(); remove qd.static(), or "
                    "decorate the class @qd.data_oriented to bake it as a compile-time constant.",
                    QdSyntaxError,
                )
            if isinstance(x, (ir.Value, Vec, BoundMethod)):
                raise self.error(
                    f"`{ast.unparse(node)}` is a kernel argument or a @qd.func, not a value known "
                    "at compile time; qd.static needs one.",
                    QuadrantsCompilationError,
                )
        if isinstance(x, types.MethodType) and isinstance(parent, StructRef):
            x = parent  # a Python method of the struct: what it reads is the struct's content
        if isinstance(x, StructRef):  # used whole: its content decides what compiles
            self.note_member(x.arg.root, x.path, OPAQUE)
            return x.value if x is not parent else getattr(x.value, chain[0])
        return x
