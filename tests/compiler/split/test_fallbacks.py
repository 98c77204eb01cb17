"""One test per compile-time fallback code: the fallback is taken, named, located, and the result is
right."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import qdlab as qd


@pytest.fixture(autouse=True)
def _init() -> None:
    # split_carried=False: the reference behaviour, where carried values and snapshots fall back
    # (tests/compiler/split/test_interface.py covers the same kernels split through the interface
    # buffer).
    qd.init(arch=qd.cpu, offline_cache=False, split_carried=False)


def obs(k: qd.Kernel) -> tuple[int, int, int]:
    o = k._primal.per_offload_cache_observations
    return (
        o.frontend_constructs_total,
        o.frontend_constructs_recompiled,
        o.frontend_constructs_cache_hit,
    )


# The three examples of the reference documentation, verbatim but for the import.


@qd.kernel
def running_total(x: qd.types.NDArray[qd.f32, 1], out: qd.types.NDArray[qd.f32, 1]):
    total = 0.0
    for i in range(x.shape[0]):  # construct 1: build up a running total
        total += x[i]
    for i in range(out.shape[0]):  # construct 2: reuse it
        out[i] = total


@qd.kernel
def stale_snapshot(a: qd.types.NDArray[qd.f32, 1], out: qd.types.NDArray[qd.f32, 1]):
    first = a[0]  # snapshot a[0]
    for i in range(a.shape[0]):  # construct 1: overwrite a
        a[i] = 0.0
    for i in range(out.shape[0]):  # construct 2: reuse the snapshot
        out[i] = first


@qd.kernel
def grad_snapshot(
    a: qd.types.ndarray(dtype=qd.f32, ndim=1, needs_grad=True),
    b: qd.types.ndarray(dtype=qd.f32, ndim=1, needs_grad=True),
    out: qd.types.ndarray(dtype=qd.f32, ndim=1),
):
    g = a.grad[0]  # snapshot a's gradient
    for i in range(b.shape[0]):  # construct 1: write b's gradient (a different argument)
        b.grad[i] = 0.0
    for i in range(out.shape[0]):  # construct 2: reuse the snapshot
        out[i] = g


def assert_fallback(
    k: qd.Kernel, code: str, line_text: str, caplog: pytest.LogCaptureFixture
) -> None:
    r = qd.explain(k)
    assert r.mode == "whole_kernel"
    assert r.fallback is not None and r.fallback.code == code, r.fallback
    assert line_text in r.fallback.source_line
    assert r.fallback.lineno is not None and r.fallback.lineno > 0
    assert k.name in r.fallback.message
    assert obs(k) == (-1, -1, -1)
    assert any(code in rec.getMessage() and k.name in rec.getMessage() for rec in caplog.records)


def test_carried_value(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="qdlab")
    x = np.arange(1, 101, dtype=np.float32)
    out = np.zeros(7, np.float32)
    running_total(x, out)
    np.testing.assert_allclose(out, x.sum(), rtol=1e-6)
    assert_fallback(running_total, "carried_value", "out[i] = total", caplog)
    assert "total += x[i]" in qd.explain(running_total).fallback.blocker.source_line


def test_overwritten_reread(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="qdlab")
    a = np.arange(3, 13, dtype=np.float32)
    out = np.zeros(4, np.float32)
    stale_snapshot(a, out)
    assert (out == 3.0).all() and (a == 0).all()
    assert_fallback(stale_snapshot, "overwritten_reread", "first = a[0]", caplog)
    assert "a[i] = 0.0" in qd.explain(stale_snapshot).fallback.blocker.source_line


def test_gradient_alias(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="qdlab")
    a = qd.ndarray(qd.f32, 4, needs_grad=True)
    b = qd.ndarray(qd.f32, 4, needs_grad=True)
    out = qd.ndarray(qd.f32, 4)
    a.grad.fill(2.5)
    b.grad.fill(1.0)
    grad_snapshot(a, b, out)
    assert (out.to_numpy() == 2.5).all() and (b.grad.to_numpy() == 0).all()
    assert_fallback(grad_snapshot, "gradient_alias", "g = a.grad[0]", caplog)


@qd.kernel
def clamped_reread(
    a: qd.types.ndarray(dtype=qd.f32, ndim=1, boundary="clamp"), out: qd.types.NDArray[qd.f32, 1]
):
    before = a[a.shape[0] - 8]  # -5: clamps to a[0] (a constant -5 is refused, as by Quadrants)
    for i in range(a.shape[0]):
        a[i] = a[i] + 1.0
    for i in range(out.shape[0]):
        out[i] = before


def test_clamped_reread(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="qdlab")
    a = np.array([7, 1, 2], np.float32)
    out = np.zeros(3, np.float32)
    clamped_reread(a, out)
    assert (out == 7).all()
    assert_fallback(clamped_reread, "overwritten_reread", "before = a[a.shape[0] - 8]", caplog)


@qd.kernel
def shadowed_snapshot(a: qd.types.NDArray[qd.f32, 1], out: qd.types.NDArray[qd.f32, 1]):
    snap = a[1]
    a[1] = 100.0  # the shadowing write sits in the same serial run
    for i in range(out.shape[0]):
        out[i] = snap


def test_snapshot_shadowed_by_serial_write(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="qdlab")
    a = np.array([1, 2, 3], np.float32)
    out = np.zeros(2, np.float32)
    shadowed_snapshot(a, out)
    assert (out == 2).all()
    assert_fallback(shadowed_snapshot, "overwritten_reread", "snap = a[1]", caplog)


@qd.kernel
def two_rmw(x: qd.types.NDArray[qd.i32, 1], out: qd.types.NDArray[qd.i32, 1]):
    t = 0
    for i in range(x.shape[0]):
        t += x[i]
    for i in range(x.shape[0]):
        t += 2 * x[i]
    out[0] = t


def test_local_read_modify_written_by_two_constructs(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="qdlab")
    x = np.arange(50000, dtype=np.int32) % 7
    out = np.zeros(1, np.int32)
    two_rmw(x, out)
    assert out[0] == 3 * x.sum()
    assert qd.explain(two_rmw).fallback.code == "carried_value"


@qd.kernel
def atomic_feeds_two(
    c: qd.types.NDArray[qd.i32, 1], x: qd.types.NDArray[qd.i32, 1], y: qd.types.NDArray[qd.i32, 1]
):
    old = qd.atomic_add(c[0], 1)
    for i in range(x.shape[0]):
        x[i] = old
    for i in range(y.shape[0]):
        y[i] = old


def test_atomic_result_feeds_two_constructs(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="qdlab")
    c = np.array([41], np.int32)
    x, y = np.zeros(5, np.int32), np.zeros(5, np.int32)
    atomic_feeds_two(c, x, y)
    assert c[0] == 42 and (x == 41).all() and (y == 41).all()
    assert_fallback(atomic_feeds_two, "repeated_effect", "old = qd.atomic_add(c[0], 1)", caplog)


@qd.kernel
def one_draw(x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1]):
    r = qd.random()
    for i in range(x.shape[0]):
        x[i] = r
    for i in range(y.shape[0]):
        y[i] = r


def test_random_draw_used_by_two_loops(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="qdlab")
    x, y = np.zeros(6, np.float32), np.zeros(6, np.float32)
    one_draw(x, y)
    assert (x == x[0]).all() and (y == x[0]).all() and 0 <= x[0] < 1
    assert_fallback(one_draw, "repeated_effect", "r = qd.random()", caplog)


@qd.kernel
def volatile_twice(a: qd.types.NDArray[qd.i32, 1], x: qd.types.NDArray[qd.i32, 1]):
    v = qd.volatile_load(a[0])
    for i in range(x.shape[0]):
        x[i] = v
    for i in range(x.shape[0]):
        x[i] += v


def test_volatile_load_used_by_two_loops(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="qdlab")
    a, x = np.array([5], np.int32), np.zeros(3, np.int32)
    volatile_twice(a, x)
    assert (x == 10).all()
    assert_fallback(volatile_twice, "repeated_effect", "v = qd.volatile_load(a[0])", caplog)


@qd.kernel
def concurrent(a: qd.types.NDArray[qd.f32, 1], b: qd.types.NDArray[qd.f32, 1]):
    with qd.stream_parallel():
        for i in range(a.shape[0]):
            a[i] = 1.0
        for i in range(b.shape[0]):
            b[i] = 2.0


def test_concurrent_region(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="qdlab")
    a, b = np.zeros(3, np.float32), np.zeros(3, np.float32)
    concurrent(a, b)
    assert (a == 1).all() and (b == 2).all()
    assert_fallback(concurrent, "concurrent_region", "with qd.stream_parallel():", caplog)


def test_diagnostic_mode(tmp_path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="qdlab")
    qd.init(
        arch=qd.cpu,
        offline_cache=False,
        dump_cfg=True,
        debug_dump_path=str(tmp_path),
        split_carried=False,
    )
    k = qd.kernel(shadowed_snapshot.fn)
    a, out = np.array([1, 2, 3], np.float32), np.zeros(2, np.float32)
    k(a, out)
    assert (out == 2).all()
    assert_fallback(k, "diagnostic_mode", "", caplog)
    assert (tmp_path / "shadowed_snapshot_cfg.dot").read_text().startswith("digraph")


def test_whole_kernel_when_per_offload_is_off() -> None:
    qd.init(arch=qd.cpu, offline_cache=False, per_offload=False)
    a, out = np.arange(4, dtype=np.float32), np.zeros(4, np.float32)
    k = qd.kernel(stale_snapshot.fn)
    k(a, out)
    r = qd.explain(k)
    assert r.mode == "whole_kernel" and r.fallback is None and obs(k) == (-1, -1, -1)
