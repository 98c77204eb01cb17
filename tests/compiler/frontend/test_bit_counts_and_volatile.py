"""`qd.math.popcnt/clz/ffs` of vectors (entry by entry, as the reference maps them) and of every
integer width (an i32 count), and `qd.volatile_load` of a vector field's element or one entry of
it, against values measured on the reference (quadrants 1.3.3, CPU) and NumPy; its refusals in
Quadrants' words."""

import numpy as np
import pytest

import qdlab as qd

WIDTHS = [qd.i8, qd.u8, qd.i16, qd.u16, qd.i32, qd.u32, qd.i64, qd.u64]
REFERENCE_CLZ_OF_5 = [5, 5, 13, 13, 29, 29, 61, 61]


def test_bit_counts_map_over_vectors_and_count_in_the_operand_width() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)

    @qd.kernel
    def counts(o: qd.types.ndarray(qd.i32, ndim=1)):
        v = qd.Vector([1, 3, 7, -1])
        p, c, f = qd.math.popcnt(v), qd.math.clz(v), qd.math.ffs(v * 4)
        for j in qd.static(range(4)):
            o[j], o[4 + j], o[8 + j] = p[j], c[j], f[j]

    o = np.zeros(12, np.int32)
    counts(o)
    np.testing.assert_array_equal(o, [1, 2, 3, 32, 31, 30, 29, 0, 3, 3, 3, 3])

    @qd.kernel
    def widths(o: qd.types.ndarray(qd.f64, ndim=1), t: qd.template()):
        x = qd.cast(5, t)
        o[0] = qd.math.popcnt(x) - 100  # an i32: no wrap, as the reference gives
        o[1] = qd.math.clz(x) - 100
        o[2] = qd.math.ffs(x) - 100

    for t, clz in zip(WIDTHS, REFERENCE_CLZ_OF_5):
        out = np.zeros(3)
        widths(out, t)
        np.testing.assert_array_equal(out, [2 - 100, clz - 100, 1 - 100])


def test_volatile_load_of_a_vector_element_and_its_refusals() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    vf = qd.Vector.field(3, qd.f32, shape=4)
    flags = qd.field(qd.i32, shape=4)

    @qd.kernel
    def entry() -> qd.f32:
        vf[1] = qd.Vector([1.0, 2.0, 3.0])
        return qd.volatile_load(vf[1][2])

    @qd.kernel
    def whole() -> qd.f32:
        vf[2] = qd.Vector([1.0, 2.0, 3.0])
        v = qd.volatile_load(vf[2])
        return v[0] + v[2]

    @qd.kernel
    def local() -> qd.i32:
        x = 3
        return qd.volatile_load(x)

    @qd.kernel
    def field() -> qd.i32:
        return qd.volatile_load(flags)

    assert entry() == 3.0 and whole() == 4.0
    with pytest.raises(qd.QuadrantsTypeError, match=r"requires a global lvalue \(field / ndarray"):
        local()
    with pytest.raises(qd.QuadrantsSyntaxError, match="cannot pass a Field directly"):
        field()
