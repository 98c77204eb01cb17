"""Reverse-mode autodiff: the gradient kernel of a kernel (`kernel.grad(*args)`).

The gradient kernel reverses the kernel statement by statement. Every block is reversed the same
way: it is first run forward again (array writes, prints and asserts left out: the arrays already
hold what the kernel wrote), which gives every value the derivatives need, then its statements are
visited last to first, each adding the gradient of its result to the gradients of its operands
(`RULES`). A value's gradient is an SSA value while it stays in its block, and a zeroed local where
it crosses into a nested block; a mutable local has a gradient local that its stores read and
clear. A store to an array reads its element's gradient and clears it (the element was
overwritten), a load from an array adds to its element's gradient atomically.

A nested block needs the locals as they were when it began: before each `if` and `for`, the
forward run keeps the value of every local the block touches, and the reverse puts them back. A
serial `for` runs in reverse; for iteration j it re-runs iterations begin..j-1 forward first when
its body reads a local an earlier iteration wrote (so such a loop costs the square of its trip
count in the gradient kernel), then reverses iteration j. A top-level parallel `for` reverses each
of its iterations in parallel. Values computed outside a parallel loop get their gradient from it
through atomic adds. Refused, with the line: `while`, `break` / `continue` in a serial loop,
random draws, and reading a `.grad` buffer. Gradient kernels are never split (the gate's
`autodiff` rule).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...core.errors import (
    QdCompileNotImplementedError,
    QuadrantsCompilationError,
    QuadrantsRuntimeError,
    QuadrantsSyntaxError,
    SourceLoc,
)
from ...core.types import DType, LocalType, Type, u1
from .. import ir

Rule = Callable[["RuleBuilder", Any, ir.Value], None]
"""A derivative rule: given the builder, an op of the class it is listed under (`RULES`) and the
gradient of its result, add to its operands' (`add`)."""
DROPPED = (ir.Store, ir.Atomic, ir.Print, ir.Assert, ir.Return)
"""What the forward re-run leaves out (an atomic whose old value is used is refused)."""
LOCAL_OPS = (ir.LocalLoad, ir.LocalStore, ir.LocalAtomic)


def _float(v: ir.Value) -> bool:
    return isinstance(v.type, DType) and v.type.is_float


class RuleBuilder:
    """What the derivative rules (`RULES`) call back, for the reverse mode (`Adjoint`) and the
    forward mode (`forward_mode.Forward`): ops appended to `into` at `loc`, operands read through
    `mapping` (a value's clone in the code being built)."""

    into: ir.Block
    loc: SourceLoc | None
    mapping: dict[ir.Value, ir.Value]

    def emit(
        self, cls: type[ir.Op], operands: list[ir.Value], result: Type, **attrs: object
    ) -> ir.Value:
        """Append an op that gives a value of type `result`; that value."""
        op = self.into.append(cls(operands, result, attrs, None, self.loc))
        assert op.result is not None
        return op.result

    def put(self, cls: type[ir.Op], operands: list[ir.Value], **attrs: object) -> None:
        """Append an op that gives no value (a store)."""
        self.into.append(cls(operands, None, attrs, None, self.loc))

    def add(self, v: ir.Value, g: ir.Value) -> None:
        """Add `g` to what `v` is differentiated by (the rules' output)."""
        raise NotImplementedError

    def const(self, value: float, t: DType) -> ir.Value:
        return self.emit(ir.Const, [], t, value=float(value) if t.is_float else int(value))

    def primal(self, v: ir.Value) -> ir.Value:
        return self.mapping.get(v, v)

    def bin(self, op: str, a: ir.Value, b: ir.Value) -> ir.Value:
        a, b = self.primal(a), self.primal(b)
        return self.emit(ir.BinOp, [a, b], a.type, op=op)

    def un(self, fn: str, a: ir.Value) -> ir.Value:
        a = self.primal(a)
        return self.emit(ir.Unary, [a], a.type, fn=fn)


class Adjoint(RuleBuilder):
    """The reverse of one block: where its code goes, the forward clones of its values
    (`mapping`), their gradients, and the block it is nested in."""

    def __init__(
        self,
        rev: Reverser,
        block: ir.Block,
        into: ir.Block,
        mapping: dict[ir.Value, ir.Value],
        parent: Adjoint | None,
        parallel: bool,
    ) -> None:
        self.rev, self.into, self.mapping, self.parent, self.parallel = (
            rev,
            into,
            mapping,
            parent,
            parallel,
        )
        self.loc: SourceLoc | None = None
        self.adj: dict[ir.Value, ir.Value] = {}
        self.defined = {op.result for op in block.ops if op.result is not None} | set(block.args)
        self.crossing: dict[ir.Value, ir.Value] = {}
        """Gradient locals of this block's values that nested blocks use."""

    # -- building ----------------------------------------------------------------------------------

    def zeroed_local(self, t: DType, name: str) -> ir.Value:
        ref = self.emit(ir.Alloca, [], LocalType(t), name=name)
        self.put(ir.LocalStore, [ref, self.const(0, t)])
        return ref

    def accumulate(self, ref: ir.Value, g: ir.Value, shared: bool) -> None:
        """`ref += g` on a gradient local; atomic when parallel iterations share it."""
        if shared:
            self.put(ir.LocalAtomic, [ref, g], op="add")
        else:
            t = ref.element
            old = self.emit(ir.LocalLoad, [ref], t)
            self.put(ir.LocalStore, [ref, self.emit(ir.BinOp, [old, g], t, op="add")])

    def take(self, ref: ir.Value) -> ir.Value:
        """The value of a gradient local, which is cleared."""
        t = ref.element
        g = self.emit(ir.LocalLoad, [ref], t)
        self.put(ir.LocalStore, [ref, self.const(0, t)])
        return g

    # -- gradients ---------------------------------------------------------------------------------
    def add(self, v: ir.Value, g: ir.Value) -> None:
        """Add `g` to the gradient of primal value `v`."""
        if not _float(v):
            return
        if g.type != v.type:
            g = self.emit(ir.Cast, [g], v.type)
        if v in self.defined:
            self.adj[v] = (
                self.emit(ir.BinOp, [self.adj[v], g], v.type, op="add") if v in self.adj else g
            )
            return
        owner = self.parent
        while owner is not None and v not in owner.crossing:
            owner = owner.parent
        if owner is not None:
            self.accumulate(owner.crossing[v], g, self.parallel and not owner.parallel)

    def gradient(self, v: ir.Value) -> ir.Value | None:
        """The whole gradient of this block's value `v`, once every use of it has been reversed."""
        g = self.adj.get(v)
        if v in self.crossing:
            c = self.take(self.crossing[v])
            g = c if g is None else self.emit(ir.BinOp, [g, c], c.type, op="add")
        return g


class Reverser:
    """Builds the gradient kernel: forward re-runs, reversed blocks, gradient locals."""

    def __init__(self, stack_size: int = 0) -> None:
        self.stack_size = stack_size
        """Quadrants' `ad_stack_size` under debug=True (0: unchecked): a loop that carries a float
        local through more than `stack_size - 2` iterations would overflow Quadrants' stack of
        its values, and the gradient kernel fails as Quadrants' does ("Adstack overflow")."""
        self.adj_local: dict[ir.Value, tuple[ir.Value, bool]] = {}
        """Primal local -> (its gradient local, whether it lives outside every parallel loop)."""

    # -- forward re-run ----------------------------------------------------------------------------
    def replay(
        self,
        ops: list[ir.Op],
        mapping: dict[ir.Value, ir.Value],
        into: ir.Block,
        snapshots: dict[ir.Op, dict[ir.Value, ir.Value]] | None = None,
    ) -> None:
        """Run `ops` forward again into `into`, cloning through `mapping`; with `snapshots`, the
        locals each nested block touches are read just before it."""
        for op in ops:
            if isinstance(op, ir.Random):
                raise QuadrantsRuntimeError(  # a RuntimeError there, with these words
                    "RandStmt not supported in AutoDiff for now: kernel.grad cannot differentiate "
                    "a kernel that draws qd.random().",
                    op.loc,
                )
            if isinstance(op, ir.Call):
                raise _refuse(
                    op, f"a call of recursive @qd.real_func `{op.function.name}`", REAL_FUNC
                )
            if isinstance(op, ir.Loop) and op.attrs.get("real_func"):
                real = op.attrs["real_func"]
                raise _refuse(op, f"a `return` before the end of @qd.real_func `{real}`", REAL_FUNC)
            if isinstance(op, (ir.Loop, ir.Break, ir.Continue)):
                what = "`while`" if isinstance(op, ir.Loop) else f"`{op.name}`"
                raise _refuse(op, what, QdCompileNotImplementedError)
            if isinstance(op, ir.Load) and op.attrs.get("grad"):
                raise QuadrantsRuntimeError(
                    "Cannot automatically differentiate through a grad tensor: the kernel reads a "
                    "`.grad` buffer.",
                    op.loc,
                )
            if isinstance(op, DROPPED):
                if isinstance(op, ir.Atomic) and op.result is not None and op.result.users:
                    raise _refuse(op, "the old value of an atomic")
                continue
            if isinstance(op, ir.For) and op.attrs.get("parallel") and not _writes_outside(op):
                continue  # it changes nothing a later statement reads
            if op.regions and snapshots is not None:
                snapshots[op] = {
                    x: _emit(into, ir.LocalLoad, [mapping[x]], x.element, op.loc)
                    for x in _touched(op)
                    if x in mapping
                }
            new = ir.clone_op(op, mapping)
            into.append(new)
            for r, nr in zip(op.regions, new.regions):
                self.replay(r.ops, mapping, nr)

    # -- reverse -----------------------------------------------------------------------------------
    def reverse_block(
        self,
        block: ir.Block,
        mapping: dict[ir.Value, ir.Value],
        into: ir.Block,
        parent: Adjoint | None,
        parallel: bool,
    ) -> None:
        snapshots: dict[ir.Op, dict[ir.Value, ir.Value]] = {}
        self.replay(block.ops, mapping, into, snapshots)
        a = Adjoint(self, block, into, mapping, parent, parallel)
        for op in block.ops:
            a.loc = op.loc
            if isinstance(op, ir.Alloca) and op.result.element.is_float:
                t = op.result.element
                self.adj_local[op.result] = (
                    a.zeroed_local(t, f"{op.result.name}_grad"),
                    not parallel,
                )
            elif op.result is not None and _float(op.result) and _used_deeper(op.result, block):
                a.crossing[op.result] = a.zeroed_local(op.result.dtype, "_grad")
        for op in reversed(block.ops):
            a.loc = op.loc
            self.reverse_op(a, op, snapshots.get(op, {}))

    def reverse_op(self, a: Adjoint, op: ir.Op, snapshot: dict[ir.Value, ir.Value]) -> None:
        if op.regions:
            for x, v in snapshot.items():
                a.put(ir.LocalStore, [a.mapping[x], v])  # the locals as the block found them
            if isinstance(op, ir.If):
                branches = [ir.Block(), ir.Block()]
                a.into.append(ir.If([a.primal(op.operands[0])], None, {}, branches, op.loc))
                for region, into in zip(op.regions, branches):
                    self.reverse_block(region, dict(a.mapping), into, a, a.parallel)
            elif isinstance(op, ir.For):
                self.reverse_for(a, op, snapshot)
            return
        if isinstance(op, (ir.Store, ir.Atomic)):
            self.reverse_write(a, op)
            return
        if isinstance(op, ir.LocalStore):
            entry = self.adj_local.get(op.operands[0])
            if entry is not None:
                a.add(op.operands[1], a.take(entry[0]))
            return
        if isinstance(op, ir.LocalAtomic):
            entry = self.adj_local.get(op.operands[0])
            if entry is not None:
                if op.attrs["op"] not in ("add", "sub"):
                    raise _refuse(op, f"a local `{op.attrs['op']}` reduction")
                t = entry[0].element
                g = a.emit(ir.LocalLoad, [entry[0]], t)
                a.add(
                    op.operands[1],
                    g if op.attrs["op"] == "add" else a.emit(ir.Unary, [g], t, fn="neg"),
                )
            return
        if op.result is None:
            return
        g = a.gradient(op.result)
        if g is None:
            return
        if isinstance(op, ir.LocalLoad):
            entry = self.adj_local.get(op.operands[0])
            if entry is not None:
                a.accumulate(entry[0], g, a.parallel and entry[1])
            return
        if isinstance(op, (ir.Load, ir.VolatileLoad)):
            arr = op.operands[0]
            at = arr.array_type
            if at.needs_grad and not op.attrs.get("stop_grad"):
                idx = [a.primal(v) for v in op.indices]
                a.emit(ir.Atomic, [a.primal(arr), *idx, g], at.dtype, op="add", grad=True)
            return
        rule = RULES.get(type(op))
        if rule is None:
            return
        try:
            rule(a, op, g)
        except KeyError:
            raise _refuse(op, f"differentiating `{op.name}` {op.attrs}") from None

    def reverse_write(self, a: Adjoint, op: ir.Store | ir.Atomic) -> None:
        """A store reads its element's gradient and clears it; `+=` / `-=` read it."""
        arr = op.operands[0]
        if not arr.array_type.needs_grad or op.attrs.get("grad"):
            return
        if isinstance(op, ir.Atomic) and op.attrs["op"] not in ("add", "sub"):
            raise _refuse(op, f"atomic `{op.attrs['op']}`")
        idx = [a.primal(v) for v in op.indices]
        t = arr.array_type.dtype
        g = a.emit(ir.Load, [a.primal(arr), *idx], t, grad=True)
        if isinstance(op, ir.Store):
            a.put(ir.Store, [a.primal(arr), *idx, a.const(0, t)], grad=True)
        a.add(
            op.operands[-1],
            g if op.attrs.get("op") != "sub" else a.emit(ir.Unary, [g], t, fn="neg"),
        )

    def reverse_for(self, a: Adjoint, loop: ir.For, snapshot: dict[ir.Value, ir.Value]) -> None:
        """`for j in [begin, end)` backwards; a parallel loop reverses its iterations in
        parallel."""
        begin, end = (a.primal(v) for v in loop.operands)
        index = ir.Value(loop.body.args[0].type, "_rev")
        body = ir.Block([index])
        a.into.append(ir.For([begin, end], None, dict(loop.attrs), [body], loop.loc))
        mapping = dict(a.mapping)
        if loop.attrs.get("parallel"):
            mapping[loop.body.args[0]] = index
            self.reverse_block(loop.body, mapping, body, a, True)
            return
        if self.stack_size and _carries(loop, floats=True):
            trips = a.bin("sub", end, begin)
            need = a.bin("add", trips, a.const(2, trips.dtype))
            fits = a.emit(ir.Cmp, [need, a.const(self.stack_size, trips.dtype)], u1, pred="le")
            a.put(
                ir.Assert,
                [fits],
                message=f"Adstack overflow: a loop-carried value needs more than ad_stack_size="
                f"{self.stack_size} entries; raise qd.init(ad_stack_size=...) or leave it at 0 "
                "(sized as needed).",
            )
        inner = Adjoint(self, ir.Block(), body, mapping, a, a.parallel)
        inner.loc = loop.loc
        t = index.dtype
        last = inner.bin("sub", inner.bin("add", begin, end), inner.const(1, t))
        j = inner.emit(ir.BinOp, [last, index], t, op="sub")
        if _carries(loop):
            for x, v in snapshot.items():
                inner.put(ir.LocalStore, [mapping[x], v])
            k = ir.Value(t, "_redo")
            prefix = ir.Block([k])
            body.append(ir.For([begin, j], None, {"parallel": False}, [prefix], loop.loc))
            self.replay(loop.body.ops, {**mapping, loop.body.args[0]: k}, prefix)
        mapping[loop.body.args[0]] = j
        self.reverse_block(loop.body, mapping, body, a, a.parallel)


def _check_cross_iteration(kernel: ir.Kernel, loop: ir.For) -> None:
    """Quadrants' offload-level guard: in the body of a top-level range loop (outside the loops
    nested in it), a store to an array with a gradient and a load of it whose indices differ on an
    axis that depends on the loop index (`out[i] = out[i - 1] + x`) form a chain between
    iterations that the gradient kernel does not follow; refused, as there."""
    index = loop.body.args[0]
    stores: dict[ir.Value, list[ir.Store | ir.Load]] = {}
    loads: dict[ir.Value, list[ir.Store | ir.Load]] = {}

    def visit(block: ir.Block) -> None:
        for op in block.ops:
            if isinstance(op, (ir.For, ir.Loop)):
                continue  # a nested loop: the adstack's, not this guard's
            for region in op.regions:
                visit(region)
            if isinstance(op, (ir.Store, ir.Load)) and not op.attrs.get("grad"):
                arr = op.operands[0]
                if arr.array_type.needs_grad and any(_on_index(v, index) for v in op.indices):
                    (stores if isinstance(op, ir.Store) else loads).setdefault(arr, []).append(op)

    def same_slice(a: ir.Store | ir.Load, b: ir.Store | ir.Load) -> bool:
        for x, y in zip(a.indices, b.indices):
            if _on_index(x, index) != _on_index(y, index) or (_on_index(x, index) and x is not y):
                return False
        return True

    visit(loop.body)
    clash = next(
        (
            (arr, load)
            for arr, written in stores.items()
            for store in written
            for load in loads.get(arr, [])
            if not same_slice(store, load)
        ),
        None,
    )
    if clash is None:
        return
    arr, load = clash
    name = kernel.flags.field_labels.get(arr.name, arr.name)
    raise QuadrantsRuntimeError(
        f"Cross-iteration read-after-write on the `needs_grad` global field `{name}` at the "
        "offload-level loop body is not supported in reverse-mode autodiff: an iteration reads "
        "what another one wrote, a chain the gradient kernel does not follow. Wrap the loop in an "
        "outer for-loop in the kernel (with ad_stack_experimental_enabled=True), or restructure "
        "the kernel; `out[i, 0] = out[i, 1]` and `out[i] = out[i] + x` are fine.",
        load.loc,
    )


def _on_index(v: ir.Value, index: ir.Value) -> bool:
    """Whether `v` is computed from the loop index through arithmetic."""
    if v is index:
        return True
    op = v.owner
    if isinstance(op, (ir.BinOp, ir.Unary, ir.Select, ir.Cast)):
        return any(_on_index(x, index) for x in op.operands)
    return False


def _emit(
    into: ir.Block, cls: type[ir.Op], operands: list, result: Type, loc: SourceLoc | None
) -> ir.Value:
    op = into.append(cls(operands, result, {}, None, loc))
    assert op.result is not None
    return op.result


def _touched(region_op: ir.Op) -> list[ir.Value]:
    """The locals declared outside `region_op` that it reads or writes, in order of first use."""
    inner = {op.result for op in region_op.walk() if isinstance(op, ir.Alloca)}
    seen: dict[ir.Value, None] = {}
    for op in region_op.walk():
        if isinstance(op, LOCAL_OPS) and op.operands[0] not in inner:
            seen.setdefault(op.operands[0])
    return list(seen)


def _writes_outside(loop: ir.For) -> bool:
    inner = {op.result for op in loop.walk() if isinstance(op, ir.Alloca)}
    return any(
        isinstance(op, (ir.LocalStore, ir.LocalAtomic)) and op.operands[0] not in inner
        for op in loop.walk()
    )


def _carries(loop: ir.For, floats: bool = False) -> bool:
    """Whether an iteration may read a local (with `floats`, a float local) that an earlier
    iteration wrote: a local is read before this iteration has certainly written it."""
    written: set[ir.Value] = set()
    for op in loop.body.ops:
        reads = [
            o.operands[0]
            for o in op.walk()
            if isinstance(o, (ir.LocalLoad, ir.LocalAtomic))
            and (not floats or o.operands[0].element.is_float)
        ]
        if any(x not in written for x in reads):
            return True
        if isinstance(op, ir.LocalStore):
            written.add(op.operands[0])
    return False


def _used_deeper(v: ir.Value, block: ir.Block) -> bool:
    return any(u.parent is not block for u in v.users)


def _binop(a: RuleBuilder, op: ir.BinOp, g: ir.Value) -> None:
    x, y = op.operands
    name = op.attrs["op"]
    if name == "add":
        a.add(x, g)
        a.add(y, g)
    elif name == "sub":
        a.add(x, g)
        a.add(y, a.emit(ir.Unary, [g], g.type, fn="neg"))
    elif name == "mul":
        a.add(x, a.bin("mul", g, y))
        a.add(y, a.bin("mul", g, x))
    elif name == "floordiv":
        return  # piecewise constant: no gradient, as in Quadrants
    elif name == "mod":  # Quadrants lowers a % b to a - b * (a // b)
        a.add(x, g)
        a.add(y, a.emit(ir.Unary, [a.bin("mul", g, a.bin("floordiv", x, y))], g.type, fn="neg"))
    elif name in ("truediv", "rawdiv"):  # qd.raw_div of floats divides
        a.add(x, a.bin("truediv", g, y))
        a.add(
            y,
            a.emit(
                ir.Unary,
                [a.bin("truediv", a.bin("mul", g, x), a.bin("mul", y, y))],
                g.type,
                fn="neg",
            ),
        )
    elif name == "pow":
        r = a.primal(op.result)
        power = a.bin("pow", x, a.bin("sub", y, a.const(1, y.dtype)))
        n = y if y.type == x.type else a.emit(ir.Cast, [a.primal(y)], x.type)  # an int exponent
        a.add(x, a.bin("mul", g, a.bin("mul", n, power)))
        a.add(y, a.bin("mul", g, a.bin("mul", r, a.un("log", x))))
    elif name == "atan2":  # atan2(x, y) = atan(x / y): d/dx = y / r2, d/dy = -x / r2
        r2 = a.bin("add", a.bin("mul", x, x), a.bin("mul", y, y))
        a.add(x, a.bin("truediv", a.bin("mul", g, y), r2))
        a.add(y, a.emit(ir.Unary, [a.bin("truediv", a.bin("mul", g, x), r2)], g.type, fn="neg"))
    elif name in ("min", "max"):
        pick = a.emit(ir.Cmp, [a.primal(x), a.primal(y)], u1, pred="lt" if name == "min" else "gt")
        zero = a.const(0.0, g.dtype)
        a.add(x, a.emit(ir.Select, [pick, g, zero], g.type))
        a.add(y, a.emit(ir.Select, [pick, zero, g], g.type))
    else:
        raise KeyError(name)


def _unary(a: RuleBuilder, op: ir.Unary, g: ir.Value) -> None:
    x = op.operands[0]
    r = a.primal(op.result)
    fn = op.attrs["fn"]
    one = lambda: a.const(1.0, x.dtype)
    derivative = {
        "neg": lambda: a.emit(ir.Unary, [g], g.type, fn="neg"),
        "sin": lambda: a.bin("mul", g, a.un("cos", x)),
        "cos": lambda: a.bin("mul", g, a.emit(ir.Unary, [a.un("sin", x)], g.type, fn="neg")),
        "tan": lambda: a.bin("mul", g, a.bin("add", one(), a.bin("mul", r, r))),
        "exp": lambda: a.bin("mul", g, r),
        "exp2": lambda: a.bin("mul", g, a.bin("mul", r, a.const(0.6931471805599453, x.dtype))),
        "log": lambda: a.bin("truediv", g, x),
        "log2": lambda: a.bin("truediv", g, a.bin("mul", x, a.const(0.6931471805599453, x.dtype))),
        "sqrt": lambda: a.bin("truediv", g, a.bin("mul", a.const(2.0, x.dtype), r)),
        "rsqrt": lambda: a.bin(
            "mul", g, a.bin("mul", a.const(-0.5, x.dtype), a.bin("mul", r, a.bin("mul", r, r)))
        ),
        "tanh": lambda: a.bin("mul", g, a.bin("sub", one(), a.bin("mul", r, r))),
        "asin": lambda: a.bin("mul", g, a.un("rsqrt", a.bin("sub", one(), a.bin("mul", x, x)))),
        "acos": lambda: a.emit(
            ir.Unary,
            [a.bin("mul", g, a.un("rsqrt", a.bin("sub", one(), a.bin("mul", x, x))))],
            g.type,
            fn="neg",
        ),
        "abs": lambda: a.bin("mul", g, a.un("sign", x)),
        "fract": lambda: g,
    }
    if fn in ("floor", "ceil", "round", "sign"):
        return  # piecewise constant: no gradient
    a.add(x, derivative[fn]())


def _cast(a: RuleBuilder, op: ir.Cast, g: ir.Value) -> None:
    x = op.operands[0]
    if _float(x) and not op.attrs.get("bitcast"):
        a.add(x, a.emit(ir.Cast, [g], x.type))


def _select(a: RuleBuilder, op: ir.Select, g: ir.Value) -> None:
    c, x, y = op.operands
    zero = a.const(0.0, g.dtype)
    a.add(x, a.emit(ir.Select, [a.primal(c), g, zero], g.type))
    a.add(y, a.emit(ir.Select, [a.primal(c), zero, g], g.type))


RULES: dict[type[ir.Op], Rule] = {
    ir.BinOp: _binop,
    ir.Unary: _unary,
    ir.Cast: _cast,
    ir.Select: _select,
}
"""The derivative of each differentiable op: given the gradient of its result, add to its
operands'."""


REAL_FUNC = QuadrantsSyntaxError
"""What a refused @qd.real_func raises: Quadrants refuses every real function in a gradient kernel
with a QuadrantsSyntaxError ("Real function in gradient kernels unsupported")."""


def _refuse(
    op: ir.Op, what: str, error: type[QuadrantsCompilationError] = QuadrantsCompilationError
) -> QuadrantsCompilationError:
    """The error refusing `op`. Control flow the reverse mode does not take (`while`, `break`,
    `continue`) is a QdCompileNotImplementedError, also a RuntimeError: Quadrants raises a
    RuntimeError ("Not supported.") for it."""
    prefix = "Real function in gradient kernels unsupported: " if error is REAL_FUNC else ""
    message = f"{prefix}kernel.grad: {what} is not supported in a differentiated kernel."
    return error(message, op.loc)


def reverse(kernel: ir.Kernel, adstack: bool = False, stack_size: int = 0) -> ir.Kernel:
    """The gradient kernel of `kernel` (whose IR has been simplified). Without `adstack`
    (`qd.init(ad_stack_experimental_enabled=True)`) a `range` loop nested in another loop is
    refused, as Quadrants refuses it."""
    loc = kernel.flags.nested_range
    if loc is not None and not adstack:
        raise QuadrantsCompilationError(
            "Cannot use non static range in Backwards mode: a `for ... in range(...)` nested in "
            "another loop needs qd.init(ad_stack_experimental_enabled=True) to be differentiated.",
            loc,
        )
    for op in kernel.body.ops:
        if isinstance(op, ir.For) and not op.attrs.get("struct_for"):
            _check_cross_iteration(kernel, op)
    out = ir.Kernel(kernel.name, kernel.params, [], ir.Block(), kernel.flags.copy())
    Reverser(stack_size).reverse_block(kernel.body, {}, out.body, None, False)
    return out
