"""Construct cache: cold compile, all-hit start and edit-one-loop recompile of N-loop kernels, vs
Quadrants.

Why this script exists: issues 4 and 18 set targets for what the construct cache saves over
Quadrants' own offline cache. For N = 1, 5, 20, 50 top-level loops (the kernel of
``compile_time.py``: loop k computes ``o{k%4}[i] = x[i]*(k+1) + 1.5*x[i]*x[i] - c`` over five f32
arrays of 1000 elements) each repetition takes a fresh, empty cache directory and runs four fresh
processes in it, for qdlab and for Quadrants alike:

1. cold: the kernel compiled into the empty cache;
2. all-hit: the same source again, in a new process (everything on disk);
3. edit-one: after a pause of PAUSE_S, the source with loop N//2's constant changed, in a new
   process with the cache warm (and, for qdlab, the compile server the cold step started);
4. warm: in one process (a notebook), the kernel called, then, after a pause of PAUSE_S (the
   person editing), loaded again with loop N//2 edited and called; only that second call is timed
   (a cache directory of its own).

Each process times its own first ``kern(...)`` + ``qd.sync()`` (compile included) and, apart,
import + init. The table shows medians over the repetitions and the qdlab/Quadrants ratio per
column, next to the targets.

Usage: ``.venv/bin/python bench/compile_cache.py [--loops 1 5 20 50] [--reps 3]``; with
``QDLAB_COMPILE_SERVER=0`` qdlab's new processes compile without the server.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import JSON_MARK, NOT_IMPORTABLE, fmt, markdown_table, report, write_bytecode
from compile_time import _QD_LOOP, SIZE, run_once

PEERS = ("qdlab", "quadrants")
STEPS = ("cold", "hit", "edit", "warm")
STEP_TITLES = {
    "cold": "cold compile",
    "hit": "all-hit, new process",
    "edit": "edit one loop, new process",
    "warm": "edit one loop, warm process",
}
TARGETS = {
    ("edit", 20): 0.12,
    ("hit", 20): 0.12,
    ("cold", 20): 0.8,
    ("cold", 50): 0.8,
    ("warm", 20): 0.05,
    ("warm", 50): 0.03,
}
"""(step, N) -> the largest qdlab/Quadrants ratio issue 18 accepts."""
PAUSE_S = 2.0
"""The pause before an edit, for both peers: in the warm step between the first call and the
edited one, and before the edit step's new process. A person editing takes longer; meanwhile
qdlab's optimised objects of the first call are made in the background
(`qdlab/compiler/runtime/tiers.py`) and the compile server starts
(`qdlab/compiler/codegen/server.py`)."""

_HEADER = """\
import json, time
_T0 = time.perf_counter()
import numpy as np
try:
    import {module} as qd
    qd.init(arch=qd.cpu, offline_cache=True, offline_cache_file_path={cache!r})
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

_FOOTER = """

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
obs = getattr(getattr(kern, "_primal", kern), "per_offload_cache_observations", None)
print({mark!r} + json.dumps({{"first_call_ms": (t1 - t0) * 1e3, "import_init_ms": (_T1 - _T0) * 1e3,
                             "check": bool(ok),
                             "recompiled": getattr(obs, "frontend_constructs_recompiled", None),
                             "llvm_loaded": "llvmlite.binding" in __import__("sys").modules}}))
"""


def kernel_source(peer: str, n_loops: int, cache: str, edited: bool) -> str:
    """A standalone script that defines, first-calls and times the N-loop kernel against cache dir
    `cache`."""
    factors: list[float] = [k + 1 for k in range(n_loops)]
    if edited:
        factors[n_loops // 2] += 0.5
    last_k1: list[float] = [0, 0, 0, 0]
    for k, f in enumerate(factors):
        last_k1[k % 4] = f
    fields = {
        "mark": JSON_MARK,
        "size": SIZE,
        "last_k1": last_k1,
        "not_importable": NOT_IMPORTABLE,
        "module": peer,
        "cache": cache,
    }
    body = "".join(_QD_LOOP.format(j=k % 4, k1=f) for k, f in enumerate(factors))
    return _HEADER.format(**fields) + body + _FOOTER.format(**fields)


_WARM = (
    """
import importlib.util, json, time
import numpy as np
import {module} as qd
qd.init(arch=qd.cpu, offline_cache=True, offline_cache_file_path={cache!r})
_T0 = _T1 = time.perf_counter()
c = 0.25


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.kern


load({first!r}, "first")(*(qd.ndarray(qd.f32, ({size},)) for _ in range(5)))
qd.sync()
time.sleep({pause})  # the person at the notebook edits the cell
kern = load({edited!r}, "edited")  # the cell run again with one loop edited
"""
    + _FOOTER
)
"""The warm step: one process (a notebook) calls the kernel, then the same kernel with one loop
edited, loaded as a module again; only the second call is timed."""


def warm_script(peer: str, n: int, cache: str, tmp: Path) -> str:
    """The warm step's script, and the two kernel modules it loads, written into `tmp`."""
    paths = []
    for edited in (False, True):
        text = kernel_source(peer, n, cache, edited)
        body = text.split("c = 0.25", 1)[1]
        module = f"import numpy as np\nimport {peer} as qd\n\nc = 0.25" + body.split("\n\nxs = ")[0]
        path = tmp / f"{peer}_n{n}_{'edited' if edited else 'first'}_kern.py"
        path.write_text(module + "\n")
        paths.append(str(path))
    factors: list[float] = [k + 1 for k in range(n)]
    factors[n // 2] += 0.5
    last_k1: list[float] = [0, 0, 0, 0]
    for k, f in enumerate(factors):
        last_k1[k % 4] = f
    return _WARM.format(
        pause=PAUSE_S,
        module=peer,
        cache=cache,
        size=SIZE,
        first=paths[0],
        edited=paths[1],
        last_k1=last_k1,
        mark=JSON_MARK,
    )


def one_rep(peer: str, n: int, tmp: Path, rep: int) -> dict[str, dict[str, Any]]:
    """Cold, all-hit and edit-one runs of one peer in one fresh cache directory, and a directory
    of their own for qdlab's compile server (`qdlab/compiler/codegen/server.py`): none runs
    before the cold step, whose process starts it as it exits; removed after the repetition."""
    cache = tmp / f"cache_{peer}_n{n}_r{rep}"
    cache.mkdir()
    servers = tmp / f"servers_{peer}_n{n}_r{rep}"
    servers.mkdir(mode=0o700)
    os.environ["QDLAB_COMPILE_SERVER_DIR"] = str(servers)
    try:
        return _steps(peer, n, tmp, rep, cache)
    finally:
        shutil.rmtree(servers)  # its server leaves within a second


def _steps(peer: str, n: int, tmp: Path, rep: int, cache: Path) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for step in STEPS:
        if step == "edit":
            time.sleep(PAUSE_S)  # the person editing, as in the warm step

        script = (
            tmp / f"{peer}_n{n}_{step}.py"
        )  # the edit keeps the file name, as an edited cell or module does
        if step == "warm":  # a cache of its own: the edited construct is new to it
            warm_cache = tmp / f"cache_{peer}_n{n}_r{rep}_warm"
            warm_cache.mkdir()
            script.write_text(warm_script(peer, n, str(warm_cache), tmp))
        else:
            script.write_text(kernel_source(peer, n, str(cache), edited=step == "edit"))
        out[step] = run_once(script)
        if "error" in out[step]:
            break
    return out


def measure(loops: list[int], reps: int) -> dict[tuple[str, int, str], dict[str, Any]]:
    """Medians per (peer, N, step); the first error wins."""
    results: dict[tuple[str, int, str], dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="qdlab_cache_bench_") as tmp_name:
        tmp = Path(tmp_name)
        for n in loops:
            runs: dict[tuple[str, str], list[dict[str, Any]]] = {
                (p, s): [] for p in PEERS for s in STEPS
            }
            for rep in range(reps):
                for peer in PEERS:  # interleave peers so drift hits both alike
                    if any("error" in r for s in STEPS for r in runs[(peer, s)]):
                        continue
                    for step, r in one_rep(peer, n, tmp, rep).items():
                        runs[(peer, step)].append(r)
            for (peer, step), rs in runs.items():
                errors = [r for r in rs if "error" in r]
                if errors or not rs:
                    results[(peer, n, step)] = errors[0] if errors else {"error": "n/a (not run)"}
                    continue
                results[(peer, n, step)] = {
                    "first_call_ms": statistics.median(r["first_call_ms"] for r in rs),
                    "import_init_ms": statistics.median(r["import_init_ms"] for r in rs),
                    "check": all(r["check"] for r in rs),
                    "recompiled": sorted({r.get("recompiled") for r in rs}, key=str),
                    "llvm_loaded": sorted({r.get("llvm_loaded") for r in rs}, key=str),
                }
    return results


def _cell(res: dict[str, Any]) -> str:
    if "error" in res:
        return res["error"]
    return fmt(res["first_call_ms"]) + ("" if res["check"] else " (WRONG RESULT)")


def _ratio(res: dict, n: int, step: str) -> tuple[str, str | None]:
    mine = res[("qdlab", n, step)].get("first_call_ms")
    ref = res[("quadrants", n, step)].get("first_call_ms")
    if not (mine and ref):
        return "n/a", None
    ratio = mine / ref
    target = TARGETS.get((step, n))
    if target is None:
        return f"{ratio:.2f}×", None
    verdict = "met" if ratio <= target else "NOT met"
    summary = f"{STEP_TITLES[step]} at N = {n}: {ratio:.3f}× (target ≤ {target}×) — {verdict}"
    return f"{ratio:.2f}× (≤ {target}×: {verdict})", summary


def build_report(loops: list[int], reps: int) -> str:
    res = measure(loops, reps)
    header = ["N loops"]
    for step in STEPS:
        header += [f"{STEP_TITLES[step]}: qdlab ms", "Quadrants ms", "qdlab/Quadrants"]
    rows, verdicts = [], []
    for n in loops:
        row = [str(n)]
        for step in STEPS:
            ratio, verdict = _ratio(res, n, step)
            row += [_cell(res[("qdlab", n, step)]), _cell(res[("quadrants", n, step)]), ratio]
            if verdict:
                verdicts.append(verdict)
        rows.append(row)
    recompiled = {n: res[("qdlab", n, "edit")].get("recompiled") for n in loops}
    llvm = {n: res[("qdlab", n, "hit")].get("llvm_loaded") for n in loops}
    served = {n: res[("qdlab", n, "edit")].get("llvm_loaded") for n in loops}
    server = os.environ.get("QDLAB_COMPILE_SERVER", "1") != "0"
    notes = [
        (
            "first call (`kern(...)` + `qd.sync()`, compile included) in a fresh process, median "
            f"of {reps}; each repetition uses a new empty cache directory (`offline_cache=True, "
            "offline_cache_file_path=<dir>`) and runs cold, then all-hit, then edit-one in it; "
            f"{SIZE} f32 elements"
        ),
        (
            f"edit one loop: after a {PAUSE_S:g} s pause, loop N//2's factor changed from k+1 to "
            "k+1.5, same file name; qdlab constructs recompiled on that run: "
            + ", ".join(f"N={n}: {recompiled[n]}" for n in loops)
        ),
        (
            (
                "new processes: qdlab's compile server (`qdlab/compiler/codegen/server.py`), "
                "started by the cold step's process as it exits, compiles the edited construct; "
                "llvmlite's binding imported in the edit run: "
                + ", ".join(f"N={n}: {served[n]}" for n in loops)
            )
            if server
            else "new processes: no compile server (`QDLAB_COMPILE_SERVER=0`)"
        ),
        (
            f"edit one loop, warm process: a {PAUSE_S:g} s pause (the person editing) before the "
            "edited kernel is loaded, for both peers; qdlab runs each construct it compiles from "
            "a quick object until the optimised one, made in the background, replaces it "
            "(`qdlab/compiler/runtime/tiers.py`)"
        ),
        (
            "all-hit: qdlab links the cached objects with its own loader and keys them by the "
            "CPU's CPUID words (`qdlab/compiler/codegen/elf.py`, `host.py`); llvmlite's binding "
            "imported in that run: " + ", ".join(f"N={n}: {llvm[n]}" for n in loops)
        ),
        "qdlab's modules are compiled to bytecode first, as a package install does",
        "import + init time (not included above), median over all runs: "
        + ", ".join(f"{p} {_import_ms(res, p, loops)}" for p in PEERS),
        *verdicts,
    ]
    for peer in PEERS:
        detail = next(
            (r.get("detail") for (p, _, _), r in res.items() if p == peer and "detail" in r), None
        )
        if detail:
            notes.append(f"{peer}: {detail}")
    return report(
        "compile_cache",
        "Construct cache: cold, all-hit and edit-one-loop first calls vs Quadrants",
        markdown_table(header, rows),
        notes,
    )


def _import_ms(res: dict, peer: str, loops: list[int]) -> str:
    values = [
        res[(peer, n, s)]["import_init_ms"]
        for n in loops
        for s in STEPS
        if s != "warm" and "error" not in res[(peer, n, s)]
    ]
    return fmt(statistics.median(values)) + " ms" if values else "n/a"


def main() -> None:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--loops", type=int, nargs="+", default=[1, 5, 20, 50])
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    write_bytecode()
    build_report(args.loops, args.reps)


if __name__ == "__main__":
    main()
