"""Syntax errors that Quadrants 1.3.3 raises, with its exception types and words (recorded from
quadrants 1.3.3 on these cases), each pointing at the kernel's line; and the near cases it
accepts, which qdlab accepts too."""

from __future__ import annotations

import inspect

import pytest

import qdlab as qd

x = None


@pytest.fixture(autouse=True)
def _cpu() -> None:
    global x
    qd.init(arch=qd.cpu, offline_cache=False)
    x = qd.field(qd.f32, shape=4)  # a field made after the init, which drops the older ones


def loop_over_declared():
    i = 0
    for i in range(3):  # the line
        pass


def struct_for_over_declared():
    i = 0
    for i in x:  # the line
        pass


def loop_over_argument(i: qd.i32):
    for i in range(3):  # the line  # noqa: PLR1704
        pass


def loop_in_same_name():
    for i in range(2):
        for i in range(3):  # the line
            pass


def nested_static():
    for i in qd.static(qd.static(range(1))):  # the line
        pass


def assigns_template(a: qd.template()):
    a = 5  # the line  # noqa: F841


def augments_argument(a: qd.i32):
    a += 1  # the line


def swaps_arguments(a: qd.i32, b: qd.i32):
    a, b = b, a  # the line


def defines_function():
    def bar():  # the line
        pass


def raises():
    raise ValueError()  # the line


ARGS = {loop_over_argument: (1,), assigns_template: (1,), augments_argument: (1,)}
ARGS[swaps_arguments] = (1, 2)
DECLARED = "is already declared in the outer scope and cannot be used as loop variable"
IMMUTABLE = 'Kernel argument "a" is immutable in the kernel. If you want to change its value'


@pytest.mark.parametrize(
    ("fn", "words"),
    [
        (loop_over_declared, f"Variable 'i' {DECLARED}"),
        (struct_for_over_declared, f"Variable 'i' {DECLARED}"),
        (loop_over_argument, f"Variable 'i' {DECLARED}"),
        (loop_in_same_name, f"Variable 'i' {DECLARED}"),
        (nested_static, "'qd.static' cannot be nested"),
        (assigns_template, IMMUTABLE),
        (augments_argument, IMMUTABLE),
        (swaps_arguments, IMMUTABLE),
        (defines_function, "Function definition is not allowed in 'qd.kernel'"),
        (raises, 'Unsupported node "Raise"'),
    ],
)
def test_refused_in_quadrants_words_at_the_line(fn: object, words: str) -> None:
    kernel = qd.kernel(fn)
    with pytest.raises(qd.QuadrantsSyntaxError) as info:
        kernel(*ARGS.get(fn, ()))
    exc = info.value
    assert words in exc.message
    lines, first = inspect.getsourcelines(fn)
    line = next(k for k, text in enumerate(lines) if "# the line" in text) + first
    assert exc.loc.lineno == line and exc.loc.kernel == fn.__name__


def test_accepted_as_in_quadrants() -> None:
    y = qd.field(qd.i32, shape=4)

    @qd.func
    def bump(a: qd.i32) -> qd.i32:
        a = a + 1  # a func's parameter is its own copy
        return a

    @qd.kernel
    def k(n: qd.i32):
        i = 10
        for i in qd.static(range(2)):  # a static loop may reuse a name
            y[i] = bump(n)
        for j in range(2):
            pass
        for j in range(1):  # the first loop's index is gone
            y[2] = j + i
        for p, q in qd.ndrange(1, 1):  # an ndrange may reuse a name too
            y[3] = n

    k(5)
    assert list(y.to_numpy()) == [6, 6, 10, 5]  # the static loop kept `i` its own


def test_funcs_refuse_definitions_and_bad_annotations() -> None:
    @qd.func
    def f():
        def bar():
            pass

    @qd.kernel
    def k():
        f()

    with pytest.raises(
        qd.QuadrantsSyntaxError, match="Function definition is not allowed in 'qd.func'"
    ):
        k()
    with pytest.raises(
        qd.QuadrantsSyntaxError, match=r"Invalid type annotation in `.*g`: name 'nope'"
    ):

        @qd.func
        def g(a: nope):  # noqa: F821
            pass
