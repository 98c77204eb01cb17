"""A bitmasked level keeps its activity as bits (a u32 word of 32 flags per 32 cells of a parent
cell, `qdlab.core.sparse`): cells sharing a word activated at once from a parallel loop, one bit
deactivated beside active neighbours, cells past the first word, struct-fors that walk the words
(skipping zero ones) of each layout, and the layout showing in the construct's key. The expected
values were measured on the reference (quadrants 1.3.3) for the same programs."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd
from qdlab.compiler import pipeline
from qdlab.core.sparse import Level, flags, locate, mask_shape


def test_flags_and_locate_agree() -> None:
    """The host's view of the words (`flags`) puts each bit where `locate` says it is."""
    own = (5, 7)
    words = np.zeros(mask_shape((10, 14), own), np.uint32)
    level = Level("bitmasked", None, "b", ((0, 1), (1, 1)), None, own)  # type: ignore[arg-type]
    cells = [(0, 0), (0, 6), (4, 4), (4, 6), (5, 0), (9, 13), (7, 8)]
    for cell in cells:
        word, bit = locate(level, cell)
        words[word] |= np.uint32(bit)
    assert words.shape == (2, 2, 2)  # 35 cells per parent cell: two words
    want = np.zeros((10, 14), bool)
    want[tuple(np.array(cells).T)] = True
    np.testing.assert_array_equal(flags(level, words), want)


def sharing_words() -> tuple:
    x = qd.field(qd.i32)
    ptr = qd.root.pointer(qd.i, 4)
    bm = ptr.bitmasked(qd.i, 48)  # two words per block, the second half used
    bm.place(x)
    return x, ptr, bm


def test_parallel_activation_of_cells_sharing_words() -> None:
    qd.init(arch=qd.cpu, offline_cache=False, cpu_max_num_threads=8)
    x, ptr, bm = sharing_words()

    @qd.kernel
    def fill_many(n: qd.i32):
        for t in range(n):  # every thread sets bits of the same few words
            qd.activate(bm, [t % 96])

    @qd.kernel
    def stats() -> qd.i64:
        s = qd.cast(0, qd.i64)
        for i in x:
            s += (i + 1) * (i + 7) * 1000 + 1
        return s

    fill_many(100000)
    assert stats() == 327472 * 1000 + 96
    assert (bm._num_dynamically_allocated, ptr._num_dynamically_allocated) == (96, 2)


def test_deactivating_one_bit_keeps_its_neighbours() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    x, _ptr, bm = sharing_words()

    @qd.kernel
    def fill():
        for t in range(96):
            qd.activate(bm, [t])

    @qd.kernel
    def act(c: qd.i32):
        x[c] = c + 1

    @qd.kernel
    def deact(c: qd.i32):
        qd.deactivate(bm, [c])

    @qd.kernel
    def stats() -> qd.i64:
        s = qd.cast(0, qd.i64)
        for i in x:
            s += (i + 1) * (i + 7) * 1000 + 1
        return s

    @qd.kernel
    def serial(out: qd.types.ndarray(dtype=qd.i32, ndim=1)) -> qd.i32:
        n = 0
        qd.loop_config(serialize=True)
        for i in x:
            out[n] = i
            n += 1
        return n

    fill()
    for c in (33, 31, 48):  # each side of a word's edge, and a block's first cell
        deact(c)
    assert stats() == 322201 * 1000 + 93
    act(33)
    assert stats() == 323561 * 1000 + 94
    assert x.to_numpy()[28:36].tolist() == [0, 0, 0, 0, 0, 34, 0, 0]
    x[150] = 5  # a host write sets its bit too
    assert stats() == 347268 * 1000 + 95
    out = np.zeros(200, np.int32)
    n = serial(out)
    assert out[:n].tolist() == [i for i in range(96) if i not in (31, 48)] + [150]
    bm.deactivate_all()
    assert stats() == 0 and x.to_numpy().sum() == 0


def test_cells_past_the_first_word() -> None:
    """35 cells per parent cell (two words), in 2-D under a dense level."""
    qd.init(arch=qd.cpu, offline_cache=False)
    y = qd.field(qd.f32)
    bm = qd.root.dense(qd.i, 2).bitmasked(qd.ij, (5, 7))
    bm.place(y)

    @qd.kernel
    def fill():
        for i, j in qd.ndrange(10, 7):
            if (i * 7 + j) % 4 == 1:
                y[i, j] = i * 10 + j

    @qd.kernel
    def total() -> qd.f32:
        s = 0.0
        for i, j in y:
            s += y[i, j] * (i + 1)
        return s

    @qd.kernel
    def active(i: qd.i32, j: qd.i32) -> qd.i32:
        return qd.is_active(bm, [i, j])

    fill()
    assert total() == 6432.0
    assert [active(1, 6), active(2, 0), active(9, 6), active(0, 0)] == [1, 0, 1, 0]
    assert y.to_numpy().sum() == 876.0


@pytest.mark.parametrize("serialize", [False, True], ids=["parallel", "serial"])
def test_struct_fors_over_each_bitmasked_layout(serialize: bool) -> None:
    """A bitmasked level alone (its words walked in parallel), over a dense level (a bit per
    block), under a pointer over a dense level (a bit per cell of a block), and the struct-for over
    a bitmasked SNode's own cells (its words walked per pointer block)."""
    qd.init(arch=qd.cpu, offline_cache=False)
    a, b, c = qd.field(qd.i32), qd.field(qd.f32), qd.field(qd.i32)
    bma = qd.root.bitmasked(qd.ij, (9, 7))
    bma.place(a)
    bmb = qd.root.bitmasked(qd.ij, 4)
    bmb.dense(qd.ij, 2).place(b)
    pc = qd.root.pointer(qd.i, 4)
    bmc = pc.bitmasked(qd.i, 64)
    bmc.dense(qd.i, 2).place(c)

    @qd.kernel
    def fill():
        for i, j in qd.ndrange(9, 7):
            if (i + 2 * j) % 3 == 0:
                a[i, j] = i * 7 + j + 1
        for i, j in qd.ndrange(8, 8):
            if i == j or i + j == 5:
                b[i, j] = i - j + 0.5
        for i in range(512):
            if i % 5 == 0 or i % 7 == 3:
                c[i] = i

    @qd.kernel
    def drop_odd():
        for i in range(63):
            if i % 2 == 1:
                qd.deactivate(bma, [i // 7, i % 7])

    @qd.kernel
    def drop_block():
        qd.deactivate(pc, [1])

    @qd.kernel
    def stats() -> qd.i64:
        s = qd.cast(0, qd.i64)
        n = 0
        qd.loop_config(serialize=serialize)
        for i, j in a:
            if j == 3:
                continue
            s += a[i, j] * (i + 1) * (j + 3)
            n += 1
        qd.loop_config(serialize=serialize)
        for i, j in b:
            s += qd.cast(b[i, j] * 4, qd.i64) * (i * 8 + j + 1) * 1000
            n += 1
        qd.loop_config(serialize=serialize)
        for i in c:
            s += c[i] * (i + 11) * 100000
            n += 1
        return s * 1000 + n

    @qd.kernel
    def cells_of_c() -> qd.i32:
        n = 0
        qd.loop_config(serialize=serialize)
        for i in bmc:
            n += i + 1
        return n

    fill()
    assert (stats(), cells_of_c()) == (22579429965336, 18975)
    assert (int(a.to_numpy().sum()), int(np.count_nonzero(a.to_numpy()))) == (651, 21)
    drop_odd()
    assert stats() == 22579418817328
    assert np.flatnonzero(a.to_numpy()).tolist() == [0, 6, 8, 16, 24, 32, 40, 42, 48, 50, 58]
    drop_block()
    assert (stats(), cells_of_c()) == (21338776065254, 15431)
    c[100] = 9
    assert (stats(), cells_of_c()) == (20328676065254, 15431)
    bmb.deactivate_all()
    assert stats() == 20326894065230
    assert round(float(qd.sparse.usage(a)), 6) == 0.174603


def test_sparse_grid_usage_counts_bits() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    g = qd.sparse.grid({"m": qd.f32}, shape=(40, 40))

    @qd.kernel
    def fill():
        for i in range(40):
            g[i, (i * 7) % 40].m = 1.0
            g[i, (i * 3) % 40].m = 2.0

    fill()
    assert round(float(qd.sparse.usage(g)), 6) == 0.0475


def test_the_bit_layout_is_in_the_construct_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two layouts of the same shape whose bits sit in different words compile to different
    constructs (the cell-to-bit map is in the IR text a key digests)."""
    keys: list[list[tuple[str, str]]] = []
    prepare = pipeline.prepare

    def spy(*args: object, **kwargs: object) -> pipeline.Prepared:
        got = prepare(*args, **kwargs)  # type: ignore[arg-type]
        keys[-1].append((got.key, got.text))
        return got

    monkeypatch.setattr(pipeline, "prepare", spy)
    for blocks in (4, 2):
        keys.append([])
        assert launch_on(blocks) == 37
    bits = [{key for key, text in got if "%bitmasked_activity = arg" in text} for got in keys]
    assert bits[0] and bits[1] and not bits[0] & bits[1]


def launch_on(blocks: int) -> int:
    """A kernel that activates and struct-fors a field of 64 cells in `blocks` pointer blocks."""
    qd.init(arch=qd.cpu, offline_cache=False)
    x = qd.field(qd.i32)
    qd.root.pointer(qd.i, blocks).bitmasked(qd.i, 64 // blocks).place(x)

    @qd.kernel
    def k() -> qd.i32:
        x[37] = 1
        n = 0
        for i in x:
            n += i
        return n

    return k()


def test_a_write_to_the_visited_cell_emits_no_activation(monkeypatch: pytest.MonkeyPatch) -> None:
    """In a struct-for, a write with the loop's own indices to a field of the same levels is to
    an active cell: no activity op is emitted for it (the stencil's store), and the values are
    those measured on the reference."""
    texts: list[str] = []
    prepare = pipeline.prepare

    def spy(*args: object, **kwargs: object) -> pipeline.Prepared:
        got = prepare(*args, **kwargs)  # type: ignore[arg-type]
        texts.append(got.text)
        return got

    monkeypatch.setattr(pipeline, "prepare", spy)
    qd.init(arch=qd.cpu, offline_cache=False)
    x, y = qd.field(qd.i32), qd.field(qd.i32)
    qd.root.pointer(qd.i, 4).bitmasked(qd.i, 16).place(x, y)

    @qd.kernel
    def fill():
        for i in range(64):
            if i % 3 == 0:
                x[i] = i

    @qd.kernel
    def double():
        for i in x:
            y[i] = x[i] * 2 + x[i - 1] if i > 0 else 5
            y[i] += 1

    @qd.kernel
    def stats() -> qd.i32:
        s = 0
        for i in y:
            s += y[i] * (i + 1) + 1
        return s

    fill()
    texts.clear()
    double()
    assert texts and not any("atomic %bitmasked_activity" in t for t in texts)
    assert stats() == 61726
    assert y.to_numpy()[:8].tolist() == [6, 0, 0, 7, 0, 0, 13, 0]


def test_words_walked_under_an_offset() -> None:
    """A field placed with an offset under pointer and bitmasked levels: the word walk's indices
    start where the field's do."""
    qd.init(arch=qd.cpu, offline_cache=False)
    x, y = qd.field(qd.i32), qd.field(qd.i32)
    qd.root.pointer(qd.ij, 2).bitmasked(qd.ij, 8).place(x, y, offset=(-5, 3))

    @qd.kernel
    def fill():
        for i, j in qd.ndrange((-5, 11), (3, 19)):
            if (i * 3 + j) % 7 == 0:
                x[i, j] = i * 100 + j

    @qd.kernel
    def copy():
        for i, j in x:
            y[i, j] = x[i, j] + 1

    @qd.kernel
    def total() -> qd.i64:
        t = qd.cast(0, qd.i64)
        for i, j in y:
            t += y[i, j] * (i + 10) * (j + 1) + 1
        return t

    fill()
    copy()
    assert (total(), int(y.to_numpy().sum())) == (2239365, 9812)
