"""Genesis across its solvers, on the reference and on qdlab, unchanged (issue 37).

Why this script exists: Genesis is the program qdlab exists for. Each scene below is small enough
to build in a few minutes on two cores and exercises one solver: rigid bodies colliding with each
other and the plane, the Franka arm from the MJCF Genesis ships under PD position control, a
batched rigid scene (`n_envs=4`), MPM, SPH, PBD (liquid, and cloth through pymeshlab) and FEM.
Each runs in fresh processes on the reference (quadrants 1.3.3, which genesis-world 1.4.5 pins) and
on qdlab (`python -m qdlab.run`, so `import quadrants` inside Genesis is qdlab): cold (empty
caches), then warm (the caches the cold run filled); with Genesis installed normally and, for the
scenes `--checkout` names (default: rigid), as a source tree on `PYTHONPATH` (a copy of the
installed package, as its developers work). `--edit` adds the edit loop on those: one line of
`func_integrate` (the free-joint position update) edited, the scene built again in a fresh process,
then the edit undone. `--team rigid` adds a second machine: an empty folder of its own and the
first machine's Redis team cache (the Python needs the `redis` package).

It installs nothing and is not part of CI (Genesis and torch weigh about 3 GB). It needs a Python
with `genesis-world` 1.4.5, `torch` (the CPU wheel), `pymeshlab` and `tetgen` (Genesis' own
dependencies for cloth and FEM) and the reference `quadrants` 1.3.3; qdlab is importable from its
source tree (`--qdlab`). `docs/genesis.md` has the install commands.

Printed per scene: the largest difference of the final state (body positions and rotations, joint
positions, particle positions) from the reference's and the reference's own run-to-run spread,
build and step times and their ratios, and for qdlab the kernels, constructs, splits and every
fallback code met; or the error a run ended with (its last line).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import fmt, markdown_table, report

ROOT = Path(__file__).resolve().parents[1]
MARK = "@@GENESIS@@"

PRELUDE = """
import json, sys, time
import numpy as np

t0 = time.perf_counter()
import genesis as gs

gs.init(backend=gs.cpu, logging_level="warning", seed=0)
"""

# Each scene: the code that makes `scene` (and `state()`, the final state as named arrays), the
# keyword arguments of `scene.build` and the number of steps.
SCENES: dict[str, tuple[str, str, int]] = {
    "rigid": (
        """
scene = gs.Scene(show_viewer=False)
scene.add_entity(gs.morphs.Plane())
a = scene.add_entity(gs.morphs.Box(size=(0.2, 0.2, 0.2), pos=(0.0, 0.0, 0.12)))
b = scene.add_entity(gs.morphs.Box(size=(0.1, 0.1, 0.1), pos=(0.02, 0.0, 0.3)))
c = scene.add_entity(gs.morphs.Sphere(radius=0.05, pos=(0.3, 0.0, 0.06)))
def state():
    return {f"{n}.{w}": getattr(e, "get_" + w)() for n, e in (("a", a), ("b", b), ("c", c))
            for w in ("pos", "quat")}
""",
        "",
        40,
    ),
    "batched": (
        """
scene = gs.Scene(show_viewer=False)
scene.add_entity(gs.morphs.Plane())
a = scene.add_entity(gs.morphs.Box(size=(0.2, 0.2, 0.2), pos=(0.0, 0.0, 0.12)))
c = scene.add_entity(gs.morphs.Sphere(radius=0.05, pos=(0.0, 0.0, 0.4)))
def state():
    return {f"{n}.{w}": getattr(e, "get_" + w)() for n, e in (("a", a), ("c", c))
            for w in ("pos", "quat")}
""",
        "n_envs=4",
        40,
    ),
    "franka": (
        """
scene = gs.Scene(show_viewer=False)
scene.add_entity(gs.morphs.Plane())
arm = scene.add_entity(gs.morphs.MJCF(file="xml/franka_emika_panda/panda.xml"))
def before_steps():
    arm.set_dofs_kp(np.array([4500, 4500, 3500, 3500, 2000, 2000, 2000, 100, 100]))
    arm.set_dofs_kv(np.array([450, 450, 350, 350, 200, 200, 200, 10, 10]))
    arm.control_dofs_position(np.array([1.0, 0.5, 0.0, -1.5, 0.0, 2.0, 0.8, 0.04, 0.04]))
def state():
    return {"qpos": arm.get_dofs_position(), "ee": arm.get_link("hand").get_pos()}
""",
        "",
        20,
    ),
    "mpm": (
        """
scene = gs.Scene(
    sim_options=gs.options.SimOptions(dt=4e-3, substeps=10),
    mpm_options=gs.options.MPMOptions(
        lower_bound=(-0.3, -0.3, 0.0), upper_bound=(0.3, 0.3, 0.6), grid_density=32),
    show_viewer=False)
scene.add_entity(gs.morphs.Plane())
e = scene.add_entity(material=gs.materials.MPM.Elastic(sampler="regular"),
                     morph=gs.morphs.Box(pos=(0.0, 0.0, 0.2), size=(0.1, 0.1, 0.1)))
def state():
    return {"x": e.get_particles_pos()}
""",
        "",
        5,
    ),
    "sph": (
        """
scene = gs.Scene(
    sim_options=gs.options.SimOptions(dt=4e-3, substeps=5),
    sph_options=gs.options.SPHOptions(
        lower_bound=(-0.3, -0.3, 0.0), upper_bound=(0.3, 0.3, 0.6), particle_size=0.02),
    show_viewer=False)
scene.add_entity(gs.morphs.Plane())
e = scene.add_entity(material=gs.materials.SPH.Liquid(sampler="regular"),
                     morph=gs.morphs.Box(pos=(0.0, 0.0, 0.15), size=(0.1, 0.1, 0.1)))
def state():
    return {"x": e.get_particles_pos()}
""",
        "",
        10,
    ),
    "pbd": (
        """
scene = gs.Scene(
    sim_options=gs.options.SimOptions(dt=4e-3, substeps=5),
    pbd_options=gs.options.PBDOptions(
        lower_bound=(-0.3, -0.3, 0.0), upper_bound=(0.3, 0.3, 0.6), particle_size=0.02),
    show_viewer=False)
scene.add_entity(gs.morphs.Plane())
e = scene.add_entity(material=gs.materials.PBD.Liquid(sampler="regular"),
                     morph=gs.morphs.Box(pos=(0.0, 0.0, 0.15), size=(0.1, 0.1, 0.1)))
def state():
    return {"x": e.get_particles_pos()}
""",
        "",
        10,
    ),
    "cloth": (
        """
scene = gs.Scene(sim_options=gs.options.SimOptions(dt=4e-3, substeps=5), show_viewer=False)
scene.add_entity(gs.morphs.Plane())
e = scene.add_entity(material=gs.materials.PBD.Cloth(),
                     morph=gs.morphs.Mesh(file="meshes/cloth.obj", scale=0.3, pos=(0, 0, 0.3)))
def state():
    return {"x": e.get_particles_pos()}
""",
        "",
        10,
    ),
    "fem": (
        """
scene = gs.Scene(sim_options=gs.options.SimOptions(dt=1e-3, substeps=5),
                 fem_options=gs.options.FEMOptions(), show_viewer=False)
scene.add_entity(gs.morphs.Plane())
e = scene.add_entity(material=gs.materials.FEM.Elastic(),
                     morph=gs.morphs.Box(pos=(0.0, 0.0, 0.15), size=(0.1, 0.1, 0.1)))
def state():
    return {"x": e.get_state().pos}
""",
        "",
        10,
    ),
    "fem_implicit": (
        """
scene = gs.Scene(sim_options=gs.options.SimOptions(dt=1e-2, substeps=2),
                 fem_options=gs.options.FEMOptions(use_implicit_solver=True), show_viewer=False)
scene.add_entity(gs.morphs.Plane())
e = scene.add_entity(material=gs.materials.FEM.Elastic(),
                     morph=gs.morphs.Box(pos=(0.0, 0.0, 0.15), size=(0.1, 0.1, 0.1)))
def state():
    return {"x": e.get_state().pos}
""",
        "",
        5,
    ),
    # Couplers: rigid bodies with MPM sand and liquid, and with SPH (the legacy coupler); two FEM
    # bodies through the SAP coupler (Genesis refuses it in f32: the scene starts Genesis again in
    # f64).
    "sand": (
        """
scene = gs.Scene(
    sim_options=gs.options.SimOptions(dt=4e-3, substeps=10),
    mpm_options=gs.options.MPMOptions(
        lower_bound=(-0.5, -0.5, 0.0), upper_bound=(0.5, 0.5, 0.6), grid_density=32),
    show_viewer=False)
scene.add_entity(gs.morphs.Plane())
r = scene.add_entity(gs.morphs.Box(pos=(0.0, 0.0, 0.05), size=(0.1, 0.1, 0.1)))
e = scene.add_entity(material=gs.materials.MPM.Sand(sampler="regular"),
                     morph=gs.morphs.Box(pos=(0.0, 0.0, 0.2), size=(0.08, 0.08, 0.08)))
w = scene.add_entity(material=gs.materials.MPM.Liquid(sampler="regular"),
                     morph=gs.morphs.Box(pos=(0.15, 0.0, 0.15), size=(0.06, 0.06, 0.06)))
def state():
    return {"sand": e.get_particles_pos(), "water": w.get_particles_pos(), "box.pos": r.get_pos(),
            "box.quat": r.get_quat()}
""",
        "",
        5,
    ),
    "sph_rigid": (
        """
scene = gs.Scene(
    sim_options=gs.options.SimOptions(dt=4e-3, substeps=5),
    sph_options=gs.options.SPHOptions(
        lower_bound=(-0.3, -0.3, 0.0), upper_bound=(0.3, 0.3, 0.6), particle_size=0.02),
    show_viewer=False)
scene.add_entity(gs.morphs.Plane())
r = scene.add_entity(gs.morphs.Sphere(pos=(0.0, 0.0, 0.3), radius=0.05))
e = scene.add_entity(material=gs.materials.SPH.Liquid(sampler="regular"),
                     morph=gs.morphs.Box(pos=(0.0, 0.0, 0.1), size=(0.1, 0.1, 0.1)))
def state():
    return {"x": e.get_particles_pos(), "ball": r.get_pos()}
""",
        "",
        10,
    ),
    "sap": (
        """
gs.destroy()
gs.init(backend=gs.cpu, precision="64", logging_level="warning", seed=0)
scene = gs.Scene(sim_options=gs.options.SimOptions(dt=1 / 60, substeps=2),
                 fem_options=gs.options.FEMOptions(use_implicit_solver=True),
                 coupler_options=gs.options.SAPCouplerOptions(), show_viewer=False)
s = scene.add_entity(morph=gs.morphs.Sphere(pos=(0.0, 0.0, 0.1), radius=0.1),
                     material=gs.materials.FEM.Elastic(model="linear_corotated", E=1e5, nu=0.4))
c = scene.add_entity(morph=gs.morphs.Box(pos=(0.0, 0.0, 0.4), size=(0.1, 0.1, 0.1)),
                     material=gs.materials.FEM.Elastic(model="linear_corotated"))
def state():
    return {"sphere": s.get_state().pos, "cube": c.get_state().pos}
""",
        "",
        2,
    ),
    # Stable fluids (the SF solver) driven by jets of the program's own: data-oriented objects
    # whose `@qd.func` methods the solver's kernels call.
    "smoke": (
        """
import quadrants as qd
scene = gs.Scene(sim_options=gs.options.SimOptions(dt=1e-2),
                 sf_options=gs.options.SFOptions(res=24, solver_iters=30, decay=0.025),
                 show_viewer=False)
@qd.data_oriented
class Jet:
    def __init__(self, center, radius, tau):
        self.center = qd.Vector(center)
        self.radius = radius
        self.tau = tau
    @qd.func
    def get_pos(self, t: float):
        rot = qd.math.rot_by_axis(qd.Vector([0.0, 1.0, 0.0]), self.tau * t)[:3, :3]
        return rot @ qd.Vector([0.3, 0.0, 0.0])
    @qd.func
    def get_factor(self, i: int, j: int, k: int, dx: float, t: float):
        ijk = qd.Vector([i, j, k], dt=gs.qd_float) * dx
        d = (ijk - self.center - self.get_pos(t)).norm(gs.EPS)
        f = 0.0
        if d < self.radius:
            f = 1.0
        return f
    @qd.func
    def get_inward_dir(self, t: float):
        return (-self.get_pos(t)).normalized(gs.EPS)
    @qd.func
    def get_tan_dir(self, t: float):
        return self.get_inward_dir(t)
scene.sim.solvers[-1].set_jets([Jet([0.5, 0.5, 0.5], 0.08, 0.2 * (q + 1)) for q in range(2)])
def state():
    grid = scene.sim.solvers[-1].grid
    return {"q": grid.q.to_numpy(), "v": grid.v.to_numpy()}
""",
        "",
        4,
    ),
    # Differentiable simulation: a tool pushing an MPM cube (Genesis' `differentiable_push.py`,
    # shortened), the loss's gradients back to the tool's start, the cube's start position and
    # velocity and the tool's velocity at a step.
    "push": (
        """
import torch
scene = gs.Scene(
    sim_options=gs.options.SimOptions(dt=2e-3, substeps=10, requires_grad=True),
    mpm_options=gs.options.MPMOptions(lower_bound=(0.0, -1.0, 0.0), upper_bound=(1.0, 1.0, 0.55)),
    show_viewer=False)
scene.add_entity(gs.morphs.URDF(file="urdf/plane/plane.urdf", fixed=True))
stick = scene.add_entity(
    material=gs.materials.Tool(friction=8.0),
    morph=gs.morphs.Mesh(file="meshes/stirrer.obj", scale=0.6, pos=(0.5, 0.5, 0.05),
                         euler=(90.0, 0.0, 0.0)))
cube = scene.add_entity(material=gs.materials.MPM.Elastic(rho=500, sampler="regular"),
                        morph=gs.morphs.Box(lower=(0.2, 0.1, 0.05), upper=(0.4, 0.3, 0.15)))
def before_steps():
    global v_list, init_pos, pos0, v0
    v_list = [torch.tensor([[0.0, 1.0, 0.0]] * 2, requires_grad=True) for _ in range(3)]
    init_pos = torch.tensor([[0.3, 0.1, 0.28], [0.3, 0.1, 0.5]], requires_grad=True)
    stick.set_position(init_pos)
    pos0 = torch.tensor([0.3, 0.3, 0.1], requires_grad=True)
    cube.set_position(pos0)
    v0 = torch.tensor([0.0, -1.0, 0.0], requires_grad=True)
    cube.set_velocity(v0)
def after_step(i):
    stick.set_velocity(vel=v_list[min(i + 1, 2)])
def state():
    s = cube.get_state()
    torch.pow(s.pos - torch.tensor([0.3, 0.6, 0.1]), 2).sum().backward()
    return {"x": s.pos.detach(), "grad.tool_pos": init_pos.grad, "grad.cube_pos": pos0.grad,
            "grad.cube_vel": v0.grad, "grad.tool_vel1": v_list[1].grad}
""",
        "n_envs=2",
        3,
    ),
    # Genesis' own examples, shortened: `examples/collision/pyramid.py` (15 boxes stacked
    # 1 mm apart, falling onto each other), `examples/rigid/terrain_height_field.py` (its random
    # height field, Newton solver, `n_envs=1`, with a box and a ball dropped onto it) and
    # `examples/sensors/imu_franka.py` (the arm following a circle through inverse kinematics, an
    # IMU with noise, bias drift, delay and jitter on its hand).
    "pyramid": (
        """
scene = gs.Scene(sim_options=gs.options.SimOptions(dt=0.01), show_viewer=False)
scene.add_entity(gs.morphs.Plane())
size, spacing = 0.25, (1.0 - 1e-3) * 0.25
boxes = [scene.add_entity(gs.morphs.Box(
            size=[size] * 3, pos=(-0.5, 1, 0.0) + 0.5 * np.array([size] * 3)
            + spacing * np.array([i + 0.5 * j, 0, j])))
         for i in range(5) for j in range(5 - i)]
def state():
    return {f"box{n}.{w}": getattr(b, "get_" + w)() for n, b in enumerate(boxes)
            for w in ("pos", "quat")}
""",
        "",
        30,
    ),
    "terrain": (
        """
scene = gs.Scene(rigid_options=gs.options.RigidOptions(
    dt=0.01, constraint_solver=gs.constraint_solver.Newton), show_viewer=False)
field = np.zeros([40, 40])
field[5:35, 5:35] = 200 + np.random.default_rng(0).choice(np.arange(-10, 20, 10), (30, 30))
scene.add_entity(gs.morphs.Terrain(horizontal_scale=0.25, vertical_scale=0.005,
                                   height_field=field, name="example"))
a = scene.add_entity(gs.morphs.Box(size=(0.3, 0.3, 0.3), pos=(3.0, 3.0, 1.4), euler=(10, 20, 30)))
c = scene.add_entity(gs.morphs.Sphere(radius=0.15, pos=(4.1, 3.6, 1.3)))
def state():
    return {f"{n}.{w}": getattr(e, "get_" + w)() for n, e in (("a", a), ("c", c))
            for w in ("pos", "quat")}
""",
        "n_envs=1",
        30,
    ),
    "imu": (
        """
scene = gs.Scene(sim_options=gs.options.SimOptions(dt=1e-2), show_viewer=False)
scene.add_entity(gs.morphs.Plane())
arm = scene.add_entity(gs.morphs.MJCF(file="xml/franka_emika_panda/panda.xml"))
hand = arm.get_link("hand")
imu = scene.add_sensor(gs.sensors.IMU(
    entity_idx=arm.idx, link_idx_local=hand.idx_local, pos_offset=(0.0, 0.0, 0.15),
    acc_cross_axis_coupling=(0.0, 0.01, 0.02), gyro_cross_axis_coupling=(0.03, 0.04, 0.05),
    acc_noise=(0.01,) * 3, gyro_noise=(0.01,) * 3, acc_random_walk=(0.001,) * 3,
    gyro_random_walk=(0.001,) * 3, delay=0.01, jitter=0.01))
def before_steps():
    arm.set_dofs_kp(np.array([4500, 4500, 3500, 3500, 2000, 2000, 2000, 100, 100]))
    arm.set_dofs_kv(np.array([450, 450, 350, 350, 200, 200, 200, 10, 10]))
    arm.set_dofs_force_range(np.array([-87] * 4 + [-12] * 3 + [-100] * 2),
                             np.array([87] * 4 + [12] * 3 + [100] * 2))
def after_step(i):
    pos = np.array([0.4, 0.0, 0.5]) + 0.15 * np.array(
        [np.cos(i * np.deg2rad(2.0)), np.sin(i * np.deg2rad(2.0)), 0])
    q = arm.inverse_kinematics(link=hand, pos=pos, quat=np.array([0.0, 1.0, 0.0, 0.0]))
    arm.control_dofs_position(q[:-2], (0, 1, 2, 3, 4, 5, 6))
def state():
    true, read = imu.read_ground_truth(), imu.read()
    return {"qpos": arm.get_dofs_position(), "ee": hand.get_pos(),
            "true.lin_acc": true.lin_acc, "true.ang_vel": true.ang_vel,
            "read.lin_acc": read.lin_acc, "read.ang_vel": read.ang_vel}
""",
        "",
        30,
    ),
}

IEEE = ("push",)
"""Scenes compared with the reference run with fast-math off: the differentiable push, whose
gradients the reference's fast-math moves by up to 2e-5 (its forward state is the same bits;
qdlab's gradients are within 1e-5 of the IEEE reference's, ~2e-6 of their size: sums rounded in
another order)."""

EXAMPLES = ("pyramid", "terrain", "imu")
"""The scenes from Genesis' examples. The reference's `fast_math=True` (Genesis' default) moves
their states by 1e-5 to 2e-3 (the IMU's accelerations) from the reference with fast-math off, which
qdlab equals bit for bit (qdlab never uses fast-math)."""

NO_FAST_MATH = """
import quadrants
_init = quadrants.init
def _init_without_fast_math(*args, **kwargs):  # the reference as IEEE arithmetic (qdlab ignores it)
    return _init(*args, **dict(kwargs, fast_math=False))
quadrants.init = _init_without_fast_math
"""

COMPILER_REPORT = """qd = sys.modules.get("qdlab")
if qd is not None:  # qdlab: what the compiler did with each kernel the scene called
    from qdlab.host import state as qstate
    reports = [c.report for c in qstate.history.values()]
    out["kernels"] = len(reports)
    out["constructs"] = sum(len(r.constructs) for r in reports)
    out["split"] = sum(r.mode == "per_offload" for r in reports)
    codes = {r.fallback.code for r in reports if r.fallback is not None}
    codes |= {f.split(":")[0] for r in reports for f in r.runtime_fallbacks}
    out["fallbacks"] = sorted(codes)
"""
"""What qdlab did with each kernel a scene called, added to the scene's `out` (it runs after the
steps; `bench/genesis_scene.py` prints it too)."""

BODY = """
t1 = time.perf_counter()
scene.build(%(build)s)
t2 = time.perf_counter()
if "before_steps" in globals():
    before_steps()
for _i in range(%(steps)d):
    scene.step()
    if "after_step" in globals():
        after_step(_i)
t3 = time.perf_counter()
out = {"build_s": t2 - t1, "steps_s": t3 - t2, "import_s": t1 - t0,
       "state": {k: np.asarray(v.cpu() if hasattr(v, "cpu") else v, dtype=np.float64).tolist()
                 for k, v in state().items()}}
%(report)sprint(%(mark)r + json.dumps(out))
"""


def scene_script(name: str, fast_math: bool = True) -> str:
    setup, build, steps = SCENES[name]
    prelude = (
        PRELUDE if fast_math else PRELUDE.replace("import genesis", NO_FAST_MATH + "import genesis")
    )
    return (
        prelude
        + setup
        + BODY % {"build": build, "steps": steps, "mark": MARK, "report": COMPILER_REPORT}
    )


def run_scene(
    python: str,
    impl: str,
    name: str,
    cache: Path,
    qdlab_tree: Path,
    checkout: Path | None = None,
    timeout: float = 1800,
    extra_env: dict[str, str] | None = None,
    fast_math: bool = True,
) -> dict:
    """One fresh process running scene `name`; its figures, or the error it ended with.
    `fast_math=False` runs the reference with Quadrants' `fast_math` off (Genesis turns it on)."""
    script = cache / f"{name}.py"
    script.write_text(scene_script(name, fast_math))
    paths = [str(checkout)] if checkout is not None else []
    env = dict(
        os.environ,
        QD_OFFLINE_CACHE_FILE_PATH=str(cache / "quadrants"),
        QDLAB_CACHE_DIR=str(cache / "qdlab"),
        **(extra_env or {}),
    )
    if impl == "qdlab":
        paths.append(str(qdlab_tree))
        cmd = [python, "-m", "qdlab.run", str(script)]
    else:
        cmd = [python, str(script)]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    try:
        out = subprocess.run(
            cmd, cwd=cache, env=env, capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    for line in out.stdout.splitlines():
        if line.startswith(MARK):
            return json.loads(line[len(MARK) :])
    lines = [x for x in out.stderr.strip().splitlines() if x.strip()]
    return {"error": lines[-1][:300] if lines else f"exit {out.returncode}"}


def state_difference(a: dict, b: dict) -> float:
    """The largest absolute difference between two final states (inf when their shapes differ)."""
    import numpy as np

    worst = 0.0
    for key, value in a["state"].items():
        x, y = np.asarray(value), np.asarray(b["state"].get(key, []))
        if x.shape != y.shape:
            return float("inf")
        if x.size:
            worst = max(worst, float(np.max(np.abs(x - y))))
    return worst


def genesis_checkout(python: str, into: Path) -> Path:
    """A source tree of the installed Genesis under `into` (the directory to put on PYTHONPATH)."""
    into.mkdir(parents=True, exist_ok=True)
    origin = subprocess.run(
        [python, "-c", "import genesis, os; print(os.path.dirname(genesis.__file__))"],
        capture_output=True,
        text=True,
        check=True,
        cwd=into,
    ).stdout.strip()
    shutil.copytree(origin, into / "genesis", ignore=shutil.ignore_patterns("__pycache__"))
    return into


EDIT_FILE = "engine/solvers/rigid/abd/forward_dynamics.py"
EDIT_FROM = "pos = pos + vel * rigid_info.substep_dt[None]"
EDIT_TO = "pos = pos + vel * (rigid_info.substep_dt[None] * 1.0)"
"""The edit of the edit loop: one line of `func_integrate` (the free-joint position update),
the same value computed another way."""


def edit(tree: Path, undo: bool = False) -> None:
    path = tree / "genesis" / EDIT_FILE
    text = path.read_text()
    old, new = (EDIT_TO, EDIT_FROM) if undo else (EDIT_FROM, EDIT_TO)
    assert text.count(old) == 1, f"{EDIT_FILE}: the line to edit is not there once"
    path.write_text(text.replace(old, new))


def measure(
    python: str,
    impl: str,
    name: str,
    qdlab_tree: Path,
    install: str,
    loop: bool,
    fast_math: bool = True,
) -> dict:
    """One scene on one implementation, in fresh processes sharing one cache directory: cold,
    warm and, with `loop`, the edit and its undo (Genesis as a checkout)."""
    out: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix=f"genesis-{impl}-") as tmp:
        cache = Path(tmp)
        tree = genesis_checkout(python, cache / "src") if install == "checkout" else None
        for step in ("cold", "warm"):
            out[step] = run_scene(python, impl, name, cache, qdlab_tree, tree, fast_math=fast_math)
        if loop and tree is not None:
            edit(tree)
            out["edit"] = run_scene(python, impl, name, cache, qdlab_tree, tree)
            edit(tree, undo=True)
            out["undo"] = run_scene(python, impl, name, cache, qdlab_tree, tree)
    for step, res in out.items():
        shown = {k: v for k, v in res.items() if k != "state"}
        print(f"{name} ({install}) {impl} {step}: {shown}", file=sys.stderr, flush=True)
    return out


def team(python: str, name: str, qdlab_tree: Path) -> list[str]:
    """Two machines sharing one Redis team cache (`bench/team_cache.py` starts the server): the
    first builds cold and warm with its own folder; the second, with an empty folder of its own,
    builds cold from the team cache. Its build against the first machine's warm build."""
    from team_cache import start_redis

    with tempfile.TemporaryDirectory(prefix="genesis-team-") as tmp:
        folder = Path(tmp)
        server, port = start_redis(folder)
        env = {
            "QDLAB_REMOTE_CACHE": f"redis://127.0.0.1:{port}/0",
            "QDLAB_CACHE_SECRET": "bench-team-secret",
        }
        try:
            runs = {}
            for machine, step in (("first", "cold"), ("first", "warm"), ("second", "cold")):
                cache = folder / machine
                cache.mkdir(exist_ok=True)
                runs[machine, step] = run_scene(
                    python, "qdlab", name, cache, qdlab_tree, extra_env=env
                )
                print(
                    f"team {machine} {step}: {runs[machine, step].get('build_s')}", file=sys.stderr
                )
        finally:
            server.terminate()
            server.wait()
    warm, second = runs["first", "warm"].get("build_s"), runs["second", "cold"].get("build_s")
    return [
        name,
        fmt(runs["first", "cold"].get("build_s")),
        fmt(warm),
        fmt(second),
        fmt(second / warm, 2) if second and warm else "n/a",
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", required=True, help="a Python with genesis, torch and quadrants")
    ap.add_argument("--qdlab", type=Path, default=ROOT, help="the qdlab source tree to run")
    ap.add_argument("--scenes", default=",".join(SCENES), help="comma-separated scene names")
    ap.add_argument(
        "--checkout", default="rigid", help="scenes also run with Genesis as a source checkout"
    )
    ap.add_argument("--edit", action="store_true", help="the edit loop on the checkout scenes")
    ap.add_argument("--team", default="", help="scenes also built by a second machine from Redis")
    ap.add_argument(
        "--no-fast-math",
        action="store_true",
        help="run the reference with Quadrants' fast_math off (Genesis turns it on)",
    )
    args = ap.parse_args()
    rows, loops = [], []
    for name in args.scenes.split(","):
        installs = ["site"] + (["checkout"] if name in args.checkout.split(",") else [])
        for install in installs:
            loop = args.edit and install == "checkout"
            ref = measure(
                args.python, "quadrants", name, args.qdlab, install, loop, not args.no_fast_math
            )
            own = measure(args.python, "qdlab", name, args.qdlab, install, loop)
            rows.append(scene_row(name, install, ref, own))
            if loop:
                loops.append(loop_row(name, ref, own))
    body = markdown_table(
        [
            "scene",
            "max abs(state - ref)",
            "ref spread",
            "build cold s (ratio)",
            "build warm s (ratio)",
            "steps cold s (ratio)",
            "steps warm s (ratio)",
            "kernels / constructs / split / fallbacks",
        ],
        rows,
    )
    if loops:
        body += (
            "\n\nThe edit loop (Genesis as a checkout; build increments over the warm build):\n\n"
        )
        body += markdown_table(
            [
                "scene",
                "edit: ref s",
                "edit: qdlab s",
                "ratio",
                "undo: ref s",
                "undo: qdlab s",
                "undo / ref edit",
            ],
            loops,
        )
    teams = [team(args.python, name, args.qdlab) for name in args.team.split(",") if name]
    if teams:
        body += (
            "\n\nThe team cache (qdlab; the second machine's folder is empty, Redis is shared):\n\n"
        )
        body += markdown_table(
            [
                "scene",
                "first: cold build s",
                "first: warm build s",
                "second: cold build s",
                "second / first warm",
            ],
            teams,
        )
    notes = [
        (
            "Each figure is one fresh process: cold from empty caches, warm with the caches the "
            "cold run filled; ratios are qdlab / quadrants (1.3.3) measured in the same run."
        ),
        (
            "The state is every body position and rotation, joint position or particle position at "
            "the end; the reference's spread is its cold run against its warm run."
        ),
        (
            "The reference runs with fast_math "
            + ("off." if args.no_fast_math else "on, as Genesis initialises it.")
        ),
    ]
    report("genesis_scenes", "Genesis scenes, one per solver (issue 37)", body, notes)


def _ratio(ref: dict, own: dict, what: str) -> str:
    r, o = ref.get(what), own.get(what)
    if r is None or o is None:
        return (own.get("error") or ref.get("error") or "n/a")[:80]
    return f"{fmt(o)} ({fmt(o / r, 2)}x)"


def scene_row(name: str, install: str, ref: dict, own: dict) -> list[str]:
    ok = all("state" in x for x in (ref["cold"], ref["warm"], own["cold"]))
    diff = f"{state_difference(own['cold'], ref['cold']):.1e}" if ok else "n/a"
    spread = f"{state_difference(ref['warm'], ref['cold']):.1e}" if ok else "n/a"
    c = own["cold"]
    compiler = (
        f"{c['kernels']} / {c['constructs']} / {c['split']} / {', '.join(c['fallbacks']) or 'none'}"
        if "kernels" in c
        else "n/a"
    )
    return [
        f"{name} ({install})",
        diff,
        spread,
        _ratio(ref["cold"], own["cold"], "build_s"),
        _ratio(ref["warm"], own["warm"], "build_s"),
        _ratio(ref["cold"], own["cold"], "steps_s"),
        _ratio(ref["warm"], own["warm"], "steps_s"),
        compiler,
    ]


def loop_row(name: str, ref: dict, own: dict) -> list[str]:
    def inc(res: dict, step: str) -> float | None:
        a, b = res.get(step, {}).get("build_s"), res["warm"].get("build_s")
        return None if a is None or b is None else a - b

    re, oe, ru, ou = inc(ref, "edit"), inc(own, "edit"), inc(ref, "undo"), inc(own, "undo")
    return [
        name,
        fmt(re),
        fmt(oe),
        fmt(oe / re, 2) if oe is not None and re else "n/a",
        fmt(ru),
        fmt(ou),
        fmt(ou / re, 2) if ou is not None and re else "n/a",
    ]


if __name__ == "__main__":
    main()
