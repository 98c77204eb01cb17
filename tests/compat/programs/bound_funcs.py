"""`@qd.func` methods bound to a data-oriented object and held by another (Genesis' MPM solver
keeps each material's `update_stress` in a list and calls `self.fns[i](...)` in `p2g`): the
kernel of the holder inlines each func with its object; the primitives the funcs read are baked
per instance of the holder, as its own are (a later change of one is not seen by that instance);
a second holder compiles with the values of its time. So for a list of data-oriented objects the
holder iterates (Genesis' FEM materials). Each printed line must be Quadrants';
QD_WHOLE=1 runs qdlab's whole-kernel path."""

import importlib
import os

qd = importlib.import_module(os.environ.get("QD_IMPL", "quadrants"))
WHOLE = {"per_offload": False} if os.environ.get("QD_WHOLE") == "1" else {}
qd.init(arch=qd.cpu, offline_cache=False, **WHOLE)


@qd.data_oriented
class Material:
    def __init__(self, k: float) -> None:
        self.k = k
        self.scale = (k, 2 * k)

    @qd.func
    def stress(self, x):
        return x * self.k + self.scale[1]

    @qd.func
    def damp(self, x):
        return x / self.k


@qd.data_oriented
class Solver:
    def __init__(self, materials: list) -> None:
        self.stress = [m.stress for m in materials]
        self.damp = tuple(m.damp for m in materials)
        self.ids = list(range(len(materials)))
        self.out = qd.field(qd.f32, shape=(len(materials), 2))

    @qd.kernel
    def run(self, x: qd.f32):
        for i in qd.static(self.ids):
            self.out[i, 0] = self.stress[i](x)
            self.out[i, 1] = self.damp[i](self.stress[i](x))


a, b = Material(2.0), Material(4.0)
s = Solver([a, b])
for x in (1.0, 3.0):
    s.run(x)
    print("run", x, s.out.to_numpy().round(4).tolist())
a.k = 10.0  # baked: this solver keeps the value of its first compile
s.run(1.0)
print("after a.k = 10", s.out.to_numpy().round(4).tolist())
t = Solver([a, b])  # a new holder compiles with a.k as it is now
t.run(1.0)
print("new solver", t.out.to_numpy().round(4).tolist())
s.run(2.0)
print("first solver again", s.out.to_numpy().round(4).tolist())


@qd.data_oriented
class Materials:
    def __init__(self, materials: list) -> None:
        self._mats = materials
        self.out = qd.field(qd.f32, shape=())

    @qd.kernel
    def run(self, x: qd.f32):
        for _ in range(1):
            for m in qd.static(self._mats):
                self.out[None] += m.stress(x)


c, d = Material(2.0), Material(3.0)
m = Materials([c, d])
m.run(1.0)
c.k = 10.0  # baked in this holder's code too
m.run(1.0)
n = Materials([c, d])  # a new holder compiles with c.k as it is now
n.run(1.0)
print("materials", m.out[None], n.out[None])
