"""Kernels that must split, with their constructs, slices and results; and the per-launch alias
check."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import qdlab as qd


@pytest.fixture(autouse=True)
def _init() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)


def both_paths(k: qd.Kernel, make_args, compare=np.testing.assert_array_equal) -> list:
    """Run `k` split and whole-kernel on equal inputs; return the split run's arguments after the
    call."""
    qd.init(arch=qd.cpu, offline_cache=False)
    split_args = make_args()
    split_ret = k(*split_args)
    report = qd.explain(k)
    o = k._primal.per_offload_cache_observations
    report.observed = (
        o.frontend_constructs_total,
        o.frontend_constructs_recompiled,
        o.frontend_constructs_cache_hit,
    )
    qd.init(arch=qd.cpu, offline_cache=False, per_offload=False)
    whole_args = make_args()
    whole_ret = k(*whole_args)
    for a, b in zip(split_args, whole_args):
        if isinstance(a, np.ndarray):
            compare(a, b)
    assert split_ret == whole_ret
    qd.init(arch=qd.cpu, offline_cache=False)
    return [report, *split_args]


@qd.kernel
def shared_defs(
    x: qd.types.NDArray[qd.f32, 1],
    y: qd.types.NDArray[qd.f32, 1],
    z: qd.types.NDArray[qd.f32, 1],
    scale: qd.f32,
):
    n = x.shape[0]
    s = scale * 0.5
    for i in range(n):
        y[i] = x[i] * s
    for i in range(n // 2):
        z[i] = x[i] + s


def test_shared_pure_definitions_are_recomputed() -> None:
    rng = np.random.default_rng(0)
    x = rng.random(1000, dtype=np.float32)
    report, x, y, z, _ = both_paths(
        shared_defs, lambda: [x.copy(), np.zeros(1000, np.float32), np.zeros(1000, np.float32), 3.0]
    )
    assert report.mode == "per_offload" and len(report.constructs) == 2
    np.testing.assert_array_equal(y, x * np.float32(1.5))
    np.testing.assert_array_equal(z[:500], x[:500] + np.float32(1.5))
    for c in report.constructs:
        text = "\n".join(report.statements[s].text for s in c.slice_statements)
        assert "s = scale * 0.5" in text and "n = x.shape[0]" in text
    total, recompiled, hit = report.observed
    assert (
        total == 2 and recompiled + hit == 2
    )  # a construct loaded by an earlier test comes back reused


@qd.kernel
def serial_between(a: qd.types.NDArray[qd.f32, 1], b: qd.types.NDArray[qd.f32, 1], n: qd.i32):
    for i in range(n):
        a[i] = a[i] + 1.0
    s = a[0] * 2.0
    b[0] = s
    for j in range(n):
        b[j] = b[j] + s


def test_reference_experiment_a() -> None:
    """Quadrants' 4-task experiment: a loop, a serial run with a store, a loop reading its value."""
    report, a, b, _ = both_paths(
        serial_between, lambda: [np.ones(8, np.float32), np.zeros(8, np.float32), 8]
    )
    assert report.mode == "per_offload" and [c.kind for c in report.constructs] == [
        "parallel_for",
        "serial",
        "parallel_for",
    ]
    assert b.tolist() == [8.0] + [4.0] * 7 and (a == 2).all()


@qd.func
def axpy(a: qd.f32, x: qd.f32, y: qd.f32) -> qd.f32:
    return a * x + y


@qd.func
def fill(arr: qd.template(), v: qd.f32):
    for i in range(arr.shape[0]):
        arr[i] = v


@qd.kernel
def with_funcs(x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1]):
    fill(y, 1.0)
    for i in range(x.shape[0]):
        y[i] = axpy(2.0, x[i], y[i])


def test_top_level_func_calls_split() -> None:
    report, _, y = both_paths(
        with_funcs, lambda: [np.arange(5, dtype=np.float32), np.zeros(5, np.float32)]
    )
    assert report.mode == "per_offload"
    assert [c.kind for c in report.constructs] == ["parallel_for", "parallel_for"]
    assert y.tolist() == [1, 3, 5, 7, 9]


@qd.kernel
def bounds_from_args(a: qd.types.NDArray[qd.i32, 2], m: qd.i32, k: qd.i32):
    for i, j in qd.ndrange(a.shape[0], (k, m)):
        a[i, j] = i * 100 + j
    if m > 3:
        a[0, 0] = -1


def test_bounds_from_shapes_and_scalars() -> None:
    report, a, *_ = both_paths(bounds_from_args, lambda: [np.zeros((4, 6), np.int32), 5, 1])
    assert [c.kind for c in report.constructs] == ["parallel_for", "if"]
    want = np.zeros((4, 6), np.int32)
    for i in range(4):
        for j in range(1, 5):
            want[i, j] = i * 100 + j
    want[0, 0] = -1
    np.testing.assert_array_equal(a, want)


# Runtime aliasing ---------------------------------------------------------------------------------


@qd.kernel
def relies_on_disjoint(
    a: qd.types.NDArray[qd.f32, 1], b: qd.types.NDArray[qd.f32, 1], out: qd.types.NDArray[qd.f32, 1]
):
    s = a[0]
    for i in range(b.shape[0]):
        b[i] = -1.0
    for i in range(out.shape[0]):
        out[i] = s


def run_alias(a, b, out) -> None:
    relies_on_disjoint(a, b, out)


def test_split_assumes_disjoint_parameters() -> None:
    a, b, out = np.full(4, 3.0, np.float32), np.zeros(4, np.float32), np.zeros(4, np.float32)
    relies_on_disjoint(a, b, out)
    r = qd.explain(relies_on_disjoint)
    assert r.mode == "per_offload" and r.alias_pairs == [("a", "b")]
    assert (out == 3).all()


@pytest.mark.parametrize("how", ["same_ndarray", "same_numpy", "overlapping_views"])
def test_aliased_arguments_run_whole_kernel(how: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="qdlab")
    k = qd.kernel(relies_on_disjoint.fn)
    for _ in range(3):
        if how == "same_ndarray":
            a = qd.ndarray(qd.f32, 4)
            a.fill(3.0)
            out = qd.ndarray(qd.f32, 4)
            k(a, a, out)
            got = out.to_numpy()
        elif how == "same_numpy":
            a, out = np.full(4, 3.0, np.float32), np.zeros(4, np.float32)
            k(a, a, out)
            got = out
        else:
            buf, out = np.full(8, 3.0, np.float32), np.zeros(4, np.float32)
            k(buf[0:4], buf[2:6], out)
            got = out
        assert (got == 3).all(), (
            got
        )  # the whole-kernel order: the snapshot is taken before the overwrite
    warnings = [r for r in caplog.records if "[PER_OFFLOAD][FALLBACK]" in r.getMessage()]
    assert len(warnings) == 1 and "relies_on_disjoint" in warnings[0].getMessage()
    assert "`a` and `b`" in warnings[0].getMessage()


def test_disjoint_views_of_one_buffer_stay_split(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="qdlab")
    k = qd.kernel(relies_on_disjoint.fn)
    buf, out = np.full(8, 3.0, np.float32), np.zeros(4, np.float32)
    k(buf[0:4], buf[4:8], out)
    assert (out == 3).all() and (buf[4:] == -1).all()
    assert not [r for r in caplog.records if "FALLBACK" in r.getMessage()]


def test_each_construct_is_reported_as_it_is_ready() -> None:
    k = qd.kernel(serial_between.fn)
    seen: list[tuple[int, int, str]] = []
    k.on_construct = lambda i, n, status: seen.append((i, n, status))
    k(np.ones(4, np.float32), np.zeros(4, np.float32), 4)
    assert [(i, n) for i, n, _ in seen] == [(0, 3), (1, 3), (2, 3)]
    assert {s for *_, s in seen} <= {"compiled", "reused"}


def test_fresh_compiles_anew_and_runs_the_same() -> None:
    args = lambda: [
        np.arange(1000, dtype=np.float32),
        np.zeros(1000, np.float32),
        np.zeros(1000, np.float32),
        2.0,
    ]
    k = qd.kernel(shared_defs.fn)
    want = args()
    k(*want)
    qd.init(arch=qd.cpu, offline_cache=False, fresh=True)
    for _ in range(2):
        got = args()
        k2 = qd.kernel(shared_defs.fn)
        k2(*got)
        assert qd.explain(k2).compiled == 2
        for a, b in zip(got[:3], want[:3]):
            np.testing.assert_array_equal(a, b)
