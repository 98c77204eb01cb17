"""Lowering of the graph constructs of a `@qd.kernel(graph=True)`: `qd.graph.parallel_context()`
regions of `qd.graph.parallel()` sections, and the `qd.checkpoint(...)` stages of a
`checkpoints=True` kernel (`while qd.graph.do_while(c):` itself is in `loops.py`).

A region's sections are independent by the program's word, so qdlab runs them one after another,
in source order (as Quadrants does off CUDA): a section's statements are lowered as if written
without the `with`. The region is "scheduled to run concurrently", which the split's gate refuses
(`concurrent_region`): the kernel compiles whole.

A `checkpoints=True` kernel pauses and resumes inside one launch, all in its own code:
- Stages, in source order, get internal indices 0, 1, ...: each `with qd.checkpoint(label,
  yield_on=flag):` (explicit) and each other `for` directly in the kernel body or in a
  `qd.graph.do_while` body (implicit: never pauses, never named).
- Two locals carry the state: `_qd_cp_yield` (the index of the stage that paused, -1 none) and
  `_qd_cp_resume` (the first index to run: the hidden kernel argument `_qd_resume_point`, 0 for a
  plain launch, what `kernel.resume(from_checkpoint=label)` passes otherwise).
- A stage runs when nothing paused yet and its index is at least `_qd_cp_resume` (the test sits
  inside a `for`, so the loop stays parallel). After an explicit stage ran, a non-zero `flag[()]`
  pauses: later stages are skipped, and each `qd.graph.do_while` around it ends after the
  iteration under way. Other statements (bare assignments, calls) run on every launch, as
  Quadrants' kernel prologue does.
- A `qd.graph.do_while` whose stages all come before `_qd_cp_resume` is skipped; one that holds it
  runs its first iteration from it and every later iteration whole (`_qd_cp_resume` drops to 0).
- The kernel returns `_qd_cp_yield`; the host turns it into a `qd.GraphStatus`.
"""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass, field

from qdlab.core import language as lang

from ...core.errors import QdError, QdSyntaxError
from .. import ir
from .scope import FuncReturn, GradOf, array_type

YIELD = "_qd_cp_yield"
"""The local holding the internal index of the stage that paused (-1: none)."""
RESUME = "_qd_cp_resume"
"""The local holding the first internal index a launch runs."""
RESUME_ARG = "_qd_resume_point"
"""The hidden kernel parameter `kernel.resume(from_checkpoint=...)` sets (0 otherwise)."""


@dataclass
class Checkpoints:
    """The stages of a `checkpoints=True` kernel, by internal index: each one's label (None for an
    implicit stage) and its `yield_on` expression's text (None for an implicit stage)."""

    labels: list[object] = field(default_factory=list)
    yield_on: list[str | None] = field(default_factory=list)
    inside: bool = False
    """Lowering an explicit stage's body (a checkpoint there is nested)."""


def _at(node: ast.AST, at: ast.AST) -> None:
    for n in ast.walk(node):
        ast.copy_location(n, at)


def _stmt(text: str, at: ast.AST) -> ast.stmt:
    """`text` parsed as one statement, placed at `at`'s line."""
    s = ast.parse(text).body[0]
    _at(s, at)
    return s


FLAT = {
    "do_while": "graph_do_while",
    "parallel_context": "graph_parallel_context",
    "parallel": "graph_parallel",
}
"""Each `qd.graph.<name>` construct's deprecated flat spelling (the same object)."""


def is_deprecated_spelling(func: ast.expr, name: str) -> bool:
    """`func` (a call's callee) spells construct `name` the flat way: `qd.graph_<name>` or a bare
    `graph_<name>`."""
    flat = FLAT[name]
    return (isinstance(func, ast.Attribute) and func.attr == flat) or (
        isinstance(func, ast.Name) and func.id == flat
    )


def matches(func: ast.expr, name: str) -> bool:
    """`func` spells construct `name` either way: `qd.graph.<name>` / `graph.<name>`, or flat."""
    if isinstance(func, ast.Attribute) and func.attr == name:
        v = func.value
        if (isinstance(v, ast.Attribute) and v.attr == "graph") or (
            isinstance(v, ast.Name) and v.id == "graph"
        ):
            return True
    return is_deprecated_spelling(func, name)


def warn_if_deprecated(func: ast.expr, name: str) -> None:
    """Quadrants' compile-time DeprecationWarning for a flat spelling."""
    if is_deprecated_spelling(func, name):
        warnings.warn(
            f"qd.{FLAT[name]}() is deprecated and will be removed in a future release; use "
            f"qd.graph.{name}() instead.",
            DeprecationWarning,
            stacklevel=2,
        )


def _docstring(s: ast.stmt) -> bool:
    return isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)


class Graphs:
    """Mixed into `Frontend`; uses its `visit`, `error`, `resolve_static`, `resolve_callee`,
    `lower_body`, `block`, `scope`, `kernel`, `graph` and `loc`."""

    checkpoints: Checkpoints | None = None
    """Set for a `checkpoints=True` kernel."""
    graph_region = 0
    """1 inside a `qd.graph.parallel_context()` region, 2 inside one of its sections."""

    # -- recognising the constructs ----------------------------------------------------------------
    def with_callee(self, node: ast.stmt) -> object:
        """What a one-item `with f(...):` calls (None for anything else)."""
        if not (isinstance(node, ast.With) and len(node.items) == 1):
            return None
        call = node.items[0].context_expr
        if not isinstance(call, ast.Call):
            return None
        try:
            return self.resolve_static(call.func)
        except QdError:
            return None

    def is_do_while(self, node: ast.stmt) -> bool:
        test = node.test if isinstance(node, ast.While) else None
        return isinstance(test, ast.Call) and self.resolve_callee(test.func) is lang.BUILTINS.get(
            "graph_do_while"
        )

    # -- qd.graph.parallel_context / qd.graph.parallel ---------------------------------------------
    def graph_parallel_region(self, node: ast.With) -> None:
        call = node.items[0].context_expr
        assert isinstance(call, ast.Call)
        warn_if_deprecated(call.func, "parallel_context")
        if call.args or call.keywords:
            raise self.error("qd.graph.parallel_context() takes no arguments")
        if self.scope.is_func:
            raise self.error(
                "qd.graph.parallel_context() can only be used inside @qd.kernel, not @qd.func"
            )
        if not self.graph:
            raise self.error("qd.graph.parallel_context() requires @qd.kernel(graph=True)")
        if self.checkpoints is not None:
            raise self.error(
                "qd.graph.parallel_context() is not supported in a "
                "@qd.kernel(graph=True, checkpoints=True) kernel: a fork/join region does not "
                "take part in the checkpoint/resume model. Use it in a kernel without "
                "checkpoints=True, or express the work as qd.checkpoint() stages."
            )
        if self.graph_region == 2:
            raise self.error(
                "qd.graph.parallel_context() cannot appear inside a qd.graph.parallel() section"
            )
        if self.graph_region:
            raise self.error("qd.graph.parallel_context() regions cannot be nested")
        self.check_region(node.body)
        if self.kernel.flags.concurrent_region is None:  # the gate refuses to split the kernel
            self.kernel.flags.concurrent_region = self.loc
        self.graph_region = 1
        try:
            self.lower_body(node.body, self.block)
        finally:
            self.graph_region = 0

    def check_region(self, body: list[ast.stmt]) -> None:
        """A region holds only sections, possibly inside `if qd.static(...)` or `for ... in
        qd.static(...)` (checked again at each level); each section's body is straight-line
        work."""
        for i, s in enumerate(body):
            callee = self.with_callee(s)
            if callee is lang.graph_parallel:
                assert isinstance(s, ast.With)
                self.check_section(s.body)
                continue
            if isinstance(s, ast.If) and self.is_static_call(s.test):
                self.check_region(s.body)
                self.check_region(s.orelse)
                continue
            if isinstance(s, ast.For) and self.is_static_call(s.iter) and not s.orelse:
                self.check_region(s.body)
                continue
            if _docstring(s) or isinstance(s, ast.Pass):
                continue
            self.loc = self.scope.source.loc(s, self.scope.name)
            raise self.error(
                "A qd.graph.parallel_context() region may contain only 'with "
                "qd.graph.parallel():' blocks (optionally inside 'if qd.static(...)' or 'for ... "
                "in qd.static(...)'). Move other work outside the region. [offending stmt "
                f"{i}: {type(s).__name__}]"
            )

    def is_static_call(self, node: ast.expr) -> bool:
        return isinstance(node, ast.Call) and self.resolve_callee(node.func) is lang.static

    def check_section(self, body: list[ast.stmt]) -> None:
        for s in body:
            for n in ast.walk(s):
                if isinstance(n, ast.stmt) and self.is_do_while(n):
                    self.loc = self.scope.source.loc(n, self.scope.name)
                    raise self.error(
                        "qd.graph.do_while() cannot appear inside a qd.graph.parallel() section; "
                        "a section body must be straight-line task work (put the "
                        "qd.graph.parallel_context() region inside the qd.graph.do_while() loop, "
                        "not the other way around)"
                    )
                callee = self.with_callee(n) if isinstance(n, ast.stmt) else None
                if callee is None:
                    continue
                self.loc = self.scope.source.loc(n, self.scope.name)
                if callee is lang.checkpoint:
                    raise self.error(
                        "qd.checkpoint() cannot appear inside a qd.graph.parallel() section; a "
                        "section body must be straight-line task work"
                    )
                if callee is lang.graph_parallel_context:
                    raise self.error(
                        "qd.graph.parallel_context() cannot appear inside a qd.graph.parallel() "
                        "section"
                    )
                if callee is lang.graph_parallel:
                    raise self.error(
                        "qd.graph.parallel() sections cannot be nested inside one another"
                    )

    def graph_parallel_section(self, node: ast.With) -> None:
        call = node.items[0].context_expr
        assert isinstance(call, ast.Call)
        warn_if_deprecated(call.func, "parallel")
        if call.args or call.keywords:
            raise self.error("qd.graph.parallel() takes no arguments")
        if self.graph_region == 2:
            raise self.error("qd.graph.parallel() sections cannot be nested inside one another")
        if self.graph_region != 1:
            raise self.error(
                "qd.graph.parallel() can only be used directly inside a "
                "qd.graph.parallel_context() region"
            )
        self.graph_region = 2
        try:
            self.lower_body(node.body, self.block)  # the sections run one after another
        finally:
            self.graph_region = 1

    # -- qd.checkpoint -----------------------------------------------------------------------------
    def lower_checkpointed_kernel(self, body: list[ast.stmt]) -> None:
        """The body of a `checkpoints=True` kernel: its state, its stages, its status return."""
        at = self.scope.source.tree
        self.visit(_stmt(f"{YIELD} = -1", at))
        self.visit(_stmt(f"{RESUME} = {RESUME_ARG}", at))
        try:
            self.checkpointed(body, loop=False)
        except FuncReturn:
            pass  # the kernel's own bare `return` (its last statement)
        self.visit(_stmt(f"return {YIELD}", body[-1] if body else at))

    def count_stages(self, body: list[ast.stmt]) -> int:
        n = 0
        for s in body:
            if isinstance(s, ast.For) or self.with_callee(s) is lang.checkpoint:
                n += 1
            elif self.is_do_while(s):
                assert isinstance(s, ast.While)
                n += self.count_stages(s.body)
        return n

    def checkpointed(self, body: list[ast.stmt], loop: bool) -> None:
        """Lower the statements of the kernel body (or of a `qd.graph.do_while` body, `loop`) with
        their stages gated."""
        table = self.checkpoints
        assert table is not None
        for s in body:
            if self.with_callee(s) is lang.checkpoint:
                assert isinstance(s, ast.With)
                self.explicit_checkpoint(s)
            elif isinstance(s, ast.For):
                table.labels.append(None)
                table.yield_on.append(None)
                self.gated(s, len(table.labels) - 1)
            elif self.is_do_while(s):
                assert isinstance(s, ast.While)
                n = self.count_stages(s.body)
                if n == 0:
                    self.visit(s)
                    continue
                last = len(table.labels) + n - 1
                gate = _stmt(f"if {YIELD} < 0 and {RESUME} <= {last}: pass", s)
                assert isinstance(gate, ast.If)
                gate.body = [s]
                self.visit(gate)
            else:
                self.visit(s)  # runs on every launch, as Quadrants' kernel prologue
        if loop:  # the end of an iteration: later ones run whole; a pause ends the loop
            at = body[-1] if body else self.scope.source.tree
            self.visit(_stmt(f"{RESUME} = 0", at))
            self.visit(_stmt(f"if {YIELD} >= 0: break", at))

    def gated(self, s: ast.stmt, index: int) -> None:
        """Lower `s`, run only when stage `index` runs: the test goes inside a `for` (which stays
        parallel), around anything else."""
        gate = _stmt(f"if {YIELD} < 0 and {RESUME} <= {index}: pass", s)
        assert isinstance(gate, ast.If)
        if isinstance(s, ast.For):
            gate.body = s.body
            loop = ast.For(s.target, s.iter, [gate], [], getattr(s, "type_comment", None))
            self.visit(ast.copy_location(loop, s))
        else:
            gate.body = [s]
            self.visit(gate)

    def do_while_body(self, stmts: list[ast.stmt], block: ir.Block) -> None:
        """A `qd.graph.do_while` body: plain, or with its stages gated in a `checkpoints=True`
        kernel."""
        if self.checkpoints is None:
            return self.lower_body(stmts, block)
        outer_block, outer_top = self.block, self.top_level
        self.block, self.top_level = block, False
        self.scope.frames.append({})
        try:
            self.checkpointed(stmts, loop=True)
        finally:
            self.scope.frames.pop()
            self.block, self.top_level = outer_block, outer_top

    def checkpoint_elsewhere(self, node: ast.With) -> None:
        """A `with qd.checkpoint(...)` that `checkpointed` did not place: say why it cannot be
        here."""
        if self.scope.is_func:
            raise self.error("qd.checkpoint() can only be used inside @qd.kernel, not @qd.func")
        if not self.graph:
            raise self.error(
                "qd.checkpoint() requires @qd.kernel(graph=True); the resume model only applies "
                "to graph kernels"
            )
        if self.checkpoints is None:
            raise self.error(
                f"qd.checkpoint() found in kernel {self.kernel.name!r}, but this kernel was not "
                "decorated with `checkpoints=True`. Add `checkpoints=True` to the decorator -- "
                "e.g. `@qd.kernel(graph=True, checkpoints=True)` -- to opt into the pause / "
                "resume model."
            )
        if self.checkpoints.inside:
            raise self.error(
                "qd.checkpoint() cannot be nested inside another qd.checkpoint(); checkpoints in "
                "the same kernel must be flat siblings (a checkpoint inside qd.graph.do_while is "
                "fine)"
            )
        raise self.error(
            "qd.checkpoint() must sit directly in the kernel body or directly in a "
            "qd.graph.do_while() body."
        )

    def explicit_checkpoint(self, node: ast.With) -> None:
        table = self.checkpoints
        assert table is not None
        self.loc = self.scope.source.loc(node, self.scope.name)
        call = node.items[0].context_expr
        assert isinstance(call, ast.Call)
        if node.items[0].optional_vars is not None:
            raise self.error("'with qd.checkpoint(...) as ...' is not supported.")
        label_node, flag_node = self.checkpoint_arguments(call)
        label = self.checkpoint_label(label_node)
        if any(old is not None and old == label for old in table.labels):
            raise self.error(
                f"qd.checkpoint(cp_id={label!r}, ...) declares a cp_id that is already used by "
                f"another checkpoint in kernel {self.kernel.name!r}. Each `cp_id` label must be "
                "unique so the host loop can map `status.checkpoint` and "
                "`kernel.resume(from_checkpoint=...)` unambiguously."
            )
        text = self.checkpoint_flag(flag_node)
        for k, s in enumerate(node.body):
            if _docstring(s) and k == 0:
                continue
            if isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr)):
                self.loc = self.scope.source.loc(s, self.scope.name)
                raise self.error(
                    "qd.checkpoint() body cannot contain a bare top-level "
                    f"{type(s).__name__} statement (line {s.lineno}): every top-level statement "
                    "in a checkpoint must be inside a for-loop (or other control-flow construct), "
                    "so that it runs as its own task of the stage. Wrap the statement in "
                    "`for _ in range(1):` to keep the original intent:\n\n"
                    "    with qd.checkpoint(cp_id, yield_on=flag):\n"
                    "        for _ in range(1):\n"
                    "            <your statement here>\n"
                    "        for i in range(arr.shape[0]):\n"
                    "            ..."
                )
        index = len(table.labels)
        table.labels.append(label)
        table.yield_on.append(text)
        table.inside = True
        try:
            for k, s in enumerate(node.body):
                if not (_docstring(s) and k == 0):
                    self.gated(s, index)
        finally:
            table.inside = False
        gate = _stmt(f"{YIELD} < 0 and {RESUME} <= {index}", node)
        raised = _stmt("FLAG[()] != 0", node)
        assert isinstance(gate, ast.Expr) and isinstance(raised, ast.Expr)
        test = raised.value
        assert isinstance(test, ast.Compare) and isinstance(test.left, ast.Subscript)
        test.left.value = self.copy(flag_node)  # `flag[()] != 0`
        _at(test, node)
        check = ast.If(ast.BoolOp(ast.And(), [gate.value, test]), [], [])
        check.body = [_stmt(f"{YIELD} = {index}", node)]
        self.visit(ast.copy_location(check, node))

    @staticmethod
    def copy(node: ast.expr) -> ast.expr:
        return ast.parse(ast.unparse(node), mode="eval").body

    def checkpoint_arguments(self, call: ast.Call) -> tuple[ast.expr, ast.expr]:
        """`qd.checkpoint(cp_id, yield_on=flag)`'s two arguments, positional or by keyword."""
        if not call.args and not call.keywords:
            raise self.error(
                "qd.checkpoint() takes two arguments: `qd.checkpoint(cp_id, yield_on=flag)`."
            )
        if len(call.args) > 2:
            raise self.error(
                "qd.checkpoint() takes at most 2 positional arguments (cp_id, yield_on); got "
                f"{len(call.args)}"
            )
        given: dict[str, ast.expr] = dict(zip(("cp_id", "yield_on"), call.args))
        for kw in call.keywords:
            if kw.arg not in ("cp_id", "yield_on"):
                raise self.error(
                    f"qd.checkpoint() got unexpected keyword argument {kw.arg!r}; only 'cp_id' "
                    "and 'yield_on' are supported"
                )
            if kw.arg in given:
                raise self.error(
                    f"qd.checkpoint() got `{kw.arg}` both positionally and as a keyword"
                )
            given[kw.arg] = kw.value
        if "cp_id" not in given:
            raise self.error(
                "qd.checkpoint() is missing required argument `cp_id` (e.g. "
                "`qd.checkpoint(0, yield_on=flag)` or `qd.checkpoint(Stage.SIM, yield_on=flag)`)"
            )
        if "yield_on" not in given:
            raise self.error(
                "qd.checkpoint() is missing required argument `yield_on` (e.g. "
                "`qd.checkpoint(0, yield_on=overflow_flag)`)"
            )
        return given["cp_id"], given["yield_on"]

    def checkpoint_label(self, node: ast.expr) -> object:
        try:
            value = self.resolve_static(node)
        except QdError:
            value = None
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(
                "qd.checkpoint() first argument must be an int literal or an IntEnum value (e.g. "
                f"`Stage.SIM`). Got `{ast.unparse(node)}`; the cp_id must be known while "
                "compiling so that the host can name the checkpoint in `status.checkpoint` and "
                "`kernel.resume(from_checkpoint=...)`."
            )
        return value

    def checkpoint_flag(self, node: ast.expr) -> str:
        """Check that `yield_on=` names a 0-d integer ndarray argument; its text."""
        if not isinstance(node, (ast.Name, ast.Attribute)):
            raise self.error(
                "qd.checkpoint(yield_on=...) must reference a kernel ndarray argument -- e.g. "
                "`yield_on=flag` for a bare parameter, `yield_on=self.flag` for a "
                "@qd.data_oriented member, or `yield_on=params.flag` for a "
                "@dataclasses.dataclass parameter member; arbitrary expressions are not supported"
            )
        text = ast.unparse(node)
        try:
            value = GradOf.unpack(self.visit(self.copy(node)))[0]
        except QdError:
            value = None
        array = isinstance(value, ir.Value) and ir.is_array(value) and not self.field_of(value)
        t = array_type(value) if array else None  # a field is refused, as Quadrants refuses it
        if t is None or t.ndim != 0 or t.element or not t.dtype.is_int:
            raise QdSyntaxError(
                f"qd.checkpoint(yield_on=...) got {text!r} which does not resolve to an ndarray "
                f"kernel parameter of {self.kernel.name!r}. The argument must reference an "
                "ndarray kernel parameter (e.g. `flag`) or a @qd.data_oriented member ndarray "
                "(e.g. `self.flag`); other expressions are not supported. It is a 0-d integer "
                "ndarray: `flag: qd.types.ndarray(qd.i32, ndim=0)`.",
                self.loc,
            )
        return text
