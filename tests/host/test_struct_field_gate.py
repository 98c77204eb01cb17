"""The gate tells the members of a struct field apart as it tells fields apart: a snapshot of
`s.a` survives a construct that writes only `s.b` (split, nothing handed over), while a write of
`s.a` in between is `overwritten_reread` (handed over by default, a fallback naming the member
under `split_carried=False`). Each case is checked against the whole kernel and NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd


def make(writes_a: bool, through_element: bool) -> tuple:
    pair = qd.types.struct(a=qd.i32, b=qd.i32)
    s = pair.field(shape=16)
    out = qd.field(qd.i32, shape=16)

    if through_element:  # `s[i].a`: the member reached through the element

        @qd.kernel
        def k():
            for i in s:
                s[i].a = i + 1
            snap = s[3].a  # a snapshot of member a
            for i in s:
                if qd.static(writes_a):
                    s[i].a = 0
                else:
                    s[i].b = i * 2
            for i in out:
                out[i] = snap + s[i].b

    else:  # `s.a[i]`: the member's field indexed

        @qd.kernel
        def k():
            for i in s:
                s.a[i] = i + 1
            snap = s.a[3]  # a snapshot of member a
            for i in s:
                if qd.static(writes_a):
                    s.a[i] = 0
                else:
                    s.b[i] = i * 2
            for i in out:
                out[i] = snap + s.b[i]

    return k, s, out


def expected(writes_a: bool) -> np.ndarray:
    return 4 + (np.zeros(16, np.int32) if writes_a else np.arange(16, dtype=np.int32) * 2)


@pytest.mark.parametrize("through_element", [True, False])
@pytest.mark.parametrize("carried", [True, False])
def test_other_member_written_splits(carried: bool, through_element: bool) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, split_carried=carried)
    k, s, out = make(writes_a=False, through_element=through_element)
    k()
    np.testing.assert_array_equal(out.to_numpy(), expected(False))
    np.testing.assert_array_equal(s.b.to_numpy(), np.arange(16) * 2)
    r = qd.explain(k)
    assert r.mode == "per_offload" and r.fallback is None
    assert r.alias_pairs == []  # members never alias
    assert r.interface == []  # the snapshot is recomputed, not handed over


@pytest.mark.parametrize("through_element", [True, False])
def test_snapshot_member_overwritten_goes_through_the_interface(through_element: bool) -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    k, _, out = make(writes_a=True, through_element=through_element)
    k()
    np.testing.assert_array_equal(out.to_numpy(), expected(True))
    r = qd.explain(k)
    assert r.mode == "per_offload" and r.fallback is None
    assert [(x.name, x.reason) for x in r.interface] == [("snap", "overwritten_reread")]


@pytest.mark.parametrize("through_element", [True, False])
def test_snapshot_member_overwritten_falls_back_naming_the_member(through_element: bool) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, split_carried=False)
    k, _, out = make(writes_a=True, through_element=through_element)
    k()
    np.testing.assert_array_equal(out.to_numpy(), expected(True))
    r = qd.explain(k)
    assert r.mode == "whole_kernel"
    assert r.fallback.code == "overwritten_reread"
    assert "`s.a` is read at line" in r.fallback.message, r.fallback.message


@pytest.mark.parametrize("writes_a", [True, False])
def test_paths_agree_bit_for_bit(writes_a: bool) -> None:
    results = []
    for opts in ({}, {"per_offload": False}, {"split_carried": False}):
        qd.init(arch=qd.cpu, offline_cache=False, **opts)
        k, s, out = make(writes_a=writes_a, through_element=True)
        k()
        results.append((out.to_numpy(), s.a.to_numpy(), s.b.to_numpy()))
    for other in results[1:]:
        for x, y in zip(results[0], other):
            np.testing.assert_array_equal(x, y)
