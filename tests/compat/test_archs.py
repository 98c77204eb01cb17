"""Quadrants' arch names: every one exists, `qd.cpu` is the host's own CPU arch, `qd.gpu` is the
list of GPU archs, and an arch qdlab has no backend for runs on the CPU with one warning."""

from __future__ import annotations

import logging
import platform

import numpy as np
import pytest

import qdlab as qd
from qdlab.compiler.runtime import cuda as cuda_runtime

NAMES = ("cpu", "gpu", "cuda", "vulkan", "metal", "amdgpu", "x64", "arm64")


@pytest.fixture(autouse=True)
def _reset() -> None:
    yield
    qd.init(arch=qd.cpu, offline_cache=False)


def test_every_quadrants_arch_name_exists() -> None:
    for name in NAMES:
        assert hasattr(qd, name), name
    host = qd.arm64 if platform.machine().lower() in ("arm64", "aarch64") else qd.x64
    assert qd.cpu is host
    assert qd.gpu == [qd.cuda, qd.metal, qd.vulkan, qd.amdgpu]
    assert len({qd.x64, qd.arm64, qd.cuda, qd.vulkan, qd.metal, qd.amdgpu}) == 6
    assert qd.cpu not in (qd.vulkan, qd.metal, qd.amdgpu, qd.cuda)


def test_cfg_arch_is_the_host_arch_and_init_takes_it_back() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    assert qd.cfg.arch == qd.cpu and qd.cfg.arch.name in ("x64", "arm64")
    assert qd.lang.impl.current_cfg().arch == qd.cpu
    assert qd.lang.impl.get_runtime().prog.config().arch == qd.cpu
    qd.init(arch=qd.cfg.arch, offline_cache=False)  # what test_ndarray's default_fp tests do
    assert qd.cfg.arch == qd.cpu
    qd.init(arch=getattr(qd, qd.cfg.arch.name), offline_cache=False)
    assert qd.cfg.arch == qd.cpu


def test_the_core_arch_enum_rebuilds_cfg_arch_from_its_number() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)
    arch = qd._lib.core.Arch(int(qd.cfg.arch))  # how Genesis restarts the runtime (qd_to_torch)
    assert arch is qd.cpu and qd._lib.core.Arch(4) is qd.cuda
    qd.reset()
    qd.init(arch=arch, debug=qd.cfg.debug, offline_cache=False)
    assert qd.cfg.arch == qd.cpu


@pytest.mark.parametrize("arch", ["vulkan", "metal", "amdgpu"])
def test_an_arch_without_a_backend_runs_on_the_cpu_with_one_warning(
    arch: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="qdlab"):
        qd.init(arch=getattr(qd, arch), offline_cache=False)
    warnings = [r.getMessage() for r in caplog.records if r.name == "qdlab"]
    assert len(warnings) == 1 and arch in warnings[0] and "falling back to the CPU" in warnings[0]
    assert qd.cfg.arch == qd.cpu

    @qd.kernel
    def double(a: qd.types.NDArray[qd.i32, 1]):
        for i in range(a.shape[0]):
            a[i] = 2 * a[i]

    a = np.arange(4, dtype=np.int32)
    double(a)
    assert a.tolist() == [0, 2, 4, 6]


@pytest.mark.skipif(cuda_runtime.available(), reason="a CUDA device is present")
def test_gpu_without_a_device_is_the_cpu_with_one_warning(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="qdlab"):
        qd.init(arch=qd.gpu, offline_cache=False)
    warnings = [r.getMessage() for r in caplog.records if r.name == "qdlab"]
    assert len(warnings) == 1 and "cuda, metal, vulkan, amdgpu" in warnings[0]
    assert qd.cfg.arch == qd.cpu


def test_a_list_takes_its_first_available_arch(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="qdlab"):
        qd.init(arch=[qd.vulkan, qd.cpu], offline_cache=False)
    assert qd.cfg.arch == qd.cpu and not [r for r in caplog.records if r.name == "qdlab"]


def test_an_unknown_arch_name_is_refused() -> None:
    with pytest.raises(ValueError, match="must be one of qd.cpu, qd.gpu"):
        qd.init(arch="tpu")


def test_archs_are_the_reference_enum() -> None:
    """Quadrants' `Arch` is an IntEnum (values and `str` measured with quadrants 1.3.3); pytest
    names a test parametrised by one `Arch.x64`, as the reference's tests are named."""
    import enum

    assert isinstance(qd.x64, enum.IntEnum)
    assert [
        (a.name, int(a)) for a in (qd.x64, qd.arm64, qd.cuda, qd.metal, qd.amdgpu, qd.vulkan)
    ] == [
        ("x64", 0),
        ("arm64", 1),
        ("cuda", 4),
        ("metal", 5),
        ("amdgpu", 7),
        ("vulkan", 8),
    ]
    assert str(qd.cuda) == "Arch.cuda" and qd.x64 == 0 and qd.Arch.x64 is qd.x64
