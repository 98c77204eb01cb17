"""Genesis across its solvers (issue 37): each scene of `bench/genesis_scenes.py` (rigid bodies
colliding, a batched rigid scene, the Franka arm under PD control, MPM, SPH, PBD liquid and cloth,
FEM) builds and steps on qdlab unchanged (`python -m qdlab.run`) and ends where it ends on the
reference, quadrants 1.3.3, run in the same test: every body position and rotation, joint position
and particle position to 1e-5. Slow (a minute or two a scene) and needs Genesis: a Python with
`genesis-world` 1.4.5 is `QDLAB_GENESIS_PYTHON` (`docs/genesis.md` installs one);
otherwise each test skips, saying so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from genesis_support import ROOT, genesis_python, scenes_module

pytestmark = [pytest.mark.process, pytest.mark.slow]

scenes: Any = scenes_module()


@pytest.fixture(scope="module")
def python() -> str:
    found = genesis_python()
    if found is None:
        pytest.skip("Genesis is not importable (set QDLAB_GENESIS_PYTHON to a Python that has it)")
    return found


@pytest.mark.parametrize("name", list(scenes.SCENES))
def test_the_scene_ends_where_it_ends_on_the_reference(name: str, python: str, tmp_path: Path):
    runs = {}
    for impl in ("quadrants", "qdlab"):
        cache = tmp_path / impl
        cache.mkdir()
        runs[impl] = scenes.run_scene(python, impl, name, cache, ROOT)
        assert "error" not in runs[impl], f"{impl}: {runs[impl]['error']}"
    assert scenes.state_difference(runs["qdlab"], runs["quadrants"]) <= 1e-5
    assert runs["qdlab"]["kernels"] >= 20
    assert runs["qdlab"]["split"] + len(runs["qdlab"]["fallbacks"]) > 0
