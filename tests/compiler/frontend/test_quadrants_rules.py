"""Rules of the kernel language as Quadrants has them, checked on qdlab alone: how an error shows
its frames, funcs that must stay at the top level, compile-time assertions, warnings."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import qdlab as qd


@pytest.fixture(autouse=True)
def _init() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)


@qd.func
def inner():
    missing_name()  # noqa: F821


@qd.func
def middle():
    inner()


@qd.kernel
def outer():
    middle()


def line_of(fn: object, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)  # type: ignore[arg-type]
    return first + next(k for k, line in enumerate(lines) if text in line)


def test_an_error_in_a_func_shows_each_call_as_a_frame() -> None:
    with pytest.raises(qd.QuadrantsNameError) as info:
        outer()
    file = __file__
    text = str(info.value)
    assert text.startswith(f"inner (test_quadrants_rules.py, line {line_of(inner.fn, 'missing')}")
    frames = [
        f'File "{file}", line {line_of(outer.fn, "middle()")}, in outer:\n'
        + "    middle()\n    ^^^^^^^^",
        f'File "{file}", line {line_of(middle.fn, "inner()")}, in middle:\n'
        + "    inner()\n    ^^^^^^^",
        f'File "{file}", line {line_of(inner.fn, "missing")}, in inner:\n'
        + "    missing_name()  # noqa: F821\n    ^^^^^^^^^^^^",
    ]
    positions = [text.index(f) for f in frames]
    assert positions == sorted(positions)
    assert text.endswith('Name "missing_name" is not defined.')


# fmt: off
@qd.kernel
def tabbed():
    x = 1	+	undefined_here  # noqa: F821, F841


@qd.kernel
def long_line() -> qd.i32:
    return aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa_b(1)  # noqa: E501, F821
# fmt: on


def test_tabs_become_spaces_and_long_lines_wrap_at_80_columns() -> None:
    with pytest.raises(qd.QuadrantsNameError) as info:
        tabbed()
    assert "\n    x = 1   +   undefined_here  # noqa: F821, F841\n" in str(info.value)
    assert "\n                ^^^^^^^^^^^^^^\n" in str(info.value)
    with pytest.raises(qd.QuadrantsNameError) as info:
        long_line()
    line = next(s for s in inspect.getsource(long_line.fn).splitlines() if "_b(1)" in s)
    start, end = line.index("a"), line.index("(1)")
    shown = str(info.value).splitlines()[2:6]
    assert shown == [
        line[:80],
        " " * start + "^" * (80 - start),
        line[80:160],
        "^" * (end - 80),
    ]


@qd.func(requires_top_level=True)
def bump(a: qd.template(), n: qd.i32):
    for i in range(n):
        a[i] = a[i] + 1


@qd.kernel
def bump_at_top(a: qd.types.NDArray[qd.i32, 1]):
    bump(a, a.shape[0])


@qd.kernel
def bump_in_a_loop(a: qd.types.NDArray[qd.i32, 1]):
    for _ in range(1):
        bump(a, a.shape[0])


@qd.kernel
def bump_unrolled(a: qd.types.NDArray[qd.i32, 1]):
    for _ in qd.static(range(2)):
        bump(a, a.shape[0])


def test_requires_top_level() -> None:
    a = np.zeros(4, np.int32)
    bump_at_top(a)
    bump_unrolled(a)
    assert a.tolist() == [3] * 4
    with pytest.raises(qd.QuadrantsSyntaxError, match="requires_top_level"):
        bump_in_a_loop(a)


LIMIT = 32


@qd.kernel
def checks_limit():
    qd.static_assert(LIMIT == 32)
    qd.static_assert(LIMIT > 40, "the limit is too small")


def test_static_assert() -> None:
    with pytest.raises(qd.QuadrantsCompilationError, match="the limit is too small"):
        checks_limit()
    qd.static_assert(True)
    with pytest.raises(AssertionError):
        qd.static_assert(False, "outside a kernel too")


@qd.kernel
def nested_name(a: qd.types.NDArray[qd.i32, 1]):
    for _ in range(2):
        qd.loop_config(name="inner")
        for i in range(a.shape[0]):
            a[i] += 1


def test_a_name_on_a_nested_loop_warns_on_stderr(capfd: pytest.CaptureFixture[str]) -> None:
    a = np.zeros(3, np.int32)
    nested_name(a)
    assert a.tolist() == [2] * 3
    err = capfd.readouterr().err
    assert "'inner'" in err and "nested inside another for-loop" in err


@qd.func
def truth(x: qd.u32) -> bool:
    return bool(x)


@qd.kernel
def count_true(flag: bool) -> qd.i32:
    return truth(1000) + truth(qd.u32(4_294_967_295)) * 10 + truth(0) * 100 + flag * 1000


def test_bool_is_u1() -> None:
    assert count_true(True) == 1011 and count_true(False) == 11


class Box:
    def __init__(self, items: list[int]) -> None:
        self.items = items

    def __getitem__(self, k: int) -> int:
        return self.items[k]


BOX = Box([5, 6, 7])


@qd.kernel
def unrolled_sum() -> qd.i32:
    s = 0
    for k in qd.static(range(3)):
        s += BOX[k]
    return s


def test_a_python_object_indexed_by_a_static_index() -> None:
    assert unrolled_sum() == 18


@qd.kernel
def raises_in_kernel() -> qd.i32:
    raise ValueError("x")


@qd.kernel
def for_else() -> qd.i32:
    s = 0
    for i in range(3):
        s += i
    else:  # noqa: PLW0120 - refused: this is the construct under test
        s = 100
    return s


@qd.kernel
def assigns_argument(n: qd.i32) -> qd.i32:
    n += 1
    return n


@qd.kernel
def defines_function() -> qd.i32:
    def f() -> int:
        return 1

    return f()


@pytest.mark.parametrize(
    ("kernel", "args", "words"),
    [
        (raises_in_kernel, (), 'Unsupported node "Raise"'),
        (for_else, (), "'else' clause for 'for' not supported"),
        (assigns_argument, (1,), 'Kernel argument "n" is immutable in the kernel'),
        (defines_function, (), "Function definition is not allowed in 'qd.kernel'"),
    ],
)
def test_unsupported_python_is_refused_in_quadrants_words(
    kernel: object, args: tuple, words: str
) -> None:
    """The words the reference's user guide lists for each refusal come first."""
    qd.init(arch=qd.cpu, offline_cache=False)
    with pytest.raises(qd.QuadrantsSyntaxError) as e:
        kernel(*args)  # type: ignore[operator]
    assert words in str(e.value)
