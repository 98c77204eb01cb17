"""Streams and events as Quadrants' CPU backend has them (measured with quadrants 1.3.3): no-op
objects of handle 0 that kernels accept as `qd_stream=`, with the reference's owner check, its
launch refusals (autodiff, Tape, graph=True) and its compile-time rules for
`with qd.stream_parallel():`."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd
from qdlab.lang.stream import Event, Stream


@pytest.fixture(autouse=True)
def _cpu() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)


def test_kernels_on_streams_and_events_give_the_plain_results() -> None:
    x = qd.field(qd.f32, shape=(8,))
    y = qd.ndarray(qd.f32, shape=(8,))

    @qd.kernel
    def fill(v: qd.f32, out: qd.types.ndarray(dtype=qd.f32, ndim=1)):
        for i in range(8):
            x[i] = v + i
            out[i] = 2 * v

    s1, s2 = qd.create_stream(), qd.create_stream()
    assert isinstance(s1, Stream) and s1.handle == 0
    fill(1.0, y, qd_stream=s1)
    e = qd.create_event()
    assert isinstance(e, Event) and e.handle == 0
    e.record(s1)
    e.wait(qd_stream=s2)
    fill(3.0, out=y, qd_stream=s2)
    e.synchronize()
    s2.synchronize()
    fill(5.0, y, qd_stream=None)  # no stream: the default one
    assert np.array_equal(x.to_numpy(), 5.0 + np.arange(8)) and np.all(y.to_numpy() == 10.0)
    s1.destroy()
    s1.destroy()  # twice is fine
    with qd.create_stream() as s3, qd.create_event() as e3:
        fill(1.0, y, qd_stream=s3)
    assert (s1.handle, s3.handle, e3.handle) == (0, 0, 0)
    assert Stream(1234).handle == 1234  # a handle from elsewhere is never destroyed here
    external = Stream(1234)
    external.destroy()
    assert external.handle == 1234


def test_a_stream_outlives_its_program_only_as_an_error() -> None:
    s, e = qd.create_stream(), qd.create_event()
    qd.reset()
    with pytest.raises(RuntimeError, match="Stream's owning Program has been destroyed"):
        s.synchronize()
    with pytest.raises(RuntimeError, match="Event's owning Program has been destroyed"):
        e.record()
    s.destroy()


def test_launches_a_stream_cannot_take() -> None:
    x = qd.field(qd.f32, shape=(), needs_grad=True)
    loss = qd.field(qd.f32, shape=(), needs_grad=True)

    @qd.kernel
    def compute():
        loss[None] = x[None] ** 2

    @qd.kernel(graph=True)
    def graph_kernel():
        for _ in range(1):
            x[None] = 1.0

    s = qd.create_stream()
    with pytest.raises(RuntimeError, match="not compatible with autodiff kernels"):
        compute.grad(qd_stream=s)
    with pytest.raises(RuntimeError, match="not compatible with autograd Tape"), qd.ad.Tape(loss):
        compute(qd_stream=s)
    with pytest.raises(RuntimeError, match="not compatible with graph=True kernels"):
        graph_kernel(qd_stream=s)
    graph_kernel()
    assert x[None] == 1.0


def test_stream_parallel_rules() -> None:
    a = qd.field(qd.f32, shape=(4,))

    @qd.kernel
    def mixed():
        with qd.stream_parallel():
            for i in range(4):
                a[i] = 1.0
        for i in range(4):
            a[i] = 2.0

    @qd.kernel(graph=True)
    def in_graph():
        with qd.stream_parallel():
            for i in range(4):
                a[i] = 1.0

    @qd.func
    def helper():
        with qd.stream_parallel():
            for i in range(4):
                a[i] = 1.0

    @qd.kernel
    def in_func():
        helper()

    @qd.kernel
    def documented():
        """Blocks only, after the docstring."""
        with qd.stream_parallel():
            for i in range(4):
                a[i] = 3.0
        with qd.stream_parallel():
            for i in range(4):
                a[i] += 1.0

    with pytest.raises(qd.QuadrantsSyntaxError, match="all top-level statements"):
        mixed()
    with pytest.raises(qd.QuadrantsSyntaxError, match="not compatible with graph=True"):
        in_graph()
    with pytest.raises(qd.QuadrantsSyntaxError, match="only be used inside @qd.kernel"):
        in_func()
    documented()
    assert np.all(a.to_numpy() == 4.0)


def test_nested_stream_parallel_is_refused() -> None:
    """As Quadrants: a compile error, not a second block run inside the first."""
    a = qd.field(qd.f32, shape=(4,))

    @qd.kernel
    def nested():
        with qd.stream_parallel():
            for i in range(4):
                a[i] = 1.0
            with qd.stream_parallel():
                for i in range(4):
                    a[i] = 2.0

    with pytest.raises(qd.QuadrantsCompilationError, match="Nested stream_parallel blocks"):
        nested()
