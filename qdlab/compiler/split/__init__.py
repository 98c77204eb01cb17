"""Split a kernel into its top-level constructs, each isolated by its backward slice.

Segments: each top-level container (`for`, `while`, `if`) is one segment, and each maximal run of
other top-level statements is one. A segment is a construct if it is a container or holds a real
effect (a store, an atomic, a print, an assert, a return); runs of pure definitions are not
constructs and are recomputed inside the constructs that use them. A construct's slice is itself
plus every top-level statement it depends on: the definitions of its operands, and for each local it
reads, the earlier top-level statements that write that local. The slice is cloned, in source order,
into a kernel of its own that depends on the kernel's arguments alone.
"""

from __future__ import annotations

import bisect
import hashlib
from dataclasses import dataclass, field

from .. import ir

CONSTRUCT_EFFECTS = frozenset({"write", "io", "return"})
"""Effects that make a run of top-level statements a construct of its own (stores, atomics, prints,
asserts, returns); the other statements are definitions, recomputed where they are used."""
CONTAINERS = (ir.For, ir.If, ir.Loop)


@dataclass
class Construct:
    """A top-level construct and its backward slice."""

    index: int
    kind: str
    """`"parallel_for"`, `"serial_for"`, `"while"`, `"if"` or `"serial"`."""
    positions: list[int]
    """Positions (in the kernel body) of its own top-level ops."""
    slice_positions: list[int] = field(default_factory=list)
    """Positions of the ops recomputed into it from outside its own segment."""
    local_writers: dict[int, list[tuple[ir.Value, int]]] = field(default_factory=dict)
    """For each position in the slice: the locals whose earlier writers pulled it in."""
    imports: list[ir.Value] = field(default_factory=list)
    """Published values and carried locals it reads from the interface instead of recomputing."""
    imported_after: dict[ir.Value, int] = field(default_factory=dict)
    """For each carried local it imports: the position of the last construct's write before it,
    where the slice takes the interface's value (statements recomputed before that position may
    write the local too; a value taken earlier would be overwritten by theirs)."""
    exports: list[ir.Value] = field(default_factory=list)
    """Published values and carried locals it writes to the interface when it ends."""

    @property
    def all_positions(self) -> list[int]:
        return sorted(set(self.positions) | set(self.slice_positions))


def local_writes(ops: list[ir.Op]) -> list[frozenset[ir.Value]]:
    """For each op, the locals it or anything nested in it writes: one walk of each, for the
    slicing and the report, which ask it of every (top-level statement, local) pair (asking it by
    walking the op each time was quadratic: minutes on Genesis' kernels). The locals of a called
    function are its own, fresh at each call: never the kernel's (`ir.Call`)."""
    called: set[ir.Function] = set()
    inner: set[ir.Value] = set()
    out = []
    for op in ops:
        refs = set()
        for o in op.walk():
            if "local_write" in o.effects:
                refs.add(o.operands[0])
            elif isinstance(o, ir.Call) and o.function not in called:
                called.add(o.function)
                inner.update(a.result for a in o.function.body.walk() if isinstance(a, ir.Alloca))
        out.append(refs)
    return [frozenset(r - inner) for r in out]


def has_effect(op: ir.Op) -> bool:
    return any(o.effects & CONSTRUCT_EFFECTS for o in op.walk())


@dataclass
class DefUse:
    """What slicing asks of each top-level statement, found in one walk of the kernel: slicing
    every construct by walking its statements again, and every earlier statement for each local
    read, was cubic in the kernel's size (a kernel returning a 1024-vector: minutes), and the
    pipeline splits the same kernel again after each hand-over."""

    position: dict[ir.Op, int]
    """Each top-level op's position in the kernel body."""
    writes: list[frozenset[ir.Value]]
    """The locals each top-level op writes (`local_writes`)."""
    writers: dict[ir.Value, list[int]]
    """For each local: the positions that write it, ascending."""
    uses: list[tuple[tuple[bool, ir.Value], ...]]
    """For each position, in walk order and each once: (False, value) for an operand defined by a
    top-level op, (True, local) for a local read."""
    effect: list[bool]
    """For each position: whether it has an effect that makes its segment a construct."""

    @classmethod
    def of(cls, kernel: ir.Kernel) -> DefUse:
        ops = kernel.body.ops
        position = {op: p for p, op in enumerate(ops)}
        writes = local_writes(ops)
        writers: dict[ir.Value, list[int]] = {}
        for p, refs in enumerate(writes):
            for ref in refs:
                writers.setdefault(ref, []).append(p)
        uses = []
        effect = []
        for op in ops:
            seen: dict[tuple[bool, ir.Value], None] = {}
            hit = False
            for inner in op.walk():
                hit = hit or bool(inner.effects & CONSTRUCT_EFFECTS)
                for v in inner.operands:
                    if isinstance(v.owner, ir.Op) and v.owner in position:
                        seen[(False, v)] = None
                if "local_read" in inner.effects:
                    seen[(True, inner.operands[0])] = None
            uses.append(tuple(seen))
            effect.append(hit)
        return cls(position, writes, writers, uses, effect)


def segments(kernel: ir.Kernel) -> list[list[int]]:
    out: list[list[int]] = []
    run: list[int] = []
    for p, op in enumerate(kernel.body.ops):
        if isinstance(op, CONTAINERS):
            if run:
                out.append(run)
                run = []
            out.append([p])
        else:
            run.append(p)
    if run:
        out.append(run)
    return out


def kind_of(kernel: ir.Kernel, positions: list[int]) -> str:
    return kind_of_op(kernel.body.ops[positions[0]])


def kind_of_op(op: ir.Op) -> str:
    """`"parallel_for"`, `"serial_for"`, `"while"`, `"if"`, or `"serial"` for any other
    statement."""
    if isinstance(op, ir.For):
        return "parallel_for" if op.attrs.get("parallel") else "serial_for"
    if isinstance(op, ir.Loop):
        return "while"
    if isinstance(op, ir.If):
        return "if"
    return "serial"


@dataclass
class Interface:
    """What is handed between constructs through the interface buffer instead of being
    recomputed."""

    published: dict[ir.Value, str] = field(default_factory=dict)
    """Top-level values (a snapshot, an atomic's old value, a draw) and carried locals, with the
    fallback code each one avoids."""

    def add(self, v: ir.Value, code: str) -> bool:
        if v in self.published:
            return False
        self.published[v] = code
        return True


def _publishes(op: ir.Op, published: dict[ir.Value, str]) -> bool:
    """Whether `op` gives a value (not a local) that is handed over through the interface."""
    return op.result is not None and op.result in published and not ir.is_local(op.result)


def constructs(
    kernel: ir.Kernel, iface: Interface | None = None, uses: DefUse | None = None
) -> list[Construct]:
    """The kernel's constructs, each with its backward slice; `uses` is the kernel's `DefUse`, for a
    caller that splits the same kernel more than once."""
    ops = kernel.body.ops
    published = iface.published if iface else {}
    du = uses if uses is not None else DefUse.of(kernel)
    out = []
    for seg in segments(kernel):
        if isinstance(ops[seg[0]], CONTAINERS) or any(
            du.effect[p] or _publishes(ops[p], published) for p in seg
        ):
            own = [
                p for p in seg if not isinstance(ops[p], ir.Arg)
            ]  # parameters belong to every slice
            out.append(Construct(len(out), kind_of(kernel, own), own))
    owned = {p for c in out for p in c.positions}
    for c in out:
        backward_slice(kernel, c, published, owned, du)
    return out


def backward_slice(
    kernel: ir.Kernel,
    c: Construct,
    published: dict | None = None,
    owned: set[int] | None = None,
    uses: DefUse | None = None,
) -> None:
    """Fill `c.slice_positions`: operand definitions, and earlier top-level writers of every local
    read.

    A published value is read from the interface, so its definition is not recomputed. A carried
    local is read from the interface as the last construct before this one left it (the last of
    the `owned` positions, those of every construct, to write it); only its writers after that one
    are. A construct that exports a local reads it as it ends, since its own writes may not run (a
    `while` with no trips, an `if` without `else`).
    """
    published = published or {}
    owned = owned or set()
    du = uses if uses is not None else DefUse.of(kernel)
    own = set(c.positions)
    included = set(own)
    work = list(c.positions)
    start = c.positions[0]
    for v in published:
        if (ir.is_local(v) and any(v in du.writes[p] for p in c.positions)) or (
            not ir.is_local(v) and isinstance(v.owner, ir.Op) and du.position.get(v.owner) in own
        ):
            c.exports.append(v)

    def reads_local(ref: ir.Value, p: int) -> None:
        """Position `p` reads local `ref`: pull in its earlier writers, or import it where it is
        published."""
        writers = du.writers.get(ref, [])
        first = 0
        if ref in published:
            before = writers[: bisect.bisect_left(writers, start)]
            last = next((q for q in reversed(before) if q in owned), -1)
            if 0 <= last < p:  # a read before `last` (a recomputed statement's) sees earlier writes
                first = last + 1
                if ref not in c.imports:
                    c.imports.append(ref)
                    c.imported_after[ref] = last
        for q in writers[bisect.bisect_left(writers, first) : bisect.bisect_left(writers, p)]:
            if q in own:
                continue
            if q not in included:
                included.add(q)
                work.append(q)
            c.local_writers.setdefault(q, []).append((ref, p))

    for v in c.exports:
        if ir.is_local(
            v
        ):  # a write that may not run leaves the value from before: the export reads it
            reads_local(v, c.positions[-1] + 1)
    while work:
        p = work.pop()
        for is_read, v in du.uses[p]:
            if is_read:
                reads_local(v, p)
                continue
            d = du.position[ir.defining_op(v)]
            if v in published and not ir.is_local(v) and d not in own:
                if v not in c.imports:
                    c.imports.append(v)
            elif d not in included:
                included.add(d)
                work.append(d)
    c.slice_positions = sorted(included - own)


def slice_kernel(
    kernel: ir.Kernel, c: Construct, slots: dict[ir.Value, tuple[int, str]] | None = None
) -> ir.Kernel:
    """Clone the construct's slice, in source order, into a kernel of its own.

    Imported values are read from their interface slot where they were defined; an imported local is
    stored from its slot where the construct that wrote it last stands (after it, where the slice
    recomputes that statement too); exports are written to their slots at the end.
    """
    out = ir.Kernel(
        f"{kernel.name}_c{c.index}", kernel.params, kernel.returns, ir.Block(), kernel.flags.copy()
    )
    mapping: dict[ir.Value, ir.Value] = {}
    ops = kernel.body.ops
    position = {op: p for p, op in enumerate(ops)}
    value_imports = {position[ir.defining_op(v)]: v for v in c.imports if not ir.is_local(v)}
    slots = slots if slots is not None else {}  # none: the construct imports and exports nothing
    import_at: dict[int, list[ir.Value]] = {}
    for ref, q in c.imported_after.items():
        import_at.setdefault(q, []).append(ref)
    included = set(c.all_positions)
    for p in sorted(included | set(value_imports) | set(import_at)):
        if p in value_imports:
            v = value_imports[p]
            slot, key = slots[v]
            load = ir.InterfaceLoad(
                [], v.type, {"slot": slot, "key": key}, None, ops[p].loc, v.name
            )
            out.body.append(load)
            mapping[v] = load.result
            continue
        if p in included:
            ir.clone_ops([ops[p]], mapping, out.body)
        for ref in import_at.get(p, ()):  # the local as the construct that wrote it last left it
            slot, key = slots[ref]
            load = ir.InterfaceLoad(
                [], ref.element, {"slot": slot, "key": key}, None, ops[p].loc, ref.name
            )
            out.body.append(load)
            out.body.append(ir.LocalStore([mapping[ref], load.result], None, {}, None, ops[p].loc))
    for v in c.exports:
        slot, key = slots[v]
        value = mapping[v]
        loc = v.owner.loc if isinstance(v.owner, ir.Op) else None
        if ir.is_local(v):
            local_load = ir.LocalLoad([value], v.element, {}, None, loc, v.name)
            out.body.append(local_load)
            value = local_load.result
        out.body.append(ir.InterfaceStore([value], None, {"slot": slot, "key": key}, None, loc))
    return out


def assign_slots(published: dict[ir.Value, str], slots: int) -> dict[ir.Value, tuple[int, str]]:
    """A slot per published value, from a hash of what it holds (open addressing), so unrelated
    edits keep every offset where it was."""
    out: dict[ir.Value, tuple[int, str]] = {}
    taken: set[int] = set()
    keyed = []
    for v in published:
        t = v.element if ir.is_local(v) else v.type
        what = "local" if ir.is_local(v) else getattr(v.owner, "name", "value")
        keyed.append((f"{what} {v.name}: {t}", v))
    seen: dict[str, int] = {}
    for key, v in sorted(keyed, key=lambda kv: kv[0]):
        n = seen[key] = seen.get(key, -1) + 1
        key = key if n == 0 else f"{key} #{n}"
        h = int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) % slots
        while h in taken:
            h = (h + 1) % slots
        taken.add(h)
        out[v] = (8 * h, key)
    return out
