"""Struct arguments against the reference: `struct_program.py` (a data-oriented solver whose state
is a frozen dataclass of vector ndarrays, a dataclass-parameter kernel and a template config) run
on quadrants and on qdlab gives the same results; on qdlab split == whole kernel bit for bit; and
editing one loop of the solver's `step` recompiles exactly that construct, in a warm process and in
a new one.

Every run is a subprocess (quadrants and qdlab each bundle LLVM)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.process

PROGRAM = Path(__file__).with_name("struct_program.py")
LOOP = "self.state.vel[i] * EDIT + acc * self.dt"
EDITED = "self.state.vel[i] * 0.25 + acc * self.dt"


def run(backend: str, out: Path, *options: str, program: Path = PROGRAM, env: dict | None = None):
    proc = subprocess.run(
        [sys.executable, str(program), backend, str(out), *options],
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **(env or {})},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return dict(np.load(out))


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict:
    probe = subprocess.run(
        [sys.executable, "-c", "import quadrants"], check=False, capture_output=True
    )
    if probe.returncode != 0:
        pytest.skip("quadrants is not installed")
    return run("quadrants", tmp_path_factory.mktemp("ref") / "ref.npz")


def test_solver_matches_quadrants(reference: dict, tmp_path: Path) -> None:
    got = run("qdlab", tmp_path / "qdlab.npz", env={"QDLAB_CACHE_DIR": str(tmp_path / "c")})
    for name, want in reference.items():
        if name != "counts":
            np.testing.assert_allclose(got[name], want, rtol=1e-5, atol=1e-5, err_msg=name)
    assert tuple(got["counts"]) == (4, 4)  # the solver's step: four constructs, all compiled


def test_split_equals_whole_kernel_bit_for_bit(tmp_path: Path) -> None:
    env = {"QDLAB_CACHE_DIR": str(tmp_path / "c")}
    split = run("qdlab", tmp_path / "split.npz", env=env)
    whole = run("qdlab", tmp_path / "whole.npz", "per_offload=false", env=env)
    carried = run("qdlab", tmp_path / "carried.npz", "split_carried=false", env=env)
    for name in split:
        if name != "counts":
            np.testing.assert_array_equal(split[name], whole[name], err_msg=name)
            np.testing.assert_array_equal(split[name], carried[name], err_msg=name)


def test_editing_one_loop_recompiles_one_construct_in_a_new_process(tmp_path: Path) -> None:
    env = {"QDLAB_CACHE_DIR": str(tmp_path / "c")}
    assert tuple(run("qdlab", tmp_path / "a.npz", env=env)["counts"]) == (4, 4)
    edited = tmp_path / "edited" / PROGRAM.name
    edited.parent.mkdir()
    edited.write_text(PROGRAM.read_text().replace(LOOP, EDITED))
    assert tuple(run("qdlab", tmp_path / "b.npz", program=edited, env=env)["counts"]) == (4, 1)
    first = run("qdlab", tmp_path / "c.npz", env=env)  # a re-created solver: every construct cached
    assert tuple(first["counts"]) in ((4, 0), (-1, -1))  # (-1, -1): served by its manifest
    fresh = run("qdlab", tmp_path / "d.npz", env={"QDLAB_CACHE_DIR": str(tmp_path / "fresh")})
    for name in fresh:
        if name != "counts":  # what the cache served computes what a fresh compile does
            np.testing.assert_array_equal(first[name], fresh[name], err_msg=name)


WARM = """
import importlib.util, sys
sys.argv = [sys.argv[0], "qdlab"]

def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod

counts = []
for k, path in enumerate(sys.stdin.read().split()):
    m = load(path, f"program{k}")
    if k == 0:
        m.qd.init(arch=m.qd.cpu)
    rng = m.np.random.default_rng(1)
    arrays = {n: m.qd.ndarray(m.qd.math.vec3, (m.N,)) for n in ("pos", "vel", "force")}
    arrays["mass"] = m.qd.ndarray(m.qd.f32, (m.N,))
    arrays["mass"].fill(1.0)
    solver = m.Solver(m.State(**arrays), m.Config(True, 0.1))
    solver.step()
    o = m.Solver.step._primal.per_offload_cache_observations
    counts.append((o.frontend_constructs_total, o.frontend_constructs_recompiled))
print(counts)
"""


def test_editing_one_loop_recompiles_one_construct_in_a_warm_process(tmp_path: Path) -> None:
    edited = tmp_path / "edited.py"
    edited.write_text(PROGRAM.read_text().replace(LOOP, EDITED))
    proc = subprocess.run(
        [sys.executable, "-c", WARM],
        check=False,
        input=f"{PROGRAM} {edited}",
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "QDLAB_CACHE_DIR": str(tmp_path / "c")},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().splitlines()[-1] == "[(4, 4), (4, 1)]"
