"""The visualizer in JupyterLab 4 itself, at laptop size (1400x900, file browser open), driven by
Debian's Chromium through Playwright.

A notebook with the graphs, a profile and the widget, and notebooks 01-04, are opened in JupyterLab
and run there with Run All Cells. Checked: no output is wider than the output area; a folded edit
graph unfolds on a click; the widget keeps its size from tab to tab and its tab labels are whole;
selecting a construct outlines its cluster and updates the source, IR, LLVM IR, assembly and cache
tabs; hovering a source line highlights the assembly rows made from it, clicking it scrolls them
into view. The demo's HTML export, opened without the widgets' JavaScript, shows the snapshot.
Screenshots land in test-results/ (lab-*.png, export-offline.png).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import urllib.error
import urllib.request
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
SIX = """%%qdkernel --show graph
@qd.kernel
def six(x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1],
        z: qd.types.NDArray[qd.f32, 1], scale: qd.f32):
    for i in range(x.shape[0]):
        x[i] = 1.0
    for i in range(y.shape[0]):
        y[i] = x[i] * scale
    for i in range(z.shape[0]):
        z[i] = x[i] + y[i]
    for i in range(x.shape[0]):
        x[i] = z[i] * 3.0
    for i in range(y.shape[0]):
        y[i] = qd.sqrt(x[i]) + 4.0
    for i in range(z.shape[0]):
        z[i] = 5.0 * scale
"""
SETUP = "%load_ext qdlab\nimport numpy as np\nimport qdlab as qd\n"
CELLS = [
    SETUP + "qd.init(arch=qd.cpu, offline_cache=False)",
    SIX,
    SIX.replace("x[i] = z[i] * 3.0", "x[i] = z[i] * 7.0").replace("--show graph", "--show none"),
    "x, y, z = (np.ones(4096, np.float32) for _ in range(3))\nqd.profile(six, x, y, z, 2.0)",
    "from qdlab.viz import SplitVisualizer, edit_graph\nedit_graph(six)",
    "SplitVisualizer(six)",
]


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory):
    missing = requirements("jupyterlab")
    if missing:
        pytest.skip(missing)
    import nbformat

    root = tmp_path_factory.mktemp("lab")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(nb, root / "visualizer.ipynb")
    for name in ("01_quickstart", "02_per_offload_caching", "03_backward_slices", "04_fallbacks"):
        shutil.copy(ROOT / "notebooks" / f"{name}.ipynb", root / f"{name}.ipynb")
    env = {
        "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p),
        "JUPYTER_CONFIG_DIR": str(root / ".config"),
        "JUPYTER_RUNTIME_DIR": str(root / ".runtime"),
    }
    args = [
        "--allow-root",
        "--ServerApp.ip=127.0.0.1",
        "--IdentityProvider.token=",
        "--ServerApp.password=",
        "--ServerApp.disable_check_xsrf=True",  # the test's own POST/DELETE of sessions, kernels
        f"--ServerApp.root_dir={root}",
        f"--LabApp.workspaces_dir={root / '.workspaces'}",
        "--LabApp.news_url=",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    with serve("jupyterlab", args, root, env, wait_s=60) as url:
        yield url


TIMEOUT_MS = int(os.environ.get("QDLAB_LAB_TIMEOUT_MS", "600000"))
"""How long Run All may take (generous: the tests must pass beside CPU-bound work)."""
KERNEL = "Python 3 (ipykernel)"
"""The kernel chosen in JupyterLab's "Select Kernel" dialog when it asks (a slow kernel start)."""


def _start_session(lab: str, path: str) -> None:
    """Start the notebook's kernel (`python3`, named explicitly) through the server's sessions API
    before the page opens it: JupyterLab then attaches to that session instead of choosing a
    kernel itself, which on busy cores it did by asking in a "Select Kernel" dialog."""
    import json

    body = {"path": path, "name": path, "type": "notebook", "kernel": {"name": "python3"}}
    req = urllib.request.Request(
        lab + "api/sessions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    urllib.request.urlopen(req, timeout=120).close()  # the page waits for it to be idle


def _run_all(page, url: str) -> None:
    lab, path = url.split("/lab/workspaces/", 1)
    _start_session(lab + "/", path.split("/tree/", 1)[1].split("?")[0])
    page.set_default_timeout(120_000)
    page.goto(url, timeout=180_000)
    page.locator(".jp-Notebook").wait_for(timeout=180_000)
    _kernel_ready(page)
    # Run All marks every code cell queued ([*]) at once: a run that stopped after the first cell
    # (seen under heavy load: [1] then [ ]s, the kernel idle, no dialog) is clicked again
    started = """() => {
        const p = Array.from(document.querySelectorAll('.jp-CodeCell .jp-InputPrompt'));
        return p.length > 0 && p.every(e => /\\[(\\*|\\d+)\\]/.test(e.textContent)); }"""
    for _ in range(6):  # a click while the kernel is still starting can be lost: click again
        _kernel_ready(page)
        try:
            page.get_by_role("menuitem", name="Run", exact=True).click(timeout=30_000)
            page.get_by_role("menuitem", name="Run All Cells", exact=True).click(timeout=30_000)
            page.wait_for_function(started, timeout=30_000)
            break
        except Exception:  # noqa: BLE001 - playwright's TimeoutError (a dialog over the menu,
            page.keyboard.press("Escape")  # a lost click): try the menu again
    try:
        page.wait_for_function(  # every code cell has run: its prompt shows an execution count
            """() => {
                const p = Array.from(document.querySelectorAll('.jp-CodeCell .jp-InputPrompt'));
                return p.length > 0 && p.every(e => /\\[\\d+\\]/.test(e.textContent)); }""",
            timeout=TIMEOUT_MS,
            polling=500,
        )
    except Exception as e:  # say what the page showed, with a screenshot
        page.screenshot(path=str(RESULTS / "lab-not-run.png"), full_page=True)
        prompts = page.locator(".jp-CodeCell .jp-InputPrompt").all_text_contents()
        status = page.locator(".jp-Notebook-ExecutionIndicator").get_attribute("data-status")
        dialogs = page.locator(".jp-Dialog").all_inner_texts()
        failed = page.locator(
            ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.error']"
        ).all_inner_texts()
        raise AssertionError(
            f"not every cell ran: prompts {prompts}, kernel {status}, dialogs {dialogs}, "
            f"errors {failed}"
        ) from e
    _kernel_ready(page)
    page.wait_for_timeout(1500)
    _dismiss_dialogs(page)
    news = page.get_by_role("button", name="No", exact=True)  # JupyterLab's news question
    if news.count():
        news.first.click()


def _kernel_ready(page, timeout_s: float = 300) -> None:
    """Wait for the notebook's kernel to be idle, answering JupyterLab's dialogs on the way: its
    "Select Kernel" question (asked when the kernel is slow to start, as on busy cores) gets
    `KERNEL` chosen explicitly, its news question a No."""
    import time

    idle = page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']")
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        _dismiss_dialogs(page)
        if idle.count() and not page.locator(".jp-Dialog").count():
            return
        page.wait_for_timeout(500)
    raise AssertionError(f"the kernel was not idle within {timeout_s:.0f} s")


def _dismiss_dialogs(page) -> None:
    dialogs = page.locator(".jp-Dialog")
    for _ in range(3):
        if not dialogs.count():
            return
        dialog = dialogs.first
        text = dialog.inner_text()
        print("dialog:", text[:300].replace("\n", " | "))
        buttons = dialog.locator(".jp-Dialog-footer button")
        names = [buttons.nth(k).inner_text().strip() for k in range(buttons.count())]
        if "Select Kernel" in text:
            picker = dialog.locator("select")
            if picker.count():
                labels = picker.first.locator("option").all_inner_texts()
                chosen = next((x for x in labels if x.strip() == KERNEL), None)
                chosen = chosen or next(x for x in labels if x.startswith("Python 3"))
                picker.first.select_option(label=chosen)
            wanted: tuple[str, ...] = ("Select",)
        else:
            wanted = ("No", "Ok", "OK", "Dismiss")
        choice = next((n for n in wanted if n in names), None)
        if choice is None:
            page.keyboard.press("Escape")
        else:
            buttons.nth(names.index(choice)).click(force=True)
        page.wait_for_timeout(1000)


def _stop_kernels(url: str) -> None:
    """Shut down every session and kernel the server runs, so that the next notebook's starts
    alone (on two busy cores, kernels left running made JupyterLab ask which kernel to use)."""
    import json

    for what in ("sessions", "kernels"):
        with urllib.request.urlopen(url + f"api/{what}", timeout=30) as r:
            items = json.load(r)
        for k in items:
            req = urllib.request.Request(url + f"api/{what}/{k['id']}", method="DELETE")
            with contextlib.suppress(OSError):
                urllib.request.urlopen(req, timeout=30).close()


def _too_wide(page) -> list[str]:
    """Outputs whose content is wider than the output area (scrolls or is cut)."""
    return page.evaluate(
        """() => Array.from(document.querySelectorAll('.jp-OutputArea-output')).filter(
            o => o.scrollWidth > o.clientWidth + 2).map(o => o.className + ' ' + o.scrollWidth
            + ' > ' + o.clientWidth)"""
    )


def _text_heights(scope, selector: str) -> list[float]:
    """The rendered heights (px) of the SVG text elements under `selector` that are drawn (a
    hidden view's are 0), wherever they are scrolled to."""
    return scope.evaluate(
        """(root, sel) => Array.from(root.querySelectorAll(sel + ' text'))
            .map(t => t.getBoundingClientRect().height).filter(h => h > 0)""",
        selector,
    )


MEDIAN_PX, P10_PX = 11.0, 9.0
"""Graph text must be at least this high: at the median, and at the 10th percentile."""


def _readable(heights: list[float], where: str) -> None:
    """Assert the graph text of `where` is readable, and note its numbers in
    test-results/text-heights.txt."""
    import statistics

    assert heights, f"{where}: no graph text drawn"
    ordered = sorted(heights)
    median = statistics.median(ordered)
    p10 = ordered[int(0.1 * (len(ordered) - 1))]
    line = f"{where}: {len(ordered)} texts, median {median:.1f} px, p10 {p10:.1f} px"
    print(line)
    RESULTS.mkdir(exist_ok=True)
    with (RESULTS / "text-heights.txt").open("a") as f:
        f.write(line + "\n")
    assert median >= MEDIAN_PX and p10 >= P10_PX, line


def _page_scrolls_sideways(page) -> list[str]:
    """The notebook's scrolling panes that scroll sideways (an output wider than the page)."""
    return page.evaluate(
        """() => Array.from(document.querySelectorAll(
            '.jp-WindowedPanel-outer, .jp-Notebook, .jp-NotebookPanel, body'))
            .filter(e => e.scrollWidth > e.clientWidth + 2)
            .map(e => e.className + ' ' + e.scrollWidth + ' > ' + e.clientWidth)"""
    )


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    RESULTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


def test_widget_in_jupyterlab(lab: str, browser) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1400, "height": 900})
    _run_all(page, lab + "lab/workspaces/widget/tree/visualizer.ipynb?reset")
    expect(page.locator(".jp-DirListing")).to_be_visible()  # the file browser is open
    assert _too_wide(page) == []
    graphs = page.locator(".jp-OutputArea-output .qd-graph-view > div:not([hidden]) > svg")
    assert graphs.count() >= 2
    area = page.locator(".jp-OutputArea-output").first.bounding_box()["width"]
    widths = [graphs.nth(k).bounding_box()["width"] for k in range(graphs.count())]
    print(f"output area {area:.0f} px; graphs drawn {[round(w) for w in widths]} px wide")
    assert max(widths) <= area + 1
    assert _page_scrolls_sideways(page) == []
    out = page.locator(".jp-Notebook").first
    _readable(
        _text_heights(out, ".qdlab-graph:not(.qdlab-split-visualizer .qdlab-graph)"),
        "visualizer.ipynb graphs",
    )
    folded = page.locator(".qdlab-graph g.node[id^='qd_expand_l']")
    expect(folded.first).to_contain_text("unchanged constructs")
    edit = folded.first.locator("xpath=ancestor::div[contains(@class,'qdlab-graph')]")
    folded.first.click()  # unfolds: the drawing with every construct shows instead
    expect(
        edit.locator("div:not([hidden]) > svg g.node:has(> title:text-is('e_l0'))")
    ).to_be_visible()
    page.locator(".qdlab-graph").first.scroll_into_view_if_needed()
    page.screenshot(path=str(RESULTS / "lab-graphs.png"))

    root = page.locator(".qdlab-split-visualizer")
    root.scroll_into_view_if_needed()
    expect(root).to_be_visible(timeout=30_000)
    assert root.locator("select").input_value().startswith("construct 3 ")  # the recompiled one
    root.locator(".lm-TabBar-tab", has_text="graph").first.click()
    page.wait_for_timeout(500)
    _readable(_text_heights(root, ".widget-tab-contents .qdlab-graph"), "six: visualizer graph tab")
    titles = root.locator(".qdlab-construct-graph svg").first.locator("g.cluster > title")
    order = [t for t in titles.all_text_contents() if t.startswith("cluster_c")]
    assert order == [f"cluster_c{k}" for k in range(6)]
    box = root.bounding_box()
    assert box["width"] <= area + 1 and box["height"] <= 900 - 150
    sizes = set()
    for tab in ("graph", "IR", "LLVM IR", "assembly", "diff", "cache", "fallback"):
        root.locator(".lm-TabBar-tab", has_text=tab).first.click()
        page.wait_for_timeout(300)
        b = root.bounding_box()
        sizes.add((round(b["width"]), round(b["height"] / 20)))
        cut = root.evaluate(
            """r => Array.from(r.querySelectorAll('.lm-TabBar-tabLabel')).filter(
                l => l.scrollWidth > l.clientWidth + 1).map(l => l.textContent)"""
        )
        assert cut == [], f"tab labels cut: {cut}"
        # a pane's content wider than its pane is cut (the key under the source, a listing's
        # line count: "236 of 89 li")
        wider = root.evaluate(
            """r => Array.from(r.querySelectorAll('.widget-html-content')).filter(
                c => c.offsetWidth && c.getBoundingClientRect().width >
                c.parentElement.getBoundingClientRect().width + 1)
                .map(c => c.innerText.slice(0, 80))"""
        )
        assert wider == [], f"cut on the {tab} tab: {wider}"
        assert _too_wide(page) == []
    assert len(sizes) == 1, f"the widget changed size between tabs: {sizes}"

    root.locator(".lm-TabBar-tab", has_text="diff").first.click()
    expect(root.locator(".qd-add", has_text="7.0").first).to_be_visible()
    page.screenshot(path=str(RESULTS / "lab-diff.png"))

    root.locator("select").select_option(index=1)
    expect(root.locator(".qd-source .qd-own").first).to_contain_text("for i in range(y.shape[0])")
    root.locator(".lm-TabBar-tab", has_text="graph").first.click()
    expect(root.locator(".widget-tab-contents")).to_contain_text("slice of construct 1")
    stroke = root.locator("g[id='construct_1'] > g > a > path").first.evaluate(
        "p => getComputedStyle(p).stroke"
    )
    assert stroke == "rgb(26, 115, 232)"  # the selected construct is outlined
    for tab, text in (
        ("IR", "construct 1 after the split"),
        ("LLVM IR", "LLVM IR of construct 1"),
        ("assembly", "assembly of construct 1"),
        ("cache", "median over 10 launches"),
    ):
        root.locator(".lm-TabBar-tab", has_text=tab).first.click()
        expect(root.locator(".widget-tab-contents")).to_contain_text(text, timeout=10_000)

    root.locator(".lm-TabBar-tab", has_text="assembly").first.click()
    line = root.locator(".qd-source [data-src='8']")
    line.hover()
    asm = root.locator(".qd-listing", has_text="assembly of construct 1")
    hot = asm.locator(".qd-filtered .qd-row.qd-hot")
    expect(hot.first).to_be_visible()
    assert hot.count() >= 1
    assert set(hot.evaluate_all("rows => rows.map(r => r.dataset.src)")) == {"8"}
    line.click()  # pins the line and scrolls its first assembly row into view
    pinned = asm.locator(".qd-filtered .qd-row.qd-pinned").first
    expect(pinned).to_be_in_viewport()
    page.screenshot(path=str(RESULTS / "lab-widget.png"))
    root.screenshot(path=str(RESULTS / "lab-widget-only.png"))
    page.close()
    _stop_kernels(lab)


@pytest.mark.parametrize(
    "name", ["01_quickstart", "02_per_offload_caching", "03_backward_slices", "04_fallbacks"]
)
def test_notebooks_fit(lab: str, browser, name: str) -> None:
    """The notebooks with graphs, run in JupyterLab: every output fits the output area (04's
    gradient-alias graph, with its offending line and red note, was 2,723 px wide)."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    _run_all(page, lab + f"lab/workspaces/{name}/tree/{name}.ipynb?reset")
    assert page.locator(".jp-OutputArea-output .qdlab-graph svg").count() >= 1
    assert page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.error']")
    assert errors.count() == 0, errors.first.inner_text()
    assert _too_wide(page) == [] and _page_scrolls_sideways(page) == []
    _readable(_text_heights(page.locator(".jp-Notebook").first, ".qdlab-graph"), name)
    page.screenshot(path=str(RESULTS / f"lab-{name}.png"), full_page=True)
    page.close()
    _stop_kernels(lab)


def test_exported_html_shows_a_snapshot_offline(tmp_path: Path, browser) -> None:
    """The demo's HTML export with the widgets' JavaScript out of reach (this browser reaches no
    CDN): the visualizer's output shows its static snapshot instead of an empty `Out[n]:`."""
    missing = requirements("jupyterlab")
    if missing:
        pytest.skip(missing)
    import nbformat

    from qdlab import demo

    cells = [CELLS[0], SIX.replace("--show graph", "--show none"), CELLS[-2], CELLS[-1]]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    path = tmp_path / "export.ipynb"
    nbformat.write(nb, path)
    executed = demo.execute(path, str(tmp_path / "cache"), timeout_s=120)
    demo.write_html(executed, tmp_path / "export.html")
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto((tmp_path / "export.html").as_uri())
    page.wait_for_timeout(2000)
    snapshot = page.locator(".qdlab-offline")
    assert snapshot.is_visible() and snapshot.locator("svg").count() >= 1
    assert "needs a running kernel" in snapshot.inner_text()
    snapshot.scroll_into_view_if_needed()
    page.screenshot(path=str(RESULTS / "export-offline.png"))
    page.close()
