"""Kernels and helpers the statement memo's and the construct memo's tests share: a module loaded
from a file (moved lines down on request), four loops with constants to edit, keys and texts of
the constructs a compile built; an assert and a bounds check to move; a kernel inlining a
`@qd.func`."""

from __future__ import annotations

import importlib.util
import itertools
import sys
import textwrap

import numpy as np

_n = itertools.count()
X = np.linspace(-1.0, 1.0, 16, dtype=np.float32)


def load(folder, source: str, moved: int = 0, **module_globals: object):
    path = folder / f"memo_{next(_n)}.py"
    path.write_text("# above\n" * moved + textwrap.dedent(source))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    mod.__dict__.update(module_globals)
    sys.modules[path.stem] = mod
    spec.loader.exec_module(mod)
    return mod


def keys(kernel) -> list[str]:
    return [b.key for b in kernel.latest.built]


def texts(kernel) -> list[str]:
    return [b.text for b in kernel.latest.built]


LOOPS = """
    import qdlab as qd

    @qd.kernel
    def k(x: qd.types.NDArray[qd.f32, 1], a: qd.types.NDArray[qd.f32, 2]):
        for i in range(x.shape[0]):
            a[0, i] = x[i] * {k0}
        for i in range(x.shape[0]):
            a[1, i] = x[i] * 2.0 + C
        for i in range(x.shape[0]):
            a[2, i] = x[i] * {k2}
        for i in range(x.shape[0]):
            a[3, i] = x[i] - 4.0
"""


def run_loops(folder, k0=1.0, k2=3.0, c=0.5, moved=0):
    mod = load(folder, LOOPS.format(k0=k0, k2=k2), moved, C=c)
    a = np.zeros((4, X.size), np.float32)
    mod.k(X, a)
    want = np.stack([X * np.float32(k0), X * 2 + np.float32(c), X * np.float32(k2), X - 4])
    np.testing.assert_array_equal(a, want.astype(np.float32))
    return mod.k


ASSERTS = """
    import qdlab as qd

    @qd.kernel
    def k(x: qd.types.NDArray[qd.f32, 1], a: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            assert x[i] < 10.0
        for i in range(x.shape[0]):
            a[i] = x[i] * {k1}
"""

BOUNDS = """
    import qdlab as qd

    @qd.kernel
    def k(x: qd.types.NDArray[qd.f32, 1], a: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            a[i] = x[i + 1]
        for i in range(x.shape[0]):
            a[i] = x[i] * {k1}
"""


FUNC = """
    import qdlab as qd

    @qd.func
    def f(v: qd.f32) -> qd.f32:
        return v * {factor}

    @qd.kernel
    def k(x: qd.types.NDArray[qd.f32, 1], a: qd.types.NDArray[qd.f32, 2]):
        for i in range(x.shape[0]):
            a[0, i] = f(x[i])
        for i in range(x.shape[0]):
            a[1, i] = x[i] * {k1}
"""
