"""Sanity-check the reference outputs (``quadrants``) of oracle cases against plain NumPy.

Why this script exists: the oracle only proves qdlab == quadrants.  This script checks that the
reference itself computes what we believe the Quadrants semantics are (documented in
``docs/lang/``), so that a surprising reference result is noticed rather than silently copied.
It imports quadrants, so run it on its own: ``python tests/oracle/check_reference.py``.
Not every case has an expectation here; the ones that do cover each semantic rule we rely on.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness

Expect = Callable[[list[Any]], dict[str, Any]]


def _pyfloordiv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.floor_divide(a, b)


def _round_half_away(x: np.ndarray) -> np.ndarray:
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def _collatz(x: int) -> int:
    n = 0
    while x != 1 and n < 1000:
        x = x // 2 if x % 2 == 0 else 3 * x + 1
        n += 1
    return n


def _clamp_idx(i: np.ndarray, n: int) -> np.ndarray:
    return np.clip(i, 0, n - 1)


EXPECT: dict[str, Expect] = {
    "saxpy_numpy": lambda a: {"arg2": np.float32(a[0]) * a[1] + a[2]},
    "range_lo_hi": lambda a: {
        "arg3": np.where(
            (np.arange(100) >= a[0]) & (np.arange(100) < a[1]), a[2] * 2 + np.arange(100), 0
        )
    },
    "ndrange_3d_mixed_bounds": lambda a: {
        "arg0": np.fromfunction(
            lambda i, j, k: np.where((j >= 2) & (k >= 1) & (k < 4), i * 100 + j * 10 + k, 0),
            (6, 8, 5),
        )
    },
    "grouped_3d_lo_hi": lambda a: {
        "arg0": np.fromfunction(
            lambda i, j, k: np.where((i >= 1) & (k < 2), i * 100 + j * 10 + k, 0), (4, 5, 3)
        )
    },
    "dtype_i8_wrap": lambda a: {
        "arg2": (a[0].astype(np.int64) + a[1]).astype(np.int8),
        "arg3": a[0].astype(np.int32) * 3 + 100,
    },
    "dtype_u8_wrap": lambda a: {
        "arg2": (a[0].astype(np.int64) + a[1]).astype(np.uint8),
        "arg3": (a[0] - a[1]).astype(np.uint8).astype(np.int32),
    },
    "dtype_u32": lambda a: {
        "arg2": (a[1].astype(np.int64) - 25 + a[0].astype(np.int64) * 3).astype(np.uint32),
        "arg3": np.ones(100, np.int32),
    },
    "dtype_u64_hash": lambda a: {
        "arg1": (a[0] ^ (a[0] >> np.uint64(7))) * np.uint64(6364136223846793005)
        + np.uint64(1442695040888963407)
    },
    "f64_with_f32_literals": lambda a: {
        "arg2": np.array(
            [
                (0.1 - float(np.float32(0.1))) * 1e9,
                1.0 * float(np.float32(3.0000001)),
                1.0 + float(np.float32(0.1)),
            ]
        )
    },
    "int_div_mod": lambda a: {
        "arg2": (a[0] / a[1]).astype(np.float32),
        "arg3": _pyfloordiv(a[0], a[1]),
        "arg4": np.mod(a[0], a[1]),
    },
    "i64_true_div_precision": lambda a: {
        "arg2": (a[0].astype(np.float32) / a[1].astype(np.float32)).astype(np.int64) - a[0] // a[1]
    },
    "float_floordiv_mod": lambda a: {"arg2": a[0] // a[1], "arg3": np.mod(a[0], a[1])},
    "float_to_int": lambda a: {
        "arg1": np.trunc(a[0]).astype(np.int32),
        "arg2": np.trunc(a[0]).astype(np.int32),
        "arg3": np.trunc(a[0] * np.float32(2)).astype(np.int32),
        "arg4": np.trunc(a[0] * np.float32(1000)).astype(np.int64),
    },
    "local_keeps_first_type": lambda a: {
        "arg1": np.trunc(a[0] * np.float32(1.7)).astype(np.int32) + (a[0] > 1) * 0.25
    },
    "shared_bitwise_augassign": lambda a: {
        "arg1": np.array(
            [
                np.bitwise_or.reduce(a[0]),
                np.bitwise_and.reduce(a[0] | 0x10000),
                np.bitwise_xor.reduce(a[0]),
                -np.sum(a[0] % 3),
            ]
        )
    },
    "integer_pow": lambda a: {"arg1": a[0] ** 3 + a[0] ** 2},
    "while_collatz": lambda a: {"arg1": np.array([_collatz(int(x)) for x in a[0]])},
    "nested_serial_loops": lambda a: {"arg1": np.cumsum(a[0]) * 3},
    "serialize_break": lambda a: {
        "arg2": np.array(
            [int(np.argmax(a[0] > 0.95)), int(np.argmax(a[0] > 0.95))]
            if (a[0] > 0.95).any()
            else [-1, len(a[0])]
        )
    },
    "serialize_prefix_sum": lambda a: {"arg1": np.cumsum(a[0])},
    "loops_with_serial_between": lambda a: {
        "arg0": a[0] + 1,
        "arg1": np.r_[2 * (2 * (a[0][0] + 1)), np.full(255, 2 * (a[0][0] + 1))],
    },
    "local_reduction_then_serial": lambda a: {
        "arg1": a[0] - np.float32(a[0].sum()) / np.float32(1000),
        "arg2": np.array([a[0].sum(), a[0].sum() / 1000]),
    },
    "return_f32_sum": lambda a: {"ret": a[0].sum() * 0.5},
    "return_i32_count": lambda a: {"ret": int((a[0] > 0.25).sum()) * 2 + 1},
    "return_serial_only": lambda a: {"ret": 17.0 / 5 + 100.0},
    "global_accumulate": lambda a: {
        "arg2": np.array([a[0].sum()]),
        "arg3": np.array([a[1].sum(), -4096]),
    },
    "histogram": lambda a: {"arg1": np.bincount(a[0] % 8, minlength=8)},
    "matmul_nested": lambda a: {"arg2": a[0] @ a[1]},
    "atomic_counters_old_values": lambda a: {
        "arg1": np.ones(1000),
        "arg2": np.ones(1000),
        "arg3": np.array([1000, 0, 999 * 1000 // 2]),
    },
    "atomic_minmax_bitwise": lambda a: {
        "arg2": np.array(
            [
                min(0, a[0].min()),
                max(0, a[0].max()),
                np.bitwise_and.reduce(a[0] | 0x100),
                np.bitwise_or.reduce(a[0] & 0x0F0F),
                np.bitwise_xor.reduce(a[0]),
            ]
        ),
        "arg3": np.array([min(0, a[1].min()), max(0, a[1].max())]),
    },
    "atomic_old_values_serial": lambda a: {
        "arg1": np.r_[0, np.cumsum(a[0])[:-1]],
        "arg2": np.r_[-1000, np.maximum.accumulate(a[0])[:-1]]
        + np.r_[0, np.bitwise_xor.accumulate(a[0])[:-1]],
    },
    "math_f32": lambda a: {
        "arg2": np.stack(
            [
                np.sqrt(a[0]),
                np.sin(a[1]),
                np.cos(a[1]),
                np.tan(a[1] * 0.5),
                np.tanh(a[1]),
                np.exp(a[1]),
                np.log(a[0]),
                np.floor(a[1] * 3),
                np.ceil(a[1] * 3),
                _round_half_away(a[1] * np.float32(3)),
                np.abs(a[1]),
                a[0] ** 1.5,
                np.minimum(a[0], a[1]),
                np.maximum(a[0], a[1]),
                np.arctan2(a[1], a[0]),
            ],
            axis=1,
        )
    },
    "round_halves": lambda a: {
        "arg1": _round_half_away(a[0]),
        "arg2": np.floor(a[0]).astype(np.int32) * 10 + np.ceil(a[0]).astype(np.int32),
    },
    "python_globals_baked": lambda a: {
        "arg1": a[0] * np.float32(2.5) + 3,
        "arg2": np.arange(100) * 3 + 8,
    },
    "static_range_unrolled": lambda a: {"arg1": a[0][:-2] - 2 * a[0][1:-1] + 0.5 * a[0][2:]},
    "boundary_clamp_1d": lambda a: {
        "arg1": a[0][_clamp_idx(np.arange(24) - 2, 16)]
        + 10 * a[0][_clamp_idx(np.arange(24) + 3, 16)]
    },
    "boundary_clamp_2d": lambda a: {
        "arg1": np.fromfunction(
            lambda i, j: (
                a[0][_clamp_idx(i - 1, 5), _clamp_idx(j + 1, 6)]
                + 0.5 * a[0][_clamp_idx(i + 1, 5), _clamp_idx(j - 1, 6)]
            ),
            (5, 6),
            dtype=int,
        )
    },
    "func_with_array_and_loop": lambda a: {"arg1": 2.0 * np.arange(50) + a[0]},
}


def main() -> int:
    import quadrants as qd

    qd.init(arch=qd.cpu, offline_cache=False)
    kernels = harness.load_kernels(qd, "oracle_kernels_check")
    failures = 0
    for case in kernels.CASES:
        expect = EXPECT.get(case.name)
        if expect is None:
            continue
        got = harness.run_case(qd, case)
        inputs = case.make_inputs(np.random.default_rng(harness.case_seed(case.name)))
        for key, want in expect(inputs).items():
            try:
                np.testing.assert_allclose(got[key], want, rtol=1e-5, atol=1e-5)
            except AssertionError as exc:
                failures += 1
                print(f"MISMATCH {case.name}/{key}: {exc}")
    print(f"checked {len(EXPECT)} cases against NumPy, {failures} mismatching outputs")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
