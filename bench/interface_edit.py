"""Issue 9's benchmark: edit one consumer loop of a 20-loop kernel whose first loop computes a
reduction that every other loop reads. With the interface buffer (`split_carried=True`) the edit
recompiles one construct; with the reference behaviour (`split_carried=False`) the kernel falls back
to whole-kernel and recompiles all.

Runs in one process per mode (as a notebook would: warm imports, warm cache), median of 5 edits.
"""

from __future__ import annotations

import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import report

N = 20


def source(edit: int) -> str:
    lines = [
        "import qdlab as qd",
        "",
        "",
        "@qd.kernel",
        (
            "def k(x: qd.types.NDArray[qd.f32, 1], o0: qd.types.NDArray[qd.f32, 1], "
            "o1: qd.types.NDArray[qd.f32, 1], o2: qd.types.NDArray[qd.f32, 1], "
            "o3: qd.types.NDArray[qd.f32, 1]):"
        ),
        "    total = 0.0",
        "    for i in range(x.shape[0]):",
        "        total += x[i]",
    ]
    for k in range(1, N):
        c = 0.25 + (edit if k == N // 2 else 0)
        lines += [
            "    for i in range(x.shape[0]):",
            f"        o{k % 4}[i] = x[i] * {k + 1} + total - {c}",
        ]
    return "\n".join(lines) + "\n"


def worker(split_carried: bool) -> None:
    import numpy as np

    import qdlab as qd

    folder = Path(tempfile.mkdtemp())
    qd.init(arch=qd.cpu, offline_cache_file_path=str(folder / "cache"), split_carried=split_carried)
    x = np.ones(1000, np.float32)
    outs = [np.zeros(1000, np.float32) for _ in range(4)]
    times, counts = [], None
    for edit in range(6):
        path = folder / f"k{edit}.py"
        path.write_text(source(edit))
        spec = importlib.util.spec_from_file_location(path.stem, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = mod
        spec.loader.exec_module(mod)
        t = time.perf_counter()
        mod.k(x, *outs)
        if edit:
            times.append(time.perf_counter() - t)
        r = qd.explain(mod.k)
        counts = (r.mode, r.compiled if r.constructs else "whole", len(r.constructs) or 1)
    print(f"{statistics.median(times) * 1e3:.1f} {counts[0]} {counts[1]} {counts[2]}")


def main() -> None:
    rows = {}
    for split_carried in (True, False):
        out = subprocess.run(
            [sys.executable, __file__, "--worker", str(int(split_carried))],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        rows[split_carried] = (float(out[0]), out[1], out[2], out[3])
    on, off = rows[True], rows[False]
    table = "\n".join(
        [
            (
                "| mode | path | constructs recompiled per edit "
                "| edit-one recompile (ms, median of 5) |"
            ),
            "|---|---|---|---|",
            (
                f"| `split_carried=True` (interface buffer) | {on[1]} | {on[2]} of {on[3]} | "
                f"{on[0]:.1f} |"
            ),
            (
                f"| `split_carried=False` (reference fallback) | {off[1]} | whole kernel | "
                f"{off[0]:.1f} |"
            ),
            "",
            f"Ratio (interface / fallback): **{on[0] / off[0]:.2f}x**",
        ]
    )
    report(
        "interface_edit",
        f"Edit one consumer of a carried reduction (N = {N} loops)",
        table,
        [
            (
                "In-process, warm imports and cache (as in a notebook); each edit changes one "
                "consumer's constant."
            )
        ],
    )


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--worker":
        worker(bool(int(sys.argv[2])))
    else:
        main()
