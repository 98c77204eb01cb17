"""Property test: random kernels give identical results split (with and without the interface buffer) and
whole-kernel, and match NumPy."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import qdlab as qd

from program_gen import FLOAT_ARRAYS, INT_ARRAYS, Program, load, programs

CHECKED = {"programs": 0, "split": 0, "fallback": 0, "interface": 0}


def run_program(p: Program, folder) -> None:
    kernel, reference = load(p, folder)
    rng = np.random.default_rng(len(p.kernel_lines) * 7919 + p.n)
    ints = [rng.integers(-50, 50, p.n).astype(np.int32) for _ in INT_ARRAYS]
    floats = [rng.uniform(-4, 4, p.n).astype(np.float32) for _ in FLOAT_ARRAYS]
    k = int(rng.integers(-9, 9))
    results = []
    for per_offload, split_carried in ((True, True), (False, True), (True, False)):
        qd.init(arch=qd.cpu, offline_cache=False, per_offload=per_offload, random_seed=7,
                split_carried=split_carried)
        args = [a.copy() for a in ints + floats]
        with np.errstate(all="ignore"):
            kernel(*args, k)
        results.append(args)
        if per_offload and split_carried:
            report = qd.explain(kernel)
            CHECKED["split" if report.mode == "per_offload" else "fallback"] += 1
            CHECKED["interface"] += bool(report.interface)
    for split_arr, whole_arr, reference_split in zip(*results):
        np.testing.assert_array_equal(split_arr, whole_arr)
        np.testing.assert_array_equal(reference_split, whole_arr)
    if not p.uses_random:
        args = [a.copy() for a in ints + floats]
        with np.errstate(all="ignore"):
            reference(*args, k)
        for got, want in zip(results[0], args):
            np.testing.assert_array_equal(got, want)
    CHECKED["programs"] += 1


@settings(max_examples=int(os.environ.get("QDLAB_PROGRAMS", "300")), deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                 HealthCheck.data_too_large])
@given(p=programs())
def test_split_equals_whole_equals_numpy(p: Program, tmp_path_factory) -> None:
    run_program(p, tmp_path_factory.mktemp("gen", numbered=True))


@pytest.mark.slow
@settings(max_examples=10_000, deadline=None, suppress_health_check=list(HealthCheck))
@given(p=programs(max_statements=9))
def test_split_equals_whole_equals_numpy_10k(p: Program, tmp_path_factory) -> None:
    run_program(p, tmp_path_factory.mktemp("gen", numbered=True))


def teardown_module() -> None:
    print(f"\nrandom programs checked: {CHECKED}")
