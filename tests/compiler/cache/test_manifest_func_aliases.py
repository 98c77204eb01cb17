"""A @qd.func called through a compile-time local (`R = qd.static(helper)`, as Genesis calls its
field helpers) across processes: a new process serves the kernel from its manifest while the func
and what it reads are unchanged, and compiles again when either changed (the manifest finds the
func again by the name it was defined under)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from fresh import run_main

pytestmark = pytest.mark.process

HELPERS = """
import qdlab as qd

SCALE = {scale}
USE_SCALED = {use}


@qd.func
def scaled(x):
    return x * SCALE


@qd.func
def shifted(x):
    return x + {shift}
"""

MAIN = """
import json
import numpy as np
import qdlab as qd
import helpers
from helpers import scaled, shifted

qd.init(arch=qd.cpu)


@qd.kernel
def k(a: qd.types.NDArray[qd.f32, 1]):
    R = qd.static(scaled if helpers.USE_SCALED else shifted)
    for i in range(a.shape[0]):
        a[i] = R(2.0)


a = np.zeros(4, np.float32)
k(a)
print(json.dumps([float(a[0]), k.per_offload_cache_observations.frontend_constructs_total]))
"""


def run(folder: Path, scale: float = 3.0, use: bool = True, shift: float = 10.0) -> list:
    (folder / "helpers.py").write_text(
        textwrap.dedent(HELPERS).format(scale=scale, use=use, shift=shift)
    )
    (folder / "main.py").write_text(textwrap.dedent(MAIN))
    return run_main(folder)


def test_funcs_called_through_locals_are_served_and_never_stale(tmp_path: Path) -> None:
    value, total = run(tmp_path)
    assert value == 6.0 and total != -1
    assert run(tmp_path) == [6.0, -1]  # the manifest: nothing lowered
    value, total = run(tmp_path, scale=5.0)  # a global the func reads
    assert value == 10.0 and total != -1
    assert run(tmp_path, scale=5.0) == [10.0, -1]
    value, total = run(tmp_path, scale=5.0, use=False)  # the local now names the other func
    assert value == 12.0 and total != -1
    value, total = run(tmp_path, scale=5.0, use=False, shift=20.0)  # that func's source
    assert value == 22.0 and total != -1
    assert run(tmp_path, scale=5.0, use=False, shift=20.0) == [22.0, -1]


def test_undoing_an_edit_is_served_by_the_manifest_it_had(tmp_path: Path) -> None:
    """Each variant of a kernel's callees keeps its manifest under the kernel's key (Genesis'
    edit loop: edit one line of a solver func, build, undo it, build): the undo lowers nothing,
    and every run gives what its source says."""
    assert run(tmp_path)[0] == 6.0
    assert run(tmp_path) == [6.0, -1]
    value, total = run(tmp_path, scale=5.0)  # the edit
    assert value == 10.0 and total != -1
    assert run(tmp_path) == [6.0, -1]  # undone: the first manifest, nothing lowered
    assert run(tmp_path, scale=5.0) == [10.0, -1]  # redone: the edit's manifest
    for scale in range(20, 30):  # more variants than are kept: the oldest go, none is wrong
        assert run(tmp_path, scale=float(scale))[0] == 2.0 * scale
    value, total = run(tmp_path)
    assert value == 6.0 and total != -1
