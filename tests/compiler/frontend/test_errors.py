"""Every bad-input case of the kernel language: the error points at the user's line, column and
caret.

Each case is a kernel below and a row naming the line it must point at (`line`, a snippet unique
from the kernel's `def` on) and the column (`caret`, the text the caret must sit under). Nothing the
user sees may name a path inside `qdlab/`, and the last traceback frame the user sees is their own
call.
"""

# ruff: noqa: BLE001, F821, F841, PLW0120, PLW0602, S110 - the kernels below are wrong on purpose

from __future__ import annotations

import os
import traceback
from pathlib import Path
from types import TracebackType

import numpy as np
import pytest

import qdlab as qd
from qdlab.compiler.frontend.visitor import Frontend
from qdlab.core.errors import QdAnnotationError

F32 = qd.types.NDArray[qd.f32, 1]
I32 = qd.types.NDArray[qd.i32, 1]
F32_2D = qd.types.NDArray[qd.f32, 2]
THIS = Path(__file__).resolve()
LINES = THIS.read_text().splitlines()
QDLAB_DIR = str(Path(qd.__file__).resolve().parent)


@pytest.fixture(autouse=True)
def _init() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)


@qd.func
def returns_in_loop(x: qd.f32) -> qd.f32:
    for _ in range(3):
        return x
    return x


# -- kernels with one mistake each -----------------------------------------------------------------


@qd.kernel
def uses_try(a: F32):
    try:
        a[0] = 1.0
    except Exception:
        pass


@qd.kernel
def uses_with(a: F32):
    with open("x"):
        a[0] = 1.0


@qd.kernel
def uses_lambda(a: F32):
    f = lambda x: x


@qd.kernel
def uses_class(a: F32):
    class C:
        pass


@qd.kernel
def uses_yield(a: F32):
    a[0] = 1.0
    yield 1


@qd.kernel
def uses_list_comprehension(a: F32):
    b = [i for i in range(a.shape[0])]


@qd.kernel
def uses_dict_comprehension(a: F32):
    b = {i: i for i in range(a.shape[0])}


@qd.kernel
def uses_set_comprehension(a: F32):
    b = {i for i in range(3)}


@qd.kernel
def uses_nested_def(a: F32):
    def inner():
        pass


@qd.kernel
def uses_global(a: F32):
    global SOMETHING


@qd.kernel
def uses_del(a: F32):
    x = 1
    del x


@qd.kernel
def uses_raise(a: F32):
    raise ValueError("no")


@qd.kernel
def uses_fstring(a: F32):
    s = f"{a[0]}"


@qd.kernel
def uses_while_else(a: F32):
    while a[0] > 0.0:
        a[0] -= 1.0
    else:
        a[0] = 2.0


@qd.kernel
def uses_for_else(a: F32):
    for i in range(4):
        a[i] = 1.0
    else:
        a[0] = 2.0


@qd.kernel
def uses_unknown_name(a: F32):
    for i in range(4):
        a[i] = not_defined_anywhere * 2.0


@qd.kernel
def assigns_argument(a: F32, s: qd.f32):
    s = 2.0
    a[0] = s


@qd.kernel
def bitwise_on_floats(a: F32):
    for i in range(4):
        a[i] = a[i] & a[i]


@qd.kernel
def float_index(a: F32):
    for i in range(4):
        a[i * 0.5] = 1.0


@qd.kernel
def too_many_indices(a: F32):
    for i in range(4):
        a[i, i] = 1.0


@qd.kernel
def too_few_indices(b: F32_2D):
    for i in range(4):
        b[i] = 1.0


@qd.kernel
def indexes_scalar(a: F32, s: qd.f32):
    for i in range(4):
        a[i] = s[i]


@qd.kernel
def breaks_parallel_loop(a: F32):
    for i in range(4):
        if a[i] > 2.0:
            break
        a[i] = 1.0


@qd.kernel
def breaks_static_loop(a: F32):
    for k in qd.static(range(3)):
        while a[k] > 0.0:
            a[k] -= 1.0
        if a[k] < 0.0:
            break


@qd.kernel
def calls_func_returning_in_loop(a: F32):
    for i in range(4):
        a[i] = returns_in_loop(a[i])


@qd.kernel
def calls_python_function(a: F32):
    for i in range(4):
        a[i] = np.sqrt(a[i])


@qd.kernel
def static_loop_without_iterable(a: F32):
    for k in qd.static():
        a[0] = 1.0


@qd.kernel
def shape_axis_out_of_range(a: F32):
    for i in range(a.shape[1]):
        a[i] = 1.0


@qd.kernel
def unknown_module_attribute(a: F32):
    a[0] = qd.math.no_such_function(1.0)


@qd.kernel
def constant_division_by_zero(a: F32):
    a[0] = 1 // 0


@qd.kernel
def literal_beyond_i64(a: F32) -> qd.i64:
    a[0] = 1.0
    return 2**70


@qd.kernel
def u8_literal_out_of_range(a: F32):
    a[0] = qd.u8(300)


@qd.kernel
def i32_literal_out_of_range(a: F32):
    a[0] = 1.0 + qd.i32(2**40 + 1)


@qd.kernel
def loop_bound_beyond_i32(a: F32):
    for i in range(1, 2**40):
        a[0] = 1.0


# (kernel, the line's snippet, the text under the caret, part of the message, error class)
CASES = [
    (uses_try, "try:", "try", "`try` is not supported in a kernel", qd.QdSyntaxError),
    (
        uses_with,
        'with open("x"):',
        "with",
        "only supports qd.stream_parallel()",
        qd.QdSyntaxError,
    ),
    (uses_lambda, "f = lambda", "lambda", "`lambda` is not supported", qd.QdSyntaxError),
    (uses_class, "class C:", "class", "a class definition is not supported", qd.QdSyntaxError),
    (uses_yield, "yield 1", "yield", "`yield` is not supported", qd.QdSyntaxError),
    (
        uses_list_comprehension,
        "b = [i for",
        "[i for",
        "cannot evaluate `range(a.shape[0])` at compile time",
        qd.QuadrantsCompilationError,
    ),
    (
        uses_dict_comprehension,
        "b = {i: i",
        "{i: i",
        "cannot evaluate `range(a.shape[0])` at compile time",
        qd.QuadrantsCompilationError,
    ),
    (
        uses_set_comprehension,
        "b = {i for",
        "{i for",
        "a set comprehension is not supported",
        qd.QdSyntaxError,
    ),
    (
        uses_nested_def,
        "def inner",
        "def inner",
        "Function definition is not allowed in 'qd.kernel'. Define `inner` outside",
        qd.QdSyntaxError,
    ),
    (uses_global, "global SOMETHING", "global", "`global` is not supported", qd.QdSyntaxError),
    (uses_del, "del x", "del", "`del` is not supported", qd.QdSyntaxError),
    (
        uses_raise,
        "raise ValueError",
        "raise",
        'Unsupported node "Raise": `raise` is not supported',
        qd.QdSyntaxError,
    ),
    (
        uses_fstring,
        's = f"',
        'f"',
        "an f-string outside print() is not supported",
        qd.QdSyntaxError,
    ),
    (
        uses_while_else,
        "while a[0] > 0.0:",
        "while",
        "`while` with `else` is not supported",
        qd.QdSyntaxError,
    ),
    (
        uses_for_else,
        "for i in range(4):",
        "for",
        "`for` with `else` is not supported",
        qd.QdSyntaxError,
    ),
    (
        uses_unknown_name,
        "not_defined_anywhere",
        "not_defined_anywhere",
        'Name "not_defined_anywhere" is not defined',
        qd.QdNameError,
    ),
    (
        assigns_argument,
        "s = 2.0",
        "s = 2.0",
        'Kernel argument "s" is immutable in the kernel',
        qd.QdSyntaxError,
    ),
    (
        bitwise_on_floats,
        "a[i] & a[i]",
        "a[i] & a[i]",
        "unsupported operand type(s) for '&': 'f32' and 'f32'",
        qd.QdTypeError,
    ),
    (
        float_index,
        "a[i * 0.5] = 1.0",
        "i * 0.5",
        "indices must be integers, however 'f32' is provided as index 0",
        qd.QdTypeError,
    ),
    (
        too_many_indices,
        "a[i, i] = 1.0",
        "a[i, i]",
        "`a` has 1 dimension(s) but is indexed with 2",
        qd.QdTypeError,
    ),
    (
        too_few_indices,
        "b[i] = 1.0",
        "b[i]",
        "`b` has 2 dimension(s) but is indexed with 1",
        qd.QdTypeError,
    ),
    (indexes_scalar, "s[i]", "s[i]", "a f32 value cannot be indexed in a kernel", qd.QdTypeError),
    (
        breaks_parallel_loop,
        "break",
        "break",
        "Cannot break in the outermost loop",
        qd.QdSyntaxError,
    ),
    (
        breaks_static_loop,
        "break",
        "break",
        "You are trying to `break` a static `for` loop",
        qd.QdSyntaxError,
    ),
    (
        calls_python_function,
        "np.sqrt(a[i])",
        "np.sqrt(a[i])",
        (
            "sqrt() is not a Quadrants function: Python calls it while the kernel compiles, so "
            "its arguments must be known then, and `a[i]` is a value the kernel computes."
        ),
        qd.QdTypeError,
    ),
    (
        static_loop_without_iterable,
        "qd.static():",
        "for",
        "a qd.static loop takes one iterable",
        qd.QdSyntaxError,
    ),
    (
        shape_axis_out_of_range,
        "a.shape[1]",
        "a.shape[1]",
        "index 1 is out of range for a tuple of 1 item(s)",
        qd.QdTypeError,
    ),
    (
        unknown_module_attribute,
        "qd.math.no_such",
        "qd.math.no_such",
        "module `qdlab.math` has no attribute `no_such_function`",
        qd.QuadrantsCompilationError,
    ),
    (
        constant_division_by_zero,
        "1 // 0",
        "1 // 0",
        "division by zero in a constant expression",
        qd.QdSyntaxError,
    ),
    (
        literal_beyond_i64,
        "return 2**70",
        "2**70",
        f"Integer literal {2**70} exceeded the range of default_ip: i32",
        qd.QdTypeError,
    ),
    (
        u8_literal_out_of_range,
        "qd.u8(300)",
        "300",
        "Integer literal 300 exceeded the range of specified dtype: u8 (0 to 255)",
        qd.QdTypeError,
    ),
    (
        i32_literal_out_of_range,
        "qd.i32(2**40 + 1)",
        "2**40 + 1",
        f"Integer literal {2**40 + 1} exceeded the range of specified dtype: i32",
        qd.QdTypeError,
    ),
    (
        loop_bound_beyond_i32,
        "range(1, 2**40)",
        "2**40",
        f"Integer literal {2**40} exceeded the range of specified dtype: i32",
        qd.QdTypeError,
    ),
]


def source_line(fn: object, snippet: str) -> int:
    """The 1-based line of this file holding `snippet`, searching `fn`'s body (after its `def`
    line)."""
    start = fn.__code__.co_firstlineno  # type: ignore[attr-defined]
    while not LINES[start - 1].lstrip().startswith("def "):
        start += 1
    for lineno in range(start + 1, len(LINES) + 1):
        if snippet in LINES[lineno - 1]:
            return lineno
    raise AssertionError(f"{snippet!r} not found after line {start}")


def visible_frames(tb: TracebackType | None) -> list[str]:
    """The traceback's frames as IPython and pytest show them (frames with `__tracebackhide__` left
    out)."""
    out = []
    while tb is not None:
        if not tb.tb_frame.f_locals.get("__tracebackhide__"):
            out.append(tb.tb_frame.f_code.co_filename)
        tb = tb.tb_next
    return out


def all_frames(tb: TracebackType | None) -> list[str]:
    out = []
    while tb is not None:
        out.append(tb.tb_frame.f_code.co_filename)
        tb = tb.tb_next
    return out


def assert_user_facing(exc: BaseException, caller: str | Path = THIS) -> None:
    """No path inside qdlab in the message, no qdlab frame in the traceback (hidden or not), and the
    innermost visible frame is the caller's file."""
    text = str(exc)
    assert QDLAB_DIR not in text and "qdlab/compiler" not in text, text
    frames = visible_frames(exc.__traceback__)
    assert frames and Path(frames[-1]).resolve() == Path(caller).resolve(), frames
    assert not any(f.startswith(QDLAB_DIR) for f in all_frames(exc.__traceback__)), all_frames(
        exc.__traceback__
    )
    assert exc.__cause__ is None and (exc.__context__ is None or exc.__suppress_context__)
    formatted = "".join(traceback.format_exception_only(type(exc), exc))
    assert "qdlab/compiler" not in formatted


def assert_points_at(exc: qd.QdError, fn: object, name: str, snippet: str, caret_at: str) -> None:
    lineno = source_line(fn, snippet)
    line = LINES[lineno - 1]
    col = line.index(caret_at, line.index(snippet) if caret_at in snippet else 0)
    assert exc.loc is not None
    assert (exc.loc.kernel, exc.loc.lineno, exc.loc.col) == (name, lineno, col)
    text = str(exc).splitlines()
    assert text[0] == f"{name} ({THIS.name}, line {lineno}, col {col + 1}):"
    last = max(k for k, shown in enumerate(text) if shown.startswith('File "'))
    frame, shown, caret, *cause = text[last:]
    assert frame == f'File "{THIS}", line {lineno}, in {name}:'
    assert shown == line.rstrip()  # as written, as in a Python traceback
    assert caret.index("^") == col and set(caret.strip()) == {"^"}  # carets under the expression
    assert shown[col:].startswith(caret_at)
    assert len(cause) == 1 and cause[0] == exc.message


@pytest.mark.parametrize(
    "kernel, snippet, caret_at, message, cls", CASES, ids=[c[0].name for c in CASES]
)
def test_compile_error_points_at_the_line(
    kernel: qd.Kernel, snippet: str, caret_at: str, message: str, cls: type
) -> None:
    args = [
        np.zeros((4, 4), np.float32)
        if getattr(a, "ndim", 1) == 2
        else np.zeros(4, np.float32)
        if hasattr(a, "ndim")
        else 1.0
        for a in kernel.annotations
    ]
    with pytest.raises(qd.QdError) as info:
        kernel(*args)
    exc = info.value
    assert type(exc) is cls
    assert message in exc.message
    assert "internal error" not in exc.message
    assert_points_at(exc, kernel.fn, kernel.name, snippet, caret_at)
    assert_user_facing(exc)


def test_return_in_loop_of_func_points_at_the_func() -> None:
    with pytest.raises(qd.QdSyntaxError) as info:
        calls_func_returning_in_loop(np.zeros(4, np.float32))
    exc = info.value
    assert "Return inside non-static if/for is not supported in a @qd.func" in exc.message
    assert "assign to a local and return it at the end" in exc.message
    assert_points_at(exc, returns_in_loop.fn, "returns_in_loop", "return x", "return")
    assert_user_facing(exc)


def test_break_message_says_what_to_do_instead() -> None:
    with pytest.raises(qd.QdSyntaxError) as info:
        breaks_parallel_loop(np.zeros(4, np.float32))
    assert "qd.loop_config(serialize=True)" in info.value.message
    assert "while" in info.value.message


@qd.kernel
def breaks_inner_and_serial_loops(a: F32, out: I32):
    for i in range(a.shape[0]):
        j = 0
        while True:
            j += 1
            if j >= i:
                break
        out[i] = j
    qd.loop_config(serialize=True)
    for i in range(a.shape[0]):
        if i == 2:
            break
        out[i] += 10


def test_break_is_fine_in_inner_and_serialized_loops() -> None:
    out = np.zeros(5, np.int32)
    breaks_inner_and_serial_loops(np.zeros(5, np.float32), out)
    assert out.tolist() == [11, 11, 2, 3, 4]


# -- errors at the call ----------------------------------------------------------------------------


@qd.kernel
def fill(a: F32, s: qd.f32):
    for i in range(a.shape[0]):
        a[i] = s


def _call_error(call: object, cls: type) -> BaseException:
    with pytest.raises(cls) as info:
        call()  # type: ignore[operator]
    assert_user_facing(info.value)
    return info.value


def no_annotation(a, s: qd.f32):
    pass


def str_annotation(a: F32, s: str):
    pass


def unknown_annotation(a: F32, s: NoSuchType):
    pass


def tuple_return(a: F32) -> tuple[qd.f32, str]:
    pass


@pytest.mark.parametrize(
    "fn, cls, snippet, caret_at, message",
    [
        (
            no_annotation,
            QdAnnotationError,  # a QdTypeError and Quadrants' QuadrantsSyntaxError
            "def no_annotation(a, s",
            "a, s",
            "parameter `a` needs a type annotation",
        ),
        (
            str_annotation,
            qd.QdTypeError,
            "def str_annotation",
            "str)",
            "parameter `s` has an unsupported annotation",
        ),
        (
            unknown_annotation,
            qd.QdSyntaxError,  # Quadrants' QuadrantsSyntaxError, in its words
            "def unknown_annotation",
            "NoSuchType",
            "Invalid type annotation in `unknown_annotation`: name 'NoSuchType' is not defined",
        ),
        (
            tuple_return,
            qd.QdTypeError,
            "def tuple_return",
            "tuple[",
            "unsupported return annotation",
        ),
    ],
    ids=["missing", "unsupported", "unevaluable", "return"],
)
def test_annotation_errors_point_at_the_annotation(
    fn: object, cls: type, snippet: str, caret_at: str, message: str
) -> None:
    exc = _call_error(lambda: qd.kernel(fn), cls)
    assert type(exc) is cls
    assert exc.message.startswith(  # type: ignore[attr-defined]
        message if message.startswith("Invalid") else f"kernel `{fn.__name__}`: {message}"
    )
    lineno = fn.__code__.co_firstlineno  # type: ignore[attr-defined]
    line = LINES[lineno - 1]
    assert snippet in line
    col = line.index(caret_at)
    assert exc.loc is not None and (exc.loc.lineno, exc.loc.col) == (lineno, col)  # type: ignore[attr-defined]
    head, frame, shown, caret, cause = str(exc).splitlines()
    assert head == f"{fn.__name__} ({THIS.name}, line {lineno}, col {col + 1}):"  # type: ignore[attr-defined]
    assert frame == f'File "{THIS}", line {lineno}, in {fn.__name__}:'  # type: ignore[attr-defined]
    assert shown[caret.index("^") :].startswith(caret_at) and cause == exc.message  # type: ignore[attr-defined]


def test_definition_errors_pass_through_one_call() -> None:
    """`@qd.kernel` with options, an annotation error: no qdlab frame in the traceback as Python
    prints it."""
    with pytest.raises(qd.QdTypeError) as info:
        qd.kernel(fastcache=True)(str_annotation)
    assert_user_facing(info.value)
    printed = "".join(traceback.format_exception(info.value))
    assert QDLAB_DIR not in printed and printed.count('  File "') == 2, printed


@pytest.mark.parametrize(
    "args", [(), (np.zeros(4, np.float32),), (np.zeros(4, np.float32), 1.0, 2.0)]
)
def test_wrong_argument_count(args: tuple) -> None:
    """A TypeError, as in Python, and Quadrants' QuadrantsSyntaxError, in its words."""
    exc = _call_error(lambda: fill(*args), TypeError)
    assert isinstance(exc, qd.QuadrantsSyntaxError)
    why = {0: "Missing argument 'a'", 1: "Missing argument 's'", 3: "Too many arguments"}
    assert f"kernel `fill` takes 2 argument(s) (a, s), got {len(args)}: {why[len(args)]}." in str(
        exc
    )


def test_wrong_dtype() -> None:
    exc = _call_error(lambda: fill(np.zeros(4, np.float64), 1.0), ValueError)
    assert (
        "kernel `fill`: Invalid value for argument a - required array has dtype=f32, array with "
        "dtype=f64 is provided" in str(exc)
    )


def test_wrong_ndim() -> None:
    exc = _call_error(lambda: fill(np.zeros((4, 2), np.float32), 1.0), ValueError)
    assert (
        "Invalid value for argument a - required array has ndim=1, array with 2 dimensions is "
        "provided" in str(exc)
    )


def test_non_contiguous_array() -> None:
    exc = _call_error(lambda: fill(np.zeros(8, np.float32)[::2], 1.0), ValueError)
    assert "Non contiguous numpy arrays are not supported" in str(exc)
    assert "argument `a` is not C-contiguous; pass np.ascontiguousarray(a)" in str(exc)


def test_scalar_where_an_array_is_expected() -> None:
    exc = _call_error(lambda: fill(1.0, 1.0), TypeError)
    assert isinstance(exc, qd.QuadrantsRuntimeTypeError)
    assert (
        "kernel `fill`: Invalid type for argument a, got 1.0: argument `a` must be a qd.ndarray "
        "or a NumPy array, not float." in str(exc)
    )


def test_array_where_a_scalar_is_expected() -> None:
    exc = _call_error(lambda: fill(np.zeros(4, np.float32), np.zeros(2)), TypeError)
    assert isinstance(exc, qd.QuadrantsRuntimeTypeError)
    assert (
        "kernel `fill`: Argument (1,) (type=<class 'numpy.ndarray'>) cannot be converted into "
        "required type f32: argument `s` must be a number (f32), not ndarray." in str(exc)
    )


def test_call_errors_leave_the_kernel_usable() -> None:
    a = np.zeros(4, np.float32)
    _call_error(lambda: fill(a[::-1], 1.0), ValueError)
    fill(a, 3.0)
    assert a.tolist() == [3.0] * 4


# -- debug mode: bounds checks, assert; division by zero -------------------------------------------


@qd.kernel
def writes_past_end(a: F32, n: qd.i32):
    for i in range(n):
        a[i] = 1.0


@qd.kernel
def reads_past_end(a: F32, b: F32):
    for i in range(a.shape[0]):
        a[i] = b[i + 1000000]


@qd.kernel
def negative_index_2d(b: F32_2D):
    for i in range(b.shape[0]):
        b[i, i - 3] = 1.0


@pytest.mark.parametrize(
    "call, name, array, snippet, caret_at, index",
    [
        (
            lambda: writes_past_end(np.zeros(4, np.float32), 10),
            "writes_past_end",
            "a",
            "a[i] = 1.0",
            "a[i]",
            4,
        ),
        (
            lambda: reads_past_end(np.zeros(4, np.float32), np.zeros(4, np.float32)),
            "reads_past_end",
            "b",
            "b[i + 1000000]",
            "b[i + 1000000]",
            1000000,
        ),
        (
            lambda: negative_index_2d(np.zeros((4, 4), np.float32)),
            "negative_index_2d",
            "b",
            "b[i, i - 3] = 1.0",
            "b[i, i - 3]",
            -3,
        ),
    ],
    ids=["write", "read", "negative-2d"],
)
def test_debug_bounds_check(
    call: object, name: str, array: str, snippet: str, caret_at: str, index: int
) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, debug=True)
    exc = _call_error(call, qd.QdRuntimeError)
    assert f"in kernel `{name}`" in exc.message  # type: ignore[attr-defined]
    assert f"for `{array}`" in exc.message  # type: ignore[attr-defined]
    assert f"index {index} is out of range" in exc.message  # type: ignore[attr-defined]
    kernel = {
        "writes_past_end": writes_past_end,
        "reads_past_end": reads_past_end,
        "negative_index_2d": negative_index_2d,
    }[name]
    assert_points_at(exc, kernel.fn, name, snippet, caret_at)  # type: ignore[arg-type]
    a = np.zeros(4, np.float32)
    writes_past_end(a, 4)  # the process and the kernel are fine afterwards
    assert a.tolist() == [1.0] * 4


@qd.kernel
def checks_positive(a: F32):
    for i in range(a.shape[0]):
        assert a[i] > 0.0, "a must be positive"


def test_assert_in_debug_mode() -> None:
    qd.init(arch=qd.cpu, offline_cache=False, debug=True)
    checks_positive(np.ones(4, np.float32))
    exc = _call_error(
        lambda: checks_positive(np.array([1, 2, -1, 3], np.float32)), qd.QdRuntimeError
    )
    assert "assertion failed in kernel `checks_positive`: a must be positive" in exc.message  # type: ignore
    assert_points_at(exc, checks_positive.fn, "checks_positive", "assert a[i]", "assert")  # type: ignore[arg-type]


def test_assert_is_ignored_without_debug() -> None:
    checks_positive(np.array([-1, -2], np.float32))


@qd.kernel
def divides(a: I32, d: qd.i32, q: I32, r: I32):
    for i in range(a.shape[0]):
        q[i] = a[i] // d
        r[i] = a[i] % d


@pytest.mark.parametrize("debug", [False, True])
def test_integer_division_by_zero_gives_zero(debug: bool) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, debug=debug)
    a = np.array([7, -7, 0, 2**31 - 1], np.int32)
    q, r = np.full(4, 9, np.int32), np.full(4, 9, np.int32)
    divides(a, 0, q, r)
    assert q.tolist() == [0] * 4 and r.tolist() == [0] * 4
    divides(a, 2, q, r)
    assert q.tolist() == [3, -4, 0, 2**30 - 1] and r.tolist() == [1, 1, 0, 1]


# -- QDLAB_DEBUG_FRONTEND --------------------------------------------------------------------------


@qd.kernel
def has_pass(a: F32):
    pass


def _broken_visit_pass(self: Frontend, node: object) -> None:
    raise ZeroDivisionError("broken on purpose")


def test_internal_error_points_at_the_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("QDLAB_DEBUG_FRONTEND", raising=False)
    monkeypatch.setattr(Frontend, "visit_Pass", _broken_visit_pass)
    with pytest.raises(qd.QdError) as info:
        has_pass(np.zeros(4, np.float32))
    assert (
        info.value.message
        == "internal error while compiling this line (ZeroDivisionError: broken on purpose)"
    )
    assert_points_at(info.value, has_pass.fn, "has_pass", "    pass", "pass")
    assert_user_facing(info.value)


def test_debug_frontend_reraises_the_raw_exception(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QDLAB_DEBUG_FRONTEND", "1")
    monkeypatch.setattr(Frontend, "visit_Pass", _broken_visit_pass)
    with pytest.raises(ZeroDivisionError, match="broken on purpose") as info:
        has_pass(np.zeros(4, np.float32))
    frames = [tb.filename for tb in traceback.extract_tb(info.value.__traceback__)]
    assert any(f.endswith(os.path.join("frontend", "visitor.py")) for f in frames)


def test_debug_frontend_keeps_qdlab_frames_of_user_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QDLAB_DEBUG_FRONTEND", "1")
    with pytest.raises(qd.QdSyntaxError) as info:
        uses_try(np.zeros(4, np.float32))
    assert any(f.startswith(QDLAB_DIR) for f in visible_frames(info.value.__traceback__))


@qd.kernel
def only_docstring(a: F32):
    """A body without code still has its source read whole."""


@qd.kernel
def only_global_marker(a: F32):
    global SOMETHING_ELSE


def test_body_without_code() -> None:
    only_docstring(np.zeros(4, np.float32))
    with pytest.raises(qd.QdSyntaxError) as info:
        only_global_marker(np.zeros(4, np.float32))
    assert_points_at(
        info.value, only_global_marker.fn, "only_global_marker", "global SOMETHING_ELSE", "global"
    )


@qd.kernel
def takes_template(a: F32, n: qd.template()):
    a[0] = n


def test_other_entry_points_show_no_qdlab_frame() -> None:
    """Calling a @qd.func from Python, `.grad` of a gradient kernel, compiling a template kernel
    ahead."""
    exc = _call_error(lambda: returns_in_loop(1.0), RuntimeError)
    assert "can only be called from a kernel" in str(exc)
    exc = _call_error(lambda: fill.grad.grad, qd.QdError)
    assert "is already a gradient kernel" in str(exc)
    exc = _call_error(lambda: takes_template.compile(), qd.QdTypeError)
    assert "template parameter `n` needs a value" in str(exc)
    exc = _call_error(lambda: uses_try.compile(), qd.QdSyntaxError)
    assert_points_at(exc, uses_try.fn, "uses_try", "try:", "try")  # type: ignore[arg-type]
    printed = "".join(traceback.format_exception(exc))
    assert QDLAB_DIR not in printed, printed


def test_a_transposed_array_runs_on_a_copy_written_back() -> None:
    """As in Quadrants: a Fortran-ordered array (`a.T`) is copied in C order for the launch and
    the copy written back, so the kernel sees and changes the transposed view."""

    @qd.kernel
    def bump(arr: qd.types.ndarray()) -> qd.i32:
        arr[0, 1] += 100
        return arr[1, 0]

    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    for _ in range(2):  # the first call, then a launch the cache knows
        assert bump(a.T) == 1
    np.testing.assert_array_equal(a, [[0, 1, 2], [203, 4, 5]])
    ro = np.arange(6, dtype=np.int32).reshape(2, 3).T
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only array"):
        bump(ro)
