"""The visualizer in a real browser: Voila serves a notebook, Debian's Chromium (driven by
Playwright) shows it.

Checks that the construct graph's SVG has a cluster per construct, that choosing another construct
(in the dropdown, or by clicking its cluster) changes the IR tab, and leaves a screenshot in
test-results/.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from servers import requirements, serve

pytestmark = [pytest.mark.process, pytest.mark.browser]

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "test-results"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
KERNELS = Path(__file__).with_name("kernels.py")
NOTEBOOK_CELLS = [
    (
        "import importlib.util\n"
        "import qdlab as qd\n"
        "qd.init(arch=qd.cpu, offline_cache=False)\n"
        f"spec = importlib.util.spec_from_file_location('viz_kernels', {str(KERNELS)!r})\n"
        "kernels = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(kernels)"
    ),
    "from qdlab.viz import SplitVisualizer\nSplitVisualizer(kernels.three_loops)",
]


@pytest.fixture
def voila_url(tmp_path: Path):
    missing = requirements("voila")
    if missing:
        pytest.skip(missing)
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in NOTEBOOK_CELLS])
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    path = tmp_path / "visualizer.ipynb"
    nbformat.write(nb, path)
    with serve(
        "voila",
        ["--Voila.ip=127.0.0.1", str(path)],
        tmp_path,
        {"JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime")},
        wait_s=20,
    ) as url:
        yield url


def test_visualizer_in_chromium(voila_url: str) -> None:
    from playwright.sync_api import expect, sync_playwright

    RESULTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            page.goto(voila_url, timeout=30_000)
            root = page.locator(".qdlab-split-visualizer")
            expect(root).to_be_visible(timeout=40_000)
            graph = root.locator(".qdlab-construct-graph svg").first
            expect(graph).to_be_visible(timeout=10_000)
            titles = graph.locator("g.cluster > title").all_text_contents()
            assert [t for t in titles if t.startswith("cluster_c")] == [
                "cluster_c0",
                "cluster_c1",
                "cluster_c2",
            ]
            page.screenshot(path=str(RESULTS / "viz-graph.png"), full_page=True)

            tab = root.locator(".lm-TabBar-tab", has_text="IR").first
            tab.click()
            ir = root.locator(".widget-html", has_text="after the split").first
            expect(ir).to_contain_text("construct 0 after the split", timeout=10_000)
            first = ir.inner_text()
            root.locator("select").select_option(
                label=root.locator("select option").nth(2).inner_text()
            )
            expect(ir).to_contain_text("construct 2 after the split", timeout=10_000)
            assert ir.inner_text() != first
            page.screenshot(path=str(RESULTS / "viz-ir.png"), full_page=True)

            root.locator(".lm-TabBar-tab", has_text="graph").first.click()
            expect(root.get_by_text("slice of construct 2", exact=True)).to_be_visible(
                timeout=10_000
            )
            root.locator(".qdlab-construct-graph svg").first.locator(
                "g.cluster:has(> title:text-is('cluster_c1')) text"
            ).first.click()
            expect(root.locator("select")).to_have_value(
                root.locator("select option").nth(1).get_attribute("value") or "", timeout=10_000
            )
            tab.click()
            expect(ir).to_contain_text("construct 1 after the split", timeout=10_000)
        finally:
            browser.close()
