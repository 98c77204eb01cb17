"""A `@qd.dataclass` / `qd.types.struct` holds its members by value, so a tensor member type is
refused when the type is made, as the reference refuses it (a ValueError, "Invalid data type")."""

import pytest

import qdlab as qd


def test_struct_types_refuse_tensor_members() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    with pytest.raises(ValueError, match="Invalid data type"):
        qd.types.struct(a=qd.types.ndarray(qd.f32, 1), b=qd.f32)
    with pytest.raises(ValueError, match="Invalid data type"):
        qd.types.struct(a=qd.field(qd.f32, shape=3))
    with pytest.raises(ValueError, match="Invalid data type"):

        @qd.dataclass
        class Holder:
            a: qd.types.NDArray[qd.f32, 1]

    @qd.dataclass
    class Particle:  # scalars, vectors, matrices and struct types are members
        pos: qd.math.vec3
        frame: qd.math.mat2
        mass: qd.f32
        n: int

    assert Particle.field(shape=2).shape == (2,)
