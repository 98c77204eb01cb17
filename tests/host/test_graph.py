"""`@qd.kernel(graph=True)`: `qd.graph.parallel_context()` regions, nested `qd.graph.do_while`,
`qd.checkpoint` pause and resume, and the graph queries of `get_runtime().prog`. Each answer is
checked against a plain Python computation or against values measured on Quadrants 1.3.3 (CPU),
on every compile path."""

from __future__ import annotations

from enum import IntEnum

import numpy as np
import pytest

import qdlab as qd
from qdlab.lang import impl

PATHS = ({}, {"per_offload": False}, {"split_carried": False})
IDS = ["split", "whole", "reference_fallbacks"]
I1 = qd.types.NDArray[qd.i32, 1]
I0 = qd.types.NDArray[qd.i32, 0]
F1 = qd.types.NDArray[qd.f32, 1]


class Stage(IntEnum):
    LOAD = 0
    SIM = 1


# -- qd.graph.parallel_context / qd.graph.parallel -------------------------------------------------
@qd.kernel(graph=True)
def sections(x: qd.types.NDArray[qd.f32, 2], y: F1, z: F1):
    with qd.graph.parallel_context():
        for b in qd.static(range(2)):
            with qd.graph.parallel():
                for i in range(x.shape[1]):
                    x[b, i] = x[b, i] + (b + 1)
        if qd.static(True):
            with qd.graph.parallel():
                for i in range(y.shape[0]):
                    y[i] = y[i] + 7.0
    for i in range(z.shape[0]):
        z[i] = x[0, i] + x[1, i] + y[i]


@pytest.mark.parametrize("options", PATHS, ids=IDS)
def test_sections_run_as_written_in_order(options) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, **options)
    x, y, z = np.zeros((2, 5), np.float32), np.arange(5, dtype=np.float32), np.zeros(5, np.float32)
    sections(x, y, z)
    np.testing.assert_array_equal(x, [[1.0] * 5, [2.0] * 5])
    np.testing.assert_array_equal(y, np.arange(5) + 7.0)
    np.testing.assert_array_equal(z, 3.0 + np.arange(5) + 7.0)
    r = qd.explain(sections)  # a region scheduled to run concurrently is never split
    assert r.mode == "whole_kernel"
    if options.get("per_offload", True):
        assert r.fallback is not None and r.fallback.code == "concurrent_region"


def test_graph_queries_of_the_runtime() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    x, y, z = np.zeros((2, 5), np.float32), np.zeros(5, np.float32), np.zeros(5, np.float32)
    sections(x, y, z)
    prog = impl.get_runtime().prog
    assert prog.get_num_offloaded_tasks_on_last_call() >= 4  # each loop is a task
    assert prog.get_graph_cache_size() == 0  # as on Quadrants' CPU: no graph is captured
    assert prog.get_graph_num_nodes_on_last_call() == 0
    assert prog.get_graph_cache_used_on_last_call() is False


def test_outside_a_kernel_the_graph_constructs_do_nothing() -> None:
    seen = []
    with qd.graph.parallel_context(), qd.graph.parallel():
        seen.append(1)
    with qd.checkpoint(0, None):
        seen.append(2)
    assert seen == [1, 2]


@pytest.mark.parametrize(
    ("make", "match"),
    [
        ("outside", "can only be used directly inside a qd.graph.parallel_context"),
        ("runtime_if", "may contain only 'with qd.graph.parallel"),
        ("nested", "sections cannot be nested"),
        ("no_graph", r"requires @qd.kernel\(graph=True\)"),
        ("argument", r"qd\.graph\.parallel\(\) takes no arguments"),
    ],
)
def test_misplaced_sections_are_refused(make: str, match: str) -> None:
    def outside(x: F1, flag: qd.i32):
        with qd.graph.parallel():
            for i in range(x.shape[0]):
                x[i] = 1.0

    def runtime_if(x: F1, flag: qd.i32):
        with qd.graph.parallel_context():
            if flag:
                with qd.graph.parallel():
                    for i in range(x.shape[0]):
                        x[i] = 1.0

    def nested(x: F1, flag: qd.i32):
        with qd.graph.parallel_context():  # noqa: SIM117 - a kernel's `with` takes one item
            with qd.graph.parallel():
                with qd.graph.parallel():
                    for i in range(x.shape[0]):
                        x[i] = 1.0

    def argument(x: F1, flag: qd.i32):
        with qd.graph.parallel_context():  # noqa: SIM117 - a kernel's `with` takes one item
            with qd.graph.parallel(name="a"):
                for i in range(x.shape[0]):
                    x[i] = 1.0

    fns = {"outside": outside, "runtime_if": runtime_if, "nested": nested, "argument": argument}
    k = qd.kernel(runtime_if) if make == "no_graph" else qd.kernel(graph=True)(fns[make])
    qd.init(arch=qd.cpu, offline_cache=False)
    with pytest.raises(qd.QuadrantsSyntaxError, match=match):
        k(np.zeros(2, np.float32), 1)


# -- nested qd.graph.do_while ----------------------------------------------------------------------
@qd.kernel(graph=True)
def nested_loops(x: I1, outer: I0, inner: I0, seen: I0):
    seen[()] = seen[()] + 1  # a bare top-level statement: once per launch
    for i in range(x.shape[0]):
        x[i] = x[i] + 1000
    while qd.graph.do_while(outer):
        inner[()] = 3  # a bare statement in the body: every iteration
        for i in range(x.shape[0]):
            x[i] = x[i] + 10
        while qd.graph.do_while(inner):
            for i in range(x.shape[0]):
                x[i] = x[i] + i
            inner[()] = inner[()] - 1
        outer[()] = outer[()] - 1


@pytest.mark.parametrize("options", PATHS, ids=IDS)
def test_nested_loops_match_python(options) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, **options)
    x, outer, inner, seen = np.zeros(6, np.int32), np.array(4, np.int32), np.array(0, np.int32), 0
    x_, outer_, seen_ = x.copy(), 4, np.array(0, np.int32)
    seen += 1
    x_ += 1000
    while True:  # do-while: the body runs before the test
        inner_ = 3
        x_ += 10
        while True:
            x_ += np.arange(6, dtype=np.int32)
            inner_ -= 1
            if inner_ == 0:
                break
        outer_ -= 1
        if outer_ == 0:
            break
    nested_loops(x, outer, inner, seen_)
    np.testing.assert_array_equal(x, x_)
    assert int(outer) == 0 and int(inner) == 0 and int(seen_) == seen


def test_do_while_needs_a_graph_kernel_and_a_counter_parameter() -> None:
    @qd.kernel
    def plain(c: I0):
        while qd.graph.do_while(c):
            c[()] = c[()] - 1

    @qd.kernel(graph=True)
    def unknown(c: I0):
        while qd.graph.do_while(nonexistent):  # noqa: F821 - the mistake under test
            c[()] = c[()] - 1

    qd.init(arch=qd.cpu, offline_cache=False)
    with pytest.raises(qd.QuadrantsSyntaxError, match=r"requires @qd.kernel\(graph=True\)"):
        plain(np.array(1, np.int32))
    with pytest.raises(qd.QuadrantsSyntaxError, match="does not resolve to an ndarray kernel"):
        unknown(np.array(1, np.int32))


def test_a_field_is_no_do_while_counter_nor_a_yield_flag() -> None:
    """The reference refuses a 0-d field where its graph kernels take a 0-d ndarray."""
    qd.init(arch=qd.cpu, offline_cache=False)
    counter = qd.field(qd.i32, shape=())

    @qd.kernel(graph=True)
    def loop(x: I1):
        while qd.graph.do_while(counter):
            for i in range(x.shape[0]):
                x[i] += 1
            counter[None] = counter[None] - 1

    @qd.kernel(graph=True, checkpoints=True)
    def stage(x: I1):
        with qd.checkpoint(0, yield_on=counter):
            for i in range(x.shape[0]):
                x[i] += 1

    counter[None] = 2
    for k in (loop, stage):
        with pytest.raises(qd.QuadrantsSyntaxError, match="got 'counter' which does not resolve"):
            k(np.zeros(2, np.int32))


# -- qd.checkpoint ---------------------------------------------------------------------------------
@qd.kernel(graph=True, checkpoints=True)
def staged(x: I1, flag: I0, s: I1):
    s[0] = s[0] + 1
    for i in range(x.shape[0]):  # implicit stage 0
        x[i] = x[i] + 1
    s[1] = s[1] + 1
    with qd.checkpoint(Stage.SIM, yield_on=flag):  # stage 1
        for i in range(x.shape[0]):
            x[i] = x[i] + 10
    s[2] = s[2] + 1
    for i in range(x.shape[0]):  # implicit stage 2
        x[i] = x[i] + 100
    s[3] = s[3] + 1


@pytest.mark.parametrize("options", PATHS, ids=IDS)
def test_a_pause_skips_later_stages_and_resume_starts_at_the_label(options) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, **options)
    x, flag, s = np.zeros(4, np.int32), np.array(1, np.int32), np.zeros(4, np.int32)
    status = staged(x, flag, s)
    # measured on Quadrants 1.3.3: the later stage is skipped, the bare statements all run
    assert status.yielded and status.checkpoint is Stage.SIM
    assert repr(status) == "GraphStatus(yielded=True, checkpoint=<Stage.SIM: 1>)"
    np.testing.assert_array_equal(x, [11] * 4)
    np.testing.assert_array_equal(s, [1] * 4)
    assert int(flag) == 1  # the flag is the program's: never cleared
    assert impl.get_runtime().prog.get_graph_last_yield_cp_id_on_last_call() == 1
    flag[()] = 0
    status = staged.resume(x, flag, s, from_checkpoint=Stage.SIM)
    assert not status.yielded and status.checkpoint is None
    assert repr(status) == "GraphStatus(yielded=False)"
    np.testing.assert_array_equal(x, [121] * 4)  # stage 0 skipped: 11 + 10 + 100
    np.testing.assert_array_equal(s, [2] * 4)
    assert staged.checkpoint_user_labels_by_cp_id == [None, Stage.SIM, None]
    assert staged.checkpoint_yield_on_args == [None, "flag", None]


@qd.kernel(graph=True, checkpoints=True)
def staged_loop(x: I1, flag: I0, c: I0):
    while qd.graph.do_while(c):
        for i in range(x.shape[0]):
            x[i] = x[i] + 1
        with qd.checkpoint(5, yield_on=flag):
            for i in range(x.shape[0]):
                x[i] = x[i] + 10
        for i in range(x.shape[0]):
            x[i] = x[i] + 100
        c[()] = c[()] - 1
    for i in range(x.shape[0]):
        x[i] = x[i] + 1000


@pytest.mark.parametrize("options", PATHS, ids=IDS)
def test_a_pause_ends_the_do_while_and_resume_runs_its_first_iteration_from_the_label(
    options,
) -> None:
    qd.init(arch=qd.cpu, offline_cache=False, **options)
    x, flag, c = np.zeros(4, np.int32), np.array(1, np.int32), np.array(3, np.int32)
    status = staged_loop(x, flag, c)  # values measured on Quadrants 1.3.3
    assert status.yielded and status.checkpoint == 5
    np.testing.assert_array_equal(x, [11] * 4)
    assert int(c) == 2  # the bare decrement finishes the iteration under way
    flag[()] = 0
    status = staged_loop.resume(x, flag, c, from_checkpoint=5)
    assert not status.yielded
    np.testing.assert_array_equal(x, [1232] * 4)  # 11 + (10 + 100) + (1 + 10 + 100) + 1000
    assert int(c) == 0


def test_data_oriented_flag_and_first_pause_wins() -> None:
    @qd.data_oriented
    class Sim:
        def __init__(self) -> None:
            self.x = qd.ndarray(qd.i32, shape=(3,))
            self.flag = qd.ndarray(qd.i32, shape=())
            self.other = qd.ndarray(qd.i32, shape=())

        @qd.kernel(graph=True, checkpoints=True)
        def step(self):
            with qd.checkpoint(7, yield_on=self.flag):
                for i in range(self.x.shape[0]):
                    self.x[i] = self.x[i] + 1
                    self.flag[()] = 1
            with qd.checkpoint(8, yield_on=self.other):
                for i in range(self.x.shape[0]):
                    self.x[i] = self.x[i] + 10

    qd.init(arch=qd.cpu, offline_cache=False)
    sim = Sim()
    sim.other[()] = 1
    status = sim.step()
    assert status.yielded and status.checkpoint == 7
    np.testing.assert_array_equal(sim.x.to_numpy(), [1, 1, 1])
    sim.flag[()] = 0
    status = sim.step.resume(from_checkpoint=8)
    assert status.yielded and status.checkpoint == 8  # `other` is still set
    np.testing.assert_array_equal(sim.x.to_numpy(), [11, 11, 11])


def test_checkpoint_misuse_is_refused_in_quadrants_words() -> None:
    with pytest.raises(qd.QuadrantsSyntaxError, match=r"checkpoints=True\) requires graph=True"):

        @qd.kernel(checkpoints=True)
        def no_graph(x: I1):
            pass

    @qd.kernel(graph=True)
    def not_opted_in(x: I1, flag: I0):
        with qd.checkpoint(0, yield_on=flag):
            for i in range(x.shape[0]):
                x[i] = 1

    @qd.kernel(graph=True, checkpoints=True)
    def bare(x: I1, flag: I0):
        with qd.checkpoint(0, yield_on=flag):
            x[0] = 1

    @qd.kernel(graph=True, checkpoints=True)
    def twice(x: I1, flag: I0):
        with qd.checkpoint(0, yield_on=flag):
            for i in range(x.shape[0]):
                x[i] = 1
        with qd.checkpoint(0, yield_on=flag):
            for i in range(x.shape[0]):
                x[i] = 2

    @qd.kernel(graph=True, checkpoints=True)
    def not_a_flag(x: I1, flag: I0):
        with qd.checkpoint(0, yield_on=x):
            for i in range(x.shape[0]):
                x[i] = 1

    qd.init(arch=qd.cpu, offline_cache=False)
    x, flag = np.zeros(2, np.int32), np.array(0, np.int32)
    for k, match in [
        (not_opted_in, "checkpoints=True"),
        (bare, r"bare top-level Assign statement[\s\S]*for _ in range\(1\):"),
        (twice, "already used by another checkpoint"),
        (not_a_flag, "does not resolve to an ndarray kernel parameter"),
    ]:
        with pytest.raises(qd.QuadrantsSyntaxError, match=match):
            k(x, flag)
    with pytest.raises(RuntimeError, match="does not match any"):
        staged.resume(x, flag, np.zeros(4, np.int32), from_checkpoint=99)
    with pytest.raises(RuntimeError, match="must be an int or IntEnum"):
        staged.resume(x, flag, np.zeros(4, np.int32), from_checkpoint="SIM")


def test_the_flat_spellings_work_and_warn() -> None:
    @qd.kernel(graph=True)
    def flat(x: I1, c: I0):
        while qd.graph_do_while(c):
            with qd.graph_parallel_context():  # noqa: SIM117 - a kernel's `with` takes one item
                with qd.graph_parallel():
                    for i in range(x.shape[0]):
                        x[i] = x[i] + 1
            c[()] = c[()] - 1

    assert qd.graph.do_while is qd.graph_do_while
    assert qd.graph.parallel is qd.graph_parallel
    qd.init(arch=qd.cpu, offline_cache=False)
    x, c = np.zeros(3, np.int32), np.array(2, np.int32)
    with pytest.warns(DeprecationWarning) as record:
        flat(x, c)
    words = " ".join(str(w.message) for w in record)
    for name in ("do_while", "parallel_context", "parallel"):
        assert f"qd.graph_{name}() is deprecated" in words and f"qd.graph.{name}()" in words
    np.testing.assert_array_equal(x, [2, 2, 2])
