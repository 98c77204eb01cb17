"""What the frontend's parts share: locals, gradient buffers, scopes, and small helpers on Python
values.

Imported by `frontend.py` and by the mixins that make up the frontend (`calls.py`, `loops.py`,
`conditionals.py`), none of which import `frontend.py`.
"""

from __future__ import annotations

import ast
import math
import operator
import types
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeGuard, cast, overload

from ...core.config import Config
from ...core.types import ArrayType, DType
from .. import ir
from .source import Source

BINOPS = {
    ast.Add: "add",
    ast.Sub: "sub",
    ast.Mult: "mul",
    ast.Div: "truediv",
    ast.FloorDiv: "floordiv",
    ast.Mod: "mod",
    ast.Pow: "pow",
    ast.BitAnd: "and",
    ast.BitOr: "or",
    ast.BitXor: "xor",
    ast.LShift: "shl",
    ast.RShift: "shr",
}
ATOMIC_AUG = {"add", "sub", "and", "or", "xor"}
"""Python operators and the IR `binop` each lowers to; the augmented forms of ATOMIC_AUG on an array
element are atomic."""


class StatementMemo(Protocol):
    """Lowers a top-level statement, or replays what an unchanged one gave before; and the
    statements of a `@qd.func` that such a statement calls (`compiler.cache.stmt_memo.Memo`)."""

    def lower(self, fe: Any, node: ast.stmt) -> None: ...

    def note(self, owner: str, source: Any) -> None: ...

    def nests(self, fe: Any, site: ast.Call) -> bool: ...

    def lower_body(self, fe: Any, stmts: list[ast.stmt]) -> None: ...


@dataclass(frozen=True)
class Lowering:
    """What the pipeline gives the frontend to lower one kernel: the settings and what the kernel
    was called with."""

    config: Config
    globals: dict
    """The kernel's module globals."""
    templates: dict = field(default_factory=dict)
    """The template arguments as given (`qd.static(x is None)` sees a field itself)."""
    return_shapes: tuple[tuple[int, ...], ...] = ()
    """The shape of each kernel return value (`()`: a scalar); empty when all are scalars."""
    calls: frozenset = frozenset()
    """The @qd.real_funcs compiled as calls, not lowered into their caller (they call
    themselves)."""


@dataclass
class Local:
    """A mutable local variable: its storage and the loop nesting where it was created."""

    ref: ir.Value
    parallel_depth: int


class LocalList(list):
    """A Python list of scalars bound to a name in a kernel (`verts = [a, b, c]`): each runtime
    scalar is a Local, so `verts[1] = x` stores at run time (under an `if` too), as Quadrants makes
    each element a variable; reading the name gives the list of their values."""


@dataclass
class GradOf:
    """`x.grad` inside a kernel: the gradient buffer of array parameter `x`."""

    array: ir.Value

    @overload
    @staticmethod
    def unpack(x: ir.Value | GradOf) -> tuple[ir.Value, bool]: ...
    @overload
    @staticmethod
    def unpack(x: object) -> tuple[object, bool]: ...
    @staticmethod
    def unpack(x: object) -> tuple[object, bool]:
        """(array, is it the gradient buffer) of an indexed base: `a` or `a.grad`."""
        return (x.array, True) if isinstance(x, GradOf) else (x, False)


@dataclass
class Scope:
    """What names mean while lowering one function body."""

    source: Source
    name: str
    globals: dict
    frames: list[dict] = field(default_factory=lambda: [{}])
    returned: list = field(default_factory=list)
    is_func: bool = False
    base_depth: tuple[int, int] = (0, 0)
    """(loop depth, runtime-if depth) where a @qd.func body starts."""
    owner: str = ""
    """How this function is reached from the kernel: "" for the kernel, "twice" or "twice/helpers.f"
    for the @qd.funcs it calls. The manifest re-resolves names through this path, never through
    module names."""
    statics: set = field(default_factory=set)
    real: object = None
    """The `RealCall` state of a @qd.real_func body (`real_funcs.py`); None for any other."""
    """Names bound by `n = qd.static(...)`: compile-time values that cannot be assigned."""


class FuncReturn(Exception):
    """Unwinds a `@qd.func` body, or the kernel body, at its `return`."""


class CallsNeeded(Exception):
    """Unwinds the whole kernel: @qd.real_func `func` calls itself (directly or through others), so
    it is lowered again with `func` compiled as a function of its own (`real_calls.py`)."""

    def __init__(self, func: object) -> None:
        super().__init__(func)
        self.func = func


def dtype_of(v: ir.Value) -> DType:
    """The type of the scalars `v` is, holds or points to: a scalar's own type (as `value` gives
    it), the type a local's storage holds, an array's or a tensor's element type."""
    t = v.type
    return t if isinstance(t, DType) else t.dtype


def items_of(x: object) -> list:
    """`list(x)` of a value known at compile time (`qd.static(range(3))`, a tuple): a TypeError
    when it is not iterable."""
    return list(cast("Iterable[object]", x))


def array_type(v: ir.Value) -> ArrayType:
    """The type of an array value (an ndarray parameter, a field's storage)."""
    assert isinstance(v.type, ArrayType), v.type
    return v.type


def int_range(t: DType) -> tuple[int, int]:
    return (
        (-(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1) if t.is_signed else (0, (1 << t.bits) - 1)
    )


def fits(x: int, t: DType) -> bool:
    lo, hi = int_range(t)
    return lo <= x <= hi


def literal_value(node: ast.expr) -> object:
    """The value of an expression of literals alone (`2**70`, `-1`), else None."""
    if not all(
        isinstance(n, (ast.Constant, ast.BinOp, ast.UnaryOp, ast.operator, ast.unaryop))
        for n in ast.walk(node)
    ):
        return None
    try:
        return eval(compile(ast.Expression(node), "<literal>", "eval"), {})  # literals only
    except Exception:  # noqa: BLE001
        return None


def is_number(x: object) -> TypeGuard[int | float]:
    return isinstance(x, (int, float)) and not isinstance(x, ir.Value)


PY_FOLDS = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "truediv": operator.truediv,
    "floordiv": operator.floordiv,
    "mod": operator.mod,
    "pow": operator.pow,
    "and": operator.and_,
    "or": operator.or_,
    "xor": operator.xor,
    "shl": operator.lshift,
    "shr": operator.rshift,
    "min": min,
    "max": max,
    "atan2": math.atan2,
    # `qd.raw_div` and `qd.raw_mod` on two Python numbers fold as Quadrants folds them: `a // b`
    # for two integers (Python's floor, so -7 // 2 is -4, unlike the C division a value gets),
    # else `a / b`; and `a - b * int(float(a) / b)` (C's truncated remainder, -7 -> -1)
    "rawdiv": lambda a, b: a // b if isinstance(a, int) and isinstance(b, int) else a / b,
    "rawmod": lambda a, b: a - b * int(float(a) / b),
}
"""Operators on two Python numbers, evaluated at compile time with Python's own semantics (the
`raw_` ones with Quadrants')."""


def fold_python(op: str, a: object, b: object) -> object:
    """`a op b` on two Python numbers; ZeroDivisionError for a zero divisor."""
    return PY_FOLDS[op](a, b)  # type: ignore[operator]


def dotted(node: ast.expr) -> str | None:
    """`a.b.c` for an attribute chain on a plain name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def describe(x: object) -> str:
    if isinstance(x, ir.Value):
        return f"a {x.type} value"
    if isinstance(x, GradOf):
        return f"the gradient of `{x.array.name}`"
    if isinstance(x, types.ModuleType):
        return f"module `{x.__name__}`"
    return f"`{x!r}`" if not callable(x) else f"`{getattr(x, '__name__', x)}`"
