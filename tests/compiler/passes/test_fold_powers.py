"""A float `**` / `qd.pow` of two constants folds as quadrants 1.3.3 folds it: C's `pow` of the two
as doubles, rounded once to the type (`h = 0.08` then `h ** 3` is f32(0.08d ** 3)); at run time
the same power is the type's products, one ulp away. Bits measured with quadrants 1.3.3 on the
CPU (`tests/compat/programs/constant_powers.py` runs the same against the reference)."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd


@pytest.fixture(params=[{}, {"per_offload": False}], ids=["split", "whole"], autouse=True)
def _init(request: pytest.FixtureRequest) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, **request.param)


def bits(v: object) -> str:
    return np.float32(v).tobytes().hex()


def test_constant_powers_fold_in_double() -> None:
    @qd.kernel
    def consts() -> qd.types.vector(7, qd.f32):
        h = 0.08
        g = 1.37
        return qd.Vector([h**3, h**2.5, h**-2, qd.pow(h, 3), g**7, (h + g) ** 3, 1.0 / h**3])

    want = ["bc37063a", "0244ed3a", "00401c43", "bc37063a", "91ee1041", "ad1c4340"]
    got = [bits(v) for v in consts()]
    assert got[:6] == want
    assert float(np.frombuffer(bytes.fromhex(got[6]), np.float32)[0]) == 1953.125244140625


def test_run_time_powers_multiply_in_the_type() -> None:
    @qd.kernel
    def cube(h: qd.f32) -> qd.f32:
        return h**3

    assert bits(cube(0.08)) == "bd37063a"  # h * h * h in f32


def test_a_negative_base_to_a_fractional_power_is_left_to_run_time() -> None:
    @qd.kernel
    def odd() -> qd.f32:
        h = -0.5
        return h**0.5

    assert np.isnan(odd())
