"""Notebook 08 (a Genesis scene with contacts on qdlab, one of its loops edited) run top to bottom
in a Jupyter kernel of a Python that has Genesis: `QDLAB_GENESIS_PYTHON` (with ipykernel and this
checkout's dependencies), or this interpreter when it can import genesis; otherwise the test skips,
saying so. Slow: a cold scene build takes about a minute."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from notebook_runs import NOTEBOOKS

from qdlab.demo import errors, execute

pytest.importorskip("nbclient")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "programs"))
from genesis_support import genesis_python
from test_genesis_scene import ROOT

pytestmark = pytest.mark.process


def kernel_spec(folder: Path, python: str) -> str:
    """A Jupyter kernel running `python`, findable under `folder` (put on JUPYTER_PATH)."""
    spec = folder / "kernels" / "genesis"
    spec.mkdir(parents=True)
    argv = [python, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(
        json.dumps({"argv": argv, "display_name": "Genesis", "language": "python"})
    )
    return "genesis"


def outputs(nb: object) -> str:
    return "".join(
        o.get("text") or o.get("data", {}).get("text/plain", "")
        for c in nb.cells  # type: ignore[attr-defined]
        if c.cell_type == "code"
        for o in c.outputs
    )


@pytest.mark.slow
def test_08_edits_one_loop_of_a_genesis_solver(tmp_path: Path, monkeypatch) -> None:
    python = genesis_python()
    if python is None:
        pytest.skip("Genesis is not importable (set QDLAB_GENESIS_PYTHON to a Python that has it)")
    if python != sys.executable and os.system(f"{python} -c 'import ipykernel' 2>/dev/null"):
        pytest.skip(f"{python} has no ipykernel to run the notebook in")
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    name = kernel_spec(tmp_path / "jupyter", python)
    nb = execute(NOTEBOOKS[0].parent / "08_genesis.ipynb", str(tmp_path / "cache"), 900, name)
    assert errors(nb) == []
    out = outputs(nb)
    assert "(within 1e-5: True)" in out  # the bodies rest where they rest on the reference
    assert "kernel_substep_post" in out and "whole_kernel" not in out
    assert "z equal: True" in out  # moved into the notebook: the same result
    edited = next(line for line in out.splitlines() if line.startswith("edited:"))
    assert ": 1 compiled, 18 reused;" in edited, edited
    assert "undone: 19 constructs: 0 compiled, 19 reused; z equal to the first run: True" in out
