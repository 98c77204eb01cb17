"""The runtime tracks its live ndarrays and `qd.reset()` / `qd.init()` release them, as Quadrants
1.3.3 does: `get_runtime().ndarrays` holds one entry per live `qd.ndarray` (a gradient is one of
its own, a kernel launch adds none, a dropped one leaves), and a released ndarray reads `arr`,
`shape`, `dtype`, `element_type` and `grad` as None. The counts below were recorded on the real
quadrants. Where Quadrants then fails on None, or reads freed memory (a kernel launch, a zero-copy
view), qdlab raises an error that names the ndarray, or the kernel and its argument."""

from __future__ import annotations

import copy
import dataclasses
import gc
import pickle
import re
import weakref

import numpy as np
import pytest

import qdlab as qd
from qdlab.lang import impl

RELEASED = re.escape("qd.reset() or a later qd.init() released it")


def live() -> int:
    return len(impl.get_runtime().ndarrays)


def test_the_runtime_counts_each_live_ndarray() -> None:
    qd.init(arch=qd.cpu)
    assert live() == 0
    a = qd.ndarray(qd.i32, shape=(5,))
    v = qd.Vector.ndarray(3, qd.f32, shape=(4,))
    m = qd.Matrix.ndarray(2, 2, qd.f32, shape=(4,))
    w = qd.ndarray(qd.math.vec3, 2)
    assert live() == 4
    g = qd.ndarray(qd.f32, shape=(3,), needs_grad=True)
    assert live() == 6  # its gradient is an ndarray of its own, as in Quadrants
    assert g in impl.get_runtime().ndarrays and g.grad in impl.get_runtime().ndarrays
    c = pickle.loads(pickle.dumps(a))  # a new ndarray: counted
    assert live() == 7
    t = qd.tensor(qd.f32, (3,), backend=qd.Backend.NDARRAY)
    f = qd.field(qd.f32, (3,))  # a field is not an ndarray
    assert live() == 8
    tmp = qd.ndarray(qd.i32, shape=(42,))
    assert live() == 9
    tmp = None
    gc.collect()
    assert live() == 8
    del a, v, m, w, g, c, t, f, tmp


def test_a_kernel_launch_neither_adds_nor_keeps_an_ndarray() -> None:
    qd.init(arch=qd.cpu)

    @qd.kernel
    def bump(x: qd.types.NDArray[qd.i32, 1]) -> None:
        x[3] += 2

    a = qd.ndarray(qd.i32, (8,))
    bump(a)
    bump(a)  # the launch cache's path too
    bump(np.zeros(8, np.int32))
    assert live() == 1 and a[3] == 4
    gone = weakref.ref(a)
    del a
    gc.collect()
    assert gone() is None and live() == 0  # tracking holds it weakly, and so does the kernel


@pytest.mark.parametrize("restart", ["reset", "init"])
def test_reset_and_init_release_every_ndarray(restart: str) -> None:
    qd.init(arch=qd.cpu)
    a = qd.ndarray(qd.i32, shape=(5,))
    v = qd.Vector.ndarray(3, qd.f32, shape=(4,))
    m = qd.Matrix.ndarray(2, 3, qd.f32, shape=(4,))
    g = qd.ndarray(qd.f32, shape=(3,), needs_grad=True)
    grad = g.grad
    assert live() == 5
    qd.reset() if restart == "reset" else qd.init(arch=qd.cpu)
    assert live() == 0  # a fresh runtime
    for nd in (a, v, m, g, grad):
        assert nd.arr is None and nd.shape is None and nd.grad is None
        assert nd.dtype is None and nd.element_type is None
        assert not nd.has_grad()
        t = nd.get_type()  # Quadrants' metadata of None
        assert (t.element_type, t.shape, t.needs_grad) == (None, None, False)
    assert (v.n, m.n, m.m) == (3, 2, 3)  # instance attributes Quadrants leaves as they were
    assert repr(a) == "qd.ndarray(i32, (5,)) (released)"
    qd.reset()  # releasing again is harmless


def test_ndarrays_made_before_the_first_init_are_released_by_it() -> None:
    """qdlab runs before `qd.init` under the defaults (Quadrants refuses an ndarray then); the
    first `qd.init` releases them as any later one does, as it drops the fields made before."""
    qd.reset()
    early = qd.ndarray(qd.f32, (3,))
    assert early in impl.get_runtime().ndarrays
    qd.init(arch=qd.cpu)
    assert early.arr is None and live() == 0


HOST_USES = {
    "a[0]": lambda a: a[0],
    "a[0] = 1": lambda a: a.__setitem__(0, 1),
    "a[1:3]": lambda a: a[1:3],
    "to_numpy": lambda a: a.to_numpy(),
    "to_numpy(copy=False)": lambda a: a.to_numpy(copy=False),
    "np.asarray": np.asarray,
    "from_numpy": lambda a: a.from_numpy(np.zeros(4, np.float32)),
    "fill": lambda a: a.fill(1.0),
    "copy_from": lambda a: a.copy_from(qd.ndarray(qd.f32, (4,))),
    "to_dlpack": lambda a: a.to_dlpack(),
    "deepcopy": copy.deepcopy,
    "pickle": pickle.dumps,
    "element_shape": lambda a: a.element_shape,
    "_get_nelement": lambda a: a._get_nelement(),
}


@pytest.mark.parametrize("use", HOST_USES.values(), ids=HOST_USES.keys())
def test_host_use_of_a_released_ndarray_names_it(use) -> None:
    qd.init(arch=qd.cpu)
    a = qd.ndarray(qd.f32, (4,))
    qd.reset()
    qd.init(arch=qd.cpu)
    with pytest.raises(qd.QuadrantsRuntimeError, match=r"qd\.ndarray\(f32, \(4,\)\) cannot be"):
        use(a)


def test_vector_and_matrix_ndarrays_name_their_element() -> None:
    qd.init(arch=qd.cpu)
    v = qd.Vector.ndarray(3, qd.f32, shape=(4,))
    m = qd.Matrix.ndarray(2, 2, qd.i32, shape=(2, 3))
    qd.reset()
    with pytest.raises(qd.QuadrantsRuntimeError, match=r"qd\.ndarray\(f32\[3\], \(4,\)\) cannot"):
        v[0]
    with pytest.raises(qd.QuadrantsRuntimeError, match=r"qd\.ndarray\(i32\[2, 2\], \(2, 3\)\)"):
        m.to_numpy()


def test_copy_from_a_released_ndarray_names_the_source() -> None:
    qd.init(arch=qd.cpu)
    old = qd.ndarray(qd.i32, (2,))
    qd.init(arch=qd.cpu)
    new = qd.ndarray(qd.i32, (2,))
    with pytest.raises(qd.QuadrantsRuntimeError, match=r"qd\.ndarray\(i32, \(2,\)\) cannot"):
        new.copy_from(old)
    assert new.to_numpy().tolist() == [0, 0]


def test_a_kernel_refuses_a_released_ndarray_by_name_and_stays_right() -> None:
    """Even after a live ndarray of the same signature filled the kernel's launch cache: a
    released one never launches with the freed buffer's words."""
    qd.init(arch=qd.cpu)

    @qd.kernel
    def bump(x: qd.types.NDArray[qd.i32, 1]) -> None:
        x[0] += 1

    old = qd.ndarray(qd.i32, (4,))
    bump(old)
    qd.init(arch=qd.cpu)
    new = qd.ndarray(qd.i32, (4,))
    bump(new)
    bump(new)
    for _ in range(2):
        with pytest.raises(TypeError, match=r"bump`: argument `x` is qd\.ndarray\(i32, "):
            bump(old)
    bump(new)
    assert new.to_numpy().tolist() == [3, 0, 0, 0]


@dataclasses.dataclass
class Pair:
    x: qd.types.NDArray[qd.i32, 1]
    y: qd.types.NDArray[qd.i32, 1]


@qd.data_oriented
class Counter:
    def __init__(self) -> None:
        self.x = qd.ndarray(qd.i32, (4,))

    @qd.kernel
    def run(self) -> None:
        self.x[0] += 1


def test_members_tensors_and_views_of_released_ndarrays_are_refused_by_name() -> None:
    qd.init(arch=qd.cpu)

    @qd.kernel
    def add(p: Pair) -> None:
        p.x[0] += p.y[0]

    @qd.kernel
    def on_tensor(t: qd.Tensor) -> None:
        t[0] += 1

    @qd.kernel
    def on_view(v: qd.BufferView) -> None:
        v[0] += 1

    y = np.ones(4, np.int32)
    pair, counter = Pair(qd.ndarray(qd.i32, (4,)), y), Counter()
    tensor = qd.tensor(qd.i32, (4,), backend=qd.Backend.NDARRAY)
    view = qd.ndarray(qd.i32, (8,))[2:5]
    for _ in range(2):  # the launch caches too
        add(pair)
        counter.run()
        on_tensor(tensor)
        on_view(view)
    old = pair.x
    qd.reset()
    qd.init(arch=qd.cpu)
    released = r"is qd\.ndarray\(i32, \((4|8),\)\), which cannot be passed"
    with pytest.raises(TypeError, match=r"add`: argument `p\.x` " + released):
        add(pair)
    with pytest.raises(TypeError, match=r"run`: argument `self\.x` " + released):
        counter.run()
    with pytest.raises(TypeError, match=r"on_tensor`: argument `t` " + released):
        on_tensor(tensor)
    with pytest.raises(TypeError, match=r"on_view`: argument `v\.arr` " + released):
        on_view(view)
    with pytest.raises(qd.QuadrantsRuntimeError, match=RELEASED):
        _ = tensor.shape
    assert repr(tensor) == "Tensor(qd.ndarray(i32, (4,)) (released))"
    fresh = Pair(qd.ndarray(qd.i32, (4,)), y)  # a live member fills the caches again...
    add(fresh)
    add(fresh)
    fresh.x = old  # ...and a released one put in its place is refused, not launched
    with pytest.raises(TypeError, match=r"argument `p\.x` " + released):
        add(fresh)


def test_a_zero_copy_view_keeps_its_memory_after_the_release() -> None:
    """Quadrants frees the buffer under a `to_numpy(copy=False)` view (reading it then crashes
    the process); in qdlab the view keeps the memory it shows, with the values it had."""
    qd.init(arch=qd.cpu)
    a = qd.ndarray(qd.f32, (4,))
    a[1] = 2.5
    view = a.to_numpy(copy=False)
    qd.reset()
    assert a.arr is None
    assert view.tolist() == [0.0, 2.5, 0.0, 0.0]


def test_torch_exchange_of_a_released_ndarray_names_it() -> None:
    torch = pytest.importorskip("torch")
    qd.init(arch=qd.cpu)
    a = qd.ndarray(qd.f32, (4,))
    qd.reset()
    for use in (lambda: a.to_torch(), lambda: a.to_torch(copy=False)):
        with pytest.raises(qd.QuadrantsRuntimeError, match=RELEASED):
            use()
    with pytest.raises(qd.QuadrantsRuntimeError, match=RELEASED):
        a.from_torch(torch.zeros(4))


def test_an_init_refused_for_its_options_releases_nothing() -> None:
    """Quadrants resets before it reads the options (and is left without settings); qdlab checks
    them first, so the program and its ndarrays go on."""
    qd.init(arch=qd.cpu)
    a = qd.ndarray(qd.i32, (3,))
    with pytest.raises(KeyError, match="bogus_option"):
        qd.init(arch=qd.cpu, bogus_option=1)
    a[0] = 4
    assert a.to_numpy().tolist() == [4, 0, 0] and a in impl.get_runtime().ndarrays


@qd.data_oriented
class Tensors:
    """Genesis' way: a solver's state held as `qd.tensor`s (ndarray backend), read as struct
    members by its kernels."""

    def __init__(self) -> None:
        self.a = qd.tensor(qd.i32, (4,), backend=qd.Backend.NDARRAY)
        self.b = qd.tensor(qd.i32, (4,), backend=qd.Backend.NDARRAY)
        self.f = qd.tensor(qd.i32, (4,), backend=qd.Backend.FIELD)

    @qd.kernel
    def step(self) -> None:
        for i in range(4):
            self.a[i] += self.b[i] + self.f[i]


def test_tensor_members_launch_and_are_refused_once_released() -> None:
    """A tensor member's launch words are the ndarray's, copied into the tensor (a launch reads
    them as plain attributes); `qd.reset()` drops them with the ndarray's, so a launch after it
    refuses the member by name instead of writing freed memory."""
    qd.init(arch=qd.cpu)
    s = Tensors()
    s.b.from_numpy(np.arange(4, dtype=np.int32))
    s.f.from_numpy(np.full(4, 10, np.int32))
    for _ in range(3):  # the launch caches too
        s.step()
    assert s.a.to_numpy().tolist() == [30, 33, 36, 39]
    assert s.a._words == s.a._impl._words  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        _ = s.f._words  # a field tensor has none: its launches bind the slow way
    qd.reset()
    qd.init(arch=qd.cpu)
    assert not hasattr(s.a, "_words")
    with pytest.raises(TypeError, match=r"step`: argument `self\.a` is qd\.ndarray\(i32, \(4,\)\)"):
        s.step()
