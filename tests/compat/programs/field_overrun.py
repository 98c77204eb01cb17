"""A kernel that writes a little past a field's shape (a[60] of a 55-element field), as
Quadrants' own test_py_dataclass does: without debug=True it lands in the slack after the field
and reads back on the host; with debug=True it is an out-of-bound error. Past the last axis of a
2-D field it lands in the next row (dense fields are packed row-major there and here, not padded
to powers of two). Each printed line must be Quadrants'."""

import importlib
import os

qd = importlib.import_module(os.environ.get("QD_IMPL", "quadrants"))


def run(debug: bool) -> None:
    qd.init(arch=qd.cpu, debug=debug, offline_cache=False)
    a = qd.field(qd.i32, shape=(55,))

    @qd.kernel
    def k():
        a[60] = 7
        a[0] = a.shape[0]

    try:
        k()
        print("ran", a[0], a[60], a.to_numpy().shape)
    except Exception as e:  # noqa: BLE001 - the error class is what is compared
        print("debug error:", isinstance(e, qd.QuadrantsAssertionError))


def next_row() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    a = qd.field(qd.i32, shape=(3, 5))
    b = qd.field(qd.i32, shape=(3, 5))

    @qd.kernel
    def write():
        a[0, 5] = 7
        a[0, 7] = 9

    @qd.kernel
    def read() -> qd.i32:
        return a[1, 0] * 100 + a[0, 5]

    write()
    print("next row", read(), a.to_numpy().tolist(), b.to_numpy().sum())


run(debug=False)
run(debug=True)
next_row()
