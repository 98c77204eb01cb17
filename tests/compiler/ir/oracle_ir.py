"""The IR of every oracle kernel (tests/oracle/kernels.py) for its case's arguments, without
codegen."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np

import qdlab as qd
from qdlab.compiler import ir, pipeline
from qdlab.host import state

ORACLE = Path(__file__).resolve().parents[2] / "oracle"


def _harness() -> ModuleType:
    name = "qdlab_oracle_harness"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ORACLE / "harness.py")
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
    return sys.modules[name]


def cases() -> list:
    harness = _harness()
    return list(harness.load_kernels(qd, "qdlab_oracle_kernels_ir").CASES)


def lower(case: object) -> ir.Kernel:
    """The kernel's IR straight from the frontend (before any pass), for its case's arguments."""
    harness = _harness()
    k = case.kernel  # type: ignore[attr-defined]
    rng = np.random.default_rng(harness.case_seed(case.name))  # type: ignore[attr-defined]
    args = case.make_inputs(rng)  # type: ignore[attr-defined]
    sig, _, templates = k.bind(tuple(harness.call_args(qd, case, args)), {})
    return pipeline.lower(k.spec(sig, templates), state.config(), None).kernel
