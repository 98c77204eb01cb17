"""The SplitVisualizer widget: selection, highlighted lines, tab contents, refresh after a
recompile."""

from __future__ import annotations

import gc
import re

import qdlab as qd
import qdlab.state
from qdlab.viz import SplitVisualizer
from qdlab.viz.widget import TABS, _live


def lines_of_kind(view: SplitVisualizer, kind: str) -> list[int]:
    return [int(n) for n in re.findall(rf"qd-line qd-{kind}' data-line='(\d+)'", view.source.value)]


def test_selecting_a_construct_changes_lines_and_tabs(K) -> None:
    view = SplitVisualizer(K.three_loops)
    assert view.selector.value == 0 and len(view.selector.options) == 3
    assert view.highlighted == {"own": [26, 27], "slice": [25]}
    assert lines_of_kind(view, "own") == [26, 27] and lines_of_kind(view, "slice") == [25]
    ir0, llvm0, cache0 = view.contents("IR"), view.contents("LLVM IR"), view.contents("cache")
    view.select(2)
    assert view.highlighted == {"own": [30, 31], "slice": [25, 26]}
    assert lines_of_kind(view, "own") == [30, 31]
    assert view.contents("IR") != ir0 and "construct 2 after the split" in view.contents("IR")
    assert "if " in view.contents("IR") and view.contents("LLVM IR") != llvm0
    assert view.contents("cache") != cache0
    assert qd.explain(K.three_loops).constructs[2].cache_key in view.contents("cache")
    assert "slice of construct 2" in view.contents("graph")
    assert "assembly" in view.contents("assembly")
    view.close()


def test_tabs_fill_when_shown(K) -> None:
    view = SplitVisualizer(K.shared_scale)
    assert view.panes["graph"].value and not view.panes["assembly"].value
    view.tabs.selected_index = TABS.index("assembly")
    assert view.panes["assembly"].value
    view.select(1)
    assert "assembly" not in view._stale and "IR" in view._stale
    view.close()


def test_graph_tab_selects_on_click(K) -> None:
    view = SplitVisualizer(K.shared_scale)
    graph = view.contents("graph")
    assert "qdlab-construct-graph" in graph and "onclick=" in graph and "cluster_c" in graph
    assert "qdlab-split-visualizer" in view._dom_classes
    view.close()


def test_fallback_tab_explains_and_suggests_a_rewrite(K) -> None:
    view = SplitVisualizer(K.stale_snapshot)
    text = view.contents("fallback")
    assert "overwritten_reread" in text and "line 45" in text and "first = a[0]" in text
    assert (
        "Blocked by line 47" in text and "how to make it splittable" in text and "snap[0]" in text
    )
    assert lines_of_kind(view, "fallback") == [45, 47]
    assert "compiled whole" in view.header.value
    assert "whole kernel" in view.contents("IR") and "no cache entry of its own" in view.contents(
        "cache"
    )
    view.close()


def test_split_kernel_has_no_fallback(K) -> None:
    view = SplitVisualizer(K.shared_scale)
    assert "No compile-time fallback" in view.contents("fallback")
    view.close()


def test_refreshes_after_recompile_and_keeps_the_selection(E) -> None:
    qdlab.state.history.pop("edited", None)
    E.v1.compile()
    view = SplitVisualizer(E.v1)
    view.select(1)
    assert "x[i] + 1.0" in view.source.value and "edited" in view.header.value
    E.v2.compile()
    assert view.report is qd.explain(E.v2) and view.selector.value == 1
    assert "x[i] + 3.0" in view.source.value and "edited (recompiled)" in view.contents("cache")
    assert "split into 2 constructs" in view.header.value
    view.select(0)
    assert "<td>reused</td>" in view.contents("cache") and "unchanged (reused)" in view.contents(
        "cache"
    )
    assert "edits since the previous compile" in view.contents("graph")
    E.v4.compile()
    assert len(view.selector.options) == 3
    view.close()


def test_a_closed_visualizer_is_dropped(K, E) -> None:
    view = SplitVisualizer(E.v1)
    assert view in _live
    view.close()
    assert view not in _live
    seen = []
    view.refresh = seen.append  # type: ignore[method-assign]
    E.v2.compile()
    assert seen == []
    del view
    gc.collect()
    assert not any(v.report.kernel == "edited" for v in _live)
