"""Layout inspection of SNode trees: the bytes Quadrants' CPU backend gives a cell and a member's
offset in its parent's cell (values recorded from quadrants 1.3.3), a field's place node and its
parents, and the refusal where qdlab cannot know Quadrants' answer."""

from __future__ import annotations

import pytest

import qdlab as qd
from qdlab.lang import impl


@pytest.fixture(autouse=True)
def _cpu() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)


def test_cells_and_offsets_of_dense_levels() -> None:
    x, y, z = qd.field(qd.i16), qd.field(qd.f32), qd.field(qd.f64)
    n1 = qd.root.dense(qd.i, 32)
    n1.place(x)
    n2 = qd.root.dense(qd.i, 32)
    n2.place(y, z)
    assert (n1._cell_size_bytes, n2._cell_size_bytes) == (2, 16)  # f64 aligned to 8
    assert (n2._offset_bytes_in_parent_cell, z.snode._offset_bytes_in_parent_cell) == (64, 8)
    assert x.snode._cell_size_bytes == 0
    # the query finalized that tree: what is made now starts a tree of its own
    v, w = qd.Vector.field(3, qd.f32), qd.field(qd.u8)
    n4 = qd.root.dense(qd.i, 5)
    n4.place(w, v)
    assert (n4._cell_size_bytes, n4._offset_bytes_in_parent_cell) == (16, 0)
    assert v.snode._offset_bytes_in_parent_cell == 4
    s, t = qd.field(qd.f32), qd.field(qd.i8)
    m = qd.root.dense(qd.i, 2)
    m.place(s)
    m2 = m.dense(qd.j, 3)
    m2.place(t)
    assert (m._cell_size_bytes, m2._offset_bytes_in_parent_cell, m2._cell_size_bytes) == (8, 4, 1)


def test_bitpacked_words_and_packed_levels() -> None:
    q = qd.field(dtype=qd.types.quant.int(16, False))
    f = qd.field(qd.f32)
    n = qd.root.dense(qd.i, 4)
    pack = qd.BitpackedFields(max_num_bits=32)
    pack.place(q)
    n.place(pack)
    n.place(f)
    assert n._cell_size_bytes == 8
    g = qd.field(qd.i32)
    qd.root.dense(qd.l, 2).dense(qd.ijk, 5).place(g)
    assert g.snode.parent().parent()._cell_size_bytes == 4 * 5**3  # no padding to a power of 2


def test_place_nodes_and_their_parents() -> None:
    val = qd.field(qd.i32)
    b1 = qd.root.dense(qd.k, 3)
    b2 = b1.dense(qd.i, 7)
    b3 = b2.dense(qd.j, 11)
    b3.place(val)
    assert val.snode.parent(0) == val.snode and val.snode.parent() is b3
    assert val.snode.parent(3) is b1 and val.snode.parent(4) is qd.root
    assert val.snode._path_from_root() == [qd.root, b1, b2, b3, val.snode]
    assert val.snode in b3._get_children() and b2 in b1._get_children()
    impl.get_runtime().materialize_root_fb(False)
    assert b1 in qd.FieldsBuilder._finalized_roots()[0]._get_children()
    assert (
        str(val.snode)
        == "qd.root => dense [3] => dense [7, 3] => dense [7, 11, 3] => place [7, 11, 3]"
    )


def test_unknown_layouts_are_refused() -> None:
    a = qd.field(qd.f32)
    p = qd.root.pointer(qd.i, 4)
    p.dense(qd.i, 8).place(a)
    with pytest.raises(NotImplementedError, match="pointer level"):
        p._cell_size_bytes  # noqa: B018
    qd.field(qd.f32, shape=10)  # its level's place under the root is not known
    b = qd.field(qd.f32)
    n = qd.root.dense(qd.i, 4)
    n.place(b)
    assert n._cell_size_bytes == 4
    with pytest.raises(NotImplementedError, match="made with shape="):
        n._offset_bytes_in_parent_cell  # noqa: B018
