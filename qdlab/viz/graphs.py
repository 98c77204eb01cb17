"""The three graphs of a kernel's split: its constructs, one construct's slice, and what an edit
rebuilt.

Node names are stable so the DOT text is the same on every run and tests can read it: `s3` is
statement 3, `c1_s2` is statement 2 recomputed inside construct 1, `cluster_c1` is construct 1,
`fallback` is the fallback note, `e_p2`/`e_l2` are construct 2 of the previous/latest compile.
"""

from __future__ import annotations

import itertools
import re

from ..compiler.report.explain import KernelReport, Statement
from ..core.words import plural
from .model import Edit, Part, edits, parts, report_of, source_lines, statement_at
from .render import Graph

STATUS_COLOURS = {
    "compiled": ("#f29900", "#fff4e0"),
    "reused": ("#188038", "#e6f4ea"),
    "whole": ("#80868b", "#f1f3f4"),
}
"""Border and fill of a construct cluster, by cache status."""
RECOMPUTED = "#1a73e8"
FALLBACK = "#d93025"
EDIT_COLOURS = {
    "unchanged": "#188038",
    "edited": "#f29900",
    "dependency": "#b06000",
    "new": "#1a73e8",
    "removed": "#80868b",
}
EDIT_WORDS = {
    "unchanged": "unchanged (reused)",
    "edited": "edited (recompiled)",
    "dependency": "recompiled: a dependency changed",
    "new": "new",
    "removed": "removed",
}
FONT = {"fontname": "Helvetica", "fontsize": "10"}


LABEL_CHARS = 34
"""Longer statement texts are cut in the node label; the node's tooltip holds the whole text."""


def _full_text(s: Statement, kernel: str = "") -> str:
    text = s.text.strip()
    if s.kind == "args":
        names = ", ".join(s.defines)
        return f"kernel {kernel}({names})" if len(names) <= 24 else f"kernel {kernel}(...)"
    if s.kind == "def" and text.startswith(("for ", "while ", "if ")):
        what = ", ".join(s.defines) or "header values"
        text = f"{what}  (from `{text.rstrip(':')}`)"
    return text


def _text(s: Statement, kernel: str = "") -> str:
    text = _full_text(s, kernel)
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"


def _label(s: Statement, kernel: str = "") -> str:
    lo, hi = s.lines
    text = _text(s, kernel)
    return f"{text}\nline {lo}" if lo == hi else f"{text}\nlines {lo}-{hi}"


TOOLTIP_CHARS = 4000
"""A tooltip's text is cut there: Graphviz refuses a quoted string over 16384 bytes, and a Genesis
kernel's signature (every struct member a parameter) is longer than that."""


def _tooltip(s: Statement, signature: str = "") -> str:
    """The node's whole text (what a cut label leaves out; the signature for the kernel node), cut
    at TOOLTIP_CHARS."""
    text = signature if s.kind == "args" and signature else s.text.strip()
    return text if len(text) <= TOOLTIP_CHARS else text[: TOOLTIP_CHARS - 1] + "…"


def _style(s: Statement) -> dict[str, str]:
    if s.kind == "args":
        return {"shape": "invhouse", "style": "filled", "fillcolor": "#e8eaed"}
    if s.kind in ("def", "local"):
        return {"shape": "box", "style": "rounded"}
    if s.kind in ("parallel_for", "serial_for", "while", "if"):
        return {"shape": "box", "style": "bold"}
    return {"shape": "box"}


def _filled(s: Statement) -> str:
    return ",".join(filter(None, (_style(s).get("style"), "filled")))


def _start(name: str, title: str, rankdir: str = "TB") -> Graph:
    g = Graph(name, title)
    g.attr(rankdir=rankdir, compound="true", newrank="true", **FONT)
    g.attr("node", **FONT)
    g.attr("edge", **FONT)
    return g


def _legend(g: Graph, entries: list[tuple[str, dict[str, str]]]) -> None:
    """The colours' key, its entries on one rank: a row under a top-down graph, a column beside a
    left-to-right one (never a line as long as the graph is wide or tall)."""
    with g.subgraph(name="cluster_legend") as lg:
        lg.attr(label="legend", style="dashed", color="#bdc1c6", id="legend")
        for name, attrs in entries:
            lg.node(_key(name), name, **attrs)


def _key(name: str) -> str:
    """The node name of a legend entry."""
    return f"legend_{name.replace(' ', '_').replace(':', '')}"


class _Marks:
    """Which statements a fallback points at, and how to draw its red edges."""

    def __init__(self, report: KernelReport) -> None:
        fb = report.fallback
        self.fallback = fb
        self.offender = statement_at(report, fb.lineno) if fb else None
        self.blocker = statement_at(report, fb.blocker.lineno) if fb and fb.blocker else None

    def red(self, index: int) -> bool:
        return any(s is not None and s.index == index for s in (self.offender, self.blocker))


def construct_graph(kernel: object) -> Graph:
    """One cluster per construct: own statements, recomputed definitions, def-use edges, status,
    fallback."""
    report = report_of(kernel)
    drawn = parts(report)
    by_index = {s.index: s for s in report.statements}
    owner = {i: p for p in drawn for i in p.own}
    marks = _Marks(report)
    title = (
        f"construct graph of `{report.kernel}`: {report.mode}, {plural(len(drawn), 'construct')}"
        + (f", fallback {marks.fallback.code}" if marks.fallback else "")
    )
    # Top down: the kernel's parameters and shared definitions on top, then one construct cluster
    # below the other in source order (`_stack`), so the graph is as wide as its widest construct
    # however many there are and grows downward; it is shown at a readable size (`render.fit`).
    g = _start(f"constructs_{report.kernel}", title)

    def node(where: Graph, name: str, s: Statement, **extra: str) -> None:
        attrs = {**_style(s), **extra}
        if marks.red(s.index) and not name.startswith("c"):
            attrs.update(color=FALLBACK, fontcolor=FALLBACK, penwidth="2")
        attrs.setdefault("tooltip", _tooltip(s, f"{report.kernel}({report.signature})"))
        where.node(name, _label(s, report.kernel), **attrs)

    for s in report.statements:
        if s.index not in owner:
            node(g, f"s{s.index}", s)
    args = next((s.index for s in report.statements if s.kind == "args"), None)
    for p in drawn:
        border, fill = STATUS_COLOURS[p.status]
        reads = _parameters(report, p.own + p.slice)
        with g.subgraph(name=f"cluster_c{p.index}") as c:
            c.attr(
                label=p.label + (f"\nreads {_wrap(', '.join(reads), 56)}" if reads else ""),
                color=border,
                fillcolor=fill,
                style="filled,rounded",
                penwidth="2",
                id=f"construct_{p.index}",
                tooltip=f"construct {p.index}",
                href=f"#construct-{p.index}",
            )
            if report.mode == "per_offload":
                for i in p.slice:
                    c.node(
                        f"c{p.index}_s{i}",
                        "↻ " + _label(by_index[i]) + "\nrecomputed",
                        shape="box",
                        style="dashed,rounded",
                        color=RECOMPUTED,
                        fontcolor=RECOMPUTED,
                        id=f"qd_c{p.index}_s{i}",
                        tooltip="recomputed here: " + _tooltip(by_index[i]),
                    )
            for i in p.own:
                node(
                    c,
                    f"s{i}",
                    by_index[i],
                    style=_filled(by_index[i]),
                    fillcolor="white",
                    id=f"qd_c{p.index}_s{i}",
                )
    for p in drawn:
        copies = set(p.slice) if report.mode == "per_offload" else set()
        inside = copies | set(p.own)
        for i in sorted(copies) + p.own:
            head = f"c{p.index}_s{i}" if i in copies else f"s{i}"
            for d in by_index[i].uses:
                if d == args:
                    continue  # the parameters it reads are in the cluster's label
                if d in inside:  # edges from outside the cluster would cross the graph
                    g.edge(f"c{p.index}_s{d}" if d in copies else f"s{d}", head, color="#5f6368")
    for i, s in by_index.items():
        if i not in owner:
            for d in s.uses:
                g.edge(f"s{d}", f"s{i}", color="#5f6368")
    _interface(g, report, drawn)
    _fallback(g, report, marks)
    legend = [
        ("compiled", _cluster_key("compiled")),
        ("reused", _cluster_key("reused")),
        (
            "recomputed",
            {
                "shape": "box",
                "style": "dashed,rounded",
                "color": RECOMPUTED,
                "fontcolor": RECOMPUTED,
            },
        ),
    ]
    if marks.fallback:
        legend = [
            ("whole kernel", _cluster_key("whole")),
            (
                "fallback",
                {"shape": "box", "color": FALLBACK, "fontcolor": FALLBACK, "penwidth": "2"},
            ),
        ]
    _legend(g, legend)
    _stack(g, report, drawn, [_key(name) for name, _ in legend])  # the legend at the bottom
    return g


def _parameters(report: KernelReport, statements: list[int]) -> list[str]:
    """The kernel parameters named in the source lines of `statements`, in signature order."""
    args = next((s for s in report.statements if s.kind == "args"), None)
    if args is None:
        return []
    by_index = {s.index: s for s in report.statements}
    spans = [by_index[i].lines for i in statements if i in by_index]
    text = "\n".join(t for n, t in source_lines(report) if any(lo <= n <= hi for lo, hi in spans))
    return [n for n in args.defines if re.search(rf"\b{re.escape(n)}\b", text)]


def _stack(g: Graph, report: KernelReport, drawn: list[Part], last: list[str]) -> None:
    """Invisible edges that make the graph one column in source order: the statements outside
    every construct (the parameters, shared definitions) one under the other, then the construct
    clusters one under the other, each group's nodes all above the next group's (through an
    invisible point), instead of side by side in the order dot likes."""
    copies = report.mode == "per_offload"
    owned = {i for p in drawn for i in p.own}
    groups = [[f"s{s.index}"] for s in report.statements if s.index not in owned]
    groups += [
        [f"c{p.index}_s{i}" for i in p.slice if copies] + [f"s{i}" for i in p.own] for p in drawn
    ]
    groups.append(last)
    for group in groups:
        g.node(group[-1], group="spine")
    for k, (before, after) in enumerate(itertools.pairwise(groups)):
        # each group's last node (a construct's loop) straight under the one before: one column
        g.edge(before[-1], after[-1], style="invis", weight="8")
        if len(before) == 1 and len(after) == 1:
            continue
        gap = f"gap_{k}"
        g.node(gap, "", shape="point", width="0", height="0", style="invis")
        for name in before:
            g.edge(name, gap, style="invis", weight="4")
        for name in after:
            g.edge(gap, name, style="invis", weight="4")


def _cluster_key(status: str) -> dict[str, str]:
    border, fill = STATUS_COLOURS[status]
    return {
        "shape": "box",
        "style": "filled,rounded",
        "color": border,
        "fillcolor": fill,
        "penwidth": "2",
    }


def _interface(g: Graph, report: KernelReport, drawn: list[Part]) -> None:
    anchor = {p.index: f"s{p.own[-1]}" for p in drawn}
    for slot in report.interface:
        for consumer in slot.consumers:
            if slot.producer in anchor and consumer in anchor:
                g.edge(
                    anchor[slot.producer],
                    anchor[consumer],
                    label=f"{slot.name}: {slot.dtype} @{slot.offset}\n({slot.reason})",
                    ltail=f"cluster_c{slot.producer}",
                    lhead=f"cluster_c{consumer}",
                    color="#9334e6",
                    fontcolor="#9334e6",
                    penwidth="2",
                    style="bold",
                )


def _fallback(g: Graph, report: KernelReport, marks: _Marks) -> None:
    fb = marks.fallback
    if fb is None:
        return
    where = f"line {fb.lineno}: {fb.source_line}\n" if fb.lineno else ""
    g.node(
        "fallback",
        f"fallback: {fb.code}\n{where}{_wrap(fb.message)}",
        shape="note",
        color=FALLBACK,
        fontcolor=FALLBACK,
        penwidth="2",
    )
    offender = marks.offender
    if offender is None and fb.loc is not None:
        g.node(
            "fallback_at",
            f"{fb.source_line}\nline {fb.lineno}",
            shape="box",
            color=FALLBACK,
            fontcolor=FALLBACK,
            penwidth="2",
        )
        g.edge(
            "fallback",
            "fallback_at",
            color=FALLBACK,
            penwidth="2",
            label=fb.code,
            fontcolor=FALLBACK,
        )
        return
    if offender is None:
        return
    g.edge("fallback", f"s{offender.index}", color=FALLBACK, style="dotted", arrowhead="none")
    if marks.blocker is not None and marks.blocker.index != offender.index:
        g.edge(
            f"s{marks.blocker.index}",
            f"s{offender.index}",
            color=FALLBACK,
            fontcolor=FALLBACK,
            penwidth="2",
            label=fb.code,
            constraint="false",
        )
        return
    consumers = [s.index for s in report.statements if offender.index in s.uses]
    for i in consumers:
        g.edge(
            f"s{offender.index}",
            f"s{i}",
            color=FALLBACK,
            fontcolor=FALLBACK,
            penwidth="2",
            label=fb.code,
        )


def _wrap(text: str, width: int = 60) -> str:
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return "\n".join(lines + [line])


def slice_graph(kernel: object, index: int) -> Graph:
    """The backward slice of construct `index` as dataflow, from the kernel's parameters to its
    effects."""
    report = report_of(kernel)
    drawn = {p.index: p for p in parts(report)}
    if index not in drawn:
        raise IndexError(
            f"kernel `{report.kernel}` has no construct {index} (it has {len(drawn)})."
        )
    p = drawn[index]
    by_index = {s.index: s for s in report.statements}
    keep = set(p.slice) | set(p.own)
    source = source_lines(report)
    g = _start(
        f"slice_{report.kernel}_{index}",
        f"slice of construct {index} of `{report.kernel}`: "
        f"{len(p.slice)} recomputed, {len(p.own)} own",
    )
    args = next((s for s in report.statements if s.kind == "args"), None)
    params = args.defines if args is not None else []
    if len(params) > 6:  # a row of every parameter would be wider than any screen
        params = _parameters(report, sorted(keep))
    with g.subgraph(name="cluster_args") as a:
        a.attr(label="kernel parameters", style="dashed", color="#bdc1c6")
        for name in params:
            a.node(f"arg_{name}", name, shape="invhouse", style="filled", fillcolor="#e8eaed")
    with g.subgraph(name=f"cluster_c{index}") as c:
        border, fill = STATUS_COLOURS[p.status]
        c.attr(label=p.label, color=border, fillcolor=fill, style="filled,rounded", penwidth="2")
        for i in sorted(keep):
            s = by_index[i]
            if i in p.slice:
                c.node(
                    f"s{i}",
                    "↻ " + _label(s) + "\nrecomputed",
                    shape="box",
                    style="dashed,rounded,filled",
                    fillcolor="white",
                    color=RECOMPUTED,
                    fontcolor=RECOMPUTED,
                )
            else:
                c.node(
                    f"s{i}", _label(s), **{**_style(s), "style": _filled(s), "fillcolor": "white"}
                )
    for i in sorted(keep):
        s = by_index[i]
        for d in s.uses:
            if d in keep:
                g.edge(f"s{d}", f"s{i}", color="#5f6368")
            elif args is not None and d == args.index:
                text = "\n".join(t for n, t in source if s.lines[0] <= n <= s.lines[1])
                named = [n for n in params if re.search(rf"\b{re.escape(n)}\b", text)] or params
                for n in named:
                    g.edge(f"arg_{n}", f"s{i}", color="#5f6368")
    return g


def edit_graph(kernel: object, collapse: bool = True) -> Graph:
    """The constructs of the latest compile against the previous compile of the same kernel.

    With `collapse`, each run of two or more unchanged constructs is one node ("27 unchanged
    constructs"); the graph keeps the uncollapsed drawing too (`Graph.expanded`), and clicking the
    node shows it."""
    report = report_of(kernel)
    rows = edits(report)
    g = _edit_graph(report, rows, _runs(rows) if collapse else [])
    if g.expanded is None and collapse and _runs(rows):
        g.expanded = _edit_graph(report, rows, [])
    return g


def _runs(rows: list[Edit]) -> list[list[Edit]]:
    """Runs of two or more consecutive unchanged constructs."""
    runs: list[list[Edit]] = [[]]
    for e in rows:
        if e.change == "unchanged" and e.latest is not None and e.previous is not None:
            runs[-1].append(e)
        elif runs[-1]:
            runs.append([])
    return [r for r in runs if len(r) >= 2]


def _edit_graph(report: KernelReport, rows: list[Edit], runs: list[list[Edit]]) -> Graph:
    counts = {c: sum(e.change == c for e in rows) for c in EDIT_COLOURS}
    summary = ", ".join(f"{n} {c}" for c, n in counts.items() if n)
    folded = {id(e): k for k, run in enumerate(runs) for e in run}
    g = _start(
        f"edits_{report.kernel}",
        f"edit graph of `{report.kernel}`: {summary or 'no constructs'}",
        rankdir="LR",
    )
    with g.subgraph(name="cluster_previous") as prev:
        prev.attr(
            label="previous compile" if report.previous else "previous compile: none",
            style="dashed",
            color="#bdc1c6",
        )
        for k, run in enumerate(runs):
            prev.node(f"qd_expand_p{k}", _run_label(run, "previous"), **_run_style(k, "p"))
        for e in rows:
            if e.previous is not None and id(e) not in folded:
                prev.node(
                    f"e_p{e.previous.index}",
                    _edit_label(e.previous),
                    shape="box",
                    style="rounded",
                    color=EDIT_COLOURS[e.change],
                )
    with g.subgraph(name="cluster_latest") as latest:
        latest.attr(label="latest compile", style="dashed", color="#bdc1c6")
        for k, run in enumerate(runs):
            latest.node(f"qd_expand_l{k}", _run_label(run, "latest"), **_run_style(k, "l"))
        for e in rows:
            if e.latest is not None and id(e) not in folded:
                label = _edit_label(e.latest) + f"\n{EDIT_WORDS[e.change]}"
                latest.node(
                    f"e_l{e.latest.index}",
                    label,
                    shape="box",
                    style="rounded,filled,bold",
                    fillcolor="white",
                    color=EDIT_COLOURS[e.change],
                    tooltip="\n".join(e.notes),
                )
    for k, run in enumerate(runs):
        g.edge(
            f"qd_expand_p{k}",
            f"qd_expand_l{k}",
            label="unchanged",
            color=EDIT_COLOURS["unchanged"],
            fontcolor=EDIT_COLOURS["unchanged"],
            penwidth="2",
        )
    for e in rows:
        colour = EDIT_COLOURS[e.change]
        if e.previous is not None and e.latest is not None and id(e) not in folded:
            g.edge(
                f"e_p{e.previous.index}",
                f"e_l{e.latest.index}",
                label=e.change,
                color=colour,
                fontcolor=colour,
                penwidth="2",
                style="solid" if e.change == "unchanged" else "bold",
            )
    _legend(
        g,
        [
            (EDIT_WORDS[c], {"shape": "box", "style": "rounded", "color": colour, "penwidth": "2"})
            for c, colour in EDIT_COLOURS.items()
        ],
    )
    return g


def _run_label(run: list[Edit], side: str) -> str:
    parts = [e.latest if side == "latest" else e.previous for e in run]
    first, last = parts[0], parts[-1]
    return (
        f"{len(run)} unchanged constructs\n"
        f"constructs {first.index}-{last.index} · lines {first.lines[0]}-{last.lines[1]}\n"  # type: ignore[union-attr]
        "(click to expand)"
    )


def _run_style(k: int, side: str) -> dict[str, str]:
    return {
        "shape": "box3d",
        "style": "rounded",
        "color": EDIT_COLOURS["unchanged"],
        "id": f"qd_expand_{side}{k}",
        "tooltip": "unchanged constructs, folded; click to show them one by one",
    }


def _edit_label(p: Part) -> str:
    key = f"\nkey {p.report.short_key}" if p.report is not None else ""
    return p.label + key
