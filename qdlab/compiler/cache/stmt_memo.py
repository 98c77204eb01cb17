"""The statement memo: a statement that has not changed is not lowered again.

Editing one loop of a big kernel lowers that loop; the others are replayed from what lowering them
gave last time (their ops, rebuilt from rows). A kernel's top-level statement that is a call of a
`@qd.func` (every Genesis kernel is one or a few such calls) has that function's statements memoised
one by one in turn, and so on down: an edit deep inside a solver lowers the statements on the path
to it and the edited statement, and replays the rest. A statement is replayed only when everything
its lowering could see is the same:

- the kernel's context (`context`): its name, its indentation, its parameters and return types,
  its signature (template arguments by content; a kernel with one known only by identity or by the
  members it read is always lowered), the options of the compile. Its file and first line may
  differ (a notebook cell run again is a new file): the replayed ops' locations are rebased onto
  where the kernel is now, as the manifest does;
- the statement itself: its source lines and where it starts in its body (its AST, positions
  included, follows from them); inside a function, the function's file, name and header, and the
  statements whose calls led there (`_Level.path`);
- what it read while lowering: every global, closure value and `@qd.func` source it recorded, each
  checked against its fingerprint now, and every compile-time call evaluated again (the manifest's
  check, `manifest.deps_hold`), and what the calls that led to its body read (but the function's
  own source, which its statements' texts and its header stand for);
- the frontend's state before it, which must be the state its body began with, or that state with
  values the key then holds (`_delta`: `B = qd.static(flag)`, a loop setting pending); after a
  statement left an object behind (a local bound to a value of the IR, a field's hidden parameter)
  none is, until the state is the body's again.

A statement is stored only if its lowering appended its ops to the kernel body, left the frontend's
state as it found it but for plain settings (`_sets`: the entry sets them again) and recorded
findings (struct members read, vector entries' names, the first nested loop: `Entry.records`, set
again too), logged nothing, and its ops use no value from outside themselves other than the
arguments' setup. Ops from a `@qd.func`'s lines keep their locations relative to that function's
first line (`Entry.anchors`), found again through its owner path: a function moved in its file
reports its new lines. A statement whose call's body went through the memo is not stored itself
(each op is kept once). When in doubt, it is lowered. `QDLAB_STMT_MEMO=0` turns the memo off
(differential tests compare both, and the random programs call their whole body as a function).

Each entry stored is also written to the disk tier of the compile's cache (`BinaryCache.put_own`,
keyed by `keys.memo_key`: its key and the compiler version), so a new process that compiles the
kernel with one statement edited replays the others from there: an entry the process does not hold
is looked for on disk before the statement is lowered. Its reads are checked as any entry's.
The entries a compile used are also written together, as the kernel's bundle
(`persist.Bundle`): a new process reads them in one step.
"""

from __future__ import annotations

import ast
import itertools
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from ...core.errors import SourceLoc
from .. import ir
from ..frontend.fingerprint import func_fingerprint
from . import manifest, persist

if TYPE_CHECKING:
    from ..frontend.source import Source


class _Scope(Protocol):
    source: Source
    owner: str


class Lowering(Protocol):
    """What the memo uses of the frontend that lowers the kernel (`Frontend`)."""

    kernel: ir.Kernel
    scope: _Scope
    deps: set
    """What lowering has read so far: (owner path, name, fingerprint) of each read."""

    def visit(self, node: ast.AST) -> object: ...

    def note_member(self, root: str, path: tuple[str, ...], kind: str) -> None: ...


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
    first, their locations relative to the kernel's first line (file name left empty) or to their
    anchor's (file name `@` and its number)."""
    inputs: list[int]
    """The position in the kernel body of the setup op of each value numbered first."""
    setup: int
    """How many ops the arguments' setup had."""
    deps: frozenset
    """(owner path, name, fingerprint) of everything the statement read (and of what the calls
    that led to its body read first)."""
    records: tuple = ((), (), None, ())
    """What its lowering recorded in the kernel's flags and left set, which a replay does again:
    (parameter, attribute path, kind) of each struct member it read first
    (`Frontend.note_member`); (entry, vector) of each vector local's entry name
    (`KernelFlags.entries`); the number, in walk order, of its op whose location became the
    kernel's first nested `range` loop, or None; (attribute, value) of each setting it changed
    (`_sets`)."""
    anchors: tuple = ()
    """(owner path, code file, first line, file name, name) of each `@qd.func` whose lines its ops
    come from: found again by the owner path, its ops' locations move with its first line (its
    text is a dependency: equal, so only its place may differ)."""
    moved: tuple = ((), {})
    """The latest place it was replayed at ((file name, first line), where each anchor is) and
    its locations moved there, by the id of the stored location: replaying at the same place
    again makes none anew."""

    def value(self) -> tuple:
        """What its entry on disk holds."""
        return self.rows, self.inputs, self.setup, self.deps, self.records, self.anchors


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


_RECORDS = frozenset({"members", "entries", "nested_range"})
"""Kernel flags that record what statements found, which an entry carries (`Entry.records`)."""


def state(fe: object) -> tuple:
    """Everything of the frontend a statement could leave behind, but the kernel body's ops and
    the kernel flags that record findings (an entry keeps those, `Entry.records`)."""
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
            _shape({k: v for k, v in kernel.flags.items() if k not in _RECORDS}),
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


def _header(source: Source) -> str:
    """A function's text up to its body: its decorators and parameters' AST are a function of it."""
    first = source.tree.body[0]
    lines = source.lines
    cut = source.indent + first.col_offset
    return "".join(lines[: first.lineno - 1]) + lines[first.lineno - 1][:cut]


class _Identity(Exception):
    """A state differs by an object's identity: no key can say it."""


def _has_id(shape: object) -> bool:
    if isinstance(shape, tuple):
        return (len(shape) == 2 and shape[0] == "id") or any(_has_id(x) for x in shape)
    if isinstance(shape, frozenset):
        return any(_has_id(x) for x in shape)
    return False


def _delta(a: object, b: object) -> object:
    """How state `b` differs from state `a` (as `state` describes them), in values only: compile-
    time names bound to numbers, strings or flags (`BW = qd.static(is_backward)`), a loop's setting
    pending. `_Identity` when an object differs, or was bound, by identity (a value of the IR)."""
    if a == b:
        return ()
    if (
        isinstance(a, tuple)
        and isinstance(b, tuple)
        and len(a) == len(b) == 2
        and a[0] == b[0] == "dict"
    ):
        old, new = dict(a[1]), dict(b[1])
        out: list[tuple] = [("-", k) for k in old if k not in new]
        for k, v in new.items():
            if k not in old:
                if _has_id(v):
                    raise _Identity
                out.append(("+", k, v))
            elif old[k] != v:
                out.append(("~", k, _delta(old[k], v)))
        return ("dict", tuple(out))
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
        return tuple((k, _delta(x, y)) for k, (x, y) in enumerate(zip(a, b)) if x != y)
    if _has_id(a) or _has_id(b):
        raise _Identity
    return ("=", b)


def context(spec: Spec, source: Source, config: dict) -> tuple | None:
    """What every statement of this kernel's compile shares; None when the memo must stay out: a
    kernel with a template argument known only by identity or by the members it read (a solver
    object, a field: its signature names it by type) is always lowered."""
    if not enabled() or config.get("fresh"):
        return None
    signature = getattr(spec, "signature", "")
    if getattr(spec, "templates", None) and (
        getattr(spec, "by_members", None) or not signature or manifest.UNKNOWN in signature
    ):
        return None
    try:
        header = _header(source)
        return (
            source.indent,
            spec.name,
            repr(spec.params),
            repr(spec.returns),
            repr(spec.return_shapes),
            bool(spec.autodiff),
            repr(sorted(config.items(), key=lambda kv: kv[0])),
            header,
            signature,
        )
    except Exception:  # noqa: BLE001 - a repr that fails: no memo for this kernel
        return None


Placed = tuple[tuple[str, int], ...]
"""Where each anchor of an entry is now: (file name, first line) of its function."""


def _mover(where: tuple[str, int], placed: Placed, moved: dict[int, SourceLoc]) -> Callable:
    """What moves a stored location to where it is now, each one once (`moved` keeps them by the
    id of the stored one): one of the kernel's own lines (stored with an empty file name) into
    `where` (a file name, and the line number to add); one of a `@qd.func` (stored with the
    number of its anchor as file name) into its function's file, from that function's first
    line (`placed`)."""

    def move(loc: SourceLoc) -> SourceLoc:
        got = moved.get(id(loc))
        if got is None:
            filename, add = placed[int(loc.filename[1:])] if loc.filename else where
            got = moved[id(loc)] = SourceLoc(
                loc.kernel, filename, loc.lineno + add, loc.col, loc.source_line, loc.end_col
            )
        return got

    return move


def _sets(before: tuple, after: tuple) -> tuple | None:
    """The frontend's settings a statement left changed, from its state before and after (`state`):
    (attribute, value) of each that holds a number, a string, a flag or None before and after (a
    loop's setting `qd.loop_config` leaves for the next loop, which that loop clears); None when
    it changed anything else (a name bound, a table)."""
    if len(before) != len(after):
        return None
    out = []
    for a, b in zip(before, after):
        if a == b:
            continue
        if a[0] in ("kernel", "scope") or not (_plain(a[1]) and _plain(b[1])):
            return None
        out.append((a[0], b[1]))
    return tuple(out)


def _plain(shape: object) -> bool:
    return shape is None or isinstance(shape, (bool, int, float, str))


def _records(flags: ir.KernelFlags, before: tuple, ops: list[ir.Op], sets: tuple) -> tuple | None:
    """What a statement recorded in the kernel's flags, and the settings it left (`Entry.records`),
    given the flags before it; None when its first nested loop's location is not one of its
    ops'."""
    members, entries, nested = before
    read = tuple(
        (root, path, kind)
        for (root, path), kind in flags.members.items()
        if members.get((root, path)) != kind
    )
    named = tuple((e, v) for e, v in flags.entries.items() if entries.get(e) != v)
    first = None
    if nested is None and flags.nested_range is not None:
        locs = [o.loc for top in ops for o in top.walk()]
        first = next((k for k, loc in enumerate(locs) if loc is flags.nested_range), None)
        if first is None:
            return None
    return read, named, first, sets


class _Count(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.n = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.n += 1


@dataclass
class _Level:
    """The statements of one body the memo lowers: the kernel's, or the body of a `@qd.func`
    called by a statement it is lowering (`Memo.lower_body`)."""

    path: tuple
    """The keys, in their bodies, of the statements whose calls led here (outermost first)."""
    deps: frozenset
    """What those statements read before this body began (the function's source and name, its
    arguments): every entry of this body holds only while they hold too."""
    start: tuple | None = None
    """The frontend's state when the body began, which the path determines. A statement is
    replayed or stored only when the state before it is that one, or differs from it by values
    its key then holds (`_delta`): after an earlier statement left an object behind (a local
    bound to a value of the IR), none is."""


class Memo:
    """One kernel compile's use of the memo (`Frontend.memo`)."""

    def __init__(
        self,
        ctx: tuple,
        fn: object,
        setup: int,
        store: persist.Store | None = None,
        templates: dict | None = None,
        source: Source | None = None,
    ) -> None:
        self.ctx, self.fn, self.setup, self.store = ctx, fn, setup, store
        """`store`: the compile's `BinaryCache`, whose disk tier holds entries of other
        processes."""
        self.templates = templates or {}
        """The kernel's template arguments (what its reads may start from)."""
        self.source = source
        """The kernel's source (statements of a `@qd.func` are lowered in that function's)."""
        self.levels = [_Level((), frozenset())]
        self.current: list[tuple[ast.stmt, tuple, int]] = []
        """The statements being lowered (not replayed), innermost last: node, key in its body,
        level."""
        self.nested: set[int] = set()
        """The depths in `current` of statements whose call's body was lowered through the memo:
        not stored themselves (their body's statements are, one by one: storing both would keep
        each op once per level)."""
        self.sources: dict[tuple[str, str], set[tuple[str, str, int]]] = {}
        """(file name, function name) -> (owner path, code file, first line) of each `@qd.func`
        inlined or replayed: the anchors of their ops' locations."""
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
            held = self.held[deps] = manifest.deps_hold(self.fn, deps, self.templates)
        return held

    def part(self, fe: Lowering, node: ast.stmt) -> tuple:
        """The statement's key in its body: its lines (whole, so a comment or a second statement
        on them counts) and where it starts there (its AST, positions included, is a function of
        them); in a function's body, that function's file and name as well."""
        source = fe.scope.source
        text = "".join(source.lines[node.lineno - 1 : (node.end_lineno or node.lineno)])
        if len(self.levels) == 1:
            return (node.lineno, node.col_offset, text)
        return (source.filename, source.tree.name, node.lineno, node.col_offset, text)

    def note(self, owner: str, source: Source) -> None:
        """A `@qd.func` is being inlined (by `owner`, its path from the kernel)."""
        code = getattr(source.fn, "__code__", None)
        if code is not None:
            self.sources.setdefault((source.filename, source.tree.name), set()).add(
                (owner, code.co_filename, code.co_firstlineno)
            )

    def nests(self, fe: Lowering, site: ast.Call) -> bool:
        """Whether the body of the `@qd.func` called at `site` is lowered statement by statement
        through the memo: the call is the whole of a statement the memo is lowering (not
        replaying), at the kernel's top level."""
        if not self.current:
            return False
        node, _, level = self.current[-1]
        return (
            level == len(self.levels) - 1
            and isinstance(node, ast.Expr)
            and node.value is site
            and getattr(fe, "block", None) is fe.kernel.body
        )

    def lower_body(self, fe: Lowering, stmts: list[ast.stmt]) -> None:
        """The statements of a `@qd.func`'s body (`nests`), each lowered or replayed. Its entries
        hold while what the call read holds but the function's own source: what its statements
        depend on of that is their text (in their keys), its header (in the path) and what the
        statements before them left (the state, `_Level.start`)."""
        _, part, _ = self.current[-1]
        self.nested.add(len(self.current))
        outer, scope = self.levels[-1], fe.scope
        fn = scope.source.fn
        own = func_fingerprint(fn)  # the function found by its name
        read = frozenset(fe.deps)
        if getattr(fn, "__defaults__", None) is None and not getattr(fn, "__kwdefaults__", None):
            # no defaults, whose values would bind parameters: all it holds is its text
            read = frozenset(d for d in read if d[:2] != (scope.owner, "<source>") and d[2] != own)
        self.levels.append(_Level((*outer.path, part, _header(scope.source)), outer.deps | read))
        try:
            for s in stmts:
                self.lower(fe, s)
        finally:
            self.levels.pop()

    def lower(self, fe: Lowering, node: ast.stmt) -> None:
        """Lower one statement of the kernel's body (or of a body `lower_body` lowers): replayed
        when its entry holds, else visited (and stored when it is self-contained)."""
        level = self.levels[-1]
        before = state(fe)
        if level.start is None:
            level.start = before
        try:
            delta = _delta(level.start, before)
        except _Identity:
            fe.visit(node)
            stats["lowered"] += 1
            return
        body = fe.kernel.body
        part = self.part(fe, node) + ((delta,) if delta else ())
        key = (self.ctx, *part) if len(self.levels) == 1 else (self.ctx, *level.path, part)
        with _lock:
            entry = _memo.get(key)
        if entry is None:
            entry = self.load(key)
        if entry is not None and entry.setup == self.setup and self.holds(entry.deps):
            placed = self.placed(entry.anchors)
            if placed is not None and self.replay(fe, key, entry, placed):
                return
        self.held.clear()
        n, prefix = len(body.ops), list(body.ops)
        flags = fe.kernel.flags
        flags = (dict(flags.members), dict(flags.entries), flags.nested_range)
        outer_deps = fe.deps
        fe.deps = set()  # everything this statement reads
        logged = _Count()
        logging.getLogger("qdlab").addHandler(logged)
        self.current.append((node, part, len(self.levels) - 1))
        depth = len(self.current)
        try:
            fe.visit(node)
        finally:
            self.current.pop()
            nested = depth in self.nested
            self.nested.discard(depth)
            logging.getLogger("qdlab").removeHandler(logged)
            mine = fe.deps
            fe.deps = outer_deps | mine
        stats["lowered"] += 1
        sets = _sets(before, state(fe))
        if (
            logged.n
            or sets is None
            or len(body.ops) < n
            or any(a is not b for a, b in zip(body.ops, prefix))
        ):
            return
        records = None if nested else _records(fe.kernel.flags, flags, body.ops[n:], sets)
        if records is None:
            return
        entry = self._entry(body.ops[n:], body, frozenset(mine) | level.deps, fe, records)
        if entry is not None:
            self.remember(key, entry)
            self.save(key, entry)
            self.used.append((key, entry.value))

    def replay(self, fe: Lowering, key: tuple, entry: Entry, placed: Placed) -> bool:
        """The entry's ops appended to the kernel's body; False, with the body and its values as
        they were, when its rows do not build (an entry from disk is built here for the first time:
        damaged, or of an older layout, it is forgotten and the statement lowered)."""
        body = fe.kernel.body
        where = (self._kernel(fe).filename, self._kernel(fe).first_line)
        moved = entry.moved  # one read: another thread may replace it meanwhile
        if moved[0] != (where, placed):
            moved = entry.moved = ((where, placed), {})
        ops, inputs, users = ir.Block(), list[ir.Value](), list[int]()
        try:
            for pos in entry.inputs:  # the setup ops whose values it uses
                v = body.ops[pos].result
                if v is None:
                    raise ValueError(pos)
                inputs.append(v)
                users.append(len(v.users))
            persist.unflatten(entry.rows, inputs, ops, _mover(where, placed, moved[1]))
        except (TypeError, ValueError, IndexError, KeyError, AttributeError):
            for v, k in zip(inputs, users):  # the ops built so far are no value's users
                del v.users[k:]
            with _lock:
                _memo.pop(key, None)
            return False
        n = len(body.ops)
        for op in ops.ops:
            op.parent = body
        body.ops.extend(ops.ops)
        self.replayed.update(id(op) for op in body.ops[n:])
        self.used.append((key, entry.value))
        fe.deps |= entry.deps
        members, entries, nested, sets = entry.records
        for attr, value in sets:
            setattr(fe, attr, value)
        for root, path, kind in members:
            fe.note_member(root, path, kind)
        fe.kernel.flags.entries.update(entries)
        if nested is not None and fe.kernel.flags.nested_range is None:
            fe.kernel.flags.nested_range = next(
                itertools.islice((o.loc for top in body.ops[n:] for o in top.walk()), nested, None)
            )
        for (owner, code_file, _, filename, name), (_, first) in zip(entry.anchors, placed):
            self.sources.setdefault((filename, name), set()).add((owner, code_file, first))
        with _lock:
            if key in _memo:
                _memo.move_to_end(key)
        stats["replayed"] += 1
        return True

    def _kernel(self, fe: Lowering) -> Source:
        return self.source if self.source is not None else fe.scope.source

    def placed(self, anchors: tuple) -> Placed | None:
        """Where each anchor's function is now (file name, first line), or None when one cannot
        be found again in the same file."""
        out = []
        for owner, code_file, _, filename, _ in anchors:
            fn = manifest.function(self.fn, owner, self.templates)
            code = getattr(fn, "__code__", None)
            if code is None or code.co_filename != code_file:
                return None
            out.append((filename, code.co_firstlineno))
        return tuple(out)

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
            rows, inputs, setup, deps, (members, entries, nested, sets), anchors = got
            entry = Entry(
                rows,
                [int(i) for i in inputs],
                int(setup),
                frozenset(deps),
                (
                    tuple((str(r), tuple(map(str, p)), str(k)) for r, p, k in members),
                    tuple((str(e), str(v)) for e, v in entries),
                    None if nested is None else int(nested),
                    tuple((str(a), v) for a, v in sets if _plain(v)),
                ),
                tuple((str(o), str(c), int(f), str(n), str(m)) for o, c, f, n, m in anchors),
            )
        except (TypeError, ValueError, IndexError):  # damaged, or of an older layout: lowered
            return None
        self.remember(key, entry)
        stats["loaded"] += 1
        return entry

    def save(self, key: tuple, entry: Entry) -> None:
        persist.save_later(self.store, "statement", key, entry.value)

    def _entry(
        self, ops: list[ir.Op], body: ir.Block, deps: frozenset, fe: Lowering, records: tuple
    ) -> Entry | None:
        """The statement's ops as rows, their locations made relative to the kernel's first line,
        or to the first line of the `@qd.func` they come from (its anchor); None if they use a
        value other than their own and the arguments' setup, come from a function inlined from
        two places that differ, make a real call, or read something without a fingerprint."""
        if any(fp == manifest.UNKNOWN for _, _, fp in deps):
            return None
        name, kernel = self.ctx[1], self._kernel(fe)
        setup_pos = {op.result: k for k, op in enumerate(body.ops[: self.setup]) if op.result}
        own: set[ir.Value] = set()
        locs: dict[int, SourceLoc] = {}
        anchors: dict[tuple[str, str], int] = {}
        rows_of_anchors: list[tuple[str, str, int, str, str]] = []
        for op in (o for top in ops for o in top.walk()):
            own.update(a for r in op.regions for a in r.args)
            if op.result is not None:
                own.add(op.result)
            loc = op.loc
            if loc is None:
                continue
            locs[id(loc)] = loc
            at = (loc.filename, loc.kernel)
            if (loc.kernel == name and loc.filename == kernel.filename) or at in anchors:
                continue
            seen = self.sources.get(at, set())
            if len({(c, f) for _, c, f in seen}) != 1:
                return None  # not inlined here, or two functions of one name in one file
            owner, code_file, first = min(seen)
            anchors[at] = len(rows_of_anchors)
            rows_of_anchors.append((owner, code_file, first, loc.filename, loc.kernel))
        outside: dict[ir.Value, int] = {}
        for op in (o for top in ops for o in top.walk()):
            for v in op.operands:
                if v in own or v in outside:
                    continue
                if v not in setup_pos:
                    return None
                outside[v] = setup_pos[v]
        stored: dict[int, SourceLoc] = {}

        def relative(loc: SourceLoc) -> SourceLoc:
            got = stored.get(id(loc))
            if got is None:
                k = None
                if loc.kernel != name or loc.filename != kernel.filename:
                    k = anchors[(loc.filename, loc.kernel)]
                got = stored[id(loc)] = SourceLoc(
                    loc.kernel,
                    "" if k is None else f"@{k}",
                    loc.lineno - (kernel.first_line if k is None else rows_of_anchors[k][2]),
                    loc.col,
                    loc.source_line,
                    loc.end_col,
                )
            return got

        try:
            rows = persist.flatten(ops, list(outside), relative)
        except (KeyError, TypeError):  # a real call: its function is not the statement's
            return None
        here = {id(to): locs[k] for k, to in stored.items()}  # moved back to where they are
        placed = tuple((row[3], row[2]) for row in rows_of_anchors)
        moved = (((kernel.filename, kernel.first_line), placed), here)
        anchors_out = tuple(rows_of_anchors)
        return Entry(rows, list(outside.values()), self.setup, deps, records, anchors_out, moved)
