"""`qd.algorithms`' reduce, exclusive scan, select and reduce-by-key (composed at a kernel's top
level, as the reference's) against NumPy for every element dtype, on fields and ndarrays, at
counts 0, 1, odd and past one 256-tile level, with a count shorter than the arrays; float sums bit
for bit too, since qdlab adds left to right in the dtype. `PrefixSumExecutor`, the public names
and the `*_scratch_slots` sizes and errors are the values the real quadrants 1.3.3 gives on the
CPU (measured, written as literals). Quadrants' CPU backend refuses the in-kernel ops themselves
(`qd.block.sync is not supported for arch Arch.x64`); qdlab runs them (docs/lang/algorithms.md)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import qdlab as qd

A = qd.algorithms
DTYPES = [
    (qd.i32, np.int32),
    (qd.u32, np.uint32),
    (qd.f32, np.float32),
    (qd.i64, np.int64),
    (qd.u64, np.uint64),
    (qd.f64, np.float64),
]
IDS = [d[1].__name__ for d in DTYPES]
ND = qd.types.ndarray()
CAPACITY = 70_001  # past 256**2: a three-level staircase in the reference
COUNTS = (0, 1, 257, 69_999)
UFUNC = {"add": np.add, "min": np.minimum, "max": np.maximum}
IDENTITY = {  # what the reference's identity tables give for out[0] and an empty reduce
    "min": {np.int32: 2**31 - 1, np.uint32: 2**32 - 1, np.int64: 2**63 - 1, np.uint64: 2**64 - 1},
    "max": {np.int32: -(2**31), np.uint32: 0, np.int64: -(2**63), np.uint64: 0},
}


@pytest.fixture(autouse=True)
def _init() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)


def _data(npdt: type, n: int, seed: int = 3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.dtype(npdt).kind == "f":
        return rng.uniform(-10, 10, n).astype(npdt)
    if np.dtype(npdt).kind == "u":  # large enough to wrap in the sums
        return rng.integers(0, np.iinfo(npdt).max, n, dtype=npdt)
    return rng.integers(np.iinfo(npdt).min, np.iinfo(npdt).max, n, dtype=npdt)


def _identity(op: str, npdt: type) -> object:
    if op == "add":
        return npdt(0)
    if np.dtype(npdt).kind == "f":
        return npdt(np.inf if op == "min" else -np.inf)
    return npdt(IDENTITY[op][npdt])


def _exclusive(op: str, host: np.ndarray) -> np.ndarray:
    """NumPy's accumulate in the dtype (wrapping, left to right), shifted by one."""
    with np.errstate(over="ignore"):
        acc = UFUNC[op].accumulate(host, dtype=host.dtype)
    return np.concatenate([[_identity(op, host.dtype.type)], acc[:-1]]).astype(host.dtype)


@pytest.mark.parametrize("op", ["add", "min", "max"])
@pytest.mark.parametrize(("dt", "npdt"), DTYPES, ids=IDS)
def test_reduce_and_scan_match_numpy_on_fields(op: str, dt: object, npdt: type) -> None:
    host = _data(npdt, CAPACITY)
    arr, out, one = qd.field(dt, CAPACITY), qd.field(dt, CAPACITY), qd.field(dt, 1)
    wide = qd.u32 if np.dtype(npdt).itemsize == 4 else qd.u64
    scratch = qd.field(wide, A.exclusive_scan_scratch_slots(CAPACITY, 3))
    count = qd.field(qd.i32, 1)
    arr.from_numpy(host)
    reduce_op, scan_op = getattr(A, f"reduce_{op}"), getattr(A, f"exclusive_scan_{op}")

    @qd.kernel
    def run(dtype: qd.template(), log256_max_n: qd.template()):
        reduce_op(arr, one, scratch, count[0], dtype, log256_max_n)
        scan_op(arr, out, scratch, count[0], dtype, log256_max_n)

    sentinel = host[::-1].copy()
    for n in COUNTS:
        out.from_numpy(sentinel)
        count[0] = n
        run(dt, 3)
        want = _exclusive(op, host[: n + 1])  # its last element is the reduce of host[:n]
        got = out.to_numpy()
        np.testing.assert_array_equal(got[:n], want[:n], err_msg=f"scan n={n}")
        np.testing.assert_array_equal(got[n:], sentinel[n:], err_msg=f"scan tail n={n}")
        assert one.to_numpy()[0] == want[n], f"reduce n={n}"


@pytest.mark.parametrize(("dt", "npdt"), DTYPES, ids=IDS)
def test_scan_of_ndarrays_in_place_and_with_a_0d_count(dt: object, npdt: type) -> None:
    """`out` may be `arr` (each element is read before it is written); a smaller
    `log256_max_n` than the count needs is the reference's undefined behaviour, here still the
    whole scan."""
    host = _data(npdt, 600, seed=5)
    a = qd.ndarray(dt, 600)
    scratch = qd.ndarray(qd.u32, 1)
    n = qd.ndarray(qd.i32, ())
    a.from_numpy(host)
    n[()] = 600

    @qd.kernel
    def run(a: qd.types.ndarray(), s: qd.types.ndarray(), n: qd.types.ndarray()):
        A.exclusive_scan_add(a, a, s, n[()], dt, 1)

    run(a, scratch, n)
    np.testing.assert_array_equal(a.to_numpy(), _exclusive("add", host))


def test_float_min_max_skip_nan_and_empty_gives_the_identity() -> None:
    x = qd.ndarray(qd.f32, 4)
    x.from_numpy(np.array([np.nan, 2.0, -1.0, np.nan], np.float32))
    lo, hi, scan = qd.ndarray(qd.f32, 1), qd.ndarray(qd.f32, 1), qd.ndarray(qd.f32, 4)
    s = qd.ndarray(qd.u32, 1)

    @qd.kernel
    def run(x: qd.types.ndarray(), lo: qd.types.ndarray(), hi: qd.types.ndarray(),
            scan: qd.types.ndarray(), s: qd.types.ndarray(), n: qd.i32):  # fmt: skip
        A.reduce_min(x, lo, s, n, qd.f32, 1)
        A.reduce_max(x, hi, s, n, qd.f32, 1)
        A.exclusive_scan_min(x, scan, s, n, qd.f32, 1)

    run(x, lo, hi, scan, s, 4)
    assert (lo.to_numpy()[0], hi.to_numpy()[0]) == (-1.0, 2.0)
    np.testing.assert_array_equal(scan.to_numpy(), [np.inf, np.inf, 2.0, -1.0])
    run(x, lo, hi, scan, s, 0)
    assert (lo.to_numpy()[0], hi.to_numpy()[0]) == (np.inf, -np.inf)


def _select_reference(arr: np.ndarray, flags: np.ndarray) -> tuple[np.ndarray, int]:
    """The reference's arithmetic: `arr[i]` to `out[flags[0] + ... + flags[i-1]]` where
    `flags[i] != 0`; the count is that sum up to `n - 1` plus one if the last flag is set."""
    out: dict[int, object] = {}
    at = 0
    for v, f in zip(arr, flags, strict=True):
        if f != 0:
            out[at] = v
        at += int(f)
    n = len(flags)
    count = 0 if n == 0 else int(flags[:-1].sum()) + int(flags[-1] != 0)
    return np.array([out[k] for k in sorted(out)]), count


@pytest.mark.parametrize(("dt", "npdt"), DTYPES, ids=IDS)
def test_select_compacts_in_order(dt: object, npdt: type) -> None:
    n_all = 1000
    host = _data(npdt, n_all, seed=9)
    flags_host = (np.random.default_rng(2).random(n_all) < 0.3).astype(np.int32)
    arr, flags, out = qd.field(dt, n_all), qd.field(qd.i32, n_all), qd.field(dt, n_all)
    num_out = qd.field(qd.i32, 1)
    scratch = qd.field(qd.u32, A.select_scratch_slots(n_all))
    count = qd.field(qd.i32, 1)
    arr.from_numpy(host)
    flags.from_numpy(flags_host)

    @qd.kernel
    def run(log256_max_n: qd.template()):
        A.select(arr, flags, out, num_out, scratch, count[0], log256_max_n)

    for n in (0, 1, 257, 999):
        count[0] = n
        run(2)
        want = host[:n][flags_host[:n] == 1]
        got_n = int(num_out.to_numpy()[0])
        assert got_n == len(want)
        np.testing.assert_array_equal(out.to_numpy()[:got_n], want)


def test_select_of_vectors_and_of_flags_other_than_0_and_1() -> None:
    """Flags are summed as counts, as the reference does (it requires 0/1 but does not check)."""
    arr = qd.Vector.field(3, qd.f32, 6)
    arr.from_numpy(np.arange(18, dtype=np.float32).reshape(6, 3))
    flags, out = qd.field(qd.i32, 6), qd.Vector.field(3, qd.f32, 8)
    num_out, scratch = qd.field(qd.i32, 1), qd.field(qd.u32, 8)
    flags_host = np.array([2, 0, 1, 0, 1, 3], np.int32)
    flags.from_numpy(flags_host)

    @qd.kernel
    def run():
        A.select(arr, flags, out, num_out, scratch, 6, 1)

    run()
    rows, count = _select_reference(np.arange(6), flags_host)
    assert num_out.to_numpy()[0] == count == 5
    np.testing.assert_array_equal(rows, [0, 2, 4, 5])
    got = out.to_numpy()
    for at, row in zip([0, 2, 3, 4], rows, strict=True):
        np.testing.assert_array_equal(got[at], np.arange(18).reshape(6, 3)[row])


def _runs(keys: np.ndarray, values: np.ndarray) -> tuple[list, list]:
    out_k: list = []
    out_v: list = []
    for i, (k, v) in enumerate(zip(keys, values, strict=True)):
        if i == 0 or k != keys[i - 1]:
            out_k.append(k)
            out_v.append(v)
        else:
            out_v[-1] = (out_v[-1] + v).astype(values.dtype)
    return out_k, out_v


@pytest.mark.parametrize("key_np", [np.int32, np.float32])
@pytest.mark.parametrize("val_np", [np.int32, np.float32, np.float64])
def test_reduce_by_key_add_collapses_runs(key_np: type, val_np: type) -> None:
    rng = np.random.default_rng(11)
    n_all = 2000
    keys_host = np.repeat(rng.integers(-5, 5, 900), rng.integers(1, 6, 900))[:n_all]
    keys_host = keys_host.astype(key_np)
    if key_np is np.float32:
        keys_host[[3, 4, 5]] = np.nan  # each NaN is a run of its own
    vals_host = rng.uniform(-1, 1, n_all) if val_np is not np.int32 else rng.integers(-9, 9, n_all)
    vals_host = vals_host.astype(val_np)
    key_dt = {np.int32: qd.i32, np.float32: qd.f32}[key_np]
    val_dt = {np.int32: qd.i32, np.float32: qd.f32, np.float64: qd.f64}[val_np]
    keys_in, values_in = qd.ndarray(key_dt, n_all), qd.ndarray(val_dt, n_all)
    keys_out, values_out = qd.ndarray(key_dt, n_all), qd.ndarray(val_dt, n_all)
    num_runs = qd.ndarray(qd.i32, 1)
    scratch = qd.ndarray(qd.u32, A.reduce_by_key_scratch_slots(n_all))
    keys_in.from_numpy(keys_host)
    values_in.from_numpy(vals_host)

    @qd.kernel
    def run(ki: ND, vi: ND, ko: ND, vo: ND, nr: ND, s: ND, n: qd.i32):
        A.reduce_by_key_add(ki, vi, ko, vo, nr, s, n, val_dt, 2)

    for n in (0, 1, 7, 1999):
        keys_out.fill(7)
        values_out.fill(5)
        run(keys_in, values_in, keys_out, values_out, num_runs, scratch, n)
        want_k, want_v = _runs(keys_host[:n], vals_host[:n])
        runs = int(num_runs.to_numpy()[0])
        assert runs == len(want_k)
        np.testing.assert_array_equal(keys_out.to_numpy()[:runs], want_k)
        np.testing.assert_array_equal(keys_out.to_numpy()[runs:], 7)  # untouched
        np.testing.assert_array_equal(values_out.to_numpy()[:runs], want_v)
        np.testing.assert_array_equal(values_out.to_numpy()[runs:n], 0)  # zeroed, as there
        np.testing.assert_array_equal(values_out.to_numpy()[max(n, runs) :], 5)


def test_compile_time_errors_name_the_callers_line() -> None:
    a, s = qd.ndarray(qd.f32, 4), qd.ndarray(qd.u32, 1)
    h = qd.ndarray(qd.f16, 4)

    @qd.kernel
    def too_deep(a: qd.types.ndarray(), s: qd.types.ndarray()):
        A.exclusive_scan_add(a, a, s, 4, qd.f32, 5)

    @qd.kernel
    def half(a: qd.types.ndarray(), s: qd.types.ndarray()):
        A.reduce_add(a, a, s, 4, qd.f16, 1)

    @qd.kernel
    def nested(a: qd.types.ndarray(), s: qd.types.ndarray()):
        for _ in range(2):
            A.reduce_max(a, a, s, 4, qd.f32, 1)

    with pytest.raises(ValueError, match=r"log256_max_n=5 exceeds the maximum of 4\.") as e:
        too_deep(a, s)
    assert isinstance(e.value, qd.QuadrantsCompilationError)
    assert "A.exclusive_scan_add(a, a, s, 4, qd.f32, 5)" in str(e.value)
    with pytest.raises(NotImplementedError, match="device reduce dtype f16 not supported") as e:
        half(h, s)
    assert "A.reduce_add(a, a, s, 4, qd.f16, 1)" in str(e.value)
    with pytest.raises(qd.QuadrantsCompilationError, match="requires_top_level"):
        nested(a, s)


def test_prefix_sum_executor_is_the_references() -> None:
    """Its warning and errors are Quadrants' words; its buffer layout (`ele_nums`, `ele_nums_pos`)
    the reference's for these lengths; `run` the inclusive i32 sum (wrapping)."""
    with pytest.warns(DeprecationWarning, match=r"PrefixSumExecutor is deprecated\. Use "):
        p = A.PrefixSumExecutor(1000)
    assert (p.sorting_length, p.ele_nums, p.ele_nums_pos) == (1000, [1000, 16, 1], [0, 1024, 1088])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        big = A.PrefixSumExecutor(100_000)
        assert big.ele_nums == [100000, 1563, 25, 1]
        assert big.ele_nums_pos == [0, 100032, 101632, 101696]
        assert A.PrefixSumExecutor(65).ele_nums_pos == [0, 128, 192]
        with pytest.raises(RuntimeError, match="Every dimension of a Quadrants field"):
            A.PrefixSumExecutor(1)
        host = np.random.default_rng(4).integers(-(2**31), 2**31 - 1, 1200, dtype=np.int32)
        for x in (qd.field(qd.i32, 1200), qd.ndarray(qd.i32, 1200)):
            x.from_numpy(host)
            p.run(x)
            want = np.concatenate([np.cumsum(host[:1000], dtype=np.int32), host[1000:]])
            np.testing.assert_array_equal(x.to_numpy(), want)
        with pytest.raises(
            RuntimeError, match=r"^Only qd\.i32 type is supported for prefix sum\.$"
        ):
            p.run(qd.field(qd.f32, 1000))
        with pytest.raises(IndexError, match="at least the executor's 1000 elements"):
            p.run(qd.field(qd.i32, 999))


def test_public_names_are_the_references() -> None:
    public = sorted(s for s in dir(A) if not s.startswith("_"))
    assert (
        public
        == sorted(A.__all__)
        == [
            "PrefixSumExecutor",
            "exclusive_scan_add",
            "exclusive_scan_max",
            "exclusive_scan_min",
            "exclusive_scan_scratch_slots",
            "parallel_sort",
            "reduce_add",
            "reduce_by_key_add",
            "reduce_by_key_scratch_slots",
            "reduce_max",
            "reduce_min",
            "reduce_scratch_slots",
            "select",
            "select_scratch_slots",
            "sort",
            "sort_scratch_slots",
        ]
    )


# n: reduce, exclusive_scan, select, reduce_by_key, sort (automatic depth), from quadrants 1.3.3
SLOTS = {
    0: (1, 1, 1, 1, 1),
    1: (1, 1, 2, 1, 256),
    2: (1, 1, 3, 2, 256),
    255: (1, 1, 256, 255, 256),
    256: (1, 1, 257, 256, 256),
    257: (2, 2, 259, 259, 514),
    1000: (4, 4, 1004, 1004, 1028),
    65536: (256, 256, 65792, 65792, 65792),
    65537: (259, 259, 65796, 65796, 66051),
    1_000_000: (3923, 3923, 1003923, 1003923, 1004115),
    2**24: (65792, 65792, 16843008, 16843008, 16843008),
    2**24 + 1: (65796, 65796, 16843013, 16843013, 16843268),
}
# n: (reduce, exclusive_scan, sort) at log256_max_n = 1, 2, 3, 4
SLOTS_AT_DEPTH = {
    0: [(1, 1, 1)] * 4,
    1: [(1, 1, 256), (1, 1, 257), (2, 2, 258), (3, 3, 259)],
    300: [(1, 1, 512), (2, 2, 514), (3, 3, 515), (4, 4, 516)],
    70000: [(1, 1, 70144), (274, 274, 70418), (276, 276, 70420), (277, 277, 70421)],
}


def test_scratch_slots_are_the_references() -> None:
    for n, want in SLOTS.items():
        got = (
            A.reduce_scratch_slots(n),
            A.exclusive_scan_scratch_slots(n),
            A.select_scratch_slots(n),
            A.reduce_by_key_scratch_slots(n),
            A.sort_scratch_slots(n),
        )
        assert got == want, n
    for n, want in SLOTS_AT_DEPTH.items():
        got = [
            (
                A.reduce_scratch_slots(n, d),
                A.exclusive_scan_scratch_slots(n, d),
                A.sort_scratch_slots(n, d),
            )
            for d in (1, 2, 3, 4)
        ]
        assert got == want, n
    # below 1 and negative counts: what the reference's arithmetic gives
    assert (A.reduce_scratch_slots(5, 0), A.exclusive_scan_scratch_slots(5, 0)) == (1, 1)
    assert A.sort_scratch_slots(5, 0) == 256
    assert [f(-3) for f in (A.reduce_scratch_slots, A.select_scratch_slots)] == [1, 1]
    assert A.reduce_by_key_scratch_slots(-3) == A.exclusive_scan_scratch_slots(-3) == 1
    for f in (A.reduce_scratch_slots, A.exclusive_scan_scratch_slots, A.sort_scratch_slots):
        with pytest.raises(
            ValueError, match=r"^log256_max_n=5 exceeds the maximum of 4\. Quadrants"
        ):
            f(5, 5)
    with pytest.raises(TypeError, match="takes 1 positional argument but 2 were given"):
        slots: Any = A.select_scratch_slots
        slots(5, 2)


def test_scratch_slots_in_a_kernel_on_a_count_it_reads() -> None:
    """The helpers are branch-free, so (with the depth given) a kernel computes them on a count
    it reads; the values are the real quadrants' from the same kernel."""
    count, got = qd.field(qd.i32, 1), qd.field(qd.i32, 5)

    @qd.kernel
    def slots():
        got[0] = A.reduce_scratch_slots(count[0], 3)
        got[1] = A.exclusive_scan_scratch_slots(count[0], 3)
        got[2] = A.select_scratch_slots(count[0])
        got[3] = A.reduce_by_key_scratch_slots(count[0])
        got[4] = A.sort_scratch_slots(count[0], 3)

    want = {
        0: [1, 1, 1, 1, 1],
        1: [2, 2, 2, 1, 258],
        257: [3, 3, 259, 259, 515],
        70000: [276, 276, 70276, 70276, 70420],
        1_000_000: [3923, 3923, 1003923, 1003923, 1004115],
    }
    for n, slots_n in want.items():
        count[0] = n
        slots()
        assert got.to_numpy().tolist() == slots_n, n
