"""`qd.BufferView`: views of a 1-D ndarray on the host and in kernels, against NumPy slices, and
under `debug=True` the reference's range checks with its messages (measured with quadrants
1.3.3)."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd
from qdlab import BufferView
from qdlab.types.buffer_view_type import BufferViewType


@pytest.fixture(autouse=True)
def _cpu() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)


def test_host_views_slice_as_python_does() -> None:
    data = qd.ndarray(qd.f32, (32,))
    for key in (slice(None), slice(8, 24), slice(-8, None), slice(30, 10), slice(-100, 5)):
        view = data[key]
        expect = np.arange(32)[key]
        assert isinstance(view, BufferView) and view.get_ndarray() is data
        assert view.size == len(expect) and view.shape == (len(expect),)
        if len(expect):
            assert view.offset == expect[0]
    a = data[8:24]
    assert (a[4:12].offset, a[4:12].size, a[4:12][:4].size) == (12, 8, 4)
    assert (a.subview(4, 8).offset, BufferView(data, 4, 8).offset) == (12, 4)
    with pytest.raises(ValueError, match="step=1"):
        data[::2]
    with pytest.raises(TypeError, match="1D"):
        qd.ndarray(qd.f32, (4, 4))[:2]
    with pytest.raises(ValueError, match="subview out of range"):
        a.subview(8, 16)
    with pytest.raises(TypeError, match="slice"):
        a[0]
    with pytest.raises(ValueError, match="out of range"):
        BufferView(data, 16, 32)
    with pytest.raises(TypeError, match="Cannot nest"):
        BufferView(a, 0, 1)
    with pytest.raises(TypeError, match="gradients"):
        qd.ndarray(qd.f32, (4,), needs_grad=True)[:2]
    assert data[3] == 0.0  # an integer still reads an element


def test_kernels_read_and_write_through_views() -> None:
    data = qd.ndarray(qd.f32, (32,))
    data.from_numpy(np.arange(32, dtype=np.float32))
    out = qd.ndarray(qd.f32, (32,))

    @qd.func
    def put(v: BufferView[qd.f32], i: qd.i32, x: qd.f32):
        v[i] = x

    @qd.kernel
    def k(src: BufferView[qd.f32], dst: BufferView, arr: qd.types.ndarray(qd.f32, ndim=1)):
        for i in range(src.size):
            put(dst, i, src[i] * 2.0)
        sub = dst.subview(2, 3)
        for i in range(sub.size):
            sub[i] += 100.0
        tail = dst[dst.size - 2 :]
        for i in range(tail.shape[0]):
            tail[i] = -1.0
        mine = BufferView(arr, 30, 2)
        for i in range(mine.size):
            mine[i] = 7.0

    k(data[4:12], out[16:24], out)
    expect = np.zeros(32, np.float32)
    expect[16:24] = 2.0 * np.arange(4, 12)
    expect[18:21] += 100.0
    expect[22:24] = -1.0
    expect[30:32] = 7.0
    assert np.array_equal(out.to_numpy(), expect)
    k(data[0:8], out[0:8], out)  # another offset, the same compile
    assert np.array_equal(out.to_numpy()[:8], np.array([0, 2, 104, 106, 108, 10, -1, -1]))


def test_views_of_vectors() -> None:
    v = qd.Vector.ndarray(3, qd.f32, (8,))

    @qd.kernel
    def ones(view: BufferView):
        for i in range(view.size):
            for k in range(3):
                view[i][k] = k + 1.0

    ones(v[2:5])
    expect = np.zeros((8, 3), np.float32)
    expect[2:5] = [1.0, 2.0, 3.0]
    assert np.array_equal(v.to_numpy(), expect)


def test_wrong_arguments() -> None:
    @qd.kernel
    def k(v: BufferView[qd.f32]):
        for i in range(v.size):
            v[i] = 0.0

    with pytest.raises(qd.QuadrantsRuntimeTypeError):
        k(qd.ndarray(qd.f32, (4,)))
    with pytest.raises(qd.QuadrantsTypeError, match="element type f32"):
        k(qd.ndarray(qd.i32, (4,))[:2])

    @qd.kernel
    def stepped(v: BufferView[qd.f32]):
        s = v[::2]
        s[0] = 1.0

    with pytest.raises(qd.QuadrantsSyntaxError, match="explicit step"):
        stepped(qd.ndarray(qd.f32, (4,))[:])


def test_debug_checks_in_the_reference_words() -> None:
    qd.init(arch=qd.cpu, debug=True, offline_cache=False)
    data = qd.ndarray(qd.f32, (32,))

    @qd.func
    def writer(v: BufferView[qd.f32], idx: qd.i32):
        v[idx] = 99.0

    @qd.kernel
    def k(v: BufferView[qd.f32], extra: qd.i32):
        for i in range(8):
            if i == 5:
                writer(v, v.size + extra)

    k(data[8:24], -1)  # the last element: no error
    with pytest.raises(qd.QuadrantsAssertionError) as info:
        k(data[8:24], 5)
    text = str(info.value)
    assert "BufferView Out Of Range: kernel[k] tid=0, got index 21 (offset=8, size=16)." in text
    assert "Callstack:\nk (" in text and "\n  writer (" in text

    @qd.kernel
    def sub(v: BufferView[qd.f32]):
        for i in range(1):
            s = v.subview(v.size + i, 1)
            s[0] = 1.0

    with pytest.raises(qd.QuadrantsAssertionError, match="subview offset=16, subview size=1"):
        sub(data[:16])

    @qd.kernel
    def make(arr: qd.types.ndarray(qd.f32, ndim=1)):
        for i in range(1):
            view = BufferView(arr, 28 + i, 8)
            view[0] = 1.0

    with pytest.raises(qd.QuadrantsAssertionError, match="offset=28, size=8, ndarray length=32"):
        make(data)


def test_buffer_view_type_is_the_annotation() -> None:
    assert BufferViewType(qd.f32) is BufferView[qd.f32] and BufferViewType() is BufferView
    data = qd.ndarray(qd.i32, (6,))

    @qd.kernel
    def k(v: BufferViewType(qd.i32)):
        for i in range(v.size):
            v[i] = i + 1

    k(data[2:5])
    assert data.to_numpy().tolist() == [0, 0, 1, 2, 3, 0]
