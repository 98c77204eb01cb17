"""Graphs that render inline, and say what to install when the graphviz `dot` program is missing.

`Graph` is a `graphviz.Digraph`, so everything the graphviz package offers still works on it. What
it adds is a display that never fails: with `dot` on the path a notebook shows the SVG, without it
the notebook shows the install command and the DOT text, and terminals always get a short
`text/plain` line.
"""

from __future__ import annotations

import functools
import html
import re
import shutil
from collections.abc import Iterable
from importlib import resources

import graphviz

INSTALL = "apt-get install graphviz"
"""The set-up command that provides `dot` (scripts/setup.sh runs it)."""


@functools.cache
def script() -> str:
    """The visualizer's browser handler (`static/visualizer.js`), escaped for an HTML attribute."""
    text = resources.files("qdlab.viz").joinpath("static/visualizer.js").read_text()
    return html.escape(text, quote=True)


READABLE = 0.85
"""The smallest scale a graph is shown at (its 10 pt text stays about 11 px high): a graph wider
than its view at that scale is panned inside the view (scroll, or the zoom buttons), never
shrunk further and never widening the page."""


def fit(svg: str) -> str:
    """`svg` scaled to the width it is shown in, between `READABLE` and its drawn size: graphviz's
    absolute `width`/`height` become 100% and auto, its viewBox keeps the proportions."""
    svg = svg[svg.index("<svg") :]
    head, rest = svg.split(">", 1)
    m = re.search(r'width="([\d.]+)pt"', head)
    px = float(m.group(1)) * 4 / 3 if m else None
    natural = f"{px:.0f}px" if px else "none"
    least = f"{px * READABLE:.0f}px" if px else "0"
    head = re.sub(r'\s(width|height)="[^"]*"', "", head)
    return (
        f'{head} width="100%" data-natural="{natural}" data-least="{least}" '
        f'style="max-width:{natural};min-width:{least};height:auto;display:block">{rest}'
    )


TOOL = "font-size:11px;padding:0 6px;margin-right:4px"


class Graph(graphviz.Digraph):
    """A construct, slice or edit graph of one kernel."""

    def __init__(self, name: str | None = None, title: str = "graph", **kwargs: object) -> None:
        super().__init__(name=name, **kwargs)  # type: ignore[arg-type]
        self.title = title
        """One line saying what the graph shows (its `text/plain` form)."""
        self.expanded: Graph | None = None
        """The same graph with nothing collapsed (an edit graph's unchanged constructs), drawn
        hidden beside this one; clicking the collapsed node swaps them."""

    def svg(self) -> str | None:
        """The rendered SVG (drawn once per DOT text), or None when the `dot` program is not
        installed."""
        source = self.source
        if self.__dict__.get("_drawn", (None,))[0] != source:
            try:
                self.__dict__["_drawn"] = (source, self.pipe(format="svg", encoding="utf-8"))
            except graphviz.ExecutableNotFound:
                return None
        return self.__dict__["_drawn"][1]

    def missing_dot(self) -> str:
        return (
            f"{self.title}\nThe graphviz `dot` program is not installed, so this graph cannot be "
            f"drawn; install it with `{INSTALL}` (scripts/setup.sh does). Its DOT text:\n"
            f"{self.source}"
        )

    def html(self, height: str = "") -> str:
        """The graph scaled to the width of the page (never below `READABLE`), with zoom buttons
        (scroll to pan), or the install hint and the DOT text. `height` caps the view (it then
        scrolls)."""
        svg = self.svg()
        if svg is None:
            return f"<pre class='qdlab-missing-dot'>{html.escape(self.missing_dot())}</pre>"
        views = f"<div>{fit(svg)}</div>"
        if self.expanded is not None and (full := self.expanded.svg()) is not None:
            views += f"<div hidden>{fit(full)}</div>"
        tools = "".join(
            f"<button data-act='{act}' title='{tip}' style='{TOOL}'>{text}</button>"
            for act, text, tip in (
                ("zoom-out", "−", "zoom out"),
                ("fit", "fit", "as wide as the view, text kept readable"),
                ("zoom-in", "+", "zoom in (scroll to pan)"),
            )
        )
        cap = f"max-height:{height};" if height else ""
        return (
            f'<div class="qdlab-graph" onclick="{script()}" style="max-width:100%">'
            f"<div style='font-size:11px;color:#5f6368;margin:2px 0'>{tools}"
            f"{html.escape(self.title)}</div>"
            f"<div class='qd-graph-view qd-scroll' style='{cap}overflow:auto;max-width:100%'>"
            f"{views}</div></div>"
        )

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
        return {"text/plain": self.title, "text/html": self.html(), "image/svg+xml": svg}

    def __repr__(self) -> str:
        return f"<{self.title}>"


def have_dot() -> bool:
    return shutil.which(str(graphviz.backend.dot_command.DOT_BINARY)) is not None
