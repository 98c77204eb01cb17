"""Integer overflow under `qd.init(debug=True)`: an integer `+ - * <<` the user wrote reports a
result that wraps, as Quadrants' debug runtime prints it ("Addition overflow detected in File ...,
line N, in kernel:", the line, carets under the expression, a blank line), once per wrapping
evaluation, and the kernel carries on with the wrapped value (`x += 1` is an update, unchecked, as
in Quadrants). Without debug nothing is checked, and the ops the compiler makes itself (random
numbers, indices) never report. The expected texts
and values were recorded from Quadrants 1.3.3 on the same kernels."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import qdlab as qd


@pytest.fixture(autouse=True)
def _debug():
    qd.init(arch=qd.cpu, debug=True)
    yield
    qd.init(arch=qd.cpu)


@pytest.mark.parametrize(
    "ty,x,y,op,word,want",
    [
        (qd.i32, 2**30, 2**30, "+", "Addition", -(2**31)),
        (qd.u8, 1, 2, "-", "Subtraction", 255),
        (qd.i8, 17, 9, "*", "Multiplication", -103),
        (qd.u64, 2**32, 2**32, "*", "Multiplication", 0),
        (qd.i32, 2, 30, "<<", "Shift left", -(2**31)),
        (qd.u32, 2, 31, "<<", "Shift left", 0),
        (qd.i16, -(2**14), 2**14 + 1, "-", "Subtraction", 2**15 - 1),
    ],
)
def test_each_op_reports_at_its_line_and_keeps_the_wrapped_value(
    capfd, tmp_path, ty, x, y, op, word, want
) -> None:
    kernel, path = kernel_of(tmp_path, ty, f"    return a {op} y")
    capfd.readouterr()
    assert kernel(x, y) == want
    assert capfd.readouterr().out == (
        f'{word} overflow detected in File "{path}", line 7, in f:\n'
        f"    return a {op} y\n           {'^' * (4 + len(op))}\n\n"
    )


@pytest.mark.parametrize(
    "ty,x,y,op",
    [
        (qd.i32, 2**30, 2**30 - 1, "+"),
        (qd.u8, 2, 2, "-"),
        (qd.i64, 2**32, 2**30, "*"),
        (qd.i32, 2, 29, "<<"),
        (qd.i32, -1, 30, "<<"),
    ],
)
def test_values_that_fit_report_nothing(capfd, tmp_path, ty, x, y, op) -> None:
    kernel, _ = kernel_of(tmp_path, ty, f"    return a {op} y")
    capfd.readouterr()
    kernel(x, y)
    assert "overflow" not in capfd.readouterr().out


def kernel_of(folder, ty: object, line: str) -> tuple[object, str]:
    """`f(x: ty, y: ty) -> ty` whose body is `a = x` then `line`, from a file in `folder`."""
    path = folder / "case.py"
    path.write_text(
        f"import qdlab as qd\n\n\n@qd.kernel\ndef f(x: TY, y: TY) -> TY:\n    a = x\n{line}\n"
    )
    spec = importlib.util.spec_from_file_location(f"case{id(path)}", path)
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    mod.TY = ty  # type: ignore[attr-defined]
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod.f, str(path)


@qd.kernel
def scale(x: qd.types.NDArray[qd.i32, 1]):
    for i in range(x.shape[0]):
        x[i] = x[i] * 1000000


@qd.kernel
def counted(n: qd.i32) -> qd.i32:
    total = 2**31 - 3
    for _ in range(n):
        total += 1
    return total


def test_a_loop_reports_each_wrapping_element_but_not_augmented_assignments(capfd) -> None:
    a = np.array([1, 5000, 7000], np.int32)
    capfd.readouterr()
    scale(a)
    assert a.tolist() == [1000000, 705032704, -1589934592]
    assert capfd.readouterr().out.count("Multiplication overflow detected in File") == 2
    assert counted(5) == -(2**31) + 2  # `+=` is an update, which Quadrants does not check
    assert "overflow" not in capfd.readouterr().out


def test_without_debug_nothing_is_checked_and_compiler_ops_never_report(capfd) -> None:
    qd.init(arch=qd.cpu)
    a = np.array([7000], np.int32)
    capfd.readouterr()
    scale(a)
    assert a[0] == -1589934592 and "overflow" not in capfd.readouterr().out

    qd.init(arch=qd.cpu, debug=True)

    @qd.kernel
    def draws(x: qd.types.NDArray[qd.f32, 2]):
        for i, j in x:
            x[i, j] = qd.random()

    x = np.zeros((64, 3), np.float32)
    capfd.readouterr()
    draws(x)
    assert "overflow" not in capfd.readouterr().out


@qd.kernel
def shared(a: qd.i32, x: qd.types.NDArray[qd.i32, 1], y: qd.types.NDArray[qd.i32, 1]):
    c = a * 1000000
    for i in range(4):
        x[i] = c + i
    for i in range(4):
        y[i] = c - i


def test_a_checked_value_two_constructs_read_reports_once(capfd) -> None:
    """A report is an effect: a split kernel hands the value over instead of recomputing it (which
    would report it once per construct)."""
    x, y = np.zeros(4, np.int32), np.zeros(4, np.int32)
    capfd.readouterr()
    shared(5000, x, y)
    assert capfd.readouterr().out.count("Multiplication overflow detected") == 1
    assert x.tolist() == [705032704 + i for i in range(4)]
    assert y.tolist() == [705032704 - i for i in range(4)]
