"""The suite's processes share one compile server of their own (`qdlab/compiler/codegen/server.py`),
in a directory made for this run, and it leaves when the run ends (its socket is removed).

A test that starts a process (a fresh Python, the reference, JupyterLab, Chromium, Redis) is marked
`process`, and `-m "not process"` is the fast loop: starting a process from a test without the mark
fails it, so the fast loop stays in-process. (qdlab's own compile pool forks; it is not a start.)"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "support"))  # helpers shared by the folders' tests


def pytest_configure(config) -> None:
    if "QDLAB_COMPILE_SERVER_DIR" not in os.environ:
        os.environ["QDLAB_COMPILE_SERVER_DIR"] = tempfile.mkdtemp(prefix="qdlab-test-server-")
        os.environ.setdefault("QDLAB_COMPILE_SERVER_IDLE_S", "300")
        config._qdlab_server_dir = os.environ["QDLAB_COMPILE_SERVER_DIR"]


def pytest_unconfigure(config) -> None:
    directory = getattr(config, "_qdlab_server_dir", None)
    if directory is not None:
        shutil.rmtree(directory, ignore_errors=True)  # its server leaves within a second
        os.environ["QDLAB_COMPILE_SERVER"] = "0"  # and this process starts none as it exits


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    with _processes_allowed(item):
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    with _processes_allowed(item):
        yield


class _processes_allowed:
    """Within an unmarked test's setup and call, `subprocess.Popen` (and so `subprocess.run`,
    asyncio's subprocesses, Jupyter's kernels, Playwright's browser) fails the test."""

    def __init__(self, item) -> None:
        self.marked = item.get_closest_marker("process") is not None
        self.name = item.nodeid

    def __enter__(self) -> None:
        if self.marked:
            return
        self.saved = subprocess.Popen.__init__
        name = self.name

        def refuse(popen, args, *rest, **kwargs):
            popen._child_created = False  # for its __del__
            raise AssertionError(
                f"{name} starts a process ({args!r}): mark it `@pytest.mark.process`"
            )

        subprocess.Popen.__init__ = refuse  # type: ignore[method-assign]

    def __exit__(self, *exc) -> None:
        if not self.marked:
            subprocess.Popen.__init__ = self.saved  # type: ignore[method-assign]
