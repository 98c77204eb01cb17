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
