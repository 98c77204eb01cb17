"""A data-oriented object's primitives (baked per instance) across processes: a new process whose
object holds other values never runs the code the disk holds for the first one's."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from fresh import run_main

pytestmark = pytest.mark.process

PROGRAM = """
import json
import qdlab as qd

qd.init(arch=qd.cpu)


@qd.data_oriented(template_primitives={lifted})
class Sim:
    def __init__(self, n, s):
        self.n, self.s = n, s
        self.x = qd.field(qd.f32, shape=8)

    @qd.kernel
    def run(self):
        for i in range(self.n):
            self.x[i] += self.s


sim = Sim({n}, {s})
sim.run()
print(json.dumps(sim.x.to_numpy().tolist()))
"""


@pytest.mark.parametrize("lifted", [True, False])
def test_other_values_in_a_new_process_are_never_served_stale_code(
    tmp_path: Path, lifted: bool
) -> None:
    for n, s in ((3, 1.5), (3, 1.5), (5, -2.0), (3, 1.5)):
        (tmp_path / "main.py").write_text(
            textwrap.dedent(PROGRAM).format(lifted=not lifted, n=n, s=s)
        )
        assert run_main(tmp_path) == [s] * n + [0.0] * (8 - n)
