"""Struct members read in `qd.static(...)` across processes: a new process serves the kernel from
its manifest while the members hold what they held (Genesis reads its configuration so), and
compiles again when one changed, wherever the member sits: on a template argument, on a
data-oriented object, or on an object held by a dataclass parameter's `qd.Template` member."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from fresh import run_main

pytestmark = pytest.mark.process

PROGRAM = """
import dataclasses, json
import numpy as np
import qdlab as qd

qd.init(arch=qd.cpu)


class Cfg:
    def __init__(self, scale):
        self.scale = scale
        self.nested = Cfg(scale * 2.0) if scale < 100 else None


@dataclasses.dataclass(frozen=True)
class Params:
    a: qd.types.NDArray[qd.f32, 1]
    cfg: qd.Template


@qd.data_oriented
class Solver:
    def __init__(self, scale):
        self.scale = scale

    @qd.kernel
    def run(self, a: qd.types.NDArray[qd.f32, 1]):
        for i in range(a.shape[0]):
            a[i] = qd.static(self.scale) * 1.0


@qd.kernel
def by_template(a: qd.types.NDArray[qd.f32, 1], cfg: qd.template()):
    for i in range(a.shape[0]):
        a[i] = qd.static(cfg.scale) * 1.0


@qd.kernel
def by_dataclass(p: Params):
    for i in range(p.a.shape[0]):
        p.a[i] = qd.static(p.cfg.nested.scale) * 0.5


a = np.zeros(4, np.float32)
kernels = {{
    "template": (by_template, lambda: by_template(a, Cfg({scale}))),
    "data_oriented": (Solver.run, lambda: Solver({scale}).run(a)),
    "dataclass": (by_dataclass, lambda: by_dataclass(Params(a, Cfg({scale})))),
}}
k, call = kernels["{case}"]
call()
total = k._primal.per_offload_cache_observations.frontend_constructs_total
print(json.dumps([float(a[0]), total]))
"""


def run(folder: Path, case: str, scale: float) -> tuple[float, int]:
    (folder / "main.py").write_text(textwrap.dedent(PROGRAM).format(case=case, scale=scale))
    value, total = run_main(folder)
    return value, total


@pytest.mark.parametrize("case", ["template", "data_oriented", "dataclass"])
def test_static_members_are_served_and_never_stale(tmp_path: Path, case: str) -> None:
    value, total = run(tmp_path, case, 2.0)
    assert value == 2.0 and total != -1
    assert run(tmp_path, case, 2.0) == (2.0, -1)  # the manifest: nothing lowered
    value, total = run(tmp_path, case, 5.0)
    assert value == 5.0 and total != -1  # the member changed: compiled again
    assert run(tmp_path, case, 2.0) == (2.0, -1)  # the first variant's manifest still holds
