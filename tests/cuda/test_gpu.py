"""CUDA runs: the oracle corpus on the GPU against the CPU (split and whole kernel, host and device
arrays), device arrays by pointer, errors from the device, kernels without arguments or work.

Marked `gpu` (excluded by default; run with `-m gpu`) and skipped when CuPy sees no device. Each
oracle test runs its one case (the CPU's result is computed once per case), so a failing or hung
case is named by its own test. Integers must be identical to the CPU's and floats within 1e-6
relative (`cuda_oracle.assert_same`). `bench/gpu_check.sh` runs these on a GPU machine.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np
import pytest
from cuda_oracle import assert_same, load_harness

import qdlab
from qdlab.compiler.runtime import cuda as cuda_runtime
from qdlab.core.errors import QdRuntimeError
from qdlab.host.ndarray import Ndarray

HARNESS = load_harness()
CASE_NAMES = HARNESS.case_names()
gpu = pytest.mark.skipif(
    not cuda_runtime.available(), reason="no CUDA device (cupy.is_available() is False)"
)
MODES = {"device": {}, "whole": {"per_offload": False}, "host": {}}
"""How a case runs on the GPU: `qd.ndarray`s on the device (split per construct), the same with
the whole kernel as one unit (`per_offload=False`), and host ndarrays copied in and out around
each launch."""


def test_init_cuda_without_a_device_falls_back_to_the_cpu(caplog) -> None:
    """As in Quadrants (`Arch=[Arch.cuda] is not supported, falling back to CPU`): a program that
    asks for qd.cuda runs, on the CPU, with one warning."""
    if cuda_runtime.available():
        pytest.skip("a CUDA device is present")
    with caplog.at_level("WARNING"):
        qdlab.init(arch=qdlab.cuda)
    try:
        assert "falling back to the CPU" in caplog.text
        assert qdlab.cfg.arch == qdlab.cpu

        @qdlab.kernel
        def one(x: qdlab.types.NDArray[qdlab.f32, 1]):
            for i in range(x.shape[0]):
                x[i] = 1.0

        x = np.zeros(4, np.float32)
        one(x)
        assert x.tolist() == [1.0] * 4
    finally:
        qdlab.init(arch=qdlab.cpu)


def host_arrays() -> ModuleType:
    """qdlab as the harness's `qd`, with `qd.ndarray` kept in host memory (copied in and out per
    launch)."""
    backend = ModuleType("qdlab_cuda_host")
    backend.__dict__.update({k: v for k, v in vars(qdlab).items() if not k.startswith("__")})
    backend.ndarray = Ndarray  # type: ignore[attr-defined]
    return backend


@pytest.fixture
def on_gpu() -> Any:
    qdlab.init(arch=qdlab.cuda)
    yield
    qdlab.init(arch=qdlab.cpu)


@pytest.mark.gpu
@gpu
def test_cupy_arrays_pass_by_pointer(on_gpu: None) -> None:
    import cupy

    @qdlab.kernel
    def saxpy(
        a: qdlab.f32, x: qdlab.types.NDArray[qdlab.f32, 1], y: qdlab.types.NDArray[qdlab.f32, 1]
    ):
        for i in range(x.shape[0]):
            y[i] = a * x[i] + y[i]

    x = cupy.arange(1 << 20, dtype=cupy.float32)
    y = cupy.ones(1 << 20, dtype=cupy.float32)
    saxpy(2.0, x, y)
    np.testing.assert_array_equal(y.get(), 2.0 * np.arange(1 << 20, dtype=np.float32) + 1.0)


@pytest.mark.gpu
@gpu
def test_kernels_without_arguments_or_work(on_gpu: None) -> None:
    """A kernel with no parameter still gets a words buffer, one with no construct runs nothing:
    the launcher once packed zero bytes into a one-word buffer and took the max of no units."""
    total = qdlab.field(qdlab.i32, shape=())

    @qdlab.kernel
    def answer() -> qdlab.i32:
        return 42

    @qdlab.kernel
    def nothing():
        pass

    @qdlab.kernel
    def count():
        for i in range(1000):
            total[None] += 1

    assert answer() == 42
    nothing()
    count()
    assert total[None] == 1000


@pytest.mark.gpu
@gpu
def test_device_ndarray_host_writes(on_gpu: None) -> None:
    """`fill` and item assignment of a vector ndarray on the device take a qd.Vector (CuPy refuses
    a non-scalar NumPy value)."""
    v = qdlab.ndarray(qdlab.math.vec3, 4)
    v.fill(qdlab.Vector([1.0, 2.0, 3.0]))
    v[2] = qdlab.Vector([7.0, 8.0, 9.0])
    s = qdlab.ndarray(qdlab.i32, (2, 3))
    s.fill(5)
    s[1, 2] = -1
    want = np.array([[1, 2, 3], [1, 2, 3], [7, 8, 9], [1, 2, 3]], np.float32)
    np.testing.assert_array_equal(v.to_numpy(), want)
    np.testing.assert_array_equal(s.to_numpy(), [[5, 5, 5], [5, 5, -1]])


@pytest.mark.gpu
@gpu
def test_reduction_over_a_large_range(on_gpu: None) -> None:
    @qdlab.kernel
    def count(x: qdlab.types.NDArray[qdlab.i32, 1]) -> qdlab.i64:
        n = qdlab.i64(0)
        for i in range(x.shape[0]):
            n += qdlab.i64(x[i])
        return n

    x = qdlab.ndarray(qdlab.i32, 10_000_000)
    x.fill(3)
    assert count(x) == 30_000_000


@pytest.mark.gpu
@gpu
def test_debug_bounds_check_raises_at_the_line() -> None:
    @qdlab.kernel
    def shift(x: qdlab.types.NDArray[qdlab.f32, 1], y: qdlab.types.NDArray[qdlab.f32, 1]):
        for i in range(x.shape[0]):
            y[i] = x[i + 1]

    qdlab.init(arch=qdlab.cuda, debug=True)
    try:
        with pytest.raises(QdRuntimeError, match="out of range"):
            shift(np.zeros(8, np.float32), np.zeros(8, np.float32))
    finally:
        qdlab.init(arch=qdlab.cpu)


@pytest.mark.gpu
@gpu
def test_gradient_kernel_on_the_gpu_matches_the_cpu() -> None:
    @qdlab.kernel
    def square(
        x: qdlab.types.ndarray(qdlab.f32, 1, needs_grad=True),
        y: qdlab.types.ndarray(qdlab.f32, 1, needs_grad=True),
    ):
        for i in range(x.shape[0]):
            y[i] = x[i] * x[i]

    grads = []
    for arch in (qdlab.cpu, qdlab.cuda):
        qdlab.init(arch=arch)
        x = qdlab.ndarray(qdlab.f32, 1000, needs_grad=True)
        y = qdlab.ndarray(qdlab.f32, 1000, needs_grad=True)
        x.from_numpy(np.linspace(-1, 1, 1000, dtype=np.float32))
        y.grad.fill(1.0)
        square(x, y)
        square.grad(x, y)
        grads.append(x.grad.to_numpy())
    qdlab.init(arch=qdlab.cpu)
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6)
    np.testing.assert_allclose(grads[0], 2 * np.linspace(-1, 1, 1000, dtype=np.float32), rtol=1e-6)


def forward_duals(arch: object, xs: np.ndarray) -> np.ndarray:
    """y.dual of `y[i] = x[i]**2 + sin(x[i])` under `qd.ad.FwdMode` with x seeded by ones."""
    qdlab.init(arch=arch)
    n = len(xs)
    try:
        x = qdlab.field(qdlab.f32, shape=n, needs_dual=True)
        y = qdlab.field(qdlab.f32, shape=n, needs_dual=True)

        @qdlab.kernel
        def f():
            for i in range(n):
                y[i] = x[i] * x[i] + qdlab.sin(x[i])

        x.from_numpy(xs)
        with qdlab.ad.FwdMode(loss=y, param=x, seed=[1.0] * n):
            f()
        return y.dual.to_numpy()
    finally:
        qdlab.init(arch=qdlab.cpu)


@pytest.mark.gpu
@gpu
def test_forward_mode_duals_on_the_gpu_match_the_cpu() -> None:
    """Under `qd.ad.FwdMode` a field's dual takes its gradient's place in the launch: the CUDA
    launcher once passed the gradient (none here), so the duals stayed zero."""
    xs = np.linspace(0.1, 0.9, 8, dtype=np.float32)
    cpu, cuda = forward_duals(qdlab.cpu, xs), forward_duals(qdlab.cuda, xs)
    np.testing.assert_allclose(cuda, cpu, rtol=1e-6)
    np.testing.assert_allclose(cpu, 2 * xs + np.cos(xs), rtol=1e-5)


_kernels: dict[str, tuple[ModuleType, ModuleType]] = {}
_cpu: dict[str, Any] = {}


def run_case(mode: str, name: str) -> dict[str, Any]:
    """One oracle case on the CPU (`mode` "cpu") or on the GPU in one of MODES."""
    qdlab.init(arch=qdlab.cpu if mode == "cpu" else qdlab.cuda, **MODES.get(mode, {}))
    try:
        if mode not in _kernels:
            backend = host_arrays() if mode == "host" else qdlab
            _kernels[mode] = (backend, HARNESS.load_kernels(backend, f"oracle_kernels_{mode}"))
        backend, kernels = _kernels[mode]
        case = next(c for c in kernels.CASES if c.name == name)
        return HARNESS.run_case(backend, case)
    finally:
        qdlab.init(arch=qdlab.cpu)


@pytest.mark.gpu
@gpu
@pytest.mark.parametrize(("mode", "name"), [(m, n) for m in MODES for n in CASE_NAMES])
def test_oracle_matches_cpu(mode: str, name: str) -> None:
    if name not in _cpu:
        _cpu[name] = run_case("cpu", name)
    assert_same(_cpu[name], run_case(mode, name), f"{name} ({mode})")
