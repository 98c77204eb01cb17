"""Read-modify-write of a place: `x op= v` and `qd.atomic_*(x, v)` on every place a kernel can
name: a scalar or vector local; a part of a vector local (`v[0]`, `v.xy`, `m[i, j]`, `v[i]` with a
runtime `i`); a member of a struct local (`s.m`, `s.inner.k`, `s.v`, `s.v[1]`, `self.m` in a
method), which is a local, or an element of a field when the struct is a struct field's element;
an element of an array, or an entry of a vector array's element.

As in Quadrants, `+=`, `-=`, `&=`, `|=` and `^=` (ATOMIC_AUG) are atomics: the value is converted to
the place's type first (`x += 1.5` adds 1 to an i32 `x`), and where threads can share the place
(global memory, or a local made outside the parallel loop being lowered) the update is one atomic
read-modify-write. Any other operator reads, computes and stores. An atomic call is atomic where
threads share the place, and gives the old value.

A part of the frontend's visitor: mixed into `Frontend`; uses its `visit`, `value`, `cast`,
`binop`, `emit`, `const`, `error`, `find_local`, `subscript_target`, `part`, `struct_target`,
`writable_vec`, `entries_for`, `swizzle`, `swizzle_items`, `axes`, `positions`, `dynamic_key`,
`element_atomic`, `element_load`, `element_store`, `block`, `loc` and `parallel_depth`.
"""

from __future__ import annotations

import ast

from ...core.errors import QdTypeError
from ...core.types import LocalType, i32, u1
from .. import ir
from .scope import ATOMIC_AUG, GradOf, Local, dtype_of
from .struct_fields import FieldSlot
from .vectors import ElementRef, Vec, VecLocal

Place = tuple[Local | VecLocal | ElementRef, list | str | None]
"""What an update's target names: (a `Local`, None), (a `VecLocal`, None / index items / a
swizzle), or (an `ElementRef`, None / index items / a swizzle); a scalar array element is an
`ElementRef` whose element is a scalar."""


class Updates:
    """Mixed into `Frontend`: the places `+=` and the atomics update, and the updates."""

    def place(self, node: ast.expr) -> Place | None:
        """The place `node` names, or None when it names none (a kernel argument, a constant)."""
        if isinstance(node, ast.Name):
            local = self.find_local(node.id)
            if isinstance(local, Local):
                return local, None
            vec = self.writable_vec(node.id)  # a vector @qd.func parameter becomes a local
            return (vec, None) if vec is not None else None
        if isinstance(node, ast.Attribute):
            struct = self.struct_target(node.value)
            if struct is not None:
                member = struct.members.get(node.attr)
                if member is None:
                    raise self.error(f"{struct!r} has no member `{node.attr}`.", QdTypeError)
                if isinstance(member, FieldSlot):
                    return ElementRef(member.array, member.grad, member.indices), None
                if isinstance(member, (Local, VecLocal, ElementRef)):
                    return member, None
                raise self.error(
                    f"`{ast.unparse(node)}` is {member!r}: update its members one by one.",
                    QdTypeError,
                )
        if isinstance(node, (ast.Subscript, ast.Attribute)):
            base, key = self.part(node)
            if base is not None:
                return base, key
            if isinstance(node, ast.Subscript):
                array, indices = self.subscript_target(node)
                arr, grad = GradOf.unpack(array)
                assert isinstance(arr, ir.Value), arr  # subscript_target checked it is an array
                return ElementRef(arr, grad, tuple(indices)), None
        return None

    def update(self, place: Place, op: str, x: object, call: bool, what: str) -> object:
        """`place op= x` (`call`: `qd.atomic_op(place, x)`, which gives the old value)."""
        base, key = place
        atomic = call or op in ATOMIC_AUG
        if isinstance(base, ElementRef):
            groups: list[list | None] = (
                list(self.swizzle_items(base, key)) if isinstance(key, str) else [key]
            )
            parts = [x] if len(groups) == 1 else self.entries_for((len(groups),), x, what)
            olds = []
            for items, part in zip(groups, parts):
                if atomic:
                    olds.append(self.element_atomic(base, items, op, part))
                    continue
                old = self.element_load(base, items)
                self.element_store(base, items, self.binop(op, old, part))
                olds.append(old)
            return olds[0] if len(olds) == 1 else Vec(tuple(olds), (len(olds),))  # type: ignore[arg-type]
        if isinstance(base, Local):
            return self.local_update(base.ref, base.parallel_depth, op, x, call)
        shape, picks, dyn = self.vec_part(base, key, what)
        xs = self.entries_for(shape, x, what)
        olds = [
            self.local_update(base.refs[c[0]], base.parallel_depth, op, e, call)
            if dyn is None
            else self.chosen_update(base, c, dyn, op, e, call)
            for c, e in zip(picks, xs)
        ]
        if not call:
            return None
        return olds[0] if not shape else Vec(tuple(olds), shape)  # type: ignore[arg-type]

    def vec_part(
        self, local: VecLocal, key: list | str | None, what: str
    ) -> tuple[tuple[int, ...], list[list[int]], ir.Value | None]:
        """The shape of the part of `local` that `key` names, each entry's candidate positions,
        and the runtime index that picks among them (None: one candidate each)."""
        if key is None:
            return local.shape, [[k] for k in range(len(local.refs))], None
        if isinstance(key, str):
            if len(local.shape) != 1:
                raise self.error(f"a matrix has no attribute `{key}`; index it, e.g. `m[0, 1]`.")
            idx = self.swizzle(key, local.shape[0])
            return (() if len(idx) == 1 else (len(idx),)), [[k] for k in idx], None
        axes = self.axes(local.shape, key, what)
        dyn = self.dynamic_key(local.shape, axes, what)
        shape, picks = self.positions(local.shape, axes)
        return shape, picks, dyn

    def local_update(
        self, ref: ir.Value, depth: int, op: str, x: object, call: bool
    ) -> ir.Value | None:
        """One local entry; its old value (None for a `+=` on a shared local, which has none)."""
        dtype = dtype_of(ref)
        atomic = call or op in ATOMIC_AUG
        if atomic:
            x = self.cast(self.value(x, dtype), dtype)
            if depth < self.parallel_depth:  # shared by the loop's threads: one atomic RMW
                if not call:
                    return self.emit(ir.LocalAtomic, [ref, x], op=op)
                return self.emit(ir.LocalAtomic, [ref, x], dtype, ref.name + "_old", op=op)
        old = self.emit(ir.LocalLoad, [ref], dtype, ref.name)
        new = x if op == "xchg" else self.binop(op, old, x)
        self.emit(ir.LocalStore, [ref, self.cast(self.value(new, dtype), dtype)])
        return old

    def chosen_update(
        self, local: VecLocal, choices: list[int], key: ir.Value, op: str, x: object, call: bool
    ) -> ir.Value | None:
        """The entry of `local` that the runtime `key` picks among `choices`, updated: each
        candidate under an `if key == k`, so a shared one is updated atomically too; for a call,
        the old value."""
        dtype = dtype_of(local.refs[choices[0]])
        old = self.emit(ir.Alloca, (), LocalType(dtype), "_old") if call else None
        if old is not None:
            self.emit(ir.LocalStore, [old, self.const(0, dtype)])
        for k, p in enumerate(choices):
            hit = self.emit(ir.Cmp, [key, self.const(k, i32)], u1, pred="eq")
            then, outer = ir.Block(), self.block
            self.block = then
            try:
                got = self.local_update(local.refs[p], local.parallel_depth, op, x, call)
                if old is not None and got is not None:  # a call's update gives the old value
                    self.emit(ir.LocalStore, [old, got])
            finally:
                self.block = outer
            self.block.append(ir.If([hit], None, {}, [then, ir.Block()], self.loc))
        return None if old is None else self.emit(ir.LocalLoad, [old], dtype)
