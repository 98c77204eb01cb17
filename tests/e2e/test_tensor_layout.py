"""`qd.tensor(..., layout=perm)`: accepted with the reference's checks; every index, shape and host
copy stays canonical (what the reference guarantees too), so a kernel over a tensor with
`layout=(1, 0)` gives what it gives over one without; `.layout` reports it."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd


@pytest.mark.parametrize("backend", [qd.Backend.FIELD, qd.Backend.NDARRAY], ids=["field", "nd"])
def test_layout_is_canonical_to_every_reader(backend: object) -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    plain = qd.tensor(qd.f32, shape=(3, 5), backend=backend)
    permuted = qd.tensor(qd.f32, shape=(3, 5), backend=backend, layout=(1, 0))
    assert plain.layout is None and permuted.layout == (1, 0)
    assert permuted.shape == (3, 5)

    @qd.kernel
    def fill(a: qd.Tensor):
        for i, j in qd.ndrange(a.shape[0], a.shape[1]):
            a[i, j] = i * 10 + j

    fill(plain)
    fill(permuted)
    want = np.add.outer(np.arange(3) * 10, np.arange(5)).astype(np.float32)
    assert np.array_equal(plain.to_numpy(), want) and np.array_equal(permuted.to_numpy(), want)
    assert permuted[2, 4] == 24.0
    assert qd.tensor(qd.i32, shape=(2, 2), layout=(0, 1)).layout is None  # the identity


def test_layout_errors_are_the_references() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    with pytest.raises(ValueError, match="layout has 3 entries but shape has 2 dimensions"):
        qd.tensor(qd.f32, shape=(2, 2), layout=(0, 1, 2))
    with pytest.raises(ValueError, match=r"layout=\(0, 0\) is not a permutation of range\(2\)"):
        qd.tensor(qd.f32, shape=(2, 2), layout=(0, 0))
    with pytest.raises(TypeError, match="layout= is not supported with compound dtypes"):
        qd.tensor(qd.math.vec3, shape=(2, 2), layout=(1, 0))
