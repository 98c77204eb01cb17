"""`qd.explain(kernel)`: the structured report of a kernel's latest compile, read by every view.

The summary in the notebook magic, the graphs and the visualizer widget all read these dataclasses
and nothing else. Compiled stages (LLVM IR, assembly) are produced on demand, so a run served from
the cache pays nothing for them until someone looks.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass, field

from ...core.words import plural
from ..split.gate import Fallback


@dataclass
class Statement:
    """A top-level statement of the kernel body, as the views draw it."""

    index: int
    """Position in the kernel body."""
    lines: tuple[int, int]
    """First and last source line."""
    text: str
    """Its source text (first line for containers)."""
    kind: str
    """`"args"` (the kernel's parameters), `"def"` (pure definition), `"local"` (writes a local),
    `"effect"` (stores, atomics, print, return), `"parallel_for"`, `"serial_for"`, `"while"`,
    `"if"`."""
    segment: int
    """Index of its segment."""
    construct: int | None
    """Index of the construct whose own statement it is; None for a pure definition."""
    defines: list[str] = field(default_factory=list)
    """Names it defines (locals written, values named after variables)."""
    uses: list[int] = field(default_factory=list)
    """Indices of the statements whose definitions it uses (def-use edges)."""


@dataclass
class Task:
    """One offloaded task of a construct (or of the whole kernel)."""

    kind: str
    """`"parallel_for"` or `"serial"`."""
    lines: tuple[int, int]
    """Source lines it covers."""


@dataclass
class InterfaceSlot:
    """A value handed from one construct to later ones through the persisted interface buffer."""

    name: str
    """The source variable (`total`, `first`)."""
    dtype: str
    """Its type (`f32`)."""
    offset: int
    """Byte offset in the interface buffer."""
    producer: int
    """Index of the construct that writes it."""
    consumers: list[int]
    """Indices of the constructs that read it."""
    reason: str
    """The fallback code this slot avoids (`carried_value`, `overwritten_reread`,
    `repeated_effect`)."""
    line: int
    """Source line of the producing statement."""


@dataclass
class ConstructReport:
    """One construct: what it is, what it recomputes, how it was compiled."""

    index: int
    kind: str
    lines: tuple[int, int]
    statements: list[int]
    """Its own top-level statements."""
    slice_statements: list[int]
    """Top-level statements recomputed into it (its backward slice, less its own)."""
    slice_lines: list[int]
    """Source lines recomputed into it."""
    tasks: list[Task]
    cache_key: str
    status: str
    """`"compiled"` or `"reused"`."""
    compile_ms: float
    served_from: str = ""
    """For a reused construct: "process" (already loaded), "memory", "disk" or "team cache"."""
    recompile_reason: str | None = None
    """Why it was compiled: no entry under its key, with what changed since the previous compile."""
    key_diff: str | None = None
    """Unified diff of this construct's keyed text against the previous compile's, if it changed."""
    stages: dict[str, str | Callable[[], str]] = field(default_factory=dict)

    def stage(self, name: str) -> str:
        """A compiled stage's text (`ir`, `llvm`, `llvm_optimized`, `asm`), produced on first
        use."""
        value = self.stages[name]
        if callable(value):
            value = self.stages[name] = value()
        return value

    @property
    def short_key(self) -> str:
        return self.cache_key[:10]


@dataclass
class KernelReport:
    """Everything the latest compile of one kernel did."""

    kernel: str
    filename: str
    source: str
    first_line: int
    mode: str
    """`"per_offload"` or `"whole_kernel"`."""
    fallback: Fallback | None
    statements: list[Statement]
    constructs: list[ConstructReport]
    tasks: list[Task]
    """Tasks of the whole-kernel form (what runs when the kernel is not split)."""
    ir_before_split: str
    alias_pairs: list[tuple[str, str]]
    """Parameters whose disjointness the split relies on; checked at every launch."""
    compile_ms: float
    previous: KernelReport | None = None
    """The report of the compile before this one of the same kernel (for edit views)."""
    signature: str = ""
    stages: dict[str, str | Callable[[], str]] = field(default_factory=dict)
    """Stages of the whole-kernel form, when it was compiled."""
    runtime_fallbacks: list[str] = field(default_factory=list)
    """Per-launch fallbacks seen so far (`aliased_arguments: ...`)."""
    interface: list[InterfaceSlot] = field(default_factory=list)
    """Values carried between constructs through the interface buffer (empty unless a kernel needs
    it)."""
    specializations: list[str] = field(default_factory=list)
    """The kernel's variants so far, one line each: the template arguments and struct members
    that tell them apart (filled by `qd.explain`)."""
    run_ms: dict[int, list[float]] = field(default_factory=dict)
    """Run time of each construct (index; -1 for the whole kernel) in ms, one sample per launch,
    from the latest `qd.profile` of this compile (empty until then)."""

    @property
    def compiled(self) -> int:
        return sum(c.status == "compiled" for c in self.constructs)

    @property
    def reused(self) -> int:
        return sum(c.status == "reused" for c in self.constructs)

    def stage(self, name: str) -> str:
        value = self.stages[name]
        if callable(value):
            value = self.stages[name] = value()
        return value

    def summary_rows(self) -> list[tuple[str, ...]]:
        rows = []
        for c in self.constructs:
            lines = f"{c.lines[0]}-{c.lines[1]}" if c.lines[0] != c.lines[1] else str(c.lines[0])
            status = (
                ("reused (team cache)" if c.served_from == "team cache" else c.status)
                if c.status == "reused"
                else f"compiled ({c.recompile_reason or 'new key'})"
            )
            rows.append((str(c.index), lines, c.kind, status, f"{c.compile_ms:.1f}", c.short_key))
        return rows

    def __repr__(self) -> str:
        head = f"KernelReport({self.kernel}: {self.mode}"
        if self.fallback:
            head += f", fallback={self.fallback.code} at line {self.fallback.lineno}"
        head += f", {plural(len(self.constructs), 'construct')}, {self.compiled} compiled, "
        head += f"{self.reused} reused)"
        table = "\n".join("  " + "  ".join(r) for r in self.summary_rows())
        if len(self.specializations) > 1 or any(": " in s for s in self.specializations):
            table += "".join(
                f"\n  specialisation {k}: {s}" for k, s in enumerate(self.specializations)
            )
        return head + ("\n" + table if table else "")

    def _repr_html_(self) -> str:
        fb = ""
        if self.fallback:
            fb = (
                f"<p><b>fallback</b> <code>{self.fallback.code}</code> at line "
                f"{self.fallback.lineno}: {html.escape(self.fallback.message)}<br>"
                f"<code>{html.escape(self.fallback.source_line)}</code></p>"
            )
        head = "".join(f"<th>{h}</th>" for h in ("#", "lines", "kind", "status", "ms", "key"))
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(x)}</td>" for x in r) + "</tr>"
            for r in self.summary_rows()
        )
        return (
            f"<div><b>{html.escape(self.kernel)}</b>: {self.mode}, {self.compiled} compiled, "
            f"{self.reused} reused, "
            f"{self.compile_ms:.1f} ms{fb}<table><tr>{head}</tr>{body}</table></div>"
        )
