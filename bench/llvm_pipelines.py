"""Which LLVM pipeline for the optimised tier: run time and compile time of candidate pipelines.

Why this script exists: issue 18 asks for the cheapest pipeline (or pass options) that keeps
`bench/throughput.py`'s figures within 5%. Each candidate compiles the throughput kernels (stream,
compute, vec3 particles) afresh in one process (`QDLAB_TIERED=0`: launches run the candidate's
code); then the candidates' kernels are launched in turn, round after round (drift hits all alike).
Compile time is what LLVM took for the three units (optimise + emit). Ratios are against O3, the
pipeline qdlab uses.

Usage: ``.venv/bin/python bench/llvm_pipelines.py [--rounds 11]``
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ["QDLAB_TIERED"] = "0"

import numpy as np
from _common import fmt, markdown_table, report
from throughput import qd_kernels, qd_particles

import qdlab as qd
from qdlab.compiler.codegen import jit

CANDIDATES = {
    "O3 (qdlab's: no SLP)": {},
    "O3, no loop unrolling": {"loop_unrolling": False},
    "O3, no loop interleaving": {"loop_interleaving": False},
    "O2": {"speed_level": 2},
    "O3 with SLP vectorizer": {"slp_vectorization": True},
}
"""name -> pipeline tuning options over O3's (`jit.TUNING`)."""
WORK = ("stream 10M", "compute 10M", "vec3 1M")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=11)
    args = ap.parse_args()
    qd.init(arch=qd.cpu, offline_cache=False)
    n, m = 10_000_000, 1_000_000
    x, y = qd.ndarray(qd.f32, (n,)), qd.ndarray(qd.f32, (n,))
    x.from_numpy(np.random.default_rng(0).random(n, dtype=np.float32))
    p, v = qd.Vector.ndarray(3, qd.f32, m), qd.Vector.ndarray(3, qd.f32, m)
    d = qd.ndarray(qd.f32, (m,))
    compile_s, launches = {}, {}
    timed = jit.compile_text
    for name, tuning in CANDIDATES.items():
        spent: list[float] = []

        def compile_text(text: str, opt: int, spent: list[float] = spent) -> tuple[bytes, float]:
            obj, seconds = timed(text, opt)
            spent.append(seconds)
            return obj, seconds

        jit.compile_text, jit.TUNING = compile_text, tuning
        saxpy, compute = qd_kernels(qd)
        particles = qd_particles(qd)
        for k in (saxpy, compute, particles):
            k.options["fresh"] = True  # its own objects: the candidate is not part of the key
        calls = (
            functools.partial(saxpy, 2.0, x, y),
            functools.partial(compute, x, y),
            functools.partial(particles, p, v, d, 0.01),
        )
        for call in calls:  # compiled now, with this candidate
            call()
        qd.sync()
        compile_s[name], launches[name] = sum(spent), calls
    jit.compile_text, jit.TUNING = timed, {}
    ms: dict[tuple[str, str], list[float]] = {(c, w): [] for c in CANDIDATES for w in WORK}
    for _ in range(args.rounds):
        for name, calls in launches.items():
            for what, call in zip(WORK, calls):
                t0 = time.perf_counter()
                call()
                qd.sync()
                ms[(name, what)].append((time.perf_counter() - t0) * 1e3)
    base = next(iter(CANDIDATES))
    rows = []
    for name in CANDIDATES:
        row = [name]
        for what in WORK:
            med = statistics.median(ms[(name, what)])
            ref = statistics.median(ms[(base, what)])
            row += [fmt(med), fmt(med / ref) + "×"]
        row += [fmt(compile_s[name] * 1e3), fmt(compile_s[name] / compile_s[base]) + "×"]
        rows.append(row)
    header = ["pipeline"]
    for what in WORK:
        header += [f"{what} ms", "vs O3"]
    header += ["LLVM ms (3 units)", "vs O3"]
    notes = [
        f"median of {args.rounds} rounds; each round launches every candidate's kernels in turn",
        "the optimised tier must stay within 5% of O3's run time on every kernel",
    ]
    report(
        "llvm_pipelines",
        "LLVM pipelines: run time and compile time",
        markdown_table(header, rows),
        notes,
    )


if __name__ == "__main__":
    main()
