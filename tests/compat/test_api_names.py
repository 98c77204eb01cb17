"""Names at Quadrants' paths: `qd.Matrix`'s swizzles are class properties (`dir(qd.Matrix)` lists
them, read and write), a matrix's shape is instance attributes, `qd.Struct`'s `entries` / `items` /
`methods`, `qd.ScalarNdarray`, `qd.interop`, `qd.sparse` (a bitmasked grid) and
`qd.lang.matrix._generate_swizzle_patterns`."""

from __future__ import annotations

import numpy as np
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
    assert [s for s in dir(qd.sparse) if not s.startswith("_")] == ["grid", "usage"]  # as Quadrants


def test_quadrants_names_beside_the_language(tmp_path, capsys) -> None:
    """`qd.uint1`, `qd.x86_64`, `qd.python`, the axes with `l`, `qd.Format`, `qd.DeviceCapability`,
    `qd.dump_compile_config`, `qd.profiler` and `qd.tools` (values as quadrants 1.3.3 has them)."""
    qd.init(arch=qd.cpu)
    assert qd.uint1 is qd.u1 and qd.x86_64 is qd.x64 and int(qd.python) == 3
    assert str(qd.python) == "Arch.python"
    assert [a.axes for a in (qd.il, qd.jl, qd.kl)] == [(0, 3), (1, 3), (2, 3)]
    assert [a.axes for a in (qd.ijl, qd.ikl, qd.jkl)] == [(0, 1, 3), (0, 2, 3), (1, 2, 3)]
    assert qd.Format.rgba8.value == 3 and qd.Format.depth32f.value == 43 and len(qd.Format) == 44
    assert qd.DeviceCapability.spirv_version_1_3 == "spirv_version=66304"
    qd.dump_compile_config()
    lines = capsys.readouterr().out.splitlines()
    assert lines == sorted(lines) and "arch=Arch.x64" in lines and "default_fp=f32" in lines
    assert qd.profiler.get_kernel_profiler_total_time() == 0.0
    assert qd.profiler.query_kernel_profiler_info("k").counter == 0
    assert not qd.profiler.set_kernel_profiler_toolkit("cupti")

    ply = qd.tools.PLYWriter(num_vertices=3, num_faces=1)
    ply.add_vertex_pos(np.array([0.0, 1.0, 0.0]), np.array([0.0, 0.0, 1.0]), np.zeros(3))
    ply.add_faces(np.array([0, 1, 2]))
    ply.add_face_id()
    ply.export_frame_ascii(7, str(tmp_path / "mesh.ply"))
    text = (tmp_path / "mesh_000007.ply").read_text().splitlines()
    assert text[:4] == [
        "ply",
        "format ascii 1.0",
        "comment created by PLYWriter",
        "element vertex 3",
    ]
    assert text[-4:] == ["0.0 0.0 0.0 ", "1.0 0.0 0.0 ", "0.0 1.0 0.0 ", "3 0 1 2 0 "]
    ply.export(str(tmp_path / "mesh.ply"))
    data = (tmp_path / "mesh.ply").read_bytes()
    assert data.endswith(np.array([0, 1, 2, 0], np.int32).tobytes())
    assert len(data.split(b"end_header\n")[1]) == 3 * 3 * 4 + 1 + 4 * 4
