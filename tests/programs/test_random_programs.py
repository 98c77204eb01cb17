"""Property test: random kernels give the same bits on every path (split with and without the
interface buffer, whole-kernel, debug; the quick tier's code, the optimised code, and a tiered
compile's quick code and then its optimised code installed in place), match NumPy, and see a
changed compile-time global when loaded again. Every simplify the pipeline runs is
checked to end at its fixed point (one round of the passes, `passes.run_passes`)."""

from __future__ import annotations

import os
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from program_gen import FLOAT_ARRAYS, INT_ARRAYS, VECTOR_ARRAYS, Program, load, programs

import qdlab as qd
from qdlab.compiler import pipeline
from qdlab.compiler.cache import construct_memo, stmt_memo
from qdlab.compiler.codegen import pool
from qdlab.compiler.passes import SIMPLIFY
from qdlab.compiler.runtime import tiers

CHECKED: Counter = Counter()
PATHS = (  # (per_offload, split_carried, debug)
    (True, True, False),
    (False, True, False),
    (True, False, False),
    (True, True, True),
)


@pytest.fixture(scope="module", autouse=True)
def _simplify_reaches_its_fixed_point():
    """After `run_passes`, no pass of those it ran (SIMPLIFY, or CONSTRUCT_SIMPLIFY for a
    construct) finds anything left to do."""
    real = pipeline.run_passes

    def checked(kernel, *args, **kwargs) -> None:
        real(kernel, *args, **kwargs)
        passes = args[0] if args else kwargs.get("passes", SIMPLIFY)
        left = [p.name for p in passes if p.run(kernel)]
        assert not left, f"{kernel.name}: one round of the passes left work for {left}"
        CHECKED["fixed_points"] += 1

    pipeline.run_passes = checked
    yield
    pipeline.run_passes = real


def inputs(p: Program) -> tuple[list[np.ndarray], int]:
    rng = np.random.default_rng(len(p.kernel_lines) * 7919 + p.n)
    ints = [rng.integers(-50, 50, p.n).astype(np.int32) for _ in INT_ARRAYS]
    floats = [rng.uniform(-4, 4, p.n).astype(np.float32) for _ in FLOAT_ARRAYS]
    vectors = [rng.integers(-50, 50, (p.n, 3)).astype(np.int32) for _ in VECTOR_ARRAYS]
    return ints + floats + vectors, int(rng.integers(-9, 9))


NAMES = INT_ARRAYS + FLOAT_ARRAYS + VECTOR_ARRAYS


def call(
    fn, p: Program, arrays: list[np.ndarray], k: int, again: bool = False
) -> tuple[list[np.ndarray], object]:
    """Run `fn` on copies of `arrays` (A2 bound to A0's copy when the program aliases them); for the
    kernel, the arrays the program holds in fields are copied into new global fields of its module
    first (`again`: into the previous call's, which the kernel compiled for them holds), and out of
    them after."""
    args = [a.copy() for a in arrays]
    if p.alias:
        args[2] = args[0]
    fields = {}
    if isinstance(fn, qd.Kernel):
        types = {}
        for name in p.fields:
            a = args[NAMES.index(name)]
            types[name] = qd.types.vector(3, qd.i32) if a.ndim == 2 else _QD[a.dtype.name]
        known, group = fn.fn.__globals__, None
        if p.grouped:
            group = (
                known["G"]
                if again
                else qd.types.struct(**types).field(shape=p.n, needs_grad=p.grad)
            )
        for name, dtype in types.items():
            if p.grouped:
                f = getattr(group, name)
                f = f.grad if p.grad and name == "F1" else f  # `G.grad[i].F1`
            elif p.quant and name == "A1":
                f = known[name] if again else quant_field(p.n, known)
            else:
                f = known[name] if again else qd.field(dtype, shape=p.n)
            f.from_numpy(args[NAMES.index(name)])
            fields[name] = f
            fn.fn.__globals__[name] = f
        if p.grouped:
            fn.fn.__globals__["G"] = group
        if p.sparse and not again:  # `SP`: blocks of 4 under a pointer or bitmasked level
            sp = qd.field(qd.i32)
            if p.sparse == "pointer2d":  # rows of 4 in blocks of 2 x 2
                level = qd.root.pointer(qd.ij, (p.rows // 2, 2))
                level.dense(qd.ij, (2, 2)).place(sp)
            else:
                level = getattr(qd.root, p.sparse)(qd.i, p.blocks)
                level.dense(qd.i, 4).place(sp)
            known["SP"], known["SP_B"] = sp, level
    passed = [a for name, a in zip(NAMES, args) if name not in fields]
    with np.errstate(all="ignore"):
        ret = fn(*passed, k)
    for name, f in fields.items():
        args[NAMES.index(name)] = f.to_numpy()
    if p.quant and isinstance(fn, qd.Kernel):  # the word's other half is as it was
        np.testing.assert_array_equal(
            fn.fn.__globals__["A1_neighbour"].to_numpy(), neighbour_values(p.n)
        )
    return args, ret


def neighbour_values(n: int) -> np.ndarray:
    """What the neighbour of a quantised A1 holds (`quant_field`)."""
    return (np.arange(n, dtype=np.int64) * -40503 + 12345).astype(np.int32)


def quant_field(n: int, known: dict) -> object:
    """A1's field as a quantised 32-bit integer in the high half of a 64-bit word whose low half
    holds `A1_neighbour` (a module global of the kernel's), set to `neighbour_values(n)`."""
    neighbour = qd.field(dtype=qd.types.quant.int(32, True))
    f = qd.field(dtype=qd.types.quant.int(32, True))
    packed = qd.BitpackedFields(max_num_bits=64)
    packed.place(neighbour, f)
    qd.root.dense(qd.i, n).place(packed)
    neighbour.from_numpy(neighbour_values(n))
    known["A1_neighbour"] = neighbour
    return f


_QD = {"int32": qd.i32, "float32": qd.f32}


def run_program(p: Program, folder) -> None:
    kernel, reference = load(p, folder)
    arrays, k = inputs(p)
    results = []
    for per_offload, split_carried, debug in PATHS:
        qd.init(
            arch=qd.cpu,
            offline_cache=False,
            per_offload=per_offload,
            random_seed=7,
            split_carried=split_carried,
            debug=debug,
        )
        results.append(call(kernel, p, arrays, k))
        if (per_offload, split_carried, debug) == PATHS[0]:
            full = optimised(kernel, p, arrays, k)  # before a reload rewrites the files
            upgraded = tiered(kernel, p, arrays, k)
            report = qd.explain(kernel)
            CHECKED["split" if report.mode == "per_offload" else "fallback"] += 1
            CHECKED["interface"] += bool(report.interface)
            CHECKED["runtime_fallback"] += bool(report.runtime_fallbacks)
            if isinstance(kernel, qd.Kernel):  # compiled as the first load was, not fresh: the
                kernel.options.pop("fresh", None)  # reloads below meet the manifest it leaves
                call(kernel, p, arrays, k, again=True)  # (the inits above emptied its memory)
            if p.helper_value is not None:
                check_reloaded(p, folder, arrays, k, "helper_changed", p.helper_value + 5)
            if p.real_func or any(not f.vector for f in p.pfuncs):  # a body, a default
                check_reloaded(p, folder, arrays, k, "funcs_edited", edit_funcs=True)
            if p.returns:  # `-> RET_T` reads the same, RET_T now names qd.f32
                check_reloaded(p, folder, arrays, k, "return_retyped", ret_f32=True)
    results.append(moved_again(p, folder, arrays, k))
    results += [full, *upgraded]
    (first, first_ret), *rest = results
    labels = [*PATHS[1:], "moved three lines, memo replayed", "optimised before it runs"]
    labels += ["tiered, its first launch", "tiered, its optimised code installed"]
    for (got, got_ret), path in zip(rest, labels):
        for a, b in zip(first, got):
            np.testing.assert_array_equal(bits(a), bits(b), err_msg=f"default path vs {path}")
        assert first_ret == got_ret, (first_ret, got_ret, path)
    if not p.uses_random:
        want, want_ret = call(reference, p, arrays, k)
        for got, ref in zip(first, want):
            np.testing.assert_array_equal(got, ref)
        assert first_ret == want_ret, (first_ret, want_ret)
    CHECKED["programs"] += 1
    CHECKED.update(p.patterns)


def bits(a: np.ndarray) -> np.ndarray:
    """The array's bits (`assert_array_equal` takes -0.0 for 0.0, and any NaN for any other)."""
    return a.view(f"u{a.itemsize}")


def init_default_path() -> None:
    per_offload, split_carried, debug = PATHS[0]
    qd.init(
        arch=qd.cpu,
        offline_cache=False,
        per_offload=per_offload,
        random_seed=7,
        split_carried=split_carried,
        debug=debug,
    )


@pytest.fixture(autouse=True, scope="module")
def quick_code():
    """Every path above runs the quick objects of a tiered compile (`compiler/tiers.py`): the
    optimised ones are never installed while this module runs, except by `optimised` and
    `tiered`."""
    pool.warm(3)  # a compile is tiered while the pool is there
    tiers.hold = True
    yield
    tiers.hold = False
    tiers.settle_all()


def optimised(kernel, p: Program, arrays: list[np.ndarray], k: int) -> tuple[list, object]:
    """The default path compiled again at LLVM's full level before anything runs
    (`QDLAB_TIERED=0`) and linked by MCJIT (`QDLAB_ELF_LOADER=0`); the quick objects every other
    path ran, linked by qdlab's own loader, must give the same bits."""
    init_default_path()  # a new init: the kernel is compiled again, with this call's fields
    if not isinstance(kernel, qd.Kernel):
        return call(kernel, p, arrays, k)
    CHECKED["quick_code_ran"] += any(b.unit.fns.pending is not None for b in kernel.latest.built)
    kernel.options["fresh"] = True  # nothing loaded is reused
    os.environ.update(QDLAB_TIERED="0", QDLAB_ELF_LOADER="0")
    try:
        got = call(kernel, p, arrays, k)
    finally:
        del os.environ["QDLAB_TIERED"], os.environ["QDLAB_ELF_LOADER"]
    CHECKED["tiers_compared"] += 1
    return got


def tiered(kernel, p: Program, arrays: list[np.ndarray], k: int) -> list[tuple[list, object]]:
    """The default path compiled again as a first process runs it: launched at once (from the
    quick objects, unless a loop long enough to run in parallel waits for its optimised code),
    then again once every optimised object is installed in place (but for a program that draws
    random numbers: its second launch draws the next ones)."""
    init_default_path()
    if not isinstance(kernel, qd.Kernel):
        return [call(kernel, p, arrays, k)] * 2
    kernel.options["fresh"] = True
    tiers.hold = False
    try:
        first = call(kernel, p, arrays, k)
        tiers.settle_all()
        CHECKED["tiered_upgraded"] += all(b.unit.fns.pending is None for b in kernel.latest.built)
        return [first, first if p.uses_random else call(kernel, p, arrays, k, again=True)]
    finally:
        tiers.hold = True


def moved_again(p: Program, folder, arrays: list[np.ndarray], k: int) -> tuple[list, object]:
    """The module loaded again three lines lower, on the default path: the statement memo replays
    every statement it stored (their locations rebased) and the construct memo serves every
    construct it holds (moved); the result must not change, nor any construct's IR text from what
    a compile without either memo gives."""
    init_default_path()
    before = stmt_memo.stats["replayed"], construct_memo.stats["served"]
    kernel, _ = load(p, folder, again=True, moved=3)
    got = call(kernel, p, arrays, k)
    CHECKED["memo_replayed"] += stmt_memo.stats["replayed"] > before[0]
    CHECKED["construct_served"] += construct_memo.stats["served"] > before[1]
    CHECKED["moved"] += 1
    if not isinstance(kernel, qd.Kernel):
        return got
    plain, _ = load(p, folder, again=True, moved=3)
    plain.options["fresh"] = True  # neither memo, nothing reused (`%%qdkernel --no-cache`)
    call(plain, p, arrays, k)
    texts = [b.text for b in plain.latest.built]
    assert [b.text for b in kernel.latest.built] == texts, "a memo changed a construct's IR"
    CHECKED["ir_compared"] += bool(texts)
    return got


def check_reloaded(
    p: Program,
    folder,
    arrays: list[np.ndarray],
    k: int,
    what: str,
    helper_value: int | None = None,
    edit_funcs: bool = False,
    ret_f32: bool = False,
) -> None:
    """The same module loaded again with one thing changed (the helper's global, a constant in each
    real_func's body), in the same process and cache: the manifest, the memos and the constructs may
    be reused, but never with the old value or code baked in."""
    kernel, reference = load(p, folder, helper_value, True, 0, edit_funcs, ret_f32)
    got, got_ret = call(kernel, p, arrays, k)
    if p.uses_random:
        qd.init(arch=qd.cpu, offline_cache=False, per_offload=False, random_seed=7)
        want, want_ret = call(kernel, p, arrays, k)
        qd.init(arch=qd.cpu, offline_cache=False, per_offload=True, random_seed=7)
    else:
        want, want_ret = call(reference, p, arrays, k)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b, err_msg=what)
    assert got_ret == want_ret
    CHECKED[what] += 1
    load(p, folder, again=True)  # the files as they were: the next paths compile the first load's
    # kernel again, which reads its @qd.funcs' source and its helper's file as they are then


def generated(share: int = 1, least: int = 1) -> settings:
    """Hypothesis' settings for a test of generated programs: `QDLAB_PROGRAMS` (300) / `share` of
    them, at least `least`, drawn the same way on every run."""
    return settings(
        max_examples=max(least, int(os.environ.get("QDLAB_PROGRAMS", "300")) // share),
        deadline=None,
        derandomize=True,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.function_scoped_fixture,
            HealthCheck.data_too_large,
        ],
    )


@generated()
@given(p=programs())
def test_every_path_equals_numpy(p: Program, tmp_path_factory) -> None:
    run_program(p, tmp_path_factory.mktemp("gen", numbered=True))


SPARSE_KINDS = (
    "sparse",
    "sparse",
    "sparse",
    "sparse",
    "loop",
    "def",
    "snapshot",
    "store",
    "if",
    "return",
    "atomic",
)


@generated(4, 4)
@given(p=programs(kinds=SPARSE_KINDS))
def test_sparse_programs_equal_numpy(p: Program, tmp_path_factory) -> None:
    """Programs that activate a sparse field's cells in one loop, snapshot a block's activity,
    deactivate blocks in a later loop and struct-for over the active cells: every path agrees
    with NumPy."""
    run_program(p, tmp_path_factory.mktemp("gen", numbered=True))


@generated(50, 2)
@given(p=programs(max_statements=4, kinds=("svd", "svd", "floop", "fdef", "store", "if")))
def test_svd_programs_equal_numpy(p: Program, tmp_path_factory) -> None:
    """Programs that decompose per-element 3x3 matrices (`qd.svd`, `qd.polar_decompose`) among
    other float statements: every path gives the bits of `sifakis_ref`, Quadrants' algorithm."""
    run_program(p, tmp_path_factory.mktemp("gen", numbered=True))


@pytest.mark.slow
@settings(max_examples=10_000, deadline=None, suppress_health_check=list(HealthCheck))
@given(p=programs(max_statements=9))
def test_every_path_equals_numpy_10k(p: Program, tmp_path_factory) -> None:
    run_program(p, tmp_path_factory.mktemp("gen", numbered=True))


def teardown_module() -> None:
    print(f"\nrandom programs checked: {dict(sorted(CHECKED.items()))}")
