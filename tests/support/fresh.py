"""A fresh process: `main.py` of a folder run with the folder's own cache, its last line of output
read as JSON (what the cross-process cache tests compare)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def run_main(folder: Path, **extra: str) -> list:
    """`extra`: more environment variables for the process."""
    env = dict(
        os.environ, QDLAB_CACHE_DIR=str(folder / "cache"), PYTHONDONTWRITEBYTECODE="1", **extra
    )
    out = subprocess.run(
        [sys.executable, "main.py"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[-1])
