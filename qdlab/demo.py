"""`python -m qdlab.demo`: run notebooks 01 and 02 headless, save them as HTML, print the
edit-one-loop table.

The README's first command ends here, so a new checkout shows in one terminal what per-construct
caching does: notebook 02's 30-loop kernel after one loop was edited, one construct compiled and 29
reused. The notebooks run in a real Jupyter kernel (nbclient) against an empty, temporary construct
cache, so every number is a cold start. The HTML files keep the widget state; viewing the widgets
loads their JavaScript from a CDN (unpkg), and everything else in the files works offline.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

DEMO = ("01_quickstart", "02_per_offload_caching")
EDIT_TAG = "edit-one-loop"
"""The tag of notebook 02's cell that edits one loop; its summary is the table printed at the
end."""


def notebooks_dir() -> Path:
    """`notebooks/` of the checkout this qdlab was installed from (editable install)."""
    return Path(__file__).resolve().parent.parent / "notebooks"


def execute(
    path: Path, cache_dir: str, timeout_s: int = 300, kernel_name: str = "python3"
) -> object:
    """Run a notebook top to bottom in a Jupyter kernel (`python3`: this interpreter's); return the
    executed notebook.

    The kernel talks to this process over Unix sockets in a private temporary directory (IPC
    transport) where the platform has them, not over loopback TCP: nobody else on the machine can
    connect, and ipykernel does not warn "Kernel is running over TCP without encryption" on the
    terminal for each notebook."""
    import nbclient  # lazy: the demo alone runs notebooks
    import nbformat  # lazy: the demo alone runs notebooks
    from jupyter_client.manager import KernelManager  # lazy: as nbclient

    nb = nbformat.read(path, as_version=4)
    env = dict(os.environ, QDLAB_CACHE_DIR=cache_dir)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    with tempfile.TemporaryDirectory(prefix="qdlab-kernel-") as sockets:  # mode 0700
        ipc = {"transport": "ipc", "ip": os.path.join(sockets, "k")} if os.name == "posix" else {}
        km = KernelManager(kernel_name=kernel_name, **ipc)
        client = nbclient.NotebookClient(
            nb,
            km=km,
            timeout=timeout_s,
            store_widget_state=True,
            resources={"metadata": {"path": str(path.parent)}},
        )
        try:
            client.execute(env=env)
        finally:  # nbclient leaves a kernel it was given running: it would outlive the demo and
            if km.has_kernel:  # say "Parent appears to have exited" on the terminal
                km.shutdown_kernel(now=False)
    return nb


def errors(nb: object) -> list[str]:
    """`ename: evalue` of every error output in an executed notebook."""
    return [
        f"{o.ename}: {o.evalue}"
        for cell in nb.cells
        if cell.cell_type == "code"  # type: ignore[attr-defined]
        for o in cell.get("outputs", [])
        if o.output_type == "error"
    ]


WIDGET = "application/vnd.jupyter.widget-view+json"
HIDE_WHEN_LIVE = (
    "<script>(function (me) { var box = me.parentElement, n = 0, t = setInterval(function () {"
    " var cell = box.closest('.jp-Cell') || document;"
    " if (cell.querySelector('.qdlab-split-visualizer')) box.style.display = 'none';"
    " if (box.style.display === 'none' || ++n > 60) clearInterval(t); }, 500);"
    " })(document.currentScript);</script>"
)
"""Hides a widget's static snapshot once the live widget has rendered beside it."""


def with_snapshots(nb: object) -> object:
    """A copy of `nb` in which every widget output that carries a static snapshot (`text/html`
    beside the widget view: the visualizer's) is followed by that snapshot as an output of its own.
    nbconvert writes only the widget view of such an output, and when the widgets' JavaScript
    cannot be fetched (offline, a blocked CDN) the page would show an empty `Out[n]:`; the snapshot
    then stays, and hides itself once the live widget renders."""
    import copy  # lazy: the demo alone exports HTML

    import nbformat  # lazy: the demo alone exports HTML

    nb = copy.deepcopy(nb)
    for cell in nb.cells:  # type: ignore[attr-defined]
        outputs = []
        for o in cell.get("outputs", []):
            outputs.append(o)
            data = o.get("data", {})
            if WIDGET in data and "text/html" in data:
                snapshot = f"<div class='qdlab-offline'>{data['text/html']}{HIDE_WHEN_LIVE}</div>"
                outputs.append(nbformat.v4.new_output("display_data", {"text/html": snapshot}))
        if "outputs" in cell:
            cell.outputs = outputs
    return nb


def write_html(nb: object, path: Path) -> None:
    from nbconvert import HTMLExporter  # lazy: the demo alone exports HTML

    body, _ = HTMLExporter().from_notebook_node(with_snapshots(nb))
    path.write_text(body, encoding="utf-8")


def edit_table(nb: object) -> str:
    """The `text/plain` summary that the cell tagged `edit-one-loop` displayed."""
    for cell in nb.cells:  # type: ignore[attr-defined]
        if EDIT_TAG in cell.get("metadata", {}).get("tags", []):
            for o in cell.get("outputs", []):
                text = o.get("data", {}).get("text/plain")
                if text:
                    return text
    raise LookupError(f"no output in the cell tagged {EDIT_TAG!r}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m qdlab.demo", description=" ".join(__doc__.split("\n\n")[0].split())
    )
    parser.add_argument(
        "--notebooks", type=Path, default=notebooks_dir(), help="folder holding the notebooks"
    )
    parser.add_argument(
        "--out", type=Path, default=Path("build"), help="where the HTML files go (default: build)"
    )
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    executed = {}
    with tempfile.TemporaryDirectory(prefix="qdlab-demo-") as cache_dir:
        for name in DEMO:
            path = args.notebooks / f"{name}.ipynb"
            if not path.exists():
                print(
                    f"demo: {path} not found (run from a qdlab checkout, or pass --notebooks DIR)",
                    file=sys.stderr,
                )
                return 2
            t0 = time.perf_counter()
            print(f"running {path.name} ...", flush=True)
            nb = executed[name] = execute(path, cache_dir)
            write_html(nb, args.out / f"{name}.html")
            problems = errors(nb)
            print(
                f"  {time.perf_counter() - t0:.1f} s, {len(problems)} errors"
                + "".join(f"\n  {p}" for p in problems)
            )
            if problems:
                return 1
    print(
        "\nNotebook 02, after editing one loop of the 30-loop kernel and running the cell again:\n"
    )
    print(edit_table(executed["02_per_offload_caching"]))
    print("\nHTML (widgets load their JavaScript from a CDN):")
    for name in DEMO:
        print(f"  {(args.out / f'{name}.html').resolve()}")
    print(
        "Open the notebooks themselves (the set-up installs JupyterLab): "
        ".venv/bin/jupyter lab notebooks/"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
