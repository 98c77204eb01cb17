"""A @qd.func annotated with a dataclass and a dtype defined inside the function that defines the
func and the kernel (no global or closure holds them, as in Quadrants' test_py_dataclass): the
annotations are what Python evaluated. Each printed line must be Quadrants'."""

import dataclasses
import importlib
import os

import numpy as np

qd = importlib.import_module(os.environ.get("QD_IMPL", "quadrants"))
qd.init(arch=qd.cpu, offline_cache=False)


def run() -> None:
    @dataclasses.dataclass
    class Local:
        a: qd.types.NDArray[qd.f32, 1]

    @qd.func
    def bump(s: Local, by: qd.i32):
        for i in range(s.a.shape[0]):
            s.a[i] += by

    @qd.kernel
    def k(s: Local, v: qd.f32):
        bump(s, v)

    a = np.zeros(4, np.float32)
    k(Local(a), 2.7)  # the i32 annotation truncates
    print(a.tolist())


run()
