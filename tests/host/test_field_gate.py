"""The gate knows fields apart: a snapshot of field `a` survives a construct that writes only field
`b` (split, no launch-time alias pair), while an overwrite of `a` itself is `overwritten_reread`,
handed over through the interface buffer by default and a whole-kernel fallback naming the field
under `split_carried=False`. Each case is checked against the whole kernel and NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd


def make(writes_a: bool) -> tuple:
    a = qd.field(qd.i32, shape=16)
    b = qd.field(qd.i32, shape=16)
    out = qd.field(qd.i32, shape=16)

    if writes_a:

        @qd.kernel
        def k():
            for i in a:
                a[i] = i + 1
            snap = a[3]  # a snapshot of field a
            for i in a:  # overwrites a
                a[i] = 0
            for i in out:
                out[i] = snap + b[i]

    else:

        @qd.kernel
        def k():
            for i in a:
                a[i] = i + 1
            snap = a[3]  # a snapshot of field a
            for i in b:  # writes only field b
                b[i] = i * 2
            for i in out:
                out[i] = snap + b[i]

    return k, a, b, out


def expected(writes_a: bool) -> np.ndarray:
    b = np.zeros(16, np.int32) if writes_a else np.arange(16, dtype=np.int32) * 2
    return 4 + b


@pytest.mark.parametrize("carried", [True, False])
def test_other_field_written_splits_without_alias_check(carried: bool) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, split_carried=carried)
    k, _, _, out = make(writes_a=False)
    k()
    np.testing.assert_array_equal(out.to_numpy(), expected(False))
    r = qd.explain(k)
    assert r.mode == "per_offload" and r.fallback is None
    assert r.alias_pairs == [] and k.latest.alias_pairs == []  # fields never alias: no pair
    assert r.interface == []  # the snapshot is recomputed, not handed over


def test_snapshot_overwritten_goes_through_the_interface() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    k, _, _, out = make(writes_a=True)
    k()
    np.testing.assert_array_equal(out.to_numpy(), expected(True))
    r = qd.explain(k)
    assert r.mode == "per_offload" and r.fallback is None
    assert [(s.name, s.reason) for s in r.interface] == [("snap", "overwritten_reread")]


def test_snapshot_overwritten_falls_back_naming_the_field() -> None:
    qd.init(arch=qd.cpu, offline_cache=False, split_carried=False)
    k, _, _, out = make(writes_a=True)
    k()
    np.testing.assert_array_equal(out.to_numpy(), expected(True))
    r = qd.explain(k)
    assert r.mode == "whole_kernel"
    assert r.fallback.code == "overwritten_reread"
    assert "`a` is read at line" in r.fallback.message
    assert r.fallback.source_line == "snap = a[3]  # a snapshot of field a"


@pytest.mark.parametrize("per_offload", [True, False])
def test_field_and_ndarray_need_no_alias_check(per_offload: bool) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, per_offload=per_offload)
    f = qd.field(qd.f32, shape=8)

    @qd.kernel
    def k(x: qd.types.NDArray[qd.f32, 1]):
        for i in x:
            x[i] = i * 1.5
        snap = x[2]
        for i in f:  # writes the field only
            f[i] = i
        for i in x:
            x[i] = snap + f[i]

    x = np.zeros(8, np.float32)
    k(x)
    np.testing.assert_array_equal(x, 3.0 + np.arange(8, dtype=np.float32))
    assert qd.explain(k).alias_pairs == []


def test_one_field_under_two_names_is_one_buffer() -> None:
    """A template argument naming the same field as a global is the same parameter, so an overwrite
    through one name is an overwrite of the other."""
    qd.init(arch=qd.cpu, offline_cache=False, split_carried=False)
    a = qd.field(qd.i32, shape=8)
    out = qd.field(qd.i32, shape=8)

    @qd.kernel
    def k(alias: qd.template()):
        for i in a:
            a[i] = 5
        snap = a[0]
        for i in alias:
            alias[i] = -1
        for i in out:
            out[i] = snap

    k(a)
    np.testing.assert_array_equal(out.to_numpy(), np.full(8, 5))
    assert qd.explain(k).fallback.code == "overwritten_reread"


def test_gradient_field_reached_by_its_own_name_is_the_primal_gradient() -> None:
    qd.init(arch=qd.cpu, offline_cache=False, split_carried=False)
    x = qd.field(qd.f32, shape=4, needs_grad=True)
    g = x.grad
    out = qd.field(qd.f32, shape=4)

    @qd.kernel
    def k():
        for i in x:
            x.grad[i] = 2.0
        snap = g[1]
        for i in x:
            x.grad[i] = 7.0
        for i in out:
            out[i] = snap

    k()
    np.testing.assert_array_equal(out.to_numpy(), np.full(4, 2.0, np.float32))
    assert qd.explain(k).fallback.code == "overwritten_reread"
