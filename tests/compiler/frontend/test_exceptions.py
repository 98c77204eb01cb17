"""qdlab's exceptions carry Quadrants' names and hierarchy, so `except qd.Quadrants...Error` written
against Quadrants catches what qdlab raises; qdlab's own names derive from them and keep their
caret."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd

# Quadrants 1.3.3, `quadrants.lang.exception`: each name and the builtin it also derives from.
QUADRANTS = {
    "QuadrantsCompilationError": (None, Exception),
    "QuadrantsSyntaxError": ("QuadrantsCompilationError", SyntaxError),
    "QuadrantsTypeError": ("QuadrantsCompilationError", TypeError),
    "QuadrantsNameError": ("QuadrantsCompilationError", NameError),
    "QuadrantsIndexError": ("QuadrantsCompilationError", IndexError),
    "QuadrantsRuntimeError": (None, RuntimeError),
    "QuadrantsRuntimeTypeError": ("QuadrantsRuntimeError", TypeError),
    "QuadrantsAssertionError": ("QuadrantsRuntimeError", AssertionError),
}


@pytest.mark.parametrize("name", QUADRANTS)
def test_quadrants_names_have_quadrants_bases(name: str) -> None:
    cls = getattr(qd, name)
    parent, builtin = QUADRANTS[name]
    assert issubclass(cls, builtin) and issubclass(cls, qd.QdError)
    if parent is not None:
        assert issubclass(cls, getattr(qd, parent))


@pytest.mark.parametrize(
    "ours, theirs",
    [
        (qd.QdSyntaxError, qd.QuadrantsSyntaxError),
        (qd.QdTypeError, qd.QuadrantsTypeError),
        (qd.QdRuntimeError, qd.QuadrantsRuntimeError),
        (qd.QdArgumentError, qd.QuadrantsRuntimeTypeError),
        (qd.QdAssertionError, qd.QuadrantsAssertionError),
        (qd.QdIndexError, qd.QuadrantsAssertionError),
        (qd.QdIndexError, IndexError),
        (qd.QdValueError, ValueError),
    ],
)
def test_qdlab_names_are_caught_by_quadrants_names(ours: type, theirs: type) -> None:
    assert issubclass(ours, theirs) and issubclass(ours, qd.QdError)


@qd.kernel
def past_end(a: qd.types.NDArray[qd.f32, 1], n: qd.i32):
    for i in range(n):
        a[i] = 1.0


@qd.kernel
def positive(a: qd.types.NDArray[qd.f32, 1]):
    for i in range(a.shape[0]):
        assert a[i] > 0.0, "a must be positive"


def test_runtime_checks_raise_quadrants_assertion_errors() -> None:
    """Quadrants raises QuadrantsAssertionError for a failed bounds check and a failed `assert`
    alike."""
    qd.init(arch=qd.cpu, offline_cache=False, debug=True)
    try:
        with pytest.raises(qd.QuadrantsAssertionError) as info:
            past_end(np.zeros(4, np.float32), 5)
        assert type(info.value) is qd.QdIndexError and isinstance(info.value, IndexError)
        assert str(info.value).startswith("past_end (test_exceptions.py, line ")
        with pytest.raises(qd.QuadrantsAssertionError) as info:
            positive(np.array([1, -1], np.float32))
        assert type(info.value) is qd.QdAssertionError
        assert "a must be positive" in info.value.message
    finally:
        qd.init(arch=qd.cpu, offline_cache=False)
