"""Run `example.ipynb` in a real Jupyter kernel (nbclient) and check what a notebook front end would
show."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.process

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

EXAMPLE = Path(__file__).with_name("example.ipynb")


def test_example_notebook(tmp_path):
    nb = nbformat.read(EXAMPLE, as_version=4)
    # show the progress widget at once, so the first compile shows it and the summary then takes its
    # place
    nb.cells.insert(
        2, nbformat.v4.new_code_cell("from qdlab.magics import progress\nprogress.DELAY_S = 0.0")
    )
    client = nbclient.NotebookClient(
        nb,
        kernel_name="python3",
        timeout=60,
        store_widget_state=True,
        resources={"metadata": {"path": str(tmp_path)}},
    )
    env = dict(os.environ, QDLAB_CACHE_DIR=str(tmp_path / "cache"))
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    client.execute(env=env)
    outputs = [cell.get("outputs", []) for cell in nb.cells if cell.cell_type == "code"]
    assert not [o for cell in outputs for o in cell if o.output_type == "error"]

    _, _, first, second, cache = outputs
    [summary] = first  # the progress widget was replaced in place
    widgets = nb.metadata.widgets["application/vnd.jupyter.widget-state+json"]["state"].values()
    assert "IntProgressModel" in {w["model_name"] for w in widgets}
    assert summary.output_type == "display_data" and set(summary.data) == {
        "text/plain",
        "text/html",
    }
    assert summary.data["text/plain"].startswith(
        "six: per_offload, 6 constructs: 6 compiled, 0 reused"
    )
    assert "<table>" in summary.data["text/html"]

    summary, timing = second  # the kernel returns None, so there is no execute_result
    assert summary.data["text/plain"].startswith(
        "six: per_offload, 6 constructs: 1 compiled, 5 reused"
    )
    assert "1 compiled, 5 reused" in summary.data["text/html"]
    assert timing.data["text/plain"].startswith("ran six(x, y) in ") and "text/html" in timing.data

    [stats] = cache
    entries = int(re.search(r"entries +(\d+)", stats.data["text/plain"]).group(1))
    assert entries >= 7 and "text/html" in stats.data  # at least one per distinct construct
