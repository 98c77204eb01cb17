"""Graphs that render inline, and say what to install when the graphviz `dot` program is missing.

`Graph` is a `graphviz.Digraph`, so everything the graphviz package offers still works on it. What
it adds is a display that never fails: with `dot` on the path a notebook shows the SVG, without it
the notebook shows the install command and the DOT text, and terminals always get a short
`text/plain` line.
"""

from __future__ import annotations

import html
import shutil
from collections.abc import Iterable

import graphviz

INSTALL = "apt-get install graphviz"
"""The set-up command that provides `dot` (scripts/setup.sh runs it)."""


class Graph(graphviz.Digraph):
    """A construct, slice or edit graph of one kernel."""

    def __init__(self, name: str | None = None, title: str = "graph", **kwargs: object) -> None:
        super().__init__(name=name, **kwargs)  # type: ignore[arg-type]
        self.title = title
        """One line saying what the graph shows (its `text/plain` form)."""

    def svg(self) -> str | None:
        """The rendered SVG, or None when the `dot` program is not installed."""
        try:
            return self.pipe(format="svg", encoding="utf-8")
        except graphviz.ExecutableNotFound:
            return None

    def missing_dot(self) -> str:
        return (
            f"{self.title}\nThe graphviz `dot` program is not installed, so this graph cannot be "
            f"drawn; install it with `{INSTALL}` (scripts/setup.sh does). Its DOT text:\n"
            f"{self.source}"
        )

    def html(self) -> str:
        """SVG for an HTML page, or the install hint and the DOT text."""
        svg = self.svg()
        if svg is not None:
            return svg[svg.index("<svg") :]
        return f"<pre class='qdlab-missing-dot'>{html.escape(self.missing_dot())}</pre>"

    def _repr_svg_(self) -> str | None:
        return self.svg()

    def _repr_mimebundle_(
        self,
        include: Iterable[str] | None = None,
        exclude: Iterable[str] | None = None,
        **_: object,
    ) -> dict[str, str]:
        svg = self.svg()
        if svg is None:
            return {"text/plain": self.missing_dot(), "text/html": self.html()}
        return {"text/plain": self.title, "image/svg+xml": svg}

    def __repr__(self) -> str:
        return f"<{self.title}>"


def have_dot() -> bool:
    return shutil.which(str(graphviz.backend.dot_command.DOT_BINARY)) is not None
