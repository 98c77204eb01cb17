"""CUDA runs: the oracle corpus on the GPU against the CPU, device arrays by pointer, errors from
the device.

Marked `gpu` (excluded by default; run with `-m gpu`) and skipped when CuPy sees no device. Integers
must be identical to the CPU's and floats within 1e-6 relative (libdevice and the host's libm may
differ in the last bit of a transcendental; everything else is IEEE arithmetic without contraction
on both).
"""

from __future__ import annotations

import traceback
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from cuda_oracle import load_harness

import qdlab
from qdlab.compiler import cuda_runtime
from qdlab.compiler.errors import QdError, QdRuntimeError
from qdlab.ndarray import Ndarray

CASE_NAMES = load_harness().case_names()
RTOL, ATOL = 1e-6, 1e-7
gpu = pytest.mark.skipif(
    not cuda_runtime.available(), reason="no CUDA device (cupy.is_available() is False)"
)


def test_no_device_error_is_clear() -> None:
    if cuda_runtime.available():
        pytest.skip("a CUDA device is present")
    qdlab.init(arch=qdlab.cuda)
    try:

        @qdlab.kernel
        def one(x: qdlab.types.NDArray[qdlab.f32, 1]):
            for i in range(x.shape[0]):
                x[i] = 1.0

        with pytest.raises(QdError, match="no CUDA device"):
            one(np.zeros(4, np.float32))
    finally:
        qdlab.init(arch=qdlab.cpu)


def host_arrays() -> ModuleType:
    """qdlab as the harness's `qd`, with `qd.ndarray` kept in host memory (copied in and out per
    launch)."""
    backend = ModuleType("qdlab_cuda_host")
    backend.__dict__.update({k: v for k, v in vars(qdlab).items() if not k.startswith("__")})
    backend.ndarray = Ndarray  # type: ignore[attr-defined]
    return backend


_results: dict[str, dict[str, Any]] = {}


def results(mode: str) -> dict[str, Any]:
    """Every oracle case on the CPU, or on the GPU (`qd.init(arch=qd.cuda)`) with host or device
    arrays."""
    if mode not in _results:
        harness = load_harness()
        qdlab.init(arch=qdlab.cpu if mode == "cpu" else qdlab.cuda)
        backend = host_arrays() if mode == "host" else qdlab
        kernels = harness.load_kernels(backend, f"oracle_kernels_{mode}")
        out: dict[str, Any] = {}
        for case in kernels.CASES:
            try:
                out[case.name] = harness.run_case(backend, case)
            except Exception:  # noqa: BLE001 - reported by the case's own test
                out[case.name] = traceback.format_exc()
        _results[mode] = out
        qdlab.init(arch=qdlab.cpu)
    return _results[mode]


@pytest.mark.gpu
@gpu
@pytest.mark.parametrize("mode", ["host", "device"])
@pytest.mark.parametrize("name", CASE_NAMES)
def test_oracle_matches_cpu(name: str, mode: str) -> None:
    want, got = results("cpu")[name], results(mode)[name]
    assert not isinstance(want, str), f"CPU raised on {name}:\n{want}"
    assert not isinstance(got, str), f"CUDA ({mode} arrays) raised on {name}:\n{got}"
    assert sorted(got) == sorted(want)
    for key, ref in want.items():
        actual = np.asarray(got[key])
        if ref.dtype.kind in "biu":
            np.testing.assert_array_equal(actual, ref, err_msg=f"{name}/{key}")
        else:
            np.testing.assert_allclose(actual, ref, rtol=RTOL, atol=ATOL, err_msg=f"{name}/{key}")


@pytest.mark.gpu
@gpu
def test_cupy_arrays_pass_by_pointer() -> None:
    import cupy

    @qdlab.kernel
    def saxpy(
        a: qdlab.f32, x: qdlab.types.NDArray[qdlab.f32, 1], y: qdlab.types.NDArray[qdlab.f32, 1]
    ):
        for i in range(x.shape[0]):
            y[i] = a * x[i] + y[i]

    x = cupy.arange(1 << 20, dtype=cupy.float32)
    y = cupy.ones(1 << 20, dtype=cupy.float32)
    qdlab.init(arch=qdlab.cuda)
    saxpy(2.0, x, y)
    np.testing.assert_array_equal(y.get(), 2.0 * np.arange(1 << 20, dtype=np.float32) + 1.0)


@pytest.mark.gpu
@gpu
def test_reduction_over_a_large_range() -> None:
    @qdlab.kernel
    def count(x: qdlab.types.NDArray[qdlab.i32, 1]) -> qdlab.i64:
        n = qdlab.i64(0)
        for i in range(x.shape[0]):
            n += qdlab.i64(x[i])
        return n

    qdlab.init(arch=qdlab.cuda)
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
