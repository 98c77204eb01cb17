"""Float results do not depend on which compile tier ran (`compiler/tiers.py`), nor on `debug`:
the same bits from the quick objects, the optimised ones and a debug compile, by construction.

The math library's functions are calls LLVM's optimiser may not rewrite or fold (`powf(x, 2.0)`
became `x * x` in the optimised objects only, `powf(8.0, x)` `exp2f(3 * x)`, `sinf(1.0)` a
constant), and the rewrites of `**` the reference makes are made in qdlab's own IR
(`passes/lower_powers.py`, a float to an integer power in `codegen/arith.py`), so both tiers see
them. The same kernel on the real `quadrants` gives the same bits (inputs chosen so that no result
is subnormal: the reference flushes those to zero)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from memo_kernels import load

import qdlab as qd
from qdlab.compiler.codegen import jit
from qdlab.compiler.runtime import tiers

POWERS = """
    import {lib} as qd

    @qd.kernel
    def powers(x: qd.types.NDArray[qd.{t}, 1], n: qd.types.NDArray[qd.i32, 1],
               y: qd.types.NDArray[qd.{t}, 2]):
        for i in range(x.shape[0]):
            y[0, i] = x[i] ** 2
            y[1, i] = x[i] ** -1.0
            y[2, i] = x[i] ** 2.0
            y[3, i] = x[i] ** 0.5
            y[4, i] = x[i] ** 3
            y[5, i] = x[i] ** -2
            y[6, i] = x[i] ** 1.5
            y[7, i] = x[i] ** n[i]
            y[8, i] = 8.0 ** x[i]
            y[9, i] = 0.5 ** x[i]
            y[10, i] = qd.sin(x[i]) + qd.exp(x[i]) * qd.log(qd.abs(x[i]))
            y[11, i] = qd.atan2(x[i], 0.75) - qd.tan(x[i]) * qd.cos(x[i])
            y[12, i] = qd.pow(x[i], 4.0) - qd.pow(x[i], x[i] * 0.5)
"""
ROWS = 13


def inputs(dtype: type) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(35)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.25, -3.0]
    x = np.concatenate([special, rng.uniform(-4, 4, 4096)]).astype(dtype)
    return x, rng.integers(-6, 7, x.size).astype(np.int32)


def run(kernel, dtype: type) -> np.ndarray:
    x, n = inputs(dtype)
    y = np.zeros((ROWS, x.size), dtype)
    with np.errstate(all="ignore"):
        kernel(x, n, y)
    return y


def bits(a: np.ndarray) -> np.ndarray:
    return a.view(f"u{a.itemsize}")


def fresh_powers(folder, t: str):
    return load(folder, POWERS.format(lib="qdlab", t=t)).powers


@pytest.mark.parametrize("t, dtype", [("f32", np.float32), ("f64", np.float64)])
def test_quick_optimised_and_debug_code_give_the_same_bits(tmp_path, monkeypatch, t, dtype):
    qd.init(arch=qd.cpu, offline_cache=False)
    tiers.hold = True  # the quick objects run and stay
    try:
        k = fresh_powers(tmp_path, t)
        quick = run(k, dtype)
        assert all(b.unit.fns.pending is not None for b in k.latest.built)
    finally:
        tiers.hold = False
        tiers.settle_all()
    np.testing.assert_array_equal(bits(run(k, dtype)), bits(quick))  # now the optimised ones
    monkeypatch.setenv("QDLAB_TIERED", "0")  # optimised before anything runs
    for debug in (False, True):
        qd.init(arch=qd.cpu, offline_cache=False, debug=debug)
        k = fresh_powers(tmp_path, t)
        got = run(k, dtype)
        assert all(b.unit.fns.pending is None for b in k.latest.built)
        np.testing.assert_array_equal(bits(got), bits(quick), err_msg=f"debug={debug}")


REFERENCE = """
import sys, json, importlib.util
import numpy as np
spec = importlib.util.spec_from_file_location("ref_powers", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
mod.qd.init(arch=mod.qd.cpu, offline_cache=False)
x = np.load(sys.argv[2]); n = np.load(sys.argv[3])
y = np.zeros(({rows}, x.size), x.dtype)
mod.powers(x, n, y)
np.save(sys.argv[4], y)
"""


@pytest.mark.process
@pytest.mark.parametrize("t, dtype", [("f32", np.float32), ("f64", np.float64)])
def test_powers_and_math_calls_give_the_reference_bits(tmp_path, t, dtype):
    if subprocess.run([sys.executable, "-c", "import quadrants"], check=False).returncode:
        pytest.skip("quadrants is not installed")
    x, n = inputs(dtype)
    source = tmp_path / "ref_powers.py"
    source.write_text(textwrap.dedent(POWERS.format(lib="quadrants", t=t)))
    for name, a in (("x", x), ("n", n)):
        np.save(tmp_path / f"{name}.npy", a)
    script = tmp_path / "ref.py"
    script.write_text(REFERENCE.format(rows=ROWS))
    subprocess.run(  # its own process: quadrants and llvmlite each bundle an LLVM
        [sys.executable, str(script), str(source), *(str(tmp_path / f"{a}.npy") for a in "xn")]
        + [str(tmp_path / "want.npy")],
        check=True,
        capture_output=True,
        timeout=600,
    )
    want = np.load(tmp_path / "want.npy")
    qd.init(arch=qd.cpu, offline_cache=False)
    got = run(fresh_powers(tmp_path, t), dtype)
    for row in range(ROWS):
        np.testing.assert_array_equal(bits(got[row]), bits(want[row]), err_msg=f"row {row}")


LIBM = """
    import qdlab as qd

    @qd.kernel
    def k(x: qd.types.NDArray[qd.f32, 1], m: qd.i32, y: qd.types.NDArray[qd.f32, 1]):
        c = 1.0
        for i in range(x.shape[0]):
            y[i] = qd.sin(c) + 2.0 ** float(m) + x[i] * x[i] + y[i]
"""


def test_llvm_keeps_every_math_call_and_contracts_nothing_at_either_level(tmp_path):
    """The optimised LLVM IR still calls `sinf(1.0)` (it folded it with its own arithmetic) and
    `exp2f` (it made `exp2(sitofp m)` an `ldexpf`); neither level fuses `x * x + y` into an FMA."""
    qd.init(arch=qd.cpu, offline_cache=False)
    k = load(tmp_path, LIBM).k
    y = np.zeros(4, np.float32)
    k(np.ones(4, np.float32), 3, y)
    np.testing.assert_allclose(y, np.sin(1.0) + 9.0, rtol=1e-6)
    stages = qd.explain(k).constructs[0].stages
    llvm, optimised = stages["llvm"](), stages["llvm_optimized"]()
    assert "@llvm.sin" not in llvm and "@llvm.pow" not in llvm and "@llvm.exp2" not in llvm
    assert "call float @sinf(float 1.000000e+00)" in optimised
    assert "@exp2f(" in optimised and "ldexp" not in optimised
    for asm in (jit.emit_assembly(llvm, tiers.QUICK), stages["asm"]()):
        assert "fmadd" not in asm
