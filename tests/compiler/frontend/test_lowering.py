"""Constructs that lower to the right program: `qd.randn`, a runtime loop's `break` inside a
`qd.static` loop, and expressions too long for a recursive visitor."""

from __future__ import annotations

import sys
import traceback
from pathlib import Path

import numpy as np
import pytest

import qdlab as qd


@pytest.fixture(params=[True, False], ids=["per_offload", "whole_kernel"])
def per_offload(request: pytest.FixtureRequest) -> bool:
    qd.init(arch=qd.cpu, offline_cache=False, per_offload=request.param, random_seed=5)
    return request.param


@qd.kernel
def normals(a: qd.types.NDArray[qd.f32, 1], b: qd.types.NDArray[qd.f64, 1]):
    for i in range(a.shape[0]):
        a[i] = qd.randn()
    for i in range(b.shape[0]):
        b[i] = qd.randn(qd.f64)


def test_randn_draws_standard_normals(per_offload: bool) -> None:
    a, b = np.zeros(200_000, np.float32), np.zeros(200_000, np.float64)
    normals(a, b)
    for x in (a, b):
        assert np.isfinite(x).all() and abs(x.mean()) < 0.01 and abs(x.std() - 1.0) < 0.01
        assert abs(np.mean(np.abs(x) < 1.0) - 0.6827) < 0.005  # the normal's mass within one sigma
    qd.init(arch=qd.cpu, offline_cache=False, per_offload=not per_offload, random_seed=5)
    a2, b2 = np.zeros_like(a), np.zeros_like(b)
    normals(a2, b2)  # the first launch of the other path draws the same numbers
    assert np.array_equal(a, a2) and np.array_equal(b, b2)


@qd.kernel
def counts_up(b: qd.types.NDArray[qd.i32, 1], m: qd.i32):
    for s in qd.static(range(2)):
        j = 0
        while True:
            j += 1
            if j > m + s:
                break
        for k in range(m):
            if k == s:
                continue
            j += 10
        b[s] = j


def test_break_of_a_runtime_loop_inside_a_static_loop(per_offload: bool) -> None:
    """The `break` and `continue` belong to the runtime loops, so the static loop unrolls around
    them."""
    b = np.zeros(2, np.int32)
    counts_up(b, 3)
    assert b.tolist() == [24, 25]


def _long_sum(tmp_path: Path, terms: int) -> qd.Kernel:
    path = tmp_path / f"long_sum_{terms}.py"
    path.write_text(
        "import qdlab as qd\n\n\n@qd.kernel\ndef long_sum(x: qd.f32) -> qd.f32:\n"
        f"    return {' + '.join(['x'] * terms)}\n"
    )
    ns: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), ns)  # noqa: S102
    return ns["long_sum"]


def test_a_900_term_sum_compiles(tmp_path: Path) -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    limit = sys.getrecursionlimit()
    assert _long_sum(tmp_path, 900)(1.0) == 900.0
    assert sys.getrecursionlimit() == limit


def test_a_sum_too_long_to_compile_is_a_clear_error(tmp_path: Path) -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    with pytest.raises(qd.QdSyntaxError) as info:
        _long_sum(tmp_path, 2700)(1.0)
    assert "nests too deeply to compile" in info.value.message
    assert info.value.loc is not None and (info.value.loc.lineno, info.value.loc.col) == (6, 11)
    assert len(traceback.extract_tb(info.value.__traceback__)) < 5


@qd.kernel
def literals(
    u: qd.types.NDArray[qd.u32, 1], w: qd.types.NDArray[qd.u64, 1], b: qd.types.NDArray[qd.i64, 1]
):
    u[0] = -1  # as in Quadrants: an i32 literal, cast to the element type
    u[1] = qd.cast(qd.u64(2**32 + 300), qd.u8)
    w[0] = qd.u64(2**64 - 1)
    b[0] = qd.i64(2**40 + 1)  # a literal beyond default_ip names its type


@qd.kernel
def wide_literal(b: qd.types.NDArray[qd.i64, 1]):
    b[0] = 2**40 + 1


def test_literals_that_fit_their_type_or_wrap_in_a_cast() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    u, w, b = np.zeros(2, np.uint32), np.zeros(1, np.uint64), np.zeros(1, np.int64)
    literals(u, w, b)
    assert u.tolist() == [2**32 - 1, 44] and w.tolist() == [2**64 - 1] and b.tolist() == [2**40 + 1]


def test_an_untyped_literal_must_fit_default_ip() -> None:
    """As in Quadrants: `2**40` is an error under default_ip=i32, even stored to an i64 array, and
    an i64 literal under default_ip=i64."""
    qd.init(arch=qd.cpu, offline_cache=False)
    b = np.zeros(1, np.int64)
    with pytest.raises(qd.QuadrantsTypeError, match="exceeded the range of default_ip: i32"):
        wide_literal(b)
    qd.init(arch=qd.cpu, offline_cache=False, default_ip=qd.i64)
    try:
        wide_literal(b)
        assert b.tolist() == [2**40 + 1]
    finally:
        qd.init(arch=qd.cpu, offline_cache=False)
