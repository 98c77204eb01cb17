"""Shared plumbing for the benchmark scripts in ``bench/``.

Why this module exists: every benchmark compares qdlab against its peers in one run and reports
the same way.  quadrants and qdlab each bundle LLVM, so each Quadrants-API backend runs in its
own worker subprocess (the benchmark script re-executed with ``--worker BACKEND``), times itself
there and prints one JSON line.  This module holds the worker protocol, timing helpers, the
machine description and the Markdown table writer.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

RESULTS_DIR = Path(__file__).resolve().parent / "results"
JSON_MARK = "@@BENCH_JSON@@"
NOT_IMPORTABLE = "n/a (not importable)"


def write_bytecode() -> None:
    """Compile qdlab's modules to .pyc files, as installing a package does: with
    PYTHONDONTWRITEBYTECODE set (this project's machines set it) an editable install is never
    cached, so every timed process would compile qdlab's modules from source, while the peers,
    installed by pip, load theirs from bytecode."""
    import compileall  # lazy: only the first-call benchmarks need it
    import importlib.util

    spec = importlib.util.find_spec("qdlab")
    if spec is not None and spec.origin is not None:
        compileall.compile_dir(str(Path(spec.origin).parent), quiet=1)


def median_time_s(fn: Callable[[], Any], reps: int, warmup: int = 1) -> float:
    """Median wall time of ``fn()`` over ``reps`` runs after ``warmup`` untimed runs."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def import_backend(name: str) -> Any:
    """Import and initialise a Quadrants-API backend (``quadrants`` or ``qdlab``) on the CPU."""
    if name == "quadrants":
        import quadrants as qd
    elif name == "qdlab":
        import qdlab as qd
    else:
        raise ValueError(f"unknown backend {name!r}")
    return qd


def emit(result: dict[str, Any]) -> None:
    """Worker side: print the result as the one marked JSON line the parent looks for."""
    print(JSON_MARK + json.dumps(result), flush=True)


def run_worker(
    script: str,
    backend: str,
    extra: list[str] | None = None,
    timeout_s: float = 1800,
    python: str | None = None,
) -> dict[str, Any]:
    """Parent side: run ``script --worker backend`` (under ``python``, by default this one);
    return its JSON or ``{"error": ...}``.

    ``{"error": NOT_IMPORTABLE}`` when the backend cannot be imported/initialised.
    """
    cmd = [python or sys.executable, script, "--worker", backend, *(extra or [])]
    try:
        proc = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return {"error": f"n/a (timed out after {timeout_s:.0f} s)"}
    for line in proc.stdout.splitlines():
        if line.startswith(JSON_MARK):
            return json.loads(line[len(JSON_MARK) :])
    tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
    return {"error": f"n/a (worker failed, rc={proc.returncode}: {tail[:120]})"}


def worker_main(backend: str, body: Callable[[Any], dict[str, Any]]) -> None:
    """Worker side: import + init the backend, run ``body(qd)``, emit JSON (errors too)."""
    try:
        qd = import_backend(backend)
        qd.init(arch=qd.cpu)
    except Exception as exc:  # noqa: BLE001 - any failure here means "not importable"
        emit({"error": NOT_IMPORTABLE, "detail": f"{type(exc).__name__}: {exc}"})
        return
    try:
        result = body(qd)
    except Exception as exc:  # noqa: BLE001 - reported in the table
        emit({"error": f"n/a ({type(exc).__name__}: {str(exc)[:100]})"})
        return
    result.setdefault("version", getattr(qd, "__version__", "?"))
    emit(result)


def machine_description() -> str:
    """CPU model, core count, OS, Python and library versions, and the date."""
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = [f"Python {platform.python_version()}"]
    for mod in ("numpy", "numba", "llvmlite"):
        try:
            versions.append(f"{mod} {__import__(mod).__version__}")
        except ImportError:
            versions.append(f"{mod} missing")
    date = _dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    return (
        f"Machine: {model}, {os.cpu_count()} cores, {platform.system()} {platform.release()}; "
        f"{', '.join(versions)}; {date}"
    )


def fmt(value: float | None, digits: int = 3) -> str:
    """Format a number for a table cell with ``digits`` significant digits."""
    if value is None:
        return "n/a"
    return f"{value:.{digits}g}" if abs(value) < 10**digits else f"{value:.0f}"


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    """A GitHub-flavoured Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def report(name: str, title: str, body: str, notes: list[str]) -> str:
    """Print the report and write it to ``bench/results/<name>.md``; return the text."""
    text = f"# {title}\n\n{machine_description()}\n\n{body}\n"
    if notes:
        text += "\n" + "\n".join(f"- {n}" for n in notes) + "\n"
    print(text)
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    (RESULTS_DIR / f"{name}.md").write_text(text)
    return text
