"""The exercise checkers of `qdlab.teach`: right answers pass, wrong ones fail with a reason and a
hint."""

from __future__ import annotations

import numpy as np
import pytest

import qdlab as qd
from qdlab.teach import (
    SOLUTIONS,
    BarChart,
    Verdict,
    check_launch,
    check_rebuilt,
    check_result,
    check_split,
    construct_times,
)

F32 = qd.types.NDArray[qd.f32, 1]


@pytest.fixture(autouse=True)
def _init() -> None:
    qd.init(arch=qd.cpu, offline_cache=False, split_carried=False)
    yield
    qd.reset()


def define(source: str, tmp_path, name: str) -> dict:
    """Run `source` as a file (kernels need their source on disk) and return its namespace."""
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    ns = {"qd": qd, "np": np, "F32": F32}
    exec(compile(source, str(path), "exec"), ns)  # noqa: S102 - defining the answer under test
    return ns


STARTER_1 = """\
@qd.kernel
def running_total(x: F32, out: F32, acc: F32):
    total = 0.0
    for i in range(x.shape[0]):
        total += x[i]
    for i in range(out.shape[0]):
        out[i] = total
"""


def test_exercise_1(tmp_path) -> None:
    wrong = define(STARTER_1, tmp_path, "starter1")["running_total"]
    v = check_split(wrong, expect="per_offload")
    assert (
        not v and "carried_value" in v.text() and "total += x[i]" in v.text() and "Try:" in v.text()
    )
    right = define(SOLUTIONS[1], tmp_path, "solution1")["running_total"]
    x, out, acc = (
        np.arange(1, 11, dtype=np.float32),
        np.zeros(4, np.float32),
        np.zeros(1, np.float32),
    )
    right(x, out, acc)
    assert check_split(right, expect="per_offload") and check_result(out, np.full(4, 55.0))


def test_exercise_2(tmp_path) -> None:
    starter = (
        SOLUTIONS[2].replace("draw[0] = qd.random()", "r = qd.random()").replace("draw[0]", "r")
    )
    assert not check_split(
        define(starter, tmp_path, "starter2")["same_noise"], expect="per_offload"
    )
    right = define(SOLUTIONS[2], tmp_path, "solution2")["same_noise"]
    x, y, d = np.zeros(5, np.float32), np.zeros(5, np.float32), np.zeros(1, np.float32)
    right(x, y, d)
    assert check_split(right, expect="per_offload") and check_result(y, x)


NORMALISE = """\
@qd.kernel
def normalise(x: F32, out: F32):
    first = x[0]
    for i in range(x.shape[0]):
        x[i] = x[i] - first
    for i in range(out.shape[0]):
        out[i] = x[i] / first
"""


def test_exercise_3(tmp_path) -> None:
    ns = define(NORMALISE + SOLUTIONS[3], tmp_path, "ex3")
    assert check_split(ns["normalise"], expect=ns["answer_3"])
    none = check_split(ns["normalise"], expect=None)
    assert not none and "no answer yet" in none.text()
    other = check_split(ns["normalise"], expect="carried_value")
    assert not other and "`overwritten_reread`, not `carried_value`" in other.text()
    split = check_split(ns["normalise"], expect="per_offload")
    assert not split and "still compiled whole" in split.text()
    typo = check_split(ns["normalise"], expect="overwriten_reread")
    assert not typo and "not a mode or fallback code" in typo.text()


BLEND = """\
@qd.kernel
def blend(x: F32, y: F32, z: F32, w: qd.f32):
    s = w * 0.5
    bias = {bias}
    for i in range(x.shape[0]):
        y[i] = x[i] * s
    for i in range(x.shape[0]):
        z[i] = x[i] + bias
    for i in range(x.shape[0]):
        x[i] = x[i] * s + bias
"""


def test_exercise_4(tmp_path) -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    define(BLEND.format(bias="1.0"), tmp_path, "blend1")["blend"].compile()
    edited = define(BLEND.format(bias="2.0"), tmp_path, "blend2")["blend"]
    edited.compile()
    prediction = define(SOLUTIONS[4], tmp_path, "ex4")["prediction_4"]
    assert check_rebuilt(edited, expect=prediction)
    wrong = check_rebuilt(edited, expect=[0, 1])
    assert not wrong
    assert "Construct 2 (lines 9-10) was rebuilt" in wrong.text()
    assert "Construct 0 (lines 5-6) was reused" in wrong.text()
    assert "no construct 5" in check_rebuilt(edited, expect=[1, 2, 5]).text()
    assert "no prediction yet" in check_rebuilt(edited, expect=None).text()


SHIFT = """\
@qd.kernel
def shift(a: F32, b: F32, out: F32):
    s = a[0]
    for i in range(b.shape[0]):
        b[i] = -1.0
    for i in range(out.shape[0]):
        out[i] = s

a5, out5 = np.full(4, 3.0, np.float32), np.zeros(4, np.float32)
"""


def test_exercise_5(tmp_path) -> None:
    ns = define(SHIFT + SOLUTIONS[5], tmp_path, "ex5")
    right = check_launch(ns["shift"], ns["a5"], ns["b5"], ns["out5"], expect="per_offload")
    assert right and check_result(ns["out5"], np.full(4, 3.0))
    wrong = check_launch(ns["shift"], ns["a5"], ns["a5"], ns["out5"], expect="per_offload")
    assert not wrong and "aliased_arguments" in wrong.text()


def test_check_result_explains_the_difference() -> None:
    v = check_result(np.array([1.0, 2.0, 5.0]), np.array([1.0, 2.0, 3.0]))
    assert (
        not v
        and "1 of 3 values differ" in v.text()
        and "index 2: got 5.0, expected 3.0" in v.text()
    )
    shape = check_result(np.zeros(3), np.zeros(4))
    assert not shape and "shape (3,), expected (4,)" in shape.text()


def test_not_a_kernel() -> None:
    v = check_split(lambda: None, expect="per_offload")
    assert not v and "expected a @qd.kernel" in v.text()


def test_views_have_text_and_html(tmp_path) -> None:
    v = Verdict(False, "title <b>", ["a & b"])
    assert v.text() == "not yet: title <b>\n  - a & b" and "&lt;b&gt;" in v._repr_html_()
    k = define(SOLUTIONS[1], tmp_path, "views")["running_total"]
    chart = construct_times(k)
    assert isinstance(chart, BarChart) and len(chart.bars) == 3
    assert chart._repr_svg_().startswith("<svg") and chart.text().count("ms") == 3
