"""`qd.init(print_ir=True)` prints each construct's IR as it is compiled; a volatile load is marked
in Quadrants' words, a plain one is not."""

from __future__ import annotations

import qdlab as qd


def test_print_ir_shows_each_construct_and_marks_volatile_loads(capfd) -> None:
    qd.init(arch=qd.cpu, print_ir=True, offline_cache=False)
    flags = qd.field(dtype=qd.i32, shape=4)
    other = qd.field(dtype=qd.i32, shape=4)

    @qd.kernel
    def k():
        for i in range(4):
            x = qd.volatile_load(flags[i])
            flags[i] = x + 1
        for i in range(4):
            other[i] = flags[i]

    k()
    out = capfd.readouterr().out
    assert "// k_construct0" in out and "// k_construct1" in out
    marked = [line for line in out.splitlines() if "global load volatile" in line]
    assert len(marked) == 1 and "volatile_load" in marked[0]
    assert [other[i] for i in range(4)] == [1, 1, 1, 1]
