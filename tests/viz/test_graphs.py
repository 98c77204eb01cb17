"""Construct, slice and edit graphs, asserted on their DOT text."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from viz_dot import cluster, clusters, edges, node, red_edges

import qdlab as qd
import qdlab.host.state
from qdlab.compiler.report.explain import InterfaceSlot
from qdlab.viz import construct_graph, edit_graph, slice_graph

COMPILED, REUSED, WHOLE = 'color="#f29900"', 'color="#188038"', 'color="#80868b"'


def test_shared_definition_is_recomputed_into_both_loops(K) -> None:
    g = construct_graph(K.shared_scale)
    report = qd.explain(K.shared_scale)
    assert clusters(g) == ["cluster_c0", "cluster_c1"]
    for c in (0, 1):
        body = cluster(g, f"cluster_c{c}")
        status = report.constructs[c].status
        assert {"compiled": COMPILED, "reused": REUSED}[status] in body and f"· {status}" in body
        assert "recomputed" in node(g, f"c{c}_s1", within=f"cluster_c{c}")
        assert "k = s * 0.5" in node(g, f"c{c}_s1")
        assert "line 16" in node(g, f"c{c}_s1")  # where the copy comes from: no edge across
        assert not edges(g, "s1", f"c{c}_s1")  # the graph (a long edge would widen it)
        assert edges(g, f"c{c}_s1", f"s{3 + c}"), "the loop uses the recomputed copy"
    assert (
        "k = s * 0.5" in node(g, "s1")
        and "subgraph" not in g.source.split("s1 [")[0].split("\n")[-1]
    )
    assert not red_edges(g) and "fallback" not in clusters(g)
    assert "legend_compiled" in g.source and "legend_reused" in g.source


@pytest.mark.process  # runs dot
def test_constructs_stack_top_down_in_source_order(many) -> None:
    """One column: the parameters' node, then construct 0, 1, 2... each below the one before
    (dot placed them side by side, in the order it liked), the parameters each construct reads
    in its label instead of an edge from the kernel's node to each of them."""
    g = construct_graph(qd.explain(many.many_loops))
    assert "rankdir=TB" in g.source
    svg = g.svg()
    tops = {
        int(m.group(1)): float(m.group(2))
        for m in re.finditer(
            r"<title>cluster_c(\d+)</title>.*?<path[^>]*d=\"M[\d.-]+,(-?[\d.]+)", svg, re.DOTALL
        )
    }
    assert sorted(tops) == list(range(50))
    ys = [tops[k] for k in range(50)]
    assert ys == sorted(ys), "each construct below the one before"
    assert "reads x, o" in cluster(g, "cluster_c0")
    inside = {
        n for c in clusters(g) for n in re.findall(r"^\t+(\w+) \[", cluster(g, c), re.MULTILINE)
    }
    assert not [e for e in edges(g, "s0") if e[1] in inside and "invis" not in e[2]]
    width = float(re.search(r'<svg width="([\d.]+)pt', svg).group(1))
    assert width < 600, f"as wide as one construct, not {width:.0f} pt"


def test_dot_text_is_the_same_every_time(K) -> None:
    assert (
        construct_graph(K.three_loops).source == construct_graph(qd.explain(K.three_loops)).source
    )


def test_three_constructs_with_if(K) -> None:
    g = construct_graph(K.three_loops)
    assert clusters(g) == ["cluster_c0", "cluster_c1", "cluster_c2"]
    assert "construct 2 · if · lines 30-31 · " in cluster(g, "cluster_c2")
    assert "c2_s5" in cluster(g, "cluster_c2") and edges(g, "c2_s5", "s6")


def test_reused_constructs_get_their_own_colour(E) -> None:
    E.v1.compile()
    E.v2.compile()
    report = qd.explain(E.v2)
    assert report.constructs[0].status == "reused"
    statuses = [replace(c, status=s) for c, s in zip(report.constructs, ("reused", "compiled"))]
    g = construct_graph(replace(report, constructs=statuses))
    assert REUSED in cluster(g, "cluster_c0") and "· reused" in cluster(g, "cluster_c0")
    assert COMPILED in cluster(g, "cluster_c1") and "· compiled" in cluster(g, "cluster_c1")


@pytest.mark.parametrize(
    "name, code, offender, blocker",
    [
        ("running_total", "carried_value", "out[i] = total", "total += x[i]"),
        ("stale_snapshot", "overwritten_reread", "first = a[0]", "a[i] = 0.0"),
        ("grad_snapshot", "gradient_alias", "g = a.grad[0]", "b.grad[i] = 0.0"),
    ],
)
def test_fallback_with_a_blocker_draws_a_red_edge(K, name, code, offender, blocker) -> None:
    g = construct_graph(getattr(K, name))
    report = qd.explain(getattr(K, name))
    assert report.fallback.code == code
    [(tail, head, attrs)] = red_edges(g)
    assert f"label={code}" in attrs
    assert 'color="#d93025"' in node(g, tail) and 'color="#d93025"' in node(g, head)
    lines = {s.index: s.lines for s in report.statements}
    assert lines[int(head[1:])][0] <= report.fallback.lineno <= lines[int(head[1:])][1]
    assert lines[int(tail[1:])][0] <= report.fallback.blocker.lineno <= lines[int(tail[1:])][1]
    note = node(g, "fallback")
    assert f"fallback: {code}" in note and offender in note and "shape=note" in note
    assert blocker in report.fallback.blocker.source_line
    assert all(WHOLE in cluster(g, c) for c in clusters(g)) and "whole kernel" in g.source


@pytest.mark.parametrize(
    "name, offender",
    [("shared_draw", "r = qd.random()"), ("ticket", "old = qd.atomic_add(c[0], 1)")],
)
def test_repeated_effect_marks_every_use(K, name, offender) -> None:
    g = construct_graph(getattr(K, name))
    red = red_edges(g)
    assert len(red) == 2 and all("label=repeated_effect" in e[2] for e in red)
    assert len({tail for tail, _, _ in red}) == 1
    assert offender in node(g, red[0][0]) and 'color="#d93025"' in node(g, red[0][0])
    assert len({head for _, head, _ in red}) == 2


def test_concurrent_region_points_at_the_with_line(K) -> None:
    g = construct_graph(K.concurrent)
    assert clusters(g) == ["cluster_c0", "cluster_c1"]
    [(tail, head, attrs)] = red_edges(g)
    assert (tail, head) == ("fallback", "fallback_at") and "label=concurrent_region" in attrs
    assert "with qd.stream_parallel():" in node(g, "fallback_at")


def test_diagnostic_mode(K, tmp_path) -> None:
    qd.init(
        arch=qd.cpu,
        offline_cache=False,
        dump_cfg=True,
        debug_dump_path=str(tmp_path),
        split_carried=False,
    )
    k = qd.kernel(K.shared_scale.fn)
    g = construct_graph(k)
    assert "fallback: diagnostic_mode" in node(g, "fallback")
    assert "control-flow-graph dump" in node(g, "fallback")
    assert len(clusters(g)) == 2 and "legend_fallback" in g.source


def test_interface_slots_are_edges_between_clusters(K) -> None:
    report = qd.explain(K.shared_scale)
    report.interface = [InterfaceSlot("total", "f32", 0, 0, [1], "carried_value", 18)]
    g = construct_graph(report)
    [(_, _, attrs)] = [e for e in edges(g) if "lhead" in e[2]]
    assert "ltail=cluster_c0" in attrs and "lhead=cluster_c1" in attrs
    assert "total: f32 @0" in attrs and "carried_value" in attrs


def test_real_interface_slots(K) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, split_carried=True)
    k = qd.kernel(K.running_total.fn)
    g = construct_graph(k)
    [(_, _, attrs)] = [e for e in edges(g) if "lhead" in e[2]]
    assert "ltail=cluster_c0" in attrs and "lhead=cluster_c1" in attrs
    assert "total: f32" in attrs and "carried_value" in attrs


def test_slice_graph_runs_from_parameters_to_effects(K) -> None:
    g = slice_graph(K.three_loops, 2)
    assert re.findall(r"arg_\w+(?= \[)", g.source) == ["arg_x", "arg_y", "arg_z"]
    body = cluster(g, "cluster_c2")
    assert "recomputed" in node(g, "s1") and "n = x.shape[0]" in node(g, "s1")
    assert "recomputed" not in node(g, "s6") and "s3" not in body and "s4" not in body
    assert edges(g, "arg_x", "s1") and edges(g, "s1", "s5") and edges(g, "s5", "s6")
    assert edges(g, "arg_z", "s6") and not edges(g, "arg_y", "s6")
    with pytest.raises(IndexError, match="no construct 7"):
        slice_graph(K.three_loops, 7)


def test_slice_graph_of_a_fallback_kernel(K) -> None:
    g = slice_graph(K.running_total, 1)
    assert "total = 0.0" in node(g, "s1") and edges(g, "s3", "s5")


def test_edit_graph(E) -> None:
    qdlab.host.state.history.pop("edited", None)
    for v in (E.v1, E.v2, E.v3, E.v4):
        v.compile()
        changes = re.findall(r"label=(\w+)", " ".join(e[2] for e in edges(edit_graph(v))))
        if v is E.v1:
            assert changes == [] and "previous compile: none" in edit_graph(v).source
        elif v is E.v2:
            assert changes == ["unchanged", "edited"]
        elif v is E.v3:
            assert changes == ["dependency", "unchanged"]
            assert "recompiled: a dependency changed" in node(edit_graph(v), "e_l0")
        else:
            assert changes == ["unchanged"]  # two unchanged constructs, folded into one node
            assert "2 unchanged constructs" in node(edit_graph(v), "qd_expand_l0")
            full = edit_graph(v, collapse=False)
            assert re.findall(r"label=(\w+)", " ".join(e[2] for e in edges(full))) == [
                "unchanged",
                "unchanged",
            ]
            assert "\nnew" in node(edit_graph(v), "e_l2")
            assert edit_graph(v).expanded.source == full.source


def test_edit_graph_removed_construct(E) -> None:
    E.v4.compile()
    E.v3.compile()
    g = edit_graph(E.v3)
    assert "e_p2" in g.source and not edges(g, "e_p2")
    assert "1 removed" in g.title
