"""Shared set-up of the visualizer tests: an in-memory cache per test, and kernels loaded from
files."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

import qdlab as qd

HERE = Path(__file__).parent


@pytest.fixture(autouse=True)
def fresh_qdlab() -> None:
    # The fallback drawings need the reference behaviour; test_real_interface_slots turns the
    # interface on.
    qd.init(arch=qd.cpu, offline_cache=False, split_carried=False)
    yield
    qd.init(arch=qd.cpu, offline_cache=False)


def load(path: Path, name: str) -> ModuleType:
    """Import a file of kernels (qdlab reads kernel source with `inspect`, so kernels live in
    files)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[name] = module
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


@pytest.fixture(scope="session")
def K() -> ModuleType:
    return load(HERE / "kernels.py", "qdlab_viz_test_kernels")


@pytest.fixture(scope="session")
def E() -> ModuleType:
    return load(HERE / "edits.py", "qdlab_viz_test_edits")


@pytest.fixture(scope="session")
def many(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    K = load(HERE / "kernels.py", "qdlab_viz_test_kernels")
    path = tmp_path_factory.mktemp("many") / "many_loops.py"
    path.write_text(K.many_loops_source(50))
    return load(path, "qdlab_viz_many_loops")
