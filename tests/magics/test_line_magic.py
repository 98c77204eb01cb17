"""`%qdlab cache|explain|config|server`, loading the extension, and the progress indicator."""

from __future__ import annotations

import io
import re
import sys

import pytest
from IPython.utils.capture import capture_output
from magic_cells import edited, run, six_loops

import qdlab as qd
from qdlab.compiler.runtime import tiers
from qdlab.host import state
from qdlab.magics import magic, progress


def test_cache_stats_and_clear(shell, tmp_path):
    run(shell, "%%qdkernel\n" + six_loops())
    tiers.settle_all()  # the optimised objects are stored when they land: count after them
    result, cap = run(shell, "%qdlab cache")
    assert result.success
    [out] = cap.outputs
    assert set(out.data) == {"text/plain", "text/html"}
    entries = qd.cache_stats().entries
    text = out.data["text/plain"]
    assert entries >= 6 and f"entries    {entries}\n" in text and str(tmp_path) in text
    result, cap = run(shell, "%qdlab cache clear")
    text = cap.outputs[0].data["text/plain"]
    assert text.startswith(f"cleared {entries} entries") and "entries    0" in text
    assert qd.cache_stats().entries == 0
    result, cap = run(shell, "%qdlab cache nonsense")
    assert result.error_in_exec is not None and "UsageError" in cap.stderr + cap.stdout


def test_explain_a_kernel(shell):
    run(shell, "%%qdkernel\n" + six_loops())
    result, cap = run(shell, "%qdlab explain six")
    assert result.success
    [out] = cap.outputs
    assert out.data["text/plain"].startswith("six: per_offload, 6 constructs: 6 compiled, 0 reused")
    assert "<table>" in out.data["text/html"]
    result, cap = run(shell, "%qdlab explain nothing_here")
    assert (
        result.error_in_exec is not None and "cannot find 'nothing_here'" in cap.stderr + cap.stdout
    )
    shell.user_ns["number"] = 3
    result, cap = run(shell, "%qdlab explain number")
    assert "is a int, not a @qd.kernel" in cap.stderr + cap.stdout


def test_explain_compiles_a_kernel_defined_outside_the_magic(shell):
    run(shell, "import qdlab as qd\n" + six_loops("plain"))
    result, cap = run(shell, "%qdlab explain plain")
    assert result.success, cap.stdout
    assert cap.outputs[0].data["text/plain"].startswith("plain: per_offload, 6 constructs")


def test_cache_counts_reuses_without_a_lookup(shell):
    """A construct already loaded in this process is reused without a cache lookup, so the hit
    count alone looked wrong after a few rounds; the view counts those reuses too."""
    cell = six_loops()
    run(shell, "%%qdkernel\n" + cell)
    for _ in range(2):
        cell = edited(cell)
        run(shell, "%%qdkernel\n" + cell)
    _, cap = run(shell, "%qdlab cache")
    text = cap.outputs[0].data["text/plain"]
    line = next(x for x in text.splitlines() if x.strip().startswith("constructs"))
    compiled, reused = map(int, re.search(r"(\d+) compiled, (\d+) reused", line).groups())
    assert compiled >= 8 and reused >= 10 and "already loaded in this process" in line
    assert "lookups that found" in text


def test_explain_diff_shows_what_the_edit_changed(shell):
    cell = six_loops("diffed")
    run(shell, "%%qdkernel\n" + cell)
    result, cap = run(shell, "%qdlab explain diffed --diff")
    assert result.success and "no previous compile" in cap.outputs[1].data["text/plain"]
    run(shell, "%%qdkernel\n" + edited(cell))
    result, cap = run(shell, "%qdlab explain diffed --diff")
    assert result.success, cap.stdout
    text = cap.outputs[1].data["text/plain"]
    titles = [x for x in text.splitlines() if x.startswith("== ")]
    assert titles == [
        "== construct 3 (edited), IR",
        "== construct 3 (edited), LLVM IR",
        "== construct 3 (edited), assembly",
    ]
    assert re.search(r"^\+.*value=", text, re.MULTILINE) and "+\t.long\t0x" in text
    assert "(no change)" not in text and "<details>" in cap.outputs[1].data["text/html"]


def test_profile_in_the_magic(shell):
    import numpy as np

    shell.user_ns["x"], shell.user_ns["y"] = np.ones(256, np.float32), np.ones(256, np.float32)
    result, cap = run(shell, '%%qdkernel --run "six(x, y)" --profile --repeat 4\n' + six_loops())
    assert result.success, cap.stdout + cap.stderr
    texts = [o.data["text/plain"] for o in cap.outputs]
    [table] = [t for t in texts if "run time per construct" in t]
    assert table.startswith("six: run time per construct over 4 launches")
    assert len(table.splitlines()) == 2 + 6 and "run ms (median)" in table
    assert len(qd.explain(shell.user_ns["six"]).run_ms[5]) == 4
    result, cap = run(shell, "%%qdkernel --profile\n" + six_loops("other"))
    assert result.error_in_exec is not None and "--run" in cap.stderr + cap.stdout


def test_config(shell, tmp_path):
    _, cap = run(shell, "%qdlab config")
    text = cap.outputs[0].data["text/plain"]
    assert text.startswith("qd.init settings") and f"'{tmp_path}'" in text and "opt_level" in text
    assert "<table>" in cap.outputs[0].data["text/html"]


def test_help(shell):
    for line in ("%qdlab", "%qdlab --help"):
        _, cap = run(shell, line)
        assert "cache" in cap.stdout and "explain" in cap.stdout and "config" in cap.stdout


def test_loading_twice_and_reloading(shell):
    qd.load_ipython_extension(shell)
    qd.load_ipython_extension(shell)
    assert state.compile_hooks.count(magic.on_compile) == 1
    result, cap = run(shell, "%load_ext qdlab")
    assert result.success
    result, cap = run(shell, "%reload_ext qdlab")
    assert result.success and state.compile_hooks.count(magic.on_compile) == 1
    qd.unload_ipython_extension(shell)
    assert magic.on_compile not in state.compile_hooks
    assert "qdkernel" not in shell.magics_manager.magics["cell"]
    qd.load_ipython_extension(shell)
    result, cap = run(shell, "%%qdkernel\n" + six_loops())
    assert result.success and cap.outputs


def test_no_progress_in_a_terminal_that_is_not_a_tty(shell, monkeypatch):
    monkeypatch.setattr(progress, "DELAY_S", 0.0)
    result, cap = run(shell, "%%qdkernel\n" + six_loops())
    assert result.success and cap.stderr == ""


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_line_on_a_tty(monkeypatch):
    tty = _Tty()
    monkeypatch.setattr(sys, "stderr", tty)
    p = progress.Progress(["a", "b"], "id", notebook=False, delay=0.0)
    p.start()
    p.step("a", "6 compiled, 0 reused")
    p.step("b", "1 compiled, 5 reused")
    assert p.finish() is False
    assert tty.getvalue().split("\r")[1:] == [
        "[qdlab 1/2] a: 6 compiled, 0 reused; compiling b\x1b[K",
        "[qdlab 2/2] b: 1 compiled, 5 reused\x1b[K\n",
    ]


def test_progress_widget_in_a_notebook_takes_the_summarys_slot():
    pytest.importorskip("ipywidgets")
    p = progress.Progress(["a", "b"], "slot", notebook=True, delay=0.0)
    with capture_output() as cap:
        p._show()  # what the timer runs once compiling has taken `delay`
        for index in (0, 2, 1, 3):  # compiled constructs report as their objects arrive
            p.construct("a", index, 6, "compiled")
    [out] = cap.outputs
    assert out.transient == {"display_id": "slot"}
    assert "application/vnd.jupyter.widget-view+json" in out.data and "text/plain" in out.data
    bar, label = p.widget.children
    assert (bar.value, bar.max) == (4, 6)
    assert label.value == "kernel 1/2 a: 4/6 constructs ready (construct 3 compiled)"
    p.step("a", "6 compiled, 0 reused")
    assert label.value == "a: 6 compiled, 0 reused; compiling b"
    assert p.finish() is True
    p.close()


def test_fast_compiles_show_no_progress():
    p = progress.Progress(["a"], "slot", notebook=True, delay=60.0)
    with capture_output() as cap:
        p.start()
        p.step("a", "1 compiled, 0 reused")
        assert p.finish() is False
    assert cap.outputs == []


@pytest.mark.process
def test_server_status_and_stop(shell, tmp_path, monkeypatch):
    """`%qdlab server` says whether this user's compile server runs (its pid and idle time-out),
    `%qdlab server stop` stops it: its socket goes and the process leaves."""
    import os
    import subprocess
    import time

    from qdlab.compiler.codegen import server

    directory = tmp_path / "srv"
    directory.mkdir(mode=0o700)
    monkeypatch.setenv("QDLAB_COMPILE_SERVER_DIR", str(directory))
    monkeypatch.setenv("QDLAB_COMPILE_SERVER_IDLE_S", "120")
    _, cap = run(shell, "%qdlab server")
    assert cap.stdout.startswith("compile server: not running")
    path = server.address()
    code = "from qdlab.compiler.codegen import server; server.main()"
    proc = subprocess.Popen([sys.executable, "-c", code, path, server.tag()], env=dict(os.environ))
    try:
        deadline = time.monotonic() + 60
        while not os.path.exists(path) and time.monotonic() < deadline:
            time.sleep(0.1)
        _, cap = run(shell, "%qdlab server")
        assert f"compile server: running, pid {proc.pid}, socket {path}" in cap.stdout
        assert "leaves after 120 s without a request (QDLAB_COMPILE_SERVER_IDLE_S)" in cap.stdout
        _, cap = run(shell, "%qdlab server stop")
        assert cap.stdout.startswith(f"compile server stopped (pid {proc.pid})"), cap.stdout
        assert "not running" in cap.stdout
        assert proc.wait(timeout=10) == 0 and not os.path.exists(path)
        _, cap = run(shell, "%qdlab server stop")
        assert "nothing to stop" in cap.stdout
        result, cap = run(shell, "%qdlab server restart")
        assert result.error_in_exec is not None and "takes `stop` or nothing" in cap.stderr
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    monkeypatch.setenv("QDLAB_COMPILE_SERVER", "0")
    _, cap = run(shell, "%qdlab server")
    assert cap.stdout.startswith("compile server: off")
