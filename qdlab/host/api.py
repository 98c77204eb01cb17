"""The top-level functions of `qdlab`: init, explain, cache control, and `qd.cfg`."""

from __future__ import annotations

import dataclasses
import logging
import warnings

from ..compiler.cache import CacheStats, persist
from ..compiler.codegen.targets import CudaTarget
from ..compiler.pipeline import compile_kernel
from ..compiler.report.explain import KernelReport
from ..compiler.runtime import cuda as cuda_runtime
from ..compiler.runtime import tiers
from ..core import environ, keys
from ..core.config import Config, make_config
from ..core.inert import INERT, RENAMED
from . import archs, pyquadrants, python_core, state, struct_args
from .kernel import Kernel

log = logging.getLogger("qdlab")


@dataclasses.dataclass(frozen=True)
class SpecialConfig:
    """What `qd.init(_test_mode=True)` returns, as Quadrants' does: the options of its Python
    side, as this `qd.init` set them."""

    log_level: str
    gdb_trigger: bool
    short_circuit_operators: bool
    print_full_traceback: bool
    unrolling_limit: int


def init(arch: object = None, **options: object) -> SpecialConfig | None:
    """Start (or restart) qdlab with these settings; kernels recompile under them on their next
    call.

    `arch` is any of Quadrants' arch names (`qd.cpu`, `qd.gpu`, `qd.cuda`, `qd.vulkan`...; see
    `archs.target_of` for the fallback to the CPU). Every option Quadrants' `init` takes is
    accepted; those with no effect here are recorded (`qd.cfg.<name>`) and listed by
    `%qdlab config`. The `QD_*` environment variables set options as in Quadrants
    (`core/environ.py`); `require_version` is checked against the Quadrants version qdlab
    implements.
    """
    if options.get("require_version") is not None:
        python_core.check_require_version(str(options["require_version"]))
    options, overridden = environ.read(options)
    for line in overridden:
        log.warning(line)
    config = make_config(arch=archs.target_of(environ.arch(arch)), **options)
    _check_caching(config)
    _restart()
    state.init(config)
    if config.option("_test_mode"):
        return SpecialConfig(
            log_level=config.log_level or "info",
            gdb_trigger=bool(config.option("gdb_trigger")),
            short_circuit_operators=bool(config.option("short_circuit_operators")),
            print_full_traceback=bool(config.option("print_full_traceback")),
            unrolling_limit=config.unrolling_limit,
        )
    return None


def _check_caching(config: Config) -> None:
    """What `qd.init` says of caching beside IR dumps and IR loads, as Quadrants says it: a
    kernel served from the cache is not compiled, so its IR is neither shown nor replaced."""
    if (
        (config.print_ir or config.dump_ir)
        and config.offline_cache
        and log.isEnabledFor(logging.WARNING)
    ):
        warnings.warn(
            "Even with print_ir/QD_DUMP_IR enabled, already cached kernels won't get their IRs "
            "shown. You might want to disable caching with offline_cache=False. "
            "[warning_code=DUMP_IR_CACHE_MISMATCH]",
            UserWarning,
            stacklevel=3,
        )
    arch = archs.arch_of(config.arch).name
    src_ll_cache = bool(config.option("src_ll_cache"))
    if environ.check_ir_load_against_caching(arch, config.offline_cache, src_ll_cache):
        log.warning(
            "qdlab does not read replacement IR or PTX (QD_LOAD_IR, QUADRANTS_LOAD_PTX): kernels "
            "compile from their source"
        )


def reset() -> None:
    _restart()
    state.init()


def clock_freq_hz() -> float:
    """`qd.clock_freq_hz()`: the nominal clock of the GPU in Hz under `arch=qd.cuda`; on other
    targets a NotImplementedError, as in Quadrants."""
    arch = state.config().arch
    if arch == "cuda" and cuda_runtime.available():
        cupy = cuda_runtime.require()
        return float(cupy.cuda.Device().attributes["ClockRate"] * 1000)  # kHz
    raise NotImplementedError(f"clock_freq_hz not implemented for arch {arch}")


def _restart() -> None:
    """What `qd.init` and `qd.reset` drop: the runtime object, the frozen dataclass plans."""
    pyquadrants.restart()
    struct_args.frozen_plans.clear()


class Settings:
    """`qd.cfg` (also `qd.lang.impl.current_cfg()`): the active settings under Quadrants' option
    names, read live, so it stays right across `qd.init` calls. `.arch` is the Quadrants arch the
    kernels run on (`qd.x64`, never the `qd.cpu` alias's own name); setting an attribute changes
    that one option, as in Quadrants."""

    def __getattr__(self, name: str) -> object:
        if name == "arch":
            return archs.arch_of(state.config().arch)
        try:
            return state.config().option(name)
        except KeyError:
            raise AttributeError(f"qd.cfg has no option `{name}`") from None

    def __setattr__(self, name: str, value: object) -> None:
        if name == "arch":
            value = archs.target_of(value)
        state.replace(state.config().with_option(name, value))

    def __repr__(self) -> str:
        return f"<qd.cfg arch={self.arch!r} {state.config().as_dict()}>"


cfg = Settings()


def dump_compile_config() -> None:
    """`qd.dump_compile_config()`: prints every option `qd.cfg` answers, `name=value` a line in
    name order, as Quadrants prints its compile config (its settings and the options qdlab keeps
    without effect; qdlab's own settings under their qdlab names)."""
    names = sorted(set(state.config().as_dict()) | set(RENAMED) | set(INERT))
    lines = [f"{n}={getattr(cfg, n)}" for n in names if not n.startswith("_")]
    print("\n".join(lines))


def sync() -> None:
    """Wait until the GPU has run every queued launch (on the CPU a launch finishes before it
    returns)."""
    pyquadrants.current.materialize()
    if state.config().arch == "cuda":
        cuda_runtime.sync()


def explain(kernel: Kernel) -> KernelReport:
    """The report of `kernel`'s latest compile: mode, fallback, constructs, slices, cache status,
    stages."""
    target = getattr(kernel, "_primal", kernel)
    if not isinstance(target, Kernel):
        raise TypeError(f"qd.explain needs a @qd.kernel, not {type(kernel).__name__}")
    latest = target.latest if target.latest is not None else target.compile()
    report = latest.report
    report.specializations = list(target.specializations)
    return report


def clear_cache() -> None:
    """Empty the construct cache (memory and disk), after the objects still being optimised in
    the background (`compiler/runtime/tiers.py`) are in and the memos' queued writes are written
    (`persist.later`): none of them is stored after."""
    _settle()
    state.cache().clear()


def cache_stats() -> CacheStats:
    """The construct cache's figures, counting the objects still being optimised in the
    background and the memos' queued writes (they are waited for)."""
    _settle()
    return state.cache().stats()


def _settle() -> None:
    tiers.settle_all()  # an optimised object lands in the cache through the memos' writer too
    persist.flush()


def compile_ptx(kernel: Kernel, *arg_types: object, sm: str = "sm_80") -> str:
    """The PTX `kernel` compiles to under `arch=qd.cuda`, one module per construct, for compute
    capability `sm`.

    Needs no GPU: the one pipeline runs for a CUDA target that builds but never loads. Array
    parameters take dtype and ndim from their annotations unless `arg_types` gives an `ArrayType`
    (or a dtype for a scalar) per parameter, as `kernel.compile(...)` does.
    """
    target = getattr(kernel, "_primal", kernel)
    if not isinstance(target, Kernel):
        raise TypeError(f"qd.compile_ptx needs a @qd.kernel, not {type(kernel).__name__}")
    cuda = CudaTarget(sm, device=False)
    spec = target.spec(target.declared_signature(arg_types, "for qd.compile_ptx"), {})
    config = dataclasses.replace(target.config(), arch="cuda")
    built = compile_kernel(spec, config, None, cuda).built
    out = []
    for index, b in enumerate(built):
        tasks = ", ".join(
            f"{keys.symbol(b.prepared.prefix, k)} ({t.kind}, block {t.block_dim})"
            for k, t in enumerate(b.plan.tasks)
        )
        out.append(
            f"// qdlab: kernel `{target.name}`, unit {index} of {len(built)} for {cuda.sm}; tasks: "
            f"{tasks}\n"
            f"{b.obj.decode()}"  # type: ignore[union-attr]
        )
    return "\n".join(out)


pyquadrants.API.update(cfg=cfg, sync=sync)
