"""What the magics display: each view is a small object with a `text/plain` and a `text/html` form.

The views read `qd.explain`'s report dataclasses, the cache's stats and the config record, and
nothing else. Both forms are built from the same rows, so a terminal, a CI log and JupyterLab show
the same facts.
"""

from __future__ import annotations

import html
import os
from collections.abc import Iterable, Mapping

from ..compiler.cache import CacheStats
from ..compiler.report.explain import KernelReport
from ..core.config import Config
from ..core.inert import WHY as INERT_WHY
from ..core.words import plural
from ..host.kernel import Kernel

HEAD = ("#", "lines", "kind", "status", "ms", "key")
_STATUS_COLOUR = {"compiled": "#b35c00", "reused": "#1a7f37"}


class View:
    """A display object: subclasses give `text()` and `html()`."""

    def text(self) -> str:
        raise NotImplementedError

    def html(self) -> str:
        raise NotImplementedError

    def _repr_mimebundle_(
        self, include: Iterable[str] | None = None, exclude: Iterable[str] | None = None
    ) -> dict[str, str]:
        return {"text/plain": self.text(), "text/html": self.html()}

    def __repr__(self) -> str:
        return self.text()


def _table_text(head: tuple[str, ...], rows: list[tuple[str, ...]], indent: str = "  ") -> str:
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    return "\n".join(
        indent + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in [head, *rows]
    )


def _table_html(
    head: tuple[str, ...], rows: list[tuple[str, ...]], status_col: int | None = None
) -> str:
    def cell(i: int, x: str) -> str:
        colour = _STATUS_COLOUR.get(x.split(" ", 1)[0]) if i == status_col else None
        style = f' style="color:{colour}"' if colour else ""
        return f"<td{style}>{html.escape(x)}</td>"

    top = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(cell(i, x) for i, x in enumerate(r)) + "</tr>" for r in rows)
    return f"<table><tr>{top}</tr>{body}</table>"


class KernelSummary(View):
    """One kernel's latest compile: mode, fallback, its constructs, and what compiling cost or
    saved."""

    def __init__(
        self, kernel: Kernel, known_ms: Mapping[str, float], note: str = "", failed: bool = False
    ) -> None:
        self.kernel = kernel
        self.failed = failed
        """Its compile in this cell failed: only the note shows (not an earlier compile's table)."""
        self.known_ms = known_ms
        """Compile time of each cache key seen compiled in this process (to estimate the time a
        reuse saved)."""
        self.note = note
        """Why the kernel is not compiled yet (shown until its first call compiles it)."""

    @property
    def report(self) -> KernelReport | None:
        if self.failed:
            return None
        return self.kernel.latest.report if self.kernel.latest else None

    def options(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.kernel.options.items())

    def totals(self, r: KernelReport) -> str:
        if r.mode != "per_offload":
            return f"compiled whole in {r.compile_ms:.1f} ms"
        spent = sum(c.compile_ms for c in r.constructs if c.status == "compiled")
        reused = [c for c in r.constructs if c.status == "reused"]
        saved = sum(self.known_ms.get(c.cache_key, 0.0) for c in reused)
        untimed = sum(c.cache_key not in self.known_ms for c in reused)
        text = (
            f"{plural(len(r.constructs), 'construct')}: {r.compiled} compiled, {r.reused} reused; "
            f"{spent:.1f} ms compiling, ~{saved:.1f} ms saved"
        )
        return text + (f" (+{untimed} reused not timed in this session)" if untimed else "")

    def fallback(self, r: KernelReport) -> tuple[str, str] | None:
        """(headline, source line) of the fallback that made the kernel whole, if any."""
        fb = r.fallback
        if fb is None:
            return None
        where = f" at {_place(r.filename)} {fb.lineno}" if fb.lineno else ""
        return f"fallback {fb.code}{where}: {fb.message}", fb.source_line

    def text(self) -> str:
        r = self.report
        name = self.kernel.name
        if r is None:
            return f"{name}: {self.note or 'not compiled yet'}"
        opts = f" [{self.options()}]" if self.kernel.options else ""
        lines = [f"{name}: {r.mode}{opts}, {self.totals(r)}"]
        fb = self.fallback(r)
        if fb:
            lines += [f"  {fb[0]}", f"      {fb[1]}"]
        if r.constructs:
            lines.append(_table_text(HEAD, r.summary_rows()))
        return "\n".join(lines)

    def html(self) -> str:
        r = self.report
        name = f"<b>{html.escape(self.kernel.name)}</b>"
        if r is None:
            return (
                f"<div class='qdlab-summary'>{name}: "
                f"{html.escape(self.note or 'not compiled yet')}</div>"
            )
        opts = f" <code>[{html.escape(self.options())}]</code>" if self.kernel.options else ""
        parts = [f"<div>{name}: <code>{r.mode}</code>{opts}, {html.escape(self.totals(r))}</div>"]
        fb = self.fallback(r)
        if fb:
            parts.append(f"<div>{html.escape(fb[0])}<br><code>{html.escape(fb[1])}</code></div>")
        if r.constructs:
            parts.append(_table_html(HEAD, r.summary_rows(), status_col=3))
        return "<div class='qdlab-summary'>" + "".join(parts) + "</div>"


class CellSummary(View):
    """Everything one `%%qdkernel` cell compiled, kernel by kernel."""

    def __init__(self, kernels: list[KernelSummary]) -> None:
        self.kernels = kernels

    def text(self) -> str:
        return "\n".join(k.text() for k in self.kernels) or "no @qd.kernel in this cell"

    def html(self) -> str:
        return (
            "".join(k.html() for k in self.kernels)
            or "<div>no <code>@qd.kernel</code> in this cell</div>"
        )


class CacheView(View):
    """`%qdlab cache`: the construct cache's stats."""

    def __init__(
        self, stats: CacheStats, note: str = "", session: Mapping[str, int] | None = None
    ) -> None:
        self.stats = stats
        self.note = note
        self.session = session or {}
        """Constructs compiled and reused in this session, by origin (the magic counts them)."""

    def rows(self) -> list[tuple[str, str]]:
        s = self.stats
        return [
            ("entries", str(s.entries)),
            ("size", f"{s.bytes / 1024:.1f} KiB"),
            *self.session_rows(),
            ("hits", f"{s.hits} (lookups that found an object or a manifest)"),
            ("misses", f"{s.misses} (lookups that found none: new constructs, and new manifests)"),
            ("evictions", str(s.evictions)),
            ("directory", s.directory or "(memory only)"),
            ("disk tier", "on" if s.disk_enabled else "off"),
            *self.team_rows(),
        ]

    def session_rows(self) -> list[tuple[str, str]]:
        """What the hit and miss counts leave out: a construct already loaded in this process is
        reused without a lookup."""
        n = self.session
        if not n:
            return []
        reused = sum(v for k, v in n.items() if k != "compiled")
        where = ", ".join(
            f"{n[k]} {label}"
            for k, label in (
                ("process", "already loaded in this process"),
                ("memory", "from memory"),
                ("disk", "from disk"),
                ("team cache", "from the team cache"),
            )
            if n.get(k)
        )
        return [
            (
                "constructs",
                f"{n.get('compiled', 0)} compiled, {reused} reused this session"
                + (f" ({where})" if where else ""),
            )
        ]

    def team_rows(self) -> list[tuple[str, str]]:
        r = self.stats.remote
        if r is None:
            return [("team cache", "not configured")]
        state = "on" if r.enabled else "off"
        return [
            ("team cache", f"{r.store}, {state}" + (f" ({r.note})" if r.note else "")),
            (
                "team hits",
                f"{r.hits} hits, {r.misses} misses, {r.refused} refused, {r.replaced} replaced, "
                + f"{r.errors} errors",
            ),
            ("team bytes", f"{r.bytes_in / 1024:.1f} KiB in, {r.bytes_out / 1024:.1f} KiB out"),
        ]

    def text(self) -> str:
        body = "\n".join(f"  {k:<10} {v}" for k, v in self.rows())
        return (self.note + "\n" if self.note else "") + "construct cache\n" + body

    def html(self) -> str:
        note = f"<div>{html.escape(self.note)}</div>" if self.note else ""
        return f"{note}<div><b>construct cache</b></div>" + _table_html(("", ""), self.rows())


class ConfigView(View):
    """`%qdlab config`: the active `qd.init` settings."""

    def __init__(self, config: Config) -> None:
        self.config = config

    def rows(self) -> list[tuple[str, str, str]]:
        """Every setting qdlab acts on, then each Quadrants option given that has no effect here."""
        rows = [(k, repr(v), "") for k, v in self.config.as_dict().items()]
        for k, v in self.config.inert:
            why = INERT_WHY.get(k)
            rows.append((k, repr(v), "no effect in qdlab" + (f" ({why})" if why else "")))
        return rows

    def text(self) -> str:
        return "qd.init settings\n" + "\n".join(
            f"  {k:<26} {v}" + (f"  [{note}]" if note else "") for k, v, note in self.rows()
        )

    def html(self) -> str:
        return "<div><b>qd.init settings</b></div>" + _table_html(
            ("setting", "value", "note"), self.rows()
        )


class RunTime(View):
    """`--run EXPR`: how long the expression took (its value is the cell's result)."""

    def __init__(self, expr: str, ms: float) -> None:
        self.expr = expr
        self.ms = ms

    def text(self) -> str:
        return f"ran {self.expr} in {self.ms:.3f} ms"

    def html(self) -> str:
        return f"<div>ran <code>{html.escape(self.expr)}</code> in {self.ms:.3f} ms</div>"


class EditDiff(View):
    """`%qdlab explain NAME --diff`: for each construct the latest compile rebuilt, its IR, LLVM IR
    and assembly against the matching construct of the previous compile."""

    def __init__(self, report: KernelReport) -> None:
        self.report = report

    def sections(self) -> list[tuple[str, str]]:
        """(title, unified diff) per rebuilt construct and view."""
        from ..viz.listing import asm_rows, diff, llvm_rows, text_of  # lazy: the views' parsers
        from ..viz.model import edits  # lazy: the views' construct matching

        r = self.report
        if r.previous is None:
            return []
        out = []
        for e in edits(r):
            if e.change == "unchanged" or e.latest is None or e.latest.report is None:
                continue
            new = e.latest.report
            old = e.previous.report if e.previous is not None else None
            for view, stage, rows in (
                ("IR", "ir", None),
                ("LLVM IR", "llvm_optimized_lines", llvm_rows),
                ("assembly", "asm_lines", asm_rows),
            ):
                if stage not in new.stages or (old is not None and stage not in old.stages):
                    continue
                a = old.stage(stage) if old is not None else ""
                b = new.stage(stage)
                if rows is not None:
                    a, b = text_of(rows(a)) if a else "", text_of(rows(b))
                title = f"construct {new.index} ({e.change}), {view}"
                out.append((title, diff(a, b) or "(no change)"))
        return out

    def text(self) -> str:
        if self.report.previous is None:
            return f"{self.report.kernel}: no previous compile to diff against"
        parts = [f"== {t}\n{d}" for t, d in self.sections()]
        return "\n".join(parts) or f"{self.report.kernel}: no construct changed"

    def html(self) -> str:
        if self.report.previous is None:
            return f"<div>{html.escape(self.text())}</div>"
        parts = [
            f"<details><summary>{html.escape(t)}</summary><pre>{html.escape(d)}</pre></details>"
            for t, d in self.sections()
        ]
        return "".join(parts) or f"<div>{html.escape(self.text())}</div>"


def _place(filename: str) -> str:
    return "cell line" if filename.startswith("<") else f"{os.path.basename(filename)}, line"
