"""Lowering of `for` loops: `range`, `qd.ndrange`, `qd.grouped`, loops over an array's indices, `qd.static`.

Every runtime loop becomes one flat `for` over [begin, end); multi-dimensional index spaces are recovered from
the flat index with `//` and `%`, the last axis varying fastest. Only a `for` directly in the kernel body (also
through an inlined `@qd.func` or a `qd.static` branch) runs in parallel.
"""

from __future__ import annotations

import ast

from . import ir
from .errors import QdTypeError
from .frontend import Frontend
from .types import i32, i64, u1


def lower_for(fe: Frontend, node: ast.For) -> None:
    import qdlab.lang as lang
    it = node.iter
    callee = fe.resolve_callee(it.func) if isinstance(it, ast.Call) else None
    if callee is lang.static:
        return _static_for(fe, node)
    grouped = callee is lang.BUILTINS["grouped"]
    if grouped:
        if len(it.args) != 1:  # type: ignore[attr-defined]
            raise fe.error("qd.grouped takes one argument: an ndrange or an array.")
        it = it.args[0]  # type: ignore[attr-defined]
        callee = fe.resolve_callee(it.func) if isinstance(it, ast.Call) else None
    if callee is range:
        dims = [_range_dim(fe, it)]  # type: ignore[arg-type]
    elif callee is lang.BUILTINS["ndrange"]:
        dims = [_ndrange_dim(fe, a) for a in it.args]  # type: ignore[attr-defined]
    else:
        base = fe.visit(it)
        if not (isinstance(base, ir.Value) and ir.is_array(base)):
            raise fe.error("a kernel `for` loops over range(...), qd.ndrange(...), qd.grouped(...), an array, "
                           "or qd.static(...).")
        dims = [(fe.const(0, i32), fe.emit(ir.Shape, [base], i32, f"{base.name}_shape{d}", axis=d))
                for d in range(base.type.ndim)]  # type: ignore[union-attr]
    targets = node.target.elts if isinstance(node.target, ast.Tuple) else [node.target]
    if not all(isinstance(t, ast.Name) for t in targets):
        raise fe.error("loop targets must be plain names.")
    names = [t.id for t in targets]  # type: ignore[attr-defined]
    if grouped and len(names) != 1:
        raise fe.error("a qd.grouped loop has one target, the index vector.")
    if not grouped and len(names) != len(dims):
        raise fe.error(f"this loop has {len(dims)} dimension(s) but {len(names)} target(s).")
    _runtime_for(fe, node, dims, names, grouped)


def _range_dim(fe: Frontend, call: ast.Call) -> tuple[ir.Value, ir.Value]:
    if call.keywords or not 1 <= len(call.args) <= 2:
        raise fe.error("range() in a kernel takes one or two arguments (no step).")
    vals = [_index(fe, fe.visit(a)) for a in call.args]
    return (fe.const(0, i32), vals[0]) if len(vals) == 1 else (vals[0], vals[1])


def _ndrange_dim(fe: Frontend, arg: ast.expr) -> tuple[ir.Value, ir.Value]:
    x = fe.visit(arg)
    if isinstance(x, tuple):
        if len(x) != 2:
            raise fe.error("an ndrange axis is an extent `n` or a pair `(lo, hi)`.")
        return _index(fe, x[0]), _index(fe, x[1])
    return fe.const(0, i32), _index(fe, x)


def _index(fe: Frontend, x: object) -> ir.Value:
    v = fe.value(x, i32, exact=True)  # a constant bound must fit the i32 loop index
    if not v.type.is_int:  # type: ignore[union-attr]
        raise fe.error(f"loop bounds must be integers, not {v.type}.", QdTypeError)
    return fe.cast(v, i32)


def _runtime_for(fe: Frontend, node: ast.For, dims: list[tuple[ir.Value, ir.Value]], names: list[str],
                 grouped: bool) -> None:
    parallel = fe.top_level and not fe.serialize_next
    loop_name, fe.serialize_next, fe.loop_name = fe.loop_name, False, None
    block_dim, fe.block_dim = fe.block_dim, None
    if len(dims) == 1:
        begin, end = dims[0]
        extents = []
    else:
        zero = fe.const(0, i32)
        extents = [fe.emit(ir.BinOp, [hi, lo], i32, op="sub") for lo, hi in dims]
        extents = [fe.emit(ir.BinOp, [e, zero], i32, op="max") for e in extents]
        total = fe.cast(extents[0], i64)  # the trip count in i64, so it cannot wrap unseen
        for e in extents[1:]:
            total = fe.emit(ir.BinOp, [total, fe.cast(e, i64)], i64, op="mul")
        fits = fe.emit(ir.Cmp, [total, fe.const(2**31 - 1, i64)], u1, pred="le")
        # one iteration when it does not fit: the check at the top of the body then reports it
        begin, end = zero, fe.emit(ir.Select, [fits, fe.cast(total, i32), fe.const(1, i32)], i32)
    index = ir.Value(i32, names[0] if len(dims) == 1 and not grouped else "_I")
    body = ir.Block([index])
    attrs = {"parallel": parallel}
    if loop_name:
        attrs["loop_name"] = loop_name
    if block_dim and parallel:
        attrs["block_dim"] = block_dim
    fe.block.append(ir.For([begin, end], None, attrs, [body], fe.loc))
    outer, outer_top = fe.block, fe.top_level
    fe.block, fe.top_level = body, False
    fe.loop_depth += 1
    fe.parallel_depth += parallel
    try:
        if extents:
            source = ast.unparse(node.iter)
            fe.emit(ir.Assert, [fits], message=f"`{source}` has more than 2**31 - 1 iterations, the most an i32 "
                    "loop index counts; split it into nested loops.", line=fe.loc.render() if fe.loc else "")
            idx: list[ir.Value] = [None] * len(dims)  # type: ignore[list-item]
            rem = index
            for d in range(len(dims) - 1, -1, -1):
                lo = dims[d][0]
                part = rem if d == 0 else fe.emit(ir.BinOp, [rem, extents[d]], i32, op="mod")
                idx[d] = fe.emit(ir.BinOp, [part, lo], i32, names[d] if not grouped else f"_I{d}", op="add")
                if d:
                    rem = fe.emit(ir.BinOp, [rem, extents[d]], i32, op="floordiv")
            values: list[object] = idx
        else:
            values = [index]
        frame = {names[0]: tuple(values)} if grouped else dict(zip(names, values))
        fe.lower_body(node.body, body, frame)
    finally:
        fe.loop_depth -= 1
        fe.parallel_depth -= parallel
        fe.block, fe.top_level = outer, outer_top


def _static_for(fe: Frontend, node: ast.For) -> None:
    if len(node.iter.args) != 1 or node.iter.keywords:  # type: ignore[attr-defined]
        raise fe.error("a qd.static loop takes one iterable, e.g. `for k in qd.static(range(3)):`.")
    items = fe.resolve_static(node.iter.args[0])  # type: ignore[attr-defined]
    try:
        items = list(items)  # type: ignore[call-overload]
    except TypeError:
        raise fe.error("qd.static(...) in a for loop needs something iterable at compile time.") from None
    if len(items) > fe.config.get("unrolling_limit", 1024):
        raise fe.error(f"qd.static loop unrolls {len(items)} times; the limit is "
                       f"{fe.config.get('unrolling_limit', 1024)}.")
    jump = _own_jump(node.body)
    if jump is not None:
        fe.loc = fe.scope.source.loc(jump, fe.scope.name)
        raise fe.error("`break`/`continue` cannot be used directly in a qd.static loop.")
    for item in items:
        frame: dict = {}
        if isinstance(node.target, ast.Tuple):
            for t, v in zip(node.target.elts, item):
                frame[t.id] = v  # type: ignore[attr-defined]
        else:
            frame[node.target.id] = item  # type: ignore[attr-defined]
        fe.lower_body(node.body, fe.block, frame)


def _own_jump(nodes: list) -> ast.stmt | None:
    """The first `break`/`continue` among `nodes` that belongs to their loop, not to a loop nested in it."""
    for n in nodes:
        if isinstance(n, (ast.Break, ast.Continue)):
            return n
        inner = n.orelse if isinstance(n, (ast.For, ast.While)) else \
            [c for c in ast.iter_child_nodes(n) if isinstance(c, ast.stmt)]
        jump = _own_jump(inner)
        if jump is not None:
            return jump
    return None
