"""Comprehensions, dicts and `:=` in kernels, unrolled while compiling as in Quadrants: list and
dict comprehensions (several generators, several `if`s, over a vector's entries or a matrix's rows),
dict literals with `**`, `sum()` of a list, `(a := v)`, `x, y = qd.static(a, b)` and the errors of
a static assignment; split and whole kernel, checked against Python."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd

MODES = [{}, {"per_offload": False}]


@pytest.mark.parametrize("mode", MODES, ids=["split", "whole"])
def test_comprehensions_over_runtime_vectors(mode: dict) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, **mode)
    out = qd.field(qd.f32, shape=(4,))

    @qd.kernel
    def k(n: qd.template(), x: qd.f32):
        m = qd.Matrix([[x * (i + 1) + j for j in range(n)] for i in range(n)])
        col = [row[0] for row in m]
        flat = [e for row in m for e in row]
        out[0] = sum(col)
        out[1] = sum(flat, 100.0)
        sq = {i: i * i for i in range(8) if i % 3 if i % 2}
        out[2] = sum([sq[i] for i in qd.static(sorted(sq))]) + x
        for i in range(1):
            out[3] = (b := x * 2) + b

    k(3, 1.5)
    m = [[1.5 * (i + 1) + j for j in range(3)] for i in range(3)]
    flat = [e for row in m for e in row]
    want = [sum(r[0] for r in m), 100.0 + sum(flat), 1 + 25 + 49 + 1.5, 6.0]
    assert want[:2] == [9.0, 136.0]  # the reference's values for this kernel
    np.testing.assert_allclose(out.to_numpy(), want, rtol=1e-6)


@pytest.mark.parametrize("mode", MODES, ids=["split", "whole"])
def test_dicts_and_static_unpacking(mode: dict) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, **mode)
    a = qd.field(qd.i32, shape=(2,))
    b = qd.field(qd.i32, shape=(2,))

    @qd.kernel
    def k(key: qd.template(), xx: qd.template(), yy: qd.template()) -> qd.i32:
        base = {1: 2, 3: 4}
        d = {5: 6, **base, 1: 7}
        x, y = qd.static(xx, yy)
        x[0] += 1
        y[1] -= 1
        c = 2 + (t := 5)
        return d[key] * 100 + x[0] + y[1] + c + t

    assert k(1, a, b) == 700 + 1 - 1 + 12
    assert k(3, a, b) == 400 + 2 - 2 + 12
    with pytest.raises(qd.QuadrantsCompilationError):
        k(2, a, b)  # no such key


@pytest.mark.parametrize("mode", MODES, ids=["split", "whole"])
def test_runtime_dict_keys_and_unpacking_a_list(mode: dict) -> None:
    """A dict keyed by values known at run time has an entry per key expression (Quadrants keys
    it by the expression), `sum(d.values())` adds them; `p, q, r = lst` unpacks a Python list.
    The values are quadrants 1.3.3's."""
    qd.init(arch=qd.cpu, offline_cache=False, **mode)
    x = qd.field(qd.i32, shape=(8,))
    x.from_numpy(np.arange(8, dtype=np.int32) * 2)
    lst = [5, 6.5, 7]

    @qd.kernel
    def by_value() -> qd.i32:
        a = {x[j]: x[j] * 10 + j for j in range(8) if j % 2 == 1 if j > 2}
        return sum(a.values())

    @qd.kernel
    def unpack() -> qd.f32:
        p, q, r = lst
        return p * 100 + q * 10 + r

    @qd.kernel
    def lookup() -> qd.i32:
        a = {x[j]: j for j in range(2)}
        return a[x[1]]

    assert by_value() == 315
    assert unpack() == 572.0
    with pytest.raises(qd.QuadrantsCompilationError):
        lookup()  # a key known only at run time is no other expression's


def test_static_assignment_errors() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)

    @qd.kernel
    def element():
        v = qd.static([1, 2, 3])
        v[0] = qd.static(2)

    @qd.kernel
    def again():
        v = 1
        v = qd.static(2)  # noqa: F841

    with pytest.raises(qd.QuadrantsSyntaxError, match="Static assign cannot be used on elements"):
        element()
    with pytest.raises(qd.QuadrantsSyntaxError, match="Recreating variables is not allowed"):
        again()


def test_qd_float_casts_and_decomposition_sizes() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    m = qd.Matrix.field(1, 1, qd.f32, shape=())

    @qd.kernel
    def div(x: qd.i32, y: qd.i32) -> qd.f32:
        return qd.lang.impl.qd_float(x) / y + qd.lang.impl.qd_int(1.7)

    @qd.kernel
    def polar():
        qd.polar_decompose(m, qd.f32)

    assert div(37, 4) == pytest.approx(37 / 4 + 1)
    with pytest.raises(qd.QuadrantsCompilationError, match="only supports 2×2 and 3×3"):
        polar()
