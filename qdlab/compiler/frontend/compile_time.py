"""Compile-time evaluation: `qd.static(...)`, the names a call or a `with` refers to, and the Python
values a kernel bakes in (each recorded with its fingerprint, for the manifest; an expression that
calls a function, with its result: `evaluations.py`). A part of the frontend's visitor."""

from __future__ import annotations

import ast
import contextlib
import copy
from collections.abc import Iterator

import numpy as np

from qdlab.core import language as lang

from ...core.errors import QdError, QdRuntimeError, QuadrantsCompilationError, QuadrantsSyntaxError
from ...core.types import DType
from .. import ir
from . import evaluations
from .scope import GradOf, Local, dotted, is_number
from .source import closure_values
from .structs import ITEM_VALUE, MEMBER_VALUE, StructRef
from .vectors import Vec
from .views import View, is_view_type

FUNC_VALUE = "__qd_func_value"
"""The name a `@qd.func`'s result goes under in a `qd.static` expression (`static_func_calls`)."""
SUBSTITUTED = (MEMBER_VALUE, FUNC_VALUE, ITEM_VALUE)
"""The prefixes of the names a `qd.static` expression's substituted values go under: not globals,
and recorded where they are read."""


class RuntimeRef:
    """A runtime value (a local, a func parameter, a loop index) named inside `qd.static(...)`:
    the expression may hold it (`qd.static(enumerate((i_x, i_y)))` unrolls over the two values,
    as in Quadrants) but not compute with it, since its value is not known while compiling."""

    __slots__ = ("name", "value")

    def __init__(self, name: str, value: object) -> None:
        self.name, self.value = name, value

    def _refuse(self, *_: object) -> object:
        raise TypeError(f"`{self.name}` is a runtime value, not known while compiling")

    __bool__ = __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _refuse  # type: ignore[assignment]
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __index__ = _refuse  # type: ignore[assignment]
    __int__ = __float__ = __len__ = __iter__ = __getitem__ = _refuse  # type: ignore[assignment]
    __hash__ = object.__hash__


def sequence_binop(op: ast.operator, left: object, right: object) -> list | tuple | None:
    """Python lists and tuples in a kernel combine as in Python (`[0.0] * 12`, `t + (k,)`), as in
    Quadrants, whose list literals stay Python lists; None when the operands are not that."""
    seq = (list, tuple)
    if (isinstance(op, ast.Add) and isinstance(left, seq) and isinstance(right, seq)) or (
        isinstance(op, ast.Mult)
        and (isinstance(left, seq) or isinstance(right, seq))
        and any(type(x) is int for x in (left, right))
    ):
        try:
            return left + right if isinstance(op, ast.Add) else left * right  # type: ignore[operator]
        except TypeError:
            return None  # a list and a tuple: the vector rules
    return None


def held(x: object) -> object:
    """`x` with each RuntimeRef in it (at the top, or in a tuple or list) replaced by its value."""
    if isinstance(x, RuntimeRef):
        return x.value
    if type(x) in (tuple, list):
        return type(x)(held(e) for e in x)  # type: ignore[call-arg]
    return x


class CompileTime:
    """Mixed into `Frontend`; uses its `scope`, `record`, `deps`, `lookup`, `find_local`,
    `check_pure` and `error`."""

    def python_env(self) -> dict:
        env = dict(self.scope.globals)
        env.update(closure_values(self.scope.source.fn))
        for frame in self.scope.frames:
            env.update(
                {k: v for k, v in frame.items() if not isinstance(v, (Local, ir.Value, GradOf))}
            )
        if not self.scope.is_func:  # a field template argument is the field here, not its array
            given = self.lowering.templates
            env.update({k: given[k] for k in self.scope.frames[0] if k in given and k not in env})
        return env

    @contextlib.contextmanager
    def static_scope(self) -> Iterator[None]:
        """Evaluating the argument of `qd.static(...)` (a static `if` or `for`, a comprehension's
        iterable and conditions), where Quadrants' purity rule only warns (`check_pure`)."""
        self.static_depth += 1
        try:
            yield
        finally:
            self.static_depth -= 1

    def resolve_static(self, node: ast.expr, *, annotation: bool = False) -> object:
        """The value of `node`, evaluated by Python while compiling. Its reads go by the purity
        rule, as the reference builds them, except in an `annotation` of a func's parameter,
        which the reference evaluates as Python does."""
        self.check_identity(node)
        env = self.python_env()
        node = written = self.array_presence(node)
        node = self.static_func_calls(node, env)
        node = self.static_members(node, env)  # struct members: read (and recorded) here
        bound = {k for frame in self.scope.frames for k in frame}
        if self.pure and not annotation:
            self.check_pure_reads(node, env, bound)
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and n.id in bound and n.id not in env:
                b = self.find_local(n.id)
                if isinstance(b, (Local, ir.Value)):  # held, not computed with (RuntimeRef)
                    env[n.id] = RuntimeRef(n.id, self.visit(ast.copy_location(ast.Name(n.id), n)))
        calls = evaluations.calls_code(node, env)
        if not calls:  # what it reads decides its value: each read is recorded
            self.record_reads(node, env, bound)
        try:
            got = eval(compile(ast.Expression(node), "<qd.static>", "eval"), env)
            if isinstance(got, RuntimeRef):  # `qd.static(x)`, `static_assert(x)`: x is not known
                got._refuse()
            value = held(got)
        except QdError as e:
            if e.loc is None:  # a library's check (`qd.algorithms`' capacity): at this line
                raise self.error(e.message, type(e)) from None
            raise
        except Exception as e:  # noqa: BLE001 - whatever the user's expression raises is reported
            raise self.error(
                f"cannot evaluate `{ast.unparse(node)}` at compile time ({e}); qd.static arguments "
                "must be compile-time constants: literals, template arguments or Python globals.",
                QuadrantsCompilationError,
            ) from None
        if calls:  # the functions it calls may read anything: its value is checked again
            self.record_evaluation(written, env, bound, value)
        return value

    def static_func_calls(self, node: ast.expr, env: dict) -> ast.expr:
        """`node` with each call of a `@qd.func` in it lowered here and replaced by its result,
        bound in `env` (`qd.static(qd.grouped(self.stencil_range()))`, where the func returns a
        `qd.ndrange`), as Quadrants builds the argument of `qd.static` like any expression; the
        result must be known while compiling. The func's source and reads are recorded as its
        inlining records them. Returns `node` itself when it calls no func."""
        fe = self

        class Substitute(ast.NodeTransformer):
            def visit_Call(self, n: ast.Call) -> ast.AST:
                if not isinstance(peek(n.func), (lang.Func, lang.BoundFunc)):
                    return self.generic_visit(n)
                value = fe.visit(n)
                if isinstance(value, (ir.Value, Local, Vec, GradOf)):
                    raise fe.error(
                        f"`{ast.unparse(n)}` returns a value computed by the kernel; qd.static "
                        "needs one known while compiling.",
                        QuadrantsCompilationError,
                    )
                name = f"{FUNC_VALUE}{len(env)}"
                env[name] = value
                return ast.copy_location(ast.Name(name, ast.Load()), n)

        def peek(func: ast.expr) -> object:  # the callee, looked up with no read recorded
            path = dotted(func)
            if path is None:
                return None
            head, *attrs = path.split(".")
            x = env.get(head)
            x = x.value if isinstance(x, StructRef) else x
            try:
                for a in attrs:
                    x = getattr(x, a)
            except Exception:  # noqa: BLE001 - not found, or a property that raised: not a func
                return None
            return x

        if not any(isinstance(n, ast.Call) for n in ast.walk(node)):
            return node
        return Substitute().visit(copy.deepcopy(node))

    def record_reads(self, node: ast.expr, env: dict, bound: set[str]) -> None:
        """Each global, closure value and attribute chain from one that `node` reads."""
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and n.id not in bound and n.id in env:
                if not n.id.startswith(SUBSTITUTED):  # recorded where they are read
                    self.record(n.id, env[n.id])
            elif (
                isinstance(n, ast.Attribute)
                and (path := dotted(n))
                and path.split(".")[0] not in bound
            ):
                # `consts.N`: the manifest names a module, no more (one that fails, the
                with contextlib.suppress(Exception):  # evaluation reports)
                    self.record(path, eval(path, env))

    def check_pure_reads(self, node: ast.expr, env: dict, bound: set[str]) -> None:
        """Each global or closure value `node` names, and each attribute along a chain from one
        (`cfg.size`), by `check_pure`."""
        for n in ast.walk(node):
            if isinstance(n, ast.Name) and n.id not in bound and n.id in env:
                if not n.id.startswith(SUBSTITUTED):
                    self.check_pure(n.id, env[n.id])
            elif isinstance(n, ast.Attribute) and (path := dotted(n)):
                head, *attrs = path.split(".")
                if head in bound or head not in env or head.startswith(SUBSTITUTED):
                    continue
                try:
                    base = env[head]
                    for a in attrs[:-1]:
                        base = getattr(base, a)
                    value = getattr(base, attrs[-1])
                except Exception:  # noqa: BLE001, S112 - the evaluation reports what it cannot read
                    continue
                self.check_pure(n.attr, value, base, head)

    def record_evaluation(self, node: ast.expr, env: dict, bound: set[str], value: object) -> None:
        """`node` and its result, for the check to evaluate it again (`evaluations.py`); UNKNOWN
        when it names a local the check could not rebuild."""
        closure = closure_values(self.scope.source.fn)
        local = {
            n.id
            for n in ast.walk(node)
            if isinstance(n, ast.Name)
            and n.id in env
            and (n.id in bound or (n.id not in self.scope.globals and n.id not in closure))
        }
        templates = None if self.scope.is_func else self.lowering.templates
        name = evaluations.record(node, env, local, templates)
        if name is None:
            self.deps.add((self.scope.owner, *evaluations.unknown()))
        else:
            self.record(name, value)

    def check_identity(self, node: ast.expr) -> None:
        """`is` / `is not` inside `qd.static` may only compare a kernel's own template or array
        parameter with None, as Quadrants allows: anything else (a runtime scalar, which Python
        would silently find `is not None`, a local, a global, a func's parameter) is refused."""
        for n in ast.walk(node):
            if not isinstance(n, ast.Compare):
                continue
            operands = (n.left, *n.comparators)
            for i, op in enumerate(n.ops):
                if isinstance(op, (ast.Is, ast.IsNot)) and not self.presence_operands(
                    *operands[i : i + 2]
                ):
                    name = "is" if isinstance(op, ast.Is) else "is not"
                    self.loc = self.scope.source.loc(n, self.scope.name)
                    raise self.error(
                        f'Operator "{name}" inside `qd.static` compares a direct kernel argument '
                        "against `None`. The argument must be annotated `qd.Tensor | None`, "
                        "`qd.types.Template | None`, or `qd.types.NDArray[...] | None`.",
                        QuadrantsSyntaxError,
                    )

    def presence_operands(self, left: ast.expr, right: ast.expr) -> bool:
        """One side is None and the other names a template or array parameter of the kernel."""
        if isinstance(left, ast.Constant) and left.value is None:
            left, right = right, left
        if not (isinstance(right, ast.Constant) and right.value is None):
            return False
        if self.scope.is_func or not isinstance(left, ast.Name):
            return False
        name = left.id
        if any(name in frame for frame in self.scope.frames[1:]):
            return False  # a local of an inner block with the parameter's name
        if name not in {a.arg for a in self.scope.source.tree.args.args}:
            return False
        if name in self.lowering.templates:
            return True
        x = GradOf.unpack(self.scope.frames[0].get(name))[0]
        return isinstance(x, ir.Value) and ir.is_array(x)

    def array_presence(self, node: ast.expr) -> ast.expr:
        """`x is None` / `x is not None` on an array the kernel was given (a `qd.Tensor`
        parameter holding an ndarray or a field) is known while compiling: False / True. (A
        `qd.Tensor` given None is a compile-time None, which Python compares itself.)"""
        frontend = self

        class Presence(ast.NodeTransformer):
            def visit_Compare(self, n: ast.Compare) -> ast.AST:
                self.generic_visit(n)
                if len(n.ops) != 1 or not isinstance(n.ops[0], (ast.Is, ast.IsNot)):
                    return n
                left, right = n.left, n.comparators[0]
                if isinstance(left, ast.Constant) and left.value is None:
                    left, right = right, left
                if not (isinstance(right, ast.Constant) and right.value is None):
                    return n
                if not isinstance(left, ast.Name):
                    return n
                x = GradOf.unpack(frontend.find_local(left.id))[0]
                if not (isinstance(x, ir.Value) and ir.is_array(x)):
                    return n
                return ast.copy_location(ast.Constant(isinstance(n.ops[0], ast.IsNot)), n)

        if not any(
            isinstance(n, ast.Compare) and isinstance(n.ops[0], (ast.Is, ast.IsNot))
            for n in ast.walk(node)
        ):
            return node
        return ast.fix_missing_locations(Presence().visit(copy.deepcopy(node)))  # not the source's

    def static_condition(self, test: ast.expr) -> bool | None:
        if isinstance(test, ast.Call) and self.resolve_callee(test.func) is lang.static:
            with self.static_scope():
                value = self.resolve_static(test.args[0])
            if isinstance(value, (ir.Value, Local, GradOf)):
                raise self.error(
                    f"`{ast.unparse(test.args[0])}` is a runtime value; a qd.static condition must "
                    "be known while compiling (use a plain `if` for a runtime one).",
                    QuadrantsCompilationError,
                )
            return bool(value)
        return None

    def resolve_callee(self, func: ast.expr) -> object:
        if isinstance(func, ast.Name):
            b = self.find_local(func.id)
            if b is not None:
                return b
            try:
                return self.lookup(func.id)
            except QdError:
                return None
        if isinstance(func, ast.Call) and self.resolve_callee(func.func) is lang.func:
            return self.resolve_static(func)  # `qd.func(f)(x)`: f made a @qd.func while compiling
        if isinstance(func, ast.Attribute):
            base = self.resolve_callee(func.value)
            if isinstance(base, StructRef) and is_view_type(base.value):
                base = self.view_of(base)
            if isinstance(base, View):
                return self.view_attribute(base, func.attr)
            if isinstance(base, StructRef):
                return self.member(base, func.attr)
            return (
                getattr(base, func.attr, None)
                if base is not None and not isinstance(base, ir.Value)
                else None
            )
        return None

    def negative_power(self, exponent: int) -> DType:
        """The type of `int ** negative constant`: `default_fp`, as the reference computes it;
        under `debug=True` it is an error, as the reference checks it."""
        if self.config.debug:
            raise self.error(
                f"Negative exponent in pow(int, int) is not allowed: the exponent is {exponent}.",
                QdRuntimeError,
            )
        return self.default_fp

    def is_object(self, a: object, b: object) -> bool:
        """Neither is a value of the kernel (`precision == qd.i32` with a template dtype): `==`
        compares them while compiling."""
        return not any(
            isinstance(x, (ir.Value, GradOf, lang.Matrix)) or self.is_vec(x) for x in (a, b)
        ) and not any(is_number(x) or isinstance(x, np.generic) for x in (a, b))
