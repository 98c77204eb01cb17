"""`kernel.mapper.mapping`, Quadrants' view of a kernel's specialisations: one entry per variant
compiled since the latest `qd.init`, an ndarray parameter keyed by (dtype, ndim, needs_grad,
boundary, layout), so two layouts are two entries and a layout met again is the same one."""

import qdlab as qd
from qdlab._tensor import _with_layout


@qd.kernel
def fill(x: qd.types.ndarray()):
    for i, j in qd.ndrange(2, 3):
        x[i, j] = i * 10 + j


def tagged(layout: tuple[int, int]) -> object:
    a = qd.tensor(qd.i32, shape=tuple((2, 3)[axis] for axis in layout), backend=qd.Backend.NDARRAY)
    _with_layout(a, layout)
    return a


def test_one_entry_per_layout_keyed_as_quadrants() -> None:
    qd.init(arch=qd.cpu)
    assert fill.mapper.mapping == {}
    swapped = tagged((1, 0))
    fill(swapped)
    ((key, number),) = fill.mapper.mapping.items()
    assert number == 0 and key[0] == (qd.i32, 2, False, "unsafe", (1, 0))
    assert swapped.to_numpy().tolist() == [[0, 1, 2], [10, 11, 12]]  # read canonically
    for _ in range(2):
        fill(tagged((1, 0)))
        fill(qd.tensor(qd.i32, shape=(2, 3), backend=qd.Backend.NDARRAY))
    assert len(fill.mapper.mapping) == 2
    qd.init(arch=qd.cpu)
    assert fill.mapper.mapping == {}
