"""Lowering of calls in a kernel: `qd.*` built-ins, Python built-ins, casts, `print`, and inlined
`@qd.func`s.

Built-ins are found by the identity of the object the call's name resolves to; each has one small
handler.
"""

from __future__ import annotations

import ast
import builtins
import math

from qdlab.core import decompositions
from qdlab.core import language as lang

from ...core.errors import QdError, QdSyntaxError, QdTypeError, QuadrantsCompilationError
from ...core.types import DTYPES, DType, i32, promote, u1, u64
from .. import ir
from .scope import GradOf, Local, describe, is_number
from .struct_values import members_of
from .structs import BoundMethod
from .vectors import Vec, VecLocal, VecMethod

UNARY_FLOAT = {
    "sqrt",
    "sin",
    "cos",
    "tan",
    "tanh",
    "exp",
    "log",
    "asin",
    "acos",
    "rsqrt",
    "log2",
    "exp2",
}
UNARY_KEEP = {"floor", "ceil", "round", "abs", "sign", "fract"}
BIT_COUNTS = {"popcnt", "clz", "ffs"}
ATOMICS = {
    "atomic_add": "add",
    "atomic_sub": "sub",
    "atomic_min": "min",
    "atomic_max": "max",
    "atomic_and": "and",
    "atomic_or": "or",
    "atomic_xor": "xor",
    "atomic_mul": "mul",
    "atomic_exchange": "xchg",
}


class Calls:
    """Mixed into `Frontend`; uses its `visit`, `value`, `cast`, `truth`, `binop`, `emit`, `const`,
    `error`, `resolve_callee`, `resolve_static`, `subscript_target`, `find_local`, `record`, `scope`
    and loop depths."""

    inline_depth = 0
    """@qd.func calls being inlined, one inside the other."""

    def lower_call(self, node: ast.Call) -> object:
        callee = self.resolve_callee(node.func)
        if callee is None:
            callee = self.visit(node.func)
        if isinstance(callee, VecMethod):
            return self.call_method(callee, node)
        if isinstance(getattr(callee, "__self__", None), lang.Matrix):  # a method of a host vector
            callee = VecMethod(self.host_vec(callee.__self__), callee.__name__, None)  # type: ignore[union-attr]
            return self.call_method(callee, node)
        if members_of(callee) is not None:
            return self.make_struct(callee, node)  # type: ignore[arg-type]
        if getattr(callee, "__qd_anonymous_struct__", False):
            return self.anonymous_struct(node)
        made = self.construct(callee, node)
        if made is not NotImplemented:
            return made
        if callee is lang.static:
            return (
                self.resolve_static(node.args[0])
                if len(node.args) == 1
                else tuple(self.resolve_static(a) for a in node.args)
            )
        if isinstance(callee, lang.Builtin):
            handler = getattr(self, f"b_{callee.name}", None)
            if handler is None:
                if callee.name in ATOMICS:
                    return self.atomic(node, ATOMICS[callee.name])
                if callee.name in UNARY_FLOAT | UNARY_KEEP | {"isnan", "isinf"}:
                    return self.math1(callee.name, node)
                if callee.name in BIT_COUNTS:
                    return self.bit_count(callee.name, node)
                raise self.error(f"qd.{callee.name}() is not supported here.")
            return handler(node)
        if callee is print:
            return self.print_(node)
        if callee is bool:
            (x,) = self.call_args(node, 1)
            return bool(x) if is_number(x) else self.truth(x)
        if callee is lang.static_assert:
            return self.static_assert(node)
        if callee in (int, float):
            (x,) = self.call_args(node, 1)
            if is_number(x):
                return callee(x)  # type: ignore[operator]
            return self.cast_all(x, self.default_ip if callee is int else self.default_fp)
        if callee in (builtins.all, builtins.any):
            (x,) = self.call_args(node, 1)
            return self.all_of(x, callee is builtins.any)
        if callee in (abs, min, max):
            return {
                abs: lambda: self.unary("abs", *self.call_args(node, 1)),
                min: lambda: self.reduce2("min", self.call_args(node)),
                max: lambda: self.reduce2("max", self.call_args(node)),
            }[callee]()  # type: ignore[index]
        if isinstance(callee, DType):
            return self.typed_literal(callee, node)
        if isinstance(callee, lang.Func):
            return self.inline(callee, node)
        if isinstance(callee, BoundMethod):
            return self.call_bound(callee, node)
        if isinstance(callee, lang.KernelDef):
            raise self.error(
                f"a kernel cannot call another kernel (`{callee.name}`); make it a @qd.func."
            )
        if callee is range or callee is lang.BUILTINS["ndrange"]:
            raise self.error("range()/qd.ndrange() can only be used as the iterable of a `for`.")
        if callee is builtins.len:
            (x,) = self.call_args(node, 1)
            if isinstance(x, (tuple, list)):
                return len(x)
            if self.is_vec(x):
                return self.vec_of(x).n  # type: ignore[union-attr]
        raise self.error(
            f"{getattr(callee, '__name__', repr(callee))!s} cannot be called in a kernel; "
            "kernels can call qd.* functions and @qd.func functions."
        )

    def typed_literal(self, dtype: DType, node: ast.Call) -> object:
        """`qd.u32(7)`: a literal of that type (it must fit), or a cast of a value."""
        if len(node.args) != 1 or node.keywords:
            raise self.error("A primitive type can only decorate a single expression.")
        x = self.visit(node.args[0])
        if self.is_vec(x):
            raise self.error(
                "A primitive type cannot decorate an expression with a compound type.",
                QdSyntaxError,
            )
        if isinstance(x, float) and not dtype.is_float:
            raise self.error(
                "Floating-point literals must be annotated with a floating-point type. For type "
                "casting, use `qd.cast`.",
                QdTypeError,
            )
        if isinstance(x, int) and not isinstance(x, bool) and dtype.is_float:
            raise self.error(
                "Integer literals must be annotated with a integer type. For type casting, use "
                "`qd.cast`.",
                QdTypeError,
            )
        return self.cast(self.value(x, dtype, exact=True), dtype)

    def static_assert(self, node: ast.Call) -> None:
        """`qd.static_assert(cond, msg)`: checked while compiling; the condition is Python."""
        if not 1 <= len(node.args) <= 2:
            raise self.error("qd.static_assert takes a condition and an optional message.")
        try:
            cond = self.resolve_static(node.args[0])
        except QdError:
            if isinstance(self.visit(node.args[0]), ir.Value):
                raise self.error(
                    "Static assert with non-static condition: qd.static_assert checks a condition "
                    "known while compiling; use `assert` (checked with debug=True) for a runtime "
                    "one.",
                    QdTypeError,
                ) from None
            raise
        if not cond:
            msg = self.resolve_static(node.args[1]) if len(node.args) > 1 else None
            raise self.error(
                f"static assertion failed: {msg or ast.unparse(node.args[0])}",
                QuadrantsCompilationError,
            )

    def call_args(self, node: ast.Call, n: int | None = None) -> list[object]:
        args = self.visit_args(node.args)
        if n is not None and len(args) != n:
            raise self.error(f"expected {n} argument(s), got {len(args)}.", QdTypeError)
        return args

    def visit_args(self, nodes: list[ast.expr]) -> list[object]:
        """Call arguments, with `*t` of a tuple or vector spread (`qd.min(*a, *b)`)."""
        out: list[object] = []
        for a in nodes:
            if not isinstance(a, ast.Starred):
                out.append(self.visit(a))
                continue
            x = self.visit(a.value)
            if isinstance(x, Vec):
                out.extend(x.rows())
            elif isinstance(x, (tuple, list)):
                out.extend(x)
            else:
                raise self.error(
                    f"`*` spreads a tuple or a vector, not {describe(x)}.", QdTypeError
                )
        return out

    # -- math --------------------------------------------------------------------------------------
    def unary(self, fn: str, x: object) -> object:
        if self.is_vec(x):
            return self.vmap(lambda e: self.unary(fn, e), x)
        v = self.value(x)
        t: DType = v.type  # type: ignore[assignment]
        if fn in ("isnan", "isinf"):
            if not t.is_float:
                return self.const(0, u1)
            return self.emit(ir.Unary, [v], u1, fn=fn)
        if (fn in UNARY_FLOAT or fn in ("floor", "ceil", "round", "fract")) and t.is_int:
            if fn in ("floor", "ceil", "round"):
                return v
            v = self.cast(v, self.default_fp)
        return self.emit(ir.Unary, [v], v.type, fn=fn)

    def bit_count(self, fn: str, node: ast.Call) -> object:
        """`qd.math.popcnt/clz/ffs(x)`: an i32 count of the bits of an integer."""
        v = self.value(self.call_args(node, 1)[0])
        if not v.type.is_int:  # type: ignore[union-attr]
            raise self.error(
                f"'{fn}' takes integral inputs only, however '{v.type}' is provided.", QdTypeError
            )
        return self.emit(ir.Unary, [v], i32, fn=fn)

    def math1(self, fn: str, node: ast.Call) -> object:
        """`qd.floor(x)`, and `qd.floor(x, qd.i32)` with a result dtype."""
        if fn in ("floor", "ceil", "round") and len(node.args) == 2:
            x, dtype = self.call_args(node, 2)
            if not isinstance(dtype, DType):
                raise self.error(f"qd.{fn}(x, dtype) needs a dtype such as qd.i32.", QdTypeError)
            return self.cast_all(self.unary(fn, x), dtype)
        return self.unary(fn, self.call_args(node, 1)[0])

    def b_mix(self, node: ast.Call) -> object:
        x, y, a = self.call_args(node, 3)
        return self.binop(
            "add", self.binop("mul", x, self.binop("sub", 1.0, a)), self.binop("mul", y, a)
        )

    def reduce2(self, op: str, xs: list[object]) -> object:
        if len(xs) < 2:
            raise self.error(f"{op}() needs at least two arguments.", QdTypeError)
        acc = xs[0]
        for x in xs[1:]:
            acc = self.binop(op, acc, x)
        return acc

    def b_min(self, node: ast.Call) -> object:
        return self.reduce2("min", self.call_args(node))

    def b_max(self, node: ast.Call) -> object:
        return self.reduce2("max", self.call_args(node))

    def b_pow(self, node: ast.Call) -> object:
        return self.binop("pow", *self.call_args(node, 2))

    def b_atan2(self, node: ast.Call) -> object:
        return self.binop("atan2", *self.call_args(node, 2))

    def b_add(self, node: ast.Call) -> object:
        return self.binop("add", *self.call_args(node, 2))

    def b_logical_not(self, node: ast.Call) -> object:
        (x,) = self.call_args(node, 1)
        if is_number(x):
            return int(not x)
        return self.cast(self.emit(ir.Cmp, [self.truth(x), self.const(0, u1)], u1, pred="eq"), i32)

    def b_bit_shr(self, node: ast.Call) -> object:
        """A logical shift right: the bits of a signed value shift as if it were unsigned."""
        x, n = self.call_args(node, 2)
        v = self.value(x)
        t: DType = v.type  # type: ignore[assignment]
        if not t.is_int:
            raise self.error(f"qd.bit_shr needs integer operands, not {t}.", QdTypeError)
        unsigned = DTYPES[f"u{t.bits}"] if t.bits > 1 else t
        shifted = self.binop("shr", self.cast(v, unsigned), n)
        return self.cast(self.value(shifted), t)

    def b_raw_div(self, node: ast.Call) -> object:
        return self.binop("rawdiv", *self.call_args(node, 2))

    def b_raw_mod(self, node: ast.Call) -> object:
        return self.binop("rawmod", *self.call_args(node, 2))

    def b_clamp(self, node: ast.Call) -> object:
        x, lo, hi = self.call_args(node, 3)
        return self.binop("min", self.binop("max", x, lo), hi)

    def b_select(self, node: ast.Call) -> object:
        c, a, b = self.call_args(node, 3)
        if self.is_vec(c) or self.is_vec(a) or self.is_vec(b):
            return self.vmap(self.select, c, a, b)
        return self.select(c, a, b)

    def select(self, c: object, a: object, b: object) -> ir.Value:
        va = self.value(a, b.type if isinstance(b, ir.Value) else None)  # type: ignore[union-attr]
        vb = self.value(b, va.type)  # type: ignore[arg-type]
        t = promote(va.type, vb.type)  # type: ignore[arg-type]
        return self.emit(ir.Select, [self.truth(c), self.cast(va, t), self.cast(vb, t)], t)

    def b_cast(self, node: ast.Call) -> object:
        x, t = self.call_args(node, 2)
        if t in (int, float):  # as in Quadrants: the default integer / float type
            t = self.default_ip if t is int else self.default_fp
        if not isinstance(t, DType):
            t = self.type_dtype(t) if t in (int, float) else t
        if not isinstance(t, DType):
            raise self.error("qd.cast(x, dtype) needs a dtype such as qd.i32.", QdTypeError)
        return self.cast_all(x, t)

    def b_bit_cast(self, node: ast.Call) -> object:
        x, t = self.call_args(node, 2)
        v = self.value(x)
        if not isinstance(t, DType) or t.bits != v.type.bits:  # type: ignore[union-attr]
            raise self.error("qd.bit_cast needs a dtype of the same width.", QdTypeError)
        return self.emit(ir.Cast, [v], t, bitcast=True)

    # -- effects -----------------------------------------------------------------------------------
    def atomic(self, node: ast.Call, op: str) -> object:
        if len(node.args) != 2:
            raise self.error("an atomic takes (target, value).", QdTypeError)
        target, value_node = node.args
        place = self.place(target)
        if place is None:
            raise self.error(self.not_writable(op))
        return self.update(place, op, self.visit(value_node), True, f"`{ast.unparse(target)}`")

    def not_writable(self, op: str) -> str:
        name = {"xchg": "atomic_exchange"}.get(op, f"atomic_{op}")
        return (
            f"cannot use a non-writable target as the first operand of '{name}': the target of "
            "an atomic must be an array element or a local variable, e.g. "
            "`qd.atomic_add(a[i], 1)`."
        )

    def b_random(self, node: ast.Call) -> object:
        dtype = self.visit(node.args[0]) if node.args else self.default_fp
        if node.keywords:
            dtype = self.visit(node.keywords[0].value)
        if not isinstance(dtype, DType):
            raise self.error("qd.random(dtype) needs a dtype such as qd.f32.", QdTypeError)
        self.random_sites += 1
        return self.emit(ir.Random, [], dtype, site=self.random_sites)

    def b_randn(self, node: ast.Call) -> object:
        """A standard normal draw, by Box-Muller from two uniform draws in [0, 1)."""
        u, v = self.b_random(node), self.b_random(node)
        t: DType = u.type  # type: ignore[attr-defined]
        if not t.is_float:
            raise self.error(f"qd.randn(dtype) needs a float dtype, not {t}.", QdTypeError)
        log = self.unary("log", self.binop("sub", self.const(1.0, t), u))
        r = self.unary("sqrt", self.binop("mul", self.const(-2.0, t), log))
        return self.binop(
            "mul", r, self.unary("cos", self.binop("mul", self.const(2 * math.pi, t), v))
        )

    def b_volatile_load(self, node: ast.Call) -> object:
        target = node.args[0] if len(node.args) == 1 else None
        local = self.find_local(target.id) if isinstance(target, ast.Name) else None
        if isinstance(local, (Local, VecLocal)):
            raise self.error(
                "qd.volatile_load() requires a global lvalue (an ndarray subscript); "
                "function-scope local arrays are not visible to other threads.",
                QdTypeError,
            )
        if len(node.args) != 1 or not isinstance(node.args[0], ast.Subscript):
            raise self.volatile_target_error(node.args[0] if node.args else None)
        array, indices = self.subscript_target(node.args[0])
        base, grad = GradOf.unpack(array)
        return self.emit(ir.VolatileLoad, [base, *indices], base.type.dtype, grad=grad)  # type: ignore

    def b_get_addr(self, node: ast.Call) -> object:
        """`qd.get_addr(x, [i, j])`: the address of a field's element, as a u64 (of its first
        entry for a vector or matrix field)."""
        if len(node.args) != 2 or node.keywords:
            raise self.error("qd.get_addr(f, indices) takes a field and its element's indices.")
        target = ast.copy_location(ast.Subscript(node.args[0], node.args[1], ast.Load()), node)
        array, indices = self.subscript_target(target)
        base, grad = GradOf.unpack(array)
        f = self.field_of(base)
        if f is None:
            raise self.error(
                "qd.get_addr(f, indices) takes a field (an ndarray's address is its data "
                "pointer's business).",
                QdTypeError,
            )
        if getattr(f.primal or f, "blocked", False):
            raise self.error(
                "qd.get_addr on a field whose dense layout splits an axis over levels with "
                "another between: qdlab stores it in axis order, so no address of it would be "
                "the reference's."
            )
        if self.config.get("arch") == "cuda":
            raise self.error("qd.get_addr is supported on the CPU in qdlab.")
        zeros = [self.const(0, i32) for _ in base.type.element]  # type: ignore[union-attr]
        return self.emit(ir.Addr, [base, *indices, *zeros], u64, grad=grad)

    def b_loop_config(self, node: ast.Call) -> None:
        for kw in node.keywords:
            v = self.resolve_static(kw.value)
            if kw.arg == "serialize":
                self.serialize_next = bool(v)
            elif kw.arg == "name":
                self.loop_name = str(v)
            elif kw.arg == "block_dim":
                if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= 1024:
                    raise self.error(
                        "qd.loop_config(block_dim=...) needs an integer from 1 to 1024."
                    )
                self.block_dim = v
            elif kw.arg not in ("parallelize", "block_dim_adaptive"):
                raise self.error(f"qd.loop_config has no option `{kw.arg}`.")

    # -- decompositions (@qd.funcs of qdlab.lang.decompositions) ----------------------------------
    def decomposition(self, node: ast.Call, name: str, sizes: tuple[int, ...]) -> object:
        args = self.call_args(node)
        kw = {k.arg: self.visit(k.value) for k in node.keywords}
        if not args:
            raise self.error(f"qd.{name}(A, dt=None) needs a matrix.", QdTypeError)
        a = self.vec_of(args[0])
        dt = args[1] if len(args) > 1 else kw.get("dt")
        dt = self.type_dtype(dt) if dt is not None else self.default_fp
        if a is None or a.ndim != 2 or a.n != a.m or a.n not in sizes:
            raise self.error(
                f"qd.{name} takes a square matrix of size {' or '.join(map(str, sizes))}, not "
                f"{a or args[0]!r}.",
                QdTypeError,
            )
        return self.inline_call(getattr(decompositions, name), [a, dt], {}, f"qd.{name}")

    def b_svd(self, node: ast.Call) -> object:
        return self.decomposition(node, "svd", (2, 3))

    def b_polar_decompose(self, node: ast.Call) -> object:
        return self.decomposition(node, "polar_decompose", (2, 3))

    def b_sym_eig(self, node: ast.Call) -> object:
        return self.decomposition(node, "sym_eig", (2, 3, 4))

    # -- @qd.func ----------------------------------------------------------------------------------
