"""Visualisations of the split: construct, slice and edit graphs, and the SplitVisualizer widget.

Everything here reads `qd.explain`'s report and nothing else; the compiler never imports this
package.
"""

from __future__ import annotations

from .graphs import construct_graph, edit_graph, slice_graph
from .render import Graph

__all__ = ["Graph", "SplitVisualizer", "construct_graph", "edit_graph", "slice_graph"]


def __getattr__(name: str) -> object:
    if name == "SplitVisualizer":
        from .widget import SplitVisualizer  # lazy: ipywidgets, only when the widget is made

        return SplitVisualizer
    raise AttributeError(name)
