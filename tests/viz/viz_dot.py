"""Reading the DOT text of a qdlab graph in tests: clusters, node and edge attributes."""

from __future__ import annotations

import re

from qdlab.viz import Graph

ATTRS = r'(?: \[((?:"(?:[^"\\]|\\.)*"|[^\]"])*)\])?'
"""An optional attribute list, with quoted strings that may hold brackets."""


def clusters(g: Graph) -> list[str]:
    return re.findall(r"subgraph (cluster_c\d+) \{", g.source)


def cluster(g: Graph, name: str) -> str:
    """The text of one cluster, up to its closing brace."""
    start = g.source.index(f"subgraph {name} {{")
    return g.source[start : g.source.index("\n\t}", start)]


def node(g: Graph, name: str, within: str | None = None) -> str:
    """The attribute list of a node."""
    text = cluster(g, within) if within else g.source
    m = re.search(rf"^\t+{re.escape(name)}{ATTRS}$", text, re.MULTILINE)
    assert m, f"no node {name}"
    return m.group(1)


def edges(g: Graph, tail: str | None = None, head: str | None = None) -> list[tuple[str, str, str]]:
    found = re.findall(rf"^\t+(\w+) -> (\w+){ATTRS}$", g.source, re.MULTILINE)
    return [e for e in found if (tail is None or e[0] == tail) and (head is None or e[1] == head)]


def red_edges(g: Graph) -> list[tuple[str, str, str]]:
    return [e for e in edges(g) if 'color="#d93025"' in e[2] and "dotted" not in e[2]]
