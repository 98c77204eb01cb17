"""Sparse SNodes in kernels (`qdlab.core.sparse`): activity as plain memory ops on each sparse
level's hidden activity field, emitted here, before any pass, so the split's backward slice and
the gate see an activation or a deactivation as a write and an activity test as a read.

- A store or atomic to a field under sparse levels first activates them, each only when it is
  not active yet (no store to a shared line): a store of 1 to a pointer level's flag of the cell,
  an atomic `or` of its bit into a bitmasked level's word (cells of one word may be activated by
  several threads at once), an atomic max of a dynamic level's length.
- `qd.deactivate(snode, I)` zero-fills what the cell holds (the elements of each field below, the
  activity of each sparse level below), then clears its flag (an atomic `and` of a bitmasked
  level's word); reads need no test, since an inactive cell's elements are zero.
- A struct-for over a sparse field or SNode skips an index whose levels are not all active (`if
  not active: continue` at the top of the body). A parallel one walks the blocks of its outermost
  sparse level, skipping an inactive block, and a block's cells in a loop per axis, the last
  innermost (adjacent in memory); where the level below is the last one and bitmasked,
  with one cell per index and a block per parent cell, it walks that level's words, skipping a
  zero word and visiting the set bits of the others (a bitmasked level alone: its words, in
  parallel).
"""

from __future__ import annotations

import ast
import math
from itertools import product
from typing import Any

from ...core.errors import QdTypeError, QdValueError
from ...core.fields import FieldBase
from ...core.sparse import WORD_BITS, Level, Region
from ...core.types import LocalType, i32, u1, u32
from .. import ir
from .scope import Local, array_type, describe, dtype_of

SNodeRef = Any
"""A layout level (`qdlab.host.snode.SNode`, which the compiler does not import)."""

_DYNAMIC_METHODS = ("append", "length", "deactivate")

Blocks = tuple[Level | None, tuple[int, ...], tuple[int, ...], Level | None]
"""How a parallel struct-for walks a sparse index space (`Sparse.sparse_blocks`)."""


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
    known_active: tuple = ()
    """Inside a sparse struct-for's body: per enclosing one, (its loop depth, its index values,
    {(mask id, cell map)} of its levels): the cell it visits is active, so a write there with
    those very indices activates nothing. Forgotten at a deactivation or a call (which might
    deactivate), and used at the body's own depth only (a nested loop may come round again after
    a deactivation written below the write)."""

    # -- writes ------------------------------------------------------------------------------------
    def activate_before(self, op_cls: type[ir.Op], operands: list[ir.Value]) -> None:
        """Before a store or atomic to a sparse field: activate the levels above the element."""
        if self.activating or op_cls not in (ir.Store, ir.Atomic, ir.AtomicCas) or not operands:
            return
        f = self.field_of(operands[0])
        levels = levels_of(f)
        if not levels:
            return
        n = len(f.shape)
        memory = list(operands[1 : 1 + n])
        layout = array_type(operands[0]).layout
        logical = memory if layout is None else [memory[layout.index(a)] for a in range(n)]
        if not self.visited(levels, logical):
            self.activate_levels(levels, logical)

    def visited(self, levels: tuple[Level, ...], idx: list[ir.Value]) -> bool:
        """Whether index `idx` of these levels is the cell an enclosing struct-for visits now
        (`known_active`)."""
        for depth, values, cells in self.known_active:
            if (
                depth == self.loop_depth
                and len(values) == len(idx)
                and all(a is b for a, b in zip(values, idx))
                and all((id(lv.mask), lv.cell) in cells for lv in levels)
            ):
                return True
        return False

    def activate_levels(self, levels: tuple[Level, ...], idx: list[ir.Value]) -> None:
        self.activating = True
        try:
            for lv in levels:  # written only when it changes: no store to a shared line
                arr = self.field_arg(lv.mask, lv.name)
                cell = [self.scaled(idx[p], d) for p, d in lv.cell]
                if lv.own:
                    word, bit = self.bit_of(lv, cell)
                    now = self.emit(ir.Load, [arr, *word], u32)
                    mine = self.emit(ir.BinOp, [now, bit], u32, op="and")
                    off = self.emit(ir.Cmp, [mine, self.const(0, u32)], u1, pred="eq")
                    self.when(off, ir.Atomic, [arr, *word, bit], op="or")
                    continue
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
                self.emit(op_cls, operands, dtype_of(operands[-1]), **attrs)
            else:
                self.emit(op_cls, operands, **attrs)
        finally:
            self.block = outer

    def scaled(self, v: ir.Value, d: int) -> ir.Value:
        if d == 1:
            return v
        return self.emit(ir.BinOp, [v, self.const(d, i32)], i32, op="floordiv")

    def bit_of(self, lv: Level, cell: list[ir.Value]) -> tuple[list[ir.Value], ir.Value]:
        """Where a bitmasked level keeps the flag of `cell` (`qdlab.core.sparse.locate`): the
        word's indices in its mask, and the bit as a u32."""
        parent, n = [], None
        for c, o in zip(cell, lv.own):
            parent.append(self.scaled(c, o))
            if o == 1:
                continue
            local = self.emit(ir.BinOp, [c, self.const(o, i32)], i32, op="mod")
            if n is not None:
                n = self.emit(ir.BinOp, [n, self.const(o, i32)], i32, op="mul")
                local = self.emit(ir.BinOp, [n, local], i32, op="add")
            n = local
        if n is None:
            return [*parent, self.const(0, i32)], self.const(1, u32)
        word = self.scaled(n, WORD_BITS)
        at = self.emit(ir.BinOp, [n, self.const(WORD_BITS, i32)], i32, op="mod")
        bit = self.emit(ir.BinOp, [self.const(1, u32), self.cast(at, u32)], u32, op="shl")
        return [*parent, word], bit

    def flag_test(self, lv: Level, cell: list[ir.Value], name: str = "") -> ir.Value:
        """Whether cell `cell` of a pointer or bitmasked level is active: a u1 (`name` names the
        load of the flag or the word, what a split hands over)."""
        arr = self.field_arg(lv.mask, lv.name)
        if not lv.own:
            got = self.emit(ir.Load, [arr, *cell], i32, name)
            return self.emit(ir.Cmp, [got, self.const(0, i32)], u1, pred="ne")
        word, bit = self.bit_of(lv, cell)
        got = self.emit(ir.Load, [arr, *word], u32, name)
        mine = self.emit(ir.BinOp, [got, bit], u32, op="and")
        return self.emit(ir.Cmp, [mine, self.const(0, u32)], u1, pred="ne")

    def skip_unless(self, test: ir.Value, leave: type[ir.Op] = ir.Continue) -> None:
        """`if not test: continue` (the innermost loop's next iteration), or `break`."""
        stay, skip = ir.Block(), ir.Block()
        self.block.append(ir.If([test], None, {}, [stay, skip], self.loc))
        skip.append(leave([], None, {}, None, self.loc))

    # -- struct-for over blocks --------------------------------------------------------------------
    def sparse_blocks(self, levels: tuple[Level, ...], shape: tuple[int, ...]) -> Blocks | None:
        """How a parallel struct-for over a sparse index space of `shape` walks it: (the
        outermost pointer or bitmasked level whose cells hold more than one index, a block's
        extent per axis, the number of blocks per axis, the bitmasked level whose words are walked
        in each block), or None: the flat loop tests each index.

        The words are walked where the last level is bitmasked with one cell per index and one
        parent cell per block; a bitmasked level alone (its cells the indices) is walked word by
        word with no block level (a block is then its parent cell)."""
        whole = tuple((p, 1) for p in range(len(shape)))
        for lv in levels:
            if lv.dyn is not None or not any(d > 1 for _, d in lv.cell):
                continue
            size = list(shape)
            for p, d in lv.cell:
                size[p] = d
            if any(n % b for n, b in zip(shape, size)):
                return None
            rest = [x for x in levels if x is not lv]
            walk = None
            if len(rest) == 1 and rest[0].cell == whole and rest[0].own == tuple(size):
                walk = rest[0]
            return lv, tuple(size), tuple(n // b for n, b in zip(shape, size)), walk
        if len(levels) == 1 and levels[0].own and levels[0].cell == whole:
            own = levels[0].own
            return None, own, tuple(n // o for n, o in zip(shape, own)), levels[0]
        return None

    def block_count(self, blocks: Blocks) -> int:
        """The iterations of the parallel loop: the blocks (a bitmasked level alone: its
        words)."""
        lv, _, count, walk = blocks
        return math.prod(count) * (walk.words if lv is None and walk is not None else 1)

    def enter_block(
        self,
        blocks: Blocks,
        index: ir.Value,
        dims: list[tuple[ir.Value, ir.Value]],
        names: list[str],
        grouped: bool | str,
    ) -> tuple[list[ir.Value], ir.Block, list[ir.Value]]:
        """In the body of the loop over the blocks (`index` counts them): skip an inactive block,
        then open a serial loop over its indices, or over the set bits of its words. Returns the
        struct-for's index values (offset as `dims` begin), the inner loop's body, and the
        indices counted from 0."""
        lv, size, count, walk = blocks
        word: ir.Value | None = None
        if lv is None and walk is not None:  # a word per iteration
            word = self.emit(ir.BinOp, [index, self.const(walk.words, i32)], i32, op="mod")
            index = self.scaled(index, walk.words)
        block = self.unflatten(index, count)
        if lv is not None:
            self.skip_unless(self.flag_test(lv, [block[p] for p, _ in lv.cell]))
        if walk is None:  # a serial loop per axis, the last innermost (its cells adjacent)
            local = []
            for a, n in enumerate(size):
                cell = ir.Value(i32, f"_L{a}")
                inner = ir.Block([cell])
                span = [self.const(0, i32), self.const(n, i32)]
                self.block.append(ir.For(span, None, {"parallel": False}, [inner], self.loc))
                self.block = inner
                local.append(cell)
        else:
            cell, inner = self.walk_bits(walk, block, word)
            local = self.unflatten(cell, size)
        storage, values = [], []
        for a, (b, n) in enumerate(zip(block, size)):
            start = self.emit(ir.BinOp, [b, self.const(n, i32)], i32, op="mul")
            at = self.emit(ir.BinOp, [start, local[a]], i32, op="add")
            storage.append(at)
            name = names[a] if not grouped and a < len(names) else f"_I{a}"
            values.append(self.emit(ir.BinOp, [at, dims[a][0]], i32, name, op="add"))
        return values, inner, storage

    def walk_bits(
        self, walk: Level, block: list[ir.Value], word: ir.Value | None
    ) -> tuple[ir.Value, ir.Block]:
        """The set bits of a bitmasked level's words in parent cell `block` (of word `word`, or
        of each in a serial loop), lowest first: a loop that takes the lowest set bit off a local
        copy of the word before the body runs (so a `continue` goes on to the next). Returns the
        cell's number in the block and the loop's body."""
        if word is None:
            word = ir.Value(i32, "_W")
            words = ir.Block([word])
            span = [self.const(0, i32), self.const(walk.words, i32)]
            self.block.append(ir.For(span, None, {"parallel": False}, [words], self.loc))
            self.block = words
        arr = self.field_arg(walk.mask, walk.name)
        bits = self.emit(ir.Load, [arr, *block, word], u32)
        self.skip_unless(self.emit(ir.Cmp, [bits, self.const(0, u32)], u1, pred="ne"))
        rest = self.emit(ir.Alloca, (), LocalType(u32), "_bits")
        self.emit(ir.LocalStore, [rest, bits])
        body = ir.Block()
        self.block.append(ir.Loop([], None, {}, [body], self.loc))
        self.block = body
        left = self.emit(ir.LocalLoad, [rest], u32)
        self.skip_unless(self.emit(ir.Cmp, [left, self.const(0, u32)], u1, pred="ne"), ir.Break)
        less = self.emit(ir.BinOp, [left, self.const(1, u32)], u32, op="sub")
        self.emit(ir.LocalStore, [rest, self.emit(ir.BinOp, [left, less], u32, op="and")])
        low = self.emit(ir.Unary, [left], i32, fn="ffs")  # 1 + the lowest set bit's index
        first = self.emit(ir.BinOp, [word, self.const(WORD_BITS, i32)], i32, op="mul")
        at = self.emit(ir.BinOp, [first, low], i32, op="add")
        return self.emit(ir.BinOp, [at, self.const(1, i32)], i32, "_L", op="sub"), body

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
            cell = [self.scaled(idx[p], d) for p, d in lv.cell]
            if lv.dyn is not None:
                got = self.emit(ir.Load, [self.field_arg(lv.mask, lv.name), *cell], i32)
                p, d = lv.dyn
                test = self.emit(ir.Cmp, [self.scaled(idx[p], d), got], u1, pred="lt")
            else:
                test = self.flag_test(lv, cell)
            out = test if out is None else self.emit(ir.BinOp, [out, test], u1, op="and")
        assert out is not None
        return out

    def skip_inactive(self, levels: tuple[Level, ...], idx: list[ir.Value]) -> None:
        """At the top of a struct-for's body: go on to the next index when this one is not
        active."""
        self.skip_unless(self.active_test(levels, idx))

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
        sf = self.peek_struct_field(target)
        arrays = self.member_arrays(sf, target) if sf is not None else None
        base = _first_leaf(arrays) if arrays is not None else self.visit(target)
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
            return self.dynamic_append(snode, idx, node.args[0], arrays)
        if func.attr == "length":
            return self.dynamic_length(snode, idx)
        self.deactivate_cell(snode, idx)
        return None

    def own_level(self, snode: SNodeRef) -> Level:
        return snode._activity()[-1]

    def sparse_is_active(self, node: ast.Call) -> ir.Value:
        snode, idx = self.sparse_target(node, "is_active", ("pointer", "bitmasked"))
        test = self.flag_test(self.own_level(snode), idx, f"{snode.kind}_active")
        return self.emit(ir.Select, [test, self.const(1, i32), self.const(0, i32)], i32)

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
        self,
        snode: SNodeRef,
        idx: list[ir.Value],
        value_node: ast.expr,
        arrays: dict[str, object] | None = None,
    ) -> ir.Value:
        """`qd.append(dyn, I, v)`: the length grows by one (an atomic add), and `v` goes to the
        old length's place of the one field placed under the dynamic level when that is within
        its extent (past it, as in Quadrants, the length still grows and nothing is stored). For
        a struct field (`arrays`: its members' fields, all under the level), `v` is a struct
        value, each member stored to its member's field."""
        fields = snode._subtree_fields()
        if arrays is None and len(fields) != 1:
            raise self.error(
                "qd.append: the dynamic SNode must hold one field (place one field under it).",
                QdValueError,
            )
        lv = self.own_level(snode)
        arr = self.field_arg(lv.mask, "dynamic_length")
        self.activating = True
        try:
            old = self.emit(ir.Atomic, [arr, *idx, self.const(1, i32)], i32, op="add")
        finally:
            self.activating = False
        value = self.visit(value_node)
        if arrays is None:
            f = fields[0]
            targets = [(self.field_arg(f, f.name or "field"), value)]
        else:
            struct = self.struct_value(value)
            if struct is None:
                raise self.error(
                    f"`.append()` of a struct field takes a struct value, not {describe(value)}.",
                    QdTypeError,
                )
            targets = list(_member_pairs(arrays, struct.members))
        full = snode._extents_by_axis()
        axes_ = sorted(full)
        parent_axes = sorted(snode.parent()._extents_by_axis())
        dyn_axis = snode.axes[0]
        logical = []
        for a in axes_:
            logical.append(old if a == dyn_axis else idx[parent_axes.index(a)])
        stores = [self.element_values(base, v) for base, v in targets]
        fits = self.emit(ir.Cmp, [old, self.const(full[dyn_axis], i32)], u1, pred="lt")
        store, skip = ir.Block(), ir.Block()
        self.block.append(ir.If([fits], None, {}, [store, skip], self.loc))
        outer, self.block = self.block, store
        self.activating = True  # the atomic add above is the activation
        try:
            for (base, _), values in zip(targets, stores):
                layout = array_type(base).layout
                memory = logical if layout is None else [logical[a] for a in layout]
                element = array_type(base).element
                for k, v in zip(product(*(range(n) for n in element)), values):
                    elem = [self.const(j, i32) for j in k]
                    self.emit(ir.Store, [base, *memory, *elem, v])
        finally:
            self.activating = False
            self.block = outer
        return old

    def element_values(self, base: ir.Value, value: object) -> list[ir.Value]:
        """`value` as the entries of one element of field `base`, each of its dtype (a scalar is
        every entry)."""
        dtype = dtype_of(base)
        entries = getattr(value, "entries", None)
        if isinstance(value, (list, tuple)):  # `v.append([1.5, 2.5])`
            entries = [e for row in value for e in (row if isinstance(row, list) else [row])]
        element = array_type(base).element
        values = list(entries) if entries is not None else [value] * max(1, math.prod(element))
        return [self.cast(self.value(e, dtype), dtype) for e in values]

    def sparse_deactivate(self, node: ast.Call) -> None:
        snode, idx = self.sparse_target(node, "deactivate", ("pointer", "bitmasked", "dynamic"))
        self.deactivate_cell(snode, idx)

    def deactivate_cell(self, snode: SNodeRef, idx: list[ir.Value]) -> None:
        self.known_active = ()
        self.activating = True
        try:
            for region in snode._regions():
                self.zero_region(region, idx)
            lv = self.own_level(snode)
            arr = self.field_arg(lv.mask, lv.name)
            if lv.own:  # its bit off, the other cells' bits kept
                word, bit = self.bit_of(lv, idx)
                keep = self.emit(ir.Unary, [bit], u32, fn="bitnot")
                self.emit(ir.Atomic, [arr, *word, keep], u32, op="and")
            else:
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


def _first_leaf(arrays: dict[str, object]) -> object:
    """The first member's field of a struct field's (nested) member dict."""
    first: object = arrays
    while isinstance(first, dict):
        first = next(iter(first.values()))
    return first


def _member_pairs(arrays: dict[str, object], members: dict[str, object]) -> list[tuple]:
    """(member's field, member's value) for each scalar, vector or matrix member, in order."""
    out: list[tuple] = []
    for k, a in arrays.items():
        m = members[k]
        if isinstance(a, dict):
            out.extend(_member_pairs(a, getattr(m, "members", {})))
        else:
            out.append((a, m))
    return out
