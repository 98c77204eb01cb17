"""The modules and names Quadrants programs and tests import: each resolves, and each is the very
object qdlab uses (an exception imported from `qdlab.lang.exception` catches what qdlab raises)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import qdlab as qd


@pytest.mark.parametrize(
    "module, names",
    [
        ("qdlab.lang.impl", ["current_cfg", "get_runtime", "Kernel", "QuadrantsSyntaxError"]),
        ("qdlab.lang.exception", ["QuadrantsTypeError", "QuadrantsIndexError"]),
        ("qdlab.lang.misc", ["get_host_arch_list"]),
        ("qdlab.lang.util", ["has_pytorch"]),
        ("qdlab.lang.ops", ["logical_not", "abs", "add"]),
        ("qdlab.types", ["NDArray", "ndarray", "Template", "template", "i32", "f64"]),
        ("qdlab.types.primitive_types", ["i8", "u64", "f16", "integer_types", "real_types"]),
        ("qdlab.types.annotations", ["template"]),
        ("qdlab.math", ["inf", "nan", "pi", "isinf", "isnan", "popcnt", "clz", "ffs", "fns"]),
    ],
)
def test_module_resolves(module: str, names: list[str]) -> None:
    m = importlib.import_module(module)
    for name in names:
        assert hasattr(m, name), f"{module}.{name}"


def test_attribute_chains_need_no_import() -> None:
    assert qd.lang.impl.current_cfg() is qd.cfg
    assert qd.lang.misc.get_host_arch_list() == [qd.cpu]
    assert isinstance(qd.lang.util.has_pytorch(), bool)
    assert qd.types.primitive_types.i32 is qd.i32
    assert qd.math.inf == float("inf") and qd.math.pi == pytest.approx(3.14159265)


def test_exceptions_are_qdlabs_own() -> None:
    from qdlab.lang import exception

    for name in exception.__all__:
        assert getattr(exception, name) is getattr(qd, name)
    from qdlab.lang.impl import Kernel

    assert Kernel is qd.Kernel


def test_extensions_answer_for_qdlabs_cpu() -> None:
    ext = qd.extension
    assert {e.name for e in ext} >= {"adstack", "assertion", "data64", "sparse", "quant", "bls"}
    assert qd.is_extension_enabled(ext.data64) and qd.is_extension_enabled(ext.assertion)
    assert qd.is_extension_enabled(ext.sparse) and qd.is_extension_enabled(ext.quant)
    # adstack is supported on the CPU but enabled, as in Quadrants, only with its option
    assert qd.is_extension_supported(qd.cpu, ext.adstack)
    qd.init(arch=qd.cpu)
    assert not qd.is_extension_enabled(ext.adstack)
    qd.init(arch=qd.cpu, ad_stack_experimental_enabled=True)
    assert qd.is_extension_enabled(ext.adstack)
    qd.init(arch=qd.cpu)
    assert qd.is_extension_supported(qd.cpu, ext.data64)
    assert not qd.is_extension_supported(qd.vulkan, ext.data64)


@qd.kernel
def not_and_add(x: qd.i32) -> qd.i32:
    return qd.lang.ops.logical_not(x) * 10 + qd.lang.ops.add(x, 1) + qd.lang.ops.abs(-x) * 100


def test_ops_compile_like_the_operators() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    assert not_and_add(0) == 10 + 1 and not_and_add(-3) == -2 + 300


@qd.kernel
def bits(x: qd.i64) -> qd.i64:
    return qd.math.popcnt(x) * 10000 + qd.math.clz(x) * 100 + qd.math.ffs(x)


@qd.kernel
def find_set_bit(mask: qd.u32, base: qd.u32, offset: qd.i32) -> qd.u32:
    return qd.math.fns(mask, base, offset)


def _fns(mask: int, base: int, offset: int) -> int:
    """CUDA's `fns`, in Python: the |offset|-th set bit from `base` up (offset > 0) or down."""
    if offset == 0:
        return base if base < 32 and (mask >> base) & 1 else 0xFFFFFFFF
    order = range(base, 32) if offset > 0 else range(min(base, 31), -1, -1)
    hits = [p for p in order if (mask >> p) & 1]
    return hits[abs(offset) - 1] if abs(offset) <= len(hits) else 0xFFFFFFFF


def test_bit_functions() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    for x in (0, 1, -1, 1 << 40, 12):
        u = x & (2**64 - 1)
        clz = 64 - u.bit_length()
        ffs = (u & -u).bit_length()
        assert bits(x) == u.bit_count() * 10000 + clz * 100 + ffs
    rng = np.random.default_rng(7)
    for mask in [0, 0xFFFFFFFF, 0xAAAAAAAA, *rng.integers(0, 2**32, 3).tolist()]:
        for base in (0, 5, 31):
            for offset in (-33, -3, -1, 0, 1, 2, 32):
                assert find_set_bit(mask, base, offset) == _fns(mask, base, offset)
    with pytest.raises(qd.QuadrantsTypeError, match="'popcnt' takes integral inputs only"):

        @qd.kernel
        def on_float(x: qd.f32) -> qd.i32:
            return qd.math.popcnt(x)

        on_float(1.0)


def test_scalar_type_groups_and_builtin_names_are_quadrants() -> None:
    """Quadrants' groups hold Python's scalar types too, and its builtins are functions with a
    `__name__` (pytest's parameter ids, and user code, read both); `qd.cast(x, bool)` is a u1."""
    from qdlab.types import primitive_types as p

    assert p.real_types == [qd.f16, qd.f32, qd.f64, float]
    assert p.integer_types[-2:] == [int, bool] and qd.u1 in p.integer_types
    assert p.all_types == p.real_types + p.integer_types
    assert [f.__name__ for f in (qd.atan2, qd.max, qd.sqrt)] == ["atan2", "max", "sqrt"]
    qd.init(arch=qd.cpu, offline_cache=False)

    @qd.kernel
    def truth(x: qd.f32) -> qd.i32:
        return qd.cast(qd.cast(x, bool), qd.i32) * 10 + qd.cast(qd.cast(x, int), qd.i32)

    assert [truth(123.4), truth(0.0)] == [133, 0]


def test_ndarray_annotations_are_instances_of_their_names() -> None:
    """As in Quadrants, where `qd.types.ndarray` is `qd.types.NDArray`, the annotations' class."""
    for ann in (qd.types.NDArray[qd.f32, 1], qd.types.ndarray(qd.i32, ndim=2), qd.types.ndarray()):
        assert isinstance(ann, qd.types.NDArray) and isinstance(ann, qd.types.ndarray)
    assert not isinstance(qd.f32, qd.types.NDArray) and not isinstance(3, qd.types.ndarray)
