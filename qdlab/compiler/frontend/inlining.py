"""The call of a `@qd.func`: its arguments bound to its parameters as Python binds them, each
converted or checked by its annotation (evaluated from the func's source while it compiles), and its
body lowered in place, in a scope of its own. A part of the frontend's visitor."""

from __future__ import annotations

import ast
import sys

from qdlab.core import language as lang

from ...core import binding
from ...core.errors import QdCallError, QdCompileValueError, QdError, QdSyntaxError
from ...core.types import ArrayType, DType
from .. import ir
from .fingerprint import UNKNOWN
from .scope import FuncReturn, GradOf, Scope
from .source import MISSING, func_source, resolve_dotted
from .struct_values import StructLocal, StructValue
from .vectors import Vec


class Inlining:
    """Mixed into `Frontend`; uses its `visit`, `value`, `cast`, `emit`, `error`, `scope`,
    `resolve_static`, `record`, `deps` and the vector helpers (`vec_of`, `from_type`,
    `new_vec_local`)."""

    def inline(self, func: lang.Func, node: ast.Call) -> object:
        starred = [k for k, a in enumerate(node.args) if isinstance(a, ast.Starred)]
        if starred and (starred[-1] != len(node.args) - 1 or len(starred) > 1 or node.keywords):
            raise self.error(
                "* args can only be present as the last argument of a function (error code: "
                "STARNOTLAST): a `*args` argument of a @qd.func call must be its last argument, "
                "with no keyword arguments after it."
            )
        args = self.template_refs(func, node.args, self.visit_args(node.args))
        kwargs = {kw.arg: self.visit(kw.value) for kw in node.keywords}
        return self.inline_call(func, args, kwargs, self.call_path(node.func, None), site=node)

    def inline_call(
        self,
        func: lang.Func,
        args: list,
        kwargs: dict,
        via: str,
        method: bool = False,
        site: ast.Call | None = None,
    ) -> object:
        """The body of @qd.func `func` lowered here with these argument values; its result. A
        method's `self` (a struct local, a field's element) is the caller's own when `method` (a
        func defined in the class body), as in the reference: the body's writes to it stay;
        every other struct is passed by value. A call that is a whole statement of the kernel's
        top level (`site`) has its body's statements replayed by the statement memo when they
        did not change (`stmt_memo.Memo.nests`)."""
        if self.inline_depth > 32:
            raise self.error("@qd.func calls nest too deeply (recursion is not supported).")
        if getattr(func, "requires_top_level", False) and not self.top_level:
            raise self.error(
                f"`{func.__name__}` is decorated with requires_top_level=True and must be called "
                "at the top level of a @qd.kernel (or directly inside a `while "
                "qd.graph.do_while(...)` body). It cannot be nested inside a runtime for / if / "
                "while: there its loops would no longer run in parallel."
            )
        real = isinstance(func, lang.RealFunc)
        called = real and self.calls_needed(func)  # a recursive one: `real_calls.py`
        source = func_source(func)
        params = source.tree.args.args
        try:
            bound = binding.bind(*binding.parameters(func.fn), tuple(args), kwargs)
        except binding.BindError as e:
            raise self.error(f"{source.tree.name}(): {e}.", QdCallError) from None
        fn_globals = getattr(func.fn, "__globals__", {})
        outer = self.scope
        step = owner_step(outer.source.fn, via, func)
        owner = f"{outer.owner}/{step}" if outer.owner else step
        self.scope = Scope(source, source.tree.name, fn_globals, [{}], [], True, (0, 0), owner)
        try:  # in the func's own scope: its globals and closure
            annotations = self.func_annotations(source.tree, func.fn)
        finally:
            self.scope = outer
        if called and isinstance(func, lang.RealFunc):
            return self.real_call(func, source, params, bound, annotations)
        frame: dict = {}
        assigned = set() if real else assigned_names(source.tree)  # a real_func's are immutable
        for k, (p, x) in enumerate(zip(params, bound)):
            ann = annotations.get(p.arg)
            if real:
                by_ref, x = self.real_arg(p.arg, ann, x)
                if by_ref:
                    frame[p.arg] = x
                    continue
            self.check_struct_param(p.arg, ann, x)
            if isinstance(ann, lang.MatrixType):
                given = self.vec_of(x)
                if given is not None and given.shape[0] != ann.shape[0]:
                    raise self.error(
                        f"Argument {p.arg} of type {ann.to_string()} is expected to be a Matrix "
                        f"with n {ann.shape[0]}, but got {given.shape[0]}."
                    )
                x = self.from_type(ann, [x])
            elif isinstance(ann, lang.ArrayAnnotation):
                self.check_array_param(p.arg, ann, x)
            elif isinstance(ann, DType):
                x = self.cast(self.value(x, ann), ann)
            elif (
                ann not in (lang.Template, lang.template)
                and isinstance(x, (int, float))
                and not isinstance(x, bool)
            ):
                x = self.value(x)
            if isinstance(x, Vec):  # passed by value: the body may write its entries
                x = self.new_vec_local(p.arg, x)
            elif p.arg in assigned and isinstance(x, ir.Value) and isinstance(x.type, DType):
                x = self.new_local(p.arg, x)  # a variable of the body's, as in the reference
            elif isinstance(x, StructValue) or (
                isinstance(x, StructLocal)
                and not (method and k == 0)
                and ann not in (lang.Template, lang.template)  # the caller's own: `template_refs`
            ):
                x = self.new_struct_local(p.arg, self.struct_value(x))
            frame[p.arg] = x
        self.scope = Scope(
            source,
            source.tree.name,
            fn_globals,
            [frame],
            [],
            True,
            (self.loop_depth, self.in_runtime_if),
            owner,
        )
        self.record("<source>", func)
        memo = self.memo
        if memo is not None:
            memo.note(owner, source)
        self.inline_depth += 1
        call = self.loc
        self.call_sites.append(source.loc(source.tree, source.tree.name))
        try:
            if isinstance(func, lang.RealFunc):
                self.real_body(func, source, annotations)
            elif memo is not None and site is not None and memo.nests(self, site):
                memo.lower_body(self, source.tree.body)
            else:
                for s in source.tree.body:
                    self.visit(s)
        except FuncReturn:
            pass
        except QdError as e:
            raise e.called_from(call)  # the error shows this call as a frame of its own
        finally:
            self.inline_depth -= 1
            self.call_sites.pop()
            returned, self.scope = self.scope.returned, outer
        result = returned[0] if returned else None
        ret_ann = annotations.get("return")
        if result is None and ret_ann is not None and not isinstance(func, lang.RealFunc):
            raise QdSyntaxError(
                "Function has a return type but does not have a return statement; end it with "
                "`return ...`.",
                source.loc(source.tree, source.tree.name),
            ).called_from(call)
        if isinstance(result, StructLocal):  # returned by value
            result = self.struct_value(result)
        if isinstance(ret_ann, lang.MatrixType) and result is not None:
            result = self.from_type(ret_ann, [result])
        elif isinstance(ret_ann, DType) and result is not None:
            result = self.cast(self.value(result, ret_ann), ret_ann)
        return result

    def func_annotations(self, tree: ast.FunctionDef, fn: object) -> dict:
        """A `@qd.func`'s parameter and return annotations, evaluated from its source while it
        compiles: a string annotation (`from __future__ import annotations`) means what the
        written one does, and every global or closure value one names is a dependency the manifest
        checks. One that names what neither holds (a class local to the function that defined the
        func) is taken as Python evaluated it, and the kernel is then not served by the manifest,
        which could not find it again."""
        nodes = {p.arg: p.annotation for p in tree.args.args} | {"return": tree.returns}
        raw = getattr(fn, "__annotations__", {})
        out = {}
        for name, node in nodes.items():
            if node is None:
                continue
            try:
                out[name] = self.resolve_static(node, annotation=True)
            except QdError:
                if name not in raw or isinstance(raw[name], str):
                    raise
                out[name] = raw[name]
                self.deps.add(("", "<annotation>", UNKNOWN))
        return out

    def check_array_param(self, name: str, ann: lang.ArrayAnnotation, x: object) -> None:
        """An array passed to a `@qd.func` parameter annotated `qd.types.ndarray(dtype=, ndim=)`
        has that element type and rank (Quadrants' words when not)."""
        t = getattr(GradOf.unpack(x)[0], "type", None)
        if not isinstance(t, ArrayType):
            return
        want, resolve = ann.dtype, lang.matrix.resolve_dtype
        given = f"[Tensor ({', '.join(map(str, t.element))}) {t.dtype}]" if t.element else t.dtype
        if isinstance(want, lang.MatrixType):
            if t.element != want.shape or (want.dtype and resolve(want.dtype) != t.dtype):
                raise self.error(
                    f"Invalid value for argument {name} - required element type: "
                    f"{want.to_string()}, but {given} is provided",
                    QdCompileValueError,
                )
        elif want is not None and (t.element or resolve(want) != t.dtype):
            raise self.error(
                f"Invalid value for argument {name} - required element type: {resolve(want)}, "
                f"but {given} is provided",
                QdCompileValueError,
            )
        if ann.ndim is not None and ann.ndim != t.ndim:
            raise self.error(
                f"Invalid value for argument {name} - required ndim={ann.ndim}, but {t.ndim}d "
                "ndarray is provided",
                QdCompileValueError,
            )


def owner_step(caller: object, via: str, func: object) -> str:
    """The step of an owner path (`Scope.owner`) by which the manifest finds `func` again from the
    function that calls it: the call's dotted name when it means `func` there, else the name `func`
    was defined under when that does (a func called through a compile-time local, `R =
    qd.static(helper)`); else the call's name (a method reached through `self`), which finds no
    owner, so the manifest compiles."""
    if resolve_dotted(caller, via) is func:
        return via
    name = getattr(getattr(func, "fn", None), "__name__", None)
    if name and resolve_dotted(caller, name) is func:
        return name
    absolute = module_step(func)
    return absolute if absolute is not None else via


def module_step(func: object) -> str | None:
    """`module:name`, an owner step that finds a func defined at the top of a module in whatever
    function calls it: a func passed in as a template argument (Genesis' BVH query calls the
    `filter` its caller names). None for a method (its object is the caller's business) or a func
    defined inside a function."""
    fn = getattr(func, "fn", None)
    module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
    if not module or not qualname.isidentifier():
        return None
    step = f"{module}:{qualname}"
    return step if resolve_module_step(step) is func else None


def resolve_module_step(step: str) -> object:
    """What a `module_step` names now: looked up in the modules already imported (never imports)."""
    module, _, qualname = step.partition(":")
    value: object = sys.modules.get(module, MISSING)
    for attr in qualname.split("."):
        value = getattr(value, attr, MISSING)
    return value


def assigned_names(tree: ast.FunctionDef) -> set[str]:
    """The names a function body assigns (`n = ...`, `n += ...`, `n: T = ...`, unpacking), anywhere
    in it. A scalar parameter among them is a variable of the body, as Quadrants makes every
    parameter of a `@qd.func`: written under an `if` or in a loop, it keeps the value it was given
    after the `if` or the loop, and the func returns that."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        else:
            continue
        for t in targets:
            out.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
    return out
