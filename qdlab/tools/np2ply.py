"""`qd.tools.PLYWriter`: NumPy arrays to `.ply` files (binary in the machine's byte order, or
ASCII), vertices with any named channels and optional triangle or quad faces, as Quadrants writes
them."""

from __future__ import annotations

import sys

import numpy as np

TYPES = {
    "char": np.int8,
    "uchar": np.uint8,
    "short": np.int16,
    "ushort": np.uint16,
    "int": np.int32,
    "uint": np.uint32,
    "float": np.float32,
    "double": np.float64,
}
"""The PLY property types and the NumPy type each is written as."""


class _Element:
    """One PLY element's channels: names, PLY types, and the data of each (one value per item)."""

    def __init__(self, what: str, count: int) -> None:
        self.what, self.count = what, count
        self.names: list[str] = []
        self.types: list[str] = []
        self.data: list[np.ndarray] = []

    def add(self, key: str, data_type: str, data: np.ndarray) -> None:
        if data_type not in TYPES:
            print("Unknown type " + data_type + " detected, skipping this channel")
            return
        data = np.asarray(data)
        columns = 1 if data.ndim == 1 else data.size // max(self.count, 1)
        if data.ndim == 1:
            assert data.size == self.count, (
                f"The dimension of the {self.what} channel is not correct"
            )
        else:
            assert data.ndim == 2 and data.size == columns * self.count, (
                f"The dimension of the {self.what} channel is not correct"
            )
        table = data.reshape(self.count, columns)
        for c in range(columns):
            name = key if data.ndim == 1 else f"{key}_{c + 1}"
            if name in self.names:
                print("WARNING: duplicate key " + name + " detected")
            self.names.append(name)
            self.types.append(data_type)
            self.data.append(table[:, c].astype(TYPES[data_type]))


class PLYWriter:
    """Writes NumPy data to `.ply` files: `num_vertices` vertices, `num_faces` faces of
    `face_type` "tri" or "quad"."""

    def __init__(
        self,
        num_vertices: int,
        num_faces: int = 0,
        face_type: str = "tri",
        comment: str = "created by PLYWriter",
    ) -> None:
        assert num_vertices > 0, "num_vertices should be greater than 0"
        assert num_faces >= 0, "num_faces shouldn't be less than 0"
        assert face_type in ("tri", "quad"), "Only tri and quad faces are supported for now"
        self.num_vertices, self.num_faces = num_vertices, num_faces
        self.face_type, self.comment = face_type, comment
        self.vertices = _Element("vertex", num_vertices)
        self.faces = _Element("face", num_faces)
        self.face_indices = -np.ones((num_faces, self.corners), dtype=np.int32)

    @property
    def corners(self) -> int:
        return 3 if self.face_type == "tri" else 4

    def add_vertex_channel(self, key: str, data_type: str, data: np.ndarray) -> None:
        self.vertices.add(key, data_type, data)

    def add_vertex_pos(self, x: np.ndarray, y: np.ndarray, z: np.ndarray) -> None:
        for key, d in zip("xyz", (x, y, z)):
            self.add_vertex_channel(key, "float", d)

    def add_vertex_normal(self, nx: np.ndarray, ny: np.ndarray, nz: np.ndarray) -> None:
        for key, d in zip(("nx", "ny", "nz"), (nx, ny, nz)):
            self.add_vertex_channel(key, "float", d)

    def add_vertex_vel(self, vx: np.ndarray, vy: np.ndarray, vz: np.ndarray) -> None:
        for key, d in zip(("vx", "vy", "vz"), (vx, vy, vz)):
            self.add_vertex_channel(key, "float", d)

    def add_vertex_color(self, r: np.ndarray, g: np.ndarray, b: np.ndarray) -> None:
        for key, d in zip(("red", "green", "blue"), (r, g, b)):
            self.add_vertex_channel(key, "float", d)

    def add_vertex_alpha(self, alpha: np.ndarray) -> None:
        self.add_vertex_channel("Alpha", "float", alpha)

    def add_vertex_rgba(self, r: np.ndarray, g: np.ndarray, b: np.ndarray, a: np.ndarray) -> None:
        for key, d in zip(("red", "green", "blue", "Alpha"), (r, g, b, a)):
            self.add_vertex_channel(key, "float", d)

    def add_vertex_id(self) -> None:
        self.add_vertex_channel("id", "int", np.arange(self.num_vertices))

    def add_vertex_piece(self, piece: np.ndarray) -> None:
        self.add_vertex_channel("piece", "int", piece)

    def add_faces(self, indices: np.ndarray) -> None:
        indices = np.asarray(indices)
        assert self.corners * self.num_faces == indices.size, (
            "The dimension of the face vertices is not correct"
        )
        self.face_indices = indices.reshape(self.num_faces, self.corners).astype(np.int32)

    def add_face_channel(self, key: str, data_type: str, data: np.ndarray) -> None:
        self.faces.add(key, data_type, data)

    def add_face_id(self) -> None:
        self.add_face_channel("id", "int", np.arange(self.num_faces))

    def add_face_piece(self, piece: np.ndarray) -> None:
        self.add_face_channel("piece", "int", piece)

    def sanity_check(self) -> None:
        for key in "xyz":
            assert key in self.vertices.names, "The vertex pos channel is missing"
        if self.num_faces > 0:
            ok = (self.face_indices >= 0) & (self.face_indices < self.num_vertices)
            assert ok.all(), "The face indices are invalid"

    def print_header(self, path: str, _format: str) -> None:
        lines = ["ply", f"format {_format} 1.0", f"comment {self.comment}"]
        lines.append(f"element vertex {self.num_vertices}")
        lines += [f"property {t} {n}" for t, n in zip(self.vertices.types, self.vertices.names)]
        if self.num_faces:
            lines += [f"element face {self.num_faces}", "property list uchar int vertex_indices"]
            lines += [f"property {t} {n}" for t, n in zip(self.faces.types, self.faces.names)]
        lines.append("end_header")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")

    def export(self, path: str) -> None:
        """The binary file, in this machine's byte order."""
        self.sanity_check()
        self.print_header(path, f"binary_{sys.byteorder}_endian")
        with open(path, "ab") as f:
            for i in range(self.num_vertices):
                f.writelines(d[i].tobytes() for d in self.vertices.data)
            for i in range(self.num_faces):
                f.write(np.uint8(self.corners).tobytes())
                f.write(self.face_indices[i].tobytes())
                f.writelines(d[i].tobytes() for d in self.faces.data)

    def export_ascii(self, path: str) -> None:
        self.sanity_check()
        self.print_header(path, "ascii")
        with open(path, "a") as f:
            rows = zip(*self.vertices.data)
            f.writelines("".join(str(x) + " " for x in row) + "\n" for row in rows)
            for i in range(self.num_faces):
                corners = " ".join(map(str, self.face_indices[i, :]))
                extra = "".join(str(d[i]) + " " for d in self.faces.data)
                f.write(f"{self.corners} {corners} {extra}\n")

    def export_frame_ascii(self, series_num: int, path: str) -> None:
        self.export_ascii(_frame_path(series_num, path))

    def export_frame(self, series_num: int, path: str) -> None:
        self.export(_frame_path(series_num, path))


def _frame_path(series_num: int, path: str) -> str:
    """`path_000012.ply` for frame 12 (a `.ply` ending of `path` is dropped first)."""
    stem = path.removesuffix(".ply")
    return f"{stem}_{series_num:0=6d}.ply"


__all__ = ["PLYWriter"]
