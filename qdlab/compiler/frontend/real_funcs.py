"""The body of a `@qd.real_func` lowered at its call, with Quadrants' real-call semantics: loops
that run serially, `return` anywhere, `qd.ref` parameters; and `return` in a `@qd.func`. A part of
the frontend's visitor.

A real_func whose only `return` is its last statement is lowered like a `@qd.func` with its loops
serial. One with a `return` elsewhere runs inside a loop that runs once: each `return` stores its
value in the result's local, sets a `returned` flag and breaks; a loop of the body that holds a
`return` is followed by `if returned: break`, so the break reaches the loop that runs once. Each
call is lowered in its caller (its reads and writes of arrays are the caller's, to the split and the
gate, and its source is part of the caller's key); a real_func that calls itself is compiled as a
real call instead (`real_calls.py`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from qdlab.core import language as lang

from ...core.errors import QdError, QdTypeError
from ...core.types import ArrayType, DType, LocalType, i32, u1
from .. import ir
from .real_calls import RealCalls
from .scope import FuncReturn, GradOf, Local, dtype_of
from .source import Source


@dataclass
class RealCall:
    """The state of one real_func call being lowered."""

    func: lang.RealFunc
    annotation: object
    """Its return annotation (None when it has none)."""
    result: object = None
    """The result's local (a scalar's alloca or a vector's local) when returns are stored."""
    returned: ir.Value | None = None
    """The `returned` flag's alloca, in the mode where a return stores and breaks."""
    loop_depth: int = 0
    """The loop depth of the loop that runs once."""
    returns: int = 0
    """How many `return`s of the body have been lowered (a loop whose count changed holds one)."""
    immutable: dict = field(default_factory=dict)
    """Its scalar parameters passed by value, and the values they are bound to (Quadrants refuses
    an assignment to one)."""


def returns_of(body: list[ast.stmt]) -> list[ast.Return]:
    """The `return` statements of a function body, not of functions defined inside it."""
    out: list[ast.Return] = []
    todo: list[ast.AST] = list(body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Return):
            out.append(node)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))
    return out


class RealFuncs(RealCalls):
    """Mixed into `Frontend`; uses its `visit`, `value`, `cast`, `emit`, `const`, `error`,
    `scope`, `block`, `loop_depth`, `top_level` and the vector helpers."""

    def real_arg(self, name: str, annotation: object, x: object) -> tuple[bool, object]:
        """(is it bound by reference, the argument): a `qd.ref` parameter is the caller's local
        itself, any other takes the value of a local passed by name."""
        if isinstance(annotation, lang.Ref):
            if not isinstance(x, Local):
                raise self.error(
                    f"Argument {name} is a qd.ref({annotation.dtype}) parameter: pass a local "
                    "variable of the caller by its name.",
                    QdTypeError,
                )
            return True, x
        if isinstance(x, Local):
            x = self.emit(ir.LocalLoad, [x.ref], dtype_of(x.ref), name)
        if isinstance(annotation, lang.ArrayAnnotation):
            array = GradOf.unpack(x)[0]
            if not (isinstance(array, ir.Value) and isinstance(array.type, ArrayType)):
                raise self.error(
                    f"Expected ndarray in the kernel argument for argument {name}, got "
                    f"{type(x).__name__}: a @qd.real_func takes an ndarray that is a parameter of "
                    "the kernel.",
                    QdTypeError,
                )
        return False, x

    def real_body(self, func: lang.RealFunc, source: Source, annotations: dict) -> None:
        """Lower the body of real_func `func` in the current scope (its parameters bound)."""
        body = source.tree.body
        ann = annotations.get("return")
        state = RealCall(func, ann)
        state.immutable = {
            k: v
            for k, v in self.scope.frames[0].items()
            if isinstance(annotations.get(k), DType) and isinstance(v, ir.Value)
        }
        stack = self.__dict__.setdefault("real_stack", [])
        stack.append(func)
        self.scope.real = state
        outer_top = self.top_level
        self.top_level = False  # its loops run serially, as in a real call
        try:
            returns = returns_of(body)
            if not returns or returns == [body[-1]]:
                for s in body:
                    self.visit(s)
                return
            self.stored_returns(state, body)
        finally:
            stack.pop()
            self.top_level = outer_top

    def stored_returns(self, state: RealCall, body: list[ast.stmt]) -> None:
        """The mode where each `return` stores its value and breaks the loop that runs once."""
        ann = state.annotation
        if isinstance(ann, DType):
            state.result = self.emit(ir.Alloca, (), LocalType(ann), "_ret")
            self.emit(ir.LocalStore, [state.result, self.const(0, ann)])
        elif isinstance(ann, lang.MatrixType):
            state.result = self.new_vec_local("_ret", self.from_type(ann, [0]))
        elif ann is not None:
            raise self.error(
                f"@qd.real_func `{state.func.__name__}` returns a {ann!r} from a `return` that is "
                "not its last statement; qdlab supports that for scalar, vector and matrix "
                "results: assign to a local and return it at the end."
            )
        state.returned = self.emit(ir.Alloca, (), LocalType(i32), "_returned")
        self.emit(ir.LocalStore, [state.returned, self.const(0, i32)])
        once = ir.Block()
        self.block.append(ir.Loop([], None, {"real_func": state.func.__name__}, [once], self.loc))
        outer = self.block
        self.block = once
        self.loop_depth += 1
        state.loop_depth = self.loop_depth
        try:
            for s in body:
                self.visit(s)
            self.emit(ir.Break)
        finally:
            self.loop_depth -= 1
            self.block = outer
        if isinstance(ann, DType):
            self.scope.returned.append(self.emit(ir.LocalLoad, [state.result], ann, "_ret"))
        elif ann is not None:
            self.scope.returned.append(self.load_vec_local(state.result))

    def check_not_a_parameter(self, name: str, existing: object) -> None:
        """An assignment to a kernel's parameter (a template one too), or a real_func's scalar
        one, is refused, in Quadrants' words; a @qd.func's parameters are its own copies."""
        state: RealCall | None = getattr(self.scope, "real", None)
        if state is not None and existing is not None and state.immutable.get(name) is existing:
            raise self.immutable_argument(name)
        frames = self.scope.frames
        if (
            not self.scope.is_func
            and name in getattr(self, "arguments", ())
            and name in frames[0]
            and not any(name in f for f in frames[1:])
        ):
            raise self.immutable_argument(name)

    def immutable_argument(self, name: str) -> QdError:
        return self.error(
            f'Kernel argument "{name}" is immutable in the kernel. If you want to change its '
            f"value, please create a new variable (`{name}_ = {name}`)."
        )

    def func_return(self, node: ast.Return) -> None:
        """`return` in a @qd.func or @qd.real_func body."""
        state: RealCall | None = getattr(self.scope, "real", None)
        if state is not None and node.value is not None and state.annotation is None:
            raise self.error(
                "A function with a return value must be annotated with a return type, e.g. "
                "def func() -> qd.f32"
            )
        if state is not None and state.returned is not None:
            if node.value is not None:
                value = self.visit(node.value)
                if isinstance(state.annotation, DType):
                    t = state.annotation
                    self.emit(ir.LocalStore, [state.result, self.cast(self.value(value, t), t)])
                else:
                    vec = self.from_type(state.annotation, [value])  # type: ignore[arg-type]
                    self.store_vec_local(state.result, vec, "the result")
            self.emit(ir.LocalStore, [state.returned, self.const(1, i32)])
            state.returns += 1
            self.emit(ir.Break)
            return
        if (self.loop_depth, self.in_runtime_if) != self.scope.base_depth or len(
            self.scope.frames
        ) > 1:
            raise self.error(
                "Return inside non-static if/for is not supported in a @qd.func: assign to a "
                "local and return it at the end (or make it a @qd.real_func)."
            )
        self.scope.returned.append(self.visit(node.value) if node.value is not None else None)
        raise FuncReturn()

    def real_returns(self) -> int | None:
        """How many stored returns the current real_func body has lowered (None outside one)."""
        state: RealCall | None = getattr(self.scope, "real", None)
        return state.returns if state is not None and state.returned is not None else None

    def after_loop(self, before: int | None) -> None:
        """After a loop of a real_func body: when it held a `return`, leave the enclosing loop too
        once it has returned."""
        state: RealCall | None = getattr(self.scope, "real", None)
        if before is None or state is None or state.returns == before:
            return
        flag = self.emit(ir.LocalLoad, [state.returned], i32, "_returned")
        done = self.emit(ir.Cmp, [flag, self.const(0, i32)], u1, pred="ne")
        leave = ir.Block()
        leave.append(ir.Break([], None, {}, None, self.loc))
        self.block.append(ir.If([done], None, {}, [leave, ir.Block()], self.loc))
