"""`qd.simt` on the CPU: every module and name Quadrants' programs reach exists (Genesis reaches
them in GPU branches); a kernel calling a GPU intrinsic fails to compile naming it and the arch,
as the reference's CPU backend words it (`qd.block.sync is not supported for arch Arch.x64`), an
error that is a QuadrantsCompilationError and a ValueError; the deprecated subgroup names warn
once and forward; `group_size()` is 0 on the CPU (as quadrants 1.3.3 answers)."""

from __future__ import annotations

import warnings

import pytest

import qdlab as qd
from qdlab.lang.simt import block, grid, subgroup, warp


@pytest.fixture(autouse=True)
def _cpu():
    qd.init(arch=qd.cpu, offline_cache=False)
    yield


def test_the_modules_and_names_exist() -> None:
    assert qd.simt.block is block and qd.simt.subgroup is subgroup
    for module in (block, grid, subgroup, warp):
        for name in module.__all__:
            assert getattr(module, name) is not None, (module.__name__, name)
    assert {"shuffle", "reduce_add", "ballot", "sync", "invocation_id"} <= set(subgroup.__all__)
    assert {"sync", "thread_idx", "SharedArray"} <= set(block.__all__)


@pytest.mark.parametrize(
    ("call", "words"),
    [
        (lambda v: block.sync(), "qd.block.sync"),
        (lambda v: block.thread_idx(), "qd.block.thread_idx"),
        (lambda v: grid.mem_fence(), "qd.simt.grid.mem_fence"),
        (lambda v: subgroup.shuffle(v, 0), "qd.simt.subgroup.shuffle"),
        (lambda v: warp.shfl_sync_i32(warp.active_mask(), v, 1), "qd.simt.warp.shfl_sync_i32"),
    ],
    ids=["block.sync", "thread_idx", "grid.mem_fence", "subgroup.shuffle", "warp"],
)
def test_a_kernel_calling_an_intrinsic_is_refused(call, words) -> None:
    x = qd.field(qd.i32, 4)
    fn = qd.func(call)

    @qd.kernel
    def k():
        for i in range(4):
            x[i] = fn(i)

    with pytest.raises(qd.QuadrantsCompilationError) as e:
        k()
    assert isinstance(e.value, ValueError)
    assert f"{words} is not supported for arch Arch.{qd.cpu.name}" in str(e.value)


def test_shared_array_checks_its_shape_and_is_refused() -> None:
    with pytest.raises(ValueError, match="must be an integer or a tuple of integers"):
        block.SharedArray("4", qd.i32)
    x = qd.field(qd.i32, 4)

    @qd.kernel
    def k():
        for i in range(4):
            s = block.SharedArray((4,), qd.i32)
            s[0] = i
            x[i] = s[0]

    with pytest.raises(qd.QuadrantsCompilationError, match="SharedArray is not supported"):
        k()


def test_group_size_on_the_cpu() -> None:
    assert subgroup.group_size() == 0
    with pytest.raises(AssertionError, match="not a power of two"):
        subgroup.log2_group_size()


def test_deprecated_names_warn_once_and_forward(monkeypatch) -> None:
    calls = []
    monkeypatch.setattr(subgroup, "_barrier_deprecation_warned", False)
    monkeypatch.setattr(subgroup, "sync", lambda: calls.append("sync"))
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always", DeprecationWarning)
        subgroup.barrier()
        subgroup.barrier()
    assert calls == ["sync", "sync"] and len(got) == 1
    assert "qd.simt.subgroup.sync()" in str(got[0].message)
    with pytest.raises(ValueError, match="qd.simt.subgroup.mem_fence is not supported"):
        monkeypatch.setattr(subgroup, "_memory_barrier_deprecation_warned", True)
        subgroup.memory_barrier()


def test_register_tiles_exist_and_are_refused_on_the_cpu() -> None:
    """`qd.simt.Tile16x16` / `Tile32x32` and `qd.outer` exist; making a tile in a kernel on the
    CPU is Quadrants' QuadrantsSyntaxError, at the line that makes it."""
    qd.init(arch=qd.cpu, offline_cache=False)
    a = qd.ndarray(qd.f32, (16, 16))

    @qd.kernel
    def sizes() -> qd.i32:
        return qd.simt.Tile16x16.SIZE + qd.simt.Tile32x32.SIZE

    @qd.kernel
    def cholesky(a: qd.types.NDArray[qd.f32, 2]):
        for i in range(16):
            t = qd.simt.Tile16x16.zeros(dtype=qd.f32)
            t[:] = a[0:16, 0:16]
            t -= qd.outer(a[0:16, 0], a[0:16, 0])
            a[0:16, 0:16] = t

    @qd.kernel
    def identity(a: qd.types.NDArray[qd.f32, 2]):
        for i in range(32):
            t = qd.simt.Tile32x32.eye()
            a[0:16, 0:16] = t

    assert sizes() == 48
    with pytest.raises(qd.QuadrantsSyntaxError, match="Tile16x16 requires a GPU backend") as e:
        cholesky(a)
    assert "t = qd.simt.Tile16x16.zeros(dtype=qd.f32)" in str(e.value)
    with pytest.raises(qd.QuadrantsSyntaxError, match="Tile32x32 requires a GPU backend"):
        identity(a)
    with pytest.raises(TypeError, match="does not support composition"):
        qd.outer(1, 2) + qd.outer(3, 4)
