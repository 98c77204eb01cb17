"""The recompute-safety gate: may this kernel be compiled construct by construct?

One table, one row per reason code. Each row's predicate looks at the split (constructs and their slices) and
at the effects the ops declare, and returns the statement that makes the split unsafe (and the statement that
blocks it), or None. The first row that fires sends the kernel down the whole-kernel path. Alongside, the gate
lists the pairs of array parameters whose disjointness the split relies on; the launch checks those.

Mesh iteration is not part of qdlab's language, so the reference's `mesh` code cannot arise and has no row.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from . import ir
from .errors import SourceLoc
from .split import Construct


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
    """For carried_value, overwritten_reread and repeated_effect: the local or value that, handed over through
    the interface buffer instead of recomputed, removes this reason."""

    @property
    def lineno(self) -> int | None:
        return self.loc.lineno if self.loc else None

    @property
    def source_line(self) -> str:
        return self.loc.source_line.strip() if self.loc else ""


@dataclass
class Facts:
    """What the rules look at."""

    kernel: ir.Kernel
    constructs: list[Construct]
    config: dict
    autodiff: bool = False
    alias_pairs: set[tuple[int, bool, int, bool]] = field(default_factory=set)
    remedy: ir.Value | None = None
    """Set by the rule that fires when publishing one value would remove its reason."""

    @property
    def ops(self) -> list[ir.Op]:
        return self.kernel.body.ops


Finding = tuple[ir.Op | SourceLoc | None, ir.Op | None, str] | None


def _loc(x: ir.Op | SourceLoc | None) -> SourceLoc | None:
    return x.loc if isinstance(x, ir.Op) else x


def _name(v: ir.Value) -> str:
    return v.name or "a value"


def autodiff(f: Facts) -> Finding:
    if f.autodiff:
        return f.kernel.flags.get("def_loc"), None, "it is a gradient kernel, and the backward pass links its constructs together"
    return None


def concurrent_region(f: Facts) -> Finding:
    loc = f.kernel.flags.get("concurrent_region")
    if loc is not None:
        return loc, None, "its loops sit in a region scheduled to run concurrently, which shares one temporary buffer"
    return None


def diagnostic_mode(f: Facts) -> Finding:
    for flag, what in (("dump_cfg", "a control-flow-graph dump"), ("kernel_coverage", "line coverage")):
        if f.config.get(flag):
            return f.kernel.flags.get("def_loc"), None, f"{what} is on, and it needs the whole kernel"
    return None


def carried_value(f: Facts) -> Finding:
    for c in f.constructs:
        for q, reads in sorted(c.local_writers.items()):
            if q in c.positions:
                continue
            writer = f.ops[q]
            for ref, p in reads:
                loop_write = _write_in_loop(writer, ref)
                if loop_write is not None:
                    reader = _first_read(f.ops[p], ref)
                    f.remedy = ref
                    return (reader, loop_write, f"`{_name(ref)}` is written inside a loop at line "
                            f"{_line(loop_write)} and read by construct {c.index}; that construct cannot be "
                            "rebuilt from the kernel's arguments alone")
    return None


def repeated_effect(f: Facts) -> Finding:
    owner = {p: c for c in f.constructs for p in c.positions}
    users: dict[int, int] = {}
    for c in f.constructs:
        for q in c.slice_positions:
            users[q] = users.get(q, 0) + 1
    for c in f.constructs:
        for q in c.slice_positions:
            for op in f.ops[q].walk():
                if op.effect in ("write", "atomic", "io", "return") or (
                        op.effect in ("random", "volatile") and (q in owner or users[q] > 1)):
                    what = {"random": "a random draw", "volatile": "a volatile load"}.get(op.effect or "",
                                                                                          "a side effect")
                    f.remedy = _remedy(f, c, q)
                    return (op, None, f"{what} at line {_line(op)} would run again inside construct {c.index}, "
                            "changing what the kernel does")
    return None


def _reread(f: Facts, want_grad_alias: bool) -> Finding:
    for c in f.constructs:
        start = c.positions[0]
        for q in c.slice_positions:
            for load in f.ops[q].walk():
                if not isinstance(load, ir.Load):
                    continue
                p, g = _param(load)
                for r in range(q + 1, start):
                    for w in f.ops[r].walk():
                        if not isinstance(w, (ir.Store, ir.Atomic)):
                            continue
                        wp, wg = _param(w)
                        if (wp, wg) == (p, g) and not want_grad_alias:
                            f.remedy = _remedy(f, c, q)
                            return (load, w, f"`{load.operands[0].name}{'.grad' if g else ''}` is read at line "
                                    f"{_line(load)}, overwritten at line {_line(w)}, and the read would be "
                                    f"recomputed after the overwrite in construct {c.index}")
                        if wp != p and g and wg and want_grad_alias:
                            return (load, w, f"`{load.operands[0].name}.grad` is read at line {_line(load)} while "
                                    f"line {_line(w)} writes `{w.operands[0].name}.grad`; gradient buffers cannot "
                                    "be checked for overlap at launch")
                        if wp != p:
                            f.alias_pairs.add((p, g, wp, wg))
    return None


def gradient_alias(f: Facts) -> Finding:
    return _reread(f, True)


def overwritten_reread(f: Facts) -> Finding:
    return _reread(f, False)


Rule = tuple[str, Callable[[Facts], Finding]]
RULES: tuple[Rule, ...] = (
    ("autodiff", autodiff),
    ("concurrent_region", concurrent_region),
    ("diagnostic_mode", diagnostic_mode),
    ("carried_value", carried_value),
    ("repeated_effect", repeated_effect),
    ("gradient_alias", gradient_alias),
    ("overwritten_reread", overwritten_reread),
)
"""Every compile-time fallback, in the order they are checked."""


def check(facts: Facts) -> Fallback | None:
    """The first rule that fires, as a Fallback naming the kernel; None when the split is safe."""
    for code, predicate in RULES:
        found = predicate(facts)
        if found is not None:
            at, blocker, why = found
            c = _construct_of(facts, at)
            return Fallback(code, f"kernel `{facts.kernel.name}` is compiled whole: {why}.", _loc(at),
                            _loc(blocker), c, facts.remedy)
    return None


def _construct_of(f: Facts, at: ir.Op | SourceLoc | None) -> int | None:
    if not isinstance(at, ir.Op):
        return None
    top = at
    while top.parent is not None and top.parent is not f.kernel.body and top.parent.parent is not None:
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


def _param(op: ir.Op) -> tuple[int, bool]:
    return op.operands[0].owner.attrs["index"], bool(op.attrs.get("grad"))  # type: ignore[union-attr]


def _line(op: ir.Op) -> int | str:
    return op.loc.lineno if op.loc else "?"


def _write_in_loop(op: ir.Op, ref: ir.Value) -> ir.Op | None:
    def visit(o: ir.Op, in_loop: bool) -> ir.Op | None:
        if in_loop and isinstance(o, (ir.LocalStore, ir.LocalAtomic)) and o.operands[0] is ref:
            return o
        for r in o.regions:
            for inner in r.ops:
                hit = visit(inner, in_loop or isinstance(o, (ir.For, ir.Loop)))
                if hit is not None:
                    return hit
        return None
    return visit(op, False)


def _first_read(op: ir.Op, ref: ir.Value) -> ir.Op:
    for o in op.walk():
        if isinstance(o, (ir.LocalLoad, ir.LocalAtomic)) and o.operands[0] is ref:
            return o
    return op
