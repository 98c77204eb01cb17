"""Shared fixtures of the CUDA tests: the oracle corpus loaded against qdlab; and, for
`bench/gpu_check.sh`, each test's outcome written down as it finishes."""

from __future__ import annotations

import os
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


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """With `QDLAB_TEST_OUTCOMES` set, one line per test (outcome, seconds, test, first error line)
    is appended to that file as the test finishes: a run its time limit cuts short still says what
    passed and what failed (the JUnit XML is written only at the end)."""
    path = os.environ.get("QDLAB_TEST_OUTCOMES")
    if not path or (report.passed and report.when != "call"):
        return
    if report.skipped and isinstance(report.longrepr, tuple):  # (file, line, reason)
        why = str(report.longrepr[2])
    else:
        lines = report.longreprtext.strip().splitlines() if report.failed else []
        errors = [line[1:].strip() for line in lines if line.startswith("E ")]
        errors = [e for e in errors if e] or lines[-1:]
        why = " ... ".join(errors[:1] + errors[-1:] if len(errors) > 1 else errors)
    why = " ".join(why.split())[:300]
    with open(path, "a") as f:
        f.write(f"{report.outcome}\t{report.duration:.2f}\t{report.nodeid}\t{why}\n")
