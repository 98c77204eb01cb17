"""`python -m qdlab.demo`: notebooks 01 and 02 as HTML with widget state, and the edit-one-loop
table printed."""

from __future__ import annotations

import pytest

from qdlab import demo

pytest.importorskip("nbconvert")
pytest.importorskip("nbclient")


@pytest.mark.process
def test_demo(tmp_path, capsys: pytest.CaptureFixture) -> None:
    assert demo.main(["--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "thirty: per_offload, 30 constructs: 1 compiled, 29 reused" in out
    assert out.count(" reused ") >= 29 and "compiled (no entry under its key" in out
    for name in demo.DEMO:
        html = (tmp_path / f"{name}.html").read_text()
        assert str(tmp_path / f"{name}.html") in out
        assert "data:image/svg+xml;base64," in html  # the graphs and bar charts
    assert (
        "application/vnd.jupyter.widget-state+json" in (tmp_path / "01_quickstart.html").read_text()
    )


def test_missing_notebooks(tmp_path, capsys: pytest.CaptureFixture) -> None:
    assert demo.main(["--notebooks", str(tmp_path / "nowhere"), "--out", str(tmp_path)]) == 2
    assert "not found" in capsys.readouterr().err


@pytest.mark.process
def test_kernel_is_quiet_about_transport(tmp_path) -> None:
    """The notebooks' kernel runs over private Unix sockets: ipykernel's "Kernel is running over
    TCP without encryption" warning (twice on the demo's terminal, once per notebook) is gone."""
    import subprocess
    import sys

    import nbformat

    path = tmp_path / "tiny.ipynb"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(6 * 7)")])
    nbformat.write(nb, path)
    code = (
        "import sys; from pathlib import Path; from qdlab import demo; "
        f"nb = demo.execute(Path({str(path)!r}), {str(tmp_path / 'cache')!r}, timeout_s=60); "
        "print(nb.cells[0].outputs[0].text, end='')"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "42"
    assert "without encryption" not in done.stderr, done.stderr
    assert not [p for p in tmp_path.iterdir() if "ipc" in p.name or p.name.startswith("k-")]
