"""Lowering of calls in a kernel: `qd.*` built-ins, Python built-ins, casts, `print`, and inlined `@qd.func`s.

Built-ins are found by the identity of the object the call's name resolves to; each has one small handler.
"""

from __future__ import annotations

import ast
import builtins
import math

from . import ir
from .errors import QdTypeError
from .frontend import Frontend, GradOf, Local, Scope, _is_number, _Return
from .source import func_source
from .types import DType, i32, u1

UNARY_FLOAT = {"sqrt", "sin", "cos", "tan", "tanh", "exp", "log", "asin", "acos", "rsqrt", "log2", "exp2"}
UNARY_KEEP = {"floor", "ceil", "round", "abs", "sign", "fract"}
ATOMICS = {"atomic_add": "add", "atomic_sub": "sub", "atomic_min": "min", "atomic_max": "max",
           "atomic_and": "and", "atomic_or": "or", "atomic_xor": "xor", "atomic_mul": "mul",
           "atomic_exchange": "xchg"}


class Calls:
    def __init__(self, fe: Frontend) -> None:
        self.fe = fe
        self.inline_depth = 0

    def lower(self, node: ast.Call) -> object:
        import qdlab.lang as lang
        fe = self.fe
        callee = fe.resolve_callee(node.func)
        if callee is None:
            callee = fe.visit(node.func)
        if callee is lang.static:
            return fe.resolve_static(node.args[0]) if len(node.args) == 1 else \
                tuple(fe.resolve_static(a) for a in node.args)
        if isinstance(callee, lang.Builtin):
            handler = getattr(self, f"b_{callee.name}", None)
            if handler is None:
                if callee.name in ATOMICS:
                    return self.atomic(node, ATOMICS[callee.name])
                if callee.name in UNARY_FLOAT | UNARY_KEEP | {"isnan", "isinf"}:
                    return self.math1(callee.name, node)
                raise fe.error(f"qd.{callee.name}() is not supported here.")
            return handler(node)
        if callee is print:
            return self.print_(node)
        if callee in (int, float):
            (x,) = self.args(node, 1)
            if _is_number(x):
                return callee(x)  # type: ignore[operator]
            return fe.cast(fe.value(x), i32 if callee is int else fe.default_fp)
        if callee in (abs, min, max):
            return {abs: lambda: self.unary("abs", *self.args(node, 1)),
                    min: lambda: self.reduce2("min", self.args(node)),
                    max: lambda: self.reduce2("max", self.args(node))}[callee]()  # type: ignore[index]
        if isinstance(callee, DType):
            (x,) = self.args(node, 1)
            return fe.cast(fe.value(x, callee, exact=True), callee)
        if isinstance(callee, lang.Func):
            return self.inline(callee, node)
        if isinstance(callee, lang.KernelDef):
            raise fe.error(f"a kernel cannot call another kernel (`{callee.name}`); make it a @qd.func.")
        if callee is range or callee is lang.BUILTINS["ndrange"]:
            raise fe.error("range()/qd.ndrange() can only be used as the iterable of a `for`.")
        if callee is getattr(builtins, "len"):
            (x,) = self.args(node, 1)
            if isinstance(x, tuple):
                return len(x)
        raise fe.error(f"{getattr(callee, '__name__', repr(callee))!s} cannot be called in a kernel; "
                       "kernels can call qd.* functions and @qd.func functions.")

    def args(self, node: ast.Call, n: int | None = None) -> list[object]:
        if n is not None and len(node.args) != n:
            raise self.fe.error(f"expected {n} argument(s), got {len(node.args)}.", QdTypeError)
        return [self.fe.visit(a) for a in node.args]

    # -- math -----------------------------------------------------------------------------------------------
    def unary(self, fn: str, x: object) -> object:
        fe = self.fe
        v = fe.value(x)
        t: DType = v.type  # type: ignore[assignment]
        if fn in ("isnan", "isinf"):
            if not t.is_float:
                return fe.const(0, u1)
            return fe.emit(ir.Unary, [v], u1, fn=fn)
        if fn in UNARY_FLOAT or (fn in ("floor", "ceil", "round", "fract") and t.is_int):
            if t.is_int:
                if fn in ("floor", "ceil", "round"):
                    return v
                v = fe.cast(v, fe.default_fp)
        return fe.emit(ir.Unary, [v], v.type, fn=fn)

    def math1(self, fn: str, node: ast.Call) -> object:
        """`qd.floor(x)`, and `qd.floor(x, qd.i32)` with a result dtype."""
        if fn in ("floor", "ceil", "round") and len(node.args) == 2:
            x, dtype = self.args(node, 2)
            if not isinstance(dtype, DType):
                raise self.fe.error(f"qd.{fn}(x, dtype) needs a dtype such as qd.i32.", QdTypeError)
            return self.fe.cast(self.fe.value(self.unary(fn, x)), dtype)
        return self.unary(fn, self.args(node, 1)[0])

    def b_mix(self, node: ast.Call) -> object:
        x, y, a = self.args(node, 3)
        fe = self.fe
        return fe.binop("add", fe.binop("mul", x, fe.binop("sub", 1.0, a)), fe.binop("mul", y, a))

    def reduce2(self, op: str, xs: list[object]) -> object:
        if len(xs) < 2:
            raise self.fe.error(f"{op}() needs at least two arguments.", QdTypeError)
        acc = xs[0]
        for x in xs[1:]:
            acc = self.fe.binop(op, acc, x)
        return acc

    def b_min(self, node: ast.Call) -> object:
        return self.reduce2("min", self.args(node))

    def b_max(self, node: ast.Call) -> object:
        return self.reduce2("max", self.args(node))

    def b_pow(self, node: ast.Call) -> object:
        return self.fe.binop("pow", *self.args(node, 2))

    def b_atan2(self, node: ast.Call) -> object:
        return self.fe.binop("atan2", *self.args(node, 2))

    def b_raw_div(self, node: ast.Call) -> object:
        return self.fe.binop("rawdiv", *self.args(node, 2))

    def b_raw_mod(self, node: ast.Call) -> object:
        return self.fe.binop("rawmod", *self.args(node, 2))

    def b_clamp(self, node: ast.Call) -> object:
        x, lo, hi = self.args(node, 3)
        return self.fe.binop("min", self.fe.binop("max", x, lo), hi)

    def b_select(self, node: ast.Call) -> object:
        c, a, b = self.args(node, 3)
        fe = self.fe
        va = fe.value(a, b.type if isinstance(b, ir.Value) else None)  # type: ignore[union-attr]
        vb = fe.value(b, va.type)  # type: ignore[arg-type]
        from .types import promote
        t = promote(va.type, vb.type)  # type: ignore[arg-type]
        return fe.emit(ir.Select, [fe.truth(c), fe.cast(va, t), fe.cast(vb, t)], t)

    def b_cast(self, node: ast.Call) -> object:
        x, t = self.args(node, 2)
        if not isinstance(t, DType):
            raise self.fe.error("qd.cast(x, dtype) needs a dtype such as qd.i32.", QdTypeError)
        return self.fe.cast(self.fe.value(x, t), t)

    def b_bit_cast(self, node: ast.Call) -> object:
        x, t = self.args(node, 2)
        v = self.fe.value(x)
        if not isinstance(t, DType) or t.bits != v.type.bits:  # type: ignore[union-attr]
            raise self.fe.error("qd.bit_cast needs a dtype of the same width.", QdTypeError)
        return self.fe.emit(ir.Cast, [v], t, bitcast=True)

    # -- effects --------------------------------------------------------------------------------------------
    def atomic(self, node: ast.Call, op: str) -> object:
        fe = self.fe
        if len(node.args) != 2:
            raise fe.error("an atomic takes (target, value).", QdTypeError)
        target, value_node = node.args
        if isinstance(target, ast.Name):
            local = fe.find_local(target.id)
            if not isinstance(local, Local):
                raise fe.error("the target of an atomic must be an array element or a local variable.")
            dtype = local.ref.type.dtype  # type: ignore[union-attr]
            v = fe.cast(fe.value(fe.visit(value_node), dtype), dtype)
            if local.parallel_depth < fe.parallel_depth:  # shared by the loop's threads: one atomic RMW
                return fe.emit(ir.LocalAtomic, [local.ref, v], dtype, target.id + "_old", op=op)
            old = fe.emit(ir.LocalLoad, [local.ref], dtype, target.id)
            fe.emit(ir.LocalStore, [local.ref, fe.cast(fe.value(fe.binop(op, old, v) if op != "xchg" else v,
                                                               dtype), dtype)])
            return old
        if not isinstance(target, ast.Subscript):
            raise fe.error("the target of an atomic must be an array element, e.g. `qd.atomic_add(a[i], 1)`.")
        array, indices = fe.subscript_target(target)
        base, grad = (array.array, True) if isinstance(array, GradOf) else (array, False)
        dtype = base.type.dtype  # type: ignore[union-attr]
        if op in ("and", "or", "xor") and dtype.is_float:
            raise fe.error(f"atomic_{op} needs an integer array, not {dtype}.", QdTypeError)
        v = fe.cast(fe.value(fe.visit(value_node), dtype), dtype)
        return fe.emit(ir.Atomic, [base, *indices, v], dtype, op=op, grad=grad)

    def b_random(self, node: ast.Call) -> object:
        fe = self.fe
        dtype = fe.visit(node.args[0]) if node.args else fe.default_fp
        if node.keywords:
            dtype = fe.visit(node.keywords[0].value)
        if not isinstance(dtype, DType):
            raise fe.error("qd.random(dtype) needs a dtype such as qd.f32.", QdTypeError)
        fe.random_sites += 1
        return fe.emit(ir.Random, [], dtype, site=fe.random_sites)

    def b_randn(self, node: ast.Call) -> object:
        """A standard normal draw, by Box-Muller from two uniform draws in [0, 1)."""
        fe = self.fe
        u, v = self.b_random(node), self.b_random(node)
        t: DType = u.type  # type: ignore[attr-defined]
        if not t.is_float:
            raise fe.error(f"qd.randn(dtype) needs a float dtype, not {t}.", QdTypeError)
        log = self.unary("log", fe.binop("sub", fe.const(1.0, t), u))
        r = self.unary("sqrt", fe.binop("mul", fe.const(-2.0, t), log))
        return fe.binop("mul", r, self.unary("cos", fe.binop("mul", fe.const(2 * math.pi, t), v)))

    def b_volatile_load(self, node: ast.Call) -> object:
        fe = self.fe
        if len(node.args) != 1 or not isinstance(node.args[0], ast.Subscript):
            raise fe.error("qd.volatile_load takes one array element, e.g. `qd.volatile_load(a[i])`.")
        array, indices = fe.subscript_target(node.args[0])
        base, grad = (array.array, True) if isinstance(array, GradOf) else (array, False)
        return fe.emit(ir.VolatileLoad, [base, *indices], base.type.dtype, grad=grad)  # type: ignore

    def print_(self, node: ast.Call) -> None:
        fe = self.fe
        parts: list[str | None] = []
        values: list[ir.Value] = []
        sep = " "
        for kw in node.keywords:
            if kw.arg == "sep" and isinstance(kw.value, ast.Constant):
                sep = str(kw.value.value)
        for k, a in enumerate(node.args):
            if k:
                parts.append(sep)
            pieces = a.values if isinstance(a, ast.JoinedStr) else [a]
            for p in pieces:
                if isinstance(p, ast.Constant):
                    parts.append(str(p.value))
                    continue
                x = fe.visit(p.value if isinstance(p, ast.FormattedValue) else p)
                if isinstance(x, (str, int, float)) and not isinstance(x, ir.Value):
                    parts.append(str(x))
                    continue
                parts.append(None)
                values.append(fe.value(x))
        fe.emit(ir.Print, values, parts=parts)

    def b_loop_config(self, node: ast.Call) -> None:
        fe = self.fe
        for kw in node.keywords:
            v = fe.resolve_static(kw.value)
            if kw.arg == "serialize":
                fe.serialize_next = bool(v)
            elif kw.arg == "name":
                fe.loop_name = str(v)
            elif kw.arg == "block_dim":
                if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= 1024:
                    raise fe.error("qd.loop_config(block_dim=...) needs an integer from 1 to 1024.")
                fe.block_dim = v
            elif kw.arg not in ("parallelize", "block_dim_adaptive"):
                raise fe.error(f"qd.loop_config has no option `{kw.arg}`.")

    # -- @qd.func -------------------------------------------------------------------------------------------
    def inline(self, func: object, node: ast.Call) -> object:
        import qdlab.lang as lang
        fe = self.fe
        if self.inline_depth > 32:
            raise fe.error("@qd.func calls nest too deeply (recursion is not supported).")
        source = func_source(func)
        params = source.tree.args.args
        args = [fe.visit(a) for a in node.args]
        kwargs = {kw.arg: fe.visit(kw.value) for kw in node.keywords}
        if len(args) + len(kwargs) != len(params):
            raise fe.error(f"{source.tree.name}() takes {len(params)} argument(s), got "
                           f"{len(args) + len(kwargs)}.", QdTypeError)
        annotations = getattr(func.fn, "__annotations__", {})  # type: ignore[attr-defined]
        frame: dict = {}
        for k, p in enumerate(params):
            x = args[k] if k < len(args) else kwargs.get(p.arg)
            ann = annotations.get(p.arg)
            if isinstance(ann, DType):
                x = fe.cast(fe.value(x, ann), ann)
            elif ann is not lang.Template and isinstance(x, (int, float)) and not isinstance(x, bool):
                x = fe.value(x)
            frame[p.arg] = x
        fn_globals = getattr(func.fn, "__globals__", {})  # type: ignore[attr-defined]
        outer = fe.scope
        from .frontend import _dotted
        via = _dotted(node.func) or "?"
        owner = f"{outer.owner}/{via}" if outer.owner else via
        fe.scope = Scope(source, source.tree.name, fn_globals, [frame], [], True,
                         (fe.loop_depth, fe.in_runtime_if), owner)
        fe.record("<source>", func)
        self.inline_depth += 1
        try:
            for s in source.tree.body:
                fe.visit(s)
        except _Return:
            pass
        finally:
            self.inline_depth -= 1
            returned, fe.scope = fe.scope.returned, outer
        result = returned[0] if returned else None
        ret_ann = annotations.get("return")
        if isinstance(ret_ann, DType) and result is not None:
            result = fe.cast(fe.value(result, ret_ann), ret_ann)
        return result



