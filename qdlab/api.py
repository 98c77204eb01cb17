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


def compile_ptx(kernel: Kernel, *arg_types: object, sm: str = "sm_80") -> str:
    """The PTX `kernel` compiles to under `arch=qd.cuda`, one module per construct, for compute capability `sm`.

    Needs no GPU. Array parameters take dtype and ndim from their annotations unless `arg_types` gives an
    `ArrayType` (or a dtype for a scalar) per parameter, as `kernel.compile(...)` does.
    """
    import dataclasses

    from .compiler import cuda, ir
    from .compiler.codegen.nvptx_jit import sm_number
    from .compiler.errors import QdTypeError
    from .compiler.pipeline import KernelSpec
    from .compiler.types import ArrayType
    from .lang import ArrayAnnotation, Template

    target = getattr(kernel, "_primal", kernel)
    if not isinstance(target, Kernel):
        raise TypeError(f"qd.compile_ptx needs a @qd.kernel, not {type(kernel).__name__}")
    sm = f"sm_{sm_number(sm)}"
    given = list(arg_types) + [None] * (len(target.annotations) - len(arg_types))
    params = []
    for name, ann, t in zip(target.param_names, target.annotations, given):
        t = t or ann
        if isinstance(t, ArrayAnnotation):
            if t.dtype is None or t.ndim is None:
                raise QdTypeError(f"kernel `{target.name}`: parameter `{name}` needs dtype and ndim for "
                                  "qd.compile_ptx; annotate it or pass its type.")
            t = ArrayType(t.dtype, t.ndim, bool(t.needs_grad), t.boundary)
        if t is Template:
            raise QdTypeError(f"kernel `{target.name}`: template parameter `{name}` needs a value.")
        params.append(ir.Param(name, t))
    config = dataclasses.replace(state.config(), arch="cuda")
    spec = KernelSpec(target.fn, target.name, params, target.returns, {}, target.autodiff)
    return cuda.ptx_text(cuda.kernel_units(spec, config, sm), target.name, sm)
