"""Helpers for the teaching notebooks: exercise checkers that explain a wrong answer, and a small
bar chart.

A checker never raises on a wrong answer. It returns a `Verdict`, which shows as a green "correct"
or an orange "not yet" with the reasons, and is truthy only when the answer is right, so a notebook
that still holds the starter code runs top to bottom without errors. The checkers read
`qd.explain`'s report and nothing else.

    from qdlab.teach import check_split, check_rebuilt, check_result
    check_split(my_kernel, expect="per_offload")      # or a fallback code such as "carried_value"
    check_rebuilt(my_kernel, expect=[0, 2])           # the constructs the latest compile rebuilt
    check_result(out, expected)                       # arrays equal (to a tolerance)
"""

from __future__ import annotations

import html
import os
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from .compiler.report.explain import KernelReport
from .core.words import plural
from .host.api import explain
from .host.kernel import Kernel

SPLIT_CODES = (
    "autodiff",
    "carried_value",
    "overwritten_reread",
    "gradient_alias",
    "repeated_effect",
    "mesh",
    "concurrent_region",
    "diagnostic_mode",
)
"""The compile-time fallback codes `check_split` accepts besides `"per_offload"`."""


@dataclass
class Verdict:
    """The answer to one exercise: right or not, and why."""

    ok: bool
    title: str
    details: list[str] = field(default_factory=list)
    """One sentence per line: what was expected, what happened, what to try."""

    def __bool__(self) -> bool:
        return self.ok

    def text(self) -> str:
        mark = "correct" if self.ok else "not yet"
        return "\n".join([f"{mark}: {self.title}", *(f"  - {d}" for d in self.details)])

    def __repr__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        colour, mark = ("#188038", "✔ correct") if self.ok else ("#b06000", "✘ not yet")
        items = "".join(f"<li>{html.escape(d)}</li>" for d in self.details)
        return (
            f"<div style='border-left:4px solid {colour};padding:2px 8px'>"
            f"<b style='color:{colour}'>{mark}</b>: "
            f"{html.escape(self.title)}{f'<ul>{items}</ul>' if items else ''}</div>"
        )


def _report(kernel: Kernel) -> KernelReport | Verdict:
    if not isinstance(getattr(kernel, "_primal", None), Kernel):
        return Verdict(
            False,
            f"expected a @qd.kernel, got {type(kernel).__name__}",
            ["Pass the kernel itself (the name after `def`), not the result of calling it."],
        )
    try:
        return explain(kernel)
    except Exception as e:  # noqa: BLE001 - a kernel that does not compile is a wrong answer, not a crash
        return Verdict(False, f"`{kernel.name}` does not compile", [f"{type(e).__name__}: {e}"])


def _fallback_words(report: KernelReport) -> list[str]:
    from .viz.fallbacks import advice  # lazy: the views, only when advice is shown

    fb = report.fallback
    if fb is None:
        return [
            (
                "It was compiled whole because splitting is turned off (`per_offload=False` or "
                "`--whole-kernel`)."
            )
        ]
    words = [
        f"The gate refused the split with `{fb.code}` at line {fb.lineno}: `{fb.source_line}`."
    ]
    if fb.blocker is not None:
        words.append(
            f"What blocks it: line {fb.blocker.lineno}, `{fb.blocker.source_line.strip()}`."
        )
    words.append(f"Why: {advice(fb.code).meaning}")
    words.append(f"Try: {advice(fb.code).rewrite}")
    return words


def check_split(kernel: Kernel, expect: str | None) -> Verdict:
    """Whether `kernel` compiles the way `expect` says: `"per_offload"` (split) or a fallback
    code."""
    if expect is None:
        return Verdict(
            False, "no answer yet", ['Set your answer ("per_offload" or a fallback code) first.']
        )
    if expect not in ("per_offload", "whole_kernel", *SPLIT_CODES):
        return Verdict(
            False,
            f"`{expect}` is not a mode or fallback code",
            [f'Use "per_offload" or one of: {", ".join(SPLIT_CODES)}.'],
        )
    report = _report(kernel)
    if isinstance(report, Verdict):
        return report
    got = report.fallback.code if report.fallback else report.mode
    name = report.kernel
    if got == expect:
        if expect == "per_offload":
            return Verdict(
                True,
                f"`{name}` is split into {plural(len(report.constructs), 'construct')}",
                ["Each construct is compiled and cached on its own."],
            )
        return Verdict(True, f"`{name}` falls back with `{expect}`", _fallback_words(report)[:2])
    if expect == "per_offload":
        return Verdict(False, f"`{name}` is still compiled whole", _fallback_words(report))
    if got == "per_offload":
        return Verdict(
            False,
            f"`{name}` is split, so it does not fall back with `{expect}`",
            [
                (
                    "The gate found nothing unsafe in its "
                    f"{plural(len(report.constructs), 'construct')}. "
                    "Look again at which values cross from one construct to another."
                )
            ],
        )
    return Verdict(
        False, f"`{name}` falls back, but with `{got}`, not `{expect}`", _fallback_words(report)
    )


def check_rebuilt(kernel: Kernel, expect: Iterable[int] | None) -> Verdict:
    """Whether the latest compile of `kernel` rebuilt exactly the constructs `expect` lists (by
    index)."""
    if expect is None:
        return Verdict(
            False, "no prediction yet", ["Set your prediction (a list of construct indices) first."]
        )
    report = _report(kernel)
    if isinstance(report, Verdict):
        return report
    if report.mode != "per_offload":
        return Verdict(
            False,
            f"`{report.kernel}` was not split, so it has no constructs to rebuild",
            _fallback_words(report),
        )
    want = sorted(set(expect))
    got = [c.index for c in report.constructs if c.status == "compiled"]
    if want == got:
        return Verdict(
            True,
            f"the edit rebuilt constructs {got} and reused the rest",
            [
                f"construct {c.index} ({_lines(c.lines)}): {c.recompile_reason}"
                for c in report.constructs
                if c.status == "compiled"
            ],
        )
    details = [f"Rebuilt: {got}; you predicted {want}."]
    for c in report.constructs:
        if c.index in got and c.index not in want:
            slice_lines = ", ".join(map(str, c.slice_lines)) or "none"
            details.append(
                f"Construct {c.index} ({_lines(c.lines)}) was rebuilt: "
                f"{c.recompile_reason}. It recomputes lines {slice_lines}; an edit to any of them, "
                "or to its own lines, changes its key."
            )
        elif c.index in want and c.index not in got:
            details.append(
                f"Construct {c.index} ({_lines(c.lines)}) was reused: neither its own "
                "lines nor the definitions it recomputes changed, so its cache key is the same."
            )
    missing = [i for i in want if i >= len(report.constructs)]
    if missing:
        details.append(
            f"There is no construct {missing[0]}: the kernel has {len(report.constructs)} "
            f"(numbered from 0)."
        )
    return Verdict(False, "that is not what the edit rebuilt", details)


def check_result(
    actual: object, expected: object, rtol: float = 1e-6, atol: float = 0.0
) -> Verdict:
    """Whether `actual` equals `expected` (arrays or numbers) within `rtol`/`atol`."""
    a, e = np.asarray(actual), np.asarray(expected)
    if a.shape != e.shape:
        return Verdict(
            False, "the result has the wrong shape", [f"Got shape {a.shape}, expected {e.shape}."]
        )
    close = np.isclose(a, e, rtol=rtol, atol=atol)
    if close.all():
        return Verdict(True, "the result matches", [])
    bad = np.argwhere(~close)
    first = tuple(int(i) for i in bad[0]) if a.ndim else ()
    at = f"at index {first[0] if len(first) == 1 else first}" if a.ndim else ""
    return Verdict(
        False,
        f"{len(bad)} of {max(a.size, 1)} values differ",
        [
            (
                f"First difference {at}: got {a[first] if a.ndim else a}, expected "
                f"{e[first] if e.ndim else e}."
            ).replace("  ", " ")
        ],
    )


def check_launch(kernel: Kernel, *args: object, expect: str = "per_offload") -> Verdict:
    """Call `kernel(*args)` and say whether that call ran split (`"per_offload"`) or whole
    (`"aliased_arguments"`)."""
    report = _report(kernel)
    if isinstance(report, Verdict):
        return report
    before = len(report.runtime_fallbacks)
    kernel(*args)
    report = explain(kernel)
    new = report.runtime_fallbacks[before:]
    got = "aliased_arguments" if new else report.mode
    if got == expect:
        return Verdict(
            True, f"this call of `{report.kernel}` ran {'split' if not new else 'whole'}", new[:1]
        )
    if new:
        return Verdict(
            False,
            "this call ran the whole-kernel variant",
            [
                f"Runtime fallback: {new[0]}.",
                (
                    "Two array arguments share memory; pass distinct arrays (for example a copy) "
                    "to keep the split."
                ),
            ],
        )
    return Verdict(
        False,
        f"this call ran {report.mode}, not `{expect}`",
        ["No runtime fallback happened: the arrays passed do not overlap."],
    )


# -- pictures --------------------------------------------------------------------------------------


@dataclass
class BarChart:
    """Horizontal bars as inline SVG (no plotting library needed), with a text form for
    terminals."""

    title: str
    bars: list[tuple[str, float, str]]
    """(label, value, colour) per bar, top to bottom."""
    unit: str = "ms"

    def text(self) -> str:
        top = max((v for _, v, _ in self.bars), default=0.0) or 1.0
        width = max((len(label) for label, _, _ in self.bars), default=0)
        rows = [
            f"{label.ljust(width)}  {'#' * round(40 * v / top):<40}  {v:.1f} {self.unit}"
            for label, v, _ in self.bars
        ]
        return "\n".join([self.title, *rows])

    def __repr__(self) -> str:
        return self.text()

    def _repr_svg_(self) -> str:
        top = max((v for _, v, _ in self.bars), default=0.0) or 1.0
        left, bar_w, row = 150, 420, 18
        height = 28 + row * len(self.bars)
        parts = [
            (
                f"<svg xmlns='http://www.w3.org/2000/svg' width='{left + bar_w + 90}' "
                f"height='{height}' font-family='Helvetica,Arial,sans-serif' font-size='11'>"
            ),
            f"<text x='0' y='14' font-weight='bold'>{html.escape(self.title)}</text>",
        ]
        for i, (label, value, colour) in enumerate(self.bars):
            y = 24 + i * row
            w = max(1.0, bar_w * value / top)
            parts.append(
                f"<text x='{left - 6}' y='{y + 12}' text-anchor='end'>{html.escape(label)}</text>"
            )
            parts.append(
                f"<rect x='{left}' y='{y + 2}' width='{w:.1f}' height='{row - 5}' fill='{colour}'/>"
            )
            parts.append(
                f"<text x='{left + w + 4:.1f}' y='{y + 12}'>{value:.1f} {self.unit}</text>"
            )
        parts.append("</svg>")
        return "".join(parts)


COMPILED, REUSED, WHOLE = "#f29900", "#188038", "#80868b"
"""Bar colours, the same as the construct graphs': orange compiled, green reused, grey whole
kernel."""


def construct_times(kernel: Kernel, title: str | None = None) -> BarChart:
    """One bar per construct of the latest compile: its compile time (or load time when reused)."""
    report = explain(kernel)
    bars = [
        (
            f"#{c.index} {_lines(c.lines)} {c.status}",
            c.compile_ms,
            COMPILED if c.status == "compiled" else REUSED,
        )
        for c in report.constructs
    ]
    if not bars:
        bars = [(f"{report.kernel} (whole kernel)", report.compile_ms, WHOLE)]
    return BarChart(
        title or f"{report.kernel}: {report.compiled} compiled, {report.reused} reused", bars
    )


def _lines(lines: tuple[int, int]) -> str:
    return f"line {lines[0]}" if lines[0] == lines[1] else f"lines {lines[0]}-{lines[1]}"


# -- Quadrants in another process ------------------------------------------------------------------

_QUADRANTS_RUN = """
import json, sys, time
import numpy as np
import quadrants as qd
qd.init(arch=qd.cpu, offline_cache=True, offline_cache_file_path={cache!r})
{source}
args = [np.zeros({size}, np.float32) for _ in range({n_args})]
t0 = time.perf_counter()
{name}(*args)
qd.sync()
print("QDLAB_TEACH_MS", (time.perf_counter() - t0) * 1e3)
"""


def quadrants_first_calls(
    sources: Sequence[str], name: str, n_args: int, size: int = 1000, timeout_s: float = 60.0
) -> list[float] | str:
    """First-call times (compile included) of Quadrants running each kernel source in turn, each in
    a fresh process sharing one empty offline cache; or why it could not run.

    Quadrants runs in a subprocess because it bundles its own LLVM, which must not share a process
    with qdlab's.
    """
    times = []
    with tempfile.TemporaryDirectory(prefix="qdlab_teach_") as tmp:
        for i, source in enumerate(sources):
            script = os.path.join(
                tmp, "kernel.py"
            )  # one file name, as an edited module keeps its name
            with open(script, "w") as f:
                f.write(
                    _QUADRANTS_RUN.format(
                        cache=os.path.join(tmp, "cache"),
                        source=textwrap.dedent(source),
                        size=size,
                        n_args=n_args,
                        name=name,
                    )
                )
            try:
                done = subprocess.run(
                    [sys.executable, script],
                    capture_output=True,
                    text=True,
                    timeout=timeout_s,
                    check=False,
                )
            except subprocess.TimeoutExpired:
                return f"Quadrants run {i + 1} took longer than {timeout_s:.0f} s"
            marks = [line for line in done.stdout.splitlines() if line.startswith("QDLAB_TEACH_MS")]
            if done.returncode != 0 or not marks:
                last = (done.stderr.strip().splitlines() or ["no output"])[-1]
                return f"Quadrants could not run here ({last})"
            times.append(float(marks[-1].split()[1]))
    return times


# -- the exercises of notebooks/07_exercises.ipynb -------------------------------------------------

SOLUTIONS: dict[int, str] = {
    1: """\
@qd.kernel
def running_total(x: F32, out: F32, acc: F32):
    acc[0] = 0.0
    for i in range(x.shape[0]):
        acc[0] += x[i]
    for i in range(out.shape[0]):
        out[i] = acc[0]
""",
    2: """\
@qd.kernel
def same_noise(x: F32, y: F32, draw: F32):
    draw[0] = qd.random()
    for i in range(x.shape[0]):
        x[i] = x[i] + draw[0]
    for i in range(y.shape[0]):
        y[i] = y[i] + draw[0]
""",
    3: 'answer_3 = "overwritten_reread"  # `first` is re-read after the first loop overwrote x\n',
    4: "prediction_4 = [1, 2]  # both loops that use `bias` recompute it; loop 0 does not use it\n",
    5: "b5 = np.zeros(4, np.float32)  # any array that does not share memory with `a5`\n",
}
"""A reference answer per exercise (what `solution(n)` prints)."""


def solution(n: int) -> None:
    """Print the reference answer of exercise `n`."""
    print(SOLUTIONS[n].rstrip())
