"""Programs written for Quadrants, run on Quadrants and on qdlab, each in a process of its own
(both bundle LLVM): every line they print must be the same. The programs (`programs/`) pick the
implementation from `QD_IMPL`; one that reads `QD_WHOLE` runs on qdlab's whole-kernel path too
(`qd.init(per_offload=False)`)."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.process

PROGRAMS = sorted((Path(__file__).parent / "programs").glob("*.py"))
WHOLE = [p for p in PROGRAMS if "QD_WHOLE" in p.read_text()]
ROOT = Path(__file__).resolve().parents[2]


@functools.cache
def run(program: Path, impl: str, whole: bool = False) -> list[str]:
    env = dict(os.environ, QD_IMPL=impl, PYTHONPATH=str(ROOT), QD_WHOLE="1" if whole else "")
    out = subprocess.run(
        [sys.executable, str(program)],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return [line for line in out.stdout.splitlines() if not line.startswith("[Quadrants]")]


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_prints_what_quadrants_prints(program: Path) -> None:
    probe = subprocess.run([sys.executable, "-c", "import quadrants"], check=False)
    if probe.returncode != 0:
        pytest.skip("quadrants is not installed")
    assert run(program, "qdlab") == run(program, "quadrants")


@pytest.mark.parametrize("program", WHOLE, ids=[p.stem for p in WHOLE])
def test_the_whole_kernel_path_prints_what_quadrants_prints(program: Path) -> None:
    probe = subprocess.run([sys.executable, "-c", "import quadrants"], check=False)
    if probe.returncode != 0:
        pytest.skip("quadrants is not installed")
    assert run(program, "qdlab", whole=True) == run(program, "quadrants")
