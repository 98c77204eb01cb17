"""The recompute-safety gate: may this kernel be compiled construct by construct?

One table, one row per reason code: (code, predicate, message, handover). A predicate looks at the
split (constructs and their slices) and at the effects the ops declare, and returns what it found
(the statement that makes the split unsafe, the statement that blocks it, the facts its message
names, and the value whose hand-over would remove the reason) or None; it changes nothing. The first
row that fires sends the kernel down the whole-kernel path, unless the row allows a hand-over
through the interface buffer (`handover`), which the pipeline then tries. Apart from the table,
`disjoint_pairs` lists the pairs of array parameters whose disjointness a split relies on; the
launch checks those. Fields are told apart at compile time (each is a hidden parameter of its own,
`fields.py`): two fields, or a field and an ndarray, never share memory, so no pair names one.

Mesh iteration is not part of qdlab's language, so the reference's `mesh` code cannot arise and has
no row.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from ...core.config import Config
from ...core.errors import SourceLoc
from .. import ir
from ..ir import field_params
from . import Construct, local_writes


@dataclass(frozen=True)
class Fallback:
    """Why a kernel was compiled whole instead of split."""

    code: str
    """Stable reason code (`carried_value`, `overwritten_reread`, ...)."""
    message: str
    """One sentence naming the kernel and the cause."""
    loc: SourceLoc | None
    """The statement that caused it."""
    blocker: SourceLoc | None = None
    """The statement it depends on that blocked the split (the writing loop, the overwrite, ...)."""
    construct: int | None = None
    """Index of the construct whose slice is unsafe."""
    remedy: ir.Value | None = field(default=None, compare=False, repr=False)
    """For a row with `handover`: the local or value that, handed over through the interface buffer
    instead of recomputed, removes this reason."""

    @property
    def lineno(self) -> int | None:
        return self.loc.lineno if self.loc else None

    @property
    def source_line(self) -> str:
        return self.loc.source_line.strip() if self.loc else ""


@dataclass(frozen=True)
class Facts:
    """What the predicates look at."""

    kernel: ir.Kernel
    constructs: list[Construct]
    config: Config
    autodiff: bool = False

    @property
    def ops(self) -> list[ir.Op]:
        return self.kernel.body.ops

    @functools.cached_property
    def writes(self) -> list[frozenset[ir.Value]]:
        """The locals each top-level op writes (`split.local_writes`)."""
        return local_writes(self.ops)

    @functools.cached_property
    def array_writes(self) -> list[list[ir.Op]]:
        """The ops writing array memory in each top-level op (walked once, not once a read)."""
        return [[w for w in op.walk() if "write" in w.effects] for op in self.ops]

    @functools.cached_property
    def loop_writes(self) -> dict[int, dict[ir.Value, ir.Op]]:
        """For a top-level position, asked once: the first write of each local inside a loop
        nested in it (`_loop_writes`)."""
        return {}

    def write_in_loop(self, q: int, ref: ir.Value) -> ir.Op | None:
        """The first write of local `ref` inside a loop nested in the op at position `q`."""
        if q not in self.loop_writes:
            self.loop_writes[q] = _loop_writes(self.ops[q])
        return self.loop_writes[q].get(ref)

    @functools.cached_property
    def rereads(self) -> list[tuple[Construct, int, ir.Op, ir.Op]]:
        """`_rereads`, found once: two rules and the launch's alias check ask for them."""
        return list(_rereads(self))


@dataclass(frozen=True)
class Finding:
    """What a predicate found: where, what blocked the split, the words of its row's message, and
    the remedy."""

    at: ir.Op | SourceLoc | None
    blocker: ir.Op | None = None
    words: dict = field(default_factory=dict)
    """Filled into the row's message."""
    remedy: ir.Value | None = None


@dataclass(frozen=True)
class Rule:
    """One row of the gate's table."""

    code: str
    predicate: Callable[[Facts], Finding | None]
    message: str
    """What the split would get wrong, with `{...}` fields from the finding's words."""
    handover: bool = False
    """Handing the finding's remedy over through the interface buffer removes the reason
    (`split_carried`)."""


# -- predicates ------------------------------------------------------------------------------------


def autodiff(f: Facts) -> Finding | None:
    return Finding(f.kernel.flags.def_loc) if f.autodiff else None


def concurrent_region(f: Facts) -> Finding | None:
    loc = f.kernel.flags.concurrent_region
    return Finding(loc) if loc is not None else None


def diagnostic_mode(f: Facts) -> Finding | None:
    for on, what in (
        (f.config.dump_cfg, "a control-flow-graph dump"),
        (f.config.kernel_coverage, "line coverage"),
    ):
        if on:
            return Finding(f.kernel.flags.def_loc, words={"what": what})
    return None


def carried_value(f: Facts) -> Finding | None:
    for c in f.constructs:
        for q, reads in sorted(c.local_writers.items()):
            if q in c.positions:
                continue
            for ref, p in reads:
                loop_write = f.write_in_loop(q, ref)
                if loop_write is not None:
                    return Finding(
                        _first_read(f.ops[p], ref),
                        loop_write,
                        {"name": _name(ref), "line": _line(loop_write), "construct": c.index},
                        ref,
                    )
    for c in f.constructs:
        found = _stale_import(f, c)
        if found is not None:
            return found
    return None


def _stale_import(f: Facts, c: Construct) -> Finding | None:
    """A local handed over through the interface holds what the last construct before `c` left in
    it; a statement recomputed in `c`'s slice that reads it before some construct changes it needs
    the earlier value, which the interface no longer holds. The remedy hands that statement's
    result (or the local it writes) over instead."""
    imported = {v for v in c.imports if ir.is_local(v)}
    start = c.positions[0]
    later = [r for d in f.constructs if d is not c for r in d.positions if r < start]
    for q in c.slice_positions if imported else ():
        for op in f.ops[q].walk():
            if "local_read" not in op.effects or op.operands[0] not in imported:
                continue
            ref = op.operands[0]
            # r == q: another construct runs that statement itself, so the interface holds what it
            # left in the local, not what the statement read
            for r in sorted(r for r in later if r >= q and ref in f.writes[r]):
                write = next(o for o in f.ops[r].walk() if _writes(o, ref))
                words = {"name": _name(ref), "line": _line(write), "construct": c.index}
                return Finding(op, write, words, _remedy(f, c, q))
    return None


def repeated_effect(f: Facts) -> Finding | None:
    owner = {p for c in f.constructs for p in c.positions}
    users: dict[int, int] = {}
    for c in f.constructs:
        for q in c.slice_positions:
            users[q] = users.get(q, 0) + 1
    for c in f.constructs:
        for q in c.slice_positions:
            for op in f.ops[q].walk():
                side = op.effects & {"write", "io", "return"}
                once = op.effects & {"draw", "volatile"} and (q in owner or users[q] > 1)
                if side or once:
                    what = (
                        "a side effect"
                        if side
                        else "a random draw"
                        if "draw" in op.effects
                        else "a volatile load"
                    )
                    return Finding(
                        op,
                        None,
                        {"what": what, "line": _line(op), "construct": c.index},
                        _remedy(f, c, q),
                    )
    return None


def gradient_alias(f: Facts) -> Finding | None:
    fields = field_params(f.kernel)
    for c, q, load, w in f.rereads:
        (p, g), (wp, wg) = _buffer(load), _buffer(w)
        if wp != p and g and wg and p not in fields and wp not in fields:
            return Finding(
                load,
                w,
                {
                    "read": _array(load, f),
                    "line": _line(load),
                    "wline": _line(w),
                    "written": _array(w, f),
                },
            )
    return None


def overwritten_reread(f: Facts) -> Finding | None:
    for c, q, load, w in f.rereads:
        if _buffer(load) == _buffer(w):
            return Finding(
                load,
                w,
                {
                    "read": _array(load, f),
                    "line": _line(load),
                    "wline": _line(w),
                    "construct": c.index,
                },
                _remedy(f, c, q),
            )
    return None


RULES: tuple[Rule, ...] = (
    Rule(
        "autodiff",
        autodiff,
        "it is a gradient kernel, and the backward pass links its constructs together",
    ),
    Rule(
        "concurrent_region",
        concurrent_region,
        "its loops sit in a region scheduled to run concurrently, which shares one temporary "
        "buffer",
    ),
    Rule("diagnostic_mode", diagnostic_mode, "{what} is on, and it needs the whole kernel"),
    Rule(
        "carried_value",
        carried_value,
        "`{name}` is written inside a loop at line {line} and read by construct {construct}; that "
        "construct cannot be rebuilt from the kernel's arguments alone",
        handover=True,
    ),
    Rule(
        "repeated_effect",
        repeated_effect,
        "{what} at line {line} would run again inside construct {construct}, changing what the "
        "kernel does",
        handover=True,
    ),
    Rule(
        "gradient_alias",
        gradient_alias,
        "`{read}` is read at line {line} while line {wline} writes `{written}`; gradient buffers "
        "cannot be checked for overlap at launch",
    ),
    Rule(
        "overwritten_reread",
        overwritten_reread,
        "`{read}` is read at line {line}, overwritten at line {wline}, and the read would be "
        "recomputed after the overwrite in construct {construct}",
        handover=True,
    ),
)
"""Every compile-time fallback, in the order they are checked."""

HANDOVER_CODES = tuple(r.code for r in RULES if r.handover)


def check(facts: Facts) -> Fallback | None:
    """The first rule that fires, as a Fallback naming the kernel; None when the split is safe."""
    for rule in RULES:
        found = rule.predicate(facts)
        if found is not None:
            why = rule.message.format(**found.words)
            return Fallback(
                rule.code,
                f"kernel `{facts.kernel.name}` is compiled whole: {why}.",
                _loc(found.at),
                _loc(found.blocker),
                _construct_of(facts, found.at),
                found.remedy,
            )
    return None


def disjoint_pairs(facts: Facts) -> set[tuple[int, bool, int, bool]]:
    """(param, grad, param, grad): buffers a recomputed read assumes the writes between do not
    touch."""
    fields = field_params(facts.kernel)  # a field shares memory with nothing else
    return {
        (*_buffer(load), *_buffer(w))
        for _, _, load, w in facts.rereads
        if _buffer(load)[0] != _buffer(w)[0]
        and _buffer(load)[0] not in fields
        and _buffer(w)[0] not in fields
    }


# -- what the predicates share ---------------------------------------------------------------------


def _rereads(f: Facts) -> Iterator[tuple[Construct, int, ir.Op, ir.Op]]:
    """(construct, slice position, read, write): a read recomputed in the construct's slice, and a
    write to array memory between where the read stands and where the construct starts."""
    writing = [r for r, ws in enumerate(f.array_writes) if ws]
    for c in f.constructs:
        start = c.positions[0]
        for q in c.slice_positions:
            between = writing[bisect.bisect_right(writing, q) : bisect.bisect_left(writing, start)]
            if not between:
                continue
            for load in f.ops[q].walk():
                if load.effects & {"read", "write"} != {"read"}:
                    continue
                for r in between:
                    for w in f.array_writes[r]:
                        yield c, q, load, w


def _loc(x: ir.Op | SourceLoc | None) -> SourceLoc | None:
    return x.loc if isinstance(x, ir.Op) else x


def _name(v: ir.Value) -> str:
    return v.name or "a value"


def _array(op: ir.Op, f: Facts) -> str:
    """The array an access touches, by the name the kernel reached it by (`s.a` for a struct
    field's member, whose hidden parameter is `s_a`)."""
    name = ir.array_of(op).name
    name = f.kernel.flags.field_labels.get(name, name)
    return name + (".grad" if op.attrs.get("grad") else "")


def _construct_of(f: Facts, at: ir.Op | SourceLoc | None) -> int | None:
    if not isinstance(at, ir.Op):
        return None
    top = at
    while (
        top.parent is not None and top.parent is not f.kernel.body and top.parent.parent is not None
    ):
        top = top.parent.parent
    for c in f.constructs:
        if any(f.ops[p] is top for p in c.all_positions):
            return c.index
    return None


def _remedy(f: Facts, c: Construct, q: int) -> ir.Value | None:
    """What to publish so that slice position `q` of `c` is no longer recomputed."""
    if q in c.local_writers:
        return c.local_writers[q][0][0]
    return f.ops[q].result


def _buffer(op: ir.Op) -> tuple[int, bool]:
    """(parameter index, gradient buffer?) of a memory op."""
    return ir.arg_index(ir.array_of(op)), bool(op.attrs.get("grad"))


def _line(op: ir.Op) -> int | str:
    return op.loc.lineno if op.loc else "?"


def _writes(op: ir.Op, ref: ir.Value) -> bool:
    return "local_write" in op.effects and op.operands[0] is ref


def _loop_writes(op: ir.Op) -> dict[ir.Value, ir.Op]:
    """The first write (in program order) of each local inside a loop nested in `op`, not inside
    the functions it calls."""
    out: dict[ir.Value, ir.Op] = {}
    stack = [(op, False)]
    while stack:
        o, in_loop = stack.pop()
        if in_loop and "local_write" in o.effects:
            out.setdefault(o.operands[0], o)
        inner = in_loop or isinstance(o, (ir.For, ir.Loop))
        stack.extend((i, inner) for r in reversed(o.regions) for i in reversed(r.ops))
    return out


def _first_read(op: ir.Op, ref: ir.Value) -> ir.Op:
    for o in op.walk():
        if "local_read" in o.effects and o.operands[0] is ref:
            return o
    return op
