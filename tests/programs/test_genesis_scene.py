"""A real program (issue 22): the smallest headless Genesis scene (a plane and a 0.2 m box dropped
from z = 0.5, 20 steps) builds and steps on qdlab, unchanged, through `python -m qdlab.run`, and
the box ends where it ends on the reference (quadrants 1.3.3) to 1e-5. Slow (minutes) and needs
Genesis and torch: a Python with `genesis-world` 1.4.5 is `QDLAB_GENESIS_PYTHON`, or this one when
it can import genesis; otherwise the test skips, saying so."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from genesis_support import genesis_python

pytestmark = pytest.mark.process

ROOT = Path(__file__).resolve().parents[2]
Z_REFERENCE = 0.29399004578590393  # bench: |z_qdlab - z_ref| = 0 (bit for bit), 2026-12-01
"""The box's final height on quadrants 1.3.3 (`bench/genesis_scene.py` prints both)."""

SCENE = """
import json
import genesis as gs

gs.init(backend=gs.cpu, logging_level="warning")
scene = gs.Scene(show_viewer=False)
scene.add_entity(gs.morphs.Plane())
box = scene.add_entity(gs.morphs.Box(size=(0.2, 0.2, 0.2), pos=(0.0, 0.0, 0.5)))
scene.build()
for _ in range(20):
    scene.step()
from qdlab.host import state
reports = [c.report for c in state.history.values()]
print("@@" + json.dumps({"z": float(box.get_pos()[2]), "kernels": len(reports)}))
"""


@pytest.mark.slow
def test_the_smallest_genesis_scene_matches_the_reference(tmp_path: Path) -> None:
    python = genesis_python()
    if python is None:
        pytest.skip("Genesis is not importable (set QDLAB_GENESIS_PYTHON to a Python that has it)")
    script = tmp_path / "scene.py"
    script.write_text(SCENE)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "QDLAB_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run(
        [python, "-m", "qdlab.run", str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    lines = [x for x in proc.stdout.splitlines() if x.startswith("@@")]
    assert lines, proc.stderr[-3000:]
    got = json.loads(lines[-1][2:])
    assert abs(got["z"] - Z_REFERENCE) <= 1e-5, got
    assert got["kernels"] >= 20
