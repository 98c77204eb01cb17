"""`qd.atomic_cas(dest, expected, desired)` on array elements (ndarrays, fields, an ndarray of
vectors' entry), on every path: one atomic compare-and-swap that gives the old value, checked
against NumPy and values measured on the reference; a float dest or value is refused in
Quadrants' words (a QuadrantsTypeError)."""

import numpy as np
import pytest

import qdlab as qd

CAS_INT = "'atomic_cas' requires integer operands, got dest '\\*{}' and val '{}'."


@pytest.fixture(params=["split", "whole", "debug"])
def mode(request: pytest.FixtureRequest) -> str:
    qd.init(
        arch=qd.cpu,
        offline_cache=False,
        per_offload=request.param != "whole",
        debug=request.param == "debug",
    )
    return request.param


def test_cas_on_elements_swaps_only_what_holds_expected(mode: str) -> None:
    @qd.kernel
    def swap(b: qd.types.ndarray(qd.i64, ndim=1)) -> qd.i64:
        o1 = qd.atomic_cas(b[0], 0, 5)  # holds 0: swapped
        o2 = qd.atomic_cas(b[1], 9, 5)  # holds 3: left
        return o1 * 100 + o2

    b = np.array([0, 3, 0], np.int64)
    assert swap(b) == 3  # as the reference: the old values 0 and 3
    np.testing.assert_array_equal(b, [5, 3, 0])


def test_a_cas_loop_computes_the_maximum_and_one_claim_wins_per_slot(mode: str) -> None:
    best = qd.field(qd.i32, shape=())
    owner = qd.field(qd.u32, shape=4)
    v = qd.Vector.ndarray(2, qd.i32, shape=2)

    @qd.kernel
    def maximum(c: qd.types.ndarray(qd.i32, ndim=1)):
        for i in c:
            for _ in range(1000):
                cur = best[None]
                if qd.atomic_cas(best[None], cur, qd.max(cur, c[i])) == cur:
                    break

    @qd.kernel
    def claim(n: qd.i32, w: qd.types.ndarray(qd.i32, ndim=1)):
        for i in range(n):
            if qd.atomic_cas(owner[i % 4], 0, i + 1) == 0:
                qd.atomic_add(w[i % 4], 1)

    @qd.kernel
    def entry(v: qd.types.ndarray(qd.math.ivec2, ndim=1)) -> qd.i32:
        return qd.atomic_cas(v[1][1], 0, 7)

    c = (np.arange(5000, dtype=np.int32) * 7919) % 4999
    maximum(c)
    assert best[None] == c.max()
    wins = np.zeros(4, np.int32)
    claim(400, wins)
    np.testing.assert_array_equal(wins, 1)
    assert ((owner.to_numpy() - 1) % 4 == np.arange(4)).all()
    assert entry(v) == 0 and v.to_numpy()[1, 1] == 7


def test_float_operands_are_refused_as_the_reference_refuses_them() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    f = qd.field(qd.f32, shape=2)

    @qd.kernel
    def float_dest():
        qd.atomic_cas(f[0], 1.0, 2.0)

    @qd.kernel
    def float_value(b: qd.types.ndarray(qd.i32, ndim=1)):
        qd.atomic_cas(b[0], 1, 2.5)

    @qd.kernel
    def bit_and():
        qd.atomic_and(f[0], 1.0)

    with pytest.raises(qd.QuadrantsTypeError, match=CAS_INT.format("f32", "f32")):
        float_dest()
    with pytest.raises(qd.QuadrantsTypeError, match=CAS_INT.format("i32", "f32")):
        float_value(np.zeros(2, np.int32))
    with pytest.raises(qd.QuadrantsTypeError, match="'atomic_bit_and' requires integer"):
        bit_and()
