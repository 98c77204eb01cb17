"""The statement memo: a top-level statement that has not changed is not lowered again.

Editing one loop of a big kernel lowers that loop; the others are replayed from what lowering them
gave last time (their ops, rebuilt from rows). A statement is replayed only when everything its
lowering could see is the same:

- the kernel's context (`context`): its name, its indentation, its parameters and return types,
  the options of the compile; a kernel with template arguments is always lowered. Its file and
  first line may differ (a notebook cell run again is a new file): the replayed ops' locations are
  rebased onto where the kernel is now, as the manifest does;
- the statement itself: its source lines and where it starts in the kernel (its AST, positions
  included, follows from them);
- what it read while lowering: every global, closure value and `@qd.func` source it recorded, each
  checked against its fingerprint now, and every compile-time call evaluated again (the manifest's
  check, `manifest.deps_hold`);
- the frontend's state before it, which must be the state right after the arguments were set up:
  as soon as one statement leaves anything behind (a top-level local, a field's hidden parameter, a
  random draw's site number, a flag), every later statement of that kernel is lowered again and
  nothing is stored for it.

A statement is stored only if its lowering left the frontend's state as it found it (its ops were
appended to the kernel body and nothing else changed), logged nothing, its ops use no value from
outside themselves other than the arguments' setup, and every op comes from the kernel's own lines
(a statement that inlines a `@qd.func` is lowered each time: the function's lines may move). When
in doubt, it is lowered. `QDLAB_STMT_MEMO=0` turns the memo off (differential tests compare both).

Each entry stored is also written to the disk tier of the compile's cache (`BinaryCache.put_own`,
keyed by `keys.memo_key`: its key and the compiler version), so a new process that compiles the
kernel with one statement edited replays the others from there: an entry the process does not hold
is looked for on disk before the statement is lowered. Its reads are checked as any entry's.
The entries a compile used are also written together, as the kernel's bundle
(`persist.Bundle`): a new process reads them in one step.
"""

from __future__ import annotations

import ast
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from ...core.errors import SourceLoc
from ...core.types import i32
from .. import ir
from . import manifest, persist

if TYPE_CHECKING:
    from ..frontend.source import Source


class _Scope(Protocol):
    source: Source


class Lowering(Protocol):
    """What the memo uses of the frontend that lowers the kernel (`Frontend`)."""

    kernel: ir.Kernel
    scope: _Scope
    deps: set
    """What lowering has read so far: (owner path, name, fingerprint) of each read."""

    def visit(self, node: ast.AST) -> object: ...


class Spec(Protocol):
    """What the memo's context takes of a kernel's `KernelSpec`."""

    @property
    def name(self) -> str: ...

    @property
    def params(self) -> list: ...

    @property
    def returns(self) -> list: ...

    @property
    def return_shapes(self) -> list: ...

    @property
    def autodiff(self) -> object: ...


LIMIT = 4096
"""Statements kept (least recently used go first)."""
_SKIP = frozenset({"loc", "deps", "memo"})
"""Frontend attributes a statement may change: the location being lowered (restored by `visit`),
what was read (kept per statement), and the memo itself."""


@dataclass
class Entry:
    rows: list
    """The statement's top-level ops as `persist.flatten` rows: the setup values they use numbered
    first, their locations relative to the kernel's first line (file name left empty)."""
    inputs: list[int]
    """The position in the kernel body of the setup op of each value numbered first."""
    setup: int
    """How many ops the arguments' setup had."""
    deps: frozenset
    """(owner path, name, fingerprint) of everything the statement read."""
    moved: tuple = ((), {})
    """The latest place it was replayed at (file name, first line) and its locations moved there,
    by the id of the stored location: replaying at the same place again makes none anew."""

    def value(self) -> tuple:
        """What its entry on disk holds."""
        return self.rows, self.inputs, self.setup, self.deps


_memo: OrderedDict[tuple, Entry] = OrderedDict()
_lock = threading.Lock()
"""Kernels may compile in several threads at once; entries are only read once stored."""
stats = {"replayed": 0, "lowered": 0, "loaded": 0, "reads": 0}
"""Counts since the process started (tests and the profile read them): `loaded` the entries
taken from disk, `reads` the disk reads made for them."""
_bundles = persist.Bundle("statement")
"""Each kernel's entries together on disk, by its context."""


def enabled() -> bool:
    return os.environ.get("QDLAB_STMT_MEMO", "1") != "0"


def clear() -> None:
    with _lock:
        _memo.clear()


def _shape(v: object, depth: int = 0) -> object:
    """A value's state for comparing before and after a statement: scalars by value, containers by
    their items, anything else by identity."""
    if v is None or isinstance(v, (bool, int, float, str, bytes)):
        return v
    if depth < 4 and isinstance(v, dict):
        return ("dict", tuple((_shape(k, 9), _shape(x, depth + 1)) for k, x in v.items()))
    if depth < 4 and isinstance(v, (list, tuple)):
        return (type(v).__name__, tuple(_shape(x, depth + 1) for x in v))
    if depth < 4 and isinstance(v, (set, frozenset)):
        return ("set", frozenset(_shape(x, depth + 1) for x in v))
    return ("id", id(v))


def state(fe: object) -> tuple:
    """Everything of the frontend a statement could leave behind, but the kernel body's ops."""
    attrs = vars(fe)
    kernel, scope = attrs["kernel"], attrs["scope"]
    out: list[tuple] = [
        (k, _shape(v))
        for k, v in sorted(attrs.items())
        if k not in _SKIP and k not in ("kernel", "scope")
    ]
    out.append(
        (
            "kernel",
            id(kernel),
            kernel.name,
            tuple(id(p) for p in kernel.params),
            _shape(kernel.returns),
            _shape(dict(kernel.flags.items())),
            id(kernel.body),
        )
    )
    out.append(
        (
            "scope",
            id(scope),
            id(scope.source),
            scope.name,
            id(scope.globals),
            _shape(scope.frames),
            _shape(scope.returned),
            scope.is_func,
            scope.base_depth,
            scope.owner,
            _shape(scope.statics),
        )
    )
    return tuple(out)


def context(spec: Spec, source: Source, config: dict) -> tuple | None:
    """What every statement of this kernel's compile shares; None when the memo must stay out."""
    if not enabled() or getattr(spec, "templates", None) or config.get("fresh"):
        return None
    try:
        first = source.tree.body[0]
        lines = source.lines
        cut = source.indent + first.col_offset
        header = "".join(lines[: first.lineno - 1]) + lines[first.lineno - 1][:cut]
        # the text up to the body: its decorators and parameters' AST are a function of it
        return (
            source.indent,
            spec.name,
            repr(spec.params),
            repr(spec.returns),
            repr(spec.return_shapes),
            bool(spec.autodiff),
            repr(sorted(config.items(), key=lambda kv: kv[0])),
            header,
        )
    except Exception:  # noqa: BLE001 - a repr that fails: no memo for this kernel
        return None


def _mover(where: tuple[str, int], moved: dict[int, SourceLoc]) -> Callable:
    """What moves a stored location to `where` (a file name, and the line number to add), each
    one once (`moved` keeps them by the id of the stored one)."""

    def move(loc: SourceLoc) -> SourceLoc:
        got = moved.get(id(loc))
        if got is None:
            got = moved[id(loc)] = SourceLoc(
                loc.kernel, where[0], loc.lineno + where[1], loc.col, loc.source_line, loc.end_col
            )
        return got

    return move


class _Count(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.n = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.n += 1


class Memo:
    """One kernel compile's use of the memo (`Frontend.memo`)."""

    def __init__(
        self, ctx: tuple, fn: object, setup: int, store: persist.Store | None = None
    ) -> None:
        self.ctx, self.fn, self.setup, self.store = ctx, fn, setup, store
        """`store`: the compile's `BinaryCache`, whose disk tier holds entries of other
        processes."""
        self.clean = True
        """No statement so far has left state behind: the state is still the setup's."""
        self.replayed: set[int] = set()
        """The ids of the top-level ops replayed (`verify` takes them as they are)."""
        self.used: list[tuple[tuple, Callable[[], tuple]]] = []
        """(key, what its disk entry holds) of each statement replayed or stored."""
        self.held: dict[frozenset, bool] = {}
        """`manifest.deps_hold` of each set of reads checked since a statement was last lowered
        (statements that read the same globals share one check; lowering one may evaluate the
        user's code, in `qd.static`, which may change what the next one reads)."""

    def holds(self, deps: frozenset) -> bool:
        held = self.held.get(deps)
        if held is None:
            held = self.held[deps] = manifest.deps_hold(self.fn, deps)
        return held

    def key(self, fe: Lowering, node: ast.stmt) -> tuple:
        """The statement's lines (whole, so a comment or a second statement on them counts) and
        where it starts in the kernel: its AST, positions included, is a function of them."""
        lines = fe.scope.source.lines
        text = "".join(lines[node.lineno - 1 : (node.end_lineno or node.lineno)])
        return (self.ctx, node.lineno, node.col_offset, text)

    def lower(self, fe: Lowering, node: ast.stmt) -> None:
        """Lower one top-level statement: replayed when its entry holds, else visited (and
        stored when it is self-contained)."""
        if not self.clean:
            fe.visit(node)
            stats["lowered"] += 1
            return
        body = fe.kernel.body
        key = self.key(fe, node)
        with _lock:
            entry = _memo.get(key)
        if entry is None:
            entry = self.load(key)
        if entry is not None and entry.setup == self.setup and self.holds(entry.deps):
            source = fe.scope.source
            where = (source.filename, source.first_line)
            moved = entry.moved  # one read: another thread may replace it meanwhile
            if moved[0] != where:
                moved = entry.moved = (where, {})
            inputs = [body.ops[pos].out for pos in entry.inputs]
            n = len(body.ops)
            persist.unflatten(entry.rows, inputs, body, _mover(where, moved[1]))
            self.replayed.update(id(op) for op in body.ops[n:])
            self.used.append((key, entry.value))
            fe.deps |= entry.deps
            with _lock:
                if key in _memo:
                    _memo.move_to_end(key)
            stats["replayed"] += 1
            return
        self.held.clear()
        before, n, prefix = state(fe), len(body.ops), list(body.ops)
        outer_deps = fe.deps
        fe.deps = set()  # everything this statement reads
        logged = _Count()
        logging.getLogger("qdlab").addHandler(logged)
        try:
            fe.visit(node)
        finally:
            logging.getLogger("qdlab").removeHandler(logged)
            mine = fe.deps
            fe.deps = outer_deps | mine
        stats["lowered"] += 1
        if (
            logged.n
            or state(fe) != before
            or len(body.ops) < n
            or any(a is not b for a, b in zip(body.ops, prefix))
        ):
            self.clean = False
            return
        entry = self._entry(body.ops[n:], body, frozenset(mine), fe.scope.source)
        if entry is not None:
            self.remember(key, entry)
            self.save(key, entry)
            self.used.append((key, entry.value))

    def finish(self) -> None:
        """The statements this compile replayed or stored, kept together on disk as the kernel's
        bundle (`persist.Bundle`)."""
        _bundles.keep(self.store, self.ctx, self.used)

    def remember(self, key: tuple, entry: Entry) -> None:
        with _lock:
            _memo[key] = entry
            while len(_memo) > LIMIT:
                _memo.popitem(last=False)

    def load(self, key: tuple) -> Entry | None:
        """The entry another process stored for `key`, if the disk tier holds it (and remembered
        here); None when it does not, or cannot be read."""
        got = _bundles.take(self.store, self.ctx, key, stats)
        if got is None and self.store is not None:
            got = persist.load(self.store, "statement", key)
            stats["reads"] += 1
        if got is None:
            return None
        try:
            if not isinstance(got, (tuple, list)):
                return None
            rows, inputs, setup, deps = got
            outside = [ir.Value(i32, "outside") for _ in inputs]  # stand-ins: rows never type them
            persist.unflatten(rows, outside, ir.Block())  # rows that build, once, or none at all
            entry = Entry(rows, [int(i) for i in inputs], int(setup), frozenset(deps))
        except (TypeError, ValueError, IndexError):  # damaged, or of an older layout: lowered
            return None
        self.remember(key, entry)
        stats["loaded"] += 1
        return entry

    def save(self, key: tuple, entry: Entry) -> None:
        persist.save_later(self.store, "statement", key, entry.value)

    def _entry(
        self, ops: list[ir.Op], body: ir.Block, deps: frozenset, source: Source
    ) -> Entry | None:
        """The statement's ops as rows, their locations made relative to the kernel's first line;
        None if they use a value other than their own and the arguments' setup, come from other
        lines than the kernel's, make a real call, or read something without a fingerprint."""
        if any(fp == manifest.UNKNOWN for _, _, fp in deps):
            return None
        name, filename = self.ctx[1], source.filename
        if any(
            o.loc is not None and (o.loc.kernel != name or o.loc.filename != filename)
            for top in ops
            for o in top.walk()
        ):
            return None
        setup_pos = {op.result: k for k, op in enumerate(body.ops[: self.setup]) if op.result}
        own: set[ir.Value] = set()
        locs: dict[int, SourceLoc] = {}
        for op in (o for top in ops for o in top.walk()):
            own.update(a for r in op.regions for a in r.args)
            if op.result is not None:
                own.add(op.result)
            if op.loc is not None:
                locs[id(op.loc)] = op.loc
        outside: dict[ir.Value, int] = {}
        for op in (o for top in ops for o in top.walk()):
            for v in op.operands:
                if v in own or v in outside:
                    continue
                if v not in setup_pos:
                    return None
                outside[v] = setup_pos[v]
        first = source.first_line
        stored: dict[int, SourceLoc] = {}
        try:
            rows = persist.flatten(ops, list(outside), _mover(("", -first), stored))
        except (KeyError, TypeError):  # a real call: its function is not the statement's
            return None
        here = {id(to): locs[k] for k, to in stored.items()}  # moved back to where they are
        moved = ((source.filename, first), here)
        return Entry(rows, list(outside.values()), self.setup, deps, moved)
