"""Top-level statements as the views show them: IR ops grouped by the source line they came from."""

from __future__ import annotations

from .. import ir, split
from .explain import Statement


def _lines(op: ir.Op) -> tuple[int, int]:
    ls = [o.loc.lineno for o in op.walk() if o.loc is not None]
    return (min(ls), max(ls)) if ls else (0, 0)


def _kind(op: ir.Op) -> str:
    if isinstance(op, split.CONTAINERS):
        return split.kind_of_op(op)
    if split.has_effect(op):
        return "effect"
    if isinstance(op, (ir.Alloca, ir.LocalStore, ir.LocalAtomic)):
        return "local"
    if isinstance(op, ir.Arg):
        return "args"
    return "def"


def statement_of_ops(kernel: ir.Kernel) -> list[int]:
    """For each top-level op, the index of the statement it belongs to (the parameters are one
    statement, however many lines the `def` takes)."""
    ops = kernel.body.ops
    out: list[int] = []
    prev_line, prev_container, prev_arg = None, True, False
    for op in ops:
        line = op.loc.lineno if op.loc else None
        container = isinstance(op, split.CONTAINERS)
        arg = isinstance(op, ir.Arg)
        if out and (
            (not container and not prev_container and line == prev_line) or (arg and prev_arg)
        ):
            out.append(out[-1])
        else:
            out.append(out[-1] + 1 if out else 0)
        prev_line, prev_container, prev_arg = line, container, arg
    return out


def describe_statements(kernel: ir.Kernel, constructs: list[split.Construct]) -> list[Statement]:
    ops = kernel.body.ops
    group = statement_of_ops(kernel)
    segment_of = {p: s for s, seg in enumerate(split.segments(kernel)) for p in seg}
    owner = {p: c.index for c in constructs for p in c.positions}
    position = {op: p for p, op in enumerate(ops)}
    entries = kernel.flags.entries
    writes = split.local_writes(ops)
    out: list[Statement] = []
    for p, op in enumerate(ops):
        g = group[p]
        if g == len(out):
            text = op.loc.source_line.strip() if op.loc else op.name
            out.append(Statement(g, _lines(op), text, _kind(op), segment_of[p], owner.get(p)))
        st = out[g]
        lo, hi = _lines(op)
        if lo:
            st.lines = (min(st.lines[0], lo) if st.lines[0] else lo, max(st.lines[1], hi))
        kind = _kind(op)
        if kind in ("effect", "parallel_for", "serial_for", "while", "if") or st.kind == "def":
            st.kind = kind if st.kind in ("def", "local") else st.kind
        if st.construct is None:
            st.construct = owner.get(p)
        name = op.result.name if op.result is not None else ""
        if isinstance(op, (ir.LocalStore, ir.LocalAtomic)):
            name = op.operands[0].name
        name = entries.get(name, name)  # `v_x`, `v_y`, `v_z` define one vector, `v`
        if name and not name.startswith("_") and name not in st.defines:
            st.defines.append(name)
        for inner in op.walk():
            for v in inner.operands:
                d = v.owner
                if (
                    isinstance(d, ir.Op)
                    and d in position
                    and group[position[d]] != g
                    and group[position[d]] not in st.uses
                ):
                    st.uses.append(group[position[d]])
            if isinstance(inner, (ir.LocalLoad, ir.LocalAtomic)):
                for q in range(p):
                    if group[q] != g and inner.operands[0] in writes[q] and group[q] not in st.uses:
                        st.uses.append(group[q])
    for st in out:
        st.uses.sort()
    return out
