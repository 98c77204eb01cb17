"""`qd.algorithms.parallel_sort(keys, values)` against NumPy: keys end sorted as `np.sort` sorts
them; with distinct keys the values follow NumPy's stable argsort; with equal keys (and NaN) the
bits are those of Quadrants' odd-even merge sort network, run here as a NumPy oracle one stage at
a time (and checked against an order measured on quadrants 1.3.3). Random dtypes, lengths across
the network kernels' blocks, fields (with offsets) and ndarrays, both paths (host sort,
network kernels); the errors and the deprecation warning."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import qdlab as qd
from qdlab.algorithms import _merge_network as merge_network

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

KEY_DTYPES = {
    "i32": (qd.i32, np.int32),
    "u32": (qd.u32, np.uint32),
    "f32": (qd.f32, np.float32),
    "i64": (qd.i64, np.int64),
    "f64": (qd.f64, np.float64),
    "u8": (qd.u8, np.uint8),
    "i16": (qd.i16, np.int16),
}
VALUE_DTYPES = {"i32": (qd.i32, np.int32), "f32": (qd.f32, np.float32), "u8": (qd.u8, np.uint8)}

TIES_37 = [4, 5, 8, 30, 18, 19, 28, 33, 9, 14, 11, 15, 29, 31, 25, 26, 0, 35, 34, 12, 17, 1]
TIES_37 += [23, 16, 13, 7, 10, 22, 20, 21, 24, 27, 2, 3, 6, 32, 36]
"""The values after quadrants 1.3.3 sorts the keys `default_rng(1).integers(0, 4, 37)` (i32)
with values 0..36: not NumPy's stable order."""


def network_oracle(keys: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Quadrants' `parallel_sort`: every stage `(p, k)` of the odd-even merge sort network, its
    comparators `(a, a + k)` at once (they are disjoint), swapping where `keys[a] > keys[b]`."""
    k, v = keys.copy(), values.copy()
    n = len(k)
    p = 1
    while p < n:
        step = p
        while step >= 1:
            a = np.arange(n)
            a = a[(a % (2 * step) < step) if step == p else (a % (2 * step) >= step)]
            b = a + step
            keep = (b < n) & (a // (2 * p) == b // (2 * p))
            a, b = a[keep], b[keep]
            swap = k[a] > k[b]
            a, b = a[swap], b[swap]
            k[a], k[b] = k[b], k[a].copy()
            v[a], v[b] = v[b], v[a].copy()
            step //= 2
        p *= 2
    return k, v


@pytest.fixture(autouse=True)
def _cpu():
    qd.init(arch=qd.cpu, offline_cache=False)
    yield


def _keys(rng: np.random.Generator, npdt: type, n: int, spread: int) -> np.ndarray:
    """`n` keys of `npdt` drawn from `spread` (at most `n`) candidates: ties when it is small;
    floats get a NaN and signed zeros now and then."""
    info = np.iinfo(npdt) if np.issubdtype(npdt, np.integer) else None
    low, high = (info.min, info.max) if info is not None else (-1e6, 1e6)
    pool = rng.uniform(max(low, -1e6), min(high, 1e6), min(spread, n))
    keys = pool[rng.integers(0, len(pool), n)].astype(npdt)
    if info is None and n > 3 and rng.random() < 0.5:
        keys[rng.integers(0, n, 3)] = [np.nan, -0.0, 0.0]
    return keys


def _sort(keys: np.ndarray, values: np.ndarray | None, dt: object, vdt: object, kind: str, off):
    n = len(keys)
    if kind == "field":
        k = qd.field(dt, n, offset=off)
        v = None if values is None else qd.field(vdt, len(values), offset=off)
    else:
        k = qd.ndarray(dt, n)
        v = None if values is None else qd.ndarray(vdt, len(values))
    k.from_numpy(keys)
    if v is not None:
        v.from_numpy(values)
    qd.algorithms.parallel_sort(k, v)
    return k.to_numpy(), None if v is None else v.to_numpy()


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    key=st.sampled_from(sorted(KEY_DTYPES)),
    value=st.sampled_from(sorted(VALUE_DTYPES) + ["none"]),
    n=st.sampled_from([1, 2, 3, 5, 31, 64, 257, 1000, 4096, 5003]),
    spread=st.sampled_from([2, 50, 10**9]),
    kind=st.sampled_from(["field", "ndarray"]),
    seed=st.integers(0, 2**16),
)
def test_parallel_sort_equals_numpy_and_the_network(key, value, n, spread, kind, seed) -> None:
    dt, npdt = KEY_DTYPES[key]
    rng = np.random.default_rng(seed)
    keys = _keys(rng, npdt, n, spread)
    vdt, vnp = VALUE_DTYPES.get(value, (None, None))
    values = None if vnp is None else rng.permutation(n).astype(vnp)
    off = int(rng.integers(-300, 300)) if kind == "field" else None
    got_k, got_v = _sort(keys, values, dt, vdt, kind, off)
    assert np.array_equal(np.sort(got_k), np.sort(keys), equal_nan=True)  # a permutation
    if not np.isnan(keys.astype(np.float64)).any():
        assert np.array_equal(got_k, np.sort(keys))
    oracle_k, oracle_v = network_oracle(keys, np.arange(n) if values is None else values)
    assert np.array_equal(got_k.view(f"u{keys.itemsize}"), oracle_k.view(f"u{keys.itemsize}"))
    if values is not None:
        assert np.array_equal(got_v, oracle_v)
        if len(np.unique(keys)) == n and not np.isnan(keys.astype(np.float64)).any():
            assert np.array_equal(got_v, values[np.argsort(keys, kind="stable")])


@pytest.mark.parametrize("block_bits", [1, 3, 12])
def test_the_network_kernels_are_the_network(monkeypatch, block_bits) -> None:
    """The kernels alone (block size varied), on ties and NaN, against the oracle."""
    monkeypatch.setattr(merge_network, "BLOCK_BITS", block_bits)
    rng = np.random.default_rng(block_bits)
    for n in (2, 7, 100, 1029, 9000):
        keys = rng.integers(0, 5, n).astype(np.float32)
        keys[::7] = np.nan
        idx = np.arange(n, dtype=np.int32)
        got = keys.copy()
        merge_network.network(got, idx)
        want_k, want_i = network_oracle(keys, np.arange(n, dtype=np.int32))
        assert np.array_equal(got, want_k, equal_nan=True) and np.array_equal(idx, want_i), n


def test_equal_keys_keep_quadrants_order() -> None:
    keys = np.random.default_rng(1).integers(0, 4, 37).astype(np.int32)
    k, v = qd.field(qd.i32, 37), qd.field(qd.i32, 37)
    k.from_numpy(keys)
    v.from_numpy(np.arange(37, dtype=np.int32))
    qd.algorithms.parallel_sort(k, v)
    assert v.to_numpy().tolist() == TIES_37
    assert np.array_equal(k.to_numpy(), np.sort(keys))


def test_values_longer_than_keys_keep_their_tail() -> None:
    k, v = qd.field(qd.i32, 5), qd.field(qd.f32, 8)
    k.from_numpy(np.array([3, 1, 2, 5, 4], np.int32))
    v.from_numpy(np.arange(8, dtype=np.float32))
    qd.algorithms.parallel_sort(k, v)
    assert v.to_numpy().tolist() == [1, 2, 0, 4, 3, 5, 6, 7]  # as quadrants 1.3.3


def test_vector_values_move_whole() -> None:
    k, v = qd.field(qd.f32, 4), qd.Vector.field(2, qd.i32, 4)
    k.from_numpy(np.array([2.0, 0.5, 1.0, -1.0], np.float32))
    v.from_numpy(np.arange(8, dtype=np.int32).reshape(4, 2))
    qd.algorithms.parallel_sort(k, v)
    assert v.to_numpy().tolist() == [[6, 7], [2, 3], [4, 5], [0, 1]]


def test_it_warns_as_deprecated() -> None:
    k = qd.field(qd.i32, 3)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        qd.algorithms.parallel_sort(k)
    assert [w.category for w in got] == [DeprecationWarning]
    assert "qd.algorithms.sort" in str(got[0].message)


def test_bad_arguments_are_named() -> None:
    with pytest.raises(qd.QuadrantsIndexError, match="keys must be 1-D"):
        qd.algorithms.parallel_sort(qd.field(qd.i32, (2, 3)))
    with pytest.raises(qd.QuadrantsTypeError, match="scalars"):
        qd.algorithms.parallel_sort(qd.Vector.field(2, qd.f32, 4))
    with pytest.raises(qd.QuadrantsIndexError, match="at least as many"):
        qd.algorithms.parallel_sort(qd.field(qd.i32, 5), qd.field(qd.i32, 3))
    with pytest.raises(qd.QuadrantsTypeError, match="qd.field or qd.ndarray"):
        qd.algorithms.parallel_sort(np.zeros(3, np.int32))
