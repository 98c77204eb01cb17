"""`quadrants.lang._template_mapper.__builtins__["__debug__"] = False` (what Genesis' `gs.init`
does): kernels compiled afterwards take `__debug__` from there, as Quadrants' name lookup does,
and the construct cache keeps the two answers apart across processes (a cold process with the
other setting must not load the first one's binary)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.process

PROGRAM = """
import sys
import numpy as np
import quadrants as qd

if sys.argv[1] == "off":
    qd.lang._template_mapper.__builtins__["__debug__"] = False
qd.init(arch=qd.cpu)


@qd.kernel
def checked(a: qd.types.NDArray[qd.i32, 1]):
    for i in range(1):
        if __debug__:
            a[0] = 1
        else:
            a[0] = 2


a = np.zeros(1, np.int32)
checked(a)
print(a[0])
"""


def test_debug_switch_reaches_kernels_and_the_cache_keeps_them_apart(tmp_path: Path) -> None:
    script = tmp_path / "prog.py"
    script.write_text(PROGRAM)
    env = {**os.environ, "QDLAB_CACHE_DIR": str(tmp_path / "cache")}
    got = []
    for mode in ("on", "off", "on", "off"):
        proc = subprocess.run(
            [sys.executable, "-m", "qdlab.run", str(script), mode],
            check=False,
            capture_output=True,
            text=True,
            timeout=300,
            env=env,
        )
        assert proc.returncode == 0, proc.stderr
        got.append(proc.stdout.strip())
    assert got == ["1", "2", "1", "2"]
