"""What the views draw, derived from `qd.explain`'s report and nothing else.

A split kernel lists its constructs in the report. A kernel that fell back to the whole-kernel path
has no construct reports, but its statements still say which construct they would have belonged to;
the views draw those would-be constructs so a fallback can be shown where it happens. Both come out
here as the same `Part` rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..compiler.report.explain import ConstructReport, KernelReport, Statement
from ..host.api import explain


@dataclass
class Part:
    """One construct as the views draw it: its own statements, its slice and its status."""

    index: int
    kind: str
    lines: tuple[int, int]
    own: list[int]
    """Indices of its own statements."""
    slice: list[int]
    """Indices of the statements recomputed into it (kernel parameters excluded)."""
    status: str
    """`"compiled"`, `"reused"` or `"whole"` (a would-be construct of a kernel compiled whole)."""
    report: ConstructReport | None = None

    @property
    def label(self) -> str:
        lo, hi = self.lines
        lines = f"line {lo}" if lo == hi else f"lines {lo}-{hi}"
        status = "whole kernel" if self.status == "whole" else self.status
        return f"construct {self.index} · {self.kind} · {lines} · {status}"


def report_of(kernel: object) -> KernelReport:
    """The report of a kernel's latest compile, or the report itself."""
    if isinstance(kernel, KernelReport):
        return kernel
    return explain(kernel)  # type: ignore[arg-type]


def parts(report: KernelReport) -> list[Part]:
    """The constructs of the report, or the would-be constructs of a kernel compiled whole."""
    by_index = {s.index: s for s in report.statements}
    if report.constructs:
        return [
            Part(
                c.index,
                c.kind,
                c.lines,
                list(c.statements),
                [i for i in c.slice_statements if by_index[i].kind != "args"],
                c.status,
                c,
            )
            for c in report.constructs
        ]
    owned: dict[int, list[int]] = {}
    for s in report.statements:
        if s.construct is not None:
            owned.setdefault(s.construct, []).append(s.index)
    result = []
    for index, own in sorted(owned.items()):
        body = [by_index[i] for i in own]
        main = next((s for s in body if s.kind not in ("def", "local")), body[-1])
        lines = (min(s.lines[0] for s in body), max(s.lines[1] for s in body))
        result.append(Part(index, main.kind, lines, own, backward_slice(report, own), "whole"))
    return result


def backward_slice(report: KernelReport, own: list[int]) -> list[int]:
    """Statements reached from `own` along def-use edges, less `own` and the parameters, in source
    order."""
    by_index = {s.index: s for s in report.statements}
    seen: set[int] = set()
    todo = list(own)
    while todo:
        for d in by_index[todo.pop()].uses:
            if d not in seen:
                seen.add(d)
                todo.append(d)
    return sorted(i for i in seen - set(own) if by_index[i].kind != "args")


def statement_at(report: KernelReport, lineno: int | None) -> Statement | None:
    """The narrowest statement covering a source line (a loop header before the loop)."""
    if lineno is None:
        return None
    covering = [
        s for s in report.statements if s.lines[0] <= lineno <= s.lines[1] and s.kind != "args"
    ]
    return min(covering, key=lambda s: (s.lines[1] - s.lines[0], s.index), default=None)


def source_lines(report: KernelReport) -> list[tuple[int, str]]:
    """The kernel's source as (line number, text) pairs."""
    return [(report.first_line + k, text) for k, text in enumerate(report.source.splitlines())]


def lines_of(report: KernelReport, statements: list[int]) -> list[int]:
    by_index = {s.index: s for s in report.statements}
    lines: set[int] = set()
    for i in statements:
        lo, hi = by_index[i].lines
        lines.update(range(lo, hi + 1))
    return sorted(lines)


@dataclass
class Edit:
    """One construct of the latest compile matched against the previous compile."""

    change: str
    """`"unchanged"`, `"edited"`, `"dependency"` (its own code is the same, its slice changed),
    `"new"`, `"removed"`."""
    latest: Part | None
    previous: Part | None
    notes: list[str] = field(default_factory=list)


def _own_text(report: KernelReport, part: Part) -> str:
    text = dict(source_lines(report))
    return "\n".join(text.get(n, "").strip() for n in lines_of(report, part.own))


def edits(report: KernelReport) -> list[Edit]:
    """Match constructs by cache key, then by their own source text, then by position."""
    latest = parts(report)
    prev_report = report.previous
    previous = parts(prev_report) if prev_report is not None else []
    key = {p.report.cache_key: p for p in previous if p.report is not None}
    matched: dict[int, Edit] = {}
    left = list(previous)
    for p in latest:
        q = key.get(p.report.cache_key) if p.report is not None else None
        if q is not None and q in left:
            left.remove(q)
            matched[p.index] = Edit("unchanged", p, q)
    for p in latest:
        if p.index in matched:
            continue
        text = _own_text(report, p)
        q = next((q for q in left if _own_text(prev_report, q) == text), None)  # type: ignore[arg-type]
        if q is not None:
            left.remove(q)
            matched[p.index] = Edit("dependency", p, q)
    for p in latest:
        if p.index in matched:
            continue
        q = next((q for q in left if q.index == p.index), None)
        if q is not None:
            left.remove(q)
            matched[p.index] = Edit("edited", p, q)
        else:
            matched[p.index] = Edit("new", p, None)
    result = [matched[p.index] for p in latest] + [Edit("removed", None, q) for q in left]
    for e in result:
        if (
            e.latest is not None
            and e.latest.report is not None
            and e.latest.report.recompile_reason
        ):
            e.notes.append(e.latest.report.recompile_reason)
    return result
