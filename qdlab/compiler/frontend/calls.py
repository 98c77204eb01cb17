"""Lowering of calls in a kernel: a lookup of the callee (a vector method, a struct or vector
constructor, a `qd.*` built-in or a Python function in `builtins.py`'s tables, a typed literal, an
inlined `@qd.func`) and a few branches.
"""

from __future__ import annotations

import ast
import types
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast, overload

import numpy as np

from qdlab.core import language as lang
from qdlab.core.fields import FieldBase

from ...core.errors import (
    QdCompileValueError,
    QdError,
    QdSyntaxError,
    QdTypeError,
    QuadrantsCompilationError,
    QuadrantsIndexError,
    QuadrantsTypeError,
)
from ...core.types import DType, promote, u1
from .. import ir
from .builtins import BUILTINS, Typing, python_entry, unary_typing
from .scope import GradOf, Local, describe, dtype_of, is_number
from .source import is_lambda
from .struct_values import members_of
from .structs import BoundMethod, StructRef
from .vectors import Vec, VecLocal, VecMethod
from .views import ViewMethod, is_view_type

if TYPE_CHECKING:
    from .visitor import Frontend


@dataclass(frozen=True)
class ArrayFill:
    """`x.fill` of a field in a kernel: called, a loop over its elements (`Calls.fill_array`)."""

    target: ast.expr


@dataclass(frozen=True)
class ScalarFieldOf:
    """`x.get_scalar_field` of a vector or matrix field in a kernel: called, the field of one
    entry (`Calls.scalar_field`)."""

    field: FieldBase


_LAMBDAS: weakref.WeakKeyDictionary[Callable, lang.Func] = weakref.WeakKeyDictionary()
"""The func each Python `lambda` called in a kernel is inlined as (`source.lambda_source`)."""


class Calls:
    """Mixed into `Frontend`; uses its `visit`, `value`, `cast`, `truth`, `binop`, `emit`, `const`,
    `error`, `resolve_callee`, `resolve_static`, `subscript_target`, `find_local`, `record`, `scope`
    and loop depths."""

    inline_depth = 0
    """@qd.func calls being inlined, one inside the other."""

    def lower_call(self, node: ast.Call) -> object:
        fe = cast("Frontend", self)  # the built-ins' lowerings take the frontend this is part of
        made = fe.dynamic_method(node)  # `x[i].append(v)`: before `x[i]` is read as an element
        if made is not NotImplemented:
            return made
        callee = self.resolve_callee(node.func)
        if callee is None:
            callee = self.visit(node.func)
        if isinstance(callee, VecMethod):
            return self.call_method(callee, node)
        if isinstance(callee, ViewMethod):
            return self.call_view_method(callee, node)
        if isinstance(callee, type) and is_view_type(callee):
            return self.make_view(node)  # `BufferView(arr, offset, size)`
        if isinstance(callee, ArrayFill):
            return self.fill_array(callee.target, node)
        owner = getattr(callee, "__self__", None)
        if isinstance(owner, FieldBase) and getattr(callee, "__name__", "") == "fill":
            assert isinstance(node.func, ast.Attribute)  # `s.member.fill(v)`: a field's method
            return self.fill_array(node.func.value, node)
        if isinstance(callee, ScalarFieldOf):
            return self.scalar_field(callee.field, node)
        if isinstance(owner, lang.Matrix):  # a method of a host vector
            method = VecMethod(self.host_vec(owner), getattr(callee, "__name__", ""), None)
            return self.call_method(method, node)
        if isinstance(callee, type) and members_of(callee) is not None:
            return self.make_struct(callee, node)
        if getattr(callee, "__qd_anonymous_struct__", False):
            return self.anonymous_struct(node)
        made = self.construct(callee, node)
        if made is not NotImplemented:
            return made
        if isinstance(callee, lang.DeviceIntrinsic):
            raise self.error(callee.unsupported(self.config.arch), QdCompileValueError)
        if isinstance(callee, lang.Builtin):
            entry = BUILTINS.get(callee.name)
            if entry is None:
                raise self.error(f"qd.{callee.name}() is not supported here.")
            return entry(fe, node)
        entry = python_entry(callee)
        if entry is not None:
            return entry(fe, node)
        if isinstance(callee, DType):
            return self.typed_literal(callee, node)
        if isinstance(callee, lang.Func):
            return self.inline(callee, node)
        if isinstance(callee, BoundMethod):
            return self.call_bound(callee, node)
        if isinstance(callee, lang.BoundFunc):  # a func bound to a Python object (`obj.f`)
            return self.call_bound(BoundMethod(callee.func, self.bound_self(callee)), node)
        if isinstance(callee, lang.KernelDef):
            raise self.error(
                f"a kernel cannot call another kernel (`{callee.name}`); make it a @qd.func."
            )
        if is_lambda(callee):  # run on the kernel's values, as the reference runs it
            func = _LAMBDAS.get(callee)
            if func is None:
                func = _LAMBDAS[callee] = lang.Func(callee)
            return self.inline(func, node)
        return self.call_python(callee, node)

    def call_python(self, callee: object, node: ast.Call) -> object:
        """A callable that is not Quadrants' (a plain Python function or method, NumPy's...): as
        Quadrants does, Python runs it while the kernel compiles. Given arguments known then, it
        is called and its result is a constant (`np.array(3, dtype=np.int32)` is 3); given a
        value the kernel computes, a Python function's body runs on the kernel's values, lowered
        as a @qd.func's (Quadrants runs it on its expressions), and anything else is refused."""
        fn = callee.__func__ if isinstance(callee, types.MethodType) else callee
        python = isinstance(fn, types.FunctionType) and hasattr(fn, "__code__")
        if not callable(callee) or isinstance(callee, (ir.Value, Local, Vec, VecLocal)):
            raise self.not_callable(callee)
        runtime = self.runtime_name(node)
        if runtime is None:
            return self.python_result(callee, node, self.resolve_static(node))
        if not python:
            if runtime.isidentifier():  # held, not computed with: `isinstance(x, tuple)`
                try:
                    return self.python_result(callee, node, self.resolve_static(node))
                except QdError:
                    pass
            name = getattr(callee, "__name__", repr(callee))
            raise self.error(
                f"{name}() is not a Quadrants function: Python calls it while the kernel "
                f"compiles, so its arguments must be known then, and `{runtime}` is a value the "
                "kernel computes. Use the qd.* function of the same name, or a @qd.func.",
                QdTypeError,
            )
        func = _LAMBDAS.get(fn)
        if func is None:
            func = _LAMBDAS[fn] = lang.Func(fn)
        if isinstance(callee, types.MethodType):
            bound = lang.BoundFunc(func, callee.__self__)
            return self.call_bound(BoundMethod(func, self.bound_self(bound)), node)
        return self.inline(func, node)

    def python_result(self, callee: object, node: ast.Call, value: object) -> object:
        """What a Python call made while compiling gives the kernel: a NumPy scalar or 0-d array
        as a number; an array of more dimensions is refused, as in Quadrants."""
        if isinstance(value, np.ndarray):
            if value.dtype == object:
                raise self.not_callable(callee)
            if value.ndim != 0:
                raise self.error(
                    "Only 0-dimensional numpy array can be used to initialize a scalar "
                    f"expression (`{ast.unparse(node)}` gives one of shape {value.shape}).",
                    QuadrantsTypeError,
                )
            value = value[()]
        return value.item() if isinstance(value, np.generic) else value

    def runtime_name(self, node: ast.Call) -> str | None:
        """The first thing among a call's arguments that may be a value the kernel computes (a
        local, a parameter, an element, a call's result): None when all are known while
        compiling (literals, names of Python values and attributes of them)."""
        for arg in [*node.args, *(kw.value for kw in node.keywords)]:
            for n in ast.walk(arg):
                if isinstance(n, (ast.Subscript, ast.Call, ast.NamedExpr, ast.Lambda)):
                    return ast.unparse(n)
                if isinstance(n, ast.Name) and isinstance(
                    self.find_local(n.id), (Local, ir.Value, Vec, VecLocal, GradOf, StructRef)
                ):
                    return n.id
        return None

    def bound_self(self, callee: lang.BoundFunc) -> object:
        """The `self` of a bound func: the kernel's struct argument when it is that object (its
        members are then the launch's, as `self.f(...)` reads them), else the object."""
        obj = callee.__self__
        for value in self.arguments.values():
            if isinstance(value, StructRef) and not value.path and value.value is obj:
                return value
        return obj

    def fill_array(self, target: ast.expr, node: ast.Call) -> None:
        """`x.fill(v)` in a kernel: `for I in qd.grouped(x): x[I] = v`, as Quadrants lowers it
        (a parallel loop where the call is at the kernel's top level), `v` evaluated once."""
        if len(node.args) != 1 or node.keywords:
            raise self.error("fill() takes one value.", QdTypeError)
        frame = self.scope.frames[-1]
        k = sum(name.startswith("__qd_fill") for name in frame)
        value, index, grouped = f"__qd_fill_value{k}", f"__qd_fill_index{k}", "__qd_fill_grouped"
        frame[value], frame[grouped] = self.visit(node.args[0]), lang.BUILTINS["grouped"]
        loop = ast.For(
            target=ast.Name(index, ast.Store()),
            iter=ast.Call(ast.Name(grouped, ast.Load()), [target], []),
            body=[
                ast.Assign(
                    [ast.Subscript(target, ast.Name(index, ast.Load()), ast.Store())],
                    ast.Name(value, ast.Load()),
                )
            ],
            orelse=[],
        )
        for n in ast.walk(loop):
            if "lineno" in n._attributes and not hasattr(n, "lineno"):
                ast.copy_location(n, node)
        self.visit(loop)

    def scalar_field(self, f: FieldBase, node: ast.Call) -> object:
        """`x.get_scalar_field(i, j)` in a kernel: the field of that entry, its indices known when
        the kernel compiles (`compiler/frontend/members.py` makes it `x`'s memory)."""
        if node.keywords:
            raise self.error("get_scalar_field() takes the entry's indices.", QdTypeError)
        runtime = "get_scalar_field() in a kernel takes indices known when it compiles (Python "
        try:
            indices = [self.resolve_static(a) for a in node.args]
        except QdError as e:  # a runtime value: Quadrants' TypeError
            raise self.error(
                f"{runtime}integers, `qd.static` loop variables): {e.message}", QdTypeError
            ) from None
        if not all(isinstance(k, int) and not isinstance(k, bool) for k in indices):
            raise self.error(f"{runtime}integers), not {indices}.", QdTypeError)
        method = getattr(f, "get_scalar_field", None)
        assert method is not None, f  # a vector or matrix field (`visit_Attribute`)
        try:
            member = method(*indices)
        except IndexError as e:
            raise self.error(str(e), QuadrantsIndexError) from None
        except AssertionError as e:
            raise self.error(str(e), QuadrantsCompilationError) from None
        return self.tensor_of(member, f"{ast.unparse(node.func)}{tuple(indices)}")

    def not_callable(self, callee: object) -> QdError:
        return self.error(
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
    @overload
    def unary(self, fn: str, x: ir.Value) -> ir.Value: ...
    @overload
    def unary(self, fn: str, x: object) -> object: ...
    def unary(self, fn: str, x: object) -> object:
        if self.is_vec(x):
            return self.vmap(lambda e: self.unary(fn, e), x)
        v = self.value(x)
        t = dtype_of(v)
        rule = unary_typing(fn)
        if rule is Typing.PREDICATE:
            if not t.is_float:
                return self.const(0, u1)
            return self.emit(ir.Unary, [v], u1, fn=fn)
        if rule in (Typing.REAL, Typing.ROUNDING) and t.is_int and not is_number(x):
            raise self.error(
                f"'{fn}' takes real inputs only, however '{t}' is provided.", QdTypeError
            )
        if rule in (Typing.FLOAT, Typing.REAL, Typing.ROUNDING) and t.is_int:
            if rule is Typing.ROUNDING:
                return v
            v = self.cast(v, self.default_fp)
        return self.emit(ir.Unary, [v], v.type, fn=fn)

    def reduce2(self, op: str, xs: list[object]) -> object:
        if len(xs) < 2:
            raise self.error(f"{op}() needs at least two arguments.", QdTypeError)
        acc = xs[0]
        for x in xs[1:]:
            acc = self.binop(op, acc, x)
        return acc

    def select(self, c: object, a: object, b: object) -> ir.Value:
        va = self.value(a, dtype_of(b) if isinstance(b, ir.Value) else None)
        vb = self.value(b, dtype_of(va))
        t = promote(dtype_of(va), dtype_of(vb))
        return self.emit(ir.Select, [self.truth(c), self.cast(va, t), self.cast(vb, t)], t)
