"""Python AST to typed IR: one whitelisting visitor.

There is one `visit_*` per construct the kernel language accepts; anything else reaches
`generic_visit`, which refuses it by name. The `visit` override records the node being lowered, so
every error points at the user's line. The statements that are not assignments or loops (`if`,
`with`, `return`, `assert`, an expression) and the plain expressions are lowered here; the rest by
mixins, each a file of its own, named for the construct: assignments (`assignments.py`), calls
(`calls.py`, with the built-ins' tables in `builtins.py`), loops (`loops.py`), conditional
expressions (`conditionals.py`), `print` (`printing.py`), vectors and matrices (`vectors.py`,
`vector_index.py`, `vector_ops.py`), structs, fields and compile-time evaluation
(`compile_time.py`); what they share is in `scope.py`. Set `QDLAB_DEBUG_FRONTEND=1` to see the raw
exception behind a user-facing error.
"""

from __future__ import annotations

import ast
import enum
import math
import operator
import os
import sys
import types
import warnings
from collections.abc import Sequence
from typing import overload

import numpy as np

from qdlab.core import language as lang

from ...core.config import Config
from ...core.errors import (
    QdError,
    QdNameError,
    QdSyntaxError,
    QdTypeError,
    QuadrantsCompilationError,
    SourceLoc,
)
from ...core.fields import FieldBase
from ...core.types import DType, TensorType, Type, f16, f32, i32, promote, u1
from .. import ir
from .assignments import Assignments
from .calls import ArrayFill, Calls, ScalarFieldOf
from .compile_time import CompileTime, sequence_binop
from .conditionals import Conditionals
from .fields import Fields, dep_fingerprint
from .graphs import Checkpoints, Graphs
from .inlining import Inlining
from .loops import Loops
from .printing import Prints
from .real_funcs import RealFuncs
from .scope import (
    BINOPS,
    CallsNeeded,
    FuncReturn,
    GradOf,
    Local,
    LocalList,
    Lowering,
    Scope,
    StatementMemo,
    array_type,
    describe,
    dotted,
    dtype_of,
    fits,
    fold_python,
    int_range,
    is_number,
    literal_value,
)
from .source import MISSING, Source, resolve_name
from .sparse import Sparse
from .struct_fields import StructFieldBase, any_struct_field
from .struct_values import STRUCTS, StructParts
from .structs import TEMPLATE, BoundMethod, StructRef
from .vector_index import VectorIndexing
from .vector_ops import VectorOps
from .vectors import ElementRef, Vec, VecLocal, Vectors
from .views import View, Views, is_view_type

BITWISE = {"and": "&", "or": "|", "xor": "^", "shl": "<<", "shr": ">>"}
"""The bitwise binary ops, by the operator Python writes them with (in the errors)."""
MAX_DEPTH = 8000
"""Python frames the frontend may use while lowering a kernel: enough for the longest sum CPython
itself compiles (about 2,600 terms; its default limit of 1,000 frames stops the visitor at about
300)."""
REFUSED = {
    "Try": "`try`",
    "With": "`with`",
    "Lambda": "`lambda`",
    "ClassDef": "a class definition",
    "AsyncFunctionDef": "a nested function",
    "Yield": "`yield`",
    "SetComp": "a set comprehension",
    "GeneratorExp": "a generator expression",
    "Global": "`global`",
    "Nonlocal": "`nonlocal`",
    "Delete": "`del`",
    "Raise": "`raise`",
    "Import": "`import`",
    "ImportFrom": "`import`",
    "Set": "a set",
    "Await": "`await`",
    "Starred": "`*` unpacking",
    "JoinedStr": "an f-string outside print()",
    "Match": "`match`",
}

QDLAB_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
"""qdlab's own package folder: its functions inlined into kernels (`qd.svd`) are never impure."""


def is_library(x: object) -> bool:
    """A module or class of the library itself (qdlab, or `quadrants` where that name is bound to
    it): its attributes (`qd.math.pi`) are constants of the language, not a program's state."""
    if isinstance(x, types.ModuleType):
        name = x.__name__
    elif isinstance(x, type):
        name = x.__module__ or ""
    else:
        return False
    return name.split(".")[0] in ("qdlab", "quadrants")


class Frontend(
    Assignments,
    Calls,
    Loops,
    Graphs,
    Conditionals,
    CompileTime,
    Prints,
    Inlining,
    RealFuncs,
    Vectors,
    VectorIndexing,
    VectorOps,
    StructParts,
    Fields,
    Sparse,
    Views,
    ast.NodeVisitor,
):
    """Lowers one kernel (and the `@qd.func`s it calls, inlined) to a `ir.Kernel`."""

    def __init__(self, kernel: ir.Kernel, source: Source, lowering: Lowering) -> None:
        self.kernel = kernel
        self.lowering = lowering
        self.config: Config = lowering.config
        self.default_fp: DType = lowering.config.default_fp
        self.default_ip: DType = lowering.config.default_ip
        self.block = kernel.body
        self.stopped_grads: dict[ir.Block, set[ir.Value]] = {}
        """The fields `qd.stop_grad` named in each block: once the kernel is lowered, their reads
        in that block and the blocks nested in it are marked (`mark_stopped`)."""
        self.scope = Scope(source, kernel.name, lowering.globals)
        self.loc: SourceLoc | None = None
        self.loop_depth = 0  # runtime loops enclosing the current statement
        self.for_depth = 0  # runtime `for` loops (not `while`) enclosing it
        self.parallel_depth = 0  # 1 inside a parallel for's body
        self.top_level = True  # statement is directly in the kernel body
        self.graph = False  # `@qd.kernel(graph=True)`, which refuses `qd.stream_parallel()`
        self.in_stream = False  # in a `with qd.stream_parallel():` block, which cannot nest
        self.pure = False  # `@qd.kernel(fastcache=True)`: reads no global number or field
        self.static_depth = 0  # inside `qd.static(...)`, where `check_pure` only warns
        self.do_while_depth = 0  # `qd.graph.do_while` loops around the statement
        self.graph_region = 0  # in a `qd.graph.parallel_context()` region (1), a section (2)
        self.checkpoints: Checkpoints | None = None  # a `checkpoints=True` kernel's stages
        self.call_sites: list[SourceLoc | None] = []
        """The definition of each `@qd.func` being inlined, outermost first (`views.py` shows
        them)."""
        self.in_runtime_if = 0
        self.serialize_next = False
        self.loop_name: str | None = None
        self.block_dim: int | None = None
        self.sparse_guard: tuple | None = None  # set here: the statement memo compares `vars()`
        self.activating = False
        self.known_active: tuple = ()
        self.struct_for = False
        self.random_sites = 0
        self.inline_depth = 0  # set here, as every attribute: the statement memo compares `vars()`
        self.static_loops: list[tuple[int, int]] = []  # (loop depth, runtime ifs) of qd.static fors
        self.memo: StatementMemo | None = None
        """Replays the kernel's unchanged top-level statements (`lower_kernel`)."""
        self.deps: set[tuple[str, str, str]] = set()
        """(owner path, name, fingerprint) of every global or closure value read: the manifest
        checks them."""

    # -- infrastructure ----------------------------------------------------------------------------
    def visit(self, node: ast.AST) -> object:
        if isinstance(node, ast.stmt) and (any_struct_field() or lang.MatrixType.unpacked_made):
            node = self.unstruct(node)
        outer = self.loc
        if hasattr(node, "lineno") and not self.scope.source.library:
            self.loc = self.scope.source.loc(node, self.scope.name)
        try:
            return super().visit(node)
        except QdError:
            raise
        except (FuncReturn, CallsNeeded):
            raise
        except RecursionError as e:
            if not hasattr(e, "loc"):
                setattr(e, "loc", self.loc)  # noqa: B010 - the innermost line reached; no call here
            raise
        except Exception as e:
            if os.environ.get("QDLAB_DEBUG_FRONTEND") == "1":
                raise
            raise QuadrantsCompilationError(
                f"internal error while compiling this line ({type(e).__name__}: {e})", self.loc
            ) from None
        finally:
            self.loc = outer

    def error(self, message: str, cls: type[QdError] = QdSyntaxError) -> QdError:
        return cls(message, self.loc)

    def generic_visit(self, node: ast.AST) -> object:
        kind = type(node).__name__
        what = REFUSED.get(kind, f"`{kind}`")
        raise self.error(f'Unsupported node "{kind}": {what} is not supported in a kernel.')

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        where = "qd.func" if self.scope.is_func else "qd.kernel"
        raise self.error(
            f"Function definition is not allowed in '{where}'. Define `{node.name}` outside, "
            "as a @qd.func."
        )

    @overload
    def emit(
        self,
        op_cls: type[ir.Op],
        operands: Sequence[ir.Value] = (),
        result: None = None,
        name: str = "",
        regions: list[ir.Block] | None = None,
        **attrs: object,
    ) -> None: ...
    @overload
    def emit(
        self,
        op_cls: type[ir.Op],
        operands: Sequence[ir.Value],
        result: Type,
        name: str = "",
        regions: list[ir.Block] | None = None,
        **attrs: object,
    ) -> ir.Value: ...
    def emit(
        self,
        op_cls: type[ir.Op],
        operands: Sequence[ir.Value] = (),
        result: Type | None = None,
        name: str = "",
        regions: list[ir.Block] | None = None,
        **attrs: object,
    ) -> ir.Value | None:
        """Appends an op to the current block; its result, for an op that has one (`result` is its
        type)."""
        if op_cls is ir.Store or op_cls is ir.Atomic or op_cls is ir.AtomicCas:
            self.activate_before(op_cls, list(operands))  # a sparse field's write activates
        elif op_cls is ir.Call:
            self.known_active = ()  # a real function might deactivate
        op = op_cls(list(operands), result, attrs, regions, self.loc, name)
        self.block.append(op)
        return op.result

    def const(self, value: float, dtype: DType) -> ir.Value:
        if dtype.is_float:
            value = float(value)
        elif dtype == u1:
            value = int(bool(value))
        else:
            value = int(value)
        return self.emit(ir.Const, (), dtype, value=value)

    # -- values ------------------------------------------------------------------------------------
    def value(self, x: object, like: DType | None = None, exact: bool = False) -> ir.Value:
        """Turn a lowered expression into an IR value; Python numbers become constants.

        As in Quadrants, an integer literal is `default_ip` (one that does not fit it is an error)
        and a float literal is `default_fp`, whatever the other operand is; `like` only types
        literals where a store or a declared type fixes the target type (one that does not fit it
        is `default_ip`, and the caller's cast wraps it, as Quadrants does). With `exact`
        (`qd.u8(300)`), a literal takes `like` and must fit it.
        """
        if isinstance(x, np.generic) or (isinstance(x, np.ndarray) and x.shape == ()):
            x = x.item()  # a NumPy scalar (a global, a template argument) is a Python number here
        if isinstance(x, ir.Value):
            if not isinstance(x.type, DType):
                raise self.error(
                    "unsupported operand type: an array cannot be used as a number here; index "
                    "it, e.g. `a[i]`.",
                    QdTypeError,
                )
            return x
        if isinstance(x, (Vec, lang.Matrix)):
            raise self.error(
                f"a {self.vec_of(x)} cannot be used as a scalar here; take an entry (`v[0]`, "
                "`v.x`) or reduce it (`v.sum()`, `v.norm()`).",
                QdTypeError,
            )
        if isinstance(x, bool):
            return self.const(x, u1)
        if isinstance(x, int):
            if exact and like is not None and like.is_int and like != u1:
                t = like
            elif like is not None and like.is_int and like != u1 and fits(x, like):
                t = like if fits(x, self.default_ip) else self.default_ip
            else:
                t = self.default_ip
            if not fits(x, t):
                raise self.literal_error(x, t, exact and t == like)
            return self.const(x, t)
        if isinstance(x, float):
            return self.const(x, like if like is not None and like.is_float else self.default_fp)
        raise self.error(f"{describe(x)} cannot be used as a value in a kernel.", QdTypeError)

    def literal_error(self, x: int, t: DType, exact: bool) -> QdError:
        """`x` does not fit `t`; the caret goes under the constant expression on this line that
        gives `x`."""
        lo, hi = int_range(t)
        if exact:
            message = (
                f"Integer literal {x} exceeded the range of specified dtype: {t} ({lo} to {hi})."
            )
        else:
            message = (
                f"Integer literal {x} exceeded the range of default_ip: {t} ({lo} to {hi}), please "
                f"specify the dtype via e.g. `qd.{'u64' if x > 0 else 'i64'}({x})` or set a "
                "different `default_ip` in `qd.init()`."
            )
        loc = self.loc
        for n in ast.walk(self.scope.source.tree):
            if (
                isinstance(n, (ast.Constant, ast.BinOp, ast.UnaryOp))
                and getattr(n, "lineno", 0)
                and loc
                and self.scope.source.loc(n, self.scope.name).lineno == loc.lineno
                and literal_value(n) == x
            ):
                loc = self.scope.source.loc(n, self.scope.name)
                break
        return QdTypeError(message, loc)

    def cast(self, v: ir.Value, to: DType) -> ir.Value:
        if v.type == to:
            return v
        return self.emit(ir.Cast, [v], to, v.name)

    def truth(self, x: object) -> ir.Value:
        v = self.value(x)
        if v.type == u1:
            return v
        return self.emit(ir.Cmp, [v, self.const(0, dtype_of(v))], u1, pred="ne")

    @overload
    def binop(self, op: str, a: ir.Value, b: ir.Value | float) -> ir.Value: ...
    @overload
    def binop(self, op: str, a: float, b: ir.Value) -> ir.Value: ...
    @overload
    def binop(self, op: str, a: object, b: object) -> object: ...
    def binop(self, op: str, a: object, b: object) -> object:
        """`a op b`: an op on two scalars (a value when either is one), entry by entry on vectors,
        folded on two Python numbers, or a concatenation of two Python lists or tuples."""
        if op == "add" and type(a) is type(b) and isinstance(a, (list, tuple)):
            return a + b  # Python lists and tuples concatenate while compiling
        if self.is_vec(a) or self.is_vec(b):
            return self.vec_binop(op, a, b)
        if is_number(a) and is_number(b):
            return self.fold(op, a, b)
        va, vb = self.value(a), self.value(b)
        ta, tb = dtype_of(va), dtype_of(vb)
        t = promote(ta, tb)
        if op in BITWISE and t.is_float:
            raise self.error(
                f"unsupported operand type(s) for '{BITWISE[op]}': '{ta}' and '{tb}' (bitwise "
                "operators need integer operands).",
                QdTypeError,
            )
        if op == "truediv":  # as Quadrants: an integer operand is taken as default_fp first
            t = promote(*(x if x.is_float else self.default_fp for x in (ta, tb)))
        if op == "atan2":
            t = t if t.is_float else self.default_fp
            t = f32 if t == f16 else t
        if op == "pow" and t.is_int and isinstance(b, int) and b < 0:
            t = self.negative_power(b)
        if op in ("shl", "shr"):
            t = ta
        powi = op == "pow" and t.is_float and not tb.is_float
        return self.emit(ir.BinOp, [self.cast(va, t), vb if powi else self.cast(vb, t)], t, op=op)

    def fold(self, op: str, a: object, b: object) -> object:
        try:
            return fold_python(op, a, b)
        except ZeroDivisionError:
            raise self.error("division by zero in a constant expression.") from None

    def compare(self, pred: str, a: object, b: object) -> object:
        if self.is_vec(a) or self.is_vec(b):
            return self.vec_compare(pred, a, b)
        if (is_number(a) and is_number(b)) or (pred in ("eq", "ne") and self.is_object(a, b)):
            return bool(getattr(operator, pred)(a, b))  # numbers, dtypes: while compiling
        va, vb = self.value(a), self.value(b)
        t = promote(dtype_of(va), dtype_of(vb))
        return self.emit(ir.Cmp, [self.cast(va, t), self.cast(vb, t)], u1, pred=pred)

    # -- names -------------------------------------------------------------------------------------
    def lookup(self, name: str) -> object:
        for frame in reversed(self.scope.frames):
            if name in frame:
                b = frame[name]
                if isinstance(b, Local):
                    return self.emit(ir.LocalLoad, [b.ref], dtype_of(b.ref), name)
                if isinstance(b, VecLocal):
                    return self.load_vec_local(b)
                if isinstance(b, LocalList):
                    return self.tensor_of([self.load_element(e, name) for e in b], name)
                if isinstance(b, StructRef) and is_view_type(b.value):
                    return self.view_of(b)  # a BufferView argument: read as a view
                return self.tensor_of(b, name)  # a field bound at compile time: its parameter
        value = resolve_name(self.scope.source.fn, name)
        if value is MISSING:
            raise self.error(f'Name "{name}" is not defined.', QdNameError)
        if isinstance(value, float) and self.config.raise_on_templated_floats:
            raise self.error(
                f"`{name}` is a Python float ({value!r}) baked into the kernel, which "
                "qd.init(raise_on_templated_floats=True) refuses: pass it as a `qd.f32` parameter.",
                QuadrantsCompilationError,
            )
        if self.pure:
            self.check_pure(name, value)
        self.record(name, value)
        return self.tensor_of(value, name, resolvable=True)

    def check_pure(
        self, name: str, value: object, base: object = MISSING, root: str | None = None
    ) -> None:
        """A `fastcache=True` kernel (and what it calls) reading a global or captured number,
        string or field, which Quadrants' fastcache key would not see: the global `name`, or the
        attribute `name` of `base` at the end of a chain from the global `root` (`cfg.size`,
        `my_do.b`). Refused in Quadrants' words; warned of for an UPPERCASE name or inside
        `qd.static(...)` (Quadrants' transition period). Exempt: an Enum member, an attribute of
        `math`, numpy or the library's own modules and classes (`qd.math.pi`), and whatever
        qdlab's own functions read."""
        if name.startswith("_qd_") or not isinstance(
            value, (float, int, str, FieldBase, StructFieldBase)
        ):
            return
        if self.scope.source.filename.startswith(QDLAB_DIR):
            return
        if root is None:
            message = (
                f"[PURE.VIOLATION] WARNING: Accessing global variable {name} {type(value)} {name} "
                "is in global vars, therefore violates pure"
            )
        else:
            if isinstance(value, enum.Enum) or base is math or base is np or is_library(base):
                return
            message = (
                f"[PURE.VIOLATION] WARNING: Accessing global var {name} from outside function "
                f"scope within pure kernel {root} is in global vars, therefore violates pure"
            )
        if name.upper() == name or self.static_depth:
            warnings.warn(message, stacklevel=2)
            return
        raise self.error(message, QuadrantsCompilationError)

    def record(self, name: str, value: object) -> None:
        self.deps.add((self.scope.owner, name, dep_fingerprint(value)))

    def load_element(self, e: object, name: str) -> object:
        """An element of a LocalList: a Local's value, anything else as it is."""
        if isinstance(e, Local):
            return self.emit(ir.LocalLoad, [e.ref], dtype_of(e.ref), name)
        return e

    def find_local(self, name: str) -> Local | object | None:
        for frame in reversed(self.scope.frames):
            if name in frame:
                return frame[name]
        return None

    # -- blocks ------------------------------------------------------------------------------------
    def lower_body(self, stmts: list[ast.stmt], block: ir.Block, frame: dict | None = None) -> None:
        outer_block, outer_top = self.block, self.top_level
        self.block = block
        if block is not self.kernel.body:
            self.top_level = False
        self.scope.frames.append(frame or {})
        try:
            for s in stmts:
                self.visit(s)
        finally:
            self.scope.frames.pop()
            self.block, self.top_level = outer_block, outer_top

    def kernel_arguments(self, params: list[ir.Param]) -> dict[str, object]:
        """What each of the kernel's parameters is in its body: a template argument's value, the
        entries of a vector passed by value, else an argument of the kernel."""
        values: dict[str, object] = {}
        source = self.scope.source
        nodes = {a.arg: a for a in source.tree.args.args}
        for index, p in enumerate(params):
            if p.name in self.lowering.templates:
                values[p.name] = self.tensor_of(self.lowering.templates[p.name], p.name, TEMPLATE)
                continue
            node = nodes.get(p.name.split(".")[0], source.tree)  # a struct member: its struct's
            self.loc = source.loc(node, self.kernel.name)
            if isinstance(p.type, TensorType):  # a vector by value: one argument per entry
                values[p.name] = self.param_vec(p.name, p.type, index)
                continue
            values[p.name] = self.emit(ir.Arg, (), p.type, p.name, index=index)
        self.loc = None
        return values

    def lower_kernel(
        self, arg_values: dict[str, object], memo: StatementMemo | None = None
    ) -> None:
        """Lowers the kernel's body; `memo` replays its unchanged top-level statements."""
        self.memo = memo
        self.arguments = arg_values
        self.scope.frames[0].update({k: v for k, v in arg_values.items() if k.isidentifier()})
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(
            max(limit, MAX_DEPTH)
        )  # the visitor recurses about 3 frames per nesting level
        try:
            self.check_stream_parallel_only(self.scope.source.tree.body)
            if self.checkpoints is not None:
                self.lower_checkpointed_kernel(self.scope.source.tree.body)
            for s in self.scope.source.tree.body if self.checkpoints is None else ():
                self.visit(s) if memo is None else memo.lower(self, s)
        except FuncReturn:
            pass  # as in Python (and Quadrants), nothing after the kernel's `return` runs
        except RecursionError as e:
            raise QdSyntaxError(
                "this expression or block nests too deeply to compile; build it up in steps "
                "through a local (`s = a + b`, then `s += c`).",
                getattr(e, "loc", None),
            ) from None
        else:
            if self.kernel.returns and not any(
                isinstance(op, ir.Return) for op in self.kernel.body.ops
            ):
                raise QdSyntaxError(
                    "Kernel has a return type but does not have a return statement; end it with "
                    "`return ...`.",
                    self.kernel.flags.def_loc,
                )
        finally:
            sys.setrecursionlimit(limit)
        for block, stopped in self.stopped_grads.items():  # `qd.stop_grad(x)` calls
            mark_stopped(block, stopped)

    # -- statements --------------------------------------------------------------------------------
    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant) and (
            isinstance(node.value.value, str) or node.value.value is Ellipsis
        ):
            return  # a docstring, or `...`
        self.visit(node.value)

    def visit_Pass(self, node: ast.Pass) -> None:
        pass

    def visit_If(self, node: ast.If) -> None:
        static = self.static_condition(node.test)
        if static is not None:
            self.lower_body(node.body if static else node.orelse, self.block)
            return
        cond = self.truth(self.visit(node.test))
        then, other = ir.Block(), ir.Block()
        op = ir.If([cond], None, {}, [then, other], self.loc)
        self.block.append(op)
        self.in_runtime_if += 1
        try:
            self.lower_body(node.body, then)
            self.lower_body(node.orelse, other)
        finally:
            self.in_runtime_if -= 1

    def is_stream_parallel(self, node: ast.stmt) -> bool:
        """`with qd.stream_parallel():`, however the name is reached."""
        if not (isinstance(node, ast.With) and len(node.items) == 1):
            return False
        call = node.items[0].context_expr
        if not isinstance(call, ast.Call):
            return False
        try:
            return self.resolve_static(call.func) is lang.stream_parallel
        except QdError:
            return False

    def check_stream_parallel_only(self, body: list[ast.stmt]) -> None:
        """Quadrants' rule: with one `with qd.stream_parallel():` at the top of a kernel, every
        top-level statement (a docstring aside) is one."""
        if not any(self.is_stream_parallel(s) for s in body):
            return
        for i, s in enumerate(body):
            docstring = (
                i == 0
                and isinstance(s, ast.Expr)
                and isinstance(s.value, ast.Constant)
                and isinstance(s.value.value, str)
            )
            if not docstring and not self.is_stream_parallel(s):
                self.loc = self.scope.source.loc(s, self.kernel.name)
                raise self.error(
                    "When using qd.stream_parallel(), all top-level statements in the kernel must "
                    "be 'with qd.stream_parallel():' blocks. Move non-parallel code to a separate "
                    "kernel."
                )

    def visit_With(self, node: ast.With) -> None:
        if len(node.items) != 1:
            raise self.error("'with' in Quadrants kernels only supports a single context manager.")
        item = node.items[0]
        if item.optional_vars is not None:
            raise self.error("'with ... as ...' is not supported in Quadrants kernels.")
        if not isinstance(item.context_expr, ast.Call):
            raise self.error("'with' in Quadrants kernels requires a call expression.")
        callee = self.resolve_static(item.context_expr.func)
        if callee is lang.graph_parallel_context:
            return self.graph_parallel_region(node)
        if callee is lang.graph_parallel:
            return self.graph_parallel_section(node)
        if callee is lang.checkpoint:
            return self.checkpoint_elsewhere(node)
        if callee is not lang.stream_parallel:
            raise self.error(
                "'with' in Quadrants kernels only supports qd.stream_parallel(), qd.checkpoint(), "
                "qd.graph.parallel_context(), or qd.graph.parallel()"
            )
        if self.scope.is_func:
            raise self.error(
                "qd.stream_parallel() can only be used inside @qd.kernel, not @qd.func."
            )
        if self.graph:
            raise self.error(
                "qd.stream_parallel() is not compatible with graph=True kernels. Streams and "
                "graphs cannot be combined; remove graph=True or the qd.stream_parallel() block."
            )
        if self.in_stream:
            raise self.error(
                "Nested stream_parallel blocks are not supported.", QuadrantsCompilationError
            )
        if not self.top_level:
            raise self.error(
                "`with qd.stream_parallel():` must be at the top of a kernel (nesting it, or "
                "putting it in a loop or branch, is not supported)."
            )
        if self.kernel.flags.concurrent_region is None:  # the first one
            self.kernel.flags.concurrent_region = self.loc
        self.in_stream = True
        try:
            self.lower_body(node.body, self.block)
        finally:
            self.in_stream = False

    def visit_Return(self, node: ast.Return) -> None:
        if self.scope.is_func:
            return self.func_return(node)
        if not self.top_level:
            raise self.error(
                "Return inside non-static if/for is not supported: a kernel can only `return` at "
                "its top level, as its last statement."
            )
        if isinstance(node.value, ast.Constant) and node.value.value is None:
            node = ast.Return(None)  # `return None` is a bare `return`, as in Quadrants
        if not self.kernel.returns:
            if node.value is not None:
                raise self.error(
                    "this kernel returns a value but has no return annotation (`-> qd.f32`).",
                    QdTypeError,
                )
            raise FuncReturn()
        if node.value is None:
            raise self.error(
                "Kernel has a return type but does not have a return statement; this `return` "
                "gives no value."
            )
        value = self.visit(node.value)
        values = self.return_values(value)
        if len(values) != len(self.kernel.returns):
            raise self.error(
                f"expected {len(self.kernel.returns)} return values, got {len(values)}.",
                QdTypeError,
            )
        vs = [self.cast(self.value(v, t), t) for v, t in zip(values, self.kernel.returns)]
        self.emit(ir.Return, vs)
        raise FuncReturn()

    def visit_Assert(self, node: ast.Assert) -> None:
        if not self.config.debug:
            if any(self.calls_a_func(n) for n in ast.walk(node.test)):
                self.visit(node.test)  # as in Quadrants: its @qd.func calls run, the check does not
            return
        cond = self.truth(self.visit(node.test))
        msg = ast.unparse(node.msg) if node.msg is not None else ast.unparse(node.test)
        if isinstance(node.msg, ast.Constant):
            msg = str(node.msg.value)
        pieces = self.assert_pieces(node.msg) if node.msg is not None else None
        if pieces is None:
            self.emit(ir.Assert, [cond], message=msg)
            return
        parts, values, specs = self.print_op_parts(pieces)
        self.emit(
            ir.Assert,
            [cond, *values],
            message=msg,
            parts=parts,
            specs=specs,
        )

    def calls_a_func(self, node: ast.AST) -> bool:
        """Whether `node` is a call of a @qd.func or @qd.real_func (which may write memory)."""
        if not isinstance(node, ast.Call):
            return False
        try:
            callee = self.resolve_callee(node.func)
            return isinstance(callee, (lang.Func, lang.BoundFunc, BoundMethod))
        except Exception:  # noqa: BLE001 - a callee that cannot be resolved is not a func's call
            return False

    # -- expressions -------------------------------------------------------------------------------
    def visit_Constant(self, node: ast.Constant) -> object:
        if isinstance(node.value, (bool, int, float, str)) or node.value is None:
            return node.value
        raise self.error(f"constant {node.value!r} is not supported in a kernel.")

    def visit_Name(self, node: ast.Name) -> object:
        return self.lookup(node.id)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> object:
        """`(a := v)`: assigns `v` to the name `a`, as `a = v` does, and is its value."""
        value = self.visit(node.value)
        v = node.value
        if isinstance(v, ast.Call) and self.resolve_callee(v.func) is lang.static:
            self.static_assign(node.target, value)
        else:
            self.assign_name(node.target.id, value)
        return self.lookup(node.target.id)

    def visit_Tuple(self, node: ast.Tuple) -> object:
        return tuple(self.visit(e) for e in node.elts)

    def visit_Attribute(self, node: ast.Attribute) -> object:
        base = self.subscript_base(node.value)
        if isinstance(base, View):
            return self.view_attribute(base, node.attr)
        if isinstance(base, STRUCTS):
            return self.member(base, node.attr)
        if isinstance(base, (Vec, ElementRef, lang.Matrix)):
            target = node.value.id if isinstance(node.value, ast.Name) else None
            return self.vec_attribute(base, node.attr, target)
        if isinstance(base, ir.Value) and ir.is_array(base):
            if node.attr in ("shape", "n", "m", "dtype"):
                return self.array_attr(base, node.attr)
            if node.attr == "grad":
                if not array_type(base).needs_grad:
                    label = self.kernel.flags.field_labels.get(base.name)
                    if label is not None:  # a field: Quadrants' words
                        raise self.error(
                            f"Gradient {label}.grad has not been placed, check whether "
                            "`needs_grad=True` (or call qd.root.lazy_grad()).",
                            QdTypeError,
                        )
                    raise self.error(
                        f"`{base.name}` has no gradient buffer; annotate it with needs_grad=True.",
                        QdTypeError,
                    )
                return GradOf(base)
            if node.attr == "fill":
                return ArrayFill(node.value)
            f = self.field_of(base)
            if node.attr == "get_scalar_field" and f is not None and f.element:
                return ScalarFieldOf(f)
            raise self.error(
                f"arrays have no attribute `{node.attr}` in a kernel (use `.shape` or `.grad`)."
            )
        if isinstance(base, ir.Value):
            raise self.error(f"a {base.type} value has no attribute `{node.attr}`.", QdTypeError)
        if (
            isinstance(base, tuple)
            and not hasattr(base, node.attr)
            and any(isinstance(e, ir.Value) for e in base)
        ):  # a `qd.grouped` index is a vector there (`I.sum()`, `I.x`)
            index = self.vec_of(base)
            if index is not None:
                return self.vec_attribute(index, node.attr, None)
        try:
            value = getattr(base, node.attr)
        except AttributeError:
            raise self.error(
                f"{describe(base)} has no attribute `{node.attr}`.", QuadrantsCompilationError
            ) from None
        path = dotted(node)
        outside = path is not None and path.split(".")[0] not in {
            k for f in self.scope.frames for k in f
        }
        if outside:
            self.record(path, value)  # `cfg.scale` is baked in: the manifest checks it
            root = (path or "").split(".")[0]
            if self.pure and not root.startswith("_qd_"):
                self.check_pure(node.attr, value, base, root)
        member = None if outside else self.struct_field_path(base)
        if member is not None:  # `self.particles.pos`: found again from the template argument
            self.note_struct_field(value, f"{member}.{node.attr}")  # `self.pairs.info`
            return self.tensor_of(value, f"{member}.{node.attr}", TEMPLATE)
        return self.tensor_of(value, path or node.attr, outside)

    def subscript_target(
        self, node: ast.Subscript, base: object = None
    ) -> tuple[ir.Value | GradOf, list[ir.Value]]:
        base = self.visit(node.value) if base is None else base
        if isinstance(base, View):  # `v[i]`: `arr[offset + i]`
            arr, index = self.view_index(base, node)
            return arr, self.from_offset(arr, [self.cast(self.value(index), i32)])
        arr = base.array if isinstance(base, GradOf) else base
        if not (isinstance(arr, ir.Value) and ir.is_array(arr)):
            raise self.error(f"{describe(base)} cannot be indexed in a kernel.", QdTypeError)
        idx = self.visit(node.slice)
        # a[None]; a[I] with I a tuple or a list of indices (`I = [i, j]`, as Quadrants takes it)
        items = [] if idx is None else list(idx) if isinstance(idx, (tuple, list)) else [idx]
        flat: list[object] = []
        for it in items:
            flat.extend(
                it
                if isinstance(it, (tuple, list))
                else self.vec_of(it).entries
                if self.is_vec(it)
                else [it]
            )
        ndim = array_type(arr).ndim
        if len(flat) != ndim:
            raise self.error(
                f"`{arr.name}` has {ndim} dimension(s) but is indexed with {len(flat)}.",
                QdTypeError,
            )
        nodes = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        self.check_constant_indices(arr, flat)
        indices = []
        for k, it in enumerate(flat):
            v = self.value(it)
            if not dtype_of(v).is_int:
                if len(nodes) == len(flat):
                    self.loc = self.scope.source.loc(nodes[k], self.scope.name)
                raise self.error(
                    f"indices must be integers, however '{v.type}' is provided as index {k}.",
                    QdTypeError,
                )
            indices.append(self.cast(v, i32))
        return (base if isinstance(base, GradOf) else arr), self.from_offset(arr, indices)

    def visit_Subscript(self, node: ast.Subscript) -> object:
        item = self.struct_item(node)  # `self.mats[k]`: an item of a list of structs
        if item is not None:
            return item
        base = self.subscript_base(node.value)
        if isinstance(base, View):
            sub = self.view_subscript(base, node)
            if sub is not None:
                return sub
            array, indices = self.subscript_target(node, base)
            if array_type(array).element:
                return self.element_load(ElementRef(array, False, tuple(indices)))
            return self.emit(ir.Load, [array, *indices], dtype_of(array))
        if isinstance(base, ElementRef):
            return self.element_load(base, self.index_items(node.slice))
        if isinstance(base, (Vec, lang.Matrix)):
            what = f"`{node.value.id}`" if isinstance(node.value, ast.Name) else "this value"
            return self.vec_index(self.need_vec(base, what), self.index_items(node.slice), what)
        if isinstance(base, tuple):
            key = self.visit(node.slice)
            if not isinstance(key, int):
                raise self.error(
                    "a tuple (shape, grouped index) can only be indexed by a constant."
                )
            if not -len(base) <= key < len(base):
                raise self.error(
                    f"index {key} is out of range for a tuple of {len(base)} item(s).", QdTypeError
                )
            return self.tensor_of(base[key], ast.unparse(node))  # a field: its parameter
        if isinstance(base, StructFieldBase):
            return self.struct_element(base, node)
        if not isinstance(base, (ir.Value, GradOf)) and hasattr(base, "__getitem__"):
            key = self.visit(node.slice)  # a Python object, indexed while compiling
            if isinstance(key, ir.Value) and isinstance(key.owner, ir.Const) and key.dtype.is_int:
                key = key.owner.attrs["value"]  # `w[offset[d]]`, an entry of a static vector
            if not isinstance(key, ir.Value):
                try:
                    return self.tensor_of(base[key], ast.unparse(node))  # type: ignore[index]
                except Exception as e:  # noqa: BLE001 - the object's own error is reported
                    raise self.error(
                        f"{describe(base)}[{key!r}] failed at compile time ({e}).", QdTypeError
                    ) from None
        array, indices = self.subscript_target(node)
        base_arr, grad = GradOf.unpack(array)
        if array_type(base_arr).element:
            return self.element_load(ElementRef(base_arr, grad, tuple(indices)))
        return self.emit(ir.Load, [base_arr, *indices], dtype_of(base_arr), grad=grad)

    def visit_BinOp(self, node: ast.BinOp) -> object:
        if isinstance(node.op, ast.MatMult):
            return self.matmul(self.visit(node.left), self.visit(node.right))
        op = BINOPS.get(type(node.op))
        if op is None:
            raise self.error(f"operator {type(node.op).__name__} is not supported in a kernel.")
        left, right = self.visit(node.left), self.visit(node.right)
        combined = sequence_binop(node.op, left, right)
        return combined if combined is not None else self.checked_binop(op, left, right)

    def checked_binop(self, op: str, a: object, b: object) -> object:
        """`a op b` as the user wrote it: under `debug=True` an integer `+ - * <<` is marked
        `overflow`, and its code prints Quadrants' "Addition overflow detected in ..." (with the
        line) when the result wraps."""
        out = self.binop(op, a, b)
        if (
            self.config.debug
            and op in ir.OVERFLOW_CHECKED
            and isinstance(out, ir.Value)
            and isinstance(out.owner, ir.BinOp)
            and out.dtype.is_int
            and out.dtype.bits > 1
        ):
            out.owner.attrs["overflow"] = True
        return out

    def visit_UnaryOp(self, node: ast.UnaryOp) -> object:
        x = self.visit(node.operand)
        if self.is_vec(x) and isinstance(node.op, ast.Not):
            return self.vmap(lambda e: self.compare("eq", self.truth(e), False), self.vec_of(x))
        if self.is_vec(x) and not isinstance(node.op, ast.UAdd):
            fn = "neg" if isinstance(node.op, ast.USub) else "bitnot"
            return self.vmap(lambda e: self.unary_op(fn, e), self.vec_of(x))
        if isinstance(node.op, ast.Not):
            if is_number(x):
                return not x
            if not dtype_of(self.value(x)).is_int:
                raise self.error(
                    f"'logic_not' takes integral inputs only, however '{self.value(x).type}' is "
                    "provided; compare it instead (`x == 0`).",
                    QdTypeError,
                )
            v = self.truth(x)
            return self.emit(ir.Cmp, [v, self.const(0, u1)], u1, pred="eq")
        if isinstance(node.op, ast.UAdd):
            return x
        if is_number(x):
            return -x if isinstance(node.op, ast.USub) else ~x  # type: ignore[operator]
        return self.unary_op("neg" if isinstance(node.op, ast.USub) else "bitnot", x)

    def unary_op(self, fn: str, x: object) -> ir.Value:
        """`-x` (`neg`) or `~x` (`bitnot`) on a scalar."""
        v = self.value(x)
        if fn == "bitnot" and not dtype_of(v).is_int:
            raise self.error(
                f"'bit_not' takes integral inputs only, however '{v.type}' is provided.",
                QdTypeError,
            )
        return self.emit(ir.Unary, [v], v.type, fn=fn)

    def visit_Call(self, node: ast.Call) -> object:
        return self.lower_call(node)


def mark_stopped(block: ir.Block, arrays: set[ir.Value]) -> None:
    """Marks `stop_grad` every load of one of `arrays` in `block` and the blocks nested in it (not
    in the functions it calls): the reverse mode adds no gradient to the array there."""
    for op in block.ops:
        if isinstance(op, (ir.Load, ir.VolatileLoad)) and op.operands[0] in arrays:
            op.attrs["stop_grad"] = True
        for region in op.regions:
            mark_stopped(region, arrays)
