"""The frontend's tables of built-ins agree with the names the language exports: every `qd.*`
built-in a kernel may call has one entry, every entry is a built-in some module exports, and a
wrong argument count is the table's error."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd
from qdlab import math as qd_math
from qdlab.compiler.frontend.builtins import ANY, BUILTINS, NODE, PYTHON_CALLS
from qdlab.compiler.frontend.vector_ops import METHODS
from qdlab.core import language as lang
from qdlab.core.errors import QdTypeError
from qdlab.lang import impl, ops

NOT_CALLS = {"grouped"}
"""Built-ins that are a `for`'s iterable, never a call's callee (`qd.ndrange` is also a value a
`@qd.func` may return, for `qd.static` to unroll)."""


def exported() -> set[str]:
    names = set(lang.BUILTINS)
    for module in (qd_math, ops, impl):
        names |= {v.name for v in vars(module).values() if isinstance(v, lang.Builtin)}
    return names


def test_every_builtin_has_one_entry() -> None:
    assert exported() - NOT_CALLS == set(BUILTINS)
    assert all(e.name == name for name, e in BUILTINS.items())
    assert all(e.arity in (ANY, NODE) or e.arity >= 0 for e in BUILTINS.values())


def test_python_calls_are_found_by_identity() -> None:
    assert all(id(f) == key for key, (f, _) in PYTHON_CALLS.items())
    assert {print, len, min, max, abs, int, float, bool, range, lang.static} <= {
        f for f, _ in PYTHON_CALLS.values()
    }


def test_vector_methods_table() -> None:
    assert {"dot", "cross", "norm", "inverse", "fill", "cast"} <= set(METHODS)


def test_a_wrong_argument_count_is_the_tables_error() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)

    @qd.kernel
    def k(a: qd.types.NDArray[qd.f32, 1]):
        a[0] = qd.atan2(a[1])

    with pytest.raises(QdTypeError, match=r"expected 2 argument\(s\), got 1"):
        k(np.zeros(2, np.float32))


def test_unary_typing_rules() -> None:
    """The table's typing rules: a float function converts an integer, rounding keeps a Python
    integer, a predicate of an integer is false; `sin` and the rounding functions refuse an
    integer value, as Quadrants does."""
    qd.init(arch=qd.cpu, offline_cache=False)

    @qd.kernel
    def k(a: qd.types.NDArray[qd.f32, 1], b: qd.types.NDArray[qd.i32, 1]):
        n = 7
        a[0] = qd.sqrt(n + 2)
        a[1] = qd.fract(n)
        b[0] = qd.floor(7) & 3  # an integer still: `&` takes it
        b[1] = qd.isnan(n)
        b[2] = qd.abs(-n)

    a, b = np.zeros(2, np.float32), np.full(3, -1, np.int32)
    k(a, b)
    assert a.tolist() == [3.0, 0.0] and b.tolist() == [3, 0, 7]

    @qd.kernel
    def real_only(a: qd.types.NDArray[qd.f32, 1]):
        n = 7
        a[0] = qd.sin(2) + qd.floor(n)

    with pytest.raises(QdTypeError, match="'floor' takes real inputs only, however 'i32'"):
        real_only(a)
