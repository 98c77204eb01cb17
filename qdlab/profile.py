"""`qd.profile(kernel, *args, repeat=...)`: how long each construct of a kernel takes to run.

The CPU launcher times each unit it runs while a list is set on it (`Launcher.times`), and reads no
clock otherwise. A profile calls the kernel once to compile and warm it, then `repeat` more times
with that list set, and reports per construct the median and spread of its run time beside its
compile time. The samples are kept on the compile's report (`KernelReport.run_ms`), so the
visualizer shows them too.
"""

from __future__ import annotations

import html
import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from .host import state
from .host.kernel import Kernel


@dataclass(frozen=True)
class RunTime:
    """One construct's run time over the profiled launches."""

    index: int
    """Construct index (-1: the kernel compiled whole)."""
    lines: str
    compile_ms: float
    samples: list[float]
    """Milliseconds, one per launch."""

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def spread(self) -> tuple[float, float]:
        return min(self.samples), max(self.samples)


class Profile:
    """Run times per construct of one kernel (`text/plain` and `text/html`)."""

    def __init__(self, kernel: str, repeat: int, rows: list[RunTime]) -> None:
        self.kernel, self.repeat, self.rows = kernel, repeat, rows

    @property
    def total_ms(self) -> float:
        return sum(r.median for r in self.rows)

    def table(self) -> list[tuple[str, ...]]:
        return [
            (
                "whole" if r.index < 0 else str(r.index),
                r.lines,
                f"{r.compile_ms:.1f}",
                f"{r.median:.3f}",
                f"{r.spread[0]:.3f}-{r.spread[1]:.3f}",
            )
            for r in self.rows
        ]

    def head(self) -> str:
        return (
            f"{self.kernel}: run time per construct over {self.repeat} launches "
            f"(median {self.total_ms:.3f} ms a launch)"
        )

    HEAD = ("#", "lines", "compile ms", "run ms (median)", "run ms (min-max)")

    def __repr__(self) -> str:
        rows = [self.HEAD, *self.table()]
        widths = [max(len(r[i]) for r in rows) for i in range(len(self.HEAD))]
        body = "\n".join("  " + "  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in rows)
        return f"{self.head()}\n{body}"

    def _repr_html_(self) -> str:
        top = "".join(f"<th>{h}</th>" for h in self.HEAD)
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>"
            for r in self.table()
        )
        return (
            f"<div class='qdlab-profile'><div>{html.escape(self.head())}</div>"
            f"<table><tr>{top}</tr>{body}</table></div>"
        )


def profile(kernel: Kernel, *args: object, repeat: int = 10) -> Profile:
    """Call `kernel(*args)` once to compile and warm it, then `repeat` times timing each
    construct."""
    __tracebackhide__ = True
    return measure([kernel], lambda: kernel(*args), repeat)[0]


def measure(kernels: Iterable[Kernel], call: Callable[[], object], repeat: int) -> list[Profile]:
    """Run `call` once, then `repeat` times with the CPU launchers of `kernels` timing each unit;
    one profile per kernel that ran (`%%qdkernel --profile` profiles its `--run` expression)."""
    if repeat < 1:
        raise ValueError(f"qd.profile: repeat must be at least 1, not {repeat}")
    kernels = [getattr(k, "_primal", k) for k in kernels]
    call()
    launchers = {
        id(launcher): (k, compiled, launcher)
        for k in kernels
        for compiled in k.variants.values()
        for launcher in (compiled.launcher, compiled.whole)
        if launcher is not None and hasattr(launcher, "times")
    }
    for _, _, launcher in launchers.values():
        launcher.times = []
    try:
        for _ in range(repeat):
            call()
    finally:
        samples = {key: (k, c, launcher.times) for key, (k, c, launcher) in launchers.items()}
        for _, _, launcher in launchers.values():
            launcher.times = None
    out = []
    for k, compiled, times in samples.values():
        if not times:
            continue
        report = compiled.report
        by_key: dict[str, list[float]] = {}
        for key, seconds in times:
            by_key.setdefault(key, []).append(seconds * 1e3)
        rows = [
            RunTime(c.index, _lines(c.lines), c.compile_ms, by_key[c.cache_key])
            for c in report.constructs
            if c.cache_key in by_key
        ] or [
            RunTime(
                -1, _lines((0, 0)), report.compile_ms, [ms for v in by_key.values() for ms in v]
            )
        ]
        report.run_ms = {r.index: r.samples for r in rows}
        for hook in list(state.report_hooks):
            hook(k, compiled)
        out.append(Profile(k.name, repeat, rows))
    if not out:
        names = ", ".join(k.name for k in kernels)
        raise ValueError(f"qd.profile: no CPU launch of {names} ran, so there is nothing to time")
    return out


def _lines(span: tuple[int, int]) -> str:
    if span == (0, 0):
        return "all"
    return str(span[0]) if span[0] == span[1] else f"{span[0]}-{span[1]}"
