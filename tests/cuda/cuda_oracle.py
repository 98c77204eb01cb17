"""Loads the oracle corpus (`tests/oracle/kernels.py`) for the CUDA tests, which reuse its kernels
and cases."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ORACLE = Path(__file__).resolve().parents[1] / "oracle"


def load_harness() -> ModuleType:
    spec = importlib.util.spec_from_file_location("qdlab_oracle_harness", ORACLE / "harness.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod
