"""`x[(i, j) if c else (j, i)]`: a runtime conditional expression between tuples selects a vector,
which indexes with its entries, as Quadrants' `ifte` does (expected values are the reference's
output for this program); split and whole kernel."""

from __future__ import annotations

import pytest

import qdlab as qd


@pytest.mark.parametrize("mode", [{}, {"per_offload": False}], ids=["split", "whole"])
def test_tuple_ifexp_as_an_index(mode: dict) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, **mode)
    g = qd.field(qd.i32, shape=(3, 3))
    out = qd.field(qd.i32, shape=(3, 3))

    @qd.kernel
    def k():
        for a, b in qd.ndrange(3, 3):
            g[a, b] = a * 10 + b
        for a, b in qd.ndrange(3, 3):
            out[a, b] = g[(b, a) if a > b else (a, b)]

    k()
    assert out.to_numpy().tolist() == [[0, 1, 2], [1, 11, 12], [2, 12, 22]]
