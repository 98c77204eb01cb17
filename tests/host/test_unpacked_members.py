"""`qd.types.vector(n, dtype, unpacked=True)`: a `@qd.dataclass` member that holds a vector's
values (Quadrants stores it as n scalars on the GPU); anywhere else it is Quadrants' error.
Expected values are the reference's output for the same kernels."""

from __future__ import annotations

import dataclasses

import pytest

import qdlab as qd

UV = qd.types.vector(4, qd.f32, unpacked=True)


@qd.dataclass
class TwoTiles:
    a: qd.types.vector(32, qd.f32, unpacked=True)
    b: qd.types.vector(32, qd.f32, unpacked=True)
    scale: qd.f32


@qd.kernel
def tiles() -> qd.f32:
    t = TwoTiles()
    t.scale = 2.0
    for i in qd.static(range(32)):
        t.a[i] = i
        t.b[i] = t.a[i] * t.scale
    s = 0.0
    for i in qd.static(range(32)):
        s += t.b[i]
    return s


@qd.kernel
def as_argument(x: UV) -> qd.f32:
    return x[0]


@qd.kernel
def as_local() -> qd.f32:
    v = UV(1.0, 2.0, 3.0, 4.0)
    return v[0]


@dataclasses.dataclass
class Plain:
    r: qd.types.vector(2, qd.f32, unpacked=True)


@qd.kernel
def in_plain_dataclass(d: Plain) -> qd.f32:
    return d.r[0]


def test_an_unpacked_member_holds_a_vector() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    assert tiles() == 992.0


def test_an_unpacked_vector_is_only_a_dataclass_member() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    refused = "a vector declared with unpacked=True"
    with pytest.raises(qd.QuadrantsSyntaxError, match=f"cannot create a field of {refused}"):
        UV.field(shape=3)
    with pytest.raises(qd.QuadrantsSyntaxError, match=f"cannot create an ndarray of {refused}"):
        UV.ndarray(shape=3)
    with pytest.raises(qd.QuadrantsSyntaxError, match=f"cannot instantiate {refused}"):
        as_argument([1.0, 2.0, 3.0, 4.0])
    with pytest.raises(qd.QuadrantsSyntaxError, match=f"cannot instantiate {refused}"):
        as_local()
    with pytest.raises(qd.QuadrantsSyntaxError, match=f"cannot instantiate {refused}"):
        in_plain_dataclass(Plain(qd.Vector([1.0, 2.0])))


def test_a_member_named_as_an_unpacked_scalar_is_refused() -> None:
    with pytest.raises(qd.QuadrantsSyntaxError, match="member name '_r0' collides"):

        @qd.dataclass
        class Bad:
            r: qd.types.vector(2, qd.f32, unpacked=True)
            _r0: qd.f32
