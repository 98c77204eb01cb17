"""The per-offload pipeline, top to bottom: read this file first.

lower the AST, verify, simplify, split, gate, then emit and cache each construct (or the whole kernel when the
gate refuses the split). Each stage is one named line in `compile_kernel`; no stage calls the next one.
"""

from __future__ import annotations

import difflib
import hashlib
import itertools
import logging
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from . import autodiff, gate, ir, manifest, runtime, split
from .cache import BinaryCache
from .config import Config
from .explain import ConstructReport, InterfaceSlot, KernelReport, Statement, Task
from .frontend import Frontend
from .source import Source
from .offload import IFACE_SLOTS, Plan, message_ops, offload
from .passes import run_passes
from .printer import print_kernel
from .verify import verify

log = logging.getLogger("qdlab")
def _compiler_version() -> str:
    """qdlab's version plus a digest of the compiler's own source: any change to it makes new keys, so a cache
    never serves a binary that an older compiler built."""
    from pathlib import Path
    h = hashlib.sha256()
    for path in sorted(Path(__file__).parent.rglob("*.py")):
        h.update(path.read_bytes())
    from . import __version__
    return f"qdlab-{__version__}+{h.hexdigest()[:16]}"


COMPILER_VERSION = _compiler_version()


@dataclass
class KernelSpec:
    """What the frontend needs to lower one kernel for one argument signature."""

    fn: object
    name: str
    params: list[ir.Param]
    returns: list
    templates: dict = field(default_factory=dict)
    autodiff: bool = False


@dataclass
class Built:
    """One compiled unit (a construct's slice or a whole kernel) and how it was obtained."""

    unit: runtime.Unit
    plan: Plan
    kernel: ir.Kernel
    key: str
    text: str
    status: str
    ms: float


@dataclass
class Compiled:
    """A kernel compiled for one signature: what runs, and the report of how it was made."""

    launcher: runtime.Launcher
    _report: KernelReport | None
    _kernel: ir.Kernel | None
    config: Config
    observations: tuple[int, int, int]
    written: set[int]
    whole: runtime.Launcher | None = None
    readonly_check: bool = True
    """Check written array arguments for read-only NumPy arrays at launch."""
    full: Callable[[], Compiled] | None = None
    """For a manifest hit: runs the whole pipeline (all constructs cache hits) when the IR or report is needed."""
    make: Callable[[], KernelReport] | None = None
    """Builds the report on first use: a script that never looks does not pay for it."""

    def _complete(self) -> None:
        if self._report is None and self.make is not None:
            self._report = self.make()
        elif self._report is None and self.full is not None:
            done = self.full()
            self._report, self._kernel = done.report, done._kernel

    @property
    def report(self) -> KernelReport:
        self._complete()
        return self._report  # type: ignore[return-value]

    @property
    def kernel(self) -> ir.Kernel:
        self._complete()
        return self._kernel  # type: ignore[return-value]

    def whole_launcher(self, cache: BinaryCache) -> runtime.Launcher:
        """The whole-kernel variant, compiled on first need (runtime fallbacks)."""
        if self.whole is None:
            built = build(self.kernel, self.config, cache)
            self.whole = runtime.Launcher(self.kernel.name, self.kernel.params, self.kernel.returns,
                                          [built.unit], self.launcher.layout, stream=self.launcher.stream)
        return self.whole


def compile_cached(spec: KernelSpec, sig: str, config: Config, cache: BinaryCache,
                   previous: Compiled | None = None,
                   on_construct: Callable[[int, int, str], None] | None = None) -> Compiled:
    """Serve the kernel from its manifest when every construct is cached; otherwise compile it."""
    if config.fresh:
        return compile_kernel(spec, config, cache, previous, on_construct)
    from .source import _source_lines
    try:
        lines, first = _source_lines(spec.fn)
    except (OSError, TypeError):
        return compile_kernel(spec, config, cache, previous, on_construct)
    filename = getattr(getattr(spec.fn, "__code__", None), "co_filename", "")
    mkey = manifest.key("".join(lines), f"{spec.name}:{spec.autodiff}:{sig}", config)
    doc = manifest.load(cache, mkey, spec.fn)
    units = manifest.units(doc, cache, filename, first) if doc is not None else None
    if units is not None:
        layout = runtime_layout_of(spec.params)
        launcher = runtime.Launcher(spec.name, spec.params, spec.returns, units, layout,
                                    [tuple(p) for p in doc["alias_pairs"]])  # type: ignore[index, misc]
        return Compiled(launcher, None, None, config, (-1, -1, -1), set(doc["written"]),  # type: ignore[index]
                        launcher if not launcher.alias_pairs and len(units) == 1 else None,
                        full=lambda: compile_kernel(spec, config, cache, previous))
    compiled = compile_kernel(spec, config, cache, previous, on_construct)
    manifest.save(cache, mkey, compiled, sorted(compiled._kernel.flags.get("deps", ())), first)  # type: ignore
    return compiled


def compile_kernel(spec: KernelSpec, config: Config, cache: BinaryCache,
                   previous: Compiled | KernelReport | None = None,
                   on_construct: Callable[[int, int, str], None] | None = None) -> Compiled:
    """`on_construct(index, total, status)` is called as each construct is ready (a notebook's progress bar)."""
    t0 = time.perf_counter()
    kernel, source = lower(spec, config)                         # Python AST -> typed IR
    fe_deps = kernel.flags.pop("deps", set())
    verify(kernel)
    run_passes(kernel)                                           # simplify: promote, fold, CSE, DCE
    verify(kernel)
    if spec.autodiff:
        kernel = autodiff.reverse(kernel)                        # the gradient kernel (compiled whole)
        run_passes(kernel)
        verify(kernel)
    constructs, facts, fallback, iface = split_and_gate(kernel, spec, config)  # split + recompute-safety gate
    slots = split.assign_slots(iface.published, IFACE_SLOTS)
    if fallback is not None:
        log.debug("[PER_OFFLOAD] %s: fallback %s (line %s)", spec.name, fallback.code, fallback.lineno)
    if config.per_offload and fallback is None:
        built = build_all([split.slice_kernel(kernel, c, slots) for c in constructs], config, cache,
                          on_construct)                          # emit + cache, construct by construct
    else:
        built = [build(kernel, config, cache)]                   # emit + cache, whole kernel
    dump(spec.name, kernel, built, config)
    layout = runtime_layout(kernel)
    alias = sorted(gate.disjoint_pairs(facts)) if config.per_offload and fallback is None else []
    launcher = runtime.Launcher(spec.name, kernel.params, kernel.returns, [b.unit for b in built], layout, alias)
    ms = (time.perf_counter() - t0) * 1e3
    split_ran = config.per_offload and fallback is None

    def report() -> KernelReport:
        prev = previous.report if isinstance(previous, Compiled) else previous
        if prev is not None:
            prev.previous = None  # keep one step of history, not a chain
        r = make_report(spec, source, kernel, constructs, built, fallback, alias, config, prev, ms)
        if split_ran:
            r.interface = interface_report(constructs, iface, slots)
        return r

    compiled_n = sum(b.status == "compiled" for b in built)
    obs = (len(built), compiled_n, len(built) - compiled_n) if split_ran else (-1, -1, -1)
    written = {op.operands[0].owner.attrs["index"] for op in kernel.walk()  # type: ignore[union-attr]
               if isinstance(op, (ir.Store, ir.Atomic))}
    whole = launcher if not split_ran else None
    kernel.flags["deps"] = fe_deps
    return Compiled(launcher, None, kernel, config, obs, written, whole, make=report)


def split_and_gate(kernel: ir.Kernel, spec: KernelSpec, config: Config) -> tuple[
        list[split.Construct], gate.Facts, gate.Fallback | None, split.Interface]:
    """Split, then ask the gate; with `split_carried`, each value a hand-over row names is handed over through
    the interface buffer instead, and the kernel is split again, until the gate is satisfied or names a reason
    that no hand-over removes."""
    iface = split.Interface()
    while True:
        constructs = split.constructs(kernel, iface)
        facts = gate.Facts(kernel, constructs, config.as_dict(), spec.autodiff)
        fallback = gate.check(facts) if config.per_offload else None
        if fallback is None or not config.split_carried or fallback.code not in gate.HANDOVER_CODES or \
                fallback.remedy is None or len(iface.published) >= IFACE_SLOTS // 2 or \
                not iface.add(fallback.remedy, fallback.code):
            return constructs, facts, fallback, iface


def lower(spec: KernelSpec, config: Config) -> tuple[ir.Kernel, Source]:
    source = Source.of(spec.fn, "kernel")
    kernel = ir.Kernel(spec.name, spec.params, spec.returns)
    fe = Frontend(kernel, source, getattr(spec.fn, "__globals__", {}), config.as_dict() | {
        "default_fp": config.default_fp})
    values: dict[str, object] = {}
    kernel.flags["def_loc"] = source.loc(source.tree, spec.name)
    for index, p in enumerate(spec.params):
        if p.name in spec.templates:
            values[p.name] = spec.templates[p.name]
            continue
        fe.loc = source.loc(source.tree.args.args[index], spec.name)
        values[p.name] = fe.emit(ir.Arg, (), p.type, p.name, index=index)
    fe.loc = None
    fe.lower_kernel(values)
    kernel.flags["deps"] = fe.deps
    return kernel, source


def cache_key(text: str, config: Config) -> str:
    from .codegen.jit import host
    triple, cpu, features = host()
    h = hashlib.sha256()
    for part in (COMPILER_VERSION, triple, cpu, features, config.codegen_key(), text):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


_loaded: dict[str, list[int]] = {}
_fresh = itertools.count()


def build(k: ir.Kernel, config: Config, cache: BinaryCache) -> Built:
    """Compile (or fetch from the cache) one unit: its tasks as one native object."""
    return build_all([k], config, cache)[0]


def build_all(kernels: list[ir.Kernel], config: Config, cache: BinaryCache,
              on_ready: Callable[[int, int, str], None] | None = None) -> list[Built]:
    """Compile (or fetch) several units. The ones no cache holds are emitted as LLVM IR here and optimised and
    turned into objects in worker processes when there are several (llvmlite serialises LLVM calls within a
    process, so threads cannot share that work)."""
    t0 = time.perf_counter()
    prepared = []
    for k in kernels:
        k = _canonical(k)
        run_passes(k)
        text = print_kernel(k)
        key = cache_key(text, config)
        prefix = f"qd_{key[:24]}_f{next(_fresh)}" if config.fresh else f"qd_{key[:24]}"
        prepared.append((k, text, key, offload(k), prefix))
    objects: dict[int, bytes] = {}
    missing: list[int] = []
    for i, (k, _, key, plan, prefix) in enumerate(prepared):
        if config.fresh or key not in _loaded:
            obj = None if config.fresh else cache.get(key)
            if obj is None:
                missing.append(i)
            else:
                objects[i] = obj
    prep_ms = (time.perf_counter() - t0) * 1e3 / max(1, len(kernels))
    llvm_ms: dict[int, float] = {}
    if missing:
        from .codegen import jit, llvm
        texts = [str(llvm.emit_module(prepared[i][0], prepared[i][3], prepared[i][4], config.debug, jit.host()[0],
                                      jit.data_layout())[0]) for i in missing]
        for i, (obj, seconds) in zip(missing, jit.compile_many(texts, config.opt_level)):
            objects[i], llvm_ms[i] = obj, seconds * 1e3
            if not config.fresh:
                cache.put(prepared[i][2], obj)
    if objects:
        from .codegen import jit
        order = sorted(objects)
        symbols = [[f"{prepared[i][4]}_t{t}" for t in range(len(prepared[i][3].tasks))] for i in order]
        for i, addresses in zip(order, jit.load_many([(objects[i], sy) for i, sy in zip(order, symbols)])):
            _loaded[prepared[i][4] if config.fresh else prepared[i][2]] = addresses
    out = []
    for i, (k, text, key, plan, prefix) in enumerate(prepared):
        addresses = _loaded[prefix if config.fresh else key]
        unit = runtime.Unit(key, [runtime.task_function(a) for a in addresses], [t.kind for t in plan.tasks],
                            [bool(t.reductions) for t in plan.tasks], plan.tmp_bytes,
                            [runtime.Message.of(op) for op in message_ops([op for t in plan.tasks for op in t.ops],
                                                                          config.debug)])
        status = "compiled" if i in llvm_ms else "reused"
        out.append(Built(unit, plan, k, key, text, status, prep_ms + llvm_ms.get(i, 0.0)))
        if on_ready is not None:
            on_ready(i, len(prepared), status)
    return out


def _canonical(k: ir.Kernel) -> ir.Kernel:
    """A copy named neutrally, so equal constructs of different kernels share one key."""
    out = ir.Kernel("construct", k.params, k.returns, ir.Block(), dict(k.flags))
    ir.clone_ops(k.body.ops, {}, out.body)
    return out


def runtime_layout(kernel: ir.Kernel) -> list[int]:
    return runtime_layout_of(kernel.params)


def runtime_layout_of(params: list[ir.Param]) -> list[int]:
    from .offload import arg_words
    return arg_words(params)


def stages_of(b: Built, config: Config) -> dict:
    def llvm_text(optimized: bool) -> str:
        from .codegen import jit, llvm
        module, _ = llvm.emit_module(b.kernel, b.plan, f"qd_{b.key[:24]}", config.debug, jit.host()[0],
                                     jit.data_layout())
        return str(jit.optimize(str(module), config.opt_level)) if optimized else str(module)

    def asm() -> str:
        from .codegen import jit
        return jit.emit_assembly(llvm_text(True), config.opt_level)

    return {"ir": b.text, "llvm": lambda: llvm_text(False), "llvm_optimized": lambda: llvm_text(True), "asm": asm}


def make_report(spec: KernelSpec, source: Source, kernel: ir.Kernel, constructs: list[split.Construct],
                built: list[Built], fallback: gate.Fallback | None, alias: list, config: Config,
                previous: KernelReport | None, ms: float) -> KernelReport:
    from .statements import describe_statements, statement_of_ops
    statements = describe_statements(kernel, constructs)
    group = statement_of_ops(kernel)
    tasks = [Task(t.kind, t.lines) for t in offload(kernel).tasks]
    names = [p.name for p in kernel.params]
    alias_names = [(names[i] + (".grad" if gi else ""), names[j] + (".grad" if gj else "")) for i, gi, j, gj in alias]
    reports = []
    before = print_kernel(kernel, with_locs=True)
    split_ran = len(built) == len(constructs) and config.per_offload and fallback is None
    prev = {c.index: c for c in previous.constructs} if previous else {}
    for c in constructs if split_ran else []:
        b = built[c.index]
        own_ids = sorted({group[p] for p in c.positions})
        slice_ids = sorted({group[p] for p in c.slice_positions} - set(own_ids))
        own = [statements[g] for g in own_ids]
        lines = (min(s.lines[0] for s in own), max(s.lines[1] for s in own))
        slice_lines = sorted({ln for g in slice_ids for ln in range(*_span(statements[g]))} - set(
            ln for s in own for ln in range(*_span(s))))
        r = ConstructReport(c.index, c.kind, lines, own_ids, slice_ids, slice_lines,
                            [Task(t.kind, t.lines) for t in b.plan.tasks], b.key, b.status, b.ms,
                            stages=stages_of(b, config))
        r.stages["ir_before_split"] = before
        if b.status == "compiled":
            r.recompile_reason, r.key_diff = _why(prev.get(c.index), b)
        reports.append(r)
    report = KernelReport(spec.name, source.filename, "".join(source.lines), source.first_line,
                          "per_offload" if split_ran else "whole_kernel", fallback, statements, reports, tasks,
                          before, alias_names, ms, previous,
                          ", ".join(f"{p.name}: {p.type}" for p in kernel.params))
    if not split_ran:
        report.stages = stages_of(built[0], config)
        report.stages["ir_before_split"] = report.ir_before_split
    report.__dict__["_texts"] = {r.index: b.text for r, b in zip(reports, built)}
    return report


def interface_report(constructs: list[split.Construct], iface: split.Interface,
                     slots: dict[ir.Value, tuple[int, str]]) -> list[InterfaceSlot]:
    out = []
    for v, code in iface.published.items():
        producers = [c.index for c in constructs if v in c.exports]
        consumers = [c.index for c in constructs if v in c.imports]
        dtype = v.type.dtype if ir.is_local(v) else v.type  # type: ignore[union-attr]
        loc = v.owner.loc if isinstance(v.owner, ir.Op) else None
        out.append(InterfaceSlot(v.name or slots[v][1], str(dtype), slots[v][0], producers[-1] if producers else -1,
                                 consumers, code, loc.lineno if loc else 0))
    return sorted(out, key=lambda s: (s.producer, s.name))


def _span(s: Statement) -> tuple[int, int]:
    return s.lines[0], s.lines[1] + 1


def _why(prev: ConstructReport | None, b: Built) -> tuple[str, str | None]:
    if prev is None:
        return "no entry under its key (new construct)", None
    old = prev.stages.get("ir")
    if not isinstance(old, str) or old == b.text:
        return "no entry under its key (same IR; compiler settings or inputs changed)", None
    diff = "\n".join(difflib.unified_diff(old.splitlines(), b.text.splitlines(), "previous", "now", lineterm="", n=1))
    return "no entry under its key (its IR changed)", diff


def dump(name: str, kernel: ir.Kernel, built: list[Built], config: Config) -> None:
    """`print_ir` / `QDLAB_DUMP_IR=1`: one IR file per construct; `dump_cfg`: the whole kernel's CFG."""
    if not (config.print_ir or config.dump_ir or config.dump_cfg):
        return
    folder = config.debug_dump_path or os.path.join(tempfile.gettempdir(), "qdlab_ir")
    os.makedirs(folder, exist_ok=True)
    for index, b in enumerate(built):
        tag = f"{name}_construct{index}" if len(built) > 1 or config.per_offload else f"{name}_whole"
        if config.print_ir:
            print(f"// {tag}\n{b.text}")
        if config.dump_ir:
            with open(os.path.join(folder, f"{tag}.qdir"), "w") as f:
                f.write(b.text)
    if config.dump_cfg:
        from .cfg import cfg_dot
        with open(os.path.join(folder, f"{name}_cfg.dot"), "w") as f:
            f.write(cfg_dot(kernel))
