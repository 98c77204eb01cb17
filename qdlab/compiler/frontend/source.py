"""A kernel's (or @qd.func's) Python source: its lines, where they sit, and its parsed AST.

Lines are cut with the code object's span (much faster than `inspect`, which tokenises the file). A
kernel's file is read on every compile, a `@qd.func`'s whenever its file or code object changed;
a file's lines are kept only while its inode, size and modification and change times are those it
had when read, and only once those times lie well before that read (`_read_lines`), so an edited
file is never served from a stale line cache; a notebook cell, which has no file, comes from
IPython's linecache entry. `inspect` is the fallback.
"""

from __future__ import annotations

import ast
import builtins
import functools
import inspect
import linecache
import os
import textwrap
import time
import tokenize
import types
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeGuard

from ...core import QDLAB_DIR
from ...core import language as lang
from ...core.errors import QdError, SourceLoc
from . import reparse


@dataclass
class Source:
    """A function's source, parsed, with what is needed to map AST positions back to the user's
    lines."""

    fn: object
    tree: ast.FunctionDef
    filename: str
    first_line: int
    indent: int
    lines: list[str]

    @classmethod
    def of(cls, fn: object, kind: str, span: tuple[list[str], int] | None = None) -> Source:
        """`span`: its lines and first line, when the caller has cut them already."""
        try:
            lines, first = span or source_lines(fn)
            try:
                tree, indent = _parse(lines)
            except (
                SyntaxError
            ):  # the fast span ends early when the body has no code (a docstring, `global`)
                lines, first = inspect.getsourcelines(fn)
                tree, indent = _parse(lines)
        except (OSError, TypeError) as e:
            raise QdError(
                f"cannot read the source of {kind} {getattr(fn, '__name__', fn)!r}: {e}. "
                "Define kernels in a file or a notebook cell."
            ) from None
        code = getattr(fn, "__code__", None)
        filename = inspect.getsourcefile(fn) or getattr(code, "co_filename", "?")  # type: ignore[arg-type]
        if code is not None and tree.name != code.co_name:  # its file changed, and it moved
            raise QdError(
                f"the source of {kind} {code.co_name!r} is no longer where it was defined "
                f"({filename}, line {code.co_firstlineno}): its file changed since; import it (or "
                "run its cell) again."
            )
        return cls(fn, tree, filename, first, indent, lines)

    @functools.cached_property
    def library(self) -> bool:
        """Whether this is a func of qdlab's own library that a kernel calls as it calls a builtin
        (`qd.svd`, `qd.math.*`): what it lowers is placed at the user's call, whose line errors,
        the views and the runtime name, never at qdlab's own lines."""
        return os.path.abspath(self.filename) in LIBRARY or os.path.dirname(
            os.path.abspath(self.filename)
        ) == os.path.join(QDLAB_DIR, "core")

    def loc(self, node: ast.AST, name: str) -> SourceLoc:
        rel = getattr(node, "lineno", 1)
        line = self.lines[rel - 1] if 0 < rel <= len(self.lines) else ""
        end = getattr(node, "end_col_offset", None)
        return SourceLoc(
            name,
            self.filename,
            self.first_line + rel - 1,
            getattr(node, "col_offset", 0) + self.indent,
            line,
            end + self.indent
            if end is not None and getattr(node, "end_lineno", 0) == rel
            else None,
        )


LIBRARY = frozenset({os.path.join(QDLAB_DIR, "math.py")})
"""Files of qdlab's library funcs outside `qdlab/core` (`Source.library`)."""
_func_sources: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def func_source(func: lang.Func) -> Source:
    """The source of a `@qd.func`, read again only when its `revision` changed."""
    fn = func.fn
    now = revision(fn)
    got = _func_sources.get(func)
    if got is None or got[0] != now:
        source = lambda_source(fn) if is_lambda(fn) else Source.of(fn, "@qd.func")
        got = _func_sources[func] = (now, source)
    return got[1]


def is_lambda(fn: object) -> TypeGuard[types.FunctionType]:
    return isinstance(fn, types.FunctionType) and fn.__name__ == "<lambda>"


def _code_span(code: types.CodeType, lines: list[str]) -> str | None:
    """The source text from the first position of `code`'s instructions to the last."""
    spots = [p for p in code.co_positions() if None not in p and p[2:] != (0, 0)]
    if not spots or not lines:
        return None
    line, col = min((p[0], p[2]) for p in spots)
    end_line, end_col = max((p[1], p[3]) for p in spots)
    if line == end_line:
        return lines[line - 1][col:end_col]
    return (
        lines[line - 1][col:] + "".join(lines[line : end_line - 1]) + lines[end_line - 1][:end_col]
    )


def lambda_source(fn: types.FunctionType) -> Source:
    """A Python `lambda` called in a kernel, as a function `def <lambda>(args): return body` (the
    reference runs it on its expressions, which inlining it does as well). Its line is parsed
    alone (inside parentheses when it is part of a larger expression, in braces when it is an
    entry of a dict literal: `"name": lambda v: ...,`); a line with more than one
    lambda of the same parameters cannot tell them apart and is refused."""
    code = fn.__code__
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError) as e:
        raise QdError(f"cannot read the source of a lambda: {e}.") from None
    text = "".join(lines)
    body = textwrap.dedent(text).strip()
    params = list(code.co_varnames[: code.co_argcount])
    found: list[ast.Lambda] = []
    for attempt in (body, f"({body})", f"({body.rstrip(',;')})", f"f({body})", f"{{{body}}}"):
        try:
            tree = ast.parse(attempt)
        except SyntaxError:
            continue
        found = [
            n
            for n in ast.walk(tree)
            if isinstance(n, ast.Lambda) and [a.arg for a in n.args.args] == params
        ]
        if len(found) > 1:  # which one: the text its code's positions span
            span = _code_span(code, linecache.getlines(code.co_filename))
            found = [n for n in found if ast.get_source_segment(attempt, n.body) == span]
        break
    if len(found) != 1:
        raise QdError(
            f"cannot find the lambda of parameters ({', '.join(params)}) on its line "
            f"{code.co_filename}:{first}; make it a @qd.func."
        )
    lam = found[0]
    ret = ast.Return(lam.body)
    ast.copy_location(ret, lam.body)
    tree_fn = ast.FunctionDef(
        name="<lambda>", args=lam.args, body=[ret], decorator_list=[], returns=None
    )
    ast.copy_location(tree_fn, lam)
    ast.fix_missing_locations(tree_fn)
    indent = len(lines[0]) - len(lines[0].lstrip())
    filename = inspect.getsourcefile(fn) or code.co_filename
    return Source(fn, tree_fn, filename, first, indent, lines)


def revision(fn: object) -> tuple:
    """What a function's source text depends on besides the function object: its code object and
    the size and time of the file it is read from. `%autoreload` replaces a function's code in
    place, and leaves other objects (a `@qd.func`) as they were while their file changes: the text
    is then read again, at the lines the code object names, as Quadrants reads it."""
    code = getattr(fn, "__code__", None)
    filename = getattr(code, "co_filename", "<")
    if filename.startswith("<"):  # a cell's text, in IPython's line cache: a new cell, a new name
        return (code, None)
    try:
        st = os.stat(filename)
    except (OSError, ValueError):
        return (code, None)
    return (code, st.st_mtime_ns, st.st_size)


def source_lines(fn: object) -> tuple[list[str], int]:
    """The function's source lines (decorators included) and first line number.

    Read with the code object's line span, which is much faster than
    `inspect.getsourcelines` (it tokenises the file); that remains the fallback. The span's end is
    the last line an instruction starts on (`co_lines`: one entry a line, where `co_positions` has
    one an instruction), then every line after it indented more than the `def`: a statement's
    continuation at column 0 (a string's lines) is cut, and a cut text does not parse, which sends
    `Source.of` to that fallback.
    """
    code = getattr(fn, "__code__", None)
    spans = getattr(code, "co_lines", None)
    if code is not None and spans is not None:
        lines = _read_lines(code.co_filename)
        first = code.co_firstlineno
        d = first - 1
        while d < len(lines) and not lines[d].lstrip().startswith(("def ", "async def ")):
            d += 1
        if lines and d < len(lines):
            end = max(max((n for _, _, n in spans() if n is not None), default=0), d + 1)
            while end < len(lines):
                j = end
                while j < len(lines) and (
                    not lines[j].strip() or lines[j].lstrip().startswith("#")
                ):
                    j += 1
                if j < len(lines) and _indent(lines[j]) > _indent(lines[d]):
                    end = j + 1
                    continue
                break
            return lines[first - 1 : end], first
    return inspect.getsourcelines(fn)  # type: ignore[arg-type]


_files: dict[str, tuple[tuple[int, int, int, int], list[str]]] = {}
"""filename -> (its inode, size, modification and change times, its lines), for files that had not
changed for _SETTLED_NS when read."""
_SETTLED_NS = 3_000_000_000


def _read_lines(filename: str) -> list[str]:
    """The file's lines (not to be changed: they may be shared). A file is read again unless its
    inode, size and times are those it had when it was read; and only a file whose times lay
    _SETTLED_NS before that read is kept at all ("racily clean", as git says): a write afterwards,
    even one that keeps the size and sets the modification time back, changes the change time to a
    later one than kept, on a file system of any timestamp granularity under a second or two."""
    if not filename.startswith("<"):
        try:
            st = os.stat(filename)
            stamp = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
            got = _files.get(filename)
            if got is not None and got[0] == stamp:
                return got[1]
            now = time.time_ns()
            with tokenize.open(filename) as f:
                lines = f.readlines()
            if max(st.st_mtime_ns, st.st_ctime_ns) < now - _SETTLED_NS:
                if len(_files) >= 4096:
                    _files.clear()
                _files[filename] = (stamp, lines)
            return lines
        except (OSError, SyntaxError, ValueError):
            pass
    return linecache.getlines(filename)


def _parse(lines: list[str]) -> tuple[ast.FunctionDef, int]:
    """The function's AST, and the indent removed from its lines to parse them."""
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    tree = reparse.parse(dedented)  # only what changed since the function's last parse
    return tree, len(lines[0]) - len(lines[0].lstrip()) if dedented != text else 0


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


MISSING = object()
"""What `resolve_name` returns for a name that is not defined."""


def closure_values(fn: object) -> dict[str, object]:
    """The function's closure variables by name (read from its cells; `inspect.getclosurevars` is
    much slower)."""
    code = getattr(fn, "__code__", None)
    out = {}
    for name, cell in zip(code.co_freevars if code else (), getattr(fn, "__closure__", None) or ()):
        try:
            out[name] = cell.cell_contents
        except ValueError:  # a cell not filled yet
            pass
    return out


def resolve_name(fn: object, name: str) -> object:
    """What `name` means inside `fn` outside its own locals: a closure variable, a global, or a
    builtin."""
    code = getattr(fn, "__code__", None)
    if code is not None and name in code.co_freevars:
        closure = closure_values(fn)
        if name in closure:
            return closure[name]
    g = getattr(fn, "__globals__", {})
    if name in g:
        return g[name]
    return getattr(builtins, name, MISSING)


def resolve_dotted(fn: object, dotted: str) -> object:
    """What a dotted name (`helpers.f`) means inside `fn`, outside its locals; MISSING if a part
    is not there."""
    head, *attrs = dotted.split(".")
    value = resolve_name(fn, head)
    for a in attrs:
        value = getattr(value, a, MISSING) if value is not MISSING else MISSING
    return value


def unevaluable(fn: Callable, names: list[str]) -> int | str | None:
    """The parameter (index, or "return") whose string annotation does not evaluate, if one is
    found."""
    raw = getattr(fn, "__annotations__", {})
    for which, name in [*enumerate(names), ("return", "return")]:
        if isinstance(raw.get(name), str):
            try:
                eval(raw[name], getattr(fn, "__globals__", {}))  # what get_annotations does
            except Exception:  # noqa: BLE001
                return which
    return None


def annotation_loc(fn: Callable, which: int | str | None) -> SourceLoc | None:
    """Where parameter `which` (an index, or "return") of `fn` is annotated, else its name or the
    `def`."""
    try:
        source = Source.of(fn, "kernel")
    except QdError:
        return None
    tree = source.tree
    node: ast.AST = tree
    if isinstance(which, int) and which < len(tree.args.args):
        node = tree.args.args[which].annotation or tree.args.args[which]
    elif which == "return" and tree.returns is not None:
        node = tree.returns
    return source.loc(node, fn.__name__)
