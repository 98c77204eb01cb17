"""Sparse SNodes (`pointer`, `bitmasked`, `dynamic`) on the CPU, against values measured on the
reference (quadrants 1.3.3) for the same programs: a write activates (a pointer its block, a
bitmasked level its cell, a dynamic one its length), an inactive cell reads 0, a deactivation
zero-fills, a struct-for visits the active cells only, host bulk writes touch active cells only;
and a kernel that activates, snapshots activity, deactivates and struct-fors gives the same on
the split, whole-kernel, `split_carried=False` and debug paths."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd


def pointer_and_bitmasked() -> tuple:
    x, y = qd.field(qd.i32), qd.field(qd.i32)
    ptr = qd.root.pointer(qd.i, 4)
    ptr.dense(qd.i, 4).place(x)
    bm = qd.root.bitmasked(qd.ij, (4, 4))
    bm.place(y)
    return x, y, ptr, bm


def test_pointer_activates_its_block_and_bitmasked_its_cell() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    x, y, ptr, bm = pointer_and_bitmasked()

    @qd.kernel
    def write():
        x[5] = 3
        y[1, 2] = 7

    @qd.kernel
    def count() -> qd.i32:
        c = 0
        for i in x:
            c += 1
        for i, j in y:
            c += 100
        return c

    @qd.kernel
    def blocks() -> qd.i32:
        s = 0
        for i in ptr:  # the pointer's own cells: block indices
            s += i + 1
        for i in x.parent():  # the dense level under it: element indices of active blocks
            s += 10 * i
        return s

    @qd.kernel
    def active() -> qd.i32:
        return (
            qd.is_active(ptr, [1]) + 10 * qd.is_active(bm, [1, 2]) + 100 * qd.is_active(bm, [1, 1])
        )

    write()
    assert x.to_numpy().tolist() == [0, 0, 0, 0, 0, 3] + [0] * 10
    assert (count(), blocks(), active()) == (104, 2 + 10 * (4 + 5 + 6 + 7), 11)

    @qd.kernel
    def deactivate():
        qd.deactivate(bm, [1, 2])
        qd.deactivate(ptr, [1])

    @qd.kernel
    def activate():
        qd.activate(bm, [1, 2])
        qd.activate(ptr, [1])

    deactivate()  # the pointer's block is zero-filled; the bitmasked cell keeps its element
    assert count() == 0 and x.to_numpy().sum() == 0 and y.to_numpy().sum() == 0 and y[1, 2] == 7
    activate()  # activated again: the whole block visited
    assert count() == 104 and x.to_numpy().sum() == 0 and y.to_numpy()[1, 2] == 7
    x[9] = 4  # a host write activates
    assert count() == 108 and x.to_numpy()[9] == 4
    ptr.deactivate_all()
    assert count() == 100 and x.to_numpy().sum() == 0
    x[1] = 1
    qd.deactivate_all_snodes()
    assert count() == 0 and x.to_numpy().sum() == 0
    assert str(x.parent()) == "qd.root => pointer [4] => dense [16]"


def test_bitmasked_deactivation_keeps_elements_a_pointer_frees_them() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    y, z = qd.field(qd.i32), qd.field(qd.i32)
    bm = qd.root.bitmasked(qd.ij, (4, 4))
    bm.place(y)
    inner = qd.root.pointer(qd.i, 2).bitmasked(qd.i, 2)
    inner.place(z)

    @qd.kernel
    def write():
        y[1, 2] = 7
        z[3] = 5

    @qd.kernel
    def drop():
        qd.deactivate(bm, [1, 2])
        qd.deactivate(inner, [3])

    @qd.kernel
    def read() -> qd.i32:
        return y[1, 2] * 10 + z[3]

    @qd.kernel
    def bump():
        y[1, 2] += 1

    @qd.kernel
    def activate():
        qd.activate(bm, [1, 2])

    write()
    drop()
    assert (read(), y[1, 2], z[3]) == (75, 7, 5)  # reads see the kept elements...
    assert y.to_numpy().sum() == 0 and z.to_numpy().sum() == 0  # ... to_numpy the inactive 0
    y.fill(2)  # active cells only: none
    assert y[1, 2] == 7
    bump()
    bm.deactivate_all()
    activate()
    assert (read(), y[1, 2], y.to_numpy().sum()) == (85, 8, 8)
    qd.deactivate_all_snodes()  # the pointer frees its blocks: z's elements are zero-filled
    activate()
    assert read() == 80


def test_nested_levels_visit_active_cells() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    a, b = qd.field(qd.i32), qd.field(qd.f32)
    blk = qd.root.dense(qd.i, 2).pointer(qd.ij, (2, 3))
    bm = blk.bitmasked(qd.ij, (2, 2))
    bm.dense(qd.j, 2).place(a)
    blk.dense(qd.ij, (2, 4)).place(b)
    assert (a.shape, b.shape, bm.shape, blk.shape) == ((8, 12), (8, 12), (8, 6), (4, 3))

    @qd.kernel
    def write():
        a[1, 2] = 5
        a[6, 11] = 7
        b[0, 0] += 1.5

    @qd.kernel
    def walks() -> qd.types.vector(5, qd.i32):
        n, s, sb, sp, nb = 0, 0, 0, 0, 0
        for i, j in a:
            n += 1
            s += i * 100 + j
        for i, j in bm:
            sb += 1000 * i + j
        for i, j in blk:
            sp += 1000 * i + j + 1
        for i, j in b:
            nb += 1
        return qd.Vector([n, s, sb, sp, nb])

    @qd.kernel
    def deactivate():
        qd.deactivate(blk, [0, 0])

    @qd.kernel
    def queries() -> qd.i32:
        r = qd.rescale_index(a, blk, [6, 11])
        return (
            r[0] * 10
            + r[1]
            + 1000
            * (
                qd.is_active(blk, [3, 2]) * 100
                + qd.is_active(bm, [6, 5]) * 10
                + qd.is_active(bm, [6, 4])
            )
        )

    write()
    assert walks().to_numpy().tolist() == [4, 1426, 7006, 3004, 16]
    assert (a.to_numpy().sum(), b.to_numpy().sum()) == (12, 1.5)
    deactivate()  # the pointer cell and the bitmasked cells and b's elements below it
    assert walks().to_numpy().tolist() == [2, 1221, 6005, 3003, 8]
    assert (a.to_numpy().sum(), b.to_numpy().sum()) == (7, 0.0)
    assert queries() == 110 * 1000 + 32


def test_host_bulk_writes_touch_active_cells_only() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    x = qd.field(qd.i32)
    ptr = qd.root.pointer(qd.i, 4)
    ptr.bitmasked(qd.i, 4).place(x)

    @qd.kernel
    def count() -> qd.i32:
        c = 0
        for i in x:
            c += 1
        return c

    x[5] = 1
    x.fill(3)
    assert x.to_numpy().tolist() == [0] * 5 + [3] + [0] * 10 and count() == 1
    x.from_numpy(np.arange(16, dtype=np.int32))
    assert x.to_numpy().tolist() == [0] * 5 + [5] + [0] * 10 and count() == 1
    qd.deactivate_all_snodes()
    assert count() == 0
    x[1] = 0  # writing zero activates too
    assert count() == 1

    @qd.kernel
    def step():
        qd.deactivate(ptr, [0])
        x[6] += 1  # an atomic activates
        x[9] = x[9] + 0

    step()
    assert count() == 2 and x.to_numpy().tolist() == [0] * 6 + [1] + [0] * 9


def test_dynamic_lengths_append_and_struct_for() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    x = qd.field(qd.i32)
    qd.root.dense(qd.i, 3).dynamic(qd.j, 8, chunk_size=2).place(x)

    @qd.kernel
    def fill():
        for i in range(3):
            for j in range(i + 2):
                qd.append(x.parent(), i, j * 10 + i)

    @qd.kernel
    def lengths() -> qd.i32:
        return (
            qd.length(x.parent(), 0)
            + 10 * qd.length(x.parent(), 1)
            + 100 * qd.length(x.parent(), 2)
        )

    @qd.kernel
    def count() -> qd.i32:
        c = 0
        for i, j in x:
            c += 1
        return c

    @qd.kernel
    def drop():
        qd.deactivate(x.parent(), [1])

    @qd.kernel
    def write():
        x[1, 5] = 3
        x[0, 0] = 1

    fill()
    assert (lengths(), count()) == (432, 9)
    assert x.to_numpy()[:, :4].tolist() == [[0, 10, 0, 0], [1, 11, 21, 0], [2, 12, 22, 32]]
    drop()
    assert (lengths(), count()) == (402, 6) and x.to_numpy()[1].sum() == 0
    x.parent().deactivate_all()
    assert (lengths(), count(), x.to_numpy().sum()) == (0, 0, 0)
    write()  # a write grows the length to cover it
    assert (lengths(), count()) == (61, 7)

    y = qd.field(qd.i32)
    qd.root.dynamic(qd.i, 16, chunk_size=4).place(y)

    @qd.kernel
    def push() -> qd.i32:
        for i in range(5):
            qd.append(y.parent(), [], i)
        return qd.length(y.parent(), [])

    assert push() == 5 and y.to_numpy().tolist() == [0, 1, 2, 3, 4] + [0] * 11


PATHS = [{}, {"per_offload": False}, {"split_carried": False}, {"debug": True}]


@pytest.mark.parametrize("options", PATHS, ids=["split", "whole", "uncarried", "debug"])
def test_activate_snapshot_deactivate_struct_for_on_every_path(options: dict) -> None:
    """Loop 1 activates, a snapshot reads activity, loop 2 deactivates what the snapshot read,
    loop 3 struct-fors: the split must hand the snapshot over (an activity flag is memory the
    gate sees written), never recompute it after the deactivation."""
    qd.init(arch=qd.cpu, offline_cache=False, **options)
    x = qd.field(qd.i32)
    ptr = qd.root.pointer(qd.i, 8)
    ptr.bitmasked(qd.i, 4).place(x)
    out = qd.field(qd.i32, shape=32)

    @qd.kernel
    def k(n: qd.i32) -> qd.i32:
        for i in range(n):
            x[i * 3] = i + 1
        snap = qd.is_active(ptr, [2]) * 10 + qd.is_active(x.parent(), [9])
        for c in range(8):
            if c % 2 == 0:
                qd.deactivate(ptr, [c])
        for i in x:
            out[i] = x[i] + snap
        total = 0
        for i in x.parent(2):
            total += i
        return total * 1000 + snap

    assert k(8) == 9011
    want = np.zeros(32, np.int32)
    want[[6, 12, 15, 21]] = [14, 16, 17, 19]
    np.testing.assert_array_equal(out.to_numpy(), want)
    want_x = np.zeros(32, np.int32)
    want_x[[6, 12, 15, 21]] = [3, 5, 6, 8]
    np.testing.assert_array_equal(x.to_numpy(), want_x)
    r = qd.explain(k)
    if options == {}:
        assert r.mode == "per_offload"
        reasons = {s.name: s.reason for s in r.interface}
        assert reasons.get("pointer_active") == reasons.get("bitmasked_active")
        assert reasons["pointer_active"] == "overwritten_reread"
    if options == {"split_carried": False}:
        assert r.mode == "whole_kernel"


@pytest.mark.parametrize("options", PATHS, ids=["split", "whole", "uncarried", "debug"])
def test_activation_is_a_side_effect_on_every_path(options: dict) -> None:
    """The gate's sparse rules: an activation is a write (a write of 0 or an atomic activates; the
    value `qd.append` returns comes from a side effect a split must hand over, never run twice),
    a later struct-for visits the cells the earlier constructs (and launches) activated, and a
    `qd.length` snapshot read after appends is handed over. Values measured on quadrants 1.3.3."""
    qd.init(arch=qd.cpu, offline_cache=False, **options)
    x, l_ = qd.field(qd.i32), qd.field(qd.i32)
    ptr = qd.root.pointer(qd.i, 8)
    ptr.dense(qd.i, 4).place(x)
    dyn = qd.root.dynamic(qd.i, 32, chunk_size=4)
    dyn.place(l_)
    out = qd.field(qd.i32, shape=8)

    @qd.kernel
    def a(n: qd.i32) -> qd.i32:
        k = qd.append(dyn, [], 7)
        for i in range(n):
            x[i * 5] = 0
        for i in range(k + 2):
            qd.append(dyn, [], i)
        m = qd.length(dyn, [])
        cnt = 0
        for i in x:
            cnt += 1
        for i in range(m):
            out[i % 8] += l_[i]
        return k * 10000 + m * 100 + cnt

    @qd.kernel
    def b(n: qd.i32) -> qd.i32:
        snap = qd.length(dyn, [])
        for i in range(n):
            qd.append(dyn, [], 100 + i)
        qd.activate(ptr, [7])
        x[1] += 3
        cnt = 0
        for i in x:
            cnt += 1
        for i in range(snap):
            out[0] += 1
        return snap * 10000 + qd.length(dyn, []) * 100 + cnt

    assert (a(3), a(2), b(4)) == (312, 30912, 91316)
    assert out.to_numpy().tolist() == [27, 0, 2, 7, 0, 1, 2, 3]
    assert l_.to_numpy()[:14].tolist() == [7, 0, 1, 7, 0, 1, 2, 3, 4, 100, 101, 102, 103, 0]
    assert x.to_numpy().reshape(8, 4).sum(1).tolist() == [3, 0, 0, 0, 0, 0, 0, 0]
    if options in ({}, {"debug": True}):
        assert ("k", "repeated_effect") in [(s.name, s.reason) for s in qd.explain(a).interface]
        reasons = [s.reason for s in qd.explain(b).interface]
        assert "overwritten_reread" in reasons
    elif options:
        assert qd.explain(a).mode == qd.explain(b).mode == "whole_kernel"


def test_sparse_errors_name_the_call() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    y = qd.field(qd.f32, shape=8)
    x = qd.field(qd.i32)
    qd.root.dense(qd.i, 2).dynamic(qd.j, 4).place(x)

    @qd.kernel
    def dense_active() -> qd.i32:
        return qd.is_active(y.parent(), [3])

    @qd.kernel
    def dynamic_active() -> qd.i32:
        return qd.is_active(x.parent(), [1, 2])

    with pytest.raises(qd.QdValueError, match="only works on pointer, hash or bitmasked"):
        dense_active()
    with pytest.raises(qd.QdValueError, match="only works on pointer, hash or bitmasked"):
        dynamic_active()
    with pytest.raises(RuntimeError, match="inside a @qd.kernel"):
        qd.is_active(x.parent(), [0])


def test_place_offset_under_sparse_levels_and_loop_unique() -> None:
    from qdlab.lang.misc import loop_unique

    qd.init(arch=qd.cpu, offline_cache=False)
    a, b, y = qd.field(qd.i32), qd.field(qd.i32), qd.field(qd.i32)
    qd.root.dense(qd.ij, 4).place(a, offset=(2, -3))
    p = qd.root.pointer(qd.i, 4)
    p.dense(qd.i, 2).place(b, offset=-4)
    qd.root.pointer(qd.i, 8).place(y)

    @qd.kernel
    def k() -> qd.i32:
        for i, j in a:
            a[i, j] = i * 10 + j
        b[-3] = 5  # storage index 1: block 0
        s = 0
        for i in b:
            s += i + 100
        return s * 10 + qd.is_active(p, [0])

    @qd.kernel
    def unique():
        for i in y:
            v = loop_unique(y[i] + 2, covers=[])
            b[v - 6] += 1

    assert (k(), a[2, -3], a[5, 0], b[-3]) == (1931, 17, 50, 5)
    y[1] = 3
    y[4] = 3
    unique()
    assert b.to_numpy().tolist() == [0, 5, 0, 2, 0, 0, 0, 0]
    with pytest.raises(qd.QuadrantsCompilationError, match="dimensionality of shape and offset"):
        qd.field(qd.f32, shape=3, offset=(3, 4))
    with pytest.raises(qd.QuadrantsCompilationError, match="shape cannot be None"):
        qd.Vector.field(3, qd.f32, shape=None, offset=(3,))


def test_dynamic_methods_no_activate_and_overflow() -> None:
    """`x[i].append(v)`, `x[i].length()`, `x[i].deactivate()` and the 1-D forms (`y.append(v)`),
    a vector appended from a list, `qd.no_activate` (a hint), and appends past a dynamic level's
    extent (the length grows, nothing is stored), as quadrants 1.3.3 gave them."""
    qd.init(arch=qd.cpu, offline_cache=False, debug=True)
    n = 6
    x, y, z = qd.field(int), qd.field(int), qd.field(int)
    qd.root.dense(qd.i, n).dynamic(qd.j, n).place(x)
    dyn = qd.root.dynamic(qd.i, n)
    dyn.place(y)
    v = qd.Vector.field(2, qd.f32)
    qd.root.dynamic(qd.i, 8).place(v)
    qd.root.dynamic(qd.i, 4, chunk_size=2).place(z)
    guard = qd.field(int, shape=8)

    @qd.kernel
    def k() -> int:
        qd.no_activate(dyn)
        for i in range(n):
            for j in range(i):
                x[i].append(j * 10)
        s = 0
        for i in range(n):
            s += x[i].length() * 100
        x[3].deactivate()
        for j in range(n):
            y.append(j + 1)
        s += y.length()
        r = v.append([1.5, 2.5])
        v.append(qd.Vector([3.0, 4.0]))
        return s + v.length() * 10000 + r

    @qd.kernel
    def overflow() -> int:
        s = 0
        for j in range(6):
            s = s * 10 + qd.append(z.parent(), [], j + 1)
        return s * 10 + z.length()

    guard.fill(7)
    assert k() == 21506
    assert x.to_numpy().tolist() == [
        [0] * 6,
        [0] * 6,
        [0, 10, 0, 0, 0, 0],
        [0] * 6,
        [0, 10, 20, 30, 0, 0],
        [0, 10, 20, 30, 40, 0],
    ]
    assert y.to_numpy().tolist() == [1, 2, 3, 4, 5, 6]
    assert v.to_numpy()[:3].tolist() == [[1.5, 2.5], [3.0, 4.0], [0.0, 0.0]]
    assert overflow() == 123456
    assert z.to_numpy().tolist() == [1, 2, 3, 4] and guard.to_numpy().tolist() == [7] * 8


def test_snode_tree_ids_count_launches() -> None:
    """`x.snode._snode_tree_id`: the fields made before a launch or host access share a tree,
    each batch after one starts the next (quadrants 1.3.3 gave [0, 0, 1, 1, 2])."""
    qd.init(arch=qd.cpu, offline_cache=False)

    @qd.kernel
    def touch(_: qd.template()):
        pass

    a, b = qd.field(int, shape=()), qd.field(int)
    qd.root.pointer(qd.i, 4).place(b)
    touch(a)
    c, d = qd.field(int, shape=()), qd.field(int, shape=3)
    assert c[None] == 0
    e = qd.field(int, shape=())
    touch(e)
    assert [f.snode._snode_tree_id for f in (a, b, c, d, e)] == [0, 0, 1, 1, 2]


@pytest.mark.parametrize("options", PATHS, ids=["split", "whole", "uncarried", "debug"])
def test_struct_for_walks_active_blocks(options: dict) -> None:
    """A struct-for under a pointer level walks its active blocks (a serial loop over each
    block's cells): offsets, a pointer over one axis of two, a bitmasked level below the block,
    `qd.grouped` and a `continue` in the body give what the flat walk gives (NumPy here)."""
    qd.init(arch=qd.cpu, offline_cache=False, **options)
    a, b, c = qd.field(qd.i32), qd.field(qd.i32), qd.field(qd.i32)
    qd.root.pointer(qd.i, 4).dense(qd.ij, (4, 6)).place(a, offset=(-5, 2))
    qd.root.pointer(qd.ij, 3).bitmasked(qd.ij, 4).place(b)
    qd.root.pointer(qd.i, 6).place(c)

    @qd.kernel
    def walk() -> qd.i32:
        a[-4, 3] = 1
        a[6, 7] = 2
        b[1, 2] = 3
        b[9, 10] = 4
        b[9, 11] = 5
        c[4] = 6
        s = 0
        for i, j in a:
            s += (i + 10) * 100 + j
        for I in qd.grouped(b):
            if b[I] == 4:
                continue
            s += (I[0] * 20 + I[1]) * 10000
        for i in c:
            s += i * 1000000
        return s

    rows_a = [(i, j) for i in range(-5, -1) for j in range(2, 8)]
    rows_a += [(i, j) for i in range(3, 7) for j in range(2, 8)]
    want = sum((i + 10) * 100 + j for i, j in rows_a)
    want += (1 * 20 + 2) * 10000 + (9 * 20 + 11) * 10000 + 4 * 1000000
    assert walk() == want
