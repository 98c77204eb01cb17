"""The README stays a short front page whose links all land, and the documentation site (docs/)
keeps up with the code: every `QDLAB_*` environment variable the code reads is documented, and the
executed copy of notebook 08 the site shows has the repository notebook's cells. (The site itself is
built, warnings as errors, by `.ci/run`.)"""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.DOTALL | re.MULTILINE)


def slug(title: str) -> str:
    """A heading's anchor as GitHub and MyST (`myst_heading_anchors`) make it."""
    text = re.sub(r"[^\w\- ]", "", title.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text())
    return {slug(m.group(2)) for m in re.finditer(r"^(#{1,6})\s+(.*)$", text, re.MULTILINE)}


def links(page: Path) -> list[str]:
    return LINK.findall(FENCE.sub("", page.read_text()))


def test_readme_is_at_most_8_kb() -> None:
    size = len(README.read_bytes())
    assert size <= 8 * 1024, f"README.md is {size} bytes: move detail into docs/"


def test_every_readme_link_resolves() -> None:
    found = links(README)
    assert found, "the README links into the docs"
    for target in found:
        if re.match(r"[a-z]+://", target):
            continue
        path, _, anchor = target.partition("#")
        resolved = (README.parent / path) if path else README
        assert resolved.exists(), f"README links to {target}: no such file"
        if anchor:
            assert resolved.suffix == ".md", f"README links to an anchor of a non-page: {target}"
            assert anchor in anchors(resolved), f"README links to {target}: no such heading"


def test_readme_commands_are_the_ones_ci_and_setup_run() -> None:
    text = README.read_text()
    assert "bash scripts/setup.sh && .venv/bin/python -m qdlab.demo" in text
    assert ".venv/bin/python -m pytest -q" in text
    ci = (ROOT / ".ci" / "run").read_text()
    assert ".venv/bin/python -m pytest -q" in ci
    build = "-m sphinx -W --keep-going"
    assert build in ci and build in text


# Names that look like variables but are Python names or printed markers, not environment variables.
NOT_VARIABLES = {"QDLAB_DIR", "QDLAB_RESULTS", "QDLAB_VERSION", "QDLAB_TEACH_MS"}


def test_every_environment_variable_is_documented() -> None:
    read: set[str] = set()
    for folder in ("qdlab", "bench", "tests", "scripts"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in {".py", ".sh"} and path.is_file():
                read |= set(re.findall(r"\bQDLAB_[A-Z0-9_]*[A-Z0-9]", path.read_text()))
    read -= NOT_VARIABLES
    assert len(read) > 20, sorted(read)
    page = (DOCS / "environment.md").read_text()
    missing = sorted(name for name in read if f"`{name}`" not in page)
    assert not missing, f"docs/environment.md does not describe {missing}"


def code_cells(path: Path) -> list[str]:
    cells = json.loads(path.read_text())["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]


def test_executed_notebooks_have_the_repository_cells_and_outputs() -> None:
    kept = sorted((DOCS / "notebooks_executed").glob("*.ipynb"))
    assert [p.name for p in kept] == ["08_genesis.ipynb"]
    for path in kept:
        assert code_cells(path) == code_cells(ROOT / "notebooks" / path.name), (
            f"notebooks/{path.name} changed: run it again (with Genesis) into {path}"
        )
        cells = json.loads(path.read_text())["cells"]
        assert all(c["outputs"] for c in cells if c["cell_type"] == "code"), path


def test_every_docs_page_link_resolves() -> None:
    """Sphinx checks links between pages when it builds; this is the same check without building."""
    for page in [*DOCS.glob("*.md"), *DOCS.glob("lang/*.md")]:
        for target in links(page):
            if re.match(r"[a-z]+://", target):
                continue
            path, _, anchor = target.partition("#")
            resolved = (page.parent / path) if path else page
            assert resolved.exists(), f"{page.relative_to(ROOT)} links to {target}: no such file"
            if anchor:
                assert anchor in anchors(resolved), (
                    f"{page.relative_to(ROOT)}: {target}: no heading"
                )
