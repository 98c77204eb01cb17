"""Regression tests for wrong answers the split once gave (issue 12): each kernel runs on every path
(split with the interface buffer, whole-kernel, split with reference fallbacks) and must give the
same, correct answer."""

from __future__ import annotations

import numpy as np
import pytest
from paths import PATHS, on_every_path

import qdlab as qd

F32 = qd.types.NDArray[qd.f32, 1]
I32 = qd.types.NDArray[qd.i32, 1]


@qd.kernel
def zero_trip_while(b: F32, m: qd.i32):
    x = 3.0
    j = 0
    while j < m:  # no trips when m == 0: x keeps 3.0
        x = 1.0
        j += 1
    for i in range(b.shape[0]):
        b[i] = x


@pytest.mark.parametrize("m, want", [(0, 3.0), (2, 1.0)])
def test_a_while_that_may_not_write_a_carried_local_hands_on_its_earlier_value(m, want):
    def run():
        b = np.zeros(4, np.float32)
        zero_trip_while(b, m)
        return b.tolist()

    assert on_every_path(run) == {p: [want] * 4 for p in PATHS}
    qd.init(arch=qd.cpu, offline_cache=False)
    zero_trip_while(np.zeros(4, np.float32), m)
    assert qd.explain(zero_trip_while).mode == "per_offload"


@qd.kernel
def best_above(a: F32, b: F32):
    best = -7.0
    qd.loop_config(serialize=True)
    for i in range(a.shape[0]):
        if a[i] > 100.0:  # a conditional write in a serial loop
            best = a[i]
    for i in range(b.shape[0]):
        b[i] = best


@qd.kernel
def maybe_set(b: F32, m: qd.i32):
    x = 5.0
    k = 0
    for i in range(b.shape[0]):
        k += 1  # makes the `if` below read a carried local
    if k > m:  # a top-level `if` without `else`
        x = 2.0
    for i in range(b.shape[0]):
        b[i] = x


def test_a_conditional_write_in_a_serial_loop_keeps_the_earlier_value():
    def run():
        a, b = np.array([1.0, 200.0, 3.0], np.float32), np.zeros(3, np.float32)
        best_above(np.ones(3, np.float32), b)
        first = b.tolist()
        best_above(a, b)
        return first, b.tolist()

    assert on_every_path(run) == {p: ([-7.0] * 3, [200.0] * 3) for p in PATHS}


@pytest.mark.parametrize("m, want", [(10, 5.0), (1, 2.0)])
def test_a_top_level_if_without_else_keeps_the_earlier_value(m, want):
    def run():
        b = np.zeros(3, np.float32)
        maybe_set(b, m)
        return b.tolist()

    assert on_every_path(run) == {p: [want] * 3 for p in PATHS}


@qd.kernel
def compact_even(a: I32, out: I32) -> qd.i32:
    count = 0
    for i in range(a.shape[0]):
        if a[i] % 2 == 0:
            slot = qd.atomic_add(count, 1)  # the old value, taken atomically
            out[slot] = a[i]
    return count


def test_atomic_add_on_a_local_returns_each_old_value_once():
    def run():
        a = np.arange(60_000, dtype=np.int32)
        out = np.full(30_000, -1, np.int32)
        n = compact_even(a, out)
        return n, sorted(out.tolist()) == list(range(0, 60_000, 2))

    assert on_every_path(run) == {p: (30_000, True) for p in PATHS}


@qd.kernel
def local_atomics(a: I32, out: I32):
    prod = 1
    top = 0
    for i in range(a.shape[0]):
        qd.atomic_mul(prod, 1 + (a[i] == 3))  # atomic, not a racy load-multiply-store
        old = qd.atomic_max(top, a[i])
        qd.atomic_add(out[1], old - old)  # the old value is used
    out[0] = prod
    out[2] = top


def test_every_atomic_on_a_local_is_atomic_in_a_parallel_loop():
    def run():
        a = np.zeros(50_000, np.int32)
        a[[7, 9_000, 20_000, 33_333, 49_999]] = 3
        a[12_345] = 6
        out = np.zeros(3, np.int32)
        local_atomics(a, out)
        return out.tolist()

    assert on_every_path(run) == {p: [32, 0, 6] for p in PATHS}


@qd.kernel
def draw_then_copy(a: F32, b: F32, c: F32):
    x = a[0]  # a snapshot the split relies on a and b being disjoint for
    for i in range(b.shape[0]):
        b[i] = qd.random()
    for i in range(c.shape[0]):
        c[i] = x


def test_an_aliased_call_draws_from_the_same_stream_as_every_other_path():
    def run():
        a, b, c = (np.zeros(4, np.float32) for _ in range(3))
        draw_then_copy(a, b, c)
        first = b.copy()
        draw_then_copy(b, b, c)  # aliased: the split path runs its whole-kernel variant
        return first.tolist(), b.tolist(), c.tolist()

    got = on_every_path(run)
    assert got["split"] == got["whole"] == got["reference_fallbacks"]
    first, second, _ = got["split"]
    assert first != second  # the second call draws new numbers


@qd.kernel
def randfill_one(a: F32):
    for i in range(a.shape[0]):
        a[i] = qd.random()


@qd.kernel
def randfill_two(a: F32):
    for i in range(a.shape[0]):
        a[i] = qd.random()


def test_kernels_whose_names_share_a_prefix_draw_different_numbers():
    qd.init(arch=qd.cpu, offline_cache=False)
    a, b = np.zeros(8, np.float32), np.zeros(8, np.float32)
    randfill_one(a)
    randfill_two(b)
    assert not np.array_equal(a, b)


@qd.kernel
def volatile_snapshot(a: F32, c: F32):
    v = qd.volatile_load(a[0])  # read once, before the overwrite
    for i in range(a.shape[0]):
        a[i] = 9.0
    for i in range(c.shape[0]):
        c[i] = v


def test_a_volatile_load_is_not_recomputed_after_an_overwrite():
    def run():
        a, c = np.ones(4, np.float32), np.zeros(4, np.float32)
        volatile_snapshot(a, c)
        return c.tolist()

    assert on_every_path(run) == {p: [1.0] * 4 for p in PATHS}


class Config:
    def __init__(self, scale: float) -> None:
        self.scale = scale

    def __repr__(self) -> str:
        return "Config"  # the same for every instance


@qd.kernel
def scaled(a: F32, cfg: qd.template()):
    for i in range(a.shape[0]):
        a[i] = cfg.scale


def test_template_objects_that_print_alike_are_told_apart_by_content():
    qd.init(arch=qd.cpu, offline_cache=False)
    a = np.zeros(2, np.float32)
    scaled(a, Config(1.0))
    assert a.tolist() == [1.0, 1.0]
    scaled(a, Config(2.0))
    assert a.tolist() == [2.0, 2.0]
    cfg = Config(3.0)
    scaled(a, cfg)
    cfg.scale = 4.0  # mutated between calls: compiled again, never served stale
    scaled(a, cfg)
    assert a.tolist() == [4.0, 4.0]


@qd.func
def bumped(n: qd.i32, flag: qd.i32):
    if flag:
        n = n + 1
    return n


@qd.func
def line_search(phase: qd.i32, alpha: qd.f32) -> qd.f32:
    w = 0
    while phase < 3 and w < 10:  # ends after 3 trips when the parameter advances (10 if not)
        alpha = alpha * 0.5
        phase += 1
        w += 1
    return alpha + phase


@qd.kernel
def param_assigned(out: F32, flags: I32):
    c = 0
    for d in range(3):
        c = bumped(c, 1)
    out[0] = c
    out[1] = bumped(5, 0)
    out[2] = line_search(0, 1.0)
    for i in range(flags.shape[0]):
        out[3 + i] = bumped(i * 10, flags[i])


def test_a_func_parameter_assigned_under_if_or_in_a_loop_is_returned_with_its_new_value():
    """A @qd.func's parameter is a variable of its body (Quadrants copies each into one): the func
    returned the value it had on entry, so Genesis lost every contact and a `while` on it never
    ended."""

    def run():
        out = np.zeros(7, np.float32)
        param_assigned(out, np.array([1, 0, 1, 1], np.int32))
        return out.tolist()

    assert on_every_path(run) == {p: [3, 5, 3.125, 1, 10, 21, 31] for p in PATHS}


@qd.kernel
def carried_then_changed(a: I32):
    m = 0
    for t in range(a.shape[0]):
        m += a[t]
    n = m * 2  # needs m as the first loop left it
    for t in range(3):
        m += 1
    for i in range(a.shape[0]):
        a[i] = a[i] + n


def test_a_carried_local_read_before_a_later_loop_changes_it_keeps_its_earlier_value():
    """`m` is handed over through the interface; the last loop's construct recomputes `n` from it,
    and read the value the middle loop left (the interface holds the latest value only)."""

    def run():
        a = np.array([1, 2, 3], np.int32)
        carried_then_changed(a)
        return a.tolist()

    assert on_every_path(run) == {p: [13, 14, 15] for p in PATHS}


@qd.kernel
def changed_by_a_branch(out: I32, k: qd.i32):
    n = 0
    m = 0
    for t in range(3):
        m += 1
    if k > 0:
        m = m + 4
    else:
        n = 1  # the last construct recomputes this `if` for `n`
    out[0] = k + n * 3 + m


@pytest.mark.parametrize("k, want", [(2, 9), (-1, 5)])
def test_a_statement_another_construct_runs_is_not_recomputed_on_what_it_left(k, want):
    """`m` is handed over; the `if` is a construct of its own, and the last construct's slice ran it
    again on the `m` the interface held, the value the `if` had already changed (13, not 9)."""

    def run():
        out = np.zeros(1, np.int32)
        changed_by_a_branch(out, k)
        return out.tolist()

    assert on_every_path(run) == {p: [want] for p in PATHS}


@qd.kernel
def branch_writes_two_locals(out: I32, k: qd.i32):
    n = k
    m = -5
    if k > 0:
        n, m = m, m  # noqa: PLW0127 -- writes `m`, which the last construct recomputes, and `n`, which it imports
    while n < 4:
        n = n + 4
    out[0] = n + m


@qd.func
def swapped_then_stepped(n: qd.i32, m: qd.i32):
    if (2 * 2) > -2:
        n, m = m, m  # noqa: PLW0127
    w = 0
    while n < 4 and w < 6:
        n = n + 4
        w += 1
    return n * 3 + m


@qd.kernel
def func_branch_writes_two_params(k: qd.i32) -> qd.i32:
    return swapped_then_stepped(k, -5)


@pytest.mark.parametrize("k, want", [(2, 2), (-1, 2), (0, -1)])
def test_a_recomputed_statement_does_not_overwrite_an_imported_local(k, want):
    """`n` is handed over from the `while`; the last construct recomputes the `if` for `m`, and that
    `if` also writes `n`: the interface's value was taken before it and overwritten (-10 for 2, as
    the loop never ran). The slice now takes `n` where the `while` stood. The same in a @qd.func
    whose parameters are reassigned under `if` (found by the random programs, 1,500 of them)."""

    def run():
        out = np.zeros(1, np.int32)
        branch_writes_two_locals(out, k)
        return out.tolist() + [func_branch_writes_two_params(k)]

    assert on_every_path(run) == {p: [want, 16] for p in PATHS}
