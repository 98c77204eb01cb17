"""The construct memo: a construct whose slice has not changed is not sliced, simplified, printed,
keyed or offloaded again.

After the kernel is lowered (the statement memo replays its unchanged statements), simplified and
split, each construct's slice is described by `Session.describe`: a walk of the ops it would clone,
which records every thing `pipeline.prepare` could see of them: each op's class, operands (numbered
inside the slice), attributes (their `repr`, as the printed IR has them), result type and name,
block arguments, and location (its kernel, column, source text, and line relative to the kernel's
first line; a location in another file, from a `@qd.func`, is recorded whole). The kernel's
parameters, returns and flags, the compile options and the target are part of every description. A
slice that reads a value from outside itself, takes part in an interface hand-over, or makes a real
call (a recursive `@qd.real_func`, whose body the walk does not describe) is not described: it is
prepared every time.

Two slices with equal descriptions clone into equal kernels, so `prepare` gives them equal results:
the memo keeps the first one's `Prepared` and serves it. When the kernel has moved (a notebook cell
run again is a new file; lines added above it) the served construct's IR, plan and messages are
moved with it: its messages at once, its IR and plan when something asks for them (a report, an
emitter). The memo lives in the process, and each construct it stores is also written to the disk
tier of the compile's cache (`BinaryCache.put_own`, keyed by `keys.memo_key`), where a new process
looks for one it does not hold (the constructs a compile used go there together too, as the
kernel's bundle: `persist.Bundle`); `QDLAB_CONSTRUCT_MEMO=0` turns it off (differential tests
compare both).
"""

from __future__ import annotations

import functools
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace

from ...core import keys
from ...core.errors import SourceLoc
from .. import ir, runtime
from ..codegen.offload import Plan, message_ops, offload
from . import persist

LIMIT = 1024
"""Constructs kept (least recently used go first): each keeps its description and canonical IR."""

_memo: OrderedDict[tuple, tuple[Prepared, tuple[str, int], Callable[[], tuple]]] = OrderedDict()
"""key -> the construct, where its kernel was (file, first line), what its disk entry holds."""
_lock = threading.Lock()
stats = {"served": 0, "prepared": 0, "loaded": 0, "reads": 0}
"""Counts since the process started (tests and the profile read them): `loaded` the constructs
taken from disk, `reads` the disk reads made for them."""
_bundles = persist.Bundle("construct")
"""Each kernel's constructs together on disk, by what its descriptions share."""


def enabled() -> bool:
    return os.environ.get("QDLAB_CONSTRUCT_MEMO", "1") != "0"


def clear() -> None:
    with _lock:
        _memo.clear()


@dataclass(frozen=True)
class UnitFacts:
    """What a launch needs of a unit's plan (`runtime.Unit` but its functions)."""

    kinds: list[str]
    reduces: list[bool]
    tmp_bytes: int
    messages: list[runtime.Message]
    block_dims: list[int]


class Prepared:
    """A unit ready to be looked up: its canonical IR, that IR's text and key, its plan and symbol
    prefix. A construct served by the memo for a kernel that moved, or read from disk, gets its IR
    and plan (moved, or made from the rows read) on first use."""

    def __init__(
        self,
        kernel: ir.Kernel | None,
        text: str,
        key: str,
        plan: Plan | None,
        prefix: str,
        moved: Callable[[], tuple[ir.Kernel, Plan]] | None = None,
        facts: dict[bool, UnitFacts] | None = None,
    ) -> None:
        self._kernel, self._plan, self._moved = kernel, plan, moved
        self.text, self.key, self.prefix = text, key, prefix
        self._facts: dict[bool, UnitFacts] = dict(facts or {})

    def _settle(self) -> tuple[ir.Kernel, Plan]:
        if self._moved is not None:
            self._kernel, self._plan = self._moved()
            self._moved = None
        assert self._kernel is not None and self._plan is not None  # given, or made when moved
        return self._kernel, self._plan

    @property
    def kernel(self) -> ir.Kernel:
        return self._settle()[0]

    @property
    def plan(self) -> Plan:
        return self._settle()[1]

    @property
    def name(self) -> str:
        """What the loader knows it by: its key, or its prefix for a fresh (`--no-cache`)
        compile."""
        return self.key if self.prefix == keys.prefix(self.key) else self.prefix

    def facts(self, debug: bool) -> UnitFacts:
        if debug not in self._facts:
            p = self.plan
            ops = message_ops([op for t in p.tasks for op in t.ops], debug)
            self._facts[debug] = UnitFacts(
                [t.kind for t in p.tasks],
                [bool(t.reductions or t.memory_reductions) for t in p.tasks],
                p.tmp_bytes,
                [runtime.Message.of(op) for op in ops],
                [t.block_dim for t in p.tasks],
            )
        return self._facts[debug]


def _move(loc: SourceLoc | None, frm: str, to: str, delta: int) -> SourceLoc | None:
    if loc is None or loc.filename != frm:
        return loc
    return replace(loc, filename=to, lineno=loc.lineno + delta)


def _moved(p: Prepared, frm: tuple[str, int], to: tuple[str, int]) -> Prepared:
    """`p` for the same kernel at `to` (file, first line) instead of `frm`."""
    delta = to[1] - frm[1]

    def make() -> tuple[ir.Kernel, Plan]:
        old = p.kernel
        k = ir.Kernel(old.name, old.params, old.returns, ir.Block(), old.flags.copy())
        ir.clone_ops(old.body.ops, {}, k.body)
        moved: dict[int, SourceLoc | None] = {}
        for op in k.walk():
            if op.loc is not None:
                if id(op.loc) not in moved:
                    moved[id(op.loc)] = _move(op.loc, frm[0], to[0], delta)
                op.loc = moved[id(op.loc)]
        return k, offload(k)

    facts = {
        debug: replace(
            f,
            messages=[replace(m, loc=_move(m.loc, frm[0], to[0], delta)) for m in f.messages],
        )
        for debug, f in p._facts.items()
    }
    return Prepared(None, p.text, p.key, None, p.prefix, make, facts)


class Session:
    """One compile's use of the memo: describes its constructs' slices, serves and stores them."""

    def __init__(
        self,
        kernel: ir.Kernel,
        where: tuple[str, int],
        shared: tuple,
        store: persist.Store | None = None,
    ) -> None:
        self.kernel, self.where, self.store = kernel, where, store
        self.locs: dict[int, tuple] = {}
        self.used: list[tuple[tuple, Callable[[], tuple]]] = []
        """(key, what its disk entry holds) of each construct served or stored."""
        self.types: dict[int, str] = {}
        """The text of each type, by its id (the session's kernel holds every one of them)."""
        self.heads: dict[tuple, tuple[list, dict]] = {}
        """The descriptions of leading block-less ops, and the numbers they gave their values, by
        their positions: described once for every slice that starts with them."""
        self.shared = (
            kernel.name,
            repr(kernel.params),
            repr(kernel.returns),
            repr(sorted((k, self._flag(v)) for k, v in kernel.flags.items())),
            *shared,
        )

    def _flag(self, v: object) -> object:
        return self._loc(v) if isinstance(v, SourceLoc) else repr(v)

    def _loc(self, loc: SourceLoc | None) -> tuple | None:
        if loc is None:
            return None
        got = self.locs.get(id(loc))
        if got is None:
            if loc.filename == self.where[0]:
                line: tuple = ("kernel", loc.lineno - self.where[1])
            else:
                line = ("file", loc.filename, loc.lineno)
            got = self.locs[id(loc)] = (loc.kernel, *line, loc.col, loc.end_col, loc.source_line)
        return got

    def describe(self, positions: list[int]) -> tuple | None:
        """Everything `prepare` could see of the slice cloned from `positions`; None when it reads
        a value from outside them."""
        number: dict[ir.Value, int] = {}
        locs, types, loc_of, Call, attrs_key = (
            self.locs,
            self.types,
            self._loc,
            ir.Call,
            ir.attrs_key,
        )

        def op_of(op: ir.Op) -> tuple:  # the hottest walk of an edit: locals, no helpers
            if isinstance(op, Call):  # its function's body is not described: prepared each time
                raise TypeError(op)
            regions = op.regions
            heads = []
            for r in regions:
                args = []
                for a in r.args:
                    number[a] = len(number)
                    t = types.get(id(a.type))
                    if t is None:
                        t = types[id(a.type)] = str(a.type)
                    args.append((t, a.name))
                heads.append(tuple(args))
            operands = tuple([number[v] for v in op.operands])  # KeyError: from outside
            res = op.result
            if res is not None:
                number[res] = len(number)
                t = types.get(id(res.type))
                if t is None:
                    t = types[id(res.type)] = str(res.type)
                res = (t, res.name)
            loc = op.loc
            return (
                type(op),
                operands,
                attrs_key(op.attrs),
                res,
                None if loc is None else locs.get(id(loc)) or loc_of(loc),
                tuple([(h, tuple([op_of(o) for o in r.ops])) for h, r in zip(heads, regions)])
                if heads
                else (),
            )

        ops = self.kernel.body.ops
        n = 0  # the leading ops without blocks (parameters, shapes): most slices share a few sets
        while n < len(positions) and not ops[positions[n]].regions:
            n += 1
        head = tuple(positions[:n])
        try:
            got = self.heads.get(head)
            if got is None:
                got = self.heads[head] = ([op_of(ops[p]) for p in head], dict(number))
            else:
                number.update(got[1])
            return (self.shared, tuple(got[0] + [op_of(ops[p]) for p in positions[n:]]))
        except Exception:  # noqa: BLE001 - a value from outside, an attribute without a repr
            return None

    def get(self, key: tuple) -> Prepared | None:
        with _lock:
            got = _memo.get(key)
            if got is not None:
                _memo.move_to_end(key)
        if got is None:
            got = self.load(key)
        if got is None:
            return None
        stats["served"] += 1
        prepared, base, value = got
        self.used.append((key, value))
        return prepared if base == self.where else _moved(prepared, base, self.where)

    def put(self, key: tuple, prepared: Prepared, debug: bool) -> None:
        prepared.facts(debug)  # what a served copy's launch needs, ready before it moves
        stats["prepared"] += 1
        p, where = prepared, self.where

        @functools.cache  # once: each bundle that holds it writes it again
        def value() -> tuple:
            k = p.kernel
            rows = persist.dumps(persist.flatten(k.body.ops, []))  # unpickled when the IR is asked
            return (
                k.name,
                k.params,
                k.returns,
                k.flags,
                rows,
                p.text,
                p.key,
                p.prefix,
                p._facts,
                where,
            )

        self.remember(key, (prepared, self.where, value))
        self.used.append((key, value))
        persist.save_later(self.store, "construct", key, value)

    def finish(self) -> None:
        """The constructs this compile served or stored, kept together on disk as the kernel's
        bundle (`persist.Bundle`)."""
        _bundles.keep(self.store, self.shared, self.used)

    def remember(self, key: tuple, got: tuple) -> None:
        with _lock:
            _memo[key] = got
            while len(_memo) > LIMIT:
                _memo.popitem(last=False)

    def load(self, key: tuple) -> tuple | None:
        """What another process stored for `key`, if the disk tier holds it (and remembered here);
        None when it does not, or cannot be read."""
        got = _bundles.take(self.store, self.shared, key, stats)
        if got is None and self.store is not None:
            got = persist.load(self.store, "construct", key)
            stats["reads"] += 1
        if got is None:
            return None
        entry = got
        try:
            if not isinstance(got, (tuple, list)):
                return None
            name, params, returns, flags, rows, text, key_, prefix, facts, base = got
            if not isinstance(flags, ir.KernelFlags) or not isinstance(rows, bytes):
                return None
        except (TypeError, ValueError):  # damaged, or of an older layout: prepared anew
            return None

        def make() -> tuple[ir.Kernel, Plan]:  # its IR, when something asks for it
            k = ir.Kernel(name, params, returns, ir.Block(), flags)
            ops = persist.loads(rows)
            if not isinstance(ops, list):
                raise TypeError(f"construct {key_}: its IR in the cache cannot be read")
            persist.unflatten(ops, [], k.body)
            return k, offload(k)

        got = (Prepared(None, text, key_, None, prefix, make, facts), base, lambda: entry)
        self.remember(key, got)
        stats["loaded"] += 1
        return got
