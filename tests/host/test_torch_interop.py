"""`to_torch` / `from_torch` of fields (scalar, vector, matrix, struct, 0-d, u1) and ndarrays
(laid out or not), compared with the reference's on the same declarations: dtype, shape and
values of what `to_torch` gives, and what `from_torch` stores. Needs torch (skipped without it);
the reference runs in a process of its own (both bundle LLVM)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import qdlab

PROGRAM = textwrap.dedent(
    """
    import json, sys
    import importlib
    import numpy as np
    import torch
    qd = importlib.import_module(sys.argv[1])
    qd.init(arch=qd.cpu, offline_cache=False) if sys.argv[1] == "quadrants" else qd.init(
        arch=qd.cpu)
    out = {}

    def record(name, t):
        out[name] = [str(t.dtype), list(t.shape), t.detach().cpu().numpy().tolist()]

    x = qd.field(qd.f32, shape=(3, 2))
    x.from_torch(torch.arange(6, dtype=torch.float64).reshape(3, 2) / 4)
    record("scalar", x.to_torch())
    v = qd.Vector.field(3, qd.i32, shape=4)
    v.from_torch(torch.arange(12, dtype=torch.int64).reshape(4, 3) - 5)
    record("vector", v.to_torch())
    m = qd.Matrix.field(2, 2, qd.f64, shape=(2,))
    m.fill(1.25)
    record("matrix", m.to_torch())
    z = qd.field(qd.i16, shape=())
    z[None] = -7
    record("zero_d", z.to_torch())
    b = qd.field(qd.u1, shape=3)
    b.from_torch(torch.tensor([True, False, True]))
    record("bool", b.to_torch())
    s = qd.types.struct(a=qd.f32, p=qd.types.vector(2, qd.i32)).field(shape=3)
    s.from_torch({"a": torch.tensor([0.5, 1.5, 2.5]), "p": torch.ones(3, 2, dtype=torch.int32)})
    d = s.to_torch()
    record("struct.a", d["a"])
    record("struct.p", d["p"])
    nd = qd.ndarray(qd.f32, shape=(2, 3))
    nd.from_torch(torch.arange(6, dtype=torch.float32).reshape(2, 3))
    record("ndarray", nd.to_torch())
    lay = qd.tensor(qd.i32, (2, 3), layout=(1, 0))

    @qd.kernel
    def fill(t: qd.Tensor):
        for i, j in qd.ndrange(2, 3):
            t[i, j] = i * 10 + j

    fill(lay)
    record("laid_out", lay.to_torch())
    vnd = qd.Vector.ndarray(2, qd.f32, shape=(3,))
    vnd.from_torch(torch.arange(6, dtype=torch.float32).reshape(3, 2))
    record("vector_ndarray", vnd.to_torch())
    print("RESULT" + json.dumps(out))
    """
)


def results(impl: str, where: Path) -> dict:
    program = where / "torch_program.py"  # a file: kernels' source is read from it
    program.write_text(PROGRAM)
    proc = subprocess.run(
        [sys.executable, str(program), impl],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(x for x in proc.stdout.splitlines() if x.startswith("RESULT"))
    return json.loads(line[len("RESULT") :])


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict:
    probe = subprocess.run([sys.executable, "-c", "import quadrants"], check=False)
    if probe.returncode != 0:
        pytest.skip("quadrants is not installed")
    return results("quadrants", tmp_path_factory.mktemp("torch_reference"))


@pytest.mark.process
def test_to_torch_and_from_torch_match_the_reference(reference: dict, tmp_path: Path) -> None:
    mine = results("qdlab", tmp_path)
    assert sorted(mine) == sorted(reference)
    for name, want in reference.items():
        assert mine[name] == want, name


def test_to_torch_is_a_copy_and_moves_to_a_device() -> None:
    qdlab.init(arch=qdlab.cpu)
    x = qdlab.field(qdlab.f32, shape=4)
    x.fill(2.0)
    t = x.to_torch(device="cpu")
    t[0] = 9.0
    assert x[0] == 2.0
    a = qdlab.ndarray(qdlab.i32, shape=(2,))
    a.from_torch(torch.tensor([3, 4]))
    u = a.to_torch()
    u[1] = 0
    assert a[1] == 4
    np.testing.assert_array_equal(a.to_numpy(), [3, 4])
