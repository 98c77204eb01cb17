"""qd.Tensor / qd.tensor / qd.Backend: one wrapper over an ndarray or a field; a `x: qd.Tensor`
parameter takes either; a Tensor passed for an ndarray or template parameter is what it holds;
Vector/Matrix tensors, gradients, pickling and a bad keyword. Each printed line must be
Quadrants'."""

import dataclasses
import importlib
import os
import pickle

import numpy as np

qd = importlib.import_module(os.environ.get("QD_IMPL", "quadrants"))
qd.init(arch=qd.cpu, offline_cache=False)
print(isinstance(qd.Tensor, type), [b.name for b in qd.Backend])
a = qd.tensor(qd.i32, shape=(4,), backend=qd.Backend.NDARRAY)
b = qd.tensor(qd.i32, shape=(4,), backend=qd.Backend.FIELD)
print(isinstance(a, qd.Tensor), isinstance(b, qd.Tensor), a.shape, b.shape)
try:
    qd.Tensor(a)
except TypeError:
    print("TypeError")


@qd.kernel
def fill(x: qd.Tensor):
    for i in range(x.shape[0]):
        x[i] = i * 10


fill(a)
fill(b)
fill(a)
print(a.to_numpy().tolist(), b.to_numpy().tolist())


@qd.kernel
def add(x: qd.types.ndarray(), y: qd.template()):
    for i in range(4):
        y[i] += x[i]


add(a, b)
print(b.to_numpy().tolist(), a[2], b[3])
v = qd.Vector.tensor(3, qd.f32, (2,), backend=qd.Backend.FIELD)
m = qd.Matrix.tensor(2, 2, qd.f32, (2,))
print(type(v).__name__, v.shape, type(m).__name__, m.shape, m.to_numpy().shape)
g = qd.tensor(qd.f32, (3,), needs_grad=True)
print(g.grad is not None, isinstance(g.grad, qd.Tensor))
c = pickle.loads(pickle.dumps(a))
print(type(c).__name__, c.to_numpy().tolist())
try:
    qd.tensor(qd.i32, (4,), bogus=1)
except TypeError as e:
    print("TypeError", e)


@dataclasses.dataclass(frozen=True)
class State:
    a: qd.Tensor
    b: qd.Tensor
    c: qd.types.ndarray(dtype=qd.f32, ndim=1)


@qd.kernel
def twice(s: State):
    for i in range(4):
        s.b[i] = s.a[i] * 2 + s.c[i]


for backend in (qd.Backend.NDARRAY, qd.Backend.FIELD):
    s = State(
        qd.tensor(qd.f32, (4,)), qd.tensor(qd.f32, (4,), backend=backend), qd.tensor(qd.f32, (4,))
    )
    s.a.from_numpy(np.arange(4, dtype=np.float32))
    s.c.fill(0.5)
    twice(s)
    print(backend.name, s.b.to_numpy().tolist())


@qd.kernel
def lay(x: qd.Tensor):
    for i, j in qd.ndrange(3, 4):
        x[i, j] = i * 100 + j
    for i, j in x:
        x[i, j] += x.shape[0] * 1000 + x.shape[1] * 10000


for backend in (qd.Backend.NDARRAY, qd.Backend.FIELD):
    for layout in ((0, 1), (1, 0)):
        t = qd.tensor(qd.i32, (3, 4), backend=backend, layout=layout)
        lay(t)
        t[0, 3] = t[0, 3] + 5
        print(backend.name, layout, t.shape, t.to_numpy().tolist(), t[2, 1])
        t.from_numpy(np.arange(12, dtype=np.int32).reshape(3, 4))
        print(t.to_numpy().tolist(), t[1, 2])
for bad in ((0, 0), (1, 0, 2)):
    try:
        qd.tensor(qd.i32, (3, 4), layout=bad)
    except ValueError as e:
        print("ValueError", e)
try:
    qd.tensor(qd.types.vector(2, qd.f32), (3, 4), layout=(1, 0))
except TypeError as e:
    print("TypeError", e)
