"""`quadrants.lang.ast.ast_transformers.graph_api`: how a call spells a `qd.graph` construct
(`qd.graph.do_while` or the deprecated flat `qd.graph_do_while`), and the warning a flat spelling
gives. qdlab's frontend decides it (`compiler/frontend/graphs.py`)."""

from __future__ import annotations

from ....compiler.frontend.graphs import is_deprecated_spelling, matches, warn_if_deprecated

__all__ = ["is_deprecated_spelling", "matches", "warn_if_deprecated"]
