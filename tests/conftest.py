"""The suite's processes share one compile server of their own (`qdlab/compiler/codegen/server.py`),
in a directory made for this run, and it leaves when the run ends (its socket is removed)."""

from __future__ import annotations

import os
import shutil
import tempfile


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
