"""A real program: the smallest headless Genesis scene, on the reference and on qdlab, unchanged.

Why this script exists: issue 22 asks whether Genesis (Quadrants' main user) builds and steps on
qdlab. The scene is a plane and a 0.2 m box dropped from z = 0.5 (`gs.init(backend=gs.cpu)`,
`show_viewer=False`, `scene.build()`, 20 steps). Each implementation runs it in fresh processes:
cold (empty caches), then warm (the caches the cold run filled). qdlab runs it through
`python -m qdlab.run`, so `import quadrants` inside Genesis is qdlab; nothing is edited.

It installs nothing and is not part of CI (Genesis and torch weigh about 3 GB). It needs a Python
with `genesis-world` 1.4.5, `torch`, the reference `quadrants` 1.3.3 (Genesis pins it) and qdlab
importable (its source tree on PYTHONPATH, `--qdlab`), e.g.

    python3 -m venv genesis-venv
    genesis-venv/bin/pip install genesis-world==1.4.5 torch llvmlite platformdirs
    .venv/bin/python bench/genesis_scene.py --python genesis-venv/bin/python

Printed: the box's final height on each, `scene.build()` and step times, and for qdlab the number of
kernels and constructs, how many kernels split and every fallback code met; or the error a run ended
with (its last line), which names what qdlab still lacks.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import fmt, markdown_table, report
from genesis_scenes import COMPILER_REPORT

ROOT = Path(__file__).resolve().parents[1]
MARK = "@@GENESIS@@"

SCENE = """
import json, sys, time

t0 = time.perf_counter()
import genesis as gs

gs.init(backend=gs.cpu, logging_level="warning")
scene = gs.Scene(show_viewer=False)
scene.add_entity(gs.morphs.Plane())
box = scene.add_entity(gs.morphs.Box(size=(0.2, 0.2, 0.2), pos=(0.0, 0.0, 0.5)))
t1 = time.perf_counter()
scene.build()
t2 = time.perf_counter()
for _ in range(20):
    scene.step()
t3 = time.perf_counter()
out = {"z": float(box.get_pos()[2]), "build_s": t2 - t1, "steps_s": t3 - t2, "import_s": t1 - t0}
"""
SCENE += COMPILER_REPORT + "print(%r + json.dumps(out))\n"


def run(python: str, impl: str, cache: Path, qdlab_tree: Path) -> dict:
    """One fresh process running the scene; its figures, or the error it ended with."""
    script = cache / "scene.py"
    script.write_text(SCENE % MARK)
    env = dict(
        os.environ,
        QD_OFFLINE_CACHE_FILE_PATH=str(cache / "quadrants"),
        QDLAB_CACHE_DIR=str(cache / "qdlab"),
    )
    if impl == "qdlab":
        env["PYTHONPATH"] = str(qdlab_tree)
        cmd = [python, "-m", "qdlab.run", str(script)]
    else:
        cmd = [python, str(script)]
    out = subprocess.run(
        cmd, cwd=cache, env=env, capture_output=True, text=True, timeout=1800, check=False
    )
    for line in out.stdout.splitlines():
        if line.startswith(MARK):
            return json.loads(line[len(MARK) :])
    lines = [x for x in out.stderr.strip().splitlines() if x.strip()]
    return {"error": lines[-1][:200] if lines else f"exit {out.returncode}"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", required=True, help="a Python with genesis, torch and quadrants")
    ap.add_argument("--qdlab", type=Path, default=ROOT, help="the qdlab source tree to run")
    args = ap.parse_args()
    results: dict[tuple[str, str], dict] = {}
    for impl in ("quadrants", "qdlab"):
        with tempfile.TemporaryDirectory(prefix=f"genesis-{impl}-") as tmp:
            for step in ("cold", "warm"):
                results[impl, step] = run(args.python, impl, Path(tmp), args.qdlab)
    rows = []
    for step in ("cold", "warm"):
        ref, own = results["quadrants", step], results["qdlab", step]
        for what in ("z", "build_s", "steps_s"):
            ratio = (
                fmt(own[what] / ref[what])
                if what != "z" and "error" not in own and "error" not in ref
                else ""
            )
            rows.append(
                [
                    f"{step}: {what}",
                    ref.get("error") or fmt(ref[what], 6 if what == "z" else 3),
                    own.get("error") or fmt(own[what], 6 if what == "z" else 3),
                    ratio,
                ]
            )
        if "error" not in own and "error" not in ref:
            rows.append([f"{step}: abs(z - z_ref)", "", f"{abs(own['z'] - ref['z']):.2e}", ""])
    own = results["qdlab", "cold"]
    notes = [
        "Each cell is one fresh process; cold starts from empty caches, warm reuses them.",
        (
            "Targets (issue 22): qdlab's build at most 0.5x the reference's cold and warm, the 20 "
            "steps at most 1.0x, the final z equal to 1e-5."
        ),
    ]
    if "error" not in own:
        notes.append(
            f"qdlab: {own['kernels']} kernels, {own['constructs']} constructs, {own['split']} "
            f"split; fallback codes met: {', '.join(own['fallbacks']) or 'none'}."
        )
    body = markdown_table(["figure", "quadrants", "qdlab", "qdlab / quadrants"], rows)
    report("genesis_scene", "Genesis scene (plane + falling box, 20 steps)", body, notes)


if __name__ == "__main__":
    main()
