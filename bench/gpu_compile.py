"""Edit-one-construct compile time on CUDA: cold, cache hit, and one loop edited, each in a fresh
process.

Why this script exists: per-construct caching pays most on GPUs, where each construct's PTX is also
JIT-compiled by the driver. A kernel with N top-level loops (as in `compile_time.py`) is written to
a file and first-called under `qd.init(arch=qd.cuda)` in three fresh processes sharing one cache
directory: cold (empty cache), hit (same source), and edit (the constant of loop N//2 changed). Each
process times its first call (PTX from cache or compiled, module load, launch, sync) and reports how
many units were compiled.

Usage: ``python bench/gpu_compile.py [--loops 1 5 20 50] [--out results.md]``
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARK = "@@GPU_COMPILE@@"

SCRIPT = """\
import json, sys, time
sys.path.insert(0, {root!r})
t0 = time.perf_counter()
import numpy as np
import cupy
import qdlab as qd
qd.init(arch=qd.cuda, offline_cache_file_path={cache!r})
t1 = time.perf_counter()
c = 0.25

@qd.kernel
def kern(x: qd.types.NDArray[qd.f32, 1], o0: qd.types.NDArray[qd.f32, 1], \
o1: qd.types.NDArray[qd.f32, 1],
         o2: qd.types.NDArray[qd.f32, 1], o3: qd.types.NDArray[qd.f32, 1]):
{loops}

x = cupy.linspace(-1.0, 1.0, 1000, dtype=cupy.float32)
outs = [cupy.zeros(1000, cupy.float32) for _ in range(4)]
t2 = time.perf_counter()
kern(x, *outs)
qd.sync()
t3 = time.perf_counter()
built = kern.latest.built
compiled = sum(b.status == "compiled" for b in built)
print({mark!r} + json.dumps({{"first_call_ms": (t3 - t2) * 1e3, "import_init_ms": (t1 - t0) * 1e3,
                             "units": len(built), "compiled": compiled}}))
"""


def source(n: int, cache: str, edited: int | None) -> str:
    loops = []
    for k in range(n):
        const = 1.25 if k == edited else k + 1
        loops.append(
            "    for i in range(x.shape[0]):\n"
            f"        o{k % 4}[i] = x[i] * {const} + 1.5 * x[i] * x[i] - c"
        )
    return SCRIPT.format(root=str(ROOT), cache=cache, loops="\n".join(loops), mark=MARK)


def run(path: Path) -> dict:
    proc = subprocess.run(
        [sys.executable, str(path)], capture_output=True, text=True, timeout=300, check=False
    )
    for line in proc.stdout.splitlines():
        if line.startswith(MARK):
            return json.loads(line[len(MARK) :])
    return {"error": (proc.stderr.strip().splitlines() or ["?"])[-1]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--loops", type=int, nargs="+", default=[1, 5, 20, 50])
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    lines = [
        (
            "## Edit-one-construct compile on CUDA (first call, fresh process each; ms, units "
            "compiled/total)"
        ),
        "",
        "| N loops | cold | cache hit | edit one loop | import+init |",
        "|---|---|---|---|---|",
    ]
    for n in args.loops:
        with tempfile.TemporaryDirectory() as tmp:
            cells = []
            for phase, edited in (("cold", None), ("hit", None), ("edit", n // 2)):
                path = Path(tmp) / f"k_{phase}.py"
                path.write_text(source(n, str(Path(tmp) / "cache"), edited))
                r = run(path)
                cells.append(r)
            fmt = [
                f"{r['first_call_ms']:.0f} ({r['compiled']}/{r['units']})"
                if "error" not in r
                else f"error: {r['error'][:80]}"
                for r in cells
            ]
            init = f"{cells[0].get('import_init_ms', float('nan')):.0f}"
            lines.append(f"| {n} | {' | '.join(fmt)} | {init} |")
            print(lines[-1], flush=True)
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "a") as f:
            f.write(text + "\n\n")


if __name__ == "__main__":
    main()
