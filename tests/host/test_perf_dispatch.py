"""`qd.perf_dispatch`: the reference's dispatch semantics, observed through implementations that
record their calls: a lone compatible implementation runs untimed; several take turns through
their warm-up and timed trials (fewest trials first), then the fastest runs until
`repeat_after_count` restarts the measurement; a new geometry measures again; the prototype's
parameters bind registrations; QD_PERFDISPATCH_FORCE pins one; no compatible one is an error.
Kernels register as well as plain functions, and each gives the same result."""

from __future__ import annotations

import time

import numpy as np
import pytest

import qdlab as qd


def _dispatcher(calls: list[str], slow: str, **options: object) -> object:
    @qd.perf_dispatch(get_geometry_hash=lambda a, n: (a.shape, n), **options)
    def proto(a: qd.types.NDArray[qd.i32, 1], n: int) -> None: ...

    @proto.register
    def fast_one(a, n):
        calls.append("fast_one")
        if slow == "fast_one":
            time.sleep(0.02)
        a[:] += n

    @proto.register(is_compatible=lambda a, n: n >= 0)
    def other_one(a, n):
        calls.append("other_one")
        if slow == "other_one":
            time.sleep(0.02)
        a[:] += n

    return proto


def test_trials_then_the_fastest_then_a_restart() -> None:
    calls: list[str] = []
    proto = _dispatcher(calls, "fast_one", first_warmup=1, warmup=0, active=2, repeat_after_count=3)
    a = np.zeros(2, np.int32)
    for _ in range(6):  # 2 impls x (1 warm-up + 2 timed): taking turns
        proto(a, 1)
    assert calls == ["fast_one", "other_one"] * 3
    calls.clear()
    for _ in range(2):
        proto(a, 1)
    assert calls == ["other_one"] * 2  # the faster one
    calls.clear()
    proto(a, 1)  # the 3rd call since the choice: measuring again, no warm-up this time
    proto(a, 1)
    assert calls == ["fast_one", "other_one"]
    assert a.tolist() == [10, 10]  # every call ran exactly one implementation


def test_a_lone_compatible_implementation_and_none() -> None:
    calls: list[str] = []
    proto = _dispatcher(calls, "")
    a = np.zeros(1, np.int32)
    for _ in range(3):
        proto(a, -1)  # other_one refuses a negative n
    assert calls == ["fast_one"] * 3 and a.tolist() == [-3]

    @qd.perf_dispatch(get_geometry_hash=lambda x: 0)
    def nothing(x: int) -> None: ...

    @nothing.register(is_compatible=lambda x: False)
    def never(x):
        raise AssertionError("not compatible")

    with pytest.raises(qd.QuadrantsRuntimeError, match="No suitable functions"):
        nothing(1)


def test_registrations_must_match_the_prototype() -> None:
    @qd.perf_dispatch(get_geometry_hash=lambda a, b: 0)
    def proto(a: int, b: int) -> None: ...

    with pytest.raises(qd.QuadrantsSyntaxError, match="Signature parameter c"):
        proto.register(lambda a, c: None)
    with pytest.raises(qd.QuadrantsSyntaxError, match="Number of function parameters 1"):
        proto.register(lambda a: None)


def test_force_pins_an_implementation(monkeypatch: pytest.MonkeyPatch) -> None:
    from qdlab.lang import _perf_dispatch  # QD_PERFDISPATCH_FORCE, as read at import

    monkeypatch.setattr(_perf_dispatch, "_FORCE_MAP", {"proto": "other_one"})
    monkeypatch.setattr(_perf_dispatch, "_ANY_FORCE_ACTIVE", True)
    calls: list[str] = []
    proto = _dispatcher(calls, "other_one")
    a = np.zeros(1, np.int32)
    for _ in range(4):
        proto(a, 2)
    assert calls == ["other_one"] * 4 and a.tolist() == [8]


def test_kernels_register_and_agree() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)

    @qd.perf_dispatch(get_geometry_hash=lambda x, out: x.shape, active=1)
    def total(x: qd.types.NDArray[qd.f32, 1], out: qd.types.NDArray[qd.f32, 1]) -> None: ...

    @total.register
    @qd.kernel
    def total_atomic(x: qd.types.NDArray[qd.f32, 1], out: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            out[0] += x[i]

    @total.register
    @qd.kernel
    def total_serial(x: qd.types.NDArray[qd.f32, 1], out: qd.types.NDArray[qd.f32, 1]):
        for _ in range(1):
            s = 0.0
            for i in range(x.shape[0]):
                s += x[i]
            out[0] += s

    x = np.arange(8, dtype=np.float32)
    out = np.zeros(1, np.float32)
    for _ in range(7):
        total(x, out)
    assert out.tolist() == [7 * 28.0]


def test_at_the_reference_path_with_its_names_and_error_codes() -> None:
    import sys

    from qdlab.lang import _perf_dispatch

    assert _perf_dispatch is sys.modules["qdlab.host.perf_dispatch"]  # one module: patches apply
    assert _perf_dispatch._parse_force_map(" a:b , c : d ,") == {"a": "b", "c": "d"}
    assert (_perf_dispatch.NUM_FIRST_WARMUP, _perf_dispatch.DEFAULT_REPEAT_AFTER_COUNT) == (1, 300)

    @qd.perf_dispatch(get_geometry_hash=lambda a: a.shape)
    def proto(a: qd.types.NDArray[qd.i32, 1]) -> None: ...

    assert isinstance(proto, _perf_dispatch.PerformanceDispatcher)
    with pytest.raises(qd.QuadrantsSyntaxError, match="PERFDISPATCH_ANNOTATION_SEQUENCE_MISMATCH"):
        proto.register(lambda b: None)
    with pytest.raises(qd.QuadrantsSyntaxError, match="KERNEL_ANNOTATION_ORDER"):

        @qd.kernel
        @proto.register
        def impl(a: qd.types.NDArray[qd.i32, 1]) -> None: ...
