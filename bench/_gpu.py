"""Shared plumbing of the GPU benchmarks (`gpu_bandwidth.py`, `gpu_launch.py`, `gpu_compile.py`),
which `gpu_check.sh` runs on a GPU machine inside one time box.

Why this module exists: each of them compares qdlab on CUDA with its peers from the same run
(CuPy's own kernels in-process; Quadrants on CUDA in a worker subprocess, as quadrants and qdlab
each bundle LLVM), stops starting new work at the time box's deadline, appends its Markdown section
to the report and one line per figure to the run's summary.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import JSON_MARK, emit, fmt, markdown_table  # noqa: F401 - re-exported

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def arguments(doc: str) -> argparse.ArgumentParser:
    """The options every GPU benchmark takes: `--out` (the report, appended), `--summary` (one line
    per figure, appended), `--deadline` (Unix time after which no new measurement starts) and
    `--worker` (run as a peer's worker)."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--summary", type=Path, default=None)
    ap.add_argument("--deadline", type=float, default=float("inf"))
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    return ap


def device_or_skip(args: argparse.Namespace, title: str) -> Any:
    """CuPy, when it sees a CUDA device; otherwise the section says it was skipped and the script
    ends (exit status 0: a machine without a GPU skips it cleanly)."""
    from qdlab.compiler.runtime import cuda as cuda_runtime

    if not cuda_runtime.available():
        why = "skipped: no CUDA device (cupy.is_available() is False)"
        write(
            args,
            f"{title}\n\n{why}",
            [f"{title.lstrip('# ').split(':')[0].split(' (')[0].lower()}: {why}"],
        )
        raise SystemExit(0)
    return cuda_runtime.require()


def time_left(args: argparse.Namespace, need_s: float) -> bool:
    """Whether `need_s` seconds still fit before the deadline."""
    return time.time() + need_s < args.deadline


def write(args: argparse.Namespace, markdown: str, summary: list[str]) -> None:
    print(markdown, flush=True)
    if args.out:
        with open(args.out, "a") as f:
            f.write(markdown + "\n\n")
    if args.summary:
        with open(args.summary, "a") as f:
            f.writelines(line + "\n" for line in summary)


def verdict(ok: bool) -> str:
    return "met" if ok else "NOT met"


def run_worker(script: str, peer: str, extra: list[str], timeout_s: float) -> dict[str, Any]:
    """`script --worker peer ...` in a subprocess; its JSON line, or {"error": why}."""
    cmd = [sys.executable, script, "--worker", peer, *extra]
    try:
        proc = subprocess.run(
            cmd, check=False, capture_output=True, text=True, timeout=max(5.0, timeout_s)
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout_s:.0f} s"}
    for line in proc.stdout.splitlines():
        if line.startswith(JSON_MARK):
            return json.loads(line[len(JSON_MARK) :])
    tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
    return {"error": f"worker failed (rc={proc.returncode}): {tail[:160]}"}


def quadrants_on_cuda() -> Any:
    """Quadrants initialised on CUDA; RuntimeError when it fell back to another arch (it does so
    with a warning when it cannot load `libcuda.so`)."""
    import quadrants as qd

    qd.init(arch=qd.cuda, offline_cache=False)
    if "cuda" not in str(qd.cfg.arch).lower():
        raise RuntimeError(f"quadrants runs on {qd.cfg.arch}, not CUDA (libcuda.so not loaded?)")
    return qd


def worker(body: Callable[[], dict[str, Any]]) -> None:
    """Worker side: run `body`, print its result (or the error) as the one JSON line."""
    try:
        result = body()
    except Exception as exc:  # noqa: BLE001 - reported in the table
        result = {"error": f"{type(exc).__name__}: {str(exc)[:200]}"}
    emit(result)


def per_call_us(call: Callable[[], Any], sync: Callable[[], Any], calls: int, batch: int) -> float:
    """Median over batches of (batch time / batch size) in µs; each batch ends with a sync."""
    for _ in range(min(batch, 200)):  # warm-up, compile included
        call()
    sync()
    samples = []
    for _ in range(max(1, calls // batch)):
        t0 = time.perf_counter()
        for _ in range(batch):
            call()
        sync()
        samples.append((time.perf_counter() - t0) / batch)
    return statistics.median(samples) * 1e6


def ratio(mine: float | None, ref: float | None) -> str:
    return f"{mine / ref:.2f}×" if mine and ref else "n/a"


def device_line() -> str:
    """The GPU, driver and CUDA versions, as CuPy reads them."""
    import cupy  # lazy: only on a machine with a GPU

    rt = cupy.cuda.runtime
    props = rt.getDeviceProperties(cupy.cuda.Device().id)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    drv, run = rt.driverGetVersion(), rt.runtimeGetVersion()
    return (
        f"{name} (sm_{props['major']}{props['minor']}, {props['multiProcessorCount']} SMs), "
        f"CUDA driver API {drv // 1000}.{drv % 1000 // 10}, CuPy {cupy.__version__} on runtime "
        f"{run // 1000}.{run % 1000 // 10}; host {os.cpu_count()} cores"
    )
