"""A solver written as Quadrants programs are: a `@qd.data_oriented` solver whose state is a frozen
dataclass of vector ndarrays, a multi-loop `step` method calling `@qd.func` methods, a kernel
taking the dataclass itself, and a `qd.template()` config read through `qd.static`.

Run as `python struct_program.py BACKEND OUT.npz [OPTION=VALUE ...]`: BACKEND is `qdlab` or
`quadrants`, an OPTION a JSON value for `qd.init` or `arch=cuda`; the results (and, on qdlab, the
construct counts of each compile) go to OUT.npz. `tests/oracle/test_structs_oracle.py` runs it on
both, and again with one loop edited (`EDIT` below is replaced), to check the results and what
recompiles; `tests/cuda/test_gpu_programs.py` runs it on the GPU against the CPU.
"""

# No `from __future__ import annotations`: kernel annotations must be real objects.
import dataclasses
import importlib
import json
import sys

import numpy as np

qd = importlib.import_module(sys.argv[1] if len(sys.argv) > 1 else "qdlab")
N = 256
EDIT = 0.5  # the damping of loop 3 of `step`; the edit test changes this literal in the source


@dataclasses.dataclass(frozen=True)
class State:
    pos: qd.types.NDArray[qd.math.vec3, 1]
    vel: qd.types.NDArray[qd.math.vec3, 1]
    force: qd.types.NDArray[qd.math.vec3, 1]
    mass: qd.types.NDArray[qd.f32, 1]


class Config:
    def __init__(self, gravity: bool, floor: float) -> None:
        self.gravity = gravity
        self.floor = floor


@qd.data_oriented
class Solver:
    def __init__(self, state: State, config: Config) -> None:
        self.state = state
        self.config = config
        self.dt = 0.01
        self.stiffness = 40.0

    @qd.func
    def spring(self, i: qd.i32) -> qd.math.vec3:
        left = self.state.pos[(i + N - 1) % N]
        right = self.state.pos[(i + 1) % N]
        return self.stiffness * (left + right - 2.0 * self.state.pos[i])

    @qd.kernel
    def step(self):
        for i in range(N):
            self.state.force[i] = self.spring(i)
        for i in range(N):
            if qd.static(self.config.gravity):
                self.state.force[i][1] -= 9.8 * self.state.mass[i]
        for i in range(N):
            acc = self.state.force[i] / self.state.mass[i]
            self.state.vel[i] = self.state.vel[i] * EDIT + acc * self.dt
        for i in range(N):
            self.state.pos[i] += self.state.vel[i] * self.dt
            if self.state.pos[i][1] < self.config.floor:  # noqa: PLR1730 - a branch, as written
                self.state.pos[i][1] = self.config.floor


@qd.kernel
def kinetic(s: State, out: qd.types.NDArray[qd.f32, 1]):
    for i in range(N):
        out[i] = 0.5 * s.mass[i] * s.vel[i].dot(s.vel[i])


@qd.kernel
def clamp_speed(s: State, cfg: qd.template(), limit: qd.f32):
    for i in range(N):
        v = s.vel[i]
        speed = v.norm()
        if speed > limit and qd.static(cfg.gravity):
            s.vel[i] = v * (limit / speed)


def main() -> None:
    options = dict(a.split("=", 1) for a in sys.argv[3:])
    arch = getattr(qd, options.pop("arch", "cpu"))  # arch=cuda: tests/cuda runs it on the GPU
    init = {k: json.loads(v) for k, v in options.items()}
    qd.init(arch=arch, offline_cache=False, **init) if sys.argv[1] == "quadrants" else qd.init(
        arch=arch, **init
    )
    rng = np.random.default_rng(7)
    arrays = {}
    for name in ("pos", "vel", "force"):
        arrays[name] = qd.ndarray(qd.math.vec3, (N,))
        arrays[name].from_numpy(rng.random((N, 3), dtype=np.float32))
    arrays["mass"] = qd.ndarray(qd.f32, (N,))
    arrays["mass"].from_numpy(rng.random(N, dtype=np.float32) + 0.5)
    state = State(**arrays)
    solver = Solver(state, Config(gravity=True, floor=0.1))
    energy = qd.ndarray(qd.f32, (N,))
    out: dict[str, np.ndarray] = {}
    counts = []
    for t in range(20):
        solver.step()
        if sys.argv[1] == "qdlab":
            o = Solver.step._primal.per_offload_cache_observations
            counts.append((o.frontend_constructs_total, o.frontend_constructs_recompiled))
        clamp_speed(state, solver.config, 2.0)
        kinetic(state, energy)
        if t % 5 == 4:
            out[f"energy{t}"] = energy.to_numpy()
    for name, a in arrays.items():
        out[name] = a.to_numpy()
    out["counts"] = np.array(counts[0] if counts else (-1, -1))
    np.savez(sys.argv[2], **out)


if __name__ == "__main__":
    main()
