"""`%%qdkernel` and `%qdlab`: run a cell, compile the kernels it defines, and show what was rebuilt
and why.

The cell runs in the user's namespace as its own "file" (`<qdkernel-cell-N-...>`, registered with
`linecache`), so the compiler reads kernel source from it and every error and table counts lines
from the top of the cell, the `%%qdkernel` line being line 1. Cell options become the kernels' own
settings (`Kernel.options`): they hold for every later call of those kernels, and leave other
kernels and `qd.init` alone.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import hashlib
import linecache
import os
import sys
import time
import uuid
import weakref
from collections import Counter
from types import TracebackType

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display, update_display

from ..compiler.pipeline import Compiled
from ..core import QDLAB_DIR
from ..core.errors import QdError, QdSyntaxError
from ..core.language import ArrayAnnotation, Template
from ..host import api, state
from ..host.kernel import Kernel
from ..profile import measure
from .progress import Progress
from .views import CacheView, CellSummary, ConfigView, EditDiff, KernelSummary, RunTime

COMPILE_MS: dict[str, float] = {}
"""Compile time of each construct key compiled in this process: what reusing it later saves."""
SESSION: Counter[str] = Counter()
"""Constructs of every compile seen here, by where they came from: "compiled", "process" (already
loaded, no cache lookup), "memory", "disk", "team cache"."""
_PENDING: weakref.WeakKeyDictionary[Kernel, tuple[CellSummary, str]] = weakref.WeakKeyDictionary()
"""Kernels shown before their first compile, with the display to update when it happens."""
_QDLAB_DIR = QDLAB_DIR + os.sep
FAILED = "did not compile (the error is below)"


def on_compile(kernel: Kernel, compiled: Compiled) -> None:
    """The compile hook: remember what compiling cost, and update the summary of a kernel shown
    uncompiled."""
    for c in compiled.report.constructs:
        if c.status == "compiled":
            COMPILE_MS[c.cache_key] = c.compile_ms
        SESSION[c.served_from or "compiled"] += 1
    pending = _PENDING.pop(kernel, None)
    if pending is not None:
        summary, display_id = pending
        update_display(summary, display_id=display_id)


def needs_call(kernel: Kernel) -> str | None:
    """Why `kernel` cannot compile before its first call, or None when its annotations say
    everything."""
    for name, ann in zip(kernel.param_names, kernel.annotations):
        if ann is Template:
            return f"compiles at its first call (template parameter `{name}` needs a value)"
        if isinstance(ann, type) and dataclasses.is_dataclass(ann):
            return f"compiles at its first call (struct parameter `{name}` needs a value)"
        if isinstance(ann, ArrayAnnotation) and (ann.dtype is None or ann.ndim is None):
            return f"compiles at its first call (parameter `{name}` has no dtype or ndim)"
    return None


def short(errors: list[BaseException]) -> BaseException:
    """The first error, made to show as its message alone: no traceback through qdlab's
    internals."""
    lines = "\n\n".join(f"{type(e).__name__}: {e}" for e in errors).splitlines()
    first = errors[0]
    first._render_traceback_ = lambda: lines
    return first


def from_qdlab(tb: TracebackType | None) -> bool:
    """Whether the innermost frame of `tb` is qdlab's own code (a check of the user's input, not a
    user bug)."""
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and tb.tb_frame.f_code.co_filename.startswith(_QDLAB_DIR)


def binds_qd(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if any((a.asname or a.name.split(".")[0]) == "qd" for a in node.names):
                return True
        elif isinstance(node, ast.Name) and node.id == "qd" and isinstance(node.ctx, ast.Store):
            return True
    return False


@magics_class
class QdMagics(Magics):
    """`%%qdkernel` (compile a cell's kernels) and `%qdlab` (cache, explain, config)."""

    @magic_arguments()
    @argument("-h", "--help", action="store_true", help="show this help")
    @argument("--arch", choices=("cpu", "cuda"), help="target of this cell's kernels")
    @argument("--opt", type=int, choices=range(4), metavar="{0-3}", help="LLVM optimisation level")
    @argument(
        "--whole-kernel", action="store_true", help="compile this cell's kernels without the split"
    )
    @argument(
        "--no-cache",
        action="store_true",
        help="compile this cell's constructs anew: nothing is reused or written to the disk cache",
    )
    @argument("--debug", action="store_true", help="compile with bounds checks and kernel asserts")
    @argument(
        "--show",
        choices=("summary", "graph", "widget", "none"),
        default="summary",
        help="what to display: the summary (default), plus the construct graph or the visualizer",
    )
    @argument(
        "--run",
        metavar="EXPR",
        help="evaluate EXPR after compiling; show its time, return its value",
    )
    @argument(
        "--profile",
        action="store_true",
        help="with --run: run EXPR again --repeat times and show each construct's run time",
    )
    @argument("--repeat", type=int, default=10, help="launches --profile times (default 10)")
    @line_cell_magic
    def qdkernel(self, line: str, cell: str | None = None) -> object:
        """Run the cell and compile every fully annotated `@qd.kernel` it defines, per construct.

        Kernels whose parameters lack dtype or ndim compile at their first call, and the summary updates then.
        As a line magic (`%qdkernel --help`) it only shows this help.
        """  # noqa: E501 - IPython prints this docstring, line breaks and all, as `%%qdkernel --help`
        args = parse_argstring(self.qdkernel, line)
        if args.help or cell is None:
            print(self.qdkernel.parser.format_help())
            return None
        ns = self.shell.user_ns
        before = {name: v for name, v in ns.items() if isinstance(v, Kernel)}
        filename = self.run_cell_source(cell, ns, before)
        found = [  # the cell's kernels, and the kernel methods of the classes it defines
            x
            for v in ns.values()
            for x in ([v] if not isinstance(v, type) else vars(v).values())
            if isinstance(x, Kernel)
        ]
        kernels = sorted(
            (k for k in found if k.fn.__code__.co_filename == filename),
            key=lambda k: k.fn.__code__.co_firstlineno,
        )
        kernels = list({id(k): k for k in kernels}.values())
        options = cell_options(args)
        for k in kernels:
            k.options = dict(options)
        display_id = uuid.uuid4().hex
        summary, errors = self.compile_all(
            kernels, ns, before, display_id, show=args.show != "none"
        )
        if args.show != "none":
            for s in summary.kernels:
                if s.report is None:
                    _PENDING[s.kernel] = (summary, display_id)
            self.show_extra(args.show, [s.kernel for s in summary.kernels if s.report is not None])
        if errors:
            raise short(errors)
        if args.profile and not args.run:
            raise UsageError('--profile times the --run expression: add --run "kernel(args)"')
        if not args.run:
            return None
        profiled = kernels if args.profile else None
        return self.run_expression(unquote(args.run), ns, profiled, args.repeat)

    def run_cell_source(self, cell: str, ns: dict, before: dict[str, Kernel]) -> str:
        """Run the cell's Python in `ns` as file `<qdkernel-cell-...>`; return that file name."""
        python = self.shell.transform_cell(cell)
        dropped = _leading_blank_lines(cell) - _leading_blank_lines(
            python
        )  # the transform drops them
        source = "\n" * (1 + dropped) + python  # line 1 is the %%qdkernel line
        digest = hashlib.sha1(source.encode()).hexdigest()[:8]
        filename = f"<qdkernel-cell-{self.shell.execution_count}-{digest}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        try:
            code = self.shell.compile(source, filename, "exec")
        except SyntaxError as e:
            raise self.syntax_error(e) from None
        try:
            if not binds_qd(ast.parse(source)):
                ns["qd"] = sys.modules["qdlab"]  # the package, whose import brought this one
            exec(code, ns)  # noqa: S102 - running the user's cell is the point
        except QdError as e:
            ns.update(before)
            raise short([e]) from None
        except Exception as e:  # noqa: BLE001 - re-raised, with the user's frames only
            raise self.user_traceback(
                e, e.__traceback__.tb_next if e.__traceback__ else None
            ) from None
        return filename

    def compile_all(
        self,
        kernels: list[Kernel],
        ns: dict,
        before: dict[str, Kernel],
        display_id: str,
        show: bool,
    ) -> tuple[CellSummary, list[BaseException]]:
        """Compile the kernels that can compile now, with a progress indicator for slow cells."""
        eager = [k for k in kernels if needs_call(k) is None]
        progress = Progress([k.name for k in eager], display_id, notebook=is_notebook(self.shell))
        if show:
            progress.start()
        summaries, errors = [], []
        for k in kernels:
            note = needs_call(k)
            if note is None:
                k.on_construct = lambda i, n, status, name=k.name: progress.construct(
                    name, i, n, status
                )
                try:
                    report = k.compile().report
                except QdError as e:
                    errors.append(e)
                    progress.step(k.name, "failed")
                    for name, v in list(ns.items()):
                        if v is k and name in before:
                            ns[name] = before[name]  # the previous working version stays usable
                    summaries.append(KernelSummary(k, COMPILE_MS, FAILED, failed=True))
                    continue
                finally:
                    k.on_construct = None
                progress.step(k.name, f"{report.compiled} compiled, {report.reused} reused")
            summaries.append(KernelSummary(k, COMPILE_MS, note or ""))
        summary = CellSummary(summaries)
        if progress.finish():
            update_display(summary, display_id=display_id)
            progress.close()
        elif show:
            display(summary, display_id=display_id)
        return summary, errors

    def show_extra(self, show: str, kernels: list[Kernel]) -> None:
        """`--show graph|widget`: the construct graph or the visualizer, from `qdlab.viz`."""
        if show not in ("graph", "widget"):
            return
        from .. import viz  # lazy: graphviz and widgets, only when a view is shown

        name = "construct_graph" if show == "graph" else "SplitVisualizer"
        view = getattr(viz, name, None)
        if view is None:
            print(
                f"--show {show}: this qdlab has no qdlab.viz.{name} yet; showing the summary only."
            )
            return
        for k in kernels:
            display(view(k))

    def run_expression(
        self, expr: str, ns: dict, profiled: list[Kernel] | None = None, repeat: int = 10
    ) -> object:
        """`--run EXPR`: evaluate it, display its time, and return its value as the cell's
        result; with `--profile`, evaluate it `repeat` times more and show each construct's run
        time."""
        try:
            code = compile(expr, "<qdkernel --run>", "eval")
            t0 = time.perf_counter()
            value = eval(code, ns)
            ms = (time.perf_counter() - t0) * 1e3
            profiles = measure(profiled, lambda: eval(code, ns), repeat) if profiled else []
        except QdError as e:
            raise short([e]) from None
        except Exception as e:  # noqa: BLE001 - re-raised, with the user's frames only
            if from_qdlab(e.__traceback__):
                raise short([e]) from None
            raise self.user_traceback(
                e, e.__traceback__.tb_next if e.__traceback__ else None
            ) from None
        display(RunTime(expr, ms))
        for p in profiles:
            display(p)
        return value

    def syntax_error(self, err: SyntaxError) -> QdSyntaxError:
        """`err` as Python shows a syntax error in a cell: the line and a caret, without the magic's
        frames."""
        lines = self.shell.SyntaxTB.structured_traceback(type(err), err, [])
        error = QdSyntaxError(str(err))
        error._render_traceback_ = lambda: lines
        return error

    def user_traceback(self, err: BaseException, tb: TracebackType | None) -> BaseException:
        """`err`, shown with the traceback of the user's own frames only (from the cell down)."""
        shell = self.shell

        def render() -> list[str]:
            return shell.InteractiveTB.structured_traceback(type(err), err, tb)

        err._render_traceback_ = render
        return err

    @magic_arguments()
    @argument("-h", "--help", action="store_true", help="show this help")
    @argument(
        "command",
        nargs="?",
        choices=("cache", "explain", "config", "server"),
        help=(
            "cache [clear]: the construct cache; explain NAME: a kernel's summary; config: qd.init "
            "settings; server [stop]: the compile server's status, or stop it"
        ),
    )
    @argument(
        "args",
        nargs="*",
        help="`clear` after cache; the kernel's name after explain; `stop` after server",
    )
    @argument(
        "--diff",
        action="store_true",
        help="with explain: each recompiled construct's IR, LLVM IR and assembly diff against the "
        "previous compile",
    )
    @line_magic
    def qdlab(self, line: str) -> None:
        """qdlab's state: `%qdlab cache`, `%qdlab cache clear`, `%qdlab explain NAME`, `%qdlab config`, `%qdlab server`, `%qdlab server stop`."""  # noqa: E501 - IPython prints this docstring as `%qdlab --help`
        args = parse_argstring(self.qdlab, line)
        if args.help or args.command is None:
            print(self.qdlab.parser.format_help())
        elif args.command == "cache":
            display(self.cache(args.args))
        elif args.command == "config":
            if args.args:
                raise UsageError("%qdlab config takes no arguments")
            display(ConfigView(state.config()))
        elif args.command == "server":
            print(self.server(args.args))
        else:
            summary = self.explain(args.args)
            display(summary)
            if args.diff:
                display(EditDiff(summary.report))  # type: ignore[arg-type]

    def cache(self, rest: list[str]) -> CacheView:
        if not rest:
            return CacheView(api.cache_stats(), session=SESSION)
        if rest != ["clear"]:
            raise UsageError(f"%qdlab cache takes `clear` or nothing, not {' '.join(rest)!r}")
        old = api.cache_stats()
        api.clear_cache()
        return CacheView(
            api.cache_stats(),
            f"cleared {old.entries} entries ({old.bytes / 1024:.1f} KiB); "
            "constructs already loaded in this process stay loaded",
        )

    def server(self, rest: list[str]) -> str:
        """The compile server's status, or (`stop`) what stopping it did."""
        from ..compiler.codegen import server  # lazy: only this command asks for it

        if not rest:
            return str(server.status())
        if rest != ["stop"]:
            raise UsageError(f"%qdlab server takes `stop` or nothing, not {' '.join(rest)!r}")
        was = server.stop()
        if was.pid is None:
            return f"{was}: nothing to stop"
        return f"compile server stopped (pid {was.pid}); {server.status()}"

    def explain(self, rest: list[str]) -> KernelSummary:
        if len(rest) != 1:
            raise UsageError("usage: %qdlab explain NAME")
        try:
            kernel = self.shell.ev(rest[0])
        except Exception as e:  # noqa: BLE001 - any failure to find NAME is a usage error
            raise UsageError(
                f"%qdlab explain: cannot find {rest[0]!r} ({type(e).__name__}: {e})"
            ) from None
        target = getattr(kernel, "_primal", kernel)
        if not isinstance(target, Kernel):
            raise UsageError(
                f"%qdlab explain: {rest[0]} is a {type(kernel).__name__}, not a @qd.kernel"
            )
        try:
            api.explain(target)
        except QdError as e:
            raise short([e]) from None
        return KernelSummary(target, COMPILE_MS)


def cell_options(args: argparse.Namespace) -> dict[str, object]:
    """The cell's code-generation options as `qd.init` settings (display options are not among
    them)."""
    options: dict[str, object] = {}
    if args.arch:
        options["arch"] = args.arch
    if args.opt is not None:
        options["opt_level"] = args.opt
    if args.whole_kernel:
        options["per_offload"] = False
    if args.no_cache:
        options["offline_cache"] = False
        options["fresh"] = True
    if args.debug:
        options["debug"] = True
    return options


def _leading_blank_lines(text: str) -> int:
    lines = text.splitlines()
    return next((i for i, line in enumerate(lines) if line.strip()), len(lines))


def unquote(text: str) -> str:
    """`--run "f(x, y)"` arrives with its quotes (magic arguments are split the non-POSIX way)."""
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    return text


def is_notebook(shell: object) -> bool:
    """A kernel behind a front end (Jupyter, VS Code), as opposed to terminal IPython."""
    return getattr(shell, "kernel", None) is not None
