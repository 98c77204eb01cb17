"""Sphinx configuration of qdlab's documentation (MyST markdown pages, notebooks run by myst-nb).

Built as `.ci/run` does: `.venv/bin/python -m sphinx -W --keep-going -b html docs docs/_build/html`.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))  # document this checkout's qdlab, not an installed one

import qdlab  # after the path is set

# The notebooks' kernels are child processes: they import this checkout's qdlab too, and compile
# into a cache of this build's own (notebook 02's cold compile is cold, as in the demo's run).
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
)
# A compile server the kernels start keeps its socket there too, and leaves when the build ends.
_TMP = tempfile.mkdtemp(prefix="qdlab-docs-")
os.environ["QDLAB_CACHE_DIR"] = os.path.join(_TMP, "cache")
os.environ["QDLAB_COMPILE_SERVER_DIR"] = os.path.join(_TMP, "server")
atexit.register(shutil.rmtree, _TMP, ignore_errors=True)

project = "qdlab"
author = "the qdlab team"
copyright = "2026, the qdlab team"
release = version = qdlab.__version__

extensions = [
    "myst_nb",  # MyST markdown pages and notebooks (it loads myst_parser itself)
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
]
exclude_patterns = ["_build", "notebooks_executed", "Thumbs.db", ".DS_Store"]
html_theme = "furo"
html_title = f"qdlab {release}"
html_static_path: list[str] = []

myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3  # `[text](page.md#a-heading)` links resolve, and the test checks them

# Notebooks: `notebooks/*.ipynb` (the repository's, stored without outputs) are copied here at
# each build and executed by myst-nb; `notebooks/08_genesis.ipynb` needs Genesis and a minute or
# more for a cold scene, so the docs keep an executed copy (`docs/notebooks_executed/`), which
# tests/docs checks against the repository's cells.
NB_SRC = ROOT / "notebooks"
NB_DST = HERE / "notebooks"
EXECUTED = HERE / "notebooks_executed"
NB_DST.mkdir(exist_ok=True)
_wanted = {
    nb.name: EXECUTED / nb.name if (EXECUTED / nb.name).exists() else nb
    for nb in NB_SRC.glob("*.ipynb")
}
for stale in NB_DST.glob("*.ipynb"):
    if stale.name not in _wanted:
        stale.unlink()
for _name, _source in _wanted.items():
    _copy = NB_DST / _name  # copied only when changed, so Sphinx does not read it again
    if not _copy.exists() or _copy.read_bytes() != _source.read_bytes():
        shutil.copyfile(_source, _copy)

nb_execution_mode = "cache"
nb_execution_cache_path = str(HERE / "_build" / ".jupyter_cache")
nb_execution_timeout = 300
nb_execution_raise_on_error = True  # a notebook that fails fails the build
nb_execution_excludepatterns = [f"notebooks/{p.name}" for p in sorted(EXECUTED.glob("*.ipynb"))]
nb_execution_show_tb = True
nb_merge_streams = True
# A `SplitVisualizer` cell's output is a live widget (which needs a running kernel) and a static
# snapshot (`text/html`: header, construct graph, IR); the site shows the snapshot, as the demo's
# HTML does offline.
nb_mime_priority_overrides = [("html", "application/vnd.jupyter.widget-view+json", None)]

autodoc_default_options = {"members": False}
default_role = "literal"  # qdlab's docstrings quote names in single backticks, as markdown does
autodoc_typehints = "none"
autosummary_generate = False
napoleon_google_docstring = True
napoleon_numpy_docstring = False


def _summary(obj: object) -> str:
    """The first line of an object's own docstring, or its kind."""
    doc = getattr(obj, "__doc__", None) if callable(obj) or isinstance(obj, type) else None
    if isinstance(obj, type(qdlab)):
        doc = obj.__doc__
    line = (doc or "").strip().split("\n")[0].strip()
    return line or type(obj).__name__


def setup(app):
    from docutils import nodes
    from docutils.parsers.rst import Directive

    class QdlabAll(Directive):
        """A table of every name in `qdlab.__all__` and the first line of what it is."""

        def run(self):
            table = nodes.table()
            group = nodes.tgroup(cols=2)
            table += group
            group += nodes.colspec(colwidth=25)
            group += nodes.colspec(colwidth=75)
            body = nodes.tbody()
            for name in sorted(set(qdlab.__all__), key=str.lower):
                row = nodes.row()
                for text, literal in (
                    (f"qd.{name}", True),
                    (_summary(getattr(qdlab, name)), False),
                ):
                    entry = nodes.entry()
                    para = nodes.paragraph()
                    para += nodes.literal(text=text) if literal else nodes.Text(text)
                    entry += para
                    row += entry
                body += row
            group += body
            return [table]

    app.add_directive("qdlab-all", QdlabAll)
    return {"parallel_read_safe": True}
