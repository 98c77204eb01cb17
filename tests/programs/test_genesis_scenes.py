"""Genesis across its solvers (issue 37): each scene of `bench/genesis_scenes.py` (rigid bodies
colliding, a batched rigid scene, the Franka arm under PD control, MPM, SPH, PBD liquid and cloth,
FEM explicit and implicit, rigid bodies coupled with MPM sand and water and with SPH, two FEM
bodies through the SAP coupler, stable fluids driven by the program's own jets, a differentiable
tool pushing an MPM cube) builds and steps on qdlab unchanged (`python -m qdlab.run`) and ends
where it ends on the reference, quadrants 1.3.3, run in the same test: every body position and
rotation, joint position and particle position to 1e-5; three of Genesis' examples bit for bit,
and the differentiable scene's gradients to 1e-5, against the reference run with fast-math off.
Slow (a minute or two a scene) and needs Genesis: a Python with `genesis-world` 1.4.5 is
`QDLAB_GENESIS_PYTHON` (`docs/genesis.md` installs one); otherwise each test skips, saying so."""

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


def run_both(python: str, name: str, tmp_path: Path, fast_math: bool = True) -> dict:
    runs = {}
    for impl in ("quadrants", "qdlab"):
        cache = tmp_path / impl
        cache.mkdir()
        runs[impl] = scenes.run_scene(python, impl, name, cache, ROOT, fast_math=fast_math)
        assert "error" not in runs[impl], f"{impl}: {runs[impl]['error']}"
    return runs


@pytest.mark.parametrize(
    "name", [n for n in scenes.SCENES if n not in scenes.EXAMPLES and n not in scenes.IEEE]
)
def test_the_scene_ends_where_it_ends_on_the_reference(name: str, python: str, tmp_path: Path):
    runs = run_both(python, name, tmp_path)
    assert scenes.state_difference(runs["qdlab"], runs["quadrants"]) <= 1e-5
    assert runs["qdlab"]["kernels"] >= 10  # the SF solver's scene calls 10, the others 20-84
    assert runs["qdlab"]["split"] + len(runs["qdlab"]["fallbacks"]) > 0


@pytest.mark.parametrize("name", scenes.EXAMPLES)
def test_an_example_ends_where_the_reference_without_fast_math_ends(
    name: str, python: str, tmp_path: Path
):
    """Genesis' own examples (a box pyramid, a height-field terrain, an IMU on the arm following a
    circle through inverse kinematics): the reference's fast-math (Genesis turns it on) moves
    them by 1e-5 to 2e-3; with it off, the reference computes as qdlab does, and every value is
    the same bits."""
    runs = run_both(python, name, tmp_path, fast_math=False)
    assert scenes.state_difference(runs["qdlab"], runs["quadrants"]) == 0.0


@pytest.mark.parametrize("name", scenes.IEEE)
def test_a_differentiable_scene_ends_where_the_reference_without_fast_math_ends(
    name: str, python: str, tmp_path: Path
):
    """A tool pushing an MPM cube with `requires_grad=True`: the forward state is the reference's
    bits (fast-math off), and the gradients of the loss with respect to the tool's and the
    cube's start and the tool's velocity are within 1e-5 of its."""
    runs = run_both(python, name, tmp_path, fast_math=False)
    forward = {k: v for k, v in runs["qdlab"]["state"].items() if not k.startswith("grad.")}
    assert scenes.state_difference({"state": forward}, runs["quadrants"]) == 0.0
    assert scenes.state_difference(runs["qdlab"], runs["quadrants"]) <= 1e-5
    assert "autodiff" in runs["qdlab"]["fallbacks"] or runs["qdlab"]["split"] > 0
