"""Shared fixtures of the CUDA tests: the oracle corpus loaded against qdlab."""

from __future__ import annotations

from types import ModuleType

import pytest
from cuda_oracle import load_harness


@pytest.fixture(scope="session")
def harness() -> ModuleType:
    return load_harness()


@pytest.fixture(scope="session")
def oracle_kernels(harness: ModuleType) -> ModuleType:
    import qdlab

    qdlab.init(arch=qdlab.cpu)
    return harness.load_kernels(qdlab, "oracle_kernels_qdlab_cuda_tests")
