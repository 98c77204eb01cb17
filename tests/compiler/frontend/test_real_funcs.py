"""`@qd.real_func`: Quadrants' real-call semantics (serial loops, `return` anywhere, arguments by
value except `qd.ref`), the same answer on every path, the errors in Quadrants' words, and a
changed real_func compiling again exactly the constructs that call it."""

from __future__ import annotations

import importlib.util
import itertools
import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from paths import PATHS, on_every_path

import qdlab as qd

F32 = qd.types.NDArray[qd.f32, 1]
I32 = qd.types.NDArray[qd.i32, 1]


@qd.real_func
def first_above(a: F32, t: qd.f32) -> qd.i32:
    for i in range(a.shape[0]):  # a return in a loop leaves the call
        if a[i] > t:
            return i
    return -1


@qd.real_func
def pair_with_product(p: qd.i32) -> qd.math.vec2:
    for i in range(1, 10):
        j = 1
        while j < 10:  # a return two loops deep
            if i * j == p:
                return qd.math.vec2(i, j)
            j += 1
    return qd.math.vec2(0, 0)


@qd.real_func
def bump(x: qd.ref(qd.i32), by: qd.i32):
    x += by


@qd.real_func
def scan(a: I32):
    for i in range(1, a.shape[0]):  # serial, as in a real call: each entry sees the previous one
        a[i] += a[i - 1]


@qd.kernel
def uses_real_funcs(a: F32, b: I32, out: I32):
    out[0] = first_above(a, 2.5)
    out[1] = first_above(a, 100.0)
    v = pair_with_product(12)
    out[2] = qd.i32(v[0]) * 10 + qd.i32(v[1])
    n = 1
    bump(n, 4)
    bump(n, 5)
    out[3] = n
    scan(b)  # a construct of its own that writes b, read by the loop after it
    for i in range(b.shape[0]):
        out[4 + i] = b[i] * 2 + first_above(a, qd.f32(i))


def test_real_funcs_give_the_same_answer_on_every_path() -> None:
    a = np.array([1.0, 2.0, 3.0, 4.0], np.float32)

    def run():
        b = np.array([1, 2, 3, 4], np.int32)
        out = np.zeros(8, np.int32)
        uses_real_funcs(a, b, out)
        return out.tolist()

    scanned = np.cumsum([1, 2, 3, 4])
    firsts = [next(k for k, x in enumerate(a) if x > i) for i in range(4)]
    want = [2, -1, 26, 10, *(int(s) * 2 + f for s, f in zip(scanned, firsts))]
    assert on_every_path(run) == {p: want for p in PATHS}


@qd.real_func
def add(a: qd.f32, b: qd.f32) -> qd.f32:
    return a + b


@qd.kernel
def converts() -> qd.i32:
    return add(1, 2)  # i32 arguments converted to the f32 parameters, the f32 result to i32


def test_arguments_and_the_result_are_converted_to_their_annotations() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    assert converts() == 3


def test_a_parameter_without_an_annotation_is_refused_when_decorated() -> None:
    with pytest.raises(qd.QuadrantsSyntaxError, match="must be type annotated: parameter `a`"):

        @qd.real_func
        def f(a, b: qd.i32) -> qd.i32:
            return a + b


def test_a_returned_value_needs_a_return_annotation() -> None:
    @qd.real_func
    def f(a: qd.i32):
        return a

    @qd.kernel
    def k():
        f(1)

    qd.init(arch=qd.cpu, offline_cache=False)
    with pytest.raises(qd.QuadrantsCompilationError, match="must be annotated with a return type"):
        k()


@qd.real_func
def down(n: qd.i32) -> qd.i32:
    if n == 0:
        return 0
    return down(n - 1) + n


@qd.real_func
def total(a: I32, lo: qd.i32, hi: qd.i32) -> qd.i32:
    if lo == hi:
        return a[lo]
    mid = (lo + hi) // 2
    return total(a, lo, mid) + total(a, mid + 1, hi)


@qd.real_func
def is_even(n: qd.i32) -> qd.i32:
    if n == 0:
        return 1
    return is_odd(n - 1)


@qd.real_func
def is_odd(n: qd.i32) -> qd.i32:
    if n == 0:
        return 0
    return is_even(n - 1)


@qd.real_func
def fill(a: I32, n: qd.i32):
    if n >= 0:
        a[n] = n * n
        fill(a, n - 1)


@qd.kernel
def recursive(a: I32, b: I32, out: I32) -> qd.i32:
    s = total(a, 0, a.shape[0] - 1)  # recomputed where used, it would read a[0] written below
    a[0] = 100
    out[0] = s
    out[1] = total(a, 0, a.shape[0] - 1)
    for i in range(8):  # a call in a parallel loop
        out[2 + i] = down(i) + is_even(i) * 1000
    fill(b, b.shape[0] - 1)  # a call that writes: a construct of its own
    out[10] = b[3]
    return down(100)


def test_recursive_real_funcs_give_the_same_answer_on_every_path() -> None:
    def run():
        a, b, out = np.arange(8, dtype=np.int32), np.zeros(5, np.int32), np.zeros(11, np.int32)
        r = recursive(a, b, out)
        return r, out.tolist(), a.tolist(), b.tolist()

    tri = [i * (i + 1) // 2 for i in range(8)]
    want = (
        5050,
        [28, 128, *(t + (1000 if i % 2 == 0 else 0) for i, t in enumerate(tri)), 9],
        [100, *range(1, 8)],
        [0, 1, 4, 9, 16],
    )
    assert on_every_path(run) == {p: want for p in PATHS}


@qd.real_func
def mark(a: I32, n: qd.i32) -> qd.i32:
    s = 0
    for j in range(2):  # a local the body accumulates into: the call's own, not the loop's
        s += j
    if n >= 0:
        qd.atomic_add(a[n], 1)  # an element that changes from call to call
        s += mark(a, n - 1)
    return s


@qd.kernel
def marks(a: I32) -> qd.i32:
    t = 0
    for i in range(20000):
        t += mark(a, i % 4) + down(i % 5)
    return t


def test_a_recursive_call_in_a_parallel_loop_is_no_reduction_of_it() -> None:
    def run():
        a = np.zeros(4, np.int32)
        return marks(a), a.tolist()

    calls = sum((i % 4) + 2 + (i % 5) * (i % 5 + 1) // 2 for i in range(20000))
    assert on_every_path(run) == {p: (calls, [20000, 15000, 10000, 5000]) for p in PATHS}


@qd.real_func
def count(a: I32, n: qd.i32) -> qd.i32:
    if n < 0:
        return 0  # a stored return: the function has locals of its own
    a[n] += 1
    return count(a, n - 1) + 1


@qd.kernel
def counts(a: I32, out: I32):
    out[0] = count(a, 3)
    for _ in range(1):
        out[1] = a[0]
    out[2] = count(a, 1)  # another call: the function's locals are not the kernel's


def test_calls_in_two_constructs_share_no_local_and_the_kernel_still_splits() -> None:
    def run():
        a, out = np.zeros(4, np.int32), np.zeros(3, np.int32)
        counts(a, out)
        o = counts._primal.per_offload_cache_observations
        return a.tolist(), out.tolist(), o.frontend_constructs_total

    got = on_every_path(run)
    assert got["split"] == ([2, 2, 1, 1], [4, 1, 2], 3)  # three constructs, no fallback
    assert {p: v[:2] for p, v in got.items()} == {p: ([2, 2, 1, 1], [4, 1, 2]) for p in PATHS}


def test_a_recursive_real_func_is_a_call_and_a_function_in_the_ir() -> None:
    @qd.kernel
    def k(n: qd.i32) -> qd.i32:
        return down(n) + add(1.0, 2.0)  # add is not recursive: lowered in place

    qd.init(arch=qd.cpu, offline_cache=False)
    assert k(10) == 58
    text = qd.explain(k).ir_before_split
    kernel_text, function_text = text.split("func @down")
    assert "{function=@down} : i32" in kernel_text and function_text.startswith(
        "(%n.1: i32) -> i32"
    )
    assert kernel_text.count("call ") == 1 and function_text.count("call ") == 1  # add: inlined


def test_recursion_in_a_qd_func_is_still_refused() -> None:
    @qd.func
    def spin(n: qd.i32) -> qd.i32:
        return spin(n - 1) if n > 0 else 0

    @qd.kernel
    def k() -> qd.i32:
        return spin(3)

    qd.init(arch=qd.cpu, offline_cache=False)
    with pytest.raises(qd.QuadrantsCompilationError, match="recursion is not supported"):
        k()


def test_a_recursive_real_func_with_a_vector_parameter_is_refused() -> None:
    @qd.real_func
    def vdown(v: qd.math.vec2, n: qd.i32) -> qd.f32:
        if n == 0:
            return v[0]
        return vdown(v, n - 1)

    @qd.kernel
    def k() -> qd.f32:
        return vdown(qd.math.vec2(1.0, 2.0), 3)

    qd.init(arch=qd.cpu, offline_cache=False)
    with pytest.raises(qd.QuadrantsTypeError, match="Parameter v of recursive @qd.real_func"):
        k()


def test_a_failed_assertion_in_a_recursive_call_is_reported() -> None:
    @qd.real_func
    def checked(a: I32, n: qd.i32) -> qd.i32:
        assert n < 5, "too deep"
        if n == 0:
            return a[0]
        return checked(a, n - 1) + 1

    @qd.kernel
    def k(a: I32, n: qd.i32) -> qd.i32:
        return checked(a, n)

    qd.init(arch=qd.cpu, offline_cache=False, debug=True)
    a = np.array([7], np.int32)
    assert k(a, 3) == 10
    with pytest.raises(qd.QuadrantsAssertionError, match="too deep"):
        k(a, 9)


NO_BASE_CASE = """
import json, subprocess, sys
import numpy as np
import qdlab as qd

qd.init(arch=qd.cpu, offline_cache=False, debug={debug})
I32 = qd.types.NDArray[qd.i32, 1]


@qd.real_func
def forever(n: qd.i32) -> qd.i32:
    return forever(n + 1) + 1  # no base case


@qd.real_func
def spin(a: I32, n: qd.i32):
    a[0] = n
    spin(a, n + 1)  # no base case, a call in tail position


@qd.real_func
def down(n: qd.i32) -> qd.i32:
    if n <= 0:
        return 0
    return down(n - 1) + 1


@qd.kernel
def serial(n: qd.i32) -> qd.i32:
    return forever(n)


@qd.kernel
def parallel(out: I32):
    for i in range(out.shape[0]):
        out[i] = forever(i)


@qd.kernel
def spins(a: I32):
    spin(a, 0)


@qd.kernel
def deep(n: qd.i32) -> qd.i32:
    return down(n)


seen = []
calls = [
    lambda: serial(0),
    lambda: parallel(np.zeros(1 << 16, np.int32)),
    lambda: spins(np.zeros(1, np.int32)),
    lambda: deep(10_000),
]
for call in calls:
    try:
        call()
        seen.append(None)
    except qd.QdRecursionError as e:
        assert isinstance(e, (RecursionError, qd.QuadrantsRuntimeError))
        seen.append(str(e))
seen.append(deep(9_999))  # 10,000 calls deep: the deepest allowed
seen.append(serial.__name__)
print(json.dumps(seen))
"""


@pytest.mark.process
@pytest.mark.parametrize("debug", [False, True])
def test_a_recursion_without_a_base_case_raises_naming_the_function(tmp_path, debug) -> None:
    """Each call runs one deeper than its caller and no deeper than `abi.MAX_CALL_DEPTH`: past it
    the kernel raises, naming the real_func and the kernel, in a serial task, in a parallel loop's
    threads, and for a call in tail position (which LLVM may turn into a loop). It used to overflow
    the stack: a segfault (checked in a process of its own, which a regression kills, not the
    suite)."""
    script = tmp_path / "no_base_case.py"
    script.write_text(NO_BASE_CASE.format(debug=debug))
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300, check=False
    )
    assert out.returncode == 0, out.stderr[-2000:]
    *errors, deepest, _ = json.loads(out.stdout.splitlines()[-1])
    for error, fn, kernel, line in zip(
        errors,
        ["forever", "forever", "spin", "down"],
        ["serial", "parallel", "spins", "deep"],
        [12, 12, 18, 25],
    ):
        assert error is not None and f"@qd.real_func `{fn}` nested over 10,000 calls deep" in error
        assert f"recursion too deep in kernel `{kernel}`" in error
        assert f"no_base_case.py:{line}" in error or f"line {line}" in error, error
    assert deepest == 9_999


def test_autodiff_through_a_recursive_real_func_is_refused() -> None:
    @qd.real_func
    def sq(v: qd.f32, n: qd.i32) -> qd.f32:
        if n == 0:
            return v
        return sq(v * v, n - 1)

    @qd.kernel
    def k(x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            y[i] = sq(x[i], 1)

    qd.init(arch=qd.cpu, offline_cache=False)
    x, y = qd.ndarray(qd.f32, (2,), needs_grad=True), qd.ndarray(qd.f32, (2,), needs_grad=True)
    k(x, y)
    with pytest.raises(qd.QuadrantsCompilationError, match="recursive @qd.real_func `sq`"):
        k.grad(x, y)


def test_a_ref_parameter_takes_a_local_variable() -> None:
    @qd.kernel
    def k():
        bump(3, 4)

    qd.init(arch=qd.cpu, offline_cache=False)
    with pytest.raises(qd.QuadrantsTypeError, match="Argument x is a qd.ref"):
        k()


def test_an_ndarray_argument_must_be_a_kernel_parameter() -> None:
    outside = qd.ndarray(qd.f32, shape=(4,))

    @qd.kernel
    def k() -> qd.i32:
        return first_above(outside, 0.0)

    qd.init(arch=qd.cpu, offline_cache=False)
    with pytest.raises(qd.QuadrantsTypeError, match="Expected ndarray in the kernel argument"):
        k()


_n = itertools.count()
EDITED = """
    import qdlab as qd

    @qd.real_func
    def step(x: qd.f32) -> qd.f32:
        if x > 100.0:
            return 0.0
        return x * {factor}

    @qd.kernel
    def k(a: qd.types.NDArray[qd.f32, 1], b: qd.types.NDArray[qd.f32, 1]):
        for i in range(a.shape[0]):
            a[i] = step(a[i])
        for i in range(b.shape[0]):
            b[i] = b[i] + 1.0
"""


def run_edited(folder, factor: str, program: str = EDITED) -> tuple[list[float], tuple[int, int]]:
    path = folder / f"real_func_{next(_n)}.py"
    path.write_text(textwrap.dedent(program.format(factor=factor)))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = mod
    spec.loader.exec_module(mod)
    a, b = np.ones(3, np.float32), np.zeros(3, np.float32)
    mod.k(a, b)
    o = mod.k._primal.per_offload_cache_observations
    return a.tolist(), (o.frontend_constructs_total, o.frontend_constructs_recompiled)


EDITED_RECURSIVE = """
    import qdlab as qd

    @qd.real_func
    def step(x: qd.f32, n: qd.i32) -> qd.f32:
        if n == 0:
            return x
        return step(x, n - 1) * {factor}

    @qd.kernel
    def k(a: qd.types.NDArray[qd.f32, 1], b: qd.types.NDArray[qd.f32, 1]):
        for i in range(a.shape[0]):
            a[i] = step(a[i], 1)
        for i in range(b.shape[0]):
            b[i] = b[i] + 2.0  # not EDITED's loop: its own cache entry
"""


def test_an_edited_recursive_real_func_compiles_again_only_the_construct_that_calls_it(
    tmp_path,
) -> None:
    qd.init(arch=qd.cpu, offline_cache_file_path=str(tmp_path / "cache"))
    assert run_edited(tmp_path, "2.0", EDITED_RECURSIVE) == ([2.0] * 3, (2, 2))
    assert run_edited(tmp_path, "3.0", EDITED_RECURSIVE) == ([3.0] * 3, (2, 1))
    assert run_edited(tmp_path, "2.0", EDITED_RECURSIVE)[0] == [2.0] * 3
    qd.init(arch=qd.cpu, offline_cache_file_path=str(tmp_path / "cache"))  # as a cold process
    assert run_edited(tmp_path, "5.0", EDITED_RECURSIVE) == ([5.0] * 3, (2, 1))
    assert run_edited(tmp_path, "2.0", EDITED_RECURSIVE) == ([2.0] * 3, (2, 0))  # all from disk


def test_an_edited_real_func_compiles_again_only_the_construct_that_calls_it(tmp_path) -> None:
    qd.init(arch=qd.cpu, offline_cache_file_path=str(tmp_path / "cache"))
    assert run_edited(tmp_path, "2.0") == ([2.0] * 3, (2, 2))
    assert run_edited(tmp_path, "3.0") == ([3.0] * 3, (2, 1))  # warm: the second loop is cached
    assert run_edited(tmp_path, "2.0")[0] == [2.0] * 3
    qd.init(arch=qd.cpu, offline_cache_file_path=str(tmp_path / "cache"))  # as a cold process
    assert run_edited(tmp_path, "5.0") == ([5.0] * 3, (2, 1))  # from disk: the same


@qd.real_func
def clip_early(v: qd.f32) -> qd.f32:
    if v > 1.0:
        return 1.0
    return v * v


@qd.real_func
def square_at_end(v: qd.f32) -> qd.f32:
    return v * v


def test_autodiff_through_real_funcs() -> None:
    @qd.kernel
    def smooth(x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            y[i] = square_at_end(x[i])

    @qd.kernel
    def clipped(x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            y[i] = clip_early(x[i])

    qd.init(arch=qd.cpu, offline_cache=False)
    x = qd.ndarray(qd.f32, shape=(3,), needs_grad=True)
    y = qd.ndarray(qd.f32, shape=(3,), needs_grad=True)
    x.from_numpy(np.array([0.5, 2.0, 3.0], np.float32))
    y.grad.fill(1.0)
    smooth(x, y)
    smooth.grad(x, y)
    assert x.grad.to_numpy().tolist() == [1.0, 4.0, 6.0]
    with pytest.raises(qd.QuadrantsCompilationError, match="a `return` before the end of"):
        clipped.grad(x, y)


def test_a_scalar_parameter_cannot_be_assigned() -> None:
    @qd.real_func
    def f(a: qd.i32) -> qd.i32:
        a += 1
        return a

    @qd.kernel
    def k() -> qd.i32:
        return f(1)

    qd.init(arch=qd.cpu, offline_cache=False)
    with pytest.raises(qd.QuadrantsSyntaxError, match='Kernel argument "a" is immutable'):
        k()
