"""`@qd.kernel(fastcache=True)` as Quadrants' fastcache docs show it (behaviour measured on
quadrants 1.3.3): the purity rule (a global or captured number, string or field read by the
kernel or a func it calls is refused, an UPPERCASE one warned of; enums, modules, funcs, dtypes and
a data-oriented `self`'s members are fine) and `kernel._primal.src_ll_cache_observations`."""

import enum
import math
import warnings

import numpy as np
import pytest

import qdlab as qd
from qdlab.lang._fast_caching import FIELD_METADATA_CACHE_VALUE

F1 = qd.types.NDArray[qd.f32, 1]
scale = 2.0
SCALE = 3.0
dt = qd.f32


class Mode(enum.IntEnum):
    FAST = 4


@qd.func
def scaled(x):
    return x * scale


@qd.kernel(fastcache=True)
def reads_lower(a: F1) -> None:
    for i in range(a.shape[0]):
        a[i] = scale


@qd.kernel(fastcache=True)
def reads_upper(a: F1) -> None:
    for i in range(a.shape[0]):
        a[i] = SCALE


@qd.kernel(fastcache=True)
def calls_impure(a: F1) -> None:
    for i in range(a.shape[0]):
        a[i] = scaled(1.0)


@qd.kernel(fastcache=True)
def allowed(a: F1) -> None:
    for i in range(a.shape[0]):
        a[i] = qd.cast(Mode.FAST, dt) + math.pi + np.e + qd.math.pi


@qd.kernel(fastcache=True)
def decomposes(a: F1) -> None:
    for i in range(1):
        _u, s, _v = qd.svd(qd.Matrix([[1.0, 2.0], [3.0, 4.0]]))
        a[i] = s[0, 0]


@qd.data_oriented
class Holder:
    def __init__(self) -> None:
        self.n = 3
        self.x = qd.ndarray(qd.f32, shape=(4,))

    @qd.kernel(fastcache=True)
    def step(self) -> None:
        for i in range(self.n):
            self.x[i] += 1.0


def test_purity_as_the_reference_checks_it() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    a = np.zeros(4, np.float32)
    for k in (reads_lower, calls_impure):
        with pytest.raises(
            qd.QuadrantsCompilationError,
            match=r"\[PURE.VIOLATION\] WARNING: Accessing global variable scale <class 'float'>",
        ):
            k(a)
    with pytest.warns(UserWarning, match="Accessing global variable SCALE"):
        reads_upper(a)
    assert a[0] == 3.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        allowed(a)
        decomposes(a)
        Holder().step()
    assert a[1] == pytest.approx(4 + math.pi * 2 + math.e, rel=1e-6)
    assert a[0] == pytest.approx(5.4649857)  # the largest singular value
    field = qd.field(qd.f32, shape=4)

    def captures() -> object:
        n = 3

        @qd.kernel(fastcache=True)
        def k(b: F1) -> None:
            for i in range(b.shape[0]):
                field[i] = b[i] + n

        return k

    with pytest.raises(qd.QuadrantsCompilationError, match="violates pure"):
        captures()(a)
    assert FIELD_METADATA_CACHE_VALUE == "add_value_to_cache_key"


def test_observations(tmp_path: object) -> None:
    @qd.kernel(fastcache=True)
    def bump(x: F1) -> None:
        for i in range(x.shape[0]):
            x[i] += 1.0

    @qd.kernel
    def plain(x: F1) -> None:
        for i in range(x.shape[0]):
            x[i] += 1.0

    @qd.kernel(fastcache=True)
    def through_field(f: qd.template()) -> None:
        for i in range(4):
            f[i] = 1.0

    def flags(k: object) -> tuple:
        o = k._primal.src_ll_cache_observations  # type: ignore[attr-defined]
        return (o.cache_key_generated, o.cache_validated, o.cache_loaded, o.cache_stored)

    a = np.zeros(4, np.float32)
    qd.init(arch=qd.cpu, offline_cache_file_path=str(tmp_path))
    bump(a)
    plain(a)
    through_field(qd.field(qd.f32, shape=4))
    assert flags(bump) == (True, False, False, True)  # compiled, stored
    assert flags(plain) == flags(through_field) == (False,) * 4  # no fastcache: a field
    qd.init(arch=qd.cpu, offline_cache_file_path=str(tmp_path))
    bump(a)
    assert flags(bump) == (True, True, True, False)  # loaded
    with pytest.warns(UserWarning, match="parameter `pure` is deprecated"):
        qd.kernel(pure=True)(lambda: None)
