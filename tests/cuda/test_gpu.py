"""CUDA runs: the oracle corpus on the GPU against the CPU, device arrays by pointer, errors from the device.

Marked `gpu` (excluded by default; run with `-m gpu`) and skipped when CuPy sees no device. Integers must be
identical to the CPU's and floats within 1e-6 relative (libdevice and the host's libm may differ in the last
bit of a transcendental; everything else is IEEE arithmetic without contraction on both).
"""

from __future__ import annotations

import traceback
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from cuda_oracle import load_harness

import qdlab
from qdlab.compiler import cuda
from qdlab.compiler.errors import QdError, QdRuntimeError

CASE_NAMES = load_harness().case_names()
RTOL, ATOL = 1e-6, 1e-7
gpu = pytest.mark.skipif(not cuda.available(), reason="no CUDA device (cupy.is_available() is False)")


def test_no_device_error_is_clear() -> None:
    if cuda.available():
        pytest.skip("a CUDA device is present")
    with pytest.raises(QdError, match="no CUDA device"):
        cuda.require()


def cuda_backend(device_arrays: bool) -> ModuleType:
    """qdlab as the harness's `qd`, with kernels launched by `cuda.launch` (and `qd.ndarray` on the device)."""
    backend = ModuleType(f"qdlab_cuda_{'device' if device_arrays else 'host'}")
    backend.__dict__.update({k: v for k, v in vars(qdlab).items() if not k.startswith("__")})

    def kernel(fn: Any = None, **options: object) -> Any:
        if fn is None:
            return kernel
        k = qdlab.kernel(fn)

        def run(*args: object) -> object:
            return cuda.launch(k, *args)

        run.__name__ = k.name
        run.kernel = k  # type: ignore[attr-defined]
        return run

    backend.kernel = kernel  # type: ignore[attr-defined]
    backend.sync = cuda.sync  # type: ignore[attr-defined]
    if device_arrays:
        backend.ndarray = cuda.ndarray  # type: ignore[attr-defined]
    return backend


_results: dict[str, dict[str, Any]] = {}


def results(mode: str) -> dict[str, Any]:
    if mode not in _results:
        harness = load_harness()
        qdlab.init(arch=qdlab.cpu)
        backend = qdlab if mode == "cpu" else cuda_backend(mode == "device")
        kernels = harness.load_kernels(backend, f"oracle_kernels_{mode}")
        out: dict[str, Any] = {}
        for case in kernels.CASES:
            try:
                out[case.name] = harness.run_case(backend, case)
            except Exception:  # noqa: BLE001 - reported by the case's own test
                out[case.name] = traceback.format_exc()
        _results[mode] = out
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
    def saxpy(a: qdlab.f32, x: qdlab.types.NDArray[qdlab.f32, 1], y: qdlab.types.NDArray[qdlab.f32, 1]):
        for i in range(x.shape[0]):
            y[i] = a * x[i] + y[i]

    x = cupy.arange(1 << 20, dtype=cupy.float32)
    y = cupy.ones(1 << 20, dtype=cupy.float32)
    cuda.launch(saxpy, 2.0, x, y)
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

    x = cuda.ndarray(qdlab.i32, 10_000_000)
    x.fill(3)
    assert cuda.launch(count, x) == 30_000_000


@pytest.mark.gpu
@gpu
def test_debug_bounds_check_raises_at_the_line() -> None:
    @qdlab.kernel
    def shift(x: qdlab.types.NDArray[qdlab.f32, 1], y: qdlab.types.NDArray[qdlab.f32, 1]):
        for i in range(x.shape[0]):
            y[i] = x[i + 1]

    qdlab.init(arch=qdlab.cpu, debug=True)
    try:
        with pytest.raises(QdRuntimeError, match="out of range"):
            cuda.launch(shift, np.zeros(8, np.float32), np.zeros(8, np.float32))
    finally:
        qdlab.init(arch=qdlab.cpu)
