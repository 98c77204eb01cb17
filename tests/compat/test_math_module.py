"""`qd.math`: its public names are Quadrants' (no leaked imports, no built-ins Quadrants keeps only
at `qd.`), and its complex-number helpers (`cmul`, `cdiv`, `csqrt` ... on 2-vectors) give the
values the real quadrants 1.3.3 gave on the CPU for the same kernel (literals below)."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd

_COMPLEX = ["cconj", "cdiv", "cexp", "cinv", "clog", "cmul", "cpow", "csqrt"]


def test_math_surface_has_no_leaked_imports() -> None:
    names = {n for n in dir(qd.math) if not n.startswith("_")}
    assert set(_COMPLEX) <= names
    leaked = {"BUILTINS", "Builtin", "Func", "Matrix", "MatrixType", "VectorType", "Template"}
    assert not names & (leaked | {"i32", "u32", "static", "select", "loop_config", "MATH"})
    assert not names & {"abs", "rsqrt", "exp2"}  # at `qd.` only, as in Quadrants
    assert {"sqrt", "clamp", "mix", "fns", "popcnt", "vec3", "mat4", "pi"} <= names


def test_complex_helpers_match_quadrants() -> None:
    qd.init(arch=qd.cpu)
    out = qd.Vector.field(2, qd.f32, shape=14)

    @qd.kernel
    def k():
        z1 = qd.math.vec2(1.0, 2.0)
        z2 = qd.math.vec2(-0.5, 3.0)
        out[0] = qd.math.cmul(z1, z2)
        out[1] = qd.math.cconj(z1)
        out[2] = qd.math.cdiv(z1, z2)
        out[3] = qd.math.csqrt(qd.math.vec2(-1.0, 0.0))
        out[4] = qd.math.csqrt(z2)
        out[5] = qd.math.csqrt(qd.math.vec2(0.0, 0.0))
        out[6] = qd.math.cinv(z1)
        out[7] = qd.math.cpow(z1, 3)
        out[8] = qd.math.cpow(z2, 0.5)
        out[9] = qd.math.cpow(qd.math.vec2(0.0, 0.0), 2.0)
        out[10] = qd.math.cexp(z1)
        out[11] = qd.math.clog(z2)
        out[12] = qd.math.clog(qd.math.vec2(-1.0, 0.0))
        out[13] = qd.math.cmul(qd.math.cexp(z2), qd.math.cinv(z1))

    k()
    want = [
        [-6.5, 2.0],
        [1.0, -2.0],
        [5.9459460e-01, -4.3243244e-01],
        [-4.3711388e-08, 1.0],
        [1.1272491, 1.3306730],
        [0.0, 0.0],
        [0.2, -0.4],
        [-1.0999999e01, -2.0000029],
        [1.1272491, 1.3306730],
        [0.0, 0.0],
        [-1.1312044, 2.4717267],
        [1.1123117, 1.7359450],
        [0.0, 3.1415927],
        [-8.5854724e-02, 2.5730306e-01],
    ]
    np.testing.assert_allclose(out.to_numpy(), np.array(want, np.float32), rtol=1e-6, atol=1e-7)


def test_complex_helpers_on_integers_and_arguments() -> None:
    qd.init(arch=qd.cpu)
    oi = qd.Vector.field(2, qd.i32, shape=2)

    @qd.kernel
    def k():
        a = qd.Vector([1, 2])
        b = qd.Vector([3, -4])
        oi[0] = qd.math.cmul(a, b)
        oi[1] = qd.math.cconj(a)

    @qd.kernel
    def root(z: qd.math.vec2) -> qd.math.vec2:
        return qd.math.csqrt(z)

    k()
    assert oi.to_numpy().tolist() == [[11, 2], [1, -2]]
    assert root(qd.math.vec2(3, 4)).to_list() == pytest.approx([2.0, 1.0])
