"""First-call (compile) time of kernels with many top-level loops, each in a fresh process.

Why this script exists: qdlab compiles each top-level loop (offload) on its own, so its
first-call time should grow gently with the number of loops.  This generates a kernel with N
top-level loops (loop k: ``o{k%4}[i] = x[i]*(k+1) + 1.5*x[i]*x[i] - c``, five f32 NDArray
arguments of 1000 elements, ``c`` a baked module global), writes it to a temporary .py file and
runs it in a fresh subprocess that times its own first ``kern(...)`` + ``qd.sync()``, with the
disk cache off (``qd.init(arch=qd.cpu, offline_cache=False)``) for both qdlab and Quadrants.
Numba (``@njit(parallel=True)`` with N ``prange`` loops, no cache) is timed the same way.
NumPy has no compile step and is not listed.

Usage: ``.venv/bin/python bench/compile_time.py [--loops 1 5 20 50] [--reps 3]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import JSON_MARK, NOT_IMPORTABLE, fmt, markdown_table, report, write_bytecode

SIZE = 1000
PEERS = ("qdlab", "quadrants", "numba")

_QD_HEADER = """\
import json, time
_T0 = time.perf_counter()
import numpy as np
try:
    import {module} as qd
    qd.init(arch=qd.cpu, offline_cache=False)
except Exception as exc:
    print({mark!r} + json.dumps({{"error": {not_importable!r},
                                 "detail": type(exc).__name__ + ": " + str(exc)}}))
    raise SystemExit(0)
_T1 = time.perf_counter()

c = 0.25


@qd.kernel
def kern(
    x: qd.types.NDArray[qd.f32, 1],
    o0: qd.types.NDArray[qd.f32, 1],
    o1: qd.types.NDArray[qd.f32, 1],
    o2: qd.types.NDArray[qd.f32, 1],
    o3: qd.types.NDArray[qd.f32, 1],
):
"""

_QD_LOOP = """\
    for i in range(x.shape[0]):
        o{j}[i] = x[i] * {k1} + 1.5 * x[i] * x[i] - c
"""

_QD_FOOTER = """

xs = np.linspace(-1.0, 1.0, {size}, dtype=np.float32)
x = qd.ndarray(qd.f32, ({size},))
x.from_numpy(xs)
outs = [qd.ndarray(qd.f32, ({size},)) for _ in range(4)]
t0 = time.perf_counter()
kern(x, *outs)
qd.sync()
t1 = time.perf_counter()
ok = all(np.allclose(o.to_numpy(), xs * k1 + 1.5 * xs * xs - c, rtol=1e-5, atol=1e-5)
         for o, k1 in zip(outs, {last_k1}) if k1)
print({mark!r} + json.dumps({{"first_call_ms": (t1 - t0) * 1e3,
                             "import_init_ms": (_T1 - _T0) * 1e3, "check": ok}}))
"""

_NUMBA_HEADER = """\
import json, time
_T0 = time.perf_counter()
import numpy as np
from numba import njit, prange
_T1 = time.perf_counter()

c = 0.25


@njit(parallel=True, cache=False)
def kern(x, o0, o1, o2, o3):
"""

_NUMBA_LOOP = """\
    for i in prange(x.shape[0]):
        o{j}[i] = x[i] * {k1} + 1.5 * x[i] * x[i] - c
"""

_NUMBA_FOOTER = """

xs = np.linspace(-1.0, 1.0, {size}, dtype=np.float32)
outs = [np.zeros({size}, np.float32) for _ in range(4)]
t0 = time.perf_counter()
kern(xs, *outs)
t1 = time.perf_counter()
ok = all(np.allclose(o, xs * k1 + 1.5 * xs * xs - c, rtol=1e-5, atol=1e-5)
         for o, k1 in zip(outs, {last_k1}) if k1)
print({mark!r} + json.dumps({{"first_call_ms": (t1 - t0) * 1e3,
                             "import_init_ms": (_T1 - _T0) * 1e3, "check": ok}}))
"""


def kernel_source(peer: str, n_loops: int) -> str:
    """Source of a standalone script that defines, first-calls and times the N-loop kernel."""
    last_k1 = [0, 0, 0, 0]
    for k in range(n_loops):
        last_k1[k % 4] = k + 1
    fields = {"mark": JSON_MARK, "size": SIZE, "last_k1": last_k1, "not_importable": NOT_IMPORTABLE}
    if peer == "numba":
        header, loop, footer = _NUMBA_HEADER, _NUMBA_LOOP, _NUMBA_FOOTER
    else:
        header, loop, footer = _QD_HEADER, _QD_LOOP, _QD_FOOTER
        fields["module"] = peer
    body = "".join(loop.format(j=k % 4, k1=k + 1) for k in range(n_loops))
    return header.format(**fields) + body + footer.format(**fields)


def run_once(script: Path) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, str(script)], check=False, capture_output=True, text=True, timeout=900
    )
    for line in proc.stdout.splitlines():
        if line.startswith(JSON_MARK):
            return json.loads(line[len(JSON_MARK) :])
    tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
    return {"error": f"n/a (rc={proc.returncode}: {tail[:120]})"}


def measure(loops: list[int], reps: int) -> dict[tuple[str, int], dict[str, Any]]:
    """Median first-call and import times per (peer, N); the first error wins."""
    results: dict[tuple[str, int], dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="qdlab_compile_bench_") as tmp:
        for n in loops:
            runs: dict[str, list[dict[str, Any]]] = {p: [] for p in PEERS}
            for _ in range(reps):
                for peer in PEERS:  # interleave peers so drift hits all alike
                    if runs[peer] and "error" in runs[peer][-1]:
                        continue
                    script = Path(tmp) / f"{peer}_n{n}.py"
                    script.write_text(kernel_source(peer, n))
                    runs[peer].append(run_once(script))
            for peer, rs in runs.items():
                errors = [r for r in rs if "error" in r]
                if errors:
                    results[(peer, n)] = errors[0]
                    continue
                results[(peer, n)] = {
                    "first_call_ms": statistics.median(r["first_call_ms"] for r in rs),
                    "import_init_ms": statistics.median(r["import_init_ms"] for r in rs),
                    "check": all(r["check"] for r in rs),
                }
    return results


def _cell(res: dict[str, Any]) -> str:
    if "error" in res:
        return res["error"]
    return fmt(res["first_call_ms"]) + ("" if res["check"] else " (WRONG RESULT)")


def build_report(loops: list[int], reps: int) -> str:
    res = measure(loops, reps)
    rows = []
    for n in loops:
        ref = res[("quadrants", n)].get("first_call_ms")
        mine = res[("qdlab", n)].get("first_call_ms")
        ratio = fmt(ref / mine) + "×" if ref and mine else "n/a"
        rows.append(
            [
                str(n),
                _cell(res[("qdlab", n)]),
                _cell(res[("quadrants", n)]),
                _cell(res[("numba", n)]),
                ratio,
            ]
        )
    table = markdown_table(
        ["N loops", "qdlab ms", "Quadrants ms", "Numba ms", "qdlab speedup vs Quadrants"], rows
    )
    notes = [
        (
            f"first call (`kern(...)` + `qd.sync()`) in a fresh process, median of {reps}; "
            f"disk caches off (`offline_cache=False`; Numba `cache=False`); {SIZE} f32 elements"
        ),
        "import + init time (not included above), median over all runs: "
        + ", ".join(f"{p} {_import_ms(res, p, loops)}" for p in PEERS),
        "NumPy: no compile step, not listed",
    ]
    for peer in PEERS:
        detail = next(
            (r.get("detail") for (p, _), r in res.items() if p == peer and "detail" in r), None
        )
        if detail:
            notes.append(f"{peer}: {detail}")
    return report("compile_time", "Compile time: first call of an N-loop kernel", table, notes)


def _import_ms(res: dict[tuple[str, int], dict[str, Any]], peer: str, loops: list[int]) -> str:
    values = [res[(peer, n)]["import_init_ms"] for n in loops if "error" not in res[(peer, n)]]
    return fmt(statistics.median(values)) + " ms" if values else "n/a"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loops", type=int, nargs="+", default=[1, 5, 20, 50])
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    write_bytecode()
    build_report(args.loops, args.reps)


if __name__ == "__main__":
    main()
