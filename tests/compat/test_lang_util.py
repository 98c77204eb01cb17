"""`quadrants.lang.util.to_numpy_type`: each dtype's NumPy scalar type, as the reference maps them
(the reference's own tests size their NumPy arrays with it); anything else is a TypeError. And
`has_clangpp()`, which looks for `clang++-10` as Quadrants does."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd
from qdlab.lang.util import has_clangpp, to_numpy_type


def test_to_numpy_type() -> None:
    pairs = [(qd.f32, np.float32), (qd.f64, np.float64), (qd.i8, np.int8), (qd.i16, np.int16)]
    pairs += [(qd.i32, np.int32), (qd.i64, np.int64), (qd.u1, np.bool_), (qd.u8, np.uint8)]
    pairs += [(qd.u16, np.uint16), (qd.u32, np.uint32), (qd.u64, np.uint64)]
    for dt, want in pairs:
        assert to_numpy_type(dt) is want
    with pytest.raises(TypeError, match="Unknown type"):
        to_numpy_type(qd.math.vec3)


def test_has_clangpp_looks_for_clang10_on_the_path(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert has_clangpp() is False
    clang = tmp_path / "clang++-10"
    clang.write_text("#!/bin/sh\n")
    clang.chmod(0o755)
    assert has_clangpp() is True
