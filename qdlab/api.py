"""The top-level functions of `qdlab`: init, explain, cache control, and arch names."""

from __future__ import annotations

from dataclasses import dataclass

from . import state
from .compiler.cache import CacheStats
from .compiler.explain import KernelReport
from .kernel import Kernel


@dataclass(frozen=True)
class Arch:
    """A backend name accepted by `qd.init(arch=...)`."""

    name: str

    def __repr__(self) -> str:
        return f"qd.{self.name}"


cpu, x64, arm64, cuda, gpu = Arch("cpu"), Arch("x64"), Arch("arm64"), Arch("cuda"), Arch("gpu")


def init(arch: Arch | str = cpu, **options: object) -> None:
    """Start (or restart) qdlab with these settings; kernels recompile under them on their next call."""
    state.init(arch=arch, **options)


def reset() -> None:
    state.init()


def sync() -> None:
    """Launches finish before they return on the CPU; kept for Quadrants compatibility."""


def explain(kernel: Kernel) -> KernelReport:
    """The report of `kernel`'s latest compile: mode, fallback, constructs, slices, cache status, stages."""
    target = getattr(kernel, "_primal", kernel)
    if not isinstance(target, Kernel):
        raise TypeError(f"qd.explain needs a @qd.kernel, not {type(kernel).__name__}")
    if target.latest is None:
        target.compile()
    return target.latest.report  # type: ignore[union-attr]


def clear_cache() -> None:
    """Empty the construct cache (memory and disk)."""
    state.cache().clear()


def cache_stats() -> CacheStats:
    return state.cache().stats()


def compile_ptx(kernel: Kernel, *arg_types: object) -> str:
    raise NotImplementedError("PTX output arrives with the CUDA backend")
