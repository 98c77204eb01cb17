"""Each notebook runs top to bottom without an error output, stored without outputs, in under a
minute."""

from __future__ import annotations

import pytest
from notebook_runs import NOTEBOOKS, run

from qdlab.demo import edit_table, errors

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")

NAMES = [p.name for p in NOTEBOOKS]
GENESIS = "08_genesis.ipynb"
"""Runs where Genesis is installed (`test_genesis_notebook.py`, slow); the others run here."""


def test_all_eight_are_there() -> None:
    assert [n[:3] for n in NAMES] == [f"0{i}_" for i in range(1, 9)]


@pytest.mark.parametrize("name", NAMES)
def test_stored_without_outputs(name: str) -> None:
    nb = nbformat.read(NOTEBOOKS[0].parent / name, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and not [c for c in code if c.outputs or c.execution_count is not None]
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# ")


@pytest.mark.process
@pytest.mark.parametrize("name", [n for n in NAMES if n != GENESIS])
def test_runs_without_errors(name: str, tmp_path) -> None:
    nb, seconds = run(name, tmp_path)
    assert errors(nb) == []
    assert seconds < 60, f"{name} took {seconds:.1f} s"


def texts(nb: object) -> list[str]:
    return [
        o.get("text") or o.get("data", {}).get("text/plain", "")
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
    ]


@pytest.mark.process
def test_02_edit_rebuilds_one_loop(tmp_path) -> None:
    nb, _ = run("02_per_offload_caching.ipynb", tmp_path)
    table = edit_table(nb)
    assert table.startswith("thirty: per_offload, 30 constructs: 1 compiled, 29 reused")
    assert "identical: True" in "".join(texts(nb))


@pytest.mark.process
def test_04_shows_every_wrong_answer(tmp_path) -> None:
    nb, _ = run("04_fallbacks.ipynb", tmp_path)
    out = "".join(texts(nb))
    for expected in (
        "construct 1 alone: [0. 0. 0.]",
        "split: [0. 0. 0.]",
        "split:        counter 43",
        "diagnostic_mode |",
        "running_total   per_offload",
        "writes_other_field   per_offload   fallback: -                    launch alias checks: []",
        "overwrites_snapshot  whole_kernel  fallback: overwritten_reread",
        "`a` is read at line",
        "fields, split_carried=True: per_offload [('first', 'overwritten_reread')]",
        "out: [1 1 1 1 1 1 1 1]",
    ):
        assert expected in out, expected


@pytest.mark.process
def test_06_says_first_whether_there_is_a_gpu(tmp_path) -> None:
    nb, _ = run("06_gpu.ipynb", tmp_path)
    first = next(c for c in nb.cells if c.cell_type == "code").outputs[0]
    assert first.text.startswith("GPU: ")


@pytest.mark.process
def test_07_starter_code_is_not_yet_correct(tmp_path) -> None:
    nb, _ = run("07_exercises.ipynb", tmp_path)
    verdicts = [t for t in texts(nb) if t.startswith(("correct:", "not yet:"))]
    assert sum(t.startswith("not yet:") for t in verdicts) == 5


@pytest.mark.process
def test_01_words_hold_whatever_the_cache_holds(tmp_path) -> None:
    """Notebook 01's text under saxpy's summary names what the summary says, on a first run (an
    empty cache: both compiled) and on a second one with the same cache (both reused)."""
    from qdlab.demo import execute

    path = NOTEBOOKS[0].parent / "01_quickstart.ipynb"
    words = " ".join(c.source for c in nbformat.read(path, as_version=4).cells)
    assert "compiled just now" not in words
    for _ in range(2):
        nb = execute(path, str(tmp_path / "cache"), timeout_s=120)
        saxpy = next(t for t in texts(nb) if t.startswith("saxpy: per_offload"))
        said = saxpy.split("2 constructs: ", 1)[1].split(";")[0]
        assert f'("{said}")' in words, said
    assert said == "0 compiled, 2 reused"
