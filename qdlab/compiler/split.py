"""Split a kernel into its top-level constructs, each isolated by its backward slice.

Segments: each top-level container (`for`, `while`, `if`) is one segment, and each maximal run of other
top-level statements is one. A segment is a construct if it is a container or holds a real effect (a store, an
atomic, a print, an assert, a return); runs of pure definitions are not constructs and are recomputed inside the
constructs that use them. A construct's slice is itself plus every top-level statement it depends on: the
definitions of its operands, and for each local it reads, the earlier top-level statements that write that local.
The slice is cloned, in source order, into a kernel of its own that depends on the kernel's arguments alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import ir

EFFECTS = ("write", "atomic", "io", "return")
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

    @property
    def all_positions(self) -> list[int]:
        return sorted(set(self.positions) | set(self.slice_positions))


def writes_local(op: ir.Op, ref: ir.Value) -> bool:
    return any(isinstance(o, (ir.LocalStore, ir.LocalAtomic)) and o.operands[0] is ref for o in op.walk())


def has_effect(op: ir.Op) -> bool:
    return any(o.effect in EFFECTS for o in op.walk())


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
    op = kernel.body.ops[positions[0]]
    if isinstance(op, ir.For):
        return "parallel_for" if op.attrs.get("parallel") else "serial_for"
    if isinstance(op, ir.Loop):
        return "while"
    if isinstance(op, ir.If):
        return "if"
    return "serial"


def constructs(kernel: ir.Kernel) -> list[Construct]:
    ops = kernel.body.ops
    out = []
    for seg in segments(kernel):
        if isinstance(ops[seg[0]], CONTAINERS) or any(has_effect(ops[p]) for p in seg):
            own = [p for p in seg if not isinstance(ops[p], ir.Arg)]  # parameters belong to every slice
            c = Construct(len(out), kind_of(kernel, own), own)
            backward_slice(kernel, c)
            out.append(c)
    return out


def backward_slice(kernel: ir.Kernel, c: Construct) -> None:
    """Fill `c.slice_positions`: operand definitions, and earlier top-level writers of every local read."""
    ops = kernel.body.ops
    position = {op: p for p, op in enumerate(ops)}
    included = set(c.positions)
    work = list(c.positions)
    while work:
        p = work.pop()
        for inner in ops[p].walk():
            for v in inner.operands:
                d = v.owner
                if isinstance(d, ir.Op) and d in position and position[d] not in included:
                    included.add(position[d])
                    work.append(position[d])
            if isinstance(inner, (ir.LocalLoad, ir.LocalAtomic, ir.LocalStore)):
                ref = inner.operands[0]
                if isinstance(inner, ir.LocalStore):
                    continue
                for q in range(p):
                    if q not in included and writes_local(ops[q], ref):
                        included.add(q)
                        work.append(q)
                        c.local_writers.setdefault(q, []).append((ref, p))
                    elif q in included and q not in c.positions and writes_local(ops[q], ref):
                        c.local_writers.setdefault(q, []).append((ref, p))
    c.slice_positions = sorted(included - set(c.positions))


def slice_kernel(kernel: ir.Kernel, c: Construct) -> ir.Kernel:
    """Clone the construct's slice, in source order, into a kernel of its own."""
    out = ir.Kernel(f"{kernel.name}_c{c.index}", kernel.params, kernel.returns, ir.Block(), dict(kernel.flags))
    mapping: dict[ir.Value, ir.Value] = {}
    ir.clone_ops([kernel.body.ops[p] for p in c.all_positions], mapping, out.body)
    return out
