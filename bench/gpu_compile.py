"""The compile-cache ladder on CUDA: cold compile, all-hit start and edit-one-loop recompile of
N-loop kernels, qdlab against Quadrants with its offline (per-task) cache on, fresh processes.

Why this script exists: per-construct caching should pay most on GPUs, where every construct's PTX
is also compiled to machine code by the driver. The kernel is `compile_cache.py`'s (loop k computes
`o{k%4}[i] = x[i]*(k+1) + 1.5*x[i]*x[i] - c` over five f32 ndarrays of 1000 elements), run under
`qd.init(arch=qd.cuda, offline_cache=True, offline_cache_file_path=<dir>)` by both. For each N and
each peer, a fresh cache directory and a fresh CUDA JIT cache (`CUDA_CACHE_PATH`, where the driver
keeps the machine code it made from PTX) serve three fresh processes: cold (both empty), hit (the
same source), edit (loop N//2's factor changed). Each process times its first `kern(...)` +
`qd.sync()` (compile, module load, launch) and checks the results. Target: editing one loop of
the 20-loop kernel takes at most 0.1x Quadrants' time.

Usage: ``python bench/gpu_compile.py [--loops 20 1 5 50] [--out report.md] [--summary lines.txt]
[--deadline UNIX_TIME]`` (N = 20 first: it carries the target)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import write_bytecode
from _gpu import (
    JSON_MARK,
    arguments,
    device_or_skip,
    fmt,
    markdown_table,
    time_left,
    verdict,
    write,
)
from compile_cache import kernel_source

PEERS = ("qdlab", "quadrants")
STEPS = ("cold", "hit", "edit")
TARGET = (20, 0.1)
"""(N, the largest qdlab/Quadrants ratio of the edit step the issue accepts)."""
GUARD = """_T1 = time.perf_counter()
if "cuda" not in str(qd.cfg.arch).lower():
    print({mark!r} + json.dumps({{"error": "runs on " + str(qd.cfg.arch) + ", not CUDA"}}))
    raise SystemExit(0)
"""


def source(peer: str, n: int, cache: str, edited: bool) -> str:
    """`compile_cache.py`'s script for this step, on CUDA, refusing to time a CPU fallback."""
    text = kernel_source(peer, n, cache, edited)
    text = text.replace("qd.init(arch=qd.cpu,", "qd.init(arch=qd.cuda,")
    text = text.replace("_T1 = time.perf_counter()\n", GUARD.format(mark=JSON_MARK), 1)
    return text + (
        "built = getattr(getattr(kern, 'latest', None), 'built', None)\n"
        "if built is not None:\n"
        f"    print({JSON_MARK!r} + json.dumps({{'compiled': "
        "sum(b.status == 'compiled' for b in built), 'units': len(built)}))\n"
    )


def run(path: Path, env: dict, timeout_s: float) -> dict[str, Any]:
    try:
        proc = subprocess.run(
            [sys.executable, str(path)],
            capture_output=True,
            text=True,
            timeout=max(5.0, timeout_s),
            check=False,
            env=env,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout_s:.0f} s"}
    out: dict[str, Any] = {}
    for line in proc.stdout.splitlines():
        if line.startswith(JSON_MARK):
            out.update(json.loads(line[len(JSON_MARK) :]))
    if not out:
        out["error"] = (proc.stderr.strip().splitlines() or ["no output"])[-1][:160]
    return out


def ladder(args: Any, tmp: Path) -> dict[tuple[str, int, str], dict[str, Any]]:
    res: dict[tuple[str, int, str], dict[str, Any]] = {}
    for n in args.loops:
        for peer in PEERS:
            root = tmp / f"{peer}_n{n}"
            root.mkdir()
            env = {
                **os.environ,
                "CUDA_CACHE_PATH": str(root / "cuda_jit"),
                "QDLAB_CACHE_DIR": str(root / "qdlab_cache"),
            }
            for step in STEPS:
                if not time_left(args, 20):
                    res[(peer, n, step)] = {"error": "not run (time box)"}
                    continue
                path = root / "kern.py"  # the edit keeps the file name, as an edited cell does
                path.write_text(source(peer, n, str(root / "cache"), step == "edit"))
                r = run(path, env, args.deadline - time.time() - 5)
                res[(peer, n, step)] = r
                print(peer, n, step, json.dumps(r), flush=True)
                if "error" in r:
                    break
    return res


def cell(r: dict[str, Any] | None) -> str:
    """A step's time in ms (with qdlab's units compiled), or why there is none."""
    if not r:
        return "n/a"
    if "error" in r:
        return r["error"][:100]
    text = fmt(r["first_call_ms"]) + ("" if r.get("check", True) else " (WRONG RESULT)")
    if "units" in r:
        text += f" ({r['compiled']}/{r['units']} compiled)"
    return text


def main() -> None:
    ap = arguments(__doc__)
    ap.add_argument("--loops", type=int, nargs="+", default=[20, 1, 5, 50])
    args = ap.parse_args()
    title = "## Compile-cache ladder on CUDA (first call in a fresh process, ms)"
    device_or_skip(args, title)
    write_bytecode()  # as a package install does: no timed process compiles qdlab's source
    with tempfile.TemporaryDirectory(prefix="qdlab_gpu_compile_") as tmp:
        res = ladder(args, Path(tmp))
    header = ["N loops"]
    for step in STEPS:
        header += [f"{step}: qdlab", "Quadrants", "ratio"]
    rows, summary = [], []
    for n in sorted(args.loops):
        row = [str(n)]
        for step in STEPS:
            mine, ref = res.get(("qdlab", n, step)), res.get(("quadrants", n, step))
            a = (mine or {}).get("first_call_ms")
            b = (ref or {}).get("first_call_ms")
            row += [cell(mine), cell(ref), f"{a / b:.3f}×" if a and b else "n/a"]
            if (n, step) == (TARGET[0], "edit"):
                summary.append(
                    f"compile: edit one loop of {n}, new process: qdlab {cell(mine)} ms, "
                    f"Quadrants {cell(ref)} ms"
                    + (
                        f" = {a / b:.3f}x (target <= {TARGET[1]}x: {verdict(a / b <= TARGET[1])})"
                        if a and b
                        else ""
                    )
                )
        rows.append(row)
    for step in ("cold", "hit"):
        mine, ref = res.get(("qdlab", TARGET[0], step)), res.get(("quadrants", TARGET[0], step))
        summary.append(
            f"compile: {step} at N = {TARGET[0]}: qdlab {cell(mine)} ms, Quadrants {cell(ref)} ms"
        )
    imports = {
        p: sorted(
            r["import_init_ms"] for (q, _, _), r in res.items() if q == p and "import_init_ms" in r
        )
        for p in PEERS
    }
    init = ", ".join(f"{p} {fmt(v[len(v) // 2]) if v else 'n/a'} ms" for p, v in imports.items())
    text = "\n".join(
        [
            title,
            "",
            markdown_table(header, rows),
            "",
            (
                "- each (peer, N): a fresh cache directory (`offline_cache=True`) and a fresh "
                "`CUDA_CACHE_PATH`, then cold, hit and edit (loop N//2's factor changed) in new "
                "processes; one run each; `(k/u compiled)`: qdlab's units compiled of those the "
                "call ran"
            ),
            f"- import + init (not included), median: {init}",
            *(f"- {line}" for line in summary),
        ]
    )
    write(args, text, summary)


if __name__ == "__main__":
    main()
