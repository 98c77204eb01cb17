"""A new process whose constructs are all cached links them with qdlab's own loader
(`codegen/elf.py`) and never imports llvmlite's binding (issue 18's all-hit start)."""

from __future__ import annotations

import pytest
from fresh import run_main

from qdlab.compiler.codegen import elf

pytestmark = [
    pytest.mark.process,
    pytest.mark.skipif(not elf.supported(), reason="the loader takes x86-64 Linux objects"),
]

MAIN = """
import json, sys
import numpy as np
import qdlab as qd

qd.init(arch=qd.cpu)


@qd.kernel
def k(x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1]) -> qd.f32:
    for i in x:
        y[i] = qd.sin(x[i]) * 1.5 + qd.exp(-x[i])
    s = 0.0
    for i in x:
        s += qd.sqrt(qd.abs(y[i])) + qd.atan2(x[i], 3.0)
    return s


x = qd.ndarray(qd.f32, (4096,))
x.from_numpy(np.linspace(-3, 3, 4096, dtype=np.float32))
y = qd.ndarray(qd.f32, (4096,))
s = k(x, y)
print(json.dumps([float(s), y.to_numpy().tobytes().hex(), "llvmlite.binding" in sys.modules]))
"""


def test_all_hit_process_links_without_llvmlite(tmp_path) -> None:
    """A new process whose constructs are all cached never imports llvmlite's binding, and gives
    the bits of the process that compiled them and of one linking with MCJIT."""
    (tmp_path / "main.py").write_text(MAIN)
    mine = {"QDLAB_ELF_LOADER": "1"}  # whatever the environment of the tests says
    here = {"QDLAB_COMPILE_SERVER": "0"}  # compiled in the process (no server from other tests)
    first, hit = run_main(tmp_path, **mine, **here), run_main(tmp_path, **mine)
    mcjit = run_main(tmp_path, QDLAB_ELF_LOADER="0")
    assert first[2] and not hit[2] and mcjit[2]
    assert first[:2] == hit[:2] == mcjit[:2]
