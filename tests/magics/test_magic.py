"""`%%qdkernel` in a real IPython shell: compile, edit one loop, recompile only it; options;
errors."""

from __future__ import annotations

import numpy as np
import pytest
from magic_cells import edited, run, six_loops

import qdlab as qd
from qdlab import viz
from qdlab.host.kernel import Kernel


def rows(text: str) -> list[list[str]]:
    """The construct rows of a text summary (index, lines, kind, status...)."""
    return [line.split() for line in text.splitlines() if line.strip()[:1].isdigit()]


def test_edit_one_loop_recompiles_only_that_loop(shell):
    cell = "%%qdkernel\n" + six_loops()
    result, cap = run(shell, cell)
    assert result.success, cap.stdout
    assert shell.user_ns["six"].latest.report.compiled == 6

    result, cap = run(shell, edited(cell))
    assert result.success, cap.stdout
    six = shell.user_ns["six"]
    report = six.latest.report
    assert (report.compiled, report.reused) == (1, 5)
    obs = six._primal.per_offload_cache_observations
    assert (
        obs.frontend_constructs_total,
        obs.frontend_constructs_recompiled,
        obs.frontend_constructs_cache_hit,
    ) == (6, 1, 5)

    [out] = cap.outputs
    assert set(out.data) == {"text/plain", "text/html"}
    text = out.data["text/plain"]
    assert text.startswith("six: per_offload, 6 constructs: 1 compiled, 5 reused;")
    assert "ms saved" in text
    table = rows(text)
    assert [r[1] for r in table] == ["5-6", "7-8", "9-10", "11-12", "13-14", "15-16"]  # cell lines
    assert [r[3] for r in table] == ["reused"] * 3 + ["compiled"] + ["reused"] * 2
    assert "its IR changed" in text.splitlines()[5]
    html = out.data["text/html"]
    assert "<table>" in html and "1 compiled, 5 reused" in html and html.count("<tr>") == 7
    assert "its IR changed" in html


def test_cell_without_import_gets_qd_and_cell_with_import_keeps_its_own(shell):
    shell.user_ns["qd"] = "something else"
    result, cap = run(shell, "%%qdkernel\n" + six_loops())
    assert result.success, cap.stdout
    assert shell.user_ns["qd"] is qd
    result, cap = run(shell, "%%qdkernel\nimport qdlab as qd\n" + six_loops("other"))
    assert result.success and isinstance(shell.user_ns["other"], Kernel)


def test_kernels_run_after_the_cell(shell):
    run(shell, "%%qdkernel\n" + six_loops())
    six = shell.user_ns["six"]
    compiled = six.latest
    x, y = np.zeros(4, np.float32), np.zeros(4, np.float32)
    six(x, y)
    assert six.latest is compiled  # the call reuses the cell's compile
    assert np.all(x != 0) and np.all(y != 0)


def test_opt_changes_keys_and_holds_for_later_calls(shell):
    cell = six_loops()
    run(shell, "%%qdkernel\n" + cell)
    keys = [c.cache_key for c in shell.user_ns["six"].latest.report.constructs]
    result, cap = run(shell, "%%qdkernel --opt 1\n" + cell)
    assert result.success, cap.stdout
    six = shell.user_ns["six"]
    assert six.options == {"opt_level": 1} and six.config().opt_level == 1
    assert qd.host.state.config().opt_level == 3  # other kernels keep the active config
    report = six.latest.report
    assert report.compiled == 6 and not set(keys) & {c.cache_key for c in report.constructs}
    assert "[opt_level=1]" in cap.outputs[0].data["text/plain"]
    compiled = six.latest
    six(np.zeros(3, np.float32), np.zeros(3, np.float32))
    assert six.latest is compiled


def test_display_options_do_not_change_keys(shell):
    cell = six_loops()
    run(shell, "%%qdkernel\n" + cell)
    keys = [c.cache_key for c in shell.user_ns["six"].latest.report.constructs]
    result, cap = run(shell, "%%qdkernel --show none\n" + cell)
    assert result.success and cap.outputs == [] and cap.stdout == ""
    report = shell.user_ns["six"].latest.report
    assert [c.cache_key for c in report.constructs] == keys and report.reused == 6


def test_whole_kernel(shell):
    result, cap = run(shell, "%%qdkernel --whole-kernel\n" + six_loops())
    assert result.success, cap.stdout
    six = shell.user_ns["six"]
    assert six.latest.report.mode == "whole_kernel"
    assert six.per_offload_cache_observations.frontend_constructs_total == -1
    assert (
        cap.outputs[0]
        .data["text/plain"]
        .startswith("six: whole_kernel [per_offload=False], compiled whole")
    )


def test_debug_adds_bounds_checks(shell):
    cell = """
import numpy as np
x = np.zeros(3, np.float32)
@qd.kernel
def over(x: qd.types.NDArray[qd.f32, 1]):
    for i in range(x.shape[0] + 1):
        x[i] = 1.0
"""
    result, cap = run(shell, '%%qdkernel --debug --run "over(x)"\n' + cell)
    assert isinstance(result.error_in_exec, qd.QdRuntimeError)
    assert "over (cell line 8, col 9)" in cap.stdout and "out of range" in cap.stdout
    assert shell.user_ns["over"].config().debug


def test_no_cache_keeps_the_disk_cache_untouched(shell):
    before = qd.cache_stats().entries
    result, cap = run(shell, "%%qdkernel --no-cache\n" + six_loops())
    assert result.success, cap.stdout
    assert shell.user_ns["six"].latest.report.compiled == 6
    assert qd.cache_stats().entries == before
    run(shell, "%%qdkernel\n" + six_loops("cached"))
    assert qd.cache_stats().entries >= before + 6


def test_no_cache_recompiles_constructs_already_loaded(shell):
    cell = six_loops()
    run(shell, "%%qdkernel\n" + cell)
    result, cap = run(shell, "%%qdkernel\n" + cell)
    assert shell.user_ns["six"].latest.report.reused == 6
    result, cap = run(shell, "%%qdkernel --no-cache\n" + cell)
    assert result.success, cap.stdout
    assert shell.user_ns["six"].latest.report.compiled == 6
    assert (
        shell.user_ns["six"]._primal.per_offload_cache_observations.frontend_constructs_recompiled
        == 6
    )


def test_arch_cuda_without_a_device_is_one_short_error(shell):
    result, cap = run(shell, "%%qdkernel --arch cuda\n" + six_loops())
    assert isinstance(result.error_in_exec, qd.QdError)
    assert cap.stdout.strip().startswith("QdError: qd.cuda/qd.gpu: no CUDA device")
    assert "Traceback" not in cap.stdout and "qdlab/" not in cap.stdout
    result, cap = run(shell, "%%qdkernel --arch cpu\n" + six_loops())
    assert result.success


def test_run_shows_time_and_returns_value(shell):
    cell = """
@qd.kernel
def total(x: qd.types.NDArray[qd.f32, 1]) -> qd.f32:
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i]
    return s
"""
    shell.user_ns["x"] = np.arange(5, dtype=np.float32)
    result, cap = run(shell, '%%qdkernel --run "total(x)"\n' + cell)
    assert result.success, cap.stdout
    assert result.result == pytest.approx(10.0)
    summary, timing = cap.outputs
    # `s` is carried from the loop to `return s` through the interface buffer, so the kernel splits
    assert summary.data["text/plain"].startswith("total: per_offload, 2 constructs")
    assert "per_offload" in summary.data["text/html"]
    assert timing.data["text/plain"].startswith("ran total(x) in ")
    assert timing.data["text/plain"].endswith(" ms") and "text/html" in timing.data


def test_run_with_bad_arguments_is_one_short_error(shell):
    result, cap = run(shell, '%%qdkernel --run "six(1, 2)"\n' + six_loops())
    assert isinstance(result.error_in_exec, qd.QdTypeError)
    assert cap.stdout.strip().splitlines() == [
        (
            "QdArgumentTypeError: kernel `six`: Invalid type for argument x, got 1: argument `x` "
            "must be a qd.ndarray or a NumPy array, not int."
        )
    ]


def test_help_and_bad_options(shell):
    _, cap = run(shell, "%qdkernel --help")
    for option in ("--arch", "--opt", "--whole-kernel", "--no-cache", "--debug", "--show", "--run"):
        assert option in cap.stdout
    result, cap = run(shell, "%%qdkernel --opt 7\n" + six_loops())
    assert result.error_in_exec is not None and "UsageError" in cap.stderr + cap.stdout


@pytest.mark.process
@pytest.mark.skipif(
    not hasattr(viz, "construct_graph"), reason="qdlab.viz has no construct_graph yet"
)
def test_show_graph_adds_the_construct_graph(shell):
    result, cap = run(shell, "%%qdkernel --show graph\n" + six_loops())
    assert result.success, cap.stdout
    summary, graph = cap.outputs
    assert "text/html" in summary.data and "text/plain" in graph.data and len(graph.data) >= 2


@pytest.mark.process
@pytest.mark.skipif(
    not hasattr(viz, "SplitVisualizer"), reason="qdlab.viz has no SplitVisualizer yet"
)
def test_show_widget_adds_the_visualizer(shell):
    result, cap = run(shell, "%%qdkernel --show widget\n" + six_loops())
    assert result.success, cap.stdout
    summary, widget = cap.outputs
    assert summary.data["text/plain"].startswith("six: per_offload")
    assert "text/plain" in widget.data and "application/vnd.jupyter.widget-view+json" in widget.data


def test_kernel_without_dtype_compiles_at_first_call_and_updates_the_summary(shell):
    cell = """
@qd.kernel
def fill(x: qd.types.NDArray):
    for i in range(x.shape[0]):
        x[i] = 3.0
"""
    result, cap = run(shell, "%%qdkernel\n" + cell)
    assert result.success
    [out] = cap.outputs
    assert (
        out.data["text/plain"]
        == "fill: compiles at its first call (parameter `x` has no dtype or ndim)"
    )
    display_id = out.transient["display_id"]
    shell.user_ns["x"] = np.zeros(2, np.float64)
    result, cap = run(shell, "fill(x)")
    assert result.success
    [update] = cap.outputs
    assert update.update and update.transient["display_id"] == display_id
    assert update.data["text/plain"].startswith("fill: per_offload, 1 construct: 1 compiled")
    shell.user_ns["y"] = np.zeros(2, np.float32)
    result, cap = run(shell, "fill(y)")
    assert result.success and len(shell.user_ns["fill"].variants) == 2
    assert cap.outputs == []  # only the first compile updates it


def test_a_cell_with_a_data_oriented_class_and_a_dataclass_kernel(shell):
    cell = """
import dataclasses
import numpy as np

@dataclasses.dataclass(frozen=True)
class Pair:
    a: qd.types.NDArray[qd.f32, 1]
    b: qd.types.NDArray[qd.f32, 1]

@qd.kernel
def add_pair(p: Pair):
    for i in range(p.a.shape[0]):
        p.b[i] += p.a[i] * 3.0

@qd.data_oriented
class Cells:
    def __init__(self):
        self.x = qd.ndarray(qd.f32, 4)

    @qd.kernel
    def bump(self):
        for i in range(4):
            self.x[i] += 7.0

pair = Pair(np.ones(4, np.float32), np.zeros(4, np.float32))
cells = Cells()
"""
    result, cap = run(shell, '%%qdkernel --run "(add_pair(pair), cells.bump())"\n' + cell)
    assert result.success, cap.stdout
    text = cap.outputs[0].data["text/plain"]
    assert "add_pair: compiles at its first call (struct parameter `p` needs a value)" in text
    assert "bump: compiles at its first call (template parameter `self` needs a value)" in text
    np.testing.assert_array_equal(shell.user_ns["pair"].b, [3.0] * 4)
    np.testing.assert_array_equal(shell.user_ns["cells"].x.to_numpy(), [7.0] * 4)
    assert shell.user_ns["Cells"].bump.latest.report.mode == "per_offload"
