"""Lowering of loops: `for` over `range`, `qd.ndrange`, `qd.grouped`, an array's indices and
`qd.static`; `while`, `break` and `continue`.

Every runtime loop becomes one flat `for` over [begin, end); multi-dimensional index spaces are
recovered from the flat index with `//` and `%`, the last axis varying fastest. Only a `for`
directly in the kernel body (also through an inlined `@qd.func` or a `qd.static` branch) runs in
parallel.
"""

from __future__ import annotations

import ast
import collections.abc
import logging

import numpy as np

from qdlab.core import language as lang

from ...core.errors import QdCompileValueError, QdError, QdSyntaxError, QdTypeError
from ...core.ranges import NOT_A_PAIR, NOT_AN_INT, axes_order
from ...core.types import i32, i64, u1
from .. import ir
from . import graphs
from .compile_time import held
from .scope import FuncReturn, GradOf, array_type, dtype_of, items_of
from .sparse import is_snode, levels_of

log = logging.getLogger("qdlab")


class Loops:
    """Mixed into `Frontend`; uses its `visit`, `value`, `cast`, `emit`, `const`, `error`,
    `resolve_callee`, `resolve_static`, `lower_body`, `block`, `loc`, `scope`, `config` and its loop
    state (`top_level`, `loop_depth`, `parallel_depth`, `serialize_next`, `loop_name`,
    `block_dim`)."""

    do_while_depth = 0
    static_loops: list[tuple[int, int]]
    """The `qd.graph.do_while` loops around the statement being lowered."""

    def visit_For(self, node: ast.For) -> None:
        if node.orelse:
            raise self.error(
                "'else' clause for 'for' not supported in Quadrants kernels: `for` with `else` "
                "is not supported in a kernel."
            )
        it = node.iter
        while isinstance(it, ast.IfExp) and (pick := self.static_condition(it.test)) is not None:
            it = it.body if pick else it.orelse  # `range(n) if qd.static(c) else qd.static(...)`
        call = it if isinstance(it, ast.Call) else None
        callee = self.resolve_callee(call.func) if call is not None else None
        if call is not None and callee is lang.static:
            inner = call.args[0] if len(call.args) == 1 else None
            if isinstance(inner, ast.Call) and self.resolve_callee(inner.func) is lang.static:
                raise self.error("'qd.static' cannot be nested: write `qd.static(x)` once.")
            return self.static_for(node, call)
        grouped: bool | str = call is not None and callee is lang.BUILTINS["grouped"]
        if grouped and call is not None:
            if len(call.args) != 1:
                raise self.error("qd.grouped takes one argument: an ndrange or an array.")
            it = call.args[0]
            call = it if isinstance(it, ast.Call) else None
            callee = self.resolve_callee(call.func) if call is not None else None
        order = None
        ndrange = call is not None and callee is lang.BUILTINS["ndrange"] and not grouped
        if call is not None and callee is range:
            if self.for_depth and self.kernel.flags.nested_range is None:
                self.kernel.flags.nested_range = self.loc  # a gradient kernel refuses it
            dims = [self.range_dim(call)]
        elif call is not None and callee is lang.BUILTINS["ndrange"]:
            dims = [self.ndrange_dim(a) for a in self.spread(call.args)]
            order = self.ndrange_axes(call, len(dims))
        elif (snode := self.loop_snode(it)) is not None:  # `for i in x.parent()`: its cells
            dims = [(self.const(0, i32), self.const(n, i32)) for n in snode.shape]
            if snode._activity():
                self.sparse_guard = (snode._activity(), (0,) * len(dims), tuple(snode.shape))
            self.struct_for = True
        else:
            base = GradOf.unpack(self.loop_array(self.visit(it), it))[0]  # `x.grad` walks x
            if not (isinstance(base, ir.Value) and ir.is_array(base)):
                raise self.error(
                    "a kernel `for` loops over range(...), qd.ndrange(...), qd.grouped(...), an "
                    "array, an SNode, or qd.static(...)."
                )
            dims = self.loop_extents(base)
            f = self.field_of(base)
            if levels_of(f):  # a sparse field: its active cells only
                self.sparse_guard = (levels_of(f), tuple(f._index_offset), tuple(f.shape))
            self.struct_for = True
        targets = node.target.elts if isinstance(node.target, ast.Tuple) else [node.target]
        if not all(isinstance(t, ast.Name) for t in targets):
            raise self.error("loop targets must be plain names.")
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        if not (call is not None and callee is lang.BUILTINS["ndrange"]):  # range, struct fors
            for name in names:
                if self.find_local(name) is not None:
                    raise self.error(
                        f"Variable '{name}' is already declared in the outer scope and cannot be "
                        "used as loop variable"
                    )
        if grouped and len(names) != 1:
            raise self.error("a qd.grouped loop has one target, the index vector.")
        if not grouped and len(names) != len(dims):
            raise self.error(
                "Ndrange for loop with number of the loop variables not equal to the dimension of "
                f"the ndrange is not supported: this loop has {len(dims)} dimension(s) but "
                f"{len(names)} target(s)."
            )
        if grouped and not dims:  # qd.grouped(qd.ndrange()): one iteration, an empty index
            dims, grouped = [(self.const(0, i32), self.const(1, i32))], "empty"
        self.runtime_for(node, dims, names, grouped, order, ndrange)

    struct_for = False
    """The loop being lowered walks an array's indices (`for i in x`), not a range."""
    sparse_guard: tuple | None = None
    """The loop being lowered walks a sparse field or SNode: (its sparse levels, the offset of its
    indices, its shape); the body starts by skipping an inactive index."""

    def loop_snode(self, it: ast.expr) -> object:
        """The SNode a struct-for walks (`for i in ptr`, `for i, j in x.parent()`), or None."""
        if not isinstance(it, (ast.Name, ast.Attribute, ast.Call)):
            return None
        if isinstance(it, ast.Call) and not (
            isinstance(it.func, ast.Attribute) and it.func.attr == "parent"
        ):
            return None
        try:
            got = self.resolve_static(it)
        except QdError:
            return None
        return got if is_snode(got) else None

    def target_name(self, t: ast.expr) -> str:
        """The name a `for`'s target binds (a tuple target's entry)."""
        if not isinstance(t, ast.Name):
            raise self.error("loop targets must be plain names.")
        return t.id

    def range_dim(self, call: ast.Call) -> tuple[ir.Value, ir.Value]:
        if call.keywords or not 1 <= len(call.args) <= 2:
            raise self.error(
                f"Range should have 1 or 2 arguments, found {len(call.args) + len(call.keywords)}: "
                "a kernel's range() takes no step."
            )
        vals = [self.loop_bound(self.visit(a)) for a in call.args]
        return (self.const(0, i32), vals[0]) if len(vals) == 1 else (vals[0], vals[1])

    def spread(self, args: list[ast.expr]) -> list[object]:
        """The arguments of a call, `*shape` spread into its items (a Python list or tuple, or an
        array's `.shape`)."""
        out: list[object] = []
        for a in args:
            if isinstance(a, ast.Starred):
                try:
                    items = self.resolve_static(a.value)  # a Python value: `*[[1, 3]] * 3`
                except QdError:
                    items = self.visit(a.value)  # `*arr.shape`
                if isinstance(items, collections.abc.Iterator):
                    raise QdCompileValueError(
                        "qd.ndrange(*...) takes a list or a tuple, not a generator or an iterator "
                        "(it can be read only once).",
                        self.loc,
                    )
                if isinstance(items, np.ndarray) and items.ndim == 1:  # `*solver.grid_res`
                    items = items.tolist()
                if not isinstance(items, (tuple, list)):
                    raise self.error(
                        "only a list, a tuple or a 1-d NumPy array (an array's `.shape`) can be "
                        "spread."
                    )
                out.extend(items)
            elif isinstance(a, ast.List):
                out.append(tuple(self.visit(e) for e in a.elts))  # `qd.ndrange([0, n])`
            else:
                out.append(self.visit(a))
        return out

    def ndrange_dim(self, x: object) -> tuple[ir.Value, ir.Value]:
        """(begin, end) of one qd.ndrange argument: `n` or a pair `(begin, end)`."""
        pair = tuple(x) if isinstance(x, (tuple, list)) else (0, x)
        if len(pair) != 2:
            raise self.error(NOT_A_PAIR)
        for b in pair:
            if isinstance(b, float) or (isinstance(b, ir.Value) and not dtype_of(b).is_int):
                raise self.error(NOT_AN_INT, QdTypeError)
        return self.loop_bound(pair[0]), self.loop_bound(pair[1])

    def ndrange_axes(self, call: ast.Call, n: int) -> list[int] | None:
        """The physical order of `qd.ndrange(..., axes=(...))`, or None for the default one."""
        axes = None
        for kw in call.keywords:
            if kw.arg != "axes":
                raise self.error(f"qd.ndrange() takes no argument `{kw.arg}`.")
            axes = self.resolve_static(kw.value)
        try:
            order = axes_order(axes, n)
        except QdError as e:
            raise type(e)(e.message, self.loc) from None
        return None if order == list(range(n)) else order

    def loop_bound(self, x: object) -> ir.Value:
        v = self.value(x, i32, exact=True)  # a constant bound must fit the i32 loop index
        if not dtype_of(v).is_int:
            raise self.error(f"loop bounds must be integers, not {v.type}.", QdTypeError)
        return self.cast(v, i32)

    def runtime_for(
        self,
        node: ast.For,
        dims: list[tuple[ir.Value, ir.Value]],
        names: list[str],
        grouped: bool | str,
        order: list[int] | None = None,
        ndrange: bool = False,
    ) -> None:
        """One flat loop over the product of `dims`; `order` is the canonical axis each physical
        level walks (the last level fastest), by default the axes in order. A `qd.ndrange` loop's
        targets are variables of the body, as in Quadrants (`i = qd.cast(i, qd.i32)`); a range's
        or an array's index is not."""
        order = order or list(range(len(dims)))
        parallel = self.top_level and not self.serialize_next
        loop_name, self.serialize_next, self.loop_name = self.loop_name, False, None
        block_dim, self.block_dim = self.block_dim, None
        guard, self.sparse_guard = self.sparse_guard, None
        visits = guard[0] if guard is not None and not any(guard[1]) else ()
        blocks = None
        if guard is not None and parallel and order == list(range(len(dims))):
            blocks = self.sparse_blocks(guard[0], guard[2])
        if blocks is not None:  # a parallel loop over the blocks, a serial one in each
            begin, end = self.const(0, i32), self.const(self.block_count(blocks), i32)
            extents = []
        elif len(dims) == 1:
            begin, end = dims[0]
            extents = []
        else:
            zero = self.const(0, i32)
            extents = [self.emit(ir.BinOp, [hi, lo], i32, op="sub") for lo, hi in dims]
            extents = [self.emit(ir.BinOp, [e, zero], i32, op="max") for e in extents]
            total = self.cast(extents[0], i64)  # the trip count in i64, so it cannot wrap unseen
            for e in extents[1:]:
                total = self.emit(ir.BinOp, [total, self.cast(e, i64)], i64, op="mul")
            fits = self.emit(ir.Cmp, [total, self.const(2**31 - 1, i64)], u1, pred="le")
            # one iteration when it does not fit: the check at the top of the body then reports it
            begin, end = (
                zero,
                self.emit(ir.Select, [fits, self.cast(total, i32), self.const(1, i32)], i32),
            )
        index = ir.Value(i32, names[0] if len(dims) == 1 and not grouped else "_I")
        body = ir.Block([index])
        known = self.known_active
        attrs: dict[str, object] = {"parallel": parallel}
        if self.struct_for:  # what the gradient kernel's cross-iteration check leaves out
            attrs["struct_for"], self.struct_for = True, False
        if loop_name and self.loop_depth:
            log.warning(
                "%s: qd.loop_config(name=%r) is ignored: the loop is nested inside another "
                "for-loop, and only top-level loops are named",
                self.loc.where() if self.loc else "kernel",
                loop_name,
            )
        elif loop_name:
            attrs["loop_name"] = loop_name
        if block_dim and parallel:
            attrs["block_dim"] = block_dim
        self.block.append(ir.For([begin, end], None, attrs, [body], self.loc))
        returns = self.real_returns()
        outer, outer_top = self.block, self.top_level
        self.block, self.top_level = body, False
        self.loop_depth += 1
        self.for_depth += 1
        self.parallel_depth += parallel
        try:
            if blocks is not None:
                assert guard is not None
                values, body, storage = self.enter_block(blocks, index, dims, names, grouped)
                walked = [id(blocks[0]), id(blocks[3])]  # tested by the walk itself
                guard = (tuple(lv for lv in guard[0] if id(lv) not in walked), None, storage)
            elif extents:
                source = ast.unparse(node.iter)
                self.emit(
                    ir.Assert,
                    [fits],
                    message=f"`{source}` has more than 2**31 - 1 iterations, the most an i32 "
                    "loop index counts; split it into nested loops.",
                )
                idx: dict[int, ir.Value] = {}
                rem = index
                for p in range(len(dims) - 1, -1, -1):
                    d = order[p]
                    lo = dims[d][0]
                    part = (
                        rem
                        if p == 0
                        else self.emit(ir.BinOp, [rem, extents[d]], i32, op="mod", nonneg=True)
                    )
                    idx[d] = self.emit(
                        ir.BinOp, [part, lo], i32, names[d] if not grouped else f"_I{d}", op="add"
                    )
                    if p:
                        rem = self.emit(
                            ir.BinOp, [rem, extents[d]], i32, op="floordiv", nonneg=True
                        )
                values: list[object] = [idx[d] for d in range(len(dims))]
            else:
                values = [index]
            frame = (
                {names[0]: self.make_vec(values, (len(values),)) if grouped != "empty" else ()}
                if grouped
                else dict(zip(names, values))
            )
            if guard is not None and guard[0]:  # a sparse struct-for: skip an inactive index
                levels, offset = guard[0], guard[1]
                self.skip_inactive(
                    levels,
                    guard[2]
                    if offset is None
                    else [
                        self.emit(ir.BinOp, [v, self.const(o, i32)], i32, op="sub") if o else v
                        for v, o in zip(values, offset)
                    ],
                )
            if visits:  # a write to the cell visited activates nothing
                cells = frozenset((id(lv.mask), lv.cell) for lv in visits)
                self.known_active += ((self.loop_depth, tuple(values), cells),)
            if ndrange:
                assigned = {
                    t.id
                    for s in node.body
                    for t in ast.walk(s)
                    if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)
                }
                for name in assigned & set(names):
                    frame[name] = self.new_local(name, frame[name])
            self.lower_body(node.body, body, frame)
        finally:
            self.loop_depth -= 1
            self.for_depth -= 1
            self.parallel_depth -= parallel
            self.block, self.top_level = outer, outer_top
            now = self.known_active  # the enclosing loops' entries, unless the body forgot them
            self.known_active = known if now[: len(known)] == known else ()
        self.after_loop(returns)

    def static_for(self, node: ast.For, it: ast.Call) -> None:
        if len(it.args) != 1 or it.keywords:
            raise self.error(
                "a qd.static loop takes one iterable, e.g. `for k in qd.static(range(3)):`."
            )
        given = self.struct_items(it.args[0])  # `qd.static(self.handlers)`: structs by index
        if given is None:
            with self.static_scope():
                given = self.resolve_static(it.args[0])
        try:
            items = items_of(given)
        except TypeError:
            raise self.error(
                "qd.static(...) in a for loop needs something iterable at compile time."
            ) from None
        if len(items) > self.config.unrolling_limit:
            raise self.error(
                f"qd.static loop unrolls {len(items)} times; the limit is "
                f"{self.config.unrolling_limit}."
            )
        statics = self.static_loops
        statics.append((self.loop_depth, self.in_runtime_if))
        try:
            for item in items:
                item = held(item)  # `enumerate((i_x, i_y))`: the runtime values it held
                frame: dict = {}
                if isinstance(node.target, ast.Tuple):
                    for t, v in zip(node.target.elts, items_of(item)):
                        frame[self.target_name(t)] = v
                else:
                    frame[self.target_name(node.target)] = item
                try:
                    self.lower_body(node.body, self.block, frame)
                except StaticJump as jump:
                    if jump.kind == "break":
                        break
        finally:
            statics.pop()

    def static_jump(self, kind: str) -> None:
        """`break`/`continue` of the innermost loop when that is a qd.static one: unrolling stops,
        or goes on with the next item; under a runtime `if` it cannot be decided while compiling."""
        statics = self.static_loops
        if not statics or statics[-1][0] != self.loop_depth:
            return
        if statics[-1][1] != self.in_runtime_if:
            raise self.error(
                f"You are trying to `{kind}` a static `for` loop, but the `{kind}` statement is "
                "inside a non-static `if`: a qd.static loop is unrolled while compiling, so it "
                "cannot stop at run time; use a runtime `for`, or a static `if qd.static(...)`."
            )
        raise StaticJump(kind)

    def visit_While(self, node: ast.While) -> None:
        if node.orelse:
            raise self.error(
                "'else' clause for 'while' not supported in Quadrants kernels: `while` with "
                "`else` is not supported in a kernel."
            )
        test = node.test
        if isinstance(test, ast.Call) and self.resolve_callee(test.func) is lang.BUILTINS.get(
            "graph_do_while"
        ):
            return self.graph_do_while(node, test)
        body = ir.Block()
        self.block.append(ir.Loop([], None, {}, [body], self.loc))
        returns = self.real_returns()
        outer, outer_top = self.block, self.top_level
        self.block, self.top_level = body, False
        self.loop_depth += 1
        try:
            cond = self.truth(self.visit(node.test))
            exit_, stay = ir.Block(), ir.Block()
            self.block.append(ir.If([cond], None, {}, [stay, exit_], self.loc))
            exit_.append(ir.Break([], None, {}, None, self.loc))
            self.lower_body(node.body, body)
        finally:
            self.loop_depth -= 1
            self.block, self.top_level = outer, outer_top
        self.after_loop(returns)

    def graph_do_while(self, node: ast.While, test: ast.Call) -> None:
        """`while qd.graph.do_while(c):` the body, then again while `c[()]` is not zero: a loop
        whose body's loops run serially (Quadrants launches them as a graph; each order of a
        parallel loop's iterations is one it may run)."""
        graphs.warn_if_deprecated(test.func, "do_while")
        if not self.graph:
            raise self.error(
                "qd.graph.do_while() requires @qd.kernel(graph=True): write "
                "`@qd.kernel(graph=True)` on the kernel."
            )
        if self.loop_depth != self.do_while_depth:
            raise self.error(
                "qd.graph.do_while() must be at the kernel top level or directly nested inside "
                "another qd.graph.do_while(); it cannot appear inside a for-loop."
            )
        if len(test.args) != 1 or test.keywords:
            raise self.error("qd.graph.do_while() takes one argument, a 0-d qd.i32 ndarray.")
        arg = test.args[0]
        try:
            c = GradOf.unpack(self.visit(arg))[0]
        except QdError:
            c = None
        array = isinstance(c, ir.Value) and ir.is_array(c) and self.field_of(c) is None
        t = array_type(c) if array else None  # a field is refused, as Quadrants refuses it
        if t is None:
            raise self.error(
                f"qd.graph.do_while(...) got {ast.unparse(arg)!r} which does not resolve to an "
                f"ndarray kernel parameter of {self.kernel.name!r}. The argument must reference "
                "an ndarray kernel parameter (e.g. `flag`) or a @qd.data_oriented member ndarray "
                "(e.g. `self.flag`); other expressions are not supported.",
                QdSyntaxError,
            )
        if not (t.ndim == 0 and not t.element and t.dtype.is_int):
            raise self.error(
                "qd.graph.do_while() takes a 0-d integer ndarray (the kernel's argument that the "
                "body counts down), e.g. `c: qd.types.ndarray(dtype=qd.i32, ndim=0)`.",
                QdTypeError,
            )
        body = ir.Block()
        self.block.append(ir.Loop([], None, {}, [body], self.loc))
        outer, outer_top = self.block, self.top_level
        self.block, self.top_level = body, False
        self.loop_depth += 1
        self.do_while_depth += 1
        try:
            self.do_while_body(node.body, body)
            again = ast.copy_location(ast.Subscript(test.args[0], ast.Tuple([], ast.Load())), test)
            go_on = self.truth(self.visit(ast.fix_missing_locations(again)))
            stay, exit_ = ir.Block(), ir.Block()
            self.block.append(ir.If([go_on], None, {}, [stay, exit_], self.loc))
            exit_.append(ir.Break([], None, {}, None, self.loc))
        finally:
            self.loop_depth -= 1
            self.do_while_depth -= 1
            self.block, self.top_level = outer, outer_top

    def visit_Break(self, node: ast.Break) -> None:
        self.static_jump("break")
        if self.loop_depth == 0:
            raise self.error("`break` outside a loop.")
        if self.loop_depth == self.parallel_depth == 1:
            raise self.error(
                "Cannot break in the outermost loop: a top-level `for` runs in parallel. Mark it "
                "`qd.loop_config(serialize=True)` to run it serially, or use a `while` loop."
            )
        self.emit(ir.Break)

    def visit_Continue(self, node: ast.Continue) -> None:
        self.static_jump("continue")
        if self.loop_depth == 0:
            raise self.error("`continue` outside a loop.")
        self.emit(ir.Continue)


class StaticJump(FuncReturn):
    """Unwinds one unrolled iteration of a qd.static loop at its `break` / `continue`."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
