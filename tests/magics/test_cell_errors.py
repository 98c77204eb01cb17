"""Errors in a `%%qdkernel` cell: one short message at the cell line, and the previous kernel stays
usable."""

from __future__ import annotations

import numpy as np
from magic_cells import run, six_loops

import qdlab as qd


def assert_short(text: str) -> None:
    assert "Traceback" not in text and "qdlab/" not in text and "site-packages" not in text


def test_unsupported_syntax_points_at_the_cell_line(shell):
    cell = """
@qd.kernel
def spin(x: qd.types.NDArray[qd.f32, 1]):
    n = 0
    while n < 3:
        n += 1
    else:
        x[0] = 1.0
"""
    result, cap = run(shell, "%%qdkernel\n" + cell)
    assert isinstance(result.error_in_exec, qd.QdSyntaxError)
    lines = cap.stdout.strip().splitlines()
    assert lines[0] == "QdSyntaxError: spin (cell line 6, col 5):"
    assert lines[1] == "Cell line 6, in spin:"
    assert lines[2] == "    while n < 3:" and lines[3] == "    ^^^^^^^^^^^^"
    assert "`while` with `else`" in lines[4]
    assert_short(cap.stdout)


def test_type_error_in_the_kernel_body(shell):
    cell = """
@qd.kernel
def bad(x: qd.types.NDArray[qd.f32, 1]):
    for i in range(x.shape[0]):
        x[i] = undefined_name
"""
    result, cap = run(shell, "%%qdkernel\n" + cell)
    assert isinstance(result.error_in_exec, qd.QuadrantsNameError)
    assert cap.stdout.startswith(
        "QdNameError: bad (cell line 6, col 16):\nCell line 6, in bad:\n"
        "        x[i] = undefined_name\n               ^^^^^^^^^^^^^^\n"
    )
    assert_short(cap.stdout)


def test_bad_annotation_is_short_too(shell):
    result, cap = run(shell, "%%qdkernel\n@qd.kernel\ndef k(x: str):\n    pass\n")
    assert isinstance(result.error_in_exec, qd.QdTypeError)
    assert cap.stdout.startswith(
        "QdTypeError: k (cell line 3, col 10):\nCell line 3, in k:\ndef k(x: str):\n         ^^^\n"
        "kernel `k`: parameter `x` has an unsupported annotation"
    )
    assert_short(cap.stdout)


def test_failed_redefinition_keeps_the_previous_kernel(shell):
    good = six_loops()
    run(shell, "%%qdkernel\n" + good)
    previous = shell.user_ns["six"]
    broken = good.replace("x[i] = ", "x[i] = nowhere + ", 1)
    result, cap = run(shell, "%%qdkernel\n" + broken)
    assert result.error_in_exec is not None and "cell line 6" in cap.stdout
    assert shell.user_ns["six"] is previous
    x, y = np.zeros(2, np.float32), np.zeros(2, np.float32)
    previous(x, y)
    assert np.all(x != 0)


def test_other_kernels_of_a_failing_cell_still_compile_and_show(shell):
    broken = "\n@qd.kernel\ndef broken(x: qd.types.NDArray[qd.f32, 1]):\n    x[0] = nowhere\n"
    result, cap = run(shell, "%%qdkernel\n" + six_loops() + broken)
    assert result.error_in_exec is not None
    assert shell.user_ns["six"].latest.report.compiled == 6
    assert cap.outputs[0].data["text/plain"].startswith("six: per_offload")
    assert "broken (cell line 20, col" in cap.stdout


def test_python_error_in_the_cell_shows_only_the_users_frames(shell):
    result, cap = run(shell, "%%qdkernel\nx = 1\ny = x / 0\n")
    assert isinstance(result.error_in_exec, ZeroDivisionError)
    assert "<qdkernel-cell-" in cap.stdout and ":3" in cap.stdout
    assert "magic.py" not in cap.stdout and "qdlab/" not in cap.stdout


def test_python_error_in_run_shows_only_the_users_frames(shell):
    result, cap = run(shell, '%%qdkernel --run "1 / 0"\n' + six_loops())
    assert isinstance(result.error_in_exec, ZeroDivisionError)
    assert "magic.py" not in cap.stdout and "qdlab/" not in cap.stdout


def test_syntax_error_in_the_cell(shell):
    result, cap = run(shell, "%%qdkernel\nx = 1\ny = (\n")
    assert isinstance(result.error_in_exec, qd.QdSyntaxError)
    assert "<qdkernel-cell-" in cap.stdout and ":3" in cap.stdout and "y = (" in cap.stdout
    assert (
        "SyntaxError" in cap.stdout and "magic.py" not in cap.stdout and "qdlab/" not in cap.stdout
    )


def test_a_failed_compile_is_named_in_the_summary(shell):
    cell = "@qd.kernel\ndef broken(x: qd.types.NDArray[qd.f32, 1]):\n    x[0] = nowhere\n"
    result, cap = run(shell, "%%qdkernel\n" + cell)
    assert isinstance(result.error_in_exec, qd.QdError)
    [summary] = cap.outputs
    assert summary.data["text/plain"] == "broken: did not compile (the error is below)"
    assert "no @qd.kernel" not in summary.data["text/html"]


def test_a_plain_calls_error_shows_no_qdlab_frame(shell):
    run(shell, "%%qdkernel --debug\n" + six_loops("checked"))
    shell.user_ns["np"] = np
    for call in ("checked(np.ones(4), np.ones(4))", "checked(np.ones(4, np.float32), 1.0)"):
        result, cap = run(shell, call)
        assert isinstance(result.error_in_exec, qd.QdError), call
        shown = cap.stdout + cap.stderr
        assert "<qdlab>" not in shown and "kernel.py" not in shown and "with_traceback" not in shown
        assert "checked" in shown
