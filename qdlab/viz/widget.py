"""`SplitVisualizer`: pick a construct, see its lines, its slice, its stages, its cache entry and
any fallback.

The widget is plain ipywidgets fed from `qd.explain`'s report. Tabs are filled when they are shown,
so compiled stages that are produced on demand (LLVM IR, assembly) cost nothing until someone opens
them. Every open visualizer of a kernel refreshes when a kernel of that name compiles again (a
re-run cell); the compile hook holds visualizers weakly, so a closed one is simply dropped.
"""

from __future__ import annotations

import html
import weakref
from importlib import resources

import ipywidgets as widgets

from .. import state
from ..compiler.explain import KernelReport
from .fallbacks import advice
from .graphs import EDIT_WORDS, construct_graph, edit_graph, slice_graph
from .model import Part, edits, lines_of, parts, report_of, source_lines, statement_at

TABS = ("graph", "IR", "LLVM IR", "assembly", "cache", "fallback")
OWN, SLICE, RED = "#ffe8a3", "#d2e3fc", "#fad2cf"
"""Background of the selected construct's own lines, its slice lines and the fallback's lines."""
_live: weakref.WeakSet[SplitVisualizer] = weakref.WeakSet()


def _on_compile(kernel: object, compiled: object) -> None:
    report: KernelReport = compiled.report  # type: ignore[attr-defined]
    for view in list(_live):
        if view.report.kernel == report.kernel:
            view.refresh(report)


def _pre(text: str) -> str:
    return (
        f"<pre style='font-family:monospace;font-size:11px;line-height:1.3;margin:0'>"
        f"{html.escape(text)}</pre>"
    )


def _section(title: str, body: str) -> str:
    return f"<h4 style='margin:6px 0 2px'>{html.escape(title)}</h4>{body}"


class SplitVisualizer(widgets.VBox):
    """How a kernel was split: a construct selector, the highlighted source and one tab per view."""

    def __init__(self, kernel: object) -> None:
        self.header = widgets.HTML()
        self.selector = widgets.Dropdown(
            description="construct", layout=widgets.Layout(width="520px")
        )
        self.source = widgets.HTML(layout=widgets.Layout(min_width="420px", overflow="auto"))
        self.panes = {name: widgets.HTML(layout=widgets.Layout(overflow="auto")) for name in TABS}
        self.tabs = widgets.Tab(
            children=[self.panes[n] for n in TABS],
            titles=TABS,
            layout=widgets.Layout(flex="1 1 auto", min_width="0"),
        )
        self.report = report_of(kernel)
        self._stale: set[str] = set(TABS)
        self._overview = ""
        super().__init__(
            [
                self.header,
                self.selector,
                widgets.HBox(
                    [self.source, self.tabs], layout=widgets.Layout(align_items="flex-start")
                ),
            ]
        )
        self.add_class("qdlab-split-visualizer")
        self._quiet = False
        self.selector.observe(lambda _: self._quiet or self._select(), names="value")
        self.tabs.observe(lambda _: self._show(), names="selected_index")
        self.refresh(self.report)
        _live.add(self)
        if _on_compile not in state.compile_hooks:
            state.compile_hooks.append(_on_compile)

    # -- state -------------------------------------------------------------------------------------
    @property
    def part(self) -> Part | None:
        return next((p for p in self.parts if p.index == self.selector.value), None)

    def refresh(self, report: KernelReport) -> None:
        """Show another compile of the kernel, keeping the selected construct where it still
        exists."""
        self.report = report
        self.parts = parts(report)
        self._changes = {e.latest.index: e.change for e in edits(report) if e.latest is not None}
        self._overview = ""
        keep = self.selector.value
        options = [(p.label, p.index) for p in self.parts]
        values = [v for _, v in options]
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

    # -- views -------------------------------------------------------------------------------------
    def _header(self) -> str:
        r = self.report
        what = (
            f"split into {len(r.constructs)} constructs, {r.compiled} compiled, {r.reused} reused"
            if r.mode == "per_offload"
            else "compiled whole"
        )
        fb = f" · fallback <code>{r.fallback.code}</code>" if r.fallback else ""
        return f"<b>{html.escape(r.kernel)}</b>: {what}, {r.compile_ms:.1f} ms{fb}"

    def _source(self) -> str:
        lit = self.highlighted
        fb = self.report.fallback
        red = {
            x for x in ((fb.lineno, fb.blocker.lineno if fb.blocker else None) if fb else ()) if x
        }
        rows = []
        for n, text in source_lines(self.report):
            kind, colour = (
                ("fallback", RED)
                if n in red
                else ("own", OWN)
                if n in lit["own"]
                else (("slice", SLICE) if n in lit["slice"] else ("", "transparent"))
            )
            rows.append(
                f"<div class='qd-line qd-{kind or 'plain'}' data-line='{n}' "
                f"style='background:{colour};white-space:pre'>"
                f"<span style='color:#80868b'>{n:4d}  </span>{html.escape(text)}</div>"
            )
        key = (
            "<div style='font-size:11px;margin-top:4px'>"
            f"<span style='background:{OWN}'>&nbsp;own lines&nbsp;</span> "
            f"<span style='background:{SLICE}'>&nbsp;recomputed (slice)&nbsp;</span> "
            f"<span style='background:{RED}'>&nbsp;fallback&nbsp;</span></div>"
        )
        return f"<div style='font-family:monospace;font-size:12px'>{''.join(rows)}</div>{key}"

    def _render(self, tab: str) -> str:
        p = self.part
        if p is None and tab != "fallback":
            return "<i>This kernel has no constructs.</i>"
        return getattr(self, "_tab_" + tab.lower().replace(" ", "_"))(p)

    def _tab_graph(self, p: Part) -> str:
        if not self._overview:
            script = resources.files("qdlab.viz").joinpath("static/select.js").read_text()
            graphs = _section(
                "constructs (click one to select it)", construct_graph(self.report).html()
            )
            if self.report.previous is not None:
                graphs += _section(
                    "edits since the previous compile", edit_graph(self.report).html()
                )
            self._overview = (
                f"<div class='qdlab-construct-graph' style='cursor:pointer' "
                f'onclick="{html.escape(script, quote=True)}">{graphs}</div>'
            )
        return self._overview + _section(
            f"slice of construct {p.index}", slice_graph(self.report, p.index).html()
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
            self._whole_note()
            + _section(title, _pre(after))
            + _section("kernel before the split", _pre(before))
        )

    def _tab_llvm_ir(self, p: Part) -> str:
        return (
            self._whole_note()
            + _section("optimized", _pre(self._stage(p, "llvm_optimized") or "(none)"))
            + _section("as emitted", _pre(self._stage(p, "llvm") or "(none)"))
        )

    def _tab_assembly(self, p: Part) -> str:
        ptx = self._stage(p, "ptx")
        body = _section("PTX", _pre(ptx)) if ptx else ""
        return (
            self._whole_note()
            + body
            + _section("assembly", _pre(self._stage(p, "asm") or "(none)"))
        )

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
            ("compile time", f"{c.compile_ms:.1f} ms"),
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
        return f"<table>{table}</table>{diff}"

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
                f"<p>{html.escape(fb.message)}</p>{blocker}"
                + _section("what it means", f"<p>{html.escape(a.meaning)}</p>")
                + _section("how to make it splittable", f"<p>{html.escape(a.rewrite)}</p>")
                + (_pre(a.example) if a.example else "")
            )
        if r.alias_pairs:
            pairs = ", ".join(f"<code>{a}</code>/<code>{b}</code>" for a, b in r.alias_pairs)
            out.append(f"<p>Each launch checks that these arguments do not overlap: {pairs}.</p>")
        for line in r.runtime_fallbacks:
            code = line.split(":", 1)[0]
            out.append(
                f"<p><b>runtime</b> <code>{html.escape(line)}</code><br>"
                f"{html.escape(advice(code).meaning)}<br>{html.escape(advice(code).rewrite)}</p>"
            )
        return "".join(out)
