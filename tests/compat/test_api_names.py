"""Names at Quadrants' paths: `qd.Matrix`'s swizzles are class properties (`dir(qd.Matrix)` lists
them, read and write), a matrix's shape is instance attributes, `qd.Struct`'s `entries` / `items` /
`methods`, `qd.ScalarNdarray`, `qd.interop`, `qd.sparse` (a bitmasked grid) and
`qd.lang.matrix._generate_swizzle_patterns`."""

from __future__ import annotations

import pytest

import qdlab as qd


def test_matrix_swizzles_are_class_properties() -> None:
    names = set(dir(qd.Matrix))
    assert {"x", "xy", "rgba", "stpq", "wwww"} <= names and not {"n", "m", "ndim"} & names
    assert len(qd.lang.matrix._generate_swizzle_patterns("xyzw", required_length=4)) == 340
    v = qd.Vector([1.0, 2.0, 3.0])
    v.zx = (7.0, 8.0)
    assert v.to_list() == [8.0, 2.0, 7.0] and v.yz.to_list() == [2.0, 7.0] and v.n == 3
    with pytest.raises(qd.QuadrantsSyntaxError, match="vec3 only has attributes"):
        _ = v.w


def test_struct_properties_and_modules() -> None:
    qd.init(arch=qd.cpu)
    s = qd.Struct(a=1, b=2.5)
    assert s.entries == {"a": 1, "b": 2.5} and list(s.items) == [("a", 1), ("b", 2.5)]
    assert s.methods == {}
    a = qd.ndarray(qd.f32, (2,))
    assert isinstance(a, qd.ScalarNdarray) and isinstance(a, qd.Ndarray)
    assert qd.interop.get_mps_command_queue() == 0
    g = qd.sparse.grid({"pos": qd.math.vec2, "mass": qd.f32}, shape=(10, 10))
    g[0, 0].mass = 1.0  # a write activates its cell
    g[3, 4].pos = qd.math.vec2(1.0, 2.0)
    assert qd.sparse.usage(g) == pytest.approx(0.02) and g.mass.to_numpy()[0, 0] == 1.0
