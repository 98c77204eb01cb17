import os, sys, tempfile
import numpy as np
import qdlab as qd
qd.init(arch=qd.cpu, offline_cache=True, offline_cache_file_path=tempfile.mkdtemp())
src = ["@qd.kernel", "def kern(a: qd.types.NDArray[qd.f32, 1], k: qd.f32):"]
for j in range(20):
    src += [f"    for i in range(a.shape[0]):", f"        a[i] = a[i] * (k + {j + 1}) + {j}.5"]
path = os.path.join(tempfile.mkdtemp(), "kmod.py")
open(path, "w").write("import qdlab as qd\n" + "\n".join(src) + "\n")
sys.path.insert(0, os.path.dirname(path))
import kmod
a = np.ones(1000, np.float32)
kmod.kern(a, 1.0)
qd.sync()
