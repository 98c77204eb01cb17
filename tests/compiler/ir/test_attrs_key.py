"""`ir.attrs_key`: what CSE and the construct memo compare attributes by. Equal keys must mean
attributes printed alike: a merged constant or a served construct with another value would be a
wrong answer."""

from __future__ import annotations

import itertools

import numpy as np

from qdlab.compiler import ir

VALUES = [
    0,
    1,
    True,
    False,
    1.0,
    0.0,
    -0.0,
    float("nan"),
    "add",
    "1",
    None,
    (1, 2),
    [1, 2],
    np.int32(1),
]


def test_equal_keys_are_equal_printed_attributes() -> None:
    for a, b in itertools.product(VALUES, repeat=2):
        same_key = ir.attrs_key({"value": a}) == ir.attrs_key({"value": b})
        assert same_key == (repr(a) == repr(b) and type(a) is type(b)), (a, b)


def test_several_attributes_are_keyed_by_their_sorted_text() -> None:
    assert ir.attrs_key({"op": "add", "fast": True}) == ir.attrs_key({"fast": True, "op": "add"})
    assert ir.attrs_key({"op": "add", "fast": True}) != ir.attrs_key({"op": "add", "fast": 1})
    assert ir.attrs_key({}) == ""
