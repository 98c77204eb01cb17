"""Integer `//` and `%` in kernels, against what the real quadrants 1.3.3 computes on the CPU:
it floors at run time (and Python folds two Python ints, so it floors those too), but folds two
i32/i64 constants of the kernel (a local assigned a literal, `qd.i32(7)`, a sum of such) toward
zero, as C divides. Floats floor everywhere."""

from __future__ import annotations

import pytest

import qdlab as qd

V = qd.types.vector(2, qd.i32)
V4 = qd.types.vector(4, qd.i32)
PAIRS = [(7, -3), (-7, 3), (-7, -3), (7, 3), (6, -3)]


@pytest.fixture(params=[{}, {"per_offload": False}], ids=["split", "whole"], autouse=True)
def _init(request: pytest.FixtureRequest) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, **request.param)


@pytest.mark.parametrize(("a", "b"), PAIRS)
def test_constants_fold_toward_zero_runtime_floors(a: int, b: int) -> None:

    @qd.kernel
    def consts() -> V4:
        x = a
        y = b
        return V4(x // y, x % y, qd.i32(a) // qd.i32(b), a // b)  # the last: Python's

    @qd.kernel
    def wide() -> qd.types.vector(2, qd.i64):
        return qd.Vector([qd.i64(a) // qd.i64(b), qd.i64(a) % qd.i64(b)])

    @qd.kernel
    def runtime(x: qd.i32, y: qd.i32) -> V4:
        return V4(x // y, x % y, x // b, a % y)

    q, r = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1), 0
    r = a - q * b
    assert [int(v) for v in consts()] == [q, r, q, a // b]
    assert [int(v) for v in wide()] == [q, r]
    assert [int(v) for v in runtime(a, b)] == [a // b, a % b, a // b, a % b]


def test_recorded_reference_cases() -> None:
    """Each value is the reference's output for the same kernel."""
    f = qd.field(qd.i32, shape=2)

    @qd.kernel
    def in_loop():
        for i in range(2):
            x = -7
            y = 2
            f[i] = x // y + 100 * (x % y)

    @qd.kernel
    def folded_sum() -> V:
        x = -8
        y = 3
        return V((x + 1) // y, (x + 1) % y)

    @qd.kernel
    def static_unrolled() -> V:
        x = -7
        s = 0
        for j in qd.static(range(2)):
            s += x // (j + 2)
        return V(s, x % 2)

    @qd.kernel
    def loop_index_divisor() -> V:
        x = -7
        s = 0
        for j in range(2, 3):
            s += x // j  # j is known only at run time: floors
        return V(s, x % 2)

    @qd.kernel
    def vector_entries() -> V:
        v = qd.Vector([-7, 7])
        w = v // 2
        u = v % -2
        return V(w[0] + 100 * w[1], u[0] + 100 * u[1])

    @qd.kernel
    def literals() -> V:
        x = -7
        return V(-7 // 2, x // 2)

    @qd.kernel
    def floats() -> qd.types.vector(2, qd.f32):
        x = -7.5
        y = 2.0
        return qd.Vector([x // y, x % y])

    @qd.kernel
    def narrow() -> qd.types.vector(2, qd.i16):
        return qd.Vector([qd.i16(-7) // qd.i16(2), qd.i16(-7) % qd.i16(2)])

    in_loop()
    assert f.to_numpy().tolist() == [-103, -103]
    assert list(folded_sum()) == [-2, -1]
    assert list(static_unrolled()) == [-5, -1]
    assert list(loop_index_divisor()) == [-4, -1]
    assert list(vector_entries()) == [297, 99]
    assert list(literals()) == [-4, -3]
    assert list(floats()) == [-4.0, 0.5]
    assert list(narrow()) == [-4, 1]  # i16 is not folded so: it floors


def test_a_local_assigned_again_divides_as_quadrants() -> None:
    """A local's last constant store is forwarded to its loads (where Quadrants forwards it:
    straight-line code and `if` branches, not into a loop), then folded toward zero; each value
    is the reference's output for the same kernel."""
    f = qd.field(qd.i32, shape=4)

    @qd.kernel
    def two_stores() -> qd.i32:
        x = -7
        x = x + 0
        return x // 2

    @qd.kernel
    def twice() -> qd.i32:
        x = -7
        x //= 2
        x //= 2
        return x

    @qd.kernel
    def reassigned() -> qd.i32:
        x = -7
        x = -9
        return x % 4

    @qd.kernel
    def in_if(c: qd.i32) -> qd.i32:
        x = -7
        y = 0
        if c > 0:
            y = x // 2
        x = 1
        return y

    @qd.kernel
    def into_a_loop():
        x = -7
        for i in range(2):
            f[i] = x // 2  # x is stored again below: read at run time, floored
        x = 5
        f[3] = x

    @qd.kernel
    def carried() -> qd.i32:
        x = -7
        for i in range(1):
            x = x // 2
        return x

    assert two_stores() == -3
    assert twice() == -1
    assert reassigned() == -1
    assert in_if(1) == -3
    into_a_loop()
    assert f.to_numpy().tolist() == [-4, -4, 0, 5]
    assert carried() == -4
