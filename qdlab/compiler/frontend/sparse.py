"""Sparse SNodes in kernels (`qdlab.core.sparse`): activity as plain memory ops on each sparse
level's hidden activity field, emitted here, before any pass, so the split's backward slice and
the gate see an activation or a deactivation as a write and an activity test as a read.

- A store or atomic to a field under sparse levels first activates them: a store of 1 to each
  pointer / bitmasked level's flag of the cell, an atomic max of a dynamic level's length.
- `qd.deactivate(snode, I)` zero-fills what the cell holds (the elements of each field below, the
  activity of each sparse level below), then clears its flag; reads need no test, since an
  inactive cell's elements are zero.
- A struct-for over a sparse field or SNode walks its whole index space and skips an index whose
  levels are not all active (`if not active: continue` at the top of the body).
"""

from __future__ import annotations

import ast
import math
from itertools import product
from typing import Any

from ...core.errors import QdTypeError, QdValueError
from ...core.fields import FieldBase
from ...core.sparse import Level, Region
from ...core.types import i32, u1
from .. import ir
from .scope import Local, array_type, dtype_of

SNodeRef = Any
"""A layout level (`qdlab.host.snode.SNode`, which the compiler does not import)."""

_DYNAMIC_METHODS = ("append", "length", "deactivate")


def levels_of(f: object) -> tuple[Level, ...]:
    """The sparse levels above a field's elements (none for a dense one)."""
    return tuple(getattr(f, "_sparse_levels", ()))


def is_snode(x: object) -> bool:
    """An SNode (a layout level, or `x.snode`), which a kernel takes by itself, not as an array."""
    return callable(getattr(x, "_activity", None)) and not isinstance(x, FieldBase)


class Sparse:
    """Mixed into `Frontend`; uses its `emit`, `const`, `cast`, `value`, `visit`, `field_arg`,
    `field_of`, `resolve_static`, `error`, `block`, `loc`."""

    activating = False
    """Inside an emission of activity ops: their own stores activate nothing."""

    # -- writes ------------------------------------------------------------------------------------
    def activate_before(self, op_cls: type[ir.Op], operands: list[ir.Value]) -> None:
        """Before a store or atomic to a sparse field: activate the levels above the element."""
        if self.activating or op_cls not in (ir.Store, ir.Atomic) or not operands:
            return
        f = self.field_of(operands[0])
        levels = levels_of(f)
        if not levels:
            return
        n = len(f.shape)
        memory = list(operands[1 : 1 + n])
        layout = array_type(operands[0]).layout
        logical = memory if layout is None else [memory[layout.index(a)] for a in range(n)]
        self.activate_levels(levels, logical)

    def activate_levels(self, levels: tuple[Level, ...], idx: list[ir.Value]) -> None:
        self.activating = True
        try:
            for lv in levels:  # written only when it changes: no store to a shared line
                arr = self.field_arg(lv.mask, lv.name)
                cell = [self.scaled(idx[p], d) for p, d in lv.cell]
                now = self.emit(ir.Load, [arr, *cell], i32)
                if lv.dyn is not None:
                    p, d = lv.dyn
                    grown = self.emit(
                        ir.BinOp, [self.scaled(idx[p], d), self.const(1, i32)], i32, op="add"
                    )
                    short = self.emit(ir.Cmp, [now, grown], u1, pred="lt")
                    self.when(short, ir.Atomic, [arr, *cell, grown], op="max")
                else:
                    off = self.emit(ir.Cmp, [now, self.const(0, i32)], u1, pred="eq")
                    self.when(off, ir.Store, [arr, *cell, self.const(1, i32)])
        finally:
            self.activating = False

    def when(
        self, test: ir.Value, op_cls: type[ir.Op], operands: list[ir.Value], **attrs: object
    ) -> None:
        """`if test: <op>` (its result, if any, unused)."""
        then, other = ir.Block(), ir.Block()
        self.block.append(ir.If([test], None, {}, [then, other], self.loc))
        outer, self.block = self.block, then
        try:
            if op_cls is ir.Atomic:
                self.emit(op_cls, operands, i32, **attrs)
            else:
                self.emit(op_cls, operands, **attrs)
        finally:
            self.block = outer

    def scaled(self, v: ir.Value, d: int) -> ir.Value:
        if d == 1:
            return v
        return self.emit(ir.BinOp, [v, self.const(d, i32)], i32, op="floordiv")

    # -- struct-for over blocks --------------------------------------------------------------------
    def sparse_blocks(
        self, levels: tuple[Level, ...], shape: tuple[int, ...]
    ) -> tuple[Level, tuple[int, ...], tuple[int, ...]] | None:
        """How a struct-for over a sparse index space of `shape` walks it block by block: (the
        outermost pointer or bitmasked level whose cells hold more than one index, a block's
        extent per axis, the number of blocks per axis), or None when no level has such cells
        (each index is its own cell: the flat loop tests each)."""
        for lv in levels:
            if lv.dyn is not None or not any(d > 1 for _, d in lv.cell):
                continue
            size = list(shape)
            for p, d in lv.cell:
                size[p] = d
            if any(n % b for n, b in zip(shape, size)):
                return None
            return lv, tuple(size), tuple(n // b for n, b in zip(shape, size))
        return None

    def enter_block(
        self,
        blocks: tuple[Level, tuple[int, ...], tuple[int, ...]],
        index: ir.Value,
        dims: list[tuple[ir.Value, ir.Value]],
        names: list[str],
        grouped: bool | str,
    ) -> tuple[list[ir.Value], ir.Block, list[ir.Value]]:
        """In the body of the loop over the blocks (`index` counts them): skip an inactive block,
        then open a serial loop over its indices. Returns the struct-for's index values (offset as
        `dims` begin), the inner loop's body, and the indices counted from 0."""
        lv, size, count = blocks
        block = self.unflatten(index, count)
        arr = self.field_arg(lv.mask, lv.name)
        got = self.emit(ir.Load, [arr, *(block[p] for p, _ in lv.cell)], i32)
        active = self.emit(ir.Cmp, [got, self.const(0, i32)], u1, pred="ne")
        stay, skip = ir.Block(), ir.Block()
        self.block.append(ir.If([active], None, {}, [stay, skip], self.loc))
        skip.append(ir.Continue([], None, {}, None, self.loc))
        cell = ir.Value(i32, "_L")
        inner = ir.Block([cell])
        span = [self.const(0, i32), self.const(math.prod(size), i32)]
        self.block.append(ir.For(span, None, {"parallel": False}, [inner], self.loc))
        self.block = inner
        local = self.unflatten(cell, size)
        storage, values = [], []
        for a, (b, n) in enumerate(zip(block, size)):
            start = self.emit(ir.BinOp, [b, self.const(n, i32)], i32, op="mul")
            at = self.emit(ir.BinOp, [start, local[a]], i32, op="add")
            storage.append(at)
            name = names[a] if not grouped and a < len(names) else f"_I{a}"
            values.append(self.emit(ir.BinOp, [at, dims[a][0]], i32, name, op="add"))
        return values, inner, storage

    def unflatten(self, flat: ir.Value, extents: tuple[int, ...]) -> list[ir.Value]:
        """A row-major flat index into one index per axis (the last fastest)."""
        out: list[ir.Value] = [flat] * len(extents)
        rem = flat
        for a in range(len(extents) - 1, -1, -1):
            n = extents[a]
            if a:
                out[a] = self.emit(ir.BinOp, [rem, self.const(n, i32)], i32, op="mod")
                rem = self.emit(ir.BinOp, [rem, self.const(n, i32)], i32, op="floordiv")
            else:
                out[a] = rem
        return out

    # -- activity tests ----------------------------------------------------------------------------
    def active_test(self, levels: tuple[Level, ...], idx: list[ir.Value]) -> ir.Value:
        """Whether every level above index `idx` (counted from 0) is active: a u1."""
        out: ir.Value | None = None
        for lv in levels:
            arr = self.field_arg(lv.mask, lv.name)
            cell = [self.scaled(idx[p], d) for p, d in lv.cell]
            got = self.emit(ir.Load, [arr, *cell], i32)
            if lv.dyn is not None:
                p, d = lv.dyn
                test = self.emit(ir.Cmp, [self.scaled(idx[p], d), got], u1, pred="lt")
            else:
                test = self.emit(ir.Cmp, [got, self.const(0, i32)], u1, pred="ne")
            out = test if out is None else self.emit(ir.BinOp, [out, test], u1, op="and")
        assert out is not None
        return out

    def skip_inactive(self, levels: tuple[Level, ...], idx: list[ir.Value]) -> None:
        """At the top of a struct-for's body: go on to the next index when this one is not
        active."""
        active = self.active_test(levels, idx)
        stay, skip = ir.Block(), ir.Block()
        self.block.append(ir.If([active], None, {}, [stay, skip], self.loc))
        skip.append(ir.Continue([], None, {}, None, self.loc))

    # -- qd.is_active / activate / deactivate / length / append ------------------------------------
    def sparse_target(self, node: ast.Call, what: str, kinds: tuple[str, ...]) -> tuple:
        """(the SNode, its cell index as i32 values) of `qd.<what>(snode, I)`."""
        if len(node.args) < 2:
            raise self.error(f"qd.{what}(snode, indices) takes an SNode and an index.", QdTypeError)
        snode = self.resolve_static(node.args[0])
        if isinstance(snode, FieldBase):
            snode = snode.snode.parent()
        if not is_snode(snode):
            raise self.error(
                f"qd.{what}() takes an SNode (`qd.root.pointer(...)`, `x.parent()`), not "
                f"{type(snode).__name__}.",
                QdTypeError,
            )
        got = self.visit(node.args[1])
        entries = getattr(got, "entries", None)
        items = (
            list(entries)
            if entries is not None
            else (list(got) if isinstance(got, (list, tuple)) else [got])
        )
        return snode, self.sparse_cell(snode, items, what, kinds)

    def sparse_cell(
        self, snode: SNodeRef, items: list, what: str, kinds: tuple[str, ...]
    ) -> list[ir.Value]:
        """The cell index of `snode` that `items` name, as i32 values (a dynamic level's cell is
        its parent's: an index one longer names an element, whose last entry is dropped)."""
        kind = snode.kind
        if kind not in kinds:
            names = {
                "is_active": "pointer, hash or bitmasked nodes",
                "length": "dynamic nodes",
                "append": "dynamic nodes",
            }
            raise self.error(
                f"qd.{what} only works on {names.get(what, 'sparse nodes')}; "
                f"this is a {kind} node.",
                QdValueError,
            )
        cells = snode.parent() if kind == "dynamic" else snode
        ndim = len(cells.shape)
        if len(items) != ndim and not (kind == "dynamic" and len(items) == ndim + 1):
            raise self.error(
                f"qd.{what}: the SNode has {ndim} index axes, the index gives {len(items)}.",
                QdValueError,
            )
        idx = []
        for x in items[:ndim]:
            v = self.value(x)
            if not dtype_of(v).is_int:
                raise self.error(f"qd.{what}: an index must be an integer.", QdTypeError)
            idx.append(self.cast(v, i32))
        return idx

    def dynamic_method(self, node: ast.Call) -> object:
        """`x[I].append(v)`, `x[I].length()`, `x[I].deactivate()` (`x.append(v)`... for a 1-D
        `x`): Quadrants' methods of a field placed under a dynamic level, indexed by one axis
        fewer than it has; `qd.append(x.parent(), I, v)`... NotImplemented for anything else."""
        func = node.func
        if not isinstance(func, ast.Attribute) or func.attr not in _DYNAMIC_METHODS:
            return NotImplemented
        target, sub = func.value, None
        if isinstance(target, ast.Subscript):
            target, sub = target.value, target.slice
        root = target
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name):
            return NotImplemented
        if isinstance(self.find_local(root.id), (Local, ir.Value)):
            return NotImplemented  # a kernel value's method, not a field's
        base = self.visit(target)
        f = self.field_of(base) if isinstance(base, ir.Value) and ir.is_array(base) else None
        if f is None:
            return NotImplemented
        snode = f.snode.parent()
        nidx = 0 if sub is None else len(sub.elts) if isinstance(sub, ast.Tuple) else 1
        if getattr(snode, "kind", None) != "dynamic" or len(f.shape) != nidx + 1:
            return NotImplemented
        want = 1 if func.attr == "append" else 0
        if len(node.args) != want or node.keywords:
            raise self.error(f"`.{func.attr}()` of a dynamic field takes {want} argument(s).")
        items: list = []
        if sub is not None:
            elts = sub.elts if isinstance(sub, ast.Tuple) else [sub]
            for e in elts:
                got = self.visit(e)
                entries = getattr(got, "entries", None)
                items.extend(list(entries) if entries is not None else [got])
        idx = self.sparse_cell(snode, items, func.attr, ("dynamic",))
        if func.attr == "append":
            return self.dynamic_append(snode, idx, node.args[0])
        if func.attr == "length":
            return self.dynamic_length(snode, idx)
        self.deactivate_cell(snode, idx)
        return None

    def own_level(self, snode: SNodeRef) -> Level:
        return snode._activity()[-1]

    def sparse_is_active(self, node: ast.Call) -> ir.Value:
        snode, idx = self.sparse_target(node, "is_active", ("pointer", "bitmasked"))
        arr = self.field_arg(self.own_level(snode).mask, f"{snode.kind}_activity")
        return self.emit(ir.Load, [arr, *idx], i32, f"{snode.kind}_active")

    def sparse_activate(self, node: ast.Call) -> None:
        snode, idx = self.sparse_target(node, "activate", ("pointer", "bitmasked", "dense"))
        self.activate_levels(snode._activity(), idx)

    def sparse_length(self, node: ast.Call) -> ir.Value:
        return self.dynamic_length(*self.sparse_target(node, "length", ("dynamic",)))

    def dynamic_length(self, snode: SNodeRef, idx: list[ir.Value]) -> ir.Value:
        arr = self.field_arg(self.own_level(snode).mask, "dynamic_length")
        return self.emit(ir.Load, [arr, *idx], i32, "dynamic_active")

    def sparse_append(self, node: ast.Call) -> ir.Value:
        snode, idx = self.sparse_target(node, "append", ("dynamic",))
        if len(node.args) != 3:
            raise self.error("qd.append(snode, indices, value) takes three arguments.", QdTypeError)
        return self.dynamic_append(snode, idx, node.args[2])

    def dynamic_append(
        self, snode: SNodeRef, idx: list[ir.Value], value_node: ast.expr
    ) -> ir.Value:
        """`qd.append(dyn, I, v)`: the length grows by one (an atomic add), and `v` goes to the
        old length's place of the one field placed under the dynamic level when that is within
        its extent (past it, as in Quadrants, the length still grows and nothing is stored)."""
        fields = snode._subtree_fields()
        if len(fields) != 1:
            raise self.error(
                "qd.append: the dynamic SNode must hold one field (place one field under it).",
                QdValueError,
            )
        f = fields[0]
        lv = self.own_level(snode)
        arr = self.field_arg(lv.mask, "dynamic_length")
        self.activating = True
        try:
            old = self.emit(ir.Atomic, [arr, *idx, self.const(1, i32)], i32, op="add")
        finally:
            self.activating = False
        value = self.visit(value_node)
        base = self.field_arg(f, f.name or "field")
        full = snode._extents_by_axis()
        axes_ = sorted(full)
        parent_axes = sorted(snode.parent()._extents_by_axis())
        dyn_axis = snode.axes[0]
        logical = []
        for a in axes_:
            logical.append(old if a == dyn_axis else idx[parent_axes.index(a)])
        dtype = dtype_of(base)
        entries = getattr(value, "entries", None)
        if isinstance(value, (list, tuple)):  # `v.append([1.5, 2.5])`
            entries = [e for row in value for e in (row if isinstance(row, list) else [row])]
        element = array_type(base).element
        values = list(entries) if entries is not None else [value] * max(1, math.prod(element))
        values = [self.cast(self.value(e, dtype), dtype) for e in values]
        layout = array_type(base).layout
        memory = logical if layout is None else [logical[a] for a in layout]
        fits = self.emit(ir.Cmp, [old, self.const(full[dyn_axis], i32)], u1, pred="lt")
        store, skip = ir.Block(), ir.Block()
        self.block.append(ir.If([fits], None, {}, [store, skip], self.loc))
        outer, self.block = self.block, store
        self.activating = True  # the atomic add above is the activation
        try:
            for k, v in zip(product(*(range(n) for n in element)), values):
                elem = [self.const(j, i32) for j in k]
                self.emit(ir.Store, [base, *memory, *elem, v])
        finally:
            self.activating = False
            self.block = outer
        return old

    def sparse_deactivate(self, node: ast.Call) -> None:
        snode, idx = self.sparse_target(node, "deactivate", ("pointer", "bitmasked", "dynamic"))
        self.deactivate_cell(snode, idx)

    def deactivate_cell(self, snode: SNodeRef, idx: list[ir.Value]) -> None:
        self.activating = True
        try:
            for region in snode._regions():
                self.zero_region(region, idx)
            kind = snode.kind
            arr = self.field_arg(self.own_level(snode).mask, f"{kind}_activity")
            self.emit(ir.Store, [arr, *idx, self.const(0, i32)])
        finally:
            self.activating = False

    def zero_region(self, region: Region, idx: list[ir.Value]) -> None:
        """A serial loop storing zero to each element of `region` in the cell `idx`."""
        arr = self.field_arg(region.array, region.name)
        sizes = [n for _, n in region.axes]
        total = math.prod(sizes)
        if total == 0:
            return
        index = ir.Value(i32, "_z")
        body = ir.Block([index])
        attrs = {"parallel": False}
        self.block.append(
            ir.For([self.const(0, i32), self.const(total, i32)], None, attrs, [body], self.loc)
        )
        outer = self.block
        self.block = body
        try:
            logical: list[ir.Value] = [index] * len(sizes)
            rem = index
            for k in range(len(sizes) - 1, -1, -1):
                n = sizes[k]
                part = rem
                if k:
                    part = self.emit(ir.BinOp, [rem, self.const(n, i32)], i32, op="mod")
                    rem = self.emit(ir.BinOp, [rem, self.const(n, i32)], i32, op="floordiv")
                p = region.axes[k][0]
                if p >= 0:
                    start = self.emit(ir.BinOp, [idx[p], self.const(n, i32)], i32, op="mul")
                    part = self.emit(ir.BinOp, [start, part], i32, op="add")
                logical[k] = part
            t = array_type(arr)
            memory = logical if t.layout is None else [logical[a] for a in t.layout]
            zero = self.const(0, t.dtype)
            for k in product(*(range(n) for n in t.element)):
                elem = [self.const(j, i32) for j in k]
                self.emit(ir.Store, [arr, *memory, *elem, zero])
        finally:
            self.block = outer
