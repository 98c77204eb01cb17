"""Backend names, as Quadrants has them, and which of qdlab's two targets each one runs on.

Quadrants names eight archs, and `qd.python` (its PyTorch-backed interpreter). `qd.cpu` is the
host's own CPU arch (`qd.x64` or `qd.arm64`, the very same object), and `qd.gpu` is a list of
the GPU archs, tried in order. qdlab compiles for the host CPU and for CUDA: `qd.init(arch=...)`
resolves every name to one of those two targets (the `arch` of `Config`), falling back to the
CPU, with one warning, for an arch it has no backend for.
"""

from __future__ import annotations

import enum
import logging
import platform

from ..compiler.runtime import cuda as cuda_runtime

log = logging.getLogger("qdlab")


class Arch(enum.IntEnum):
    """A backend name accepted by `qd.init(arch=...)`: Quadrants' enum, with its members' names and
    values (`qd.x64.name == "x64"`, `qd.x64 == 0`, `str(qd.x64) == "Arch.x64"`, which is also how
    pytest names a test parametrised by it)."""

    x64 = 0
    arm64 = 1
    python = 3
    cuda = 4
    metal = 5
    amdgpu = 7
    vulkan = 8

    def __repr__(self) -> str:
        return f"qd.{self.name}"

    def __str__(self) -> str:
        return f"Arch.{self.name}"


x64, arm64, python, cuda, vulkan, metal, amdgpu = (
    Arch.x64,
    Arch.arm64,
    Arch.python,
    Arch.cuda,
    Arch.vulkan,
    Arch.metal,
    Arch.amdgpu,
)
cpu = arm64 if platform.machine().lower() in ("arm64", "aarch64") else x64
"""The host's CPU arch: `qd.cpu is qd.x64` on an x86-64 machine, as in Quadrants."""
gpu = [cuda, metal, vulkan, amdgpu]
"""Quadrants' `qd.gpu`: the GPU archs, the first one available is used."""
ALL = {a.name: a for a in (x64, arm64, python, cuda, vulkan, metal, amdgpu)}
TARGETS = ("cpu", "cuda")
"""What `Config.arch` holds: the host CPU or CUDA."""


def arch_of(target: str) -> Arch:
    """The Quadrants arch a target is reported as (`qd.cfg.arch`): the host's CPU arch, or
    CUDA."""
    return cuda if target == "cuda" else cpu


def target_of(arch: object) -> str:
    """The target `qd.init(arch=arch)` runs on: "cpu" or "cuda".

    `arch` is an `Arch`, its name, or a list of them (`qd.gpu`), tried in order. An arch qdlab has
    no backend for, a CPU arch that is not the host's, or a list holding nothing available, falls
    back to the host CPU with one warning naming what was asked for, as in Quadrants; so does
    `qd.cuda` in a process without a CUDA device. (A kernel given `arch="cuda"` itself, the
    `%%qdkernel --arch cuda` cell, stays CUDA: without a device, its first compile says so.)
    """
    if arch is None:
        return "cpu"
    if arch == "gpu":
        arch = gpu
    if isinstance(arch, (list, tuple)):
        archs = [_named(a) for a in arch]
        for a in archs:
            if a == cpu or (a == cuda and cuda_runtime.available()):
                return arch_target(a)
        log.warning(
            "qd.init: arch=[%s] is not available in qdlab, falling back to the CPU (%s)",
            ", ".join(a.name for a in archs),
            cpu.name,
        )
        return "cpu"
    a = _named(arch)
    if a == cuda and not cuda_runtime.available():  # Quadrants falls back too (and warns)
        log.warning(
            "qd.init: arch=cuda is not available (no CUDA device in this process), falling back "
            "to the CPU (%s)",
            cpu.name,
        )
        return "cpu"
    if a in (cpu, cuda):
        return arch_target(a)
    log.warning(
        "qd.init: qdlab has no %s backend, falling back to the CPU (%s)", _label(a), cpu.name
    )
    return "cpu"


def arch_target(a: Arch) -> str:
    return "cuda" if a == cuda else "cpu"


def _label(a: Arch) -> str:
    return f"{a.name} (this host is {cpu.name})" if a in (x64, arm64) else a.name


def _named(arch: object) -> Arch:
    if isinstance(arch, Arch):
        return arch
    name = str(arch)
    if name == "cpu":
        return cpu
    if name in ALL:
        return ALL[name]
    raise ValueError(
        f"qd.init(arch=...) must be one of qd.{', qd.'.join(['cpu', 'gpu', *ALL])}, not {arch!r}"
    )
