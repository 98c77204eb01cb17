"""Every oracle kernel lowers to PTX for sm_80 and sm_90 on a machine without a GPU, and `ptxas`
accepts it.

`qd.compile_ptx` runs the same stages as a CUDA compile (lower, simplify, split, gate, slice) and
emits one PTX module per construct. Where the `ptxas` of the `nvidia-cuda-nvcc-cu12` wheel is
installed, each module is also assembled for the same architecture, which catches PTX that LLVM
prints but the CUDA toolchain rejects.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from types import ModuleType

import pytest
from cuda_oracle import load_harness

import qdlab as qd
from qdlab.compiler.codegen import nvptx_jit
from qdlab.core.errors import QdError

OWN = os.path.dirname(qd.__file__) + os.sep
"""qdlab's package folder: a path in an error under it would be an internal frame (a test folder
named qdlab is not)."""

CASE_NAMES = load_harness().case_names()
ARCHS = ("sm_80", "sm_90")
LOAD32, STORE32 = (re.compile(rf"\b{op}\.global\.[bf]32\b") for op in ("ld", "st"))
"""A 32-bit float load or store: LLVM 22 prints `.b32`, LLVM 20 (llvmlite 0.46) `.f32`."""
_ptx: dict[tuple[str, str], str] = {}


def ptx_of(kernels: ModuleType, name: str, sm: str) -> str:
    if (name, sm) not in _ptx:
        case = next(c for c in kernels.CASES if c.name == name)
        _ptx[name, sm] = qd.compile_ptx(case.kernel, sm=sm)
    return _ptx[name, sm]


def modules(ptx: str) -> list[str]:
    """The PTX modules of `compile_ptx`'s text, without their header comments."""
    return [part.split("\n", 1)[1] for part in ptx.split("// qdlab: ")[1:]]


@pytest.mark.parametrize("sm", ARCHS)
@pytest.mark.parametrize("name", CASE_NAMES)
def test_lowers_to_ptx(oracle_kernels: ModuleType, name: str, sm: str) -> None:
    ptx = ptx_of(oracle_kernels, name, sm)
    assert ".visible .entry" in ptx
    for module in modules(ptx):
        assert f".target {sm}" in module
        assert "__nvvm_reflect" not in module  # libdevice's reflection calls were folded


@pytest.mark.process
@pytest.mark.parametrize("sm", ARCHS)
@pytest.mark.parametrize("name", CASE_NAMES)
def test_ptxas_assembles(oracle_kernels: ModuleType, name: str, sm: str, tmp_path: Path) -> None:
    ptxas = nvptx_jit.ptxas()
    if ptxas is None:
        pytest.skip("ptxas not installed (pip install nvidia-cuda-nvcc-cu12)")
    for k, module in enumerate(modules(ptx_of(oracle_kernels, name, sm))):
        src = tmp_path / f"{name}_{k}.ptx"
        src.write_text(module)
        proc = subprocess.run(
            [ptxas, f"-arch={sm}", str(src), "-o", str(tmp_path / f"{name}_{k}.cubin")],
            check=False,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0, f"ptxas rejected {name} unit {k} for {sm}:\n{proc.stderr}"


def test_parallel_loop_is_grid_stride() -> None:
    @qd.kernel
    def scale(x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            y[i] = 2.0 * x[i]

    ptx = qd.compile_ptx(scale)
    for reg in ("%tid.x", "%ctaid.x", "%ntid.x", "%nctaid.x"):
        assert reg in ptx
    assert "ld.global" in ptx and "st.global" in ptx


def test_math_links_libdevice() -> None:
    @qd.kernel
    def waves(x: qd.types.NDArray[qd.f64, 1]):
        for i in range(x.shape[0]):
            x[i] = qd.sin(x[i]) + qd.exp(x[i]) + qd.atan2(x[i], 2.0) + qd.tan(x[i]) + x[i] ** 1.5

    ptx = qd.compile_ptx(waves, sm="sm_90")
    assert (
        "__nv_" not in ptx.split(".visible .entry")[0] or ".func" not in ptx
    )  # inlined, nothing external
    assert ".extern" not in ptx


def test_reduction_is_one_atomic_per_thread() -> None:
    @qd.kernel
    def total(x: qd.types.NDArray[qd.f32, 1]) -> qd.f32:
        s = 0.0
        for i in range(x.shape[0]):
            s += x[i]
        return s

    ptx = qd.compile_ptx(total)
    assert "atom.global.add.f32" in ptx or "red.global.add.f32" in ptx


def test_block_dim_is_recorded_in_header() -> None:
    @qd.kernel
    def fill(x: qd.types.NDArray[qd.i32, 1]):
        qd.loop_config(block_dim=256)
        for i in range(x.shape[0]):
            x[i] = i

    assert "parallel_for, block 256" in qd.compile_ptx(fill)


def test_print_is_refused_at_its_line() -> None:
    @qd.kernel
    def talk(x: qd.types.NDArray[qd.i32, 1]):
        for i in range(x.shape[0]):
            print("i =", i)

    with pytest.raises(QdError) as err:
        qd.compile_ptx(talk)
    assert "not supported on CUDA" in str(err.value)
    assert 'print("i =", i)' in str(err.value)
    assert OWN not in str(err.value)  # no frame of qdlab's own source


def test_debug_bounds_checks_store_the_error_and_return() -> None:
    @qd.kernel
    def copy(x: qd.types.NDArray[qd.f32, 1], y: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            y[i] = x[i + 1]

    qd.init(arch=qd.cpu, debug=True)
    try:
        ptx = qd.compile_ptx(copy)
    finally:
        qd.init(arch=qd.cpu)
    assert ptx.count("setp") > qd.compile_ptx(copy).count("setp")


def test_sm_names_are_checked() -> None:
    @qd.kernel
    def nothing(x: qd.types.NDArray[qd.i32, 1]):
        x[0] = 1

    assert ".target sm_90" in qd.compile_ptx(nothing, sm=90)
    with pytest.raises(ValueError):
        qd.compile_ptx(nothing, sm="hopper")


@qd.kernel
def square(
    x: qd.types.ndarray(qd.f32, 1, needs_grad=True), y: qd.types.ndarray(qd.f32, 1, needs_grad=True)
):
    for i in range(x.shape[0]):
        y[i] = x[i] * x[i]


def test_the_gradient_kernel_compiles_to_the_gradient_on_cuda() -> None:
    """`k.grad` under arch=cuda runs the one pipeline's reverse pass (a second copy of the pipeline
    once compiled the forward kernel for it): the forward stores y, the gradient accumulates into
    x.grad."""
    forward, gradient = qd.compile_ptx(square, sm="sm_90"), qd.compile_ptx(square.grad, sm="sm_90")
    assert STORE32.search(forward) and "atom.global.add.f32" not in forward
    # x.grad[i] += 2 * x[i] * y.grad[i]: reads x, y.grad and x.grad (the add is a plain
    # read-modify-write, as only iteration i touches x.grad[i])
    assert (len(LOAD32.findall(forward)), len(LOAD32.findall(gradient))) == (1, 3)
    assert STORE32.search(gradient)
    assert forward != gradient


@qd.kernel
def powers(
    a: qd.types.ndarray(qd.f32, 1, needs_grad=True),
    b: qd.types.ndarray(qd.i32, 1),
    p: qd.types.ndarray(qd.f32, 1, needs_grad=True),
):
    for i in range(a.shape[0]):
        ret = 1.0
        for j in range(b[i] + qd.math.popcnt(b[i])):
            ret = ret * a[i]
        p[i] = ret


def test_a_gradient_through_a_dynamic_loop_and_bit_counts_compile_for_cuda() -> None:
    """The reverse of a loop that carries a local (its earlier iterations run again) and the bit
    counts lower to PTX like any other op; a.grad[i] is owned by iteration i, so its accumulation is
    a plain read-modify-write, not an atomic (the nested `range` needs the adstack option)."""
    qd.init(arch=qd.cpu, offline_cache=False, ad_stack_experimental_enabled=True)
    gradient = qd.compile_ptx(powers.grad, sm="sm_90")
    assert "popc.b32" in gradient and STORE32.search(gradient)
    assert "atom.global.add.f32" not in gradient


@pytest.mark.process
def test_field_kernels_lower_and_assemble(tmp_path: Path) -> None:
    """A kernel over global fields (a struct-for, a vector field, a reduction into a 0-d field)
    lowers to PTX reading each field's pointer from its launch words; on CUDA the shared-element
    atomic stays an atomic."""
    qd.init(arch=qd.cpu, offline_cache=False)
    x = qd.field(qd.f32, shape=64)
    v = qd.Vector.field(3, qd.f32, shape=64)
    tot = qd.field(qd.f32, shape=())

    @qd.kernel
    def k(a: qd.f32):
        for i in x:
            x[i] = a * i
            v[i] += qd.Vector([x[i], 1.0, 2.0])
            tot[None] += x[i]

    ptx = qd.compile_ptx(k, sm="sm_80")
    assert "atom.global.add.f32" in ptx
    ptxas = nvptx_jit.ptxas()
    if ptxas is None:
        return
    for n, module in enumerate(modules(ptx)):
        src = tmp_path / f"fields_{n}.ptx"
        src.write_text(module)
        proc = subprocess.run(
            [ptxas, "-arch=sm_80", str(src), "-o", str(tmp_path / f"fields_{n}.cubin")],
            capture_output=True,
            text=True,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
