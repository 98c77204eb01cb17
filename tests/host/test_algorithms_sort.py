"""`qd.algorithms.sort` (composed at a kernel's top level) against NumPy's stable argsort, for every
key dtype, with values, a device-resident count shorter than the arrays (the tail untouched), on
the default split and the whole kernel; an odd pass count leaves the result in `tmp_keys`, as
the reference defines; `sort_scratch_slots` is the reference's formula."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd

DTYPES = [
    (qd.u32, np.uint32, 32),
    (qd.i32, np.int32, 32),
    (qd.f32, np.float32, 32),
    (qd.u64, np.uint64, 64),
    (qd.i64, np.int64, 64),
    (qd.f64, np.float64, 64),
]


def _keys(npdt: type, n: int) -> np.ndarray:
    rng = np.random.default_rng(1)
    if npdt in (np.uint32, np.uint64):
        return rng.integers(0, 2**31, n).astype(npdt) * npdt(3)
    k = (rng.standard_normal(n) * 1e6).astype(npdt)
    k[::7] = k[3]  # ties: the sort must be stable
    return k


def _run(dt: object, npdt: type, end_bit: int, n_total: int, count: int, mode: dict) -> tuple:
    qd.init(arch=qd.cpu, offline_cache=False, **mode)
    k = _keys(npdt, n_total)
    keys, tmp = qd.ndarray(dt, shape=n_total), qd.ndarray(dt, shape=n_total)
    vals, tmpv = qd.ndarray(qd.i32, shape=n_total), qd.ndarray(qd.i32, shape=n_total)
    scratch = qd.ndarray(qd.u32, shape=qd.algorithms.sort_scratch_slots(n_total, 2))
    n = qd.ndarray(qd.i32, shape=())
    keys.from_numpy(k)
    vals.from_numpy(np.arange(n_total, dtype=np.int32))
    n[()] = count

    @qd.kernel
    def go(
        keys: qd.types.ndarray(),
        tmp: qd.types.ndarray(),
        vals: qd.types.ndarray(),
        tmpv: qd.types.ndarray(),
        scratch: qd.types.ndarray(),
        n: qd.types.ndarray(),
    ):
        qd.algorithms.sort(keys, tmp, vals, tmpv, scratch, n, dt, True, end_bit, 2)

    go(keys, tmp, vals, tmpv, scratch, n)
    return k, keys.to_numpy(), vals.to_numpy()


@pytest.mark.parametrize("mode", [{}, {"per_offload": False}], ids=["split", "whole"])
@pytest.mark.parametrize(
    ("dt", "npdt", "end_bit"), DTYPES, ids=[str(d[1].__name__) for d in DTYPES]
)
def test_sort_matches_numpy_stable_argsort(
    dt: object, npdt: type, end_bit: int, mode: dict
) -> None:
    k, got, vals = _run(dt, npdt, end_bit, 700, 690, mode)
    order = np.argsort(k[:690], kind="stable")
    assert np.array_equal(got[:690], k[:690][order])
    assert np.array_equal(vals[:690], order)
    assert np.array_equal(got[690:], k[690:]) and np.array_equal(vals[690:], np.arange(690, 700))


def test_sort_of_the_low_bits_only_and_empty_count() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    k = np.array([0x0102, 0x0201, 0x0301, 0x0002], np.uint32)
    keys, tmp = qd.ndarray(qd.u32, shape=4), qd.ndarray(qd.u32, shape=4)
    scratch = qd.ndarray(qd.u32, shape=qd.algorithms.sort_scratch_slots(4))
    n = qd.ndarray(qd.i32, shape=())
    keys.from_numpy(k)
    n[()] = 4

    @qd.kernel
    def low16(
        keys: qd.types.ndarray(),
        tmp: qd.types.ndarray(),
        scratch: qd.types.ndarray(),
        n: qd.types.ndarray(),
    ):
        qd.algorithms.sort(keys, tmp, keys, tmp, scratch, n, qd.u32, False, 16, 1)

    @qd.kernel
    def low8(
        keys: qd.types.ndarray(),
        tmp: qd.types.ndarray(),
        scratch: qd.types.ndarray(),
        n: qd.types.ndarray(),
    ):
        qd.algorithms.sort(keys, tmp, keys, tmp, scratch, n, qd.u32, False, 8, 1)

    low16(keys, tmp, scratch, n)
    assert keys.to_numpy().tolist() == sorted(k.tolist())
    keys.from_numpy(k)
    low8(keys, tmp, scratch, n)  # one pass: the result is in tmp, ordered by the low byte, stable
    assert tmp.to_numpy().tolist() == [0x0201, 0x0301, 0x0102, 0x0002]
    n[()] = 0
    one = qd.ndarray(qd.u32, shape=qd.algorithms.sort_scratch_slots(0))
    keys.from_numpy(k)
    low16(keys, tmp, one, n)
    assert keys.to_numpy().tolist() == k.tolist()


def test_scratch_slots_are_the_references() -> None:
    # hist_len = ceil(n / 256) * 256, plus one partial per 256 entries a level, at least one slot
    assert qd.algorithms.sort_scratch_slots(0) == 1
    assert qd.algorithms.sort_scratch_slots(1) == 256
    assert qd.algorithms.sort_scratch_slots(1000, 2) == 1024 + 4
    assert (
        qd.algorithms.sort_scratch_slots(70000) == 274 * 256 + 274 + 2
    )  # 70420, as quadrants 1.3.3 gives
    with pytest.raises(ValueError, match="log256_max_n=5"):
        qd.algorithms.sort_scratch_slots(10, 5)
