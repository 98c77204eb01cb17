"""Where the Genesis tests find a Python with Genesis, and the scenes of `bench/genesis_scenes.py`
(one definition, run by the benchmark and by the slow tests)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def genesis_python() -> str | None:
    """`QDLAB_GENESIS_PYTHON`, or this Python, whichever can import genesis and torch."""
    for python in (os.environ.get("QDLAB_GENESIS_PYTHON"), sys.executable):
        if (
            python
            and subprocess.run(
                [python, "-c", "import genesis, torch"],
                capture_output=True,
                check=False,
                timeout=300,
            ).returncode
            == 0
        ):
            return python
    return None


def scenes_module() -> object:
    """`bench/genesis_scenes.py`, loaded by its path (bench/ is not a package)."""
    if "genesis_scenes" not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            "genesis_scenes", ROOT / "bench" / "genesis_scenes.py"
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.path.insert(0, str(ROOT / "bench"))  # its `from _common import ...`
        spec.loader.exec_module(module)
        sys.modules["genesis_scenes"] = module
    return sys.modules["genesis_scenes"]
