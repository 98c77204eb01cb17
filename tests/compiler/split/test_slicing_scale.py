"""Slicing a large kernel: what `split.DefUse` records of each statement, and a kernel whose
slices read 512 locals splitting in seconds (it took minutes when every local read walked
every earlier statement)."""

from __future__ import annotations

import time

import numpy as np

import qdlab as qd
from qdlab.compiler import ir, pipeline, split
from qdlab.compiler.passes import run_passes
from qdlab.host import state

N = 512
vec_n = qd.types.vector(N, qd.i32)


@qd.kernel
def ramp() -> vec_n:
    ret = vec_n(0)
    for i in range(N):
        ret[i] = i
    return ret


@qd.kernel
def two_loops(x: qd.types.NDArray[qd.f32, 1], s: qd.f32):
    a = s * 2.0
    b = a + 1.0
    for i in range(x.shape[0]):
        x[i] = a
    for i in range(x.shape[0]):
        x[i] += b


def test_a_kernel_returning_a_512_vector_compiles_in_seconds() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    t0 = time.perf_counter()
    got = ramp()
    seconds = time.perf_counter() - t0
    assert [int(got[i]) for i in range(N)] == list(range(N))
    assert seconds < 60, f"{seconds:.1f} s"  # before: not done after 10 minutes


def test_def_use_records_each_statement_once() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    x = np.zeros(4, np.float32)
    two_loops(x, 1.5)
    np.testing.assert_array_equal(x, np.full(4, 7.0, np.float32))
    sig, _, templates = two_loops.bind((x, 1.5), {})
    kernel = pipeline.lower(two_loops.spec(sig, templates), state.config(), None).kernel
    run_passes(kernel)
    du = split.DefUse.of(kernel)
    ops = kernel.body.ops
    assert du.position == {op: p for p, op in enumerate(ops)}
    assert du.writes == split.local_writes(ops)
    for ref, positions in du.writers.items():
        assert positions == sorted(p for p in range(len(ops)) if ref in du.writes[p])
    for p, op in enumerate(ops):
        defs = [v for read, v in du.uses[p] if not read]
        assert len(defs) == len(set(defs))
        assert all(isinstance(v.owner, ir.Op) and v.owner in du.position for v in defs)
        assert du.effect[p] == split.has_effect(op)
    loops = [p for p, op in enumerate(ops) if isinstance(op, ir.For)]
    assert len(loops) == 2
    cs = split.constructs(kernel, uses=du)
    assert [c.positions for c in cs] == [[loops[0]], [loops[1]]]
    assert cs == split.constructs(kernel)  # the same slices with or without a DefUse given
