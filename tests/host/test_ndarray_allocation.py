"""An ndarray's `.arr`: still the NumPy array qdlab's host code and programs index, and also what
Quadrants programs ask of `.arr`: `device_allocation_ptr()` is the address that kernels write
through (checked by reading and writing memory there with ctypes), the same across launches and
host writes, another for every live ndarray and gradient buffer (as quadrants 1.3.3 answers), and
`total_shape()` the shape with the element's axes, in memory's order (quadrants' values)."""

from __future__ import annotations

import copy
import ctypes
import gc
import os
import pickle

import numpy as np
import pytest

import qdlab as qd


def at(address: int, dtype: type[np.generic], shape: tuple[int, ...]) -> np.ndarray:
    """The memory at `address`, read as a C-ordered array (a view, not a copy)."""
    count = int(np.prod(shape, dtype=np.int64))
    buffer = (ctypes.c_char * (count * np.dtype(dtype).itemsize)).from_address(address)
    return np.frombuffer(buffer, dtype).reshape(shape)


def test_pointer_is_where_kernels_write() -> None:
    qd.init(arch=qd.cpu)

    @qd.kernel
    def number(x: qd.types.ndarray(qd.f32, ndim=2)):
        for i, j in x:
            x[i, j] = i * 10 + j

    a = qd.ndarray(qd.f32, shape=(3, 4), needs_grad=True)
    number(a)
    want = np.add.outer(np.arange(3) * 10, np.arange(4)).astype(np.float32)
    np.testing.assert_array_equal(at(a.arr.device_allocation_ptr(), np.float32, (3, 4)), want)
    number(a.grad)  # the gradient buffer: its own pointer, where a launch with it writes
    np.testing.assert_array_equal(at(a.grad.arr.device_allocation_ptr(), np.float32, (3, 4)), want)
    at(a.arr.device_allocation_ptr(), np.float32, (3, 4))[1, 2] = -5.0  # and the other way
    assert a[1, 2] == -5.0 and a.to_numpy()[1, 2] == -5.0


def test_vector_elements_follow_their_index() -> None:
    qd.init(arch=qd.cpu)

    @qd.kernel
    def fill(v: qd.types.ndarray(qd.math.vec3, ndim=2)):
        for i, j in v:
            v[i, j] = qd.math.vec3(i, j, 7)

    v = qd.Vector.ndarray(3, qd.f32, shape=(5, 2))
    fill(v)
    assert v.arr.total_shape() == [5, 2, 3]
    np.testing.assert_array_equal(
        at(v.arr.device_allocation_ptr(), np.float32, (5, 2, 3)), v.to_numpy()
    )
    assert qd.Matrix.ndarray(2, 3, qd.f64, shape=7).arr.total_shape() == [7, 2, 3]
    assert qd.ndarray(qd.f32, shape=()).arr.total_shape() == []


def test_pointer_is_stable_and_distinct() -> None:
    qd.init(arch=qd.cpu)

    @qd.kernel
    def bump(x: qd.types.ndarray(qd.i32, ndim=1)):
        for i in x:
            x[i] += 1

    live = [qd.ndarray(qd.f32, shape=(1,), needs_grad=True) for _ in range(20)]
    pointers = [
        p for a in live for p in (a.arr.device_allocation_ptr(), a.grad.arr.device_allocation_ptr())
    ]
    assert len(set(pointers)) == 40
    c1, c2 = qd.ndarray(qd.i32, shape=()), qd.ndarray(qd.i32, shape=())
    assert c1.arr.device_allocation_ptr() != c2.arr.device_allocation_ptr()
    a = qd.ndarray(qd.i32, shape=(4,))
    p = a.arr.device_allocation_ptr()
    bump(a)
    bump(a)
    a.from_numpy(np.arange(4, dtype=np.int32))
    a.fill(3)
    a[0] = 9
    assert a.arr.device_allocation_ptr() == p and a.arr is a.arr
    assert copy.deepcopy(a).arr.device_allocation_ptr() != p
    assert pickle.loads(pickle.dumps(a)).arr.device_allocation_ptr() != p


def test_arr_stays_the_numpy_array_and_exports_stay_plain() -> None:
    qd.init(arch=qd.cpu)
    a = qd.ndarray(qd.f32, shape=(3, 4))
    a.arr[1, 2] = 4.5  # writes the storage kernels read
    assert isinstance(a.arr, np.ndarray) and a.arr.shape == (3, 4) and a[1, 2] == 4.5
    for out in (a.to_numpy(), a.to_numpy(copy=False), a[1, :], np.asarray(a)):
        assert type(out) is np.ndarray
    assert a.to_numpy(copy=False).ctypes.data == a.arr.device_allocation_ptr()
    v = qd.Vector.ndarray(3, qd.f32, shape=(2,))
    assert type(v[1].entries) is np.ndarray


def _huge_page_flags(lo: int, hi: int) -> list[bool]:
    """Per mapping of this process overlapping [lo, hi): whether it asks for huge pages ('hg')."""
    out, inside = [], False
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()[0]
            if "-" in head and not head.endswith(":"):
                start, end = (int(x, 16) for x in head.split("-"))
                inside = start < hi and lo < end
            elif inside and line.startswith("VmFlags"):
                out.append("hg" in line.split()[1:])
    return out


@pytest.mark.skipif(not os.path.exists("/proc/self/smaps"), reason="reads Linux's /proc/self/smaps")
def test_large_host_memory_asks_for_no_huge_pages() -> None:
    """A large field or ndarray lives in plain pages: NumPy asks huge pages for its arrays of 4 MiB
    and more, and the first touch of one then waited for the system to compact memory (Genesis'
    differentiable MPM grid, 0.3 s a frame). The memory is zeroed, written by kernels, read by the
    host, and given back when its object goes."""
    qd.init(arch=qd.cpu)
    plain = np.zeros(1 << 22)  # 32 MiB of NumPy's own: this test's premise
    assert any(_huge_page_flags(plain.ctypes.data, plain.ctypes.data + plain.nbytes))
    n = 1 << 21
    a = qd.ndarray(qd.f64, shape=(n,), needs_grad=True)
    f = qd.field(qd.f64, shape=(n,))

    @qd.kernel
    def fill(x: qd.types.ndarray(), g: qd.template()):
        for i in x:
            x[i] = i * 0.5
            g[i] = i * 2.0

    fill(a, f)
    for arr in (a.arr, a.grad.arr, f._storage()):
        lo = arr.ctypes.data
        flags = _huge_page_flags(lo, lo + arr.nbytes)
        assert flags and not any(flags)
    assert a.to_numpy()[n - 1] == (n - 1) * 0.5 and f.to_numpy()[n - 1] == (n - 1) * 2.0
    assert not a.grad.to_numpy().any()
    lo = a.arr.ctypes.data
    del a
    gc.collect()
    assert not _huge_page_flags(lo, lo + 8 * n)  # unmapped
