"""Graphs render to SVG inline, say what to install without `dot`, and stay fast at 50
constructs."""

from __future__ import annotations

import dataclasses
import re
import time

import graphviz
import pytest

import qdlab as qd
from qdlab.viz import construct_graph, edit_graph, slice_graph
from qdlab.viz.render import have_dot

pytestmark = pytest.mark.process

needs_dot = pytest.mark.skipif(
    not have_dot(), reason="graphviz `dot` is not installed (apt-get install graphviz)"
)


@needs_dot
def test_svg_has_a_cluster_per_construct(K) -> None:
    g = construct_graph(K.three_loops)
    bundle = g._repr_mimebundle_()
    assert bundle["text/plain"].startswith("construct graph of `three_loops`")
    svg = bundle["image/svg+xml"]
    assert svg == g._repr_svg_()
    for c in range(3):
        assert f"<title>cluster_c{c}</title>" in svg
        assert f"construct {c} · " in svg
    assert "k = s" not in svg and "n = x.shape[0]" in svg


@needs_dot
def test_every_graph_kind_renders(K, E) -> None:
    E.v1.compile()
    E.v2.compile()
    for g in (slice_graph(K.shared_scale, 1), edit_graph(E.v2), construct_graph(K.running_total)):
        page = g.html()
        assert page.startswith('<div class="qdlab-graph"') and "</svg>" in g.svg()
        assert 'width="100%"' in page and "max-width:" in page  # scaled to the output's width
        assert "data-act='zoom-in'" in page


@needs_dot
def test_graphs_fit_the_output_width(K, many) -> None:
    """The construct graph stacks its clusters (left to right: definitions, then constructs), so
    it is about as wide for 50 constructs as for 3; the HTML form scales it to the output's width
    and keeps the natural width as its maximum."""

    def width(svg: str) -> float:
        return float(re.search(r'width="([\d.]+)pt"', svg).group(1))

    g = construct_graph(K.three_loops)
    bundle = g._repr_mimebundle_()
    assert bundle["text/html"] == g.html() and "image/svg+xml" in bundle
    assert f'data-natural="{width(g.svg()) * 4 / 3:.0f}px"' in bundle["text/html"]
    fifty = construct_graph(qd.explain(many.many_loops)).svg()
    assert width(fifty) < 1.5 * width(g.svg())


def test_missing_dot_shows_the_install_command_and_the_dot_text(K, monkeypatch) -> None:
    monkeypatch.setattr(graphviz.backend.dot_command, "DOT_BINARY", "qdlab-no-such-dot")
    g = construct_graph(K.shared_scale)
    assert g.svg() is None and not have_dot()
    bundle = g._repr_mimebundle_()
    assert "image/svg+xml" not in bundle
    for text in (bundle["text/plain"], bundle["text/html"]):
        assert "apt-get install graphviz" in text and "subgraph cluster_c1" in text
    assert repr(g) == f"<{g.title}>"


@needs_dot
def test_fifty_constructs_render_in_under_a_second(many) -> None:
    report = qd.explain(many.many_loops)
    assert len(report.constructs) == 50
    start = time.perf_counter()
    svg = construct_graph(report).svg()
    seconds = time.perf_counter() - start
    assert svg is not None and svg.count("<title>cluster_c") == 50
    assert seconds < 1.0, f"50-construct graph took {seconds:.2f} s"


WIDE = dataclasses.make_dataclass(
    "Wide", [(f"member_{i}", qd.types.NDArray[qd.f32, 1]) for i in range(800)]
)


@qd.kernel
def wide(s: WIDE):
    for i in s.member_0:
        s.member_0[i] += 1.0


@needs_dot
def test_a_kernel_with_a_signature_longer_than_dot_takes_renders() -> None:
    """Graphviz refuses a quoted string over 16384 bytes; a Genesis kernel's signature (every struct
    member a parameter) is longer, and the kernel node's tooltip held all of it."""
    wide(WIDE(*[qd.ndarray(qd.f32, (4,)) for _ in range(800)]))
    assert len(qd.explain(wide).signature) > 16384
    assert "</svg>" in construct_graph(wide).svg()
