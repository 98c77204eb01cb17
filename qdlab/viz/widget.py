"""`SplitVisualizer`: pick a construct, see its lines, its slice, its stages, its cache entry and
any fallback.

The widget is plain ipywidgets fed from `qd.explain`'s report. Tabs are filled when they are shown,
so compiled stages that are produced on demand (LLVM IR, assembly) cost nothing until someone opens
them. Every open visualizer of a kernel refreshes when a kernel of that name compiles again (a
re-run cell); the compile hook holds visualizers weakly, so a closed one is simply dropped.
"""

from __future__ import annotations

import html
import itertools
import re
import statistics
import weakref
from collections.abc import Callable
from importlib import resources

import ipywidgets as widgets

from ..compiler.report.explain import KernelReport
from ..core.words import plural
from ..host import state
from .fallbacks import advice
from .graphs import (
    EDIT_WORDS,
    FALLBACK,
    RECOMPUTED,
    STATUS_COLOURS,
    construct_graph,
    edit_graph,
    slice_graph,
)
from .listing import Row, asm_rows, llvm_rows, text_of
from .listing import diff as listing_diff
from .model import Part, edits, lines_of, parts, report_of, source_lines, statement_at
from .render import script

TABS = ("graph", "IR", "LLVM IR", "assembly", "diff", "cache", "fallback")
PALETTE = ("#fde293", "#c8e6c9", "#bbdefb", "#e1d5f5", "#b2ebf2", "#dcedc8", "#ffe0b2", "#cfd8dc")
"""Background of a source line and of the code rows that came from it (by line number)."""
RED = "#fad2cf"
_live: weakref.WeakSet[SplitVisualizer] = weakref.WeakSet()
_views = itertools.count()


def _on_compile(kernel: object, compiled: object) -> None:
    report: KernelReport = compiled.report  # type: ignore[attr-defined]
    for view in list(_live):
        if view.report.kernel == report.kernel:
            view.refresh(report)


def _static(name: str) -> str:
    return resources.files("qdlab.viz").joinpath(f"static/{name}").read_text()


def _pre(text: str) -> str:
    return f"<div class='qd-code'>{html.escape(text)}</div>"


def _section(title: str, body: str) -> str:
    return f"<h4>{html.escape(title)}</h4>{body}"


def colour(line: int | None) -> str:
    """The background shared by a source line and the code rows mapped to it."""
    return PALETTE[line % len(PALETTE)] if line else "transparent"


def _rows(rows: list[Row], mapped: set[int]) -> str:
    out = []
    for r in rows:
        line = r.line if r.line in mapped else None
        attrs = f" data-src='{line}' style='background:{colour(line)}'" if line else ""
        out.append(f"<div class='qd-row'{attrs}>{html.escape(r.text) or ' '}</div>")
    return "".join(out)


def listing(
    title: str, main: list[Row], other: list[Row], mapped: set[int], toggle: str, part: bool
) -> str:
    """A code pane: `main` shown, `other` behind a toggle (everything `main` is `part` of, else
    another form: the LLVM IR as emitted); rows coloured by source line, with search and copy."""
    on, off = toggle.split("|")
    count = (
        f"{len(main)} lines"
        if not other
        else f"{len(main)} of {len(other)} lines"
        if part
        else f"{len(main)} lines ({len(other)} {off})"
    )
    button = (
        f"<button data-act='all' data-on='{on}' data-off='{off}'>{off}</button>" if other else ""
    )
    return (
        f'<div class=\'qd-listing\' onclick="{script()}" onmouseover="{script()}" '
        f"oninput=\"{script()}\"><div class='qd-tools'><b>{html.escape(title)}</b>"
        f"<input type='search' placeholder='search' aria-label='search {html.escape(title)}'>"
        f"{button}<button data-act='copy'>copy</button><span>{count}</span></div>"
        f"<div class='qd-scroll'><div class='qd-filtered'>"
        f"{_rows(main, mapped)}</div><div class='qd-full'>{_rows(other, mapped)}</div></div></div>"
    )


def diff_html(text: str) -> str:
    rows = []
    for line in text.splitlines():
        cls = (
            "qd-hunk"
            if line.startswith(("@@", "+++", "---"))
            else "qd-add"
            if line.startswith("+")
            else "qd-del"
            if line.startswith("-")
            else ""
        )
        rows.append(f"<div class='qd-row {cls}'>{html.escape(line) or ' '}</div>")
    return f"<div class='qd-scroll' style='height:auto;max-height:300px'>{''.join(rows)}</div>"


def _legend() -> str:
    """The graphs' colours, above the graphs so it stays in view while they scroll."""
    keys = [
        ("compiled", STATUS_COLOURS["compiled"]),
        ("reused", STATUS_COLOURS["reused"]),
        ("recomputed", (RECOMPUTED, "white")),
        ("selected", ("#1a73e8", "white")),
        ("fallback", (FALLBACK, "white")),
    ]
    spans = "".join(
        f"<span style='border-color:{border};background:{fill}'>{name}</span>"
        for name, (border, fill) in keys
    )
    return f"<div class='qd-legend'>{spans}</div>"


def words(text: str) -> str:
    """Plain text as HTML, with `code` in backticks shown as code."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text))


class SplitVisualizer(widgets.VBox):
    """How a kernel was split: a construct selector, the highlighted source and one tab per view.

    The layout is fixed (source 38 %, tabs 62 %, 540 px tall; `static/visualizer.css`), so it
    fits a laptop screen beside JupyterLab's file browser and keeps its size from tab to tab."""

    def __init__(self, kernel: object) -> None:
        self.header = widgets.HTML()
        self.selector = widgets.Dropdown(
            description="construct", layout=widgets.Layout(width="min(620px, 100%)")
        )
        self.source = widgets.HTML(layout=widgets.Layout(width="38%", flex="0 0 38%"))
        self.source.add_class("qd-source-box")
        self.panes = {name: widgets.HTML() for name in TABS}
        self.tabs = widgets.Tab(
            children=[self.panes[n] for n in TABS],
            titles=TABS,
            layout=widgets.Layout(flex="1 1 0", min_width="0", width="62%"),
        )
        self.tabs.add_class("qd-tabs-box")
        report = report_of(kernel)
        self.report: KernelReport | None = None
        self._stale: set[str] = set(TABS)
        self._overview = ""
        self._uid = f"qd-view-{next(_views)}"
        body = widgets.HBox([self.source, self.tabs], layout=widgets.Layout(width="100%"))
        body.add_class("qd-body")
        super().__init__(
            [self.header, self.selector, body],
            layout=widgets.Layout(width="100%", max_width="1400px"),
        )
        self.add_class("qdlab-split-visualizer")
        self.add_class(self._uid)
        self._quiet = False
        self.selector.observe(lambda _: self._quiet or self._select(), names="value")
        self.tabs.observe(lambda _: self._show(), names="selected_index")
        self.refresh(report)
        _live.add(self)
        for hooks in (state.compile_hooks, state.report_hooks):
            if _on_compile not in hooks:
                hooks.append(_on_compile)

    # -- state -------------------------------------------------------------------------------------
    @property
    def part(self) -> Part | None:
        return next((p for p in self.parts if p.index == self.selector.value), None)

    def refresh(self, report: KernelReport) -> None:
        """Show another compile of the kernel: the first construct it recompiled, else the one
        selected before (where it still exists)."""
        fresh = report is not self.report
        self.report = report
        self.parts = parts(report)
        changes = edits(report)
        self._changes = {e.latest.index: e.change for e in changes if e.latest is not None}
        self._edits = {e.latest.index: e for e in changes if e.latest is not None}
        self._overview = ""
        keep = self.selector.value
        options = [(p.label, p.index) for p in self.parts]
        values = [v for _, v in options]
        rebuilt = [
            p.index
            for p in self.parts
            if report.previous is not None and self._changes.get(p.index) != "unchanged"
        ]
        if fresh and rebuilt:
            keep = rebuilt[0]
        self._quiet = True
        self.selector.options = options or [("(no constructs)", None)]
        self.selector.value = keep if keep in values else (values[0] if values else None)
        self._quiet = False
        self.header.value = self._header()
        self._select()

    def select(self, index: int) -> None:
        self.selector.value = index

    def contents(self, tab: str) -> str:
        """The HTML of one tab, filled in if it was not shown yet."""
        if tab in self._stale:
            self.panes[tab].value = self._render(tab)
            self._stale.discard(tab)
        return self.panes[tab].value

    @property
    def highlighted(self) -> dict[str, list[int]]:
        """Source lines highlighted now: the construct's own lines and its slice lines."""
        p = self.part
        if p is None:
            return {"own": [], "slice": []}
        own = lines_of(self.report, p.own)
        return {"own": own, "slice": [n for n in lines_of(self.report, p.slice) if n not in own]}

    def close(self) -> None:
        _live.discard(self)
        for child in (self.header, self.selector, self.source, self.tabs, *self.panes.values()):
            child.close()
        super().close()

    def _select(self) -> None:
        self.source.value = self._source()
        self._stale = set(TABS)
        self._show()

    def _show(self) -> None:
        self.contents(TABS[self.tabs.selected_index or 0])

    def _repr_mimebundle_(self, **kwargs: object) -> dict:
        """The live widget, and a static snapshot (`text/html`) for pages without its JavaScript
        (an exported notebook offline): the header, the construct graph and the selected
        construct's IR."""
        data = super()._repr_mimebundle_(**kwargs)
        if isinstance(data, tuple):
            data = data[0]
        data = dict(data or {})
        data["text/html"] = self.snapshot()
        return data

    def snapshot(self) -> str:
        p = self.part
        ir = self._stage(p, "ir") if p is not None else None
        return (
            f"<div class='qdlab-snapshot'><style>{_static('visualizer.css')}</style>"
            "<p style='color:#5f6368'><i>A static snapshot of the qdlab visualizer: the live "
            "widget needs a running kernel (run the notebook to select constructs, hover lines "
            "and open the other tabs).</i></p>"
            f"<div class='qd-header'>{self._header(style=False)}</div>"
            f"{construct_graph(self.report).html()}"
            + (_section(f"IR of construct {p.index}", _pre(ir)) if p is not None and ir else "")
            + "</div>"
        )

    # -- views -------------------------------------------------------------------------------------
    def _header(self, style: bool = True) -> str:
        r = self.report
        spent = (
            sum(c.compile_ms for c in r.constructs if c.status == "compiled")
            if r.mode == "per_offload"
            else r.compile_ms
        )
        what = (
            f"split into {plural(len(r.constructs), 'construct')}, {r.compiled} compiled, "
            f"{r.reused} reused; "
            f"{spent:.1f} ms compiling"
            if r.mode == "per_offload"
            else f"compiled whole in {spent:.1f} ms"
        )
        fb = f" · fallback <code>{r.fallback.code}</code>" if r.fallback else ""
        run = ""
        if r.run_ms:
            total = sum(statistics.median(v) for v in r.run_ms.values())
            n = max(len(v) for v in r.run_ms.values())
            run = f" · runs in {total:.3f} ms a launch (median of {n}, qd.profile)"
        css = f"<style>{_static('visualizer.css')}</style>" if style else ""
        return f"{css}<div class='qd-header'><b>{html.escape(r.kernel)}</b>: {what}{run}{fb}</div>"

    def _mapped(self) -> set[int]:
        """Source lines of the selected construct (its own and its recomputed lines)."""
        lit = self.highlighted
        return set(lit["own"]) | set(lit["slice"])

    def _source(self) -> str:
        lit = self.highlighted
        fb = self.report.fallback
        red = {
            x for x in ((fb.lineno, fb.blocker.lineno if fb.blocker else None) if fb else ()) if x
        }
        mapped = self._mapped()
        rows = []
        for n, text in source_lines(self.report):
            kind = (
                "fallback"
                if n in red
                else "own"
                if n in lit["own"]
                else ("slice" if n in lit["slice"] else "plain")
            )
            back = RED if n in red else colour(n) if n in mapped else "transparent"
            src = f" data-src='{n}'" if n in mapped else ""
            rows.append(
                f"<div class='qd-line qd-{kind}' data-line='{n}'{src} style='background:{back}'>"
                f"<span class='qd-gutter'>{n:4d}</span>{html.escape(text)}</div>"
            )
        key = (
            "<div class='qd-key' style='font-size:11px;margin-top:4px'>"
            "<span style='box-shadow:inset 4px 0 #f29900;padding-left:8px'>own lines</span> "
            "<span style='box-shadow:inset 4px 0 #1a73e8;padding-left:8px'>recomputed (slice)"
            "</span> <span style='background:#fad2cf'>&nbsp;fallback&nbsp;</span> · hover or "
            "click a line to find its code</div>"
        )
        return (
            f"<div class='qd-source qd-scroll' onmouseover=\"{script()}\" "
            f'onclick="{script()}">{"".join(rows)}</div>{key}'
            f"<img src='data:,' hidden alt='' onerror=\"{script()}\">"
        )

    def _render(self, tab: str) -> str:
        p = self.part
        if p is None and tab != "fallback":
            return "<i>This kernel has no constructs.</i>"
        return RENDERERS[tab](self, p)

    def _tab_graph(self, p: Part) -> str:
        if not self._overview:
            graphs = _section(
                "constructs (click one to select it)", construct_graph(self.report).html("300px")
            )
            if self.report.previous is not None:
                graphs += _section(
                    "edits since the previous compile", edit_graph(self.report).html("240px")
                )
            self._overview = (
                f"<div class='qdlab-construct-graph' style='cursor:pointer'>{_legend()}{graphs}"
                "</div>"
            )
        selected = (
            f"<style>.{self._uid} g[id='construct_{p.index}'] > g > a > path, "
            f".{self._uid} g[id='construct_{p.index}'] > path "
            "{stroke:#1a73e8 !important;stroke-width:5px !important}</style>"
        )
        hook = (
            f"<img src='data:,' hidden alt='' data-cluster='construct_{p.index}' "
            f'onerror="{script()}">'
        )
        return (
            f"<div class='qd-scroll' style='height:540px;padding:0 4px'>{selected}"
            + self._overview
            + _section(
                f"slice of construct {p.index}", slice_graph(self.report, p.index).html("260px")
            )
            + f"</div>{hook}"
        )

    def _stage(self, p: Part, name: str) -> str | None:
        owner = p.report if p.report is not None else self.report
        if name not in owner.stages:
            return None
        return owner.stage(name)

    def _whole_note(self) -> str:
        if self.report.mode == "per_offload":
            return ""
        return (
            "<p><i>The kernel was compiled whole, so these are the whole kernel's stages.</i></p>"
        )

    def _tab_ir(self, p: Part) -> str:
        before = self._stage(p, "ir_before_split") or self.report.ir_before_split
        after = self._stage(p, "ir") or "(not available)"
        title = f"construct {p.index} after the split" if p.report is not None else "whole kernel"
        return (
            "<div class='qd-scroll'>"
            + self._whole_note()
            + _section(title, _pre(after))
            + _section("kernel before the split", _pre(before))
            + "</div>"
        )

    def _tab_llvm_ir(self, p: Part) -> str:
        optimized = self._stage(p, "llvm_optimized_lines")
        emitted = self._stage(p, "llvm_lines")
        if optimized is None or emitted is None:
            return self._whole_note() + "<p>(no LLVM IR for this target)</p>"
        return self._whole_note() + listing(
            f"LLVM IR of construct {p.index}, optimized",
            llvm_rows(optimized),
            llvm_rows(emitted),
            self._mapped(),
            "optimized|as emitted",
            part=False,
        )

    def _tab_assembly(self, p: Part) -> str:
        asm = self._stage(p, "asm_lines")
        if asm is None:
            return self._whole_note() + "<p>(no assembly for this target)</p>"
        return self._whole_note() + listing(
            f"assembly of construct {p.index}",
            asm_rows(asm),
            asm_rows(asm, filtered=False),
            self._mapped(),
            "filtered|directives",
            part=True,
        )

    def _tab_diff(self, p: Part) -> str:
        e = self._edits.get(p.index)
        if self.report.previous is None or e is None:
            return "<p>This is the first compile of this kernel seen here: nothing to diff.</p>"
        if e.previous is None or e.previous.report is None or p.report is None:
            return f"<p>Construct {p.index} is new in this compile: nothing to diff.</p>"
        if e.change == "unchanged":
            return (
                f"<p>Construct {p.index} is unchanged since the previous compile (same key "
                f"<code>{p.report.short_key}</code>): its IR, LLVM IR and assembly are the "
                "same.</p>"
            )
        old, new = e.previous.report, p.report
        head = (
            f"<p>Construct {p.index} against construct {e.previous.index} of the previous "
            f"compile: {EDIT_WORDS[e.change]}.</p>"
        )
        out = [head]
        for title, stage, rows in (
            ("IR", "ir", None),
            ("LLVM IR (optimized)", "llvm_optimized_lines", llvm_rows),
            ("assembly (filtered)", "asm_lines", asm_rows),
        ):
            if stage not in old.stages or stage not in new.stages:
                continue
            a, b = old.stage(stage), new.stage(stage)
            if rows is not None:
                a, b = text_of(rows(a)), text_of(rows(b))
            d = listing_diff(a, b)
            out.append(_section(title, diff_html(d) if d else "<p>(no change)</p>"))
        return "<div class='qd-scroll'>" + "".join(out) + "</div>"

    def _tab_cache(self, p: Part) -> str:
        c = p.report
        if c is None:
            return (
                "<p>The kernel was compiled whole, so construct "
                f"{p.index} has no cache entry of its own ({self.report.compile_ms:.1f} ms for the "
                "kernel).</p>"
            )
        rows = [
            ("key", f"<code>{c.cache_key}</code>"),
            ("status", c.status),
            ("edit", EDIT_WORDS[self._changes.get(p.index, "new")]),
            (
                "why compiled",
                html.escape(c.recompile_reason or "-") if c.status == "compiled" else "-",
            ),
            ("served from", c.served_from or "-"),
            ("compile time", f"{c.compile_ms:.1f} ms"),
            ("run time", self._run_time(p.index)),
            ("tasks", ", ".join(f"{t.kind} {t.lines[0]}-{t.lines[1]}" for t in c.tasks)),
        ]
        table = "".join(
            f"<tr><th style='text-align:left;padding-right:8px'>{k}</th><td>{v}</td></tr>"
            for k, v in rows
        )
        diff = (
            _section("key diff against the previous compile", _pre(c.key_diff))
            if c.key_diff
            else ""
        )
        return f"<div class='qd-scroll'><table>{table}</table>{diff}</div>"

    def _run_time(self, index: int) -> str:
        samples = self.report.run_ms.get(index)
        if not samples:
            return "not measured: <code>qd.profile(kernel, *args)</code> times each construct"
        return (
            f"{statistics.median(samples):.3f} ms median over {len(samples)} launches "
            f"({min(samples):.3f}-{max(samples):.3f} ms)"
        )

    def _tab_fallback(self, p: Part | None) -> str:
        r = self.report
        out = []
        if r.fallback is None:
            out.append("<p>No compile-time fallback: the kernel was split.</p>")
        else:
            fb = r.fallback
            a = advice(fb.code)
            at = statement_at(r, fb.lineno)
            where = (
                f"line {fb.lineno}: <code>{html.escape(fb.source_line)}</code>"
                if fb.lineno
                else "no line"
            )
            blocker = (
                (
                    f"<p>Blocked by line {fb.blocker.lineno}: "
                    f"<code>{html.escape(fb.blocker.source_line.strip())}</code></p>"
                )
                if fb.blocker
                else ""
            )
            construct = (
                f" (construct {at.construct})"
                if at is not None and at.construct is not None
                else ""
            )
            out.append(
                f"<p><b><code>{fb.code}</code></b> at {where}{construct}</p>"
                f"<p>{words(fb.message)}</p>{blocker}"
                + _section("what it means", f"<p>{words(a.meaning)}</p>")
                + _section("how to make it splittable", f"<p>{words(a.rewrite)}</p>")
                + (_pre(a.example) if a.example else "")
            )
        if r.alias_pairs:
            pairs = ", ".join(f"<code>{a}</code>/<code>{b}</code>" for a, b in r.alias_pairs)
            out.append(f"<p>Each launch checks that these arguments do not overlap: {pairs}.</p>")
        for line in r.runtime_fallbacks:
            code = line.split(":", 1)[0]
            out.append(
                f"<p><b>runtime</b> <code>{html.escape(line)}</code><br>"
                f"{words(advice(code).meaning)}<br>{words(advice(code).rewrite)}</p>"
            )
        return "<div class='qd-scroll'>" + "".join(out) + "</div>"


RENDERERS: dict[str, Callable[..., str]] = {
    "graph": SplitVisualizer._tab_graph,
    "IR": SplitVisualizer._tab_ir,
    "LLVM IR": SplitVisualizer._tab_llvm_ir,
    "assembly": SplitVisualizer._tab_assembly,
    "diff": SplitVisualizer._tab_diff,
    "cache": SplitVisualizer._tab_cache,
    "fallback": SplitVisualizer._tab_fallback,
}
"""What each of `TABS` shows, by its title: a method called with the visualizer and the selected
construct (None only for the fallback tab)."""
assert tuple(RENDERERS) == TABS
