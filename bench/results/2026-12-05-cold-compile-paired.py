"""One new process: import qdlab and compile a 20-loop kernel into a new cache directory (what
`farm-bench` timed for `2026-12-05-compile-cache-issue36.md`)."""

import importlib
import sys
import tempfile
from pathlib import Path

import numpy as np

import qdlab as qd

qd.init(arch=qd.cpu, offline_cache=True, offline_cache_file_path=tempfile.mkdtemp())
src = ["import qdlab as qd", "@qd.kernel", "def kern(a: qd.types.NDArray[qd.f32, 1], k: qd.f32):"]
for j in range(20):
    src += ["    for i in range(a.shape[0]):", f"        a[i] = a[i] * (k + {j + 1}) + {j}.5"]
folder = Path(tempfile.mkdtemp())
(folder / "kmod.py").write_text("\n".join(src) + "\n")
sys.path.insert(0, str(folder))
kmod = importlib.import_module("kmod")
kmod.kern(np.ones(1000, np.float32), 1.0)
qd.sync()
