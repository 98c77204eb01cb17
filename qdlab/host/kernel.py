"""`@qd.kernel` and `@qd.func`: argument checking, one compile per argument signature, and
launching."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import logging
import math
import os
import struct
import threading
import types
import typing
import warnings
import weakref
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..compiler import ir
from ..compiler.codegen import targets
from ..compiler.frontend import graphs
from ..compiler.frontend.source import annotation_loc, unevaluable
from ..compiler.frontend.structs import StructRef
from ..compiler.pipeline import Compiled, KernelSpec, compile_cached, compile_kernel
from ..compiler.report import KernelReport
from ..core import binding
from ..core.config import Config
from ..core.errors import (
    QdAnnotationError,
    QdArgumentError,
    QdArgumentTypeError,
    QdCallError,
    QdError,
    QdTypeError,
    QdValueError,
    QuadrantsSyntaxError,
)
from ..core.fields import AutodiffMode, FieldBase
from ..core.language import (
    ArrayAnnotation,
    Autodiff,
    Func,
    GraphStatus,
    KernelDef,
    MatrixType,
    Template,
)
from ..core.types import ArrayType, DType, i32
from . import (
    collector,
    data_oriented,
    field,
    pyquadrants,
    state,
    stream,
    struct_args,
    struct_types,
    vector_args,
)
from . import tensor as tensors
from .array_args import (
    NDARRAYS,
    annotation,
    array_arg,
    array_key,
    as_numpy,
    host_arrays,
    not_convertible,
    scalar_arg,
    scalar_type,
)
from .launch import ARRAY, SCALAR, TEMPLATE, TENSOR, VECTOR, LaunchPlan, Param, array_launch
from .ndarray import Ndarray

log = logging.getLogger("qdlab")


@dataclass
class Observations:
    """`kernel._primal.per_offload_cache_observations` for the latest compile (-1: the split did not
    run)."""

    frontend_constructs_total: int = -1
    frontend_constructs_recompiled: int = -1
    frontend_constructs_cache_hit: int = -1


@functools.cache
def _type_hints(cls: type) -> dict[str, object]:
    """A dataclass's annotations, evaluated once per class (Genesis passes each of its kernels ~10
    dataclasses, looked through at each compile)."""
    try:
        return typing.get_type_hints(cls)
    except Exception:  # noqa: BLE001 - an annotation that does not resolve: as written
        return {f.name: f.type for f in dataclasses.fields(cls)}


def _holds_template_field(v: object) -> bool:
    """A dataclass with a field in a member annotated `qd.Template` (or in a dataclass member of
    it), or a data-oriented object with a field member."""
    if struct_args.is_data_oriented(v):
        return any(isinstance(m, FieldBase) for m in vars(v).values())
    if not dataclasses.is_dataclass(v) or isinstance(v, type):
        return False
    hints = _type_hints(type(v))
    return any(
        (hints.get(f.name) is Template and isinstance(getattr(v, f.name), FieldBase))
        or _holds_template_field(getattr(v, f.name))
        for f in dataclasses.fields(v)
    )


COMPILING = threading.RLock()
"""Held while a kernel's variant compiles (`Kernel.compile_for`): one thread compiles at a time,
as Quadrants locks its kernel materialisation; launches run concurrently. Four threads compiling
kernels that share a `@qd.func` once raised a SystemError inside CPython's `ast` module."""


def _compiling_after_fork() -> None:
    """A forked child has only the forking thread: a lock another thread held is new there."""
    global COMPILING
    COMPILING = threading.RLock()


os.register_at_fork(after_in_child=_compiling_after_fork)


@dataclasses.dataclass(frozen=True)
class FastcacheObservations:
    """`kernel._primal.src_ll_cache_observations`, as Quadrants' fastcache reports the latest
    compile of a `fastcache=True` kernel: keyed (fastcache on, the offline cache on, no field
    reached), then loaded from the cache (the manifest served it) or compiled and stored. All
    False for any other kernel."""

    cache_key_generated: bool = False
    cache_validated: bool = False
    cache_loaded: bool = False
    cache_stored: bool = False


class Kernel(KernelDef):
    """`@qd.kernel`: compiled on first call for each argument signature, then launched natively."""

    checkpoints = False
    """`@qd.kernel(graph=True, checkpoints=True)` (a `CheckpointKernel`)."""

    def __init__(self, fn: typing.Callable, autodiff: bool | str = False) -> None:
        self.fn = fn
        self.name = (
            fn.__name__
            + {
                False: "",
                True: ".grad",
                "forward": ".fwd",
                "validation": ".validation",
            }[autodiff]
        )
        self.__name__ = self.name
        self.__qualname__ = fn.__qualname__ + self.name[len(fn.__name__) :]
        """As functools.wraps gives it (`Outer.<locals>.k`): what an argument's error names."""
        self.__module__ = fn.__module__
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn  # what it wraps, as functools.wraps says (pytest collects it so)
        self.autodiff = autodiff  # type: ignore[assignment]
        self.use_graph = False
        """`@qd.kernel(graph=True)`: Quadrants' graph launch (qdlab launches it as any kernel)."""
        self.autodiff_mode = (
            AutodiffMode.REVERSE
            if autodiff is True
            else AutodiffMode.FORWARD
            if autodiff == "forward"
            else AutodiffMode.NONE
        )
        """Quadrants' `kernel.autodiff_mode`: VALIDATION while a `qd.ad.Tape(validation=True)`
        holds it (its launches then check the global data access rule, under debug=True)."""
        self.per_offload_cache_observations = Observations()
        self.fastcache = False
        """`@qd.kernel(fastcache=True)` (or the deprecated `pure=True`): Quadrants' purity rules
        hold (`Frontend.check_pure`)."""
        self.src_ll_cache_observations = FastcacheObservations()
        self.plans: dict[tuple, LaunchPlan] = {}
        """(signature, arch) -> the launch plan of the variant compiled for it."""
        self.generation = -1
        self.latest: Compiled | None = None
        self.warned: set[str] = set()
        self.on_construct: typing.Callable[[int, int, str], None] | None = None
        """Told (index, total, status) as each construct of a compile is ready; the magic's progress
        bar."""
        self.options: dict[str, object] = {}
        """`qd.init` settings for this kernel only, over the active config (`%%qdkernel --opt 1`
        sets them)."""
        self.param_names, self.defaults = binding.parameters(fn)
        self.method = data_oriented.is_method(fn)
        """Defined in a class body: its first parameter is the instance (`Kernel.__get__`)."""
        try:
            hints = inspect.get_annotations(fn, eval_str=True)
        except binding.ANNOTATION_ERRORS as e:
            which = unevaluable(fn, self.param_names)
            raise binding.invalid_annotation(fn, e, annotation_loc(fn, which)) from None
        except Exception as e:  # noqa: BLE001 - a user's annotation may raise anything
            raise QdError(
                f"kernel `{self.name}`: cannot evaluate its annotations ({e}).",
                annotation_loc(fn, unevaluable(fn, self.param_names)),
            ) from None
        self.annotations = []
        for k, name in enumerate(self.param_names):
            if k == 0 and name not in hints and self.method:
                hints[name] = Template  # `self`: the instance is a template argument
            if name not in hints:
                raise QdAnnotationError(
                    f"kernel `{self.name}`: parameter `{name}` needs a type annotation, e.g. "
                    f"`{name}: qd.types.NDArray[qd.f32, 1]` or `{name}: qd.f32`.",
                    annotation_loc(fn, k),
                )
            ann = annotation(hints[name])
            if struct_args.is_struct_type(hints[name]):
                ann = hints[name]  # a dataclass parameter: its members are the arguments
            if ann is None:
                raise QdTypeError(
                    f"kernel `{self.name}`: parameter `{name}` has an unsupported annotation "
                    f"{hints[name]!r}; use qd.types.NDArray[dtype, ndim], a scalar dtype such as "
                    "qd.f32, int, float, a dataclass or qd.Template (a @qd.data_oriented object is "
                    "passed through qd.Template).",
                    annotation_loc(fn, k),
                )
            self.annotations.append(ann)
        self.return_struct = (
            hints.get("return") if struct_types.members_of(hints.get("return")) else None
        )
        """A `@qd.dataclass` / `qd.types.struct` return type (its leaves are the return words)."""
        in_tuple = struct_types.tuple_return(hints.get("return"))
        self.return_tuple = in_tuple[1] if in_tuple is not None else None
        """For a tuple return holding a struct: each element's struct type (None for the others)."""
        parts = (
            struct_types.return_parts(self.return_struct)
            if self.return_struct is not None
            else in_tuple[0]
            if in_tuple is not None
            else vector_args.return_parts(hints.get("return"))
        )
        if parts is None:
            raise QdTypeError(
                f"kernel `{self.name}`: unsupported return annotation {hints['return']!r}.",
                annotation_loc(fn, "return"),
            )
        self.returns = [t for types, _ in parts for t in types]
        self.return_shapes = [shape for _, shape in parts]
        if self.checkpoints:  # the hidden resume point in, the pause out (`frontend/graphs.py`)
            if self.returns:
                raise QuadrantsSyntaxError(
                    f"kernel `{self.name}`: a @qd.kernel(graph=True, checkpoints=True) kernel "
                    "cannot return a value; its launches return a qd.GraphStatus."
                )
            self.param_names.append(graphs.RESUME_ARG)
            self.defaults[graphs.RESUME_ARG] = 0
            self.annotations.append(i32)
            self.returns, self.return_shapes = [i32], [()]
        self.params = tuple(
            Param(name, _kind(a), _key_fn(a), _size(a))
            for name, a in zip(self.param_names, self.annotations)
        )
        """Each parameter as a launch reads its argument (every variant's plan shares them)."""
        self.key_fns = tuple(p.key for p in self.params)
        self.array_params = tuple(
            k for k, p in enumerate(self.params) if p.kind is ARRAY or p.kind is TENSOR
        )
        """Positions of the parameters that take an array."""
        """`params`' key functions, read per launch."""
        self.specializations: list[str] = []
        """What tells each compiled variant apart (`qd.explain(k).specializations`)."""
        self.fast: dict[tuple, tuple[int, LaunchPlan]] = {}
        """Launch cache: a cheap key of the arguments -> the plan of the variant compiled for
        them."""

    @property
    def variants(self) -> dict[tuple, Compiled]:
        """(signature, arch) -> the variant compiled for it."""
        return {slot: plan.compiled for slot, plan in self.plans.items()}

    @property
    def mapper(self) -> types.SimpleNamespace:
        """Quadrants' `kernel.mapper` as its tests read it: `.mapping`, one entry per compiled
        specialisation (since the latest `qd.init`), keyed per parameter as Quadrants keys it (an
        ndarray by `(dtype, ndim, needs_grad, boundary, layout)`), valued by its number."""
        if self.generation != state.generation:
            return types.SimpleNamespace(mapping={})
        keys = [tuple(map(_mapper_feature, sig)) for sig, _ in self.plans]
        return types.SimpleNamespace(mapping={k: n for n, k in enumerate(dict.fromkeys(keys))})

    @property
    def _primal(self) -> Kernel:
        return self

    @property
    def grad(self) -> Kernel:
        """The reverse-mode gradient kernel: `k.grad(*same_args)` accumulates into the arguments'
        `.grad`."""
        __tracebackhide__ = True
        if self.autodiff:
            raise QdError(f"kernel `{self.name}` is already a gradient kernel.")
        g = self.__dict__.get("_grad")
        if g is None:
            g = self.__dict__["_grad"] = Kernel(self.fn, autodiff=True)
            g.options = self.options
        return g

    @property
    def forward(self) -> Kernel:
        """The forward-mode kernel a launch under `qd.ad.FwdMode` runs: the kernel with the duals
        of its fields computed alongside (`compiler/passes/forward_mode.py`)."""
        f = self.__dict__.get("_forward")
        if f is None:
            f = self.__dict__["_forward"] = Kernel(self.fn, autodiff="forward")
            f.options = self.options
        return f

    @property
    def second_buffer(self) -> str:
        """What a launch gives as each field's second buffer: its gradient, its dual (forward
        mode) or its check bits (validation)."""
        return {"forward": "dual", "validation": "checkbit"}.get(str(self.autodiff), "grad")

    @property
    def validation(self) -> Kernel:
        """The kernel with its accesses to fields with a gradient checked, which a launch under
        `qd.ad.Tape(validation=True)` runs with `debug=True` (`compiler/passes/validation.py`)."""
        v = self.__dict__.get("_validation")
        if v is None:
            v = self.__dict__["_validation"] = Kernel(self.fn, autodiff="validation")
            v.options = self.options
        return v

    def __repr__(self) -> str:
        return f"<qd.kernel {self.name}>"

    # -- arguments ---------------------------------------------------------------------------------
    def bind(self, args: tuple, kwargs: dict) -> tuple[tuple, list, dict]:
        args = self.positional(args, kwargs)
        sig, values, templates = [], [], {}
        for name, ann, a in zip(self.param_names, self.annotations, args):
            if ann is tensors.Tensor:  # either kind, as the argument is
                ann = Template if a is None or isinstance(a, FieldBase) else ArrayAnnotation()
            if isinstance(ann, ArrayAnnotation):
                index = self.param_names.index(name)
                arr, grad, t = array_arg(
                    a,
                    ann,
                    self.__qualname__,
                    name,
                    lambda index=index: annotation_loc(self.fn, index),
                )
                sig.append(t)
                values.append((arr, grad))
            elif struct_args.is_struct_type(ann) or (ann is Template and struct_args.is_struct(a)):
                entry, ref = struct_args.bind(self, name, a, None if ann is Template else ann)
                sig.append(entry)  # its member parameters, and the content of its other values
                templates[name] = ref
                values.append(None)
            elif ann is Template:
                if holds_ndarray(a):
                    raise QdArgumentError(
                        f"kernel `{self.name}`: argument `{name}` is or holds a qd.ndarray; "
                        "Ndarray shouldn't be passed in via `qd.template()`, please annotate "
                        "your kernel using `qd.types.ndarray(...)` instead (one "
                        "qd.types.NDArray[dtype, ndim] parameter per ndarray)."
                    )
                if isinstance(a, float) and state.config().raise_on_templated_floats:
                    raise QdValueError(
                        f"kernel `{self.name}`: template argument `{name}` is a float ({a!r}), and "
                        "qd.init(raise_on_templated_floats=True) refuses those: each new value "
                        "compiles the kernel again; pass it as a `qd.f32` parameter instead."
                    )
                templates[name] = a
                sig.append(("template", struct_args.template_key(a)))
                values.append(None)
            elif isinstance(ann, MatrixType):
                ann.refuse_unpacked("instantiate")
                loc = annotation_loc(self.fn, self.param_names.index(name))

                def convert(x: object, t: DType, name: str = name) -> object:
                    return scalar_arg(x, t, self.__qualname__, name)

                t, entries = vector_args.bind(a, ann, convert, self.__qualname__, name, loc)
                sig.append(t)
                values.append(entries)
            else:
                ann = scalar_type(ann)
                index = self.param_names.index(name)
                if isinstance(a, (bool, int, float, np.integer, np.floating, np.bool_)):
                    sig.append(ann)
                    values.append(scalar_arg(a, ann, self.__qualname__, name, index))
                else:
                    head = not_convertible(self.name, name, index, a, ann)
                    raise QdArgumentTypeError(
                        f"{head} must be a number ({ann}), not {type(a).__name__}."
                    )
        return tuple(sig), values, templates

    def positional(self, args: tuple, kwargs: dict) -> tuple:
        """The arguments in parameter order, keywords and defaults bound; a QdCallError (a
        TypeError) in Quadrants' words when they do not bind."""
        if not kwargs and len(args) == len(self.param_names):
            return args
        try:
            return tuple(binding.bind(self.param_names, self.defaults, args, kwargs))
        except binding.BindError as e:
            raise QdCallError(
                f"kernel `{self.name}` takes {len(self.param_names)} argument(s) "
                f"({', '.join(self.param_names)}), got {len(args) + len(kwargs)}: {e}."
            ) from None

    # -- compiling ---------------------------------------------------------------------------------
    def config(self) -> Config:
        """The settings this kernel compiles under: the active config with its own `options`
        applied."""
        return (
            dataclasses.replace(state.config(), **self.options) if self.options else state.config()
        )

    def spec(self, sig: tuple, templates: dict) -> KernelSpec:
        """What the pipeline lowers for one argument signature."""
        params = [
            ir.Param(name, i32 if isinstance(t, tuple) and t[0] == "template" else t)  # type: ignore[arg-type]
            for name, t in zip(self.param_names, sig)
        ]
        params += [  # the members of struct arguments that are arguments themselves
            ir.Param(n, t)
            for e in sig
            if isinstance(e, tuple) and e[:2] == ("template", "struct")
            for n, t in e[3]
        ]
        return KernelSpec(
            self.fn,
            self.name,
            params,
            [scalar_type(r) for r in self.returns],
            templates,
            Autodiff.of(self.autodiff),
            self.return_shapes if any(self.return_shapes) else [],
            graph=self.use_graph,
            pure=self.fastcache,
            checkpoints=self.checkpoints,
        )

    @property
    def is_pure(self) -> bool:
        """Quadrants' name for `fastcache`, which `@qd.pure` sets."""
        return self.fastcache

    @is_pure.setter
    def is_pure(self, value: bool) -> None:
        self.fastcache = bool(value)

    def compile_for(self, sig: tuple, templates: dict) -> tuple[Compiled, tuple[int, ...]]:
        """The variant for one signature, and the launch words of the fields it uses (their storage
        is allocated here)."""
        with COMPILING:
            return self._compile_for(sig, templates)

    def _compile_for(self, sig: tuple, templates: dict) -> tuple[Compiled, tuple[int, ...]]:
        cfg = self.config()
        state.compiled_count += 1
        previous = state.history.get(self.name)
        signature, by_members = struct_args.manifest_signature(self.param_names, sig, templates)
        spec = dataclasses.replace(
            self.spec(sig, templates), by_members=by_members, signature=signature
        )
        with collector.spaced_out():
            compiled = compile_cached(
                spec,
                signature,
                cfg,
                state.cache_for(cfg),
                targets.of(cfg.arch),
                previous,
                self.on_construct,
                Rebuild(self, spec, templates, cfg),  # if served: the pipeline runs later, if ever
            )
        state.history[self.name] = compiled
        field_words = field.launch_words(compiled.fields, self.second_buffer)
        self.latest = compiled
        total, recompiled, hit = compiled.observations
        self.per_offload_cache_observations = Observations(total, recompiled, hit)
        keyed = (
            bool(self.fastcache and cfg.option("src_ll_cache") and cfg.offline_cache)
            and not compiled.fields
        )
        served = compiled.observations == (-1, -1, -1)  # from the manifest, nothing lowered
        self.src_ll_cache_observations = FastcacheObservations(
            keyed, keyed and served, keyed and served, keyed and not served
        )
        if self.fastcache and self.field_through_template(templates):
            log.warning(  # Quadrants' words; its caps part is what tools match
                "[FASTCACHE][INVALID_FUNC] The pure function %s could not be fast cached, because "
                "one or more parameter types were invalid",
                self.name,
            )
        for hook in list(state.compile_hooks):
            hook(self, compiled)
        return compiled, field_words

    def field_through_template(self, templates: dict) -> bool:
        """Whether a field reaches this compile through a `qd.Template` parameter, a dataclass
        member annotated `qd.Template` or a data-oriented object's member: Quadrants' fastcache
        cannot key such a call and says so once per compile (`compile_for`); a field through a
        `qd.Tensor` annotation is its normal, silent path."""
        for name, ann in zip(self.param_names, self.annotations):
            v = getattr(templates.get(name), "value", templates.get(name))
            if (ann is Template and isinstance(v, FieldBase)) or _holds_template_field(v):
                return True
        return False

    def declared_signature(self, arg_types: tuple, why: str) -> tuple:
        """The signature from the annotations, or from explicit dtypes / ArrayTypes (`why` names the
        caller)."""
        sig = []
        for name, ann, given in zip(
            self.param_names,
            self.annotations,
            list(arg_types) + [None] * (len(self.annotations) - len(arg_types)),
        ):
            t = given or scalar_type(ann)
            if isinstance(t, ArrayAnnotation):
                if t.dtype is None or t.ndim is None:
                    raise QdTypeError(
                        f"kernel `{self.name}`: parameter `{name}` needs dtype and ndim {why}; "
                        "annotate it or pass its type."
                    )
                dtype, shape = vector_args.element(t.dtype)
                t = ArrayType(dtype, t.ndim, bool(t.needs_grad), t.boundary, shape)  # type: ignore[arg-type]
            if isinstance(t, MatrixType):
                t = vector_args.tensor_type(t)
            if t is Template or struct_args.is_struct_type(t):
                raise QdTypeError(
                    f"kernel `{self.name}`: {'template' if t is Template else 'struct'} parameter "
                    f"`{name}` needs a value."
                )
            sig.append(t)
        return tuple(sig)

    def compile(self, *arg_types: object) -> Compiled:
        """Compile ahead of the first call, from the annotations (or explicit dtypes /
        ArrayTypes)."""
        __tracebackhide__ = True
        try:
            return self.variant(
                self.declared_signature(arg_types, "to compile before its first call"), {}
            )
        except QdError as e:
            raise _user_facing(e) from None

    def variant(self, sig: tuple, templates: dict) -> Compiled:
        return self.plan(sig, templates).compiled

    def plan(self, sig: tuple, templates: dict) -> LaunchPlan:
        """The launch plan of the variant for `sig`, compiled on first need."""
        if self.generation != state.generation:
            self.plans.clear()
            self.generation = state.generation
        slot = (sig, self.config().arch)
        plan = self.plans.get(slot)
        if plan is None:
            compiled, field_words = self.compile_for(sig, templates)
            members, changed = struct_args.learn(self, compiled, templates)
            plan = self.plans[slot] = LaunchPlan.make(compiled, self.params, field_words, members)
            if changed:  # new member paths: new launch keys
                self.fast.clear()
            self.specializations.append(struct_args.describe(self, compiled, templates))
        return plan

    # -- launching ---------------------------------------------------------------------------------
    def __call__(self, *args: object, **kwargs: object) -> object:
        __tracebackhide__ = True  # IPython and pytest leave this frame out of tracebacks
        pyquadrants.current.materialize()  # the hook programs patch (deferred fills land here)
        if kwargs and "qd_stream" in kwargs:  # every kernel takes it (launches run in order)
            kwargs = dict(kwargs)
            given = kwargs.pop("qd_stream")
            stream.check_launch(given, self.name, bool(self.autodiff), self.use_graph)
        try:
            args = self.positional(args, kwargs)
            if tensors.made:  # a qd.Tensor argument is what it holds
                args = tuple(tensors.unwrap(a) for a in args)
            if state.tape is not None and not self.autodiff:
                state.tape.insert(self, args)
            if state.fwd is not None and not self.autodiff:
                return self.forward(*args)
            if self.autodiff_mode is AutodiffMode.VALIDATION and self.config().debug:
                return self.validation(*args)
            cuda = (self.options or state.config().arch != "cpu") and self.config().arch == "cuda"
            key = None if cuda else self.key(args)
            entry = self.fast.get(key) if key is not None else None
            if entry is not None and entry[0] == state.generation:
                return self.launch(entry[1], args)
            fortran = fortran_arrays(args, self.array_params)  # never in a launch cache key
            if fortran:
                return self.on_copies(args, fortran)
            if cuda:
                return self.launch_cuda(args, {})
            sig, _, templates = self.bind(args, {})
            plan = self.plan(sig, templates)
            key = self.key(args)  # the compile may have taught struct parameters new paths
            if key is not None:
                self.fast[key] = (state.generation, plan)
            return self.launch(plan, args)
        except QdError as e:
            raise _user_facing(e) from None

    def on_copies(self, args: tuple, positions: list[int]) -> object:
        """As Quadrants does for a Fortran-ordered (transposed) NumPy array: the kernel runs on a
        C-ordered copy, copied back into the argument after the launch."""
        copies = list(args)
        for k in positions:
            copies[k] = np.ascontiguousarray(args[k])
            copies[k].flags.writeable = args[k].flags.writeable
        result = self(*copies)
        for k in positions:
            if args[k].flags.writeable:
                np.copyto(args[k], copies[k])
        return result

    def key(self, args: tuple) -> tuple | None:
        """The launch cache's key of these arguments; None when they need binding first."""
        try:
            return tuple(f(a) for f, a in zip(self.key_fns, args))
        except (AttributeError, TypeError):
            return None

    def __get__(self, obj: object, cls: type | None = None) -> object:
        """A kernel method of a data-oriented class, bound to its instance (a kernel defined
        elsewhere and stored on a class stays unbound)."""
        if obj is None or not self.method:
            return self
        return data_oriented.bind(self, obj)

    def launch_cuda(self, args: tuple, kwargs: dict) -> object:
        """A launch on the GPU: arguments bound (device arrays by pointer, host arrays copied by the
        launcher), the overlap check of the pairs the split relies on, then the CUDA launcher."""
        sig, values, templates = self.bind(args, kwargs)
        plan = self.plan(sig, templates)
        compiled = plan.compiled
        launcher: typing.Any = plan.launcher  # the whole-kernel one after an alias
        if plan.members is not None:
            values += plan.members.values(args)
        if compiled.alias_pairs:
            extents = [array_launch(*v)[1] if isinstance(v, tuple) else None for v in values]
            overlap = launcher.overlapping(extents)
            if overlap:
                self.warn_alias(overlap)
                launcher = compiled.whole_launcher(state.cache())
        values += [f._launch_value(self.second_buffer) for f in compiled.fields]
        return self.rebuild(launcher.run_values(values, state.config().random_seed))

    def launch(self, plan: LaunchPlan, args: tuple) -> object:
        """Fill the launch words straight from the arguments (their types were checked when the key
        was made)."""
        words: list = []
        launcher: typing.Any = plan.launcher  # the whole-kernel one after an alias
        extents: list | None = [None] * len(launcher.params) if launcher.alias_pairs else None
        for k, (kind, a) in enumerate(zip(plan.kinds, args)):
            if kind is ARRAY or (kind is TENSOR and a is not None and not isinstance(a, FieldBase)):
                if type(a) in NDARRAYS:  # its words and extent, made when it was allocated
                    words.extend(a._words)
                    if extents is not None:
                        extents[k] = a._extent
                else:
                    arr_words, extent = array_launch(
                        *((a, None) if type(a) is np.ndarray else host_arrays(a))
                    )
                    words.extend(arr_words)
                    if extents is not None:
                        extents[k] = extent
            elif kind is VECTOR:
                entries = vector_args.entries(a)
                if len(entries) != plan.sizes[k]:
                    return self.rebuild(self.relaunch(plan, args))
                words.extend(entries)
            else:
                words.append(a if kind is SCALAR else 0)  # a number: the key checked its type
        members: Sequence = ()
        if plan.members is not None:  # struct members, after the rest
            got = plan.members.words(args, extents)
            if got is None:
                return self.rebuild(self.relaunch(plan, args))
            members = got
        for k in plan.written:
            a = args[k]
            if type(a) not in NDARRAYS and not as_numpy(a).flags.writeable:
                raise QdValueError(
                    f"kernel `{self.name}` writes argument `{self.param_names[k]}`, which is a "
                    "read-only array."
                )
        if extents is not None:
            overlap = launcher.overlapping(extents)
            if overlap:
                full = plan.compiled.full
                if isinstance(full, Rebuild) and not full.alive():
                    full.renew(args)
                self.warn_alias(overlap)
                launcher = plan.compiled.whole_launcher(state.cache())
        state.last_launcher = launcher
        try:
            parts = (words, members, plan.field_words)  # fields' hidden parameters come last
            return self.rebuild(launcher.run_parts(parts, plan.cuts, state.config().random_seed))
        except (struct.error, OverflowError):
            pass  # a value its word cannot hold (2**40 for an i32, 2.0 for an int, a 2**31 extent)
        return self.rebuild(self.relaunch(plan, args, launcher))

    def relaunch(self, plan: LaunchPlan, args: tuple, launcher: typing.Any = None) -> object:
        """A launch whose words did not pack: bind raises the precise error, or converts the
        values."""
        _, values, _ = self.bind(args, {})
        words: list = []
        for kind, v in zip(plan.kinds, values):
            if kind is ARRAY or (kind is TENSOR and v is not None):
                words.extend(array_launch(*v)[0])
            elif kind is VECTOR:
                words.extend(v)  # type: ignore[arg-type]
            else:
                words.append(v if kind is SCALAR else 0)
        if plan.members is not None:
            words.extend(plan.members.checked(args))
        words.extend(plan.field_words)
        return (launcher or plan.launcher).run(words, state.config().random_seed)

    def rebuild(self, result: object) -> object:
        """Return words as the annotation shapes them: a qd.Vector / qd.Matrix per vector part, a
        struct for a struct return."""
        if any(self.return_shapes):
            result = vector_args.rebuild(result, self.return_shapes, self.returns)
        if self.return_struct is not None:
            return struct_types.rebuild(self.return_struct, result)
        if self.return_tuple is not None:
            return struct_types.rebuild_tuple(self.return_tuple, result)
        return result

    def warn_alias(self, overlap: list[tuple[str, str]]) -> None:
        pairs = ", ".join(f"`{a}` and `{b}`" for a, b in overlap)
        if pairs not in self.warned:
            self.warned.add(pairs)
            log.warning(
                "[PER_OFFLOAD][FALLBACK] kernel `%s`: aliased_arguments: %s share memory, so this "
                "call runs the whole-kernel variant.",
                self.name,
                pairs,
            )
        if self.latest is not None:
            try:
                report = self.latest.report
            except QdError:  # a served variant whose objects are gone: no report to add to
                return
            report.runtime_fallbacks.append(f"aliased_arguments: {pairs}")


class Rebuild:
    """The whole pipeline of a variant the manifest served (`Compiled.full`: the visualizer's
    report, the whole kernel an aliased launch needs), holding the objects of its struct
    arguments weakly: a variant outlives them (a data-oriented object and its arrays are freed
    when the program drops them, as in Quadrants). `renew` gives it a live launch's objects
    when these are gone (instances with equal content share a variant)."""

    def __init__(self, kernel: Kernel, spec: KernelSpec, templates: dict, cfg: Config) -> None:
        self.kernel, self.cfg = kernel, cfg
        self.spec = dataclasses.replace(spec, templates={})
        self.plain = {n: v for n, v in templates.items() if not isinstance(v, StructRef)}
        self.structs: dict[str, tuple[typing.Callable[[], object], type | None]] = {}
        for name, ref in templates.items():
            if isinstance(ref, StructRef):
                typed = ref.annotation if isinstance(ref.annotation, type) else None
                self.structs[name] = (held_weakly(ref.value), typed)

    def templates(self) -> dict | None:
        out = dict(self.plain)
        for name, (get, typed) in self.structs.items():
            obj = get()
            if obj is None:
                return None
            out[name] = struct_args.bind(self.kernel, name, obj, typed)[1]
        return out

    def alive(self) -> bool:
        return all(get() is not None for get, _ in self.structs.values())

    def renew(self, args: tuple) -> None:
        """Hold these arguments' struct objects instead (theirs compile to the same variant)."""
        for name, (_, typed) in list(self.structs.items()):
            obj = args[self.kernel.param_names.index(name)]
            self.structs[name] = (held_weakly(obj), typed)

    def __call__(self, previous: Compiled | KernelReport | None) -> Compiled:
        templates = self.templates()
        if templates is None:
            raise QdError(
                f"kernel `{self.kernel.name}`: the objects this variant was compiled for are gone; "
                "launch it again to see its report."
            )
        spec = dataclasses.replace(self.spec, templates=templates)
        cfg = self.cfg
        return compile_kernel(spec, cfg, state.cache_for(cfg), targets.of(cfg.arch), previous)


def held_weakly(obj: object) -> typing.Callable[[], object]:
    """A weak reference to `obj`, or (for an object that takes none) `obj` held strongly."""
    try:
        return weakref.ref(obj)
    except TypeError:
        return lambda: obj


def kernel(
    fn: typing.Callable | None = None, **options: object
) -> Kernel | typing.Callable[[typing.Callable], Kernel]:
    """`@qd.kernel` (options such as `fastcache=True` are accepted for compatibility)."""
    __tracebackhide__ = True
    if fn is None:
        made = functools.partial(kernel, **options)  # a C call: no frame of its own
        return typing.cast("typing.Callable[[typing.Callable], Kernel]", made)
    if hasattr(fn, "__wrapped__"):  # a decorated function: `@qd.kernel` must come outermost
        raise QuadrantsSyntaxError(
            "Cant put kernel in front of other annotations (error code: KERNEL_ANNOTATION_ORDER)."
        )
    if options.get("checkpoints") and not options.get("graph"):
        raise QuadrantsSyntaxError(
            "@qd.kernel(checkpoints=True) requires graph=True: the pause / resume model of "
            "qd.checkpoint applies to graph kernels; write "
            "@qd.kernel(graph=True, checkpoints=True)."
        )
    try:
        k = CheckpointKernel(fn) if options.get("checkpoints") else Kernel(fn)
    except QdError as e:
        raise _user_facing(e) from None
    k.use_graph = bool(options.get("graph", False))
    if options.get("pure") is not None:
        warnings.warn(
            "@qd.kernel parameter `pure` is deprecated. Please use parameter `fastcache`. `pure` "
            "parameter is intended to be removed in 4.0.0",
            stacklevel=2,
        )
    k.fastcache = bool(options.get("fastcache") or options.get("pure"))
    return k


class CheckpointKernel(Kernel):
    """`@qd.kernel(graph=True, checkpoints=True)`: each launch returns a `qd.GraphStatus`, and
    `resume(..., from_checkpoint=label)` starts a launch at that checkpoint (`frontend/graphs.py`
    lowers the stages)."""

    checkpoints = True

    def __call__(self, *args: object, **kwargs: object) -> object:
        __tracebackhide__ = True
        if graphs.RESUME_ARG in kwargs:
            raise QdCallError(f"Unexpected argument '{graphs.RESUME_ARG}'")
        return self.status(super().__call__(*args, **kwargs))

    def resume(self, *args: object, from_checkpoint: object, **kwargs: object) -> GraphStatus:
        """Launch from the checkpoint labelled `from_checkpoint` (skipping every stage before it in
        source order)."""
        __tracebackhide__ = True
        if isinstance(from_checkpoint, bool) or not isinstance(from_checkpoint, int):
            raise RuntimeError(  # noqa: TRY004 - Quadrants' type, which programs catch
                "from_checkpoint= must be an int or IntEnum value matching a "
                "`qd.checkpoint(cp_id=...)` label in the kernel (typically `status.checkpoint` "
                f"from the previous launch's GraphStatus); got {from_checkpoint!r}."
            )
        try:
            sig, _, templates = self.bind(args, kwargs)
            table = self.plan(sig, templates).compiled.checkpoints
        except QdError as e:
            raise _user_facing(e) from None
        labels = table.labels if table is not None else []
        index = next(
            (k for k, v in enumerate(labels) if v is not None and v == from_checkpoint), -1
        )
        if index < 0:
            known = [v for v in labels if v is not None]
            raise RuntimeError(
                f"from_checkpoint={from_checkpoint!r} does not match any qd.checkpoint(cp_id=...) "
                f"in kernel {self.name!r}; its labels are {known!r}."
            )
        return self.status(Kernel.__call__(self, *args, **kwargs, **{graphs.RESUME_ARG: index}))

    def status(self, paused: object) -> GraphStatus:
        state.last_yield = paused if isinstance(paused, int) else -1
        if state.last_yield < 0:
            return GraphStatus(False)
        return GraphStatus(True, self.labels_of(state.last_launcher)[state.last_yield])

    def labels_of(self, launcher: object) -> list[object]:
        """The stage labels of the variant whose launcher ran."""
        for plan in self.plans.values():
            c = plan.compiled
            if c.checkpoints is not None and launcher in (c.launcher, c.whole):
                return c.checkpoints.labels
        latest = self.latest.checkpoints if self.latest is not None else None
        return latest.labels if latest is not None else []

    @property
    def checkpoint_user_labels_by_cp_id(self) -> list[object]:
        """Each stage's label by internal index (None for a `for` outside any checkpoint)."""
        table = self.latest.checkpoints if self.latest is not None else None
        return list(table.labels) if table is not None else []

    @property
    def checkpoint_yield_on_args(self) -> list[str | None]:
        """Each stage's `yield_on=` expression, as written (None for an implicit stage)."""
        table = self.latest.checkpoints if self.latest is not None else None
        return list(table.yield_on) if table is not None else []


def _mapper_feature(entry: object) -> object:
    """A signature entry as Quadrants' template mapper keys the argument (`Kernel.mapper`)."""
    if isinstance(entry, ArrayType):
        return (entry.dtype, entry.ndim, entry.needs_grad, entry.boundary, entry.layout)
    return entry


def _kind(a: object) -> str:
    """A parameter's kind, from its annotation."""
    if a is tensors.Tensor:
        return TENSOR
    if isinstance(a, ArrayAnnotation):
        return ARRAY
    if a is Template or struct_args.is_struct_type(a):
        return TEMPLATE
    return VECTOR if isinstance(a, MatrixType) else SCALAR


def _key_fn(a: object) -> typing.Callable[[typing.Any], object]:
    """What the launch cache keys a parameter's argument on, from its annotation."""
    if isinstance(a, ArrayAnnotation):
        if isinstance(a.dtype, MatrixType):
            return vector_args.element_key(len(a.dtype.shape))
        return array_key
    if a is tensors.Tensor:
        return tensor_key
    if a is Template or struct_args.is_struct_type(a):
        return struct_args.StructKey(a is not Template)
    return type


def fortran_arrays(args: tuple, positions: tuple[int, ...]) -> list[int]:
    """Positions among `positions` of the NumPy arguments laid out in Fortran order only."""
    return [
        k
        for k in positions
        if k < len(args)
        and type(a := args[k]) is np.ndarray
        and not a.flags.c_contiguous
        and a.flags.f_contiguous
    ]


def _size(a: object) -> int:
    """Entries of a vector or matrix parameter (0 for the others)."""
    return math.prod(a.shape) if isinstance(a, MatrixType) else 0


def tensor_key(a: object) -> object:
    """The launch key of a `qd.Tensor` parameter's argument: a field by identity, an array by
    signature, None (no tensor) as itself."""
    if a is None:
        return None  # `qd.static(x is None)`: absent
    return ("field", a.key) if isinstance(a, FieldBase) else array_key(a)


def holds_ndarray(a: object) -> bool:
    """Whether a template argument is an ndarray or a tuple or list with one inside."""
    if isinstance(a, (tuple, list)):
        return any(holds_ndarray(x) for x in a)
    return isinstance(a, Ndarray)


def _user_facing(e: QdError) -> QdError:
    """`e` without the frames it came through (its message points at the user's line); with them all
    when QDLAB_DEBUG_FRONTEND=1."""
    return e if os.environ.get("QDLAB_DEBUG_FRONTEND") == "1" else e.with_traceback(None)


def _outside_qdlab(code: types.CodeType) -> types.CodeType:
    """`code`, and the code nested in it, naming a file outside qdlab/."""
    return code.replace(
        co_filename="<qdlab>",
        co_consts=tuple(
            _outside_qdlab(c) if isinstance(c, types.CodeType) else c for c in code.co_consts
        ),
    )


# The entry points a user-facing error leaves qdlab through: the frame of the one it was raised from
# stays in its traceback, so their code names no file in qdlab/, and the traceback holds no qdlab
# frame (IPython and pytest leave them out altogether: `__tracebackhide__`). QDLAB_DEBUG_FRONTEND=1
# at import keeps the real file.
if os.environ.get("QDLAB_DEBUG_FRONTEND") != "1":
    for _fn in (Kernel.__call__, Kernel.compile, Kernel.grad.fget, Func.__call__, kernel):
        _fn.__code__ = _outside_qdlab(_fn.__code__)  # type: ignore[union-attr]
    del _fn
