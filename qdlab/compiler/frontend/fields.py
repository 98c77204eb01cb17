"""Fields in kernels: a field a kernel reaches (a global name, an attribute, a template argument,
an item of a Python container) becomes a hidden array parameter of the kernel.

The parameter is appended after the user's, once per distinct field, named after the first name
the kernel reached it by; its launch words are filled from the field's storage, so the split, the
gate, keys and the launch ABI treat it as any array parameter whose base pointer comes from the
launch, and no address is ever compiled into a binary or a key. `kernel.flags.fields` maps each
such parameter's index to its field: the gate knows from it that two fields (or a field and an
ndarray) never share memory, and the launcher reads the words from it. A field's shape is static:
`x.shape` is a tuple of Python integers, and a loop over a field has constant bounds.
"""

from __future__ import annotations

import ast
import re
import types

from qdlab.core import language as lang
from qdlab.core.fields import FieldBase, StructFieldBase

from ...core.errors import (
    QdError,
    QdIndexError,
    QdRuntimeError,
    QdSyntaxError,
    QdTypeError,
)
from ...core.types import ArrayType, i32
from .. import ir
from ..ir import field_params
from .fingerprint import UNKNOWN, fingerprint
from .scope import GradOf, Local, array_type
from .source import closure_values
from .struct_values import StructLocal
from .structs import TEMPLATE
from .vector_index import NEGATIVE_INDEX
from .vectors import VecLocal


def field_paths(kernel: ir.Kernel) -> list[tuple[str, str]] | None:
    """How the manifest finds each field again, in the order of their hidden parameters: the
    function that reached it (its path from the kernel) and the global name or attribute chain;
    None when one was reached otherwise (a template argument, a container)."""
    paths = kernel.flags.field_paths
    fields = field_params(kernel)
    return [paths[i] for i in sorted(fields)] if all(i in paths for i in fields) else None


def field_type(f: FieldBase) -> ArrayType:
    """The type of the hidden parameter a field feeds (its memory's axis order, when its dense
    layout is not row-major, as an ndarray's `layout`; whether it is stored entry by entry)."""
    layout = getattr(f, "_memory_layout", None)
    soa = bool(getattr(f, "_soa", False))
    extents = tuple(f.shape[a] for a in layout) if layout else tuple(f.shape)
    if getattr(f, "_quant", None) is not None:  # its words are a field of their own
        extents = None
    return ArrayType(
        f.dtype, len(f.shape), f.has_grad(), "unsafe", tuple(f.element), layout, soa, extents
    )


def add_field_param(kernel: ir.Kernel, f: FieldBase, name: str) -> ir.Value:
    """A hidden parameter for `f` added after lowering (a quantised field's word, the matrix field
    of an entry): its `arg` op at the top of the body. No manifest finds it again by name."""
    t = field_type(f)
    index = len(kernel.params)
    taken = {p.name for p in kernel.params}
    while name in taken:
        name += "_f"
    kernel.params.append(ir.Param(name, t))
    arg = ir.Arg([], t, {"field": True, "index": index}, None, None, name)
    arg.parent = kernel.body
    kernel.body.ops.insert(0, arg)
    kernel.flags.fields[index] = f
    return arg.out


def dep_fingerprint(value: object) -> str:
    """What a manifest checks of a compile-time value: a field by its type and shape (its storage
    is the launch's business, and another process has another one), anything else by content."""
    if isinstance(value, FieldBase):
        if value._unusable() is not None:
            return UNKNOWN  # the kernel reports why at the line that uses it
        f = value.primal or value
        if f._entry_of is not None:  # its owner's memory, at its entry
            owner, entry = f._entry_of
            return f"entry:{entry}:{value.primal is not None}:{dep_fingerprint(owner)}"
        quant = getattr(f, "_quant", None)  # its words and bits, which its lowering compiles in
        packed = f":{quant.text()}" if quant is not None else ""
        return (
            f"field:{field_type(f)}:{f.shape}:{f._index_offset}:{value.primal is not None}{packed}"
        )
    if isinstance(value, StructFieldBase):
        return f"structfield:{value._signature()}"
    return fingerprint(value)


class Fields:
    """Mixed into `Frontend`; uses its `kernel`, `emit`, `const`, `error`, `deps`, `loc` and
    `struct_field_path`."""

    def tensor_of(self, value: object, name: str, resolvable: bool | str = False) -> object:
        """`value` as a kernel sees it: a field becomes its hidden parameter (`x.grad`, reached as
        a field of its own, the gradient buffer of its primal's); anything else is itself.
        `resolvable`: `name` is a global or an attribute chain the manifest can look up again in
        the function reading it (True), or in the kernel's template arguments (TEMPLATE)."""
        if not isinstance(value, FieldBase):
            return value
        if value.primal is not None:
            why = value._unusable()
            if why is not None:
                raise self.error(f"field `{name}` cannot be used: {why}.", QdRuntimeError)
            return GradOf(self.field_arg(value.primal, name, resolvable))
        return self.field_arg(value, name, resolvable)

    def field_arg(self, f: FieldBase, name: str, resolvable: bool | str = False) -> ir.Value:
        values = self.__dict__.setdefault("field_values", {})
        table = self.kernel.flags.fields
        for index, g in table.items():
            if g is f:
                return values[index]
        why = f._unusable()
        if why is not None:
            raise self.error(f"field `{name}` cannot be used: {why}.", QdRuntimeError)
        taken = {p.name for p in self.kernel.params}
        pname = re.sub(r"\W", "_", name.removesuffix(".grad")) or "field"
        while pname in taken:
            pname += "_f"
        index = len(self.kernel.params)
        t = field_type(f)
        self.kernel.params.append(ir.Param(pname, t))
        op = ir.Arg([], t, {"field": True, "index": index}, None, None, pname)
        op.parent = self.kernel.body
        self.kernel.body.ops.insert(0, op)
        table[index] = f
        values[index] = op.result
        label = name.removesuffix(".grad")
        if pname != label:  # messages name it as the kernel reached it (`s.a`)
            self.kernel.flags.field_labels[pname] = label
        reached = None if resolvable else self.struct_field_path(f)
        if resolvable:  # the manifest finds it again by this name (its dependency says its type)
            owner = TEMPLATE if resolvable == TEMPLATE else self.scope.owner
            self.kernel.flags.field_paths[index] = (owner, name)
        elif reached is not None:  # a struct field's member, reached from a template argument
            self.kernel.flags.field_paths[index] = (TEMPLATE, reached)
        else:  # no manifest: it could not find the field again
            self.deps.add(("", "<field>", UNKNOWN))
        return op.result  # type: ignore[return-value]

    def field_of(self, v: object) -> FieldBase | None:
        """The field an array value stands for, or None for an ndarray parameter."""
        if not (isinstance(v, ir.Value) and isinstance(v.owner, ir.Arg)):
            return None
        return field_params(self.kernel).get(v.owner.attrs["index"])

    def array_shape(self, base: ir.Value) -> tuple:
        """`a.shape`: Python integers for a field, the extents in the launch words for an
        ndarray."""
        f = self.field_of(base)
        if f is not None:
            return tuple(f.shape)
        layout = array_type(base).layout  # memory axis p holds axis layout[p]
        return tuple(
            self.emit(
                ir.Shape,
                [base],
                i32,
                f"{base.name}_shape{d}",
                axis=layout.index(d) if layout else d,
            )
            for d in range(array_type(base).ndim)
        )

    def array_attr(self, base: ir.Value, attr: str) -> object:
        """`x.shape`, and as the reference has them, `x.n` / `x.m` (the element's sizes: 1 for a
        scalar) and `x.dtype`."""
        if attr == "shape":
            return self.array_shape(base)
        t = array_type(base)
        if attr == "dtype":
            return t.dtype
        element = (*t.element, 1, 1)
        return element[0] if attr == "n" else element[1] if len(t.element) != 1 else 1

    def loop_extents(self, base: ir.Value) -> list[tuple[ir.Value, ir.Value]]:
        """(start, stop) per axis of a loop over an array's index space (`for i, j in x`), from a
        field's offset."""
        f = self.field_of(base)
        offset = f._index_offset if f is not None else (0,) * array_type(base).ndim
        return [
            (self.const(o, i32), self.const(o + s, i32) if not isinstance(s, ir.Value) else s)
            for o, s in zip(offset, self.array_shape(base))
        ]

    def check_constant_indices(self, arr: ir.Value, items: list[object]) -> None:
        """Refuses a Python-int index known to fall outside the array: a negative one into an
        ndarray, in Quadrants' words and type; one outside a field's extent (a field takes
        negative indices above its offset), which Quadrants writes into whatever its root buffer
        holds there: refused where it would fall outside the field's own storage here (before it,
        or past its storage and slack) and, with bounds checks on, past its shape, as a debug launch
        refuses it; past the shape into the next row or the slack it runs, as there."""
        f = self.field_of(arr)
        for axis, k in enumerate(items):
            if not isinstance(k, int) or isinstance(k, bool):
                continue
            if f is None:
                if k < 0:
                    raise self.error(NEGATIVE_INDEX, QdSyntaxError)
                continue
            start = f._index_offset[axis]
            stop = start + f.shape[axis]
            if not start <= k < stop and (
                self.config.bounds_checks
                or not getattr(f, "_in_storage", None)
                or not f._in_storage(axis, k)
            ):
                raise self.error(
                    f"Out of bound access: the constant index {k} (axis {axis}) is out of range "
                    f"for `{arr.name}`, whose indices run from {start} to {stop - 1}.",
                    QdIndexError,  # what a debug launch raises for it (a RuntimeError)
                )

    def from_offset(self, arr: object, indices: list[ir.Value]) -> list[ir.Value]:
        """Indices as the storage takes them: a field's declared with an offset counted from its
        first element, a laid-out ndarray's (`qd.tensor(..., layout=(1, 0))`) or field's (a
        column-major dense layout) in memory's order."""
        layout = getattr(getattr(arr, "type", None), "layout", None)
        f = self.field_of(arr)
        if f is not None and any(f._index_offset):
            indices = [
                self.emit(ir.BinOp, [v, self.const(o, i32)], i32, op="sub") if o else v
                for v, o in zip(indices, f._index_offset)
            ]
        return [indices[a] for a in layout] if layout is not None else indices

    def volatile_target_error(self, arg: object) -> QdError:
        """What `qd.volatile_load` says of a target that is not an array element."""
        if isinstance(arg, ast.Name) and arg.id in {k for f in self.scope.frames for k in f}:
            return self.error(
                "qd.volatile_load cannot take a local array (or local value): another thread "
                "cannot observe it; pass a field or ndarray element, `qd.volatile_load(a[i])`.",
                QdTypeError,
            )
        return self.error(
            "cannot pass a Field directly to 'qd.volatile_load'; index it first (e.g. "
            "`field[None]`); it takes an lvalue, an array element: `qd.volatile_load(a[i])`.",
            QdSyntaxError,
        )

    def template_refs(self, func: object, nodes: list, args: list, skip: int = 0) -> list:
        """A local passed for a `qd.template()` parameter of a @qd.func is the caller's own
        variable there (`x += 1` in the body changes it), as in the reference: a scalar, vector or
        struct local by name, or a member of a struct local (`s.m`, `s.inner`); so is a scalar
        local passed by name to a `@qd.real_func`, whose `qd.ref` parameters take it and others
        its value."""
        annotations = getattr(getattr(func, "fn", None), "__annotations__", {})
        code = getattr(getattr(func, "fn", None), "__code__", None)
        assert isinstance(code, types.CodeType), func  # a @qd.func's or real_func's function
        params = list(code.co_varnames)[skip:]  # `skip`: a method's `self`, given apart
        out = list(args)
        for k, node in enumerate(nodes[: len(args)]):
            ann = annotations.get(params[k]) if k < len(params) else None
            if isinstance(func, lang.RealFunc):
                local = self.find_local(node.id) if isinstance(node, ast.Name) else None
                if isinstance(local, Local):
                    out[k] = local
            elif is_template(getattr(func, "fn", None), ann):
                local = self.local_named(node)
                if local is not None:
                    out[k] = local
        return out

    def local_named(self, node: ast.expr) -> object:
        """The local variable `node` names (a scalar, vector or struct local, or a member of a
        struct local), or None."""
        if isinstance(node, ast.Name):
            local = self.find_local(node.id)
        elif isinstance(node, ast.Attribute):
            struct = self.struct_target(node.value)
            local = struct.members.get(node.attr) if struct is not None else None
        else:
            return None
        return local if isinstance(local, (Local, VecLocal, StructLocal)) else None


def is_template(fn: object, ann: object) -> bool:
    """Whether a func parameter's annotation is `qd.template()` (or `qd.Template`), written or as
    a string (`from __future__ import annotations`), read in the func's globals and closure (the
    func's lowering evaluates and records it again)."""
    if isinstance(ann, str):
        env = {**getattr(fn, "__globals__", {}), **closure_values(fn)}
        try:
            ann = eval(ann, env)  # the user's own annotation, read as Python would
        except Exception:  # noqa: BLE001 - one that cannot be read here is not a template
            return False
    return ann is lang.Template or ann is lang.template or isinstance(ann, lang.Template)
