"""A float `//` is floor(a / b) and a float `%` is a - b * (a // b), each step rounded to the type
(a half's too), as Quadrants computes them; not Python's exact remainder, which differed from it
in half the values below (and by b itself near a multiple: 2.1 % 0.3 is 0.0 in Quadrants'
float64, 1.67e-16 in Python's). The NumPy model here gave Quadrants 1.3.3's bits for 4,000 random
values of each type."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd

TYPES = [np.float16, np.float32, np.float64]
A = qd.types.ndarray()


@pytest.fixture(autouse=True)
def _init() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)


def quadrants_model(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(a // b, a % b) with each operation rounded to the arrays' type."""
    t = a.dtype.type
    with np.errstate(all="ignore"):
        q = np.floor((a / b).astype(t)).astype(t)
        return q, (a - (b * q).astype(t)).astype(t)


@pytest.mark.parametrize("np_t", TYPES, ids=[t.__name__ for t in TYPES])
def test_float_floordiv_and_mod_give_quadrants_bits(np_t: type) -> None:
    @qd.kernel
    def k(a: A, b: A, q: A, r: A):
        for i in a:
            q[i] = a[i] // b[i]
            r[i] = a[i] % b[i]

    rng = np.random.default_rng(7)
    a = rng.uniform(-10, 10, 2000).astype(np_t)
    b = rng.choice([-0.35, 0.35, 0.1, -0.7, 0.3, 3.0, -2.5, 1e-3], 2000).astype(np_t)
    a[:6], b[:6] = [2.1, -2.1, 3.0, 1.0, -0.0, 1.0], [0.3, 0.35, 0.3, 0.0, 2.5, float("inf")]
    q, r = np.zeros_like(a), np.zeros_like(a)
    k(a, b, q, r)
    want_q, want_r = quadrants_model(a, b)
    bits = np.dtype(f"u{a.itemsize}")
    assert np.array_equal(q.view(bits), want_q.view(bits))
    assert np.array_equal(r.view(bits), want_r.view(bits))


def test_recorded_quadrants_values() -> None:
    @qd.kernel
    def k(a: qd.f64, b: qd.f64) -> qd.f64:
        return a % b

    # quadrants 1.3.3, CPU: 2.1 % 0.3, -2.1 % 0.35, -1.0 % 0.35, 1.0 % 0.0
    assert k(2.1, 0.3) == 0.0
    assert k(-2.1, 0.35) == 0.34999999999999964
    assert k(-1.0, 0.35) == 0.04999999999999982
    assert np.isnan(k(1.0, 0.0))
