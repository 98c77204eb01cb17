"""The SplitVisualizer widget: selection, highlighted lines, tab contents, refresh after a
recompile."""

from __future__ import annotations

import gc
import re

import pytest

import qdlab as qd
import qdlab.host.state
from qdlab.viz import SplitVisualizer
from qdlab.viz.widget import TABS, _live

pytestmark = pytest.mark.process


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
    qdlab.host.state.history.pop("edited", None)
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


def test_code_tabs_colour_rows_by_source_line(K) -> None:
    view = SplitVisualizer(K.three_loops)  # construct 0: own lines 26-27, slice line 25
    source = re.findall(r"data-line='(\d+)' data-src='(\d+)'", view.source.value)
    assert {int(a) for a, b in source} == {25, 26, 27} and all(a == b for a, b in source)
    for tab in ("LLVM IR", "assembly"):
        html = view.contents(tab)
        rows = {int(n) for n in re.findall(r"class='qd-row' data-src='(\d+)'", html)}
        assert rows and rows <= {25, 26, 27} and 27 in rows, tab
        assert "data-act='copy'" in html and "type='search'" in html
    asm = view.contents("assembly")
    assert "data-act='all'" in asm and ".cfi_startproc" in asm  # all lines, behind the toggle
    filtered = asm.split("<div class='qd-full'>")[0]
    assert ".cfi_startproc" not in filtered and ".loc" not in filtered
    assert "onmouseover=" in view.source.value and "onmouseover=" in asm
    # the optimized LLVM IR is not a part of the IR as emitted: no "236 of 89 lines"
    llvm = view.contents("LLVM IR")
    assert re.search(r"<span>\d+ lines \(\d+ as emitted\)</span>", llvm), llvm[:600]
    assert re.search(r"<span>(\d+) of (\d+) lines</span>", asm)
    shown, every = map(int, re.search(r"<span>(\d+) of (\d+) lines</span>", asm).groups())
    assert shown <= every
    assert "class='qd-key'" in view.source.value  # the key under the source (wraps, not cut)
    view.close()


def test_diff_tab_and_recompiled_construct_selected(E) -> None:
    qdlab.host.state.history.pop("edited", None)
    E.v1.compile()
    view = SplitVisualizer(E.v1)
    assert "first compile" in view.contents("diff")
    view.select(0)
    E.v2.compile()  # edits construct 1: the refresh selects it
    assert view.selector.value == 1
    diff = view.contents("diff")
    assert "qd-add" in diff and "3.0" in diff and "edited (recompiled)" in diff
    assert "(edited (" not in diff and "previous compile: edited (recompiled)." in diff
    assert "LLVM IR (optimized)" in diff and "assembly (filtered)" in diff
    view.select(0)
    assert "unchanged since the previous compile" in view.contents("diff")
    view.close()


def test_header_matches_the_summary_and_shows_run_times(K) -> None:
    import numpy as np

    view = SplitVisualizer(K.three_loops)
    r = qd.explain(K.three_loops)
    spent = sum(c.compile_ms for c in r.constructs if c.status == "compiled")
    assert f"{spent:.1f} ms compiling" in view.header.value  # the summary's figure
    assert "not measured" in view.contents("cache")
    x, y, z = (np.ones(64, np.float32) for _ in range(3))
    qd.profile(K.three_loops, x, y, z, repeat=3)
    assert "qd.profile" in view.header.value and "median over 3 launches" in view.contents("cache")
    view.close()


def test_snapshot_for_pages_without_the_widget_javascript(K) -> None:
    view = SplitVisualizer(K.three_loops)
    bundle = view._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle and "text/plain" in bundle
    snap = bundle["text/html"]
    assert "needs a running kernel" in snap and "<svg" in snap and "IR of construct 0" in snap
    view.close()


def test_fifty_construct_widget_opens_in_under_a_second(many) -> None:
    import time

    qd.explain(many.many_loops)
    start = time.perf_counter()
    view = SplitVisualizer(many.many_loops)
    seconds = time.perf_counter() - start
    assert len(view.selector.options) == 50 and "cluster_c49" in view.contents("graph")
    assert seconds < 1.0, f"opening the 50-construct visualizer took {seconds:.2f} s"
    start = time.perf_counter()
    view.select(30)
    view.contents("assembly")
    assert time.perf_counter() - start < 1.0
    view.close()


def test_exported_html_keeps_a_snapshot_of_the_widget(K) -> None:
    import nbformat

    from qdlab.demo import with_snapshots

    view = SplitVisualizer(K.three_loops)
    bundle = view._repr_mimebundle_()
    plain = nbformat.v4.new_output("display_data", {"text/plain": "x"})
    widget = nbformat.v4.new_output("display_data", bundle)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("v", outputs=[plain, widget])])
    out = with_snapshots(nb).cells[0].outputs
    assert len(out) == 3 and out[2].data["text/html"].startswith("<div class='qdlab-offline'>")
    assert "needs a running kernel" in out[2].data["text/html"] and len(nb.cells[0].outputs) == 2
    view.close()
