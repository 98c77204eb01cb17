"""Every notebook in `notebooks/`, executed at most once per test session in a real Jupyter kernel
(nbclient)."""

from __future__ import annotations

import time
from pathlib import Path

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))

EXECUTED: dict[str, tuple[object, float]] = {}
"""name -> (executed notebook, seconds it took), filled on first use of each notebook."""


def run(name: str, tmp: Path) -> tuple[object, float]:
    from qdlab.demo import execute

    if name not in EXECUTED:
        t0 = time.perf_counter()
        nb = execute(NOTEBOOKS[0].parent / name, str(tmp / "cache"), timeout_s=120)
        EXECUTED[name] = (nb, time.perf_counter() - t0)
    return EXECUTED[name]
