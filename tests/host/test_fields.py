"""Fields as a user meets them: declaring, host access, lifetime, kernels that use them by name and
as template arguments, layouts, errors, and keys that never hold a field's address."""

from __future__ import annotations

import ctypes
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import qdlab as qd


@pytest.fixture(autouse=True)
def _init() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)


def test_from_numpy_takes_a_column_three_ways() -> None:
    """As in Quadrants, a vector field (or an (n, 1) matrix one) takes (n,), (n, 1) or (1, n)
    elements, entries in order; other shapes are refused."""
    v = qd.Vector.field(3, qd.i32, shape=(2,))
    c = qd.Matrix.field(3, 1, qd.i32, shape=(2,))
    flat = np.arange(6, dtype=np.int32)
    for f in (v, c):
        for tail in ((3,), (3, 1), (1, 3)):
            f.fill(0)
            f.from_numpy(flat.reshape((2, *tail)))
            np.testing.assert_array_equal(f.to_numpy().reshape(2, 3), flat.reshape(2, 3))
    for bad in ((2, 1, 1, 3), (2, 3, 2)):
        with pytest.raises(ValueError, match="does not match"):
            v.from_numpy(np.zeros(bad, np.int32))
    with pytest.raises(ValueError, match="does not match"):
        qd.Matrix.field(2, 3, qd.i32, shape=(2,)).from_numpy(np.zeros((2, 3, 2), np.int32))


def test_declare_and_host_access() -> None:
    x = qd.field(qd.i32, shape=(3, 4))
    v = qd.Vector.field(3, qd.f32, shape=5)
    m = qd.Matrix.field(2, 3, qd.f64, shape=(2,))
    s = qd.field(qd.f32, shape=())
    w = qd.field(qd.math.vec2, shape=4)
    assert (x.shape, v.shape, m.shape, s.shape, w.shape) == ((3, 4), (5,), (2,), (), (4,))
    assert (x.dtype, v.dtype, m.dtype) == (qd.i32, qd.f32, qd.f64)
    assert (v.n, m.n, m.m) == (3, 2, 3)
    assert x.to_numpy().shape == (3, 4) and v.to_numpy().shape == (5, 3)
    assert m.to_numpy().shape == (2, 2, 3) and s.to_numpy().shape == ()
    assert v.to_numpy(keep_dims=True).shape == (5, 3, 1)
    x[1, 2] = 7
    assert x[1, 2] == 7 and isinstance(x[1, 2], int)
    x[0, 0] = 2**32 + 5  # wraps, as a store in a kernel does
    assert x[0, 0] == 5
    v[2] = [1.0, 2.0, 3.0]
    assert list(v[2]) == [1.0, 2.0, 3.0]
    s[None] = 1.25
    assert s[None] == 1.25 and isinstance(s[None], float)
    v.fill(0.5)
    assert (v.to_numpy() == 0.5).all()
    w.fill(qd.Vector([1.0, -1.0]))
    np.testing.assert_array_equal(w.to_numpy(), [[1.0, -1.0]] * 4)
    x.from_numpy(np.arange(12).reshape(3, 4))
    y = qd.field(qd.i32, shape=(3, 4))
    y.copy_from(x)
    np.testing.assert_array_equal(y.to_numpy(), np.arange(12).reshape(3, 4))
    with pytest.raises(ValueError, match="does not match"):
        x.from_numpy(np.zeros((4, 3)))
    with pytest.raises(AssertionError, match="Slicing"):
        x[1]
    with pytest.raises(NotImplementedError, match="Struct for"):
        iter(x)


def test_host_element_of_a_matrix_field_writes_through() -> None:
    """`m[None][i, j] = v` writes the field (as the reference's host accessors do), and a kernel
    sees it."""
    m = qd.Matrix.field(3, 3, qd.f32, shape=())
    v = qd.Vector.field(2, qd.i32, shape=4)
    for i in range(3):
        for j in range(3):
            m[None][i, j] = i * 2 + j * 7
    v[1][0] = 5

    @qd.kernel
    def transpose():
        m[None] = m[None].transpose()

    transpose()
    np.testing.assert_array_equal(
        m.to_numpy(), [[i * 2 + j * 7 for i in range(3)] for j in range(3)]
    )
    assert v[1][0] == 5 and v.to_numpy()[1, 0] == 5


def test_layout_on_one_axis_and_placed_gradients() -> None:
    x = qd.field(qd.i32)
    qd.root.dense(qd.k, 16).place(x)  # only axis k: a 1-d field
    assert x.shape == (16,)
    out = qd.field(qd.f32)
    fb = qd.FieldsBuilder()
    fb.dense(qd.i, 10).place(out, out.grad)  # placing the gradient allocates it
    fb.finalize()
    assert out.has_grad() and out.grad.shape == (10,)


def test_needs_grad() -> None:
    x = qd.field(qd.f32, shape=4, needs_grad=True)
    assert x.grad is not None and x.grad.shape == (4,)
    x.grad.fill(3.0)
    assert x.grad[2] == 3.0
    with pytest.raises(qd.QuadrantsRuntimeError, match="needs_grad=True"):
        qd.field(qd.i32, shape=4, needs_grad=True)


def test_fields_declared_after_kernels_ran_get_their_own_storage() -> None:
    a = qd.field(qd.i32, shape=4)

    @qd.kernel
    def fill_a():
        for i in a:
            a[i] = i + 1

    fill_a()
    b = qd.field(qd.i32, shape=4)  # declared after a kernel ran

    @qd.kernel
    def copy():
        for i in b:
            b[i] = a[i] * 10

    copy()
    np.testing.assert_array_equal(b.to_numpy(), [10, 20, 30, 40])
    np.testing.assert_array_equal(a.to_numpy(), [1, 2, 3, 4])


def test_reset_drops_fields() -> None:
    a = qd.field(qd.i32, shape=4)
    qd.reset()

    @qd.kernel
    def use():
        for i in a:
            a[i] = 1

    with pytest.raises(qd.QuadrantsRuntimeError, match=r"field `a` cannot be used: .*qd.reset"):
        use()


def test_unplaced_field_is_a_clear_error() -> None:
    a = qd.field(qd.f32)

    @qd.kernel
    def use():
        a[0] = 1.0

    with pytest.raises(qd.QuadrantsRuntimeError, match="These field\\(s\\) are not placed") as e:
        use()  # Quadrants' check at the launch, naming where the field was declared
    assert "test_fields.py" in str(e.value)
    with pytest.raises(qd.QuadrantsRuntimeError, match="not placed"):
        a.to_numpy()


def test_root_dense_nested_shapes() -> None:
    a, b, c, d = (qd.field(qd.i32) for _ in range(4))
    qd.root.dense(qd.ij, (4, 6)).place(a, b)
    qd.root.dense(qd.i, 3).dense(qd.j, 5).place(c)
    qd.root.dense(qd.i, 4).dense(qd.i, 2).place(d)
    assert (a.shape, b.shape, c.shape, d.shape) == ((4, 6), (4, 6), (3, 5), (8,))
    with pytest.raises(qd.QuadrantsRuntimeError, match="already placed"):
        qd.root.dense(qd.i, 2).place(a)


@pytest.mark.parametrize(
    ("call", "what"),
    [
        (lambda: qd.root.hash(qd.i, 4), "hash"),
        (lambda: qd.root.bit_struct(num_bits=32), "bit_struct"),
    ],
)
def test_sparse_snodes_are_refused_by_name(call: object, what: str) -> None:
    with pytest.raises(qd.QuadrantsRuntimeError, match=f"{what}.*not supported"):
        call()  # type: ignore[operator]


def test_kernel_reads_fields_in_funcs_and_shape_is_static() -> None:
    x = qd.field(qd.f32, shape=(3, 5))
    n = qd.field(qd.i32, shape=())

    @qd.func
    def at(i: qd.i32, j: qd.i32) -> qd.f32:
        return x[i, j] * 2.0

    @qd.kernel
    def k() -> qd.f32:
        for i, j in x:
            x[i, j] = i + j * 0.5
        size = qd.static(x.shape[0] * x.shape[1])  # a name: an element cannot be, as in Quadrants
        n[None] = size
        total = 0.0
        for i in range(x.shape[0]):
            for j in qd.static(range(x.shape[1])):
                total += at(i, j)
        return total

    want = sum((i + j * 0.5) * 2 for i in range(3) for j in range(5))
    assert k() == pytest.approx(want)
    assert n[None] == 15


def test_atomics_and_augmented_assignment_on_field_elements() -> None:
    h = qd.field(qd.i32, shape=4)
    v = qd.Vector.field(2, qd.f32, shape=())
    old = qd.field(qd.i32, shape=100)

    @qd.kernel
    def k():
        for i in range(100):
            h[i % 4] += 1
            old[i] = qd.atomic_add(h[0], 0) * 0 + qd.atomic_max(h[3], -1) * 0
            v[None] += qd.Vector([1.0, 0.5])
            v[None].y -= 0.25

    k()
    np.testing.assert_array_equal(h.to_numpy(), [25, 25, 25, 25])
    np.testing.assert_allclose(v.to_numpy(), [100.0, 25.0])


def test_template_field_one_specialisation_per_field_sharing_constructs() -> None:
    a = qd.field(qd.f32, shape=16)
    b = qd.field(qd.f32, shape=16)

    @qd.kernel
    def ramp(f: qd.template(), s: qd.f32):
        for i in f:
            f[i] = i * s

    ramp(a, 1.0)
    ramp(b, 2.0)
    ramp(a, 3.0)
    np.testing.assert_array_equal(a.to_numpy(), np.arange(16) * 3.0)
    np.testing.assert_array_equal(b.to_numpy(), np.arange(16) * 2.0)
    assert len(ramp.variants) == 2
    # the second specialisation compiled nothing: the field's address is not in the key, and the
    # manifest (which keys a field template by its type and shape) serves it without lowering
    assert ramp._primal.per_offload_cache_observations.frontend_constructs_total == -1


@pytest.mark.process
def test_recreated_fields_reuse_constructs_and_the_manifest(tmp_path: object) -> None:
    """Another process has other fields at other addresses: the same kernel is served from the
    manifest (no lowering), its field arguments found again by name; fields of another shape mean
    a compile."""
    src = textwrap.dedent(
        """
        import sys
        import qdlab as qd
        qd.init(arch=qd.cpu, offline_cache_file_path=PATH)
        n = int(sys.argv[1])
        x = qd.field(qd.f32, shape=n)
        y = qd.field(qd.f32, shape=n, needs_grad=True)

        @qd.kernel
        def k(a: qd.f32):
            for i in x:
                x[i] = i * a
            for i in y:
                y[i] = x[i] + 1.0

        k(2.0)
        o = k._primal.per_offload_cache_observations
        print(o.frontend_constructs_total, o.frontend_constructs_cache_hit, y[n - 1])
        """
    ).replace("PATH", repr(str(tmp_path)))
    script = tmp_path / "prog.py"  # type: ignore[operator]
    script.write_text(src)

    def run(n: int) -> list[str]:
        out = subprocess.run(
            [sys.executable, str(script), str(n)], capture_output=True, text=True, check=True
        )
        return out.stdout.split()

    assert run(32) == ["2", "0", "63.0"]
    assert run(32) == ["-1", "-1", "63.0"]  # the manifest: nothing lowered, other addresses
    assert run(64) == ["2", "0", "127.0"]  # another shape: another key


def test_field_index_errors_name_the_field() -> None:
    x = qd.field(qd.f32, shape=(4, 4))

    @qd.kernel
    def k():
        x[1] = 2.0

    with pytest.raises(qd.QuadrantsTypeError, match="`x` has 2 dimension"):
        k()


def test_host_shape_mismatches_name_the_field_and_the_shapes() -> None:
    x = qd.field(qd.f32, shape=(3, 4), name="x")
    v = qd.Vector.field(3, qd.f32, shape=5)
    with pytest.raises(qd.QdValueError, match=r"\(4, 3\) \(field `x`\)$"):
        x.from_numpy(np.zeros((4, 3), np.float32))
    with pytest.raises(qd.QdValueError, match=r"elements have shape \(3,\), so it takes an array"):
        v.from_numpy(np.zeros((5, 2), np.float32))
    with pytest.raises(qd.QdValueError, match=r"a field of shape \(5,\) is a vector of f32"):
        v[0] = [1, 2]
    with pytest.raises(qd.QdValueError, match=r"value of shape \(2,\)"):
        v.fill([1, 2])
    with pytest.raises(qd.QdValueError, match=r"field `x` of shape \(3, 4\) is a scalar"):
        x[0, 0] = [1, 2]
    v[1] = 7  # a scalar fills an element, as a vector's `fill` does
    v.fill(qd.Vector([1, 2, 3]))
    assert v[1].to_list() == [1, 2, 3]


def test_debug_bounds_check_names_the_field() -> None:
    qd.init(arch=qd.cpu, debug=True, offline_cache=False)
    x = qd.field(qd.i32, shape=4)

    @qd.kernel
    def k(i: qd.i32):
        x[i] = 1

    k(3)
    with pytest.raises(qd.QuadrantsAssertionError, match="`x`"):
        k(4)


def test_tape_through_fields() -> None:
    x = qd.field(qd.f32, shape=3, needs_grad=True)
    loss = qd.field(qd.f32, shape=(), needs_grad=True)
    x.from_numpy(np.array([1.0, 2.0, 3.0], np.float32))

    @qd.kernel
    def f():
        for i in x:
            loss[None] += x[i] ** 2

    for _ in range(2):  # the tape clears the gradients each time, as Quadrants' does
        with qd.ad.Tape(loss=loss):
            f()
        np.testing.assert_allclose(x.grad.to_numpy(), [2.0, 4.0, 6.0])


def test_a_bad_tape_loss_field_is_named_in_quadrants_words() -> None:
    loss = qd.field(qd.f32, shape=4, needs_grad=True, name="loss")
    with pytest.raises(RuntimeError, match=r"must be a 0-D field, i.e. scalar; it is field `loss`"):
        qd.ad.Tape(loss=loss).__enter__()
    flat = qd.field(qd.f32, shape=())
    with pytest.raises(RuntimeError, match="not allocated: .*a field of shape \\(\\), needs"):
        qd.ad.Tape(loss=flat).__enter__()


def test_fields_as_members_of_a_template_object() -> None:
    """An object holding fields (what a data-oriented class is) passed as a template: its fields
    are reached by attribute, one compile serves every call, and another object compiles anew."""

    class Particles:
        def __init__(self, n: int) -> None:
            self.pos = qd.Vector.field(2, qd.f32, shape=n)
            self.mass = qd.field(qd.f32, shape=n)

    @qd.kernel
    def step(ps: qd.template(), dt: qd.f32):
        for i in ps.pos:
            ps.pos[i] += qd.Vector([1.0, 2.0]) * dt * ps.mass[i]

    a, b = Particles(4), Particles(4)
    a.mass.fill(1.0)
    b.mass.fill(2.0)
    for _ in range(3):
        step(a, 0.5)
    step(b, 0.5)
    np.testing.assert_allclose(a.pos.to_numpy(), [[1.5, 3.0]] * 4)
    np.testing.assert_allclose(b.pos.to_numpy(), [[1.0, 2.0]] * 4)
    assert len(step.variants) == 2


def test_meshes_are_refused_by_name() -> None:
    with pytest.raises(qd.QuadrantsRuntimeError, match="meshes.*not supported"):
        qd.Mesh.Tet()  # type: ignore[operator]


def test_same_kernel_source_after_reset_with_the_manifest(tmp_path: object) -> None:
    """A kernel over fields served from the manifest, then qd.reset(), then the same source again
    with new fields (what a parametrised test does): the report's comparison with the previous
    compile, which cannot be rebuilt (its fields are gone), does not stop the new one."""

    def run(dtype: object) -> int:
        qd.init(arch=qd.cpu, offline_cache_file_path=str(tmp_path))
        a = qd.field(dtype, shape=64)

        @qd.kernel
        def fill():
            for i in a:
                a[i] = i + 1

        fill()
        total = int(a.to_numpy().sum())
        qd.reset()
        return total

    assert [run(t) for t in (qd.i32, qd.i32, qd.u32)] == [2080, 2080, 2080]


def test_a_column_major_layout_is_column_major_in_memory() -> None:
    b = qd.field(qd.f32)
    qd.root.dense(qd.j, 32).dense(qd.i, 16).place(b)
    assert b.shape == (16, 32) and b.snode._physical_index_position() == {0: 0, 1: 1}
    assert qd.field(qd.i32, shape=(3, 4, 5)).snode._physical_index_position() == {0: 0, 1: 1, 2: 2}

    @qd.kernel
    def fill():
        for i, j in b:
            b[i, j] = i * 100 + j

    @qd.kernel
    def addr(i: qd.i32, j: qd.i32) -> qd.u64:
        return qd.get_addr(b, [i, j])

    fill()
    want = np.add.outer(np.arange(16) * 100, np.arange(32)).astype(np.float32)
    assert np.array_equal(b.to_numpy(), want) and b[3, 7] == 307
    assert addr(1, 0) - addr(0, 0) == 4 and addr(0, 1) - addr(0, 0) == 64
    assert ctypes.c_float.from_address(addr(3, 7)).value == 307  # the address is the element's
    b.from_numpy(want.T.copy().T + 1)
    assert b[15, 31] == 1532


def test_get_addr_is_checked_and_refused_where_it_would_lie() -> None:
    x = qd.field(qd.i32, shape=(4, 4))
    blocked = qd.field(qd.i32)
    qd.root.dense(qd.i, 2).dense(qd.j, 4).dense(qd.i, 2).place(blocked)
    a = qd.ndarray(qd.i32, shape=4)

    @qd.kernel
    def at(i: qd.i32) -> qd.u64:
        return qd.get_addr(x, [i, 0])

    @qd.kernel
    def of_blocked() -> qd.u64:
        return qd.get_addr(blocked, [1, 1])

    @qd.kernel
    def of_ndarray(y: qd.types.NDArray[qd.i32, 1]) -> qd.u64:
        return qd.get_addr(y, [0])

    assert at(1) - at(0) == 16
    with pytest.raises(qd.QuadrantsCompilationError, match="splits an axis"):
        of_blocked()
    with pytest.raises(qd.QuadrantsTypeError, match="takes a field"):
        of_ndarray(a)
    qd.init(arch=qd.cpu, offline_cache=False, debug=True)
    y = qd.field(qd.i32, shape=(4, 4))

    @qd.kernel
    def past(i: qd.i32) -> qd.u64:
        return qd.get_addr(y, [i, 0])

    past(3)
    with pytest.raises(qd.QdIndexError, match="Out of bound access: index 4"):
        past(4)


def test_dense_takes_one_extent_for_every_axis() -> None:
    """`qd.root.dense(qd.ij, (4,))` is 4 x 4, as in Quadrants; two extents for three axes fail."""
    qd.init(arch=qd.cpu)
    x = qd.field(qd.f32)
    qd.root.dense(qd.ij, (4,)).place(x)
    assert x.shape == (4, 4)
    with pytest.raises(ValueError, match="one positive extent per axis"):
        qd.root.dense(qd.ijk, (4, 5))


def test_fields_builder_refuses_levels_after_finalize() -> None:
    x, y = qd.field(qd.i32), qd.field(qd.i32)
    fb = qd.FieldsBuilder()
    assert fb.place(x) is None  # as in Quadrants: place() on the builder returns nothing
    tree = fb.finalize()
    tree.destroy()
    assert fb.finalized and x.shape == ()
    with pytest.raises(qd.QuadrantsRuntimeError, match="FieldsBuilder finalized"):
        fb.dense(qd.i, 4).place(y)
    with pytest.raises(qd.QuadrantsRuntimeError, match="FieldsBuilder finalized"):
        fb.finalize()


def test_snode_and_fields_builder_public_names() -> None:
    """The methods a user calls, as Quadrants lists them; qdlab's own helpers are private."""

    def public(cls: type) -> list[str]:
        return sorted(n for n in dir(cls) if not n.startswith("_"))

    levels = ["bitmasked", "deactivate_all", "dense", "dynamic", "lazy_dual", "lazy_grad"]
    levels += ["place", "pointer", "quant_array"]
    assert public(qd.SNode) == sorted([*levels, "parent", "shape"])
    assert public(qd.FieldsBuilder) == sorted([*levels, "finalize"])
