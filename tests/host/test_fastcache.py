"""`@qd.kernel(fastcache=True)` as Quadrants' fastcache docs show it (behaviour measured on
quadrants 1.3.3): the purity rule (a global or captured number, string or field read by the
kernel or a func it calls is refused, an UPPERCASE one warned of; enums, modules, funcs, dtypes and
a data-oriented `self`'s members are fine) and `kernel._primal.src_ll_cache_observations`."""

import enum
import math
import re
import types
import warnings

import numpy as np
import pytest

import qdlab as qd
from qdlab._test_tools import warnings_helper
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


class Config:
    KIND = 1

    def __init__(self) -> None:
        self.size = 3
        self.SIZE = 32
        self.flag = True
        self.name = "x"
        self.sub = Config.Sub()

    class Sub:
        val = 5
        VAL = 6


cfg = Config()
store: object = None
holder_field: object = None
flag = True
n = 3
constants = types.ModuleType("constants")
constants.k = 7  # type: ignore[attr-defined]


@qd.data_oriented
class Store:
    def __init__(self) -> None:
        self.b = qd.field(qd.i32, shape=4)


@qd.func
def reads_cfg() -> qd.i32:
    return cfg.size


@qd.func
def reads_member(c: qd.template()) -> qd.i32:
    return c.size


def compile_error(k: object, *args: object) -> str:
    with pytest.raises(qd.QuadrantsCompilationError) as info:
        k(*args)  # type: ignore[operator]
    return str(info.value)


def test_attribute_chains_from_a_global() -> None:
    """`cfg.size`, `cfg.sub.val`, `store.b[0]`: a number, string or field reached along a chain of
    attributes from a global is refused (an UPPERCASE attribute warned of), as Quadrants 1.3.3
    does; a parameter's chain, an enum member and `math` / numpy / qd constants are fine."""
    global store
    qd.init(arch=qd.cpu, offline_cache=False)
    store = Store()  # a field lives until the next qd.init
    word = r"\[PURE.VIOLATION\] WARNING: Accessing global var {} from outside function scope "
    word += r"within pure kernel {} is in global vars, therefore violates pure"

    @qd.kernel(fastcache=True)
    def size() -> qd.i32:
        return cfg.size

    @qd.kernel(fastcache=True)
    def deep() -> qd.i32:
        return cfg.sub.val

    @qd.kernel(fastcache=True)
    def name() -> qd.i32:
        return cfg.name == "x"

    @qd.kernel(fastcache=True)
    def writes() -> None:
        store.b[0] = 5

    @qd.kernel(fastcache=True)
    def of_class() -> qd.i32:
        return Config.Sub.val

    @qd.kernel(fastcache=True)
    def of_module() -> qd.i32:
        return constants.k

    @qd.kernel(fastcache=True)
    def through_func() -> qd.i32:
        return reads_cfg()

    for k, attr, root in (
        (size, "size", "cfg"),
        (deep, "val", "cfg"),
        (name, "name", "cfg"),
        (writes, "b", "store"),
        (of_class, "val", "Config"),
        (of_module, "k", "constants"),
        (through_func, "size", "cfg"),
    ):
        assert re.search(word.format(attr, root), compile_error(k)), k

    @qd.kernel(fastcache=True)
    def upper() -> qd.i32:
        return cfg.SIZE + cfg.sub.VAL + Config.KIND

    with pytest.warns(UserWarning) as got:
        assert upper() == 32 + 6 + 1
    said = " ".join(str(w.message) for w in got)
    for attr, root in (("SIZE", "cfg"), ("VAL", "cfg"), ("KIND", "Config")):
        assert re.search(word.format(attr, root), said)

    @qd.kernel(fastcache=True)
    def given(s: qd.template(), c: qd.template()) -> qd.i32:
        s.b[1] = 7
        return c.size + reads_member(cfg) + Mode.FAST

    @qd.kernel(fastcache=True)
    def constant() -> qd.f32:
        return math.pi + np.pi + qd.math.pi + qd.min(qd.math.inf, 1.0)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert given(store, cfg) == 3 + 3 + 4
        assert store.b[1] == 7
        assert constant() == pytest.approx(3 * math.pi + 1)


def test_static_scope_only_warns() -> None:
    """Inside `qd.static(...)` (a static `if` or `for`, a static value, a comprehension's
    iterable, `qd.static_assert`) a lowercase global only warns: Quadrants 1.3.3's transition
    period; outside it, in the same kernel, it is still refused."""
    qd.init(arch=qd.cpu, offline_cache=False)

    @qd.kernel(fastcache=True)
    def static_if() -> qd.i32:
        r = 0
        if qd.static(flag and cfg.flag):
            r = 1
        return r

    @qd.kernel(fastcache=True)
    def static_for() -> qd.i32:
        r = 0
        for i in qd.static(range(cfg.size)):
            r += i
        return r

    @qd.kernel(fastcache=True)
    def static_value() -> qd.i32:
        qd.static_assert(flag)
        v = qd.Vector([i for i in range(n)])
        return qd.static(n) + v[2]

    for k, value, said in (
        (static_if, 1, ("global variable flag <class 'bool'>", "global var flag from outside")),
        (static_for, 3, ("global var size from outside",)),
        (static_value, 5, ("global variable n <class 'int'>",)),
    ):
        with pytest.warns(UserWarning) as got:
            assert k() == value
        for words in said:
            assert any(words in str(w.message) for w in got), words

    @qd.kernel(fastcache=True)
    def mixed() -> qd.i32:
        return qd.static(n) + cfg.size

    @qd.kernel(fastcache=True)
    def runtime_if() -> qd.i32:
        r = 0
        if flag:
            r = 1
        return r

    @qd.kernel(fastcache=True)
    def python_call() -> qd.i32:
        return min(n, 2)

    with pytest.warns(UserWarning):  # `qd.static(n)`, before `cfg.size` is refused
        assert "global var size" in compile_error(mixed)
    assert "global variable flag" in compile_error(runtime_if)
    assert "global variable n" in compile_error(python_call)


def test_fields_of_every_kind_are_refused() -> None:
    global holder_field
    qd.init(arch=qd.cpu, offline_cache=False)
    holder_field = qd.field(qd.i32, shape=4)
    vf = qd.Vector.field(2, qd.f32, shape=3)
    st = qd.Struct.field({"pos": qd.f32}, shape=3)

    @qd.kernel(fastcache=True)
    def vector() -> qd.f32:
        return vf[0][1]

    @qd.kernel(fastcache=True)
    def struct() -> qd.f32:
        return st.pos[0]

    @qd.kernel(fastcache=True)
    def scalar() -> qd.i32:
        return holder_field[0]

    assert "global variable vf <class" in compile_error(vector)
    assert "global variable st <class" in compile_error(struct)
    assert "global variable holder_field <class" in compile_error(scalar)


def test_qd_pure_is_fastcache(tmp_path: object) -> None:
    """`@qd.pure` over `@qd.kernel`: deprecated (warned once), and the kernel is `fastcache=True`
    (`is_pure`); a variant of the same source compiled without the check never serves it."""
    warnings_helper._seen.clear()
    with pytest.warns(UserWarning, match=r"Use of @qd.pure is deprecated. Please use "):

        @qd.pure
        @qd.kernel
        def given(x: qd.i32) -> qd.i32:
            return x + n

    with warnings.catch_warnings():
        warnings.simplefilter("error")

        @qd.pure
        @qd.kernel
        def again() -> None:
            pass

    assert given.is_pure and given.fastcache and again.is_pure
    qd.init(arch=qd.cpu, offline_cache_file_path=str(tmp_path))
    assert "global variable n" in compile_error(given, 1)

    def body() -> qd.i32:
        return n

    plain = qd.kernel(body)
    assert not plain.is_pure
    assert plain() == 3  # compiled and stored unchecked
    qd.init(arch=qd.cpu, offline_cache_file_path=str(tmp_path))
    assert "global variable n" in compile_error(qd.pure(qd.kernel(body)))


def test_a_field_through_a_template_is_reported_once_per_compile(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Quadrants' fastcache cannot key a field that reaches a pure kernel through `qd.Template`
    (a parameter, a dataclass member so annotated, a data-oriented object's member) and says so
    once per compile; through `qd.Tensor`, through an ndarray, or for a kernel that is not pure it
    says nothing (quadrants 1.3.3, each case run)."""
    import dataclasses

    qd.init(arch=qd.cpu, offline_cache=False)
    f = qd.field(qd.f32, shape=(4,))

    @dataclasses.dataclass(frozen=True)
    class ByTemplate:
        a: qd.Template = None

    @dataclasses.dataclass(frozen=True)
    class ByTensor:
        a: qd.Tensor = None

    @qd.data_oriented
    class Holder:
        def __init__(self) -> None:
            self.a = qd.field(qd.f32, shape=(4,))

        @qd.kernel(fastcache=True)
        def run(self) -> None:
            self.a[0] = 2

    @qd.kernel(fastcache=True)
    def top(x: qd.Template) -> None:
        x[0] = 1

    @qd.kernel(fastcache=True)
    def tensor(x: qd.Tensor) -> None:
        x[0] = 1

    @qd.kernel(fastcache=True)
    def member(s: ByTemplate) -> None:
        s.a[0] = 1

    @qd.kernel(fastcache=True)
    def member_tensor(s: ByTensor) -> None:
        s.a[0] = 1

    @qd.kernel
    def impure(x: qd.Template) -> None:
        x[0] = 1

    def reported(call) -> bool:
        caplog.clear()
        with caplog.at_level("WARNING", logger="qdlab"):
            call()
        return any("[FASTCACHE][INVALID_FUNC]" in r.getMessage() for r in caplog.records)

    assert reported(lambda: top(f))
    assert not reported(lambda: top(f))  # compiled already
    assert reported(Holder().run)
    assert reported(lambda: member(ByTemplate(f)))
    assert not reported(lambda: tensor(f))
    assert not reported(lambda: member_tensor(ByTensor(f)))
    assert not reported(lambda: impure(f))
