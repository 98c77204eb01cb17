"""Loads the oracle corpus (`tests/oracle/kernels.py`) for the CUDA tests, which reuse its kernels
and cases, and compares a GPU run's results with the CPU's."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

ORACLE = Path(__file__).resolve().parents[1] / "oracle"
RTOL, ATOL = 1e-6, 1e-7
"""Floats on the GPU against the CPU: libdevice and the host's libm may differ in the last bit of a
transcendental; everything else is IEEE arithmetic without contraction on both."""


def load_harness() -> ModuleType:
    spec = importlib.util.spec_from_file_location("qdlab_oracle_harness", ORACLE / "harness.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def assert_same(want: dict, got: dict, label: str) -> None:
    """`got` (the GPU's outputs by name) equals `want` (the CPU's): integers exactly, floats within
    RTOL/ATOL, NaN where NaN."""
    assert sorted(got) == sorted(want), f"{label}: outputs {sorted(got)} != {sorted(want)}"
    for key, ref in want.items():
        ref, actual = np.asarray(ref), np.asarray(got[key])
        assert actual.shape == ref.shape, f"{label}/{key}: shape {actual.shape} != {ref.shape}"
        if ref.dtype.kind in "biu":
            np.testing.assert_array_equal(actual, ref, err_msg=f"{label}/{key}")
        else:
            np.testing.assert_allclose(actual, ref, rtol=RTOL, atol=ATOL, err_msg=f"{label}/{key}")


def fail(what: str, trace: str) -> None:
    """Fail with the error's last line first (what `bench/gpu_check.sh`'s outcome list shows), then
    the whole traceback or stderr."""
    last = (trace.strip().splitlines() or ["?"])[-1]
    pytest.fail(f"{what}: {last}\n{trace}", pytrace=False)
