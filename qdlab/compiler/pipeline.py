"""The per-offload pipeline, top to bottom: read this file first.

lower the AST, verify, simplify, split, gate, then emit and cache each construct (or the whole
kernel when the gate refuses the split) for a target, and load it. Each stage is one named line in
`compile_kernel`; no stage calls the next one. It is the only pipeline: a target (`targets.py`: the
host CPU, or CUDA for an `sm_XX`) supplies what differs between backends.
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ..core import keys
from ..core.abi import IFACE_SLOTS
from ..core.config import Config
from ..core.errors import QdError
from ..core.language import Autodiff
from . import ir, runtime, split
from .cache import BinaryCache, construct_memo, manifest, stmt_memo
from .cache.construct_memo import Prepared
from .codegen.offload import Plan, offload
from .codegen.targets import Target
from .frontend import members, quant
from .frontend.fields import field_paths, field_type
from .frontend.graphs import Checkpoints
from .frontend.scope import CallsNeeded, Lowering
from .frontend.source import Source, source_lines
from .frontend.visitor import Frontend
from .ir import field_params
from .ir.printer import print_kernel
from .ir.verify import verify
from .passes import CONSTRUCT_SIMPLIFY, autodiff, forward_mode, run_passes, validation
from .report import dump, make_report
from .report.explain import KernelReport
from .runtime import tiers
from .split import gate

log = logging.getLogger("qdlab")
OnConstruct = Callable[[int, int, str], None]
"""Told (index, total, status) as each construct of a compile is ready (a notebook's progress
bar)."""


@dataclass
class KernelSpec:
    """What the frontend needs to lower one kernel for one argument signature."""

    fn: object
    name: str
    params: list[ir.Param]
    returns: list
    templates: dict = field(default_factory=dict)
    autodiff: Autodiff = Autodiff.NONE
    """The function itself, or its reverse- or forward-mode gradient kernel."""
    return_shapes: list[tuple[int, ...]] = field(default_factory=list)
    """The shape of each return value (`()` for a scalar, `(3,)` for a vec3), in the order of the
    annotation; `returns` lists their entries' types, flattened."""
    span: tuple[list[str], int] | None = None
    """The kernel's source lines and first line, once `compile_cached` has cut them for the key."""
    by_members: frozenset[str] = frozenset()
    """The template arguments the manifest checks member by member (`manifest.member_deps`): those
    its key names by type, having no content of their own to key on."""
    graph: bool = False
    """`@qd.kernel(graph=True)`: launched as any kernel, but `qd.stream_parallel()` is refused."""
    signature: str = ""
    """The signature the manifest is keyed on (`struct_args.manifest_signature`): the argument
    types and the template arguments by content; the statement memo keys on it too."""
    pure: bool = False
    """`@qd.kernel(fastcache=True)` (or `pure=True`): reading a global number or field is refused
    (`Frontend.check_pure`), as Quadrants' fastcache refuses it."""
    checkpoints: bool = False
    """`@qd.kernel(graph=True, checkpoints=True)`: its `qd.checkpoint` stages pause and resume
    (`frontend/graphs.py`); the last parameter is the hidden resume point, the return the pause."""


@dataclass
class Lowered:
    """What lowering gives: the kernel's IR, its source, what it read, and what the statement memo
    replayed."""

    kernel: ir.Kernel
    source: Source
    deps: set = field(default_factory=set)
    """What the kernel's code read (functions, globals, fields), each with its fingerprint: the
    manifest checks them before it serves a compile (`manifest.py`)."""
    checkpoints: Checkpoints | None = None
    """A `checkpoints=True` kernel's stages (their labels, for the host)."""
    replayed: frozenset[int] = frozenset()
    """The ids of the top-level ops the statement memo replayed (`verify` takes them as
    verified)."""


@dataclass
class Built:
    """One compiled unit (a construct's slice or a whole kernel), how it was obtained, and its
    object."""

    unit: runtime.Unit
    prepared: Prepared
    status: str
    ms: float
    obj: bytes | None
    """Its object (or PTX) when this compile read or made it; None when the unit was already
    loaded."""
    origin: str = "compiled"
    """Where it came from: "compiled", "process" (already loaded), or the cache tier that held it
    ("memory", "disk", "team cache")."""

    @property
    def kernel(self) -> ir.Kernel:
        return self.prepared.kernel

    @property
    def plan(self) -> Plan:
        return self.prepared.plan

    @property
    def key(self) -> str:
        return self.prepared.key

    @property
    def text(self) -> str:
        return self.prepared.text


@dataclass
class Compiled:
    """A kernel compiled for one signature and target: what runs, and the report of how it was
    made."""

    launcher: object
    """A `runtime.Launcher` (CPU), a `cuda_runtime.Launcher`, or None for a target that cannot
    launch."""
    target: Target
    config: Config
    observations: tuple[int, int, int]
    written: set[int]
    """Array parameters the kernel writes."""
    alias_pairs: list[tuple[int, bool, int, bool]] = field(default_factory=list)
    """Pairs of array buffers the split relies on being disjoint; each launch checks them."""
    _kernel: ir.Kernel | None = None
    built: list[Built] = field(default_factory=list)
    whole: object | None = None
    readonly_check: bool = True
    """Check written array arguments for read-only NumPy arrays at launch."""
    full: Callable[[Compiled | KernelReport | None], Compiled] | None = None
    """For a manifest hit: runs the whole pipeline (all constructs cache hits) when the IR or report
    is needed, given `previous`."""
    make: Callable[[Compiled | KernelReport | None], KernelReport] | None = None
    """Builds the report on first use, given `previous`: a script that never looks does not pay
    for it."""
    previous: Compiled | KernelReport | None = None
    """The variant compiled before this one (or its report), which the report compares with;
    dropped when the next variant is compiled (`compile_cached`), so that a kernel recompiled
    many times holds one step of history, not a chain of every variant's code."""
    members: dict[tuple[str, tuple[str, ...]], str] = field(default_factory=dict)
    """Members of struct arguments the kernel read: (parameter, attribute path) -> what it is
    (`structs.PARAM`, `STRUCT`, ...), in the order they were first read."""
    _report: KernelReport | None = None
    fields: list = field(default_factory=list)
    """The fields the kernel uses, in the order of their hidden parameters (after the user's)."""
    deps: set = field(default_factory=set)
    """What the kernel's code read (`Lowered.deps`), for the manifest."""
    checkpoints: Checkpoints | None = None
    """A `checkpoints=True` kernel's stages (`Lowered.checkpoints`)."""

    def _complete(self) -> None:
        if self._report is None and self.make is not None:
            self._report = self.make(self.previous)
        elif self._report is None and self.full is not None:
            done = self.full(self.previous)
            self._report, self._kernel = done.report, done._kernel
        self.previous = None  # compared with: no longer needed

    @property
    def report(self) -> KernelReport:
        self._complete()
        assert self._report is not None  # made, or `full` ran
        return self._report

    @property
    def kernel(self) -> ir.Kernel:
        if self._kernel is None:  # a manifest hit: the whole pipeline runs (the report is lazy)
            self._complete()
        assert self._kernel is not None  # compiled, or `full` ran
        return self._kernel

    def whole_launcher(self, cache: BinaryCache) -> object:
        """The whole-kernel variant, compiled on first need (runtime fallbacks); it draws from the
        same random stream as the split variant."""
        if self.whole is None:
            k = self.kernel
            built = build_all([k], self.config, cache, self.target)
            stream = self.launcher.stream  # type: ignore[attr-defined]  # a Launcher's
            self.whole = self.target.launcher(
                k.name, k.params, k.returns, [built[0].unit], stream=stream, cache=cache
            )
        return self.whole


def compile_cached(
    spec: KernelSpec,
    signature: str,
    config: Config,
    cache: BinaryCache,
    target: Target,
    previous: Compiled | None = None,
    on_construct: OnConstruct | None = None,
    rebuild: Callable[[Compiled | KernelReport | None], Compiled] | None = None,
) -> Compiled:
    """Serve the kernel from its manifest when every construct is cached; otherwise compile it.
    `rebuild` runs the whole pipeline of a served variant when its IR or report is asked for
    (`Compiled.full`): the host's holds the struct objects weakly; by default it compiles `spec`
    again. The variant before (`previous`) keeps no history of its own once this one exists."""
    if isinstance(previous, Compiled):
        previous.previous = None
    if config.fresh or spec.checkpoints:  # the host needs the stages' labels, which lowering finds
        return compile_kernel(spec, config, cache, target, previous, on_construct)
    if manifest.UNKNOWN in signature:  # an argument known by its identity in this process only
        return compile_kernel(spec, config, cache, target, previous, on_construct)
    try:
        lines, first = spec.span = source_lines(spec.fn)
    except (OSError, TypeError):
        return compile_kernel(spec, config, cache, target, previous, on_construct)
    filename = getattr(getattr(spec.fn, "__code__", None), "co_filename", "")
    # the return annotation's value: its text (`-> dt`) does not show which type `dt` names
    returns = f"{spec.returns!r}:{spec.return_shapes!r}:{spec.graph}"
    returns += ":pure" if spec.pure else ""  # a variant compiled unchecked never serves it
    mkey = keys.manifest_key(
        "".join(lines),
        f"{spec.name}:{spec.autodiff}:{signature}->{returns}",
        config,
        target.parts(),
    )
    doc = manifest.load(cache, mkey, spec.fn, spec.templates)
    found = manifest.fields(doc, spec.fn, spec.templates) if doc is not None else None
    units = (
        load_units(manifest.units(doc, filename, first), cache, target)
        if doc is not None and found is not None
        else None
    )
    if units is not None and doc is not None and found is not None:
        pairs = [(int(a), bool(g), int(b), bool(h)) for a, g, b, h in doc["alias_pairs"]]
        params = spec.params + [
            ir.Param(f"field{k}", field_type(f)) for k, f in enumerate(found)
        ]  # the fields' hidden parameters, fed from the fields found again by name
        launcher = target.launcher(spec.name, params, spec.returns, units, pairs, cache=cache)
        return Compiled(
            launcher,
            target,
            config,
            (-1, -1, -1),
            set(doc["written"]),
            pairs,
            whole=launcher if not pairs and len(units) == 1 else None,
            full=rebuild or (lambda prev: compile_kernel(spec, config, cache, target, prev)),
            previous=previous,
            members=manifest.members(doc),
            fields=list(found),
        )
    compiled = compile_kernel(spec, config, cache, target, previous, on_construct)
    if not compiled.kernel.flags.late_params:  # else a struct member was declared late
        manifest.save(
            cache,
            mkey,
            [b.unit for b in compiled.built],
            compiled.alias_pairs,
            compiled.written,
            sorted(compiled.deps)
            + manifest.member_deps(compiled.members, spec.templates, spec.by_members),
            first,
            compiled.members,
            field_paths(compiled.kernel),
        )
    return compiled


def compile_kernel(
    spec: KernelSpec,
    config: Config,
    cache: BinaryCache | None,
    target: Target,
    previous: Compiled | KernelReport | None = None,
    on_construct: OnConstruct | None = None,
) -> Compiled:
    t0 = time.perf_counter()
    target.starting()  # LLVM's library loads in a thread meanwhile
    lowered = lower(spec, config, cache)  # Python AST -> typed IR
    kernel, source = lowered.kernel, lowered.source
    verify(kernel, lowered.replayed)  # what was replayed was verified
    run_passes(kernel)  # simplify: promote, fold, CSE, DCE
    verify(kernel)
    if spec.autodiff:  # values and their duals (split as any kernel), or the gradient kernel
        if spec.autodiff is Autodiff.FORWARD:
            kernel = forward_mode.jvp(kernel)
        elif spec.autodiff is Autodiff.VALIDATION:
            kernel = validation.instrument(kernel)
        else:
            kernel = autodiff.reverse(
                kernel,
                config.ad_stack_experimental_enabled,
                config.ad_stack_size if config.debug else 0,
            )
        run_passes(kernel)
        verify(kernel)
    constructs, facts, fallback, iface = split_and_gate(kernel, spec, config)  # split + gate
    slots = split.assign_slots(iface.published, IFACE_SLOTS)
    split_ran = config.per_offload and fallback is None
    if fallback is not None:
        log.debug(
            "[PER_OFFLOAD] %s: fallback %s (line %s)", spec.name, fallback.code, fallback.lineno
        )
    if split_ran:  # slice + prepare each construct, or serve it from the construct memo
        t_prep = time.perf_counter()
        prepared = prepare_constructs(kernel, constructs, slots, config, target, source, cache)
        prep_ms = (time.perf_counter() - t_prep) * 1e3 / max(1, len(prepared))
        built = build_prepared(prepared, prep_ms, config, cache, target, on_construct)
    else:
        built = build_all([kernel], config, cache, target)  # emit + cache + load
    dump(spec.name, kernel, built, config)
    alias = sorted(gate.disjoint_pairs(facts)) if split_ran else []
    launcher = target.launcher(
        spec.name, kernel.params, kernel.returns, [b.unit for b in built], alias, cache=cache
    )
    ms = (time.perf_counter() - t0) * 1e3

    name = spec.name  # the report's closure holds no template value (a struct's object lives on)

    def report(previous: Compiled | KernelReport | None) -> KernelReport:
        try:
            prev = previous.report if isinstance(previous, Compiled) else previous
        except QdError:  # a manifest hit whose fields were dropped since: nothing to compare with
            prev = None
        if prev is not None:
            prev.previous = None  # keep one step of history, not a chain
        return make_report(
            name,
            source,
            kernel,
            constructs,
            built,
            fallback,
            alias,
            config,
            target,
            prev,
            ms,
            iface,
            slots,
        )

    compiled_n = sum(b.status == "compiled" for b in built)
    obs = (len(built), compiled_n, len(built) - compiled_n) if split_ran else (-1, -1, -1)
    written = {
        ir.arg_index(ir.array_of(op)) for op in kernel.walk() if "write" in op.effects
    } - set(field_params(kernel))  # the user's arguments a launch checks for read-only arrays
    return Compiled(
        launcher,
        target,
        config,
        obs,
        written,
        alias,
        kernel,
        built,
        whole=None if split_ran else launcher,
        make=report,
        previous=previous,
        members=kernel.flags.members,
        fields=[f for _, f in sorted(field_params(kernel).items())],
        deps=lowered.deps,
        checkpoints=lowered.checkpoints,
    )


def split_and_gate(
    kernel: ir.Kernel, spec: KernelSpec, config: Config
) -> tuple[list[split.Construct], gate.Facts, gate.Fallback | None, split.Interface]:
    """Split, then ask the gate; with `split_carried`, each value a hand-over row names is handed
    over through the interface buffer instead, and the kernel is split again, until the gate is
    satisfied or names a reason that no hand-over removes."""
    iface = split.Interface()
    uses = split.DefUse.of(kernel)  # the kernel is the same at each try; only `iface` grows
    while True:
        constructs = split.constructs(kernel, iface, uses)
        facts = gate.Facts(kernel, constructs, config, spec.autodiff is Autodiff.REVERSE)
        fallback = gate.check(facts) if config.per_offload else None
        if (
            fallback is None
            or not config.split_carried
            or fallback.code not in gate.HANDOVER_CODES
            or fallback.remedy is None
            or len(iface.published) >= IFACE_SLOTS // 2
            or not iface.add(fallback.remedy, fallback.code)
        ):
            return constructs, facts, fallback, iface


def lower(
    spec: KernelSpec, config: Config, cache: BinaryCache | None, calls: frozenset = frozenset()
) -> Lowered:
    """The kernel's IR; lowered again, with `func` called, each time lowering finds a
    @qd.real_func `func` calling itself (`real_calls.py`). The statement memo keeps its entries
    on the disk tier of `cache` too."""
    try:
        return lower_once(spec, config, cache, calls)
    except CallsNeeded as e:
        return lower(spec, config, cache, calls | {e.func})


def lower_once(
    spec: KernelSpec, config: Config, cache: BinaryCache | None, calls: frozenset
) -> Lowered:
    source = Source.of(spec.fn, "kernel", spec.span)
    kernel = ir.Kernel(spec.name, list(spec.params), spec.returns)  # fields append theirs
    lowering = Lowering(
        config,
        getattr(spec.fn, "__globals__", {}),
        dict(spec.templates),
        tuple(spec.return_shapes),
        calls,
    )
    fe = Frontend(kernel, source, lowering)
    fe.graph = spec.graph
    fe.pure = spec.pure
    if spec.checkpoints:
        fe.checkpoints = Checkpoints()
    kernel.flags.def_loc = source.loc(source.tree, spec.name)
    values = fe.kernel_arguments(list(spec.params))
    ctx = None if spec.checkpoints else stmt_memo.context(spec, source, config.as_dict())
    memo = None
    if ctx is not None:  # unchanged top-level statements are replayed, not lowered
        memo = stmt_memo.Memo(ctx, spec.fn, len(kernel.body.ops), cache, spec.templates, source)
    fe.lower_kernel(values, memo)
    lowered = Lowered(kernel, source, fe.deps, fe.checkpoints)
    if memo is not None:
        lowered.replayed = frozenset(memo.replayed)
        memo.finish()
    members.run(kernel)  # matrix fields' entries (`get_scalar_field`) as their fields' memory
    quant.run(kernel)  # quantised fields' bits in their words (after the memo took its IR)
    return lowered


_fresh = itertools.count()


def prepare(k: ir.Kernel, config: Config, target: Target, owned: bool = False) -> Prepared:
    """A unit's canonical form: named neutrally (equal constructs of different kernels share one
    key), simplified again, printed, keyed and offloaded. An `owned` unit (a construct's slice,
    made for this compile alone) becomes it in place; any other is copied first."""
    if owned:
        canonical = ir.Kernel("construct", k.params, k.returns, k.body, k.flags.copy())
    else:
        canonical = ir.Kernel("construct", k.params, k.returns, ir.Block(), k.flags.copy())
        ir.clone_ops(k.body.ops, {}, canonical.body)
    run_passes(canonical, CONSTRUCT_SIMPLIFY)  # its `//` and `%` were folded in the kernel
    text = print_kernel(canonical)
    key = keys.construct_key(text, config, target.parts())
    return Prepared(
        canonical,
        text,
        key,
        offload(canonical),
        keys.prefix(key, next(_fresh) if config.fresh else None),
    )


def build_all(
    kernels: list[ir.Kernel],
    config: Config,
    cache: BinaryCache | None,
    target: Target,
    on_ready: OnConstruct | None = None,
    owned: bool = False,
) -> list[Built]:
    """Compile (or fetch) and load several units. The ones neither loaded nor cached are emitted as
    LLVM IR here and built by the target (on the CPU in worker processes when there are several:
    llvmlite serialises LLVM calls within a process, so threads cannot share that work). `owned`:
    the units are this compile's own slices, which `prepare` may consume."""
    t0 = time.perf_counter()
    prepared = [prepare(k, config, target, owned) for k in kernels]
    prep_ms = (time.perf_counter() - t0) * 1e3 / max(1, len(kernels))
    return build_prepared(prepared, prep_ms, config, cache, target, on_ready)


def prepare_constructs(
    kernel: ir.Kernel,
    constructs: list[split.Construct],
    slots: dict,
    config: Config,
    target: Target,
    source: Source,
    cache: BinaryCache | None,
) -> list[Prepared]:
    """Each construct's slice, prepared; one the construct memo holds (in the process, or on the
    disk tier of `cache`) is served from it."""
    memo = None
    if construct_memo.enabled() and not config.fresh:
        try:
            memo = construct_memo.Session(
                kernel,
                (source.filename, source.first_line),
                (repr(sorted(config.as_dict().items())), target.parts()),
                cache,
            )
        except Exception:  # noqa: BLE001 - a flag or option without a repr: no memo this time
            memo = None
    out = []
    for c in constructs:
        key = (
            memo.describe(c.all_positions)
            if memo is not None and not c.imports and not c.exports
            else None
        )
        got = memo.get(key) if memo is not None and key is not None else None
        if got is None:
            got = prepare(split.slice_kernel(kernel, c, slots), config, target, owned=True)
            if memo is not None and key is not None:
                memo.put(key, got, config.bounds_checks)
        out.append(got)
    if memo is not None:
        memo.finish()
    return out


def build_prepared(
    prepared: list[Prepared],
    prep_ms: float,
    config: Config,
    cache: BinaryCache | None,
    target: Target,
    on_ready: OnConstruct | None = None,
) -> list[Built]:
    """Compile (or fetch) and load prepared units (`build_all`); `prep_ms`: the time preparing
    took per unit, which each one's compile time counts."""
    objects: dict[int, bytes] = {}
    missing: list[int] = []
    for i, p in enumerate(prepared):
        if config.fresh or target.functions(p.name) is None:
            obj = None if config.fresh or cache is None else cache.get(p.key)
            if obj is None:
                missing.append(i)
            else:
                objects[i] = obj
    llvm_ms: dict[int, float] = {}
    later: dict[int, tuple] = {}  # a unit built quick: (the future of its optimised object, text)
    if missing:
        texts = (
            target.emit(
                prepared[i].kernel, prepared[i].plan, prepared[i].prefix, config.bounds_checks
            )
            for i in missing
        )  # emitted as the target takes them: LLVM starts on the first while the rest are emitted
        done = (lambda k: on_ready(missing[k], len(prepared), "compiled")) if on_ready else None
        args = (texts, len(missing), config.opt_level, done)  # the progress bar steps per object
        tiered = target.build_quick(*args)  # quick objects now, optimised ones later (tiers.py)
        objs, pairs = tiered if tiered is not None else (target.build(*args), [])
        later = dict(zip(missing, pairs))
        for i, (obj, seconds) in zip(missing, objs):
            objects[i], llvm_ms[i] = obj, seconds * 1e3
            if cache is not None and not config.fresh and i not in later:
                cache.put(prepared[i].key, obj)
        if cache is not None and cache.persistent:
            target.keep_warm()  # a compile server for the next process (`codegen/server.py`)

    def item(i: int) -> tuple[str, bytes, list[str]]:
        kinds = prepared[i].facts(config.bounds_checks).kinds
        return (
            prepared[i].name,
            objects[i],
            [keys.symbol(prepared[i].prefix, t) for t in range(len(kinds))],
        )

    target.load([item(i) for i in sorted(objects) if i not in later])
    if later:
        target.load([item(i) for i in sorted(later)], quick=True)
    for i, (future, text) in later.items():
        name, _, symbols = item(i)
        key = None if config.fresh or cache is None else prepared[i].key
        up = tiers.Upgrade(name, key, symbols, text, config.opt_level, future, target, cache)
        tiers.watch(up, target.functions(name))
    out = []
    for i, p in enumerate(prepared):
        f = p.facts(config.bounds_checks)
        unit = runtime.Unit(
            p.key,
            target.functions(p.name) or [],
            f.kinds,
            f.reduces,
            f.tmp_bytes,
            f.messages,
            f.block_dims,
        )
        status = "compiled" if i in llvm_ms else "reused"
        origin = (
            "compiled"
            if i in llvm_ms
            else "process"
            if i not in objects
            else (cache.origin(p.key) if cache is not None else None) or "memory"
        )
        out.append(Built(unit, p, status, prep_ms + llvm_ms.get(i, 0.0), objects.get(i), origin))
        if on_ready is not None and status != "compiled":
            on_ready(i, len(prepared), status)
    return out


def load_units(
    records: list[manifest.UnitRecord], cache: BinaryCache, target: Target
) -> list[runtime.Unit] | None:
    """The units a manifest lists, loaded (from the cache where needed); None if any is gone from
    it."""
    needed = [r for r in records if target.functions(r.key) is None]
    got = cache.get_many([r.key for r in needed])
    found = [obj for obj in got if obj is not None]
    if len(found) < len(got):
        return None
    target.load(
        [
            (r.key, obj, [keys.symbol(keys.prefix(r.key), t) for t in range(len(r.kinds))])
            for r, obj in zip(needed, found)
        ]
    )
    return [
        runtime.Unit(
            r.key,
            target.functions(r.key) or [],
            r.kinds,
            r.reduces,
            r.tmp_bytes,
            r.messages,
            r.block_dims,
        )
        for r in records
    ]
