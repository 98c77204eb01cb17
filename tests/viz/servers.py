"""What the two browser tests share: their requirements, and a Jupyter server (Voilà or JupyterLab)
started on a free loopback port, waited for, and stopped."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest


def requirements(server: str) -> str | None:
    """Why the browser test of `server` (a module name) cannot run here, or None."""
    if shutil.which("chromium") is None:
        return (
            "Debian's chromium is not installed (apt-get install chromium; scripts/setup.sh does)"
        )
    if shutil.which("dot") is None:
        return "graphviz `dot` is not installed (apt-get install graphviz)"
    for module in ("playwright", server):
        try:
            __import__(module)
        except ImportError:
            return f"{module} is not installed (pip install {module}; it is in the dev extras)"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serve(
    module: str, args: list[str], root: Path, env: dict[str, str], wait_s: float
) -> Iterator[str]:
    """Run `python -m module --port=... *args` in `root` and yield its URL once `/api` answers."""
    port = free_port()
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "JUPYTER_PLATFORM_DIRS": "1",
        **env,
    }
    log_path = root / f"{module}.log"
    with log_path.open("w") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", module, "--no-browser", f"--port={port}", *args],
            cwd=root,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        url = f"http://127.0.0.1:{port}/"
        try:
            deadline = time.monotonic() + wait_s
            while True:
                try:
                    urllib.request.urlopen(url + "api", timeout=1)
                    break
                except urllib.error.HTTPError:
                    break
                except OSError:
                    if time.monotonic() > deadline or server.poll() is not None:
                        pytest.fail(f"{module} did not start:\n{log_path.read_text()[-3000:]}")
                    time.sleep(0.2)
            yield url
        finally:
            server.terminate()
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()
