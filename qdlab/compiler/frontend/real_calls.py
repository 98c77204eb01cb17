"""A `@qd.real_func` that calls itself (directly or through other functions), compiled as a real
call: a function of the kernel (`ir.Function`) that each construct calling it defines in its own
module, and an `ir.Call` where it is called. A part of the frontend's visitor.

Every other real_func is lowered in its caller (`real_funcs.py`): inlined code keeps the simplify
passes and the split working across the call, and runs as fast as today (bench/real_func.py). The
decision is taken in one place, `calls_needed`: when lowering finds a real_func already being
lowered further up, it unwinds the kernel (`CallsNeeded`) and the pipeline lowers it again with
that function called (`pipeline.lower`), every call of it, the first one included.

A called function takes its scalar parameters by value (converted to their annotations, as an
inlined one does); a `qd.template()` or ndarray parameter takes a field or an ndarray of the kernel,
or a Python value, fixed at compile time: each distinct set of them is a function of its own. What
its body reads and writes is the kernel's arrays themselves, so the split, the gate and the offload
see the call doing what its body does (`ir.Call`: a walk goes on into the body).
"""

from __future__ import annotations

from qdlab.core import language as lang

from ...core.errors import QdError, QdTypeError
from ...core.types import ArrayType, DType
from .. import ir
from .scope import CallsNeeded, FuncReturn, Local, Scope, dtype_of
from .source import Source

_SAVED = (
    "block",
    "scope",
    "loop_depth",
    "for_depth",
    "parallel_depth",
    "top_level",
    "in_runtime_if",
    "serialize_next",
    "loop_name",
    "block_dim",
    "loc",
)
"""The frontend's state around a statement, set aside while a function's body is lowered."""


class RealCalls:
    """Mixed into `Frontend` (through `RealFuncs`); uses its `visit`, `value`, `cast`, `emit`,
    `error`, `scope`, `record` and `real_body`."""

    def calls_needed(self, func: object) -> bool:
        """Whether `func` is called rather than lowered in its caller: it calls itself. Found while
        lowering: a real_func met again further down unwinds the kernel to be lowered again."""
        if func in self.lowering.calls:
            return True
        if func in self.__dict__.setdefault("real_stack", []):
            raise CallsNeeded(func)
        return False

    def real_call(
        self, func: lang.RealFunc, source: Source, params: list, bound: tuple, annotations: dict
    ) -> ir.Value | None:
        """A call of `func` with these arguments; its function is lowered at its first call."""
        ret = annotations.get("return")
        name = func.__name__
        if ret is not None and not isinstance(ret, DType):
            raise self.error(
                f"@qd.real_func `{name}` calls itself and returns {ret!r}: qdlab compiles a "
                "recursive real_func as a real call, which returns a scalar (or nothing)."
            )
        operands, key, binding = [], [], []
        for p, x in zip(params, bound):
            ann = annotations.get(p.arg)
            if isinstance(x, Local):
                x = self.emit(ir.LocalLoad, [x.ref], dtype_of(x.ref), p.arg)
            if isinstance(ann, DType):
                operands.append(self.cast(self.value(x, ann), ann))
                key.append(("scalar", str(ann)))
                binding.append((p.arg, True, ann))
            elif ann in (lang.Template, lang.template) or isinstance(ann, lang.ArrayAnnotation):
                if isinstance(x, ir.Value) and not isinstance(x.type, ArrayType):
                    raise self.error(
                        f"Argument {p.arg} of recursive @qd.real_func `{name}` is a "
                        f"{ann!r} parameter given a value computed at run time: qdlab compiles a "
                        "recursive real_func as a real call, whose template parameters take a "
                        "field, an ndarray or a Python value; annotate it with its type "
                        "(`qd.i32`) to pass it by value.",
                        QdTypeError,
                    )
                key.append(("fixed", id(x)))
                binding.append((p.arg, False, x))
            else:
                raise self.error(
                    f"Parameter {p.arg} of recursive @qd.real_func `{name}` is annotated "
                    f"{ann!r}: qdlab compiles a recursive real_func as a real call, whose "
                    "parameters are scalars (qd.i32, qd.f32, ...), fields, ndarrays or "
                    "qd.template() values; pass vectors, structs and qd.ref locals as fields.",
                    QdTypeError,
                )
        functions = self.__dict__.setdefault("functions", {})
        fkey = (func, tuple(key))
        if fkey not in functions:
            self.lower_function(func, source, annotations, binding, fkey)
        fn = functions[fkey][0]
        return self.emit(ir.Call, operands, ret, name, function=fn)

    def lower_function(
        self, func: lang.RealFunc, source: Source, annotations: dict, binding: list, fkey: tuple
    ) -> None:
        """The function of `func` for these fixed arguments, registered under `fkey` before its
        body is lowered (where it calls itself), into a block of its own and from a state of its
        own (no enclosing loop, not at the top level)."""
        functions = self.__dict__["functions"]
        taken = {f.name for f, _ in functions.values()}
        name = base = func.__name__
        n = 0
        while name in taken:
            n += 1
            name = f"{base}.{n}"
        params = [ir.Value(x, p) for p, scalar, x in binding if scalar]
        fn = ir.Function(name, params, annotations.get("return"), self.loc)
        functions[fkey] = (fn, [x for _, _, x in binding])  # the ids in the key stay theirs
        frame, given = {}, iter(params)
        for p, scalar, x in binding:
            frame[p] = next(given) if scalar else x
        saved = {k: getattr(self, k) for k in _SAVED}
        fn_globals = getattr(func.fn, "__globals__", {})
        owner = saved["scope"].owner
        self.block, self.loop_depth, self.parallel_depth = fn.body, 0, 0
        self.for_depth = 0
        self.in_runtime_if, self.serialize_next, self.loop_name, self.block_dim = (
            0,
            False,
            None,
            None,
        )
        self.scope = Scope(source, source.tree.name, fn_globals, [frame], [], True, (0, 0), owner)
        self.record("<source>", func)
        call = self.loc
        try:
            try:
                self.real_body(func, source, annotations)
            except FuncReturn:
                pass
            result = self.scope.returned[0] if self.scope.returned else None
            ret = annotations.get("return")
            if ret is not None and result is None:
                raise self.error(f"@qd.real_func `{base}` ends without returning its {ret}.")
            value = self.cast(self.value(result, ret), ret) if ret is not None else None
            self.emit(ir.Result, [value] if value is not None else [])
        except QdError as e:
            raise e.called_from(call) from None
        finally:
            for k, v in saved.items():
                setattr(self, k, v)
        for op in fn.body.walk():
            if "draw" in op.effects:
                raise self.error(
                    f"qd.random() in recursive @qd.real_func `{base}`: qdlab compiles a recursive "
                    "real_func as a real call, where random draws are not supported yet; draw in "
                    "the kernel and pass the number as an argument."
                )
