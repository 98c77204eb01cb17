"""Reverse-mode autodiff: the gradient kernel of a kernel whose parallel loops have straight-line
bodies.

`kernel.grad(*args)` runs this kernel: every top-level parallel loop, in reverse order, recomputes
its forward values, reads the gradients of what it stored, and accumulates into the `.grad` buffers
of the arrays it read (atomically, as several iterations may read one element). Values computed
outside loops are constants to the derivative. Anything else (a loop body with control flow or
mutable locals, a serial store) is refused with a message naming the line. Gradient kernels are
never split: the gate's `autodiff` rule compiles them whole.
"""

from __future__ import annotations

from collections.abc import Callable

from . import ir
from .errors import QdError, QuadrantsCompilationError
from .types import ArrayType, DType

Rule = Callable[["Adjoint", ir.Op, ir.Value], None]


class Adjoint:
    """Builds one loop's reverse body."""

    def __init__(self, body: ir.Block, loc: object) -> None:
        self.body = body
        self.loc = loc
        self.adj: dict[ir.Value, ir.Value] = {}

    def emit(
        self,
        cls: type[ir.Op],
        operands: list[ir.Value],
        result: DType | None = None,
        **attrs: object,
    ) -> ir.Value:
        op = cls(operands, result, attrs, None, self.loc)  # type: ignore[arg-type]
        self.body.append(op)
        return op.result  # type: ignore[return-value]

    def const(self, value: float, t: DType) -> ir.Value:
        return self.emit(ir.Const, [], t, value=float(value))

    def bin(self, op: str, a: ir.Value, b: ir.Value) -> ir.Value:
        return self.emit(ir.BinOp, [a, b], a.type, op=op)  # type: ignore[arg-type]

    def un(self, fn: str, a: ir.Value) -> ir.Value:
        return self.emit(ir.Unary, [a], a.type, fn=fn)  # type: ignore[arg-type]

    def add(self, v: ir.Value, g: ir.Value) -> None:
        if not (isinstance(v.type, DType) and v.type.is_float):
            return
        self.adj[v] = self.bin("add", self.adj[v], g) if v in self.adj else g


def _binop(a: Adjoint, op: ir.Op, g: ir.Value) -> None:
    x, y = op.operands
    name = op.attrs["op"]
    if name == "add":
        a.add(x, g), a.add(y, g)
    elif name == "sub":
        a.add(x, g), a.add(y, a.un("neg", g))
    elif name == "mul":
        a.add(x, a.bin("mul", g, y)), a.add(y, a.bin("mul", g, x))
    elif name == "truediv":
        a.add(x, a.bin("truediv", g, y))
        a.add(y, a.un("neg", a.bin("truediv", a.bin("mul", g, x), a.bin("mul", y, y))))
    elif name == "pow":
        r = op.result
        one = a.const(1.0, x.type)  # type: ignore[arg-type]
        a.add(x, a.bin("mul", g, a.bin("mul", y, a.bin("pow", x, a.bin("sub", y, one)))))
        a.add(y, a.bin("mul", g, a.bin("mul", r, a.un("log", x))))  # type: ignore[arg-type]
    elif name in ("min", "max"):
        pick = a.emit(ir.Cmp, [x, y], DType("u1", "u", 1), pred="lt" if name == "min" else "gt")
        zero = a.const(0.0, g.type)  # type: ignore[arg-type]
        a.add(x, a.emit(ir.Select, [pick, g, zero], g.type))  # type: ignore[arg-type]
        a.add(y, a.emit(ir.Select, [pick, zero, g], g.type))  # type: ignore[arg-type]
    else:
        raise KeyError(name)


def _unary(a: Adjoint, op: ir.Op, g: ir.Value) -> None:
    x = op.operands[0]
    r = op.result
    fn = op.attrs["fn"]
    derivative = {
        "neg": lambda: a.un("neg", g),
        "sin": lambda: a.bin("mul", g, a.un("cos", x)),
        "cos": lambda: a.bin("mul", g, a.un("neg", a.un("sin", x))),
        "exp": lambda: a.bin("mul", g, r),  # type: ignore[arg-type]
        "log": lambda: a.bin("truediv", g, x),
        "sqrt": lambda: a.bin("truediv", g, a.bin("mul", a.const(2.0, x.type), r)),  # type: ignore[arg-type]
        "tanh": lambda: a.bin("mul", g, a.bin("sub", a.const(1.0, x.type), a.bin("mul", r, r))),  # type: ignore
        "abs": lambda: a.bin("mul", g, a.un("sign", x)),
    }
    a.add(x, derivative[fn]())


def _cast(a: Adjoint, op: ir.Op, g: ir.Value) -> None:
    x = op.operands[0]
    if isinstance(x.type, DType) and x.type.is_float and not op.attrs.get("bitcast"):
        a.add(x, a.emit(ir.Cast, [g], x.type))


def _select(a: Adjoint, op: ir.Op, g: ir.Value) -> None:
    c, x, y = op.operands
    zero = a.const(0.0, g.type)  # type: ignore[arg-type]
    a.add(x, a.emit(ir.Select, [c, g, zero], g.type))  # type: ignore[arg-type]
    a.add(y, a.emit(ir.Select, [c, zero, g], g.type))  # type: ignore[arg-type]


RULES: dict[type[ir.Op], Rule] = {
    ir.BinOp: _binop,
    ir.Unary: _unary,
    ir.Cast: _cast,
    ir.Select: _select,
}
"""The derivative of each differentiable op: given the gradient of its result, add to its
operands'."""
FORWARD = (ir.Const, ir.Arg, ir.Shape, ir.BinOp, ir.Cmp, ir.Unary, ir.Cast, ir.Select, ir.Load)


def _refuse(op: ir.Op, what: str) -> QdError:
    return QuadrantsCompilationError(
        f"kernel.grad: {what} is not supported in a differentiated kernel; keep each top-level "
        "loop's body to straight-line arithmetic on array elements.",
        op.loc,
    )  # type: ignore[arg-type]


def reverse(kernel: ir.Kernel) -> ir.Kernel:
    """The gradient kernel of `kernel` (whose IR has been simplified)."""
    out = ir.Kernel(kernel.name, kernel.params, [], ir.Block(), dict(kernel.flags))
    top: list[ir.Op] = []
    loops: list[ir.For] = []
    for op in kernel.body.ops:
        if isinstance(op, ir.For) and op.attrs.get("parallel"):
            loops.append(op)
        elif isinstance(op, FORWARD) and not isinstance(op, ir.Load):
            top.append(op)
        elif isinstance(op, ir.Return):
            continue
        else:
            raise _refuse(op, f"a top-level `{op.name}` outside the parallel loops")
    mapping: dict[ir.Value, ir.Value] = {}
    ir.clone_ops(top, mapping, out.body)
    for loop in reversed(loops):
        _reverse_loop(loop, mapping, out.body)
    return out


def _reverse_loop(loop: ir.For, outer: dict[ir.Value, ir.Value], into: ir.Block) -> None:
    index = ir.Value(loop.body.args[0].type, loop.body.args[0].name)
    body = ir.Block([index])
    into.append(
        ir.For([outer.get(v, v) for v in loop.operands], None, dict(loop.attrs), [body], loop.loc)
    )
    mapping = dict(outer)
    mapping[loop.body.args[0]] = index
    forward = []
    for op in loop.body.ops:
        if op.regions or isinstance(
            op, (ir.Alloca, ir.LocalLoad, ir.LocalStore, ir.LocalAtomic, ir.Random)
        ):
            raise _refuse(op, f"`{op.name}` inside the loop")
        if isinstance(op, FORWARD):
            forward.append(op)
        elif not isinstance(op, (ir.Store, ir.Atomic)):
            raise _refuse(op, f"`{op.name}` inside the loop")
    ir.clone_ops(forward, mapping, body)
    a = Adjoint(body, loop.loc)
    for op in reversed(loop.body.ops):
        a.loc = op.loc
        arr = op.operands[0] if isinstance(op, (ir.Load, ir.Store, ir.Atomic)) else None
        grad = isinstance(getattr(arr, "type", None), ArrayType) and arr.type.needs_grad  # type: ignore[union-attr]
        if isinstance(op, (ir.Store, ir.Atomic)):
            if not grad or op.attrs.get("grad"):
                continue
            if isinstance(op, ir.Atomic) and op.attrs["op"] not in ("add", "sub"):
                raise _refuse(op, f"atomic `{op.attrs['op']}`")
            idx = [mapping[v] for v in op.indices]  # type: ignore[attr-defined]
            g = a.emit(ir.Load, [mapping[arr], *idx], arr.type.dtype, grad=True)  # type: ignore[union-attr]
            a.add(op.operands[-1], g if op.attrs.get("op") != "sub" else a.un("neg", g))
            continue
        g = a.adj.get(op.result) if op.result is not None else None  # type: ignore[arg-type]
        if g is None:
            continue
        if isinstance(op, ir.Load):
            if grad and not op.attrs.get("grad"):
                idx = [mapping[v] for v in op.indices]  # type: ignore[attr-defined]
                a.emit(ir.Atomic, [mapping[arr], *idx, g], arr.type.dtype, op="add", grad=True)  # type: ignore
            continue
        rule = RULES.get(type(op))
        if rule is None:
            continue
        try:
            rule(_Mapped(a, mapping), op, g)
        except KeyError:
            raise _refuse(op, f"differentiating `{op.attrs}`") from None


class _Mapped(Adjoint):
    """The adjoint builder as the rules see it: primal operands are read through their recomputed
    clones, and gradients are keyed by the primal values."""

    def __init__(self, base: Adjoint, mapping: dict[ir.Value, ir.Value]) -> None:
        self.__dict__.update(base.__dict__)
        self.base, self.mapping = base, mapping

    def bin(self, op: str, x: ir.Value, y: ir.Value) -> ir.Value:
        return self.base.bin(op, self.mapping.get(x, x), self.mapping.get(y, y))

    def un(self, fn: str, x: ir.Value) -> ir.Value:
        return self.base.un(fn, self.mapping.get(x, x))

    def emit(
        self,
        cls: type[ir.Op],
        operands: list[ir.Value],
        result: DType | None = None,
        **attrs: object,
    ) -> ir.Value:
        return self.base.emit(cls, [self.mapping.get(v, v) for v in operands], result, **attrs)

    def add(self, v: ir.Value, g: ir.Value) -> None:
        self.base.add(v, g)
