"""Team cache: a second machine's first call of an N-loop kernel, served by a shared Redis server,
against a local cold compile and a local all-hit start, in the same run.

Why this script exists: issue 19 targets a second machine (a fresh local cache folder, the same
store) at no more than 1.5x the local all-hit start. The kernel is `compile_cache.py`'s. Per
repetition and N, four fresh processes: a writer fills the store (cold, with the team cache on); the
second machine (a new empty local folder, team cache on) times its first call; then, with the team
cache off, a third folder times a local cold compile and the same folder a local all-hit start. A
`redis-server` (Debian's, started here on a free loopback port with its own folder) is the store;
the script needs it and the `redis` package.

Usage: ``.venv/bin/python bench/team_cache.py [--loops 20 50] [--reps 3]``
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import fmt, markdown_table, report
from compile_cache import kernel_source
from compile_time import run_once

STEPS = ("second machine", "local cold", "local all-hit")
TARGET = 1.5
"""Second machine / local all-hit: the most issue 19 accepts."""


def start_redis(folder: Path) -> tuple[subprocess.Popen, int]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [
            "redis-server",
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(folder),
            "--save",
            "",
            "--appendonly",
            "no",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    import redis

    for _ in range(200):
        try:
            redis.Redis(port=port).ping()
            return proc, port
        except redis.ConnectionError:
            time.sleep(0.025)
    raise SystemExit("redis-server did not start")


def first_call(tmp: Path, name: str, n: int, folder: str, team: str | None) -> dict[str, Any]:
    """One fresh process's first call, with its own local cache folder and the team cache on or
    off."""
    script = tmp / f"team_n{n}.py"  # one file name, as on every machine of a team
    script.write_text(kernel_source("qdlab", n, folder, edited=False))
    os.environ.pop("QDLAB_REMOTE_CACHE", None)
    if team:
        os.environ["QDLAB_REMOTE_CACHE"] = team
    try:
        return run_once(script)
    finally:
        os.environ.pop("QDLAB_REMOTE_CACHE", None)


def measure(loops: list[int], reps: int) -> dict[tuple[int, str, str], float]:
    """Medians per (N, step, "first" | "start"): the first call alone, and from process start
    (import and init included) to the first result."""
    os.environ.setdefault("QDLAB_CACHE_SECRET", "bench-team-secret")
    out: dict[tuple[int, str, str], list[float]] = {
        (n, s, m): [] for n in loops for s in STEPS for m in ("first", "start")
    }
    with tempfile.TemporaryDirectory(prefix="qdlab_team_bench_") as name:
        tmp = Path(name)
        (tmp / "redis").mkdir()
        server, port = start_redis(tmp / "redis")
        try:
            for n in loops:
                for rep in range(reps):
                    team = f"redis://127.0.0.1:{port}/0"
                    os.environ["QDLAB_REMOTE_CACHE_PREFIX"] = (
                        f"bench-n{n}-r{rep}"  # a new store each time
                    )
                    first_call(tmp, "writer", n, str(tmp / f"w{n}_{rep}"), team)
                    runs = {
                        "second machine": first_call(tmp, "b", n, str(tmp / f"b{n}_{rep}"), team),
                        "local cold": first_call(tmp, "c", n, str(tmp / f"c{n}_{rep}"), None),
                        "local all-hit": first_call(tmp, "c", n, str(tmp / f"c{n}_{rep}"), None),
                    }
                    for step, r in runs.items():
                        if "error" in r or not r.get("check"):
                            raise SystemExit(f"{step} at N={n}: {r}")
                        out[(n, step, "first")].append(r["first_call_ms"])
                        out[(n, step, "start")].append(r["first_call_ms"] + r["import_init_ms"])
        finally:
            server.kill()
    return {k: statistics.median(v) for k, v in out.items()}


def build_report(loops: list[int], reps: int) -> str:
    res = measure(loops, reps)
    header = [
        "N loops",
        "measure",
        *(f"{s} ms" for s in STEPS),
        "second machine / local all-hit",
        "second machine / local cold",
    ]
    rows, notes = [], []
    for n in loops:
        for m, title in (("first", "first call"), ("start", "start to first result")):
            ratio = res[(n, "second machine", m)] / res[(n, "local all-hit", m)]
            verdict = "met" if ratio <= TARGET else "NOT met"
            cold = res[(n, "second machine", m)] / res[(n, "local cold", m)]
            rows.append(
                [
                    str(n),
                    title,
                    *(fmt(res[(n, s, m)]) for s in STEPS),
                    f"{ratio:.2f}× (≤ {TARGET}×: {verdict})",
                    f"{cold:.2f}×",
                ]
            )
            notes.append(
                f"N = {n}, {title}: second machine {ratio:.2f}× the local all-hit start — {verdict}"
            )
    notes.insert(
        0,
        f"fresh processes, median of {reps}: `first call` is `kern(...)` + `qd.sync()` "
        "(compile or load included); `start to first result` adds importing qdlab and `qd.init` "
        "(with the team cache on, that starts importing the Redis client in the background); "
        "the store is a redis-server on loopback",
    )
    return report(
        "team_cache",
        "Team cache: a second machine's first call vs local cold and all-hit",
        markdown_table(header, rows),
        notes,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--loops", type=int, nargs="+", default=[20, 50])
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    if shutil.which("redis-server") is None:
        raise SystemExit("redis-server is not installed (apt-get install redis-server)")
    build_report(args.loops, args.reps)


if __name__ == "__main__":
    main()
