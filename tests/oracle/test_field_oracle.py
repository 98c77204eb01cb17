"""Field programs (`field_programs.py`: scalar, vector and matrix fields, `qd.root.dense` layouts,
struct-for loops, template fields, fields read in `qd.func`s, host access, gradients) compared with
the real quadrants, and qdlab's own paths compared with each other bit for bit: the default split,
the whole kernel (`per_offload=False`) and `split_carried=False`."""

from __future__ import annotations

import json
import subprocess
import sys
import traceback
from pathlib import Path
from typing import Any

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import field_programs

NAMES = list(field_programs.PROGRAMS)
MODES = {
    "default": {},
    "whole_kernel": {"per_offload": False},
    "no_carry": {"split_carried": False},
}
_RESULTS: dict[str, dict[str, Any]] = {}


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    probe = subprocess.run(
        [sys.executable, "-c", "import quadrants"], check=False, capture_output=True, timeout=120
    )
    if probe.returncode != 0:
        pytest.skip("reference implementation unavailable: `import quadrants` failed")
    out = tmp_path_factory.mktemp("field_oracle") / "reference.npz"
    proc = subprocess.run(
        [sys.executable, str(HERE / "run_field_reference.py"), str(out)],
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if not out.exists():
        pytest.fail(f"run_field_reference.py wrote nothing (rc={proc.returncode}):\n{proc.stderr}")
    with np.load(out) as npz:
        errors = json.loads(str(npz["__errors__"]))
        outputs: dict[str, dict] = {}
        for key in npz.files:
            if key != "__errors__":
                name, part = key.split("/", 1)
                outputs.setdefault(name, {})[part] = npz[key]
    return {"outputs": outputs, "errors": errors}


def qdlab_results(mode: str) -> dict[str, Any]:
    if mode not in _RESULTS:
        import qdlab

        field_programs.qd = qdlab
        results: dict[str, Any] = {}
        for name, fn in field_programs.PROGRAMS.items():
            qdlab.init(arch=qdlab.cpu, **MODES[mode])
            try:
                results[name] = {k: np.asarray(v) for k, v in fn().items()}
            except Exception:  # noqa: BLE001 - reported by the program's own test
                results[name] = traceback.format_exc()
        _RESULTS[mode] = results
    return _RESULTS[mode]


def got(mode: str, name: str) -> dict[str, np.ndarray]:
    value = qdlab_results(mode)[name]
    if isinstance(value, str):
        pytest.fail(f"qdlab ({mode}) raised on {name}:\n{value}")
    return value


@pytest.mark.process
@pytest.mark.parametrize("name", NAMES)
def test_matches_quadrants(name: str, reference: dict[str, Any]) -> None:
    assert name not in reference["errors"], reference["errors"].get(name)
    want = reference["outputs"][name]
    mine = got("default", name)
    assert sorted(mine) == sorted(want)
    for key, ref in want.items():
        actual = mine[key]
        assert actual.shape == ref.shape, f"{name}/{key}: {actual.shape} != {ref.shape}"
        if ref.dtype.kind in "biu":
            np.testing.assert_array_equal(actual, ref, err_msg=f"{name}/{key}")
        else:
            np.testing.assert_allclose(actual, ref, rtol=1e-5, atol=1e-6, err_msg=f"{name}/{key}")


@pytest.mark.parametrize("mode", ["whole_kernel", "no_carry"])
@pytest.mark.parametrize("name", NAMES)
def test_paths_bit_identical(name: str, mode: str) -> None:
    default, other = got("default", name), got(mode, name)
    assert sorted(default) == sorted(other)
    for key in default:
        assert default[key].dtype == other[key].dtype
        assert np.array_equal(default[key], other[key], equal_nan=True), f"{name}/{key} ({mode})"
