"""A kernel that writes a little past a field's shape (a[60] of a 55-element field), as
Quadrants' own test_py_dataclass does: without debug=True it lands in the field's padding (dense
fields are padded to powers of two there and here) and reads back on the host; with debug=True it
is an out-of-bound error. Each printed line must be Quadrants'."""

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


run(debug=False)
run(debug=True)
