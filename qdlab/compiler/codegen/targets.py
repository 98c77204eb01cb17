"""Targets as data: what a backend supplies to the one pipeline.

A target gives the parts of every cache key that depend on it (`parts`), its task emitter (`emit`: a
unit's IR and offload plan to LLVM IR text), its object step (`build`: LLVM IR text to a native
object or to PTX), its loader (`load` and `functions`: objects into the process or onto the device,
then the unit's task functions) and its launcher. The pipeline calls these and nothing else of a
backend; a new backend is a new class here with the same methods.

LLVM (and CuPy) are imported inside the methods: a process whose kernels all come from the cache
never builds LLVM IR, and one that only inspects PTX never needs a GPU.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ...core import keys
from ...core.config import sm_number
from ...core.errors import QdError
from .. import ir, runtime
from ..runtime import cuda as cuda_runtime
from ..runtime import tiers
from . import driver, elf, host, preload, server
from .offload import Plan

if TYPE_CHECKING:
    from ..cache import BinaryCache

POOLED = 4
"""Fewer units than this compile in the calling process (`codegen/pool.py` uses no worker for
them either)."""
Objects = list[tuple[bytes, float]]
"""What `build` gives: per unit, its object (or PTX) and the seconds LLVM took."""
_TASKS: dict[str, runtime.Tasks] = {}
"""The task functions of each unit loaded on the CPU, by name (`CpuTarget.functions`)."""
_DRIVER: list[Callable[..., int]] = []
"""The task driver of this process, once loaded (`CpuTarget.driver`)."""


class CpuTarget:
    """The host CPU: native objects, linked into this process by qdlab's loader (`codegen/elf.py`)
    or, for what it refuses, MCJIT; launched through ctypes."""

    arch = "cpu"

    def parts(self) -> tuple[str, ...]:
        return host.parts()

    def starting(self) -> None:
        """A compile is starting: LLVM's library is put in memory by a thread while the front end
        works (`codegen/preload.py`), unless a compile server is there to build what it needs
        (`codegen/server.py`)."""
        if not server.listening():
            preload.start()

    def keep_warm(self) -> None:
        """This process compiled with llvmlite's binding and keeps objects on disk: a compile
        server is started as it exits, for the next process that must compile."""
        if "llvmlite.binding" in sys.modules:
            server.start_at_exit()

    def emit(
        self, kernel: ir.Kernel, plan: Plan, prefix: str, debug: bool, lines: bool = False
    ) -> str:
        """A unit's LLVM IR; with `lines` (the views only), each instruction names its source
        line."""
        from . import llvm  # lazy: llvmlite.ir

        triple, layout = server.hello() or _host_layout()
        return str(llvm.emit_module(kernel, plan, prefix, debug, triple, layout, lines=lines)[0])

    def build(
        self,
        texts: Iterable[str],
        count: int,
        opt: int,
        on_done: Callable[[int], None] | None = None,
    ) -> Objects:
        """Objects for `count` texts, taken from `texts` as they are made (the pool starts on the
        first ones while the rest are emitted). A few are compiled here, without importing the
        pool (`multiprocessing`: ~25 ms of a new process's first edit)."""
        if count < POOLED:
            out = []
            for k, text in enumerate(texts):
                out.append(compile_one(text, opt))
                if on_done is not None:
                    on_done(k)
            return out
        from . import pool  # lazy: llvmlite's binding and multiprocessing

        pool.warm(opt)
        return pool.compile_many(texts, count, opt, on_done)

    def build_quick(
        self,
        texts: Iterable[str],
        count: int,
        opt: int,
        on_done: Callable[[int], None] | None = None,
    ) -> tuple[Objects, list] | None:
        """Tiered compiles (`tiers.py`): quick objects for the texts now, and per text the future
        of its object at level `opt` from the worker pool when it is there or this compile starts
        it (POOLED units or more); else None (`tiers.watch` optimises it in a thread once the
        compile has loaded everything: LLVM runs one call at a time). None instead of the pair
        when tiering is off: build them at `opt`."""
        if opt == tiers.QUICK or not tiers.enabled():
            return None
        started = sys.modules.get("qdlab.compiler.codegen.pool")  # not imported: not started
        pooled = count >= POOLED or (started is not None and started.started())
        if pooled:
            from . import pool  # lazy: multiprocessing

            pool.warm(opt)
        out, later = [], []
        for k, text in enumerate(texts):
            future = pool.submit(text, opt) if pooled else None  # the worker starts on it now
            later.append((future, text))
            out.append(compile_one(text, tiers.QUICK))
            if on_done is not None:
                on_done(k)
        return out, later  # a None future: `tiers.watch` hands the text to a thread of this process

    def functions(self, name: str) -> runtime.Tasks | None:
        """The loaded unit's task functions: one shared list per unit, replaced in place when its
        optimised object is loaded after its quick one."""
        return _TASKS.get(name)

    def load(self, items: list[tuple[str, bytes, list[str]]], quick: bool = False) -> None:
        """Link (name, object, symbols) items into the process at once: by hand when the loader
        takes them all (`codegen/elf.py`: no llvmlite), else with MCJIT."""
        if not items:  # an edit's other constructs all loaded already: nothing to link
            return
        addresses = link([(obj, symbols) for _, obj, symbols in items], quick)
        for (name, _, _), found in zip(items, addresses):
            tasks = _TASKS.get(name)
            if tasks is None:
                _TASKS[name] = runtime.Tasks(found)
            else:  # an optimised object after the quick one (`tiers.Upgrade`)
                tasks.replace(found)

    def stages(self, llvm_ir: Callable[[], str], opt: int) -> dict:
        """The views `qd.explain` shows of a unit, each made when first asked for."""
        from . import jit  # lazy: llvmlite's binding

        def optimized() -> str:
            return str(jit.optimize(llvm_ir(), opt))

        return {
            "llvm": llvm_ir,
            "llvm_optimized": optimized,
            "asm": lambda: jit.emit_assembly(optimized(), opt),
        }

    def launcher(self, *args: Any, cache: BinaryCache | None = None, **kwargs: Any) -> object:
        return runtime.Launcher(*args, driver=self.driver(cache), **kwargs)

    def driver(self, cache: BinaryCache | None) -> Callable[..., int] | None:
        """The task driver (`codegen/driver.py`): loaded once per process, from the cache or
        built (and cached); None when it is in neither and this process has not started LLVM
        nor has a compile server to ask (it then calls each task itself)."""
        if _DRIVER:
            return _DRIVER[0]
        key = keys.runtime_key(driver.TEXT, self.parts())
        obj = cache.get(key) if cache is not None else None
        if obj is None:
            if "llvmlite.binding" not in sys.modules and not server.listening():
                return None
            obj = compile_one(driver.TEXT, 2)[0]
            if cache is not None:
                cache.put(key, obj)
        try:
            ((address,),) = link([(obj, [driver.SYMBOL])])
        except (elf.Malformed, RuntimeError):  # a damaged object (MCJIT's error): no driver
            return None
        _DRIVER.append(runtime.DRIVE_FN(address))
        return _DRIVER[0]


class CudaTarget:
    """An NVIDIA GPU of compute capability `sm`: PTX per unit, loaded and launched with CuPy. With
    `device=False` (`qd.compile_ptx`) units are built but never loaded, so no GPU or CuPy is
    needed."""

    arch = "cuda"
    PTX_VERSION = "nvptx-1"

    def __init__(self, sm: str | int, device: bool = True) -> None:
        self.sm, self.device = f"sm_{sm_number(sm)}", device

    def starting(self) -> None:
        """A compile is starting: LLVM's library is put in memory by a thread while the front end
        works (`codegen/preload.py`)."""
        preload.start()

    def parts(self) -> tuple[str, ...]:
        from .nvptx import TRIPLE  # lazy: llvmlite

        return (self.PTX_VERSION, TRIPLE, self.sm)

    def emit(
        self, kernel: ir.Kernel, plan: Plan, prefix: str, debug: bool, lines: bool = False
    ) -> str:
        """A unit's LLVM IR for NVPTX (`lines` is accepted and ignored: PTX views are unmapped)."""
        from . import nvptx, nvptx_jit  # lazy: llvmlite

        return str(
            nvptx.emit_module(kernel, plan, prefix, debug, nvptx_jit.data_layout(self.sm))[0]
        )

    def build(
        self,
        texts: Iterable[str],
        count: int,
        opt: int,
        on_done: Callable[[int], None] | None = None,
    ) -> Objects:
        from . import nvptx_jit  # lazy: llvmlite's binding

        out = []
        for k, text in enumerate(texts):
            t0 = time.perf_counter()
            out.append((nvptx_jit.to_ptx(text, self.sm, opt).encode(), time.perf_counter() - t0))
            if on_done is not None:
                on_done(k)
        return out

    def build_quick(self, *args: object) -> None:
        """PTX is not tiered: the driver's JIT optimises it at load either way."""

    def keep_warm(self) -> None:
        """No compile server for PTX."""

    def functions(self, name: str) -> list[Callable] | None:
        return cuda_runtime.functions(name) if self.device else None

    def load(self, items: list[tuple[str, bytes, list[str]]], quick: bool = False) -> None:
        if self.device:
            cuda_runtime.load(items)

    def stages(self, llvm_ir: Callable[[], str], opt: int) -> dict:
        from . import nvptx_jit  # lazy: llvmlite's binding

        return {
            "llvm": llvm_ir,
            "llvm_optimized": lambda: str(nvptx_jit.optimize(llvm_ir(), self.sm, opt)),
            "asm": lambda: nvptx_jit.to_ptx(llvm_ir(), self.sm, opt),
        }

    def launcher(self, *args: Any, cache: BinaryCache | None = None, **kwargs: Any) -> object:
        if not self.device:
            return None
        return cuda_runtime.Launcher(*args, **kwargs)


CPU = CpuTarget()

Target = CpuTarget | CudaTarget


def _host_layout() -> tuple[str, str]:
    from . import jit  # lazy: llvmlite's binding

    return jit.host()[0], jit.data_layout()


def link(objects: list[tuple[bytes, list[str]]], quick: bool = False) -> list[list[int]]:
    """Link (object, symbols) items into the process at once: by qdlab's loader when it takes
    them all (`codegen/elf.py`: no llvmlite), else with MCJIT; the addresses of each one's
    symbols."""
    addresses = elf.load(objects)
    if addresses is None:
        from . import jit  # lazy: llvmlite's binding

        addresses = jit.load_many(objects, quick)
        if not all(map(all, addresses)):  # MCJIT's address of a symbol it did not find
            raise elf.Malformed("an object does not define a task it was loaded for")
    return addresses


def compile_one(text: str, opt: int) -> tuple[bytes, float]:
    """One text's object and LLVM's seconds: from the compile server when it answers, else here."""
    got = server.compile_texts([text], opt)
    if got is not None:
        return got[0]
    from . import jit  # lazy: llvmlite's binding

    return jit.compile_text(text, opt)


def symbols(prefix: str, plan: Plan) -> list[str]:
    return [keys.symbol(prefix, t) for t in range(len(plan.tasks))]


def of(arch: str) -> Target:
    """The target a kernel compiles for under `qd.init(arch=...)`: CUDA for the current device's
    compute capability, else the host CPU."""
    if arch in ("cuda", "gpu"):
        if not cuda_runtime.available():
            raise QdError(
                "qd.cuda/qd.gpu: no CUDA device is available in this process; use qd.cpu, or "
                "qd.compile_ptx(kernel, ...) to inspect the PTX a kernel would produce."
            )
        return CudaTarget(cuda_runtime.device_sm())
    return CPU
