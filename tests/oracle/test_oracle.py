"""Differential tests: qdlab must compute what the reference implementation (quadrants) computes.

Why this module exists: the kernels in ``kernels.py`` cover the Quadrants P0 language subset.
The reference outputs come from ``run_reference.py`` run once per session in a subprocess
(quadrants and qdlab/llvmlite each bundle LLVM and must never share a process).  qdlab then runs
the same cases in this process and is compared: integers exactly, floats with
``rtol=1e-5, atol=1e-6`` (transcendentals may differ in the last bits).  A second test checks that
qdlab gives bit-identical results with ``per_offload=False`` and with the default setting.

qdlab runs every case of a mode in one batch (one ``qdlab.init`` per mode), recording any
exception per case so that each parametrized test reports its own failure.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

pytestmark = pytest.mark.process

HERE = Path(__file__).resolve().parent


def _load_harness() -> ModuleType:
    spec = importlib.util.spec_from_file_location("qdlab_oracle_harness", HERE / "harness.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


harness = _load_harness()
CASE_NAMES: list[str] = harness.case_names()
RTOL = 1e-5
ATOL = 1e-6
REFERENCE_TIMEOUT_S = 600


# ----------------------------------------------------------------------------- reference side


@pytest.fixture(scope="session")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Reference outputs per case, from quadrants in a subprocess (skip if not installed)."""
    probe = subprocess.run(
        [sys.executable, "-c", "import quadrants"],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if probe.returncode != 0:
        last = (probe.stderr.strip().splitlines() or ["?"])[-1]
        pytest.skip(f"reference implementation unavailable: `import quadrants` failed ({last})")
    out = tmp_path_factory.mktemp("oracle") / "reference.npz"
    proc = subprocess.run(
        [sys.executable, str(HERE / "run_reference.py"), str(out)],
        check=False,
        capture_output=True,
        text=True,
        timeout=REFERENCE_TIMEOUT_S,
    )
    if not out.exists():
        tail = proc.stderr[-4000:]
        pytest.fail(f"run_reference.py wrote no output (rc={proc.returncode}):\n{tail}")
    with np.load(out) as npz:
        per_case = harness.unflatten(npz)
        errors = json.loads(str(npz["__errors__"]))
        names = json.loads(str(npz["__cases__"]))
    return {"outputs": per_case, "errors": errors, "names": names}


# ----------------------------------------------------------------------------- qdlab side

_QDLAB_RESULTS: dict[str, dict[str, Any]] = {}


def _qdlab_results(mode: str) -> dict[str, Any]:
    """Run every case on qdlab in ``mode`` ("default" or "whole_kernel"); cached per session.

    Values are output dicts, or a traceback string when the case raised.
    """
    if mode in _QDLAB_RESULTS:
        return _QDLAB_RESULTS[mode]
    import qdlab

    if mode == "default":
        qdlab.init(arch=qdlab.cpu)
    else:
        qdlab.init(arch=qdlab.cpu, per_offload=False)
    kernels = harness.load_kernels(qdlab, f"oracle_kernels_qdlab_{mode}")
    results: dict[str, Any] = {}
    for case in kernels.CASES:
        try:
            results[case.name] = harness.run_case(qdlab, case)
        except Exception:  # noqa: BLE001 - reported by the case's own test
            results[case.name] = traceback.format_exc()
    _QDLAB_RESULTS[mode] = results
    return results


def _get(results: dict[str, Any], name: str, who: str) -> dict[str, np.ndarray]:
    value = results.get(name)
    if value is None:
        pytest.fail(f"{who}: case {name!r} did not run")
    if isinstance(value, str):
        pytest.fail(f"{who} raised on case {name!r}:\n{value}")
    return value


# ----------------------------------------------------------------------------- tests


def test_case_list_matches_reference(reference: dict[str, Any]) -> None:
    """The statically parsed case list is exactly what the reference ran."""
    assert reference["names"] == CASE_NAMES


@pytest.mark.parametrize("name", CASE_NAMES)
def test_matches_reference(name: str, reference: dict[str, Any]) -> None:
    if name in reference["errors"]:
        pytest.fail(f"reference (quadrants) raised on {name!r}:\n{reference['errors'][name]}")
    want = reference["outputs"][name]
    got = _get(_qdlab_results("default"), name, "qdlab")
    assert sorted(got) == sorted(want), f"output keys differ: {sorted(got)} vs {sorted(want)}"
    for key, ref in want.items():
        actual = np.asarray(got[key])
        msg = f"{name}/{key}"
        assert actual.shape == ref.shape, f"{msg}: shape {actual.shape} != {ref.shape}"
        if ref.dtype.kind in "biu":
            assert actual.dtype.kind in "biu", f"{msg}: expected integer, got {actual.dtype}"
            np.testing.assert_array_equal(actual, ref, err_msg=msg)
        else:
            np.testing.assert_allclose(actual, ref, rtol=RTOL, atol=ATOL, err_msg=msg)
        if key != "ret":
            assert actual.dtype == ref.dtype, f"{msg}: dtype {actual.dtype} != {ref.dtype}"


@pytest.mark.usefixtures("reference")  # the whole module skips without quadrants
@pytest.mark.parametrize("name", CASE_NAMES)
def test_per_offload_bit_identical(name: str) -> None:
    default = _get(_qdlab_results("default"), name, "qdlab (default)")
    whole = _get(_qdlab_results("whole_kernel"), name, "qdlab (per_offload=False)")
    assert sorted(default) == sorted(whole)
    for key in default:
        a, b = np.asarray(default[key]), np.asarray(whole[key])
        assert a.dtype == b.dtype, f"{name}/{key}: dtype {a.dtype} != {b.dtype}"
        equal_nan = a.dtype.kind in "fc"
        assert np.array_equal(a, b, equal_nan=equal_nan), (
            f"{name}/{key}: per_offload=False differs from default\n{a!r}\n{b!r}"
        )
