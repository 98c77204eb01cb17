"""User-facing errors that point at the kernel's own source line, with carets under the
expression.

An error reads, from the top: where it happened (`baz (exc.py, line 5, col 5):`), then, as Python's
and Quadrants' tracebacks do, one frame per function the compiler was inside, outermost first
(`File "/.../exc.py", line 11, in foo:`, the line as written, carets under the expression), then
the cause and the fix.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

WIDTH = 80
"""Source lines longer than this are shown in pieces, carets under each, as Quadrants does."""
TAB = 4
"""Tabs in a shown line become spaces up to the next multiple of this."""


@dataclass(frozen=True)
class SourceLoc:
    """Where a statement or expression came from in the user's source."""

    kernel: str
    """Name of the kernel (or `@qd.func`) being compiled."""
    filename: str
    """File, or IPython's cell name (`<ipython-input-3-...>`), whose line numbers are
    cell-relative."""
    lineno: int
    """1-based line in `filename`."""
    col: int
    """0-based column."""
    source_line: str = ""
    """The text of that line."""
    end_col: int | None = None
    """0-based column just past the expression, when it ends on this line (else it runs to the end
    of the line)."""

    @property
    def in_cell(self) -> bool:
        return self.filename.startswith("<")

    def where(self) -> str:
        place = "cell line" if self.in_cell else f"{os.path.basename(self.filename)}, line"
        return f"{self.kernel} ({place} {self.lineno}, col {self.col + 1})"

    def frame(self) -> str:
        """`File "...", line N, in kernel:` (`Cell line N, in kernel:` in a notebook), the line as
        written and carets under the expression, in pieces of at most WIDTH columns."""
        text = self.source_line.rstrip("\n").rstrip()
        start = len(text[: self.col].expandtabs(TAB))
        end = len(text[: self.end_col].expandtabs(TAB)) if self.end_col is not None else None
        text = text.expandtabs(TAB)
        end = max(start + 1, end if end is not None else len(text))
        carets = (" " * start + "^" * (end - start)).rstrip()
        out = [
            f"Cell line {self.lineno}, in {self.kernel}:"
            if self.in_cell
            else f'File "{self.filename}", line {self.lineno}, in {self.kernel}:'
        ]
        for k in range(0, max(len(text), 1), WIDTH):
            out.append(text[k : k + WIDTH])
            if carets[k : k + WIDTH].strip():
                out.append(carets[k : k + WIDTH])
        return "\n".join(out)

    def render(self, calls: tuple[SourceLoc, ...] = ()) -> str:
        """The location head, then a frame for each call that led here and one for this line."""
        return "\n".join([f"{self.where()}:", *(c.frame() for c in calls), self.frame()])


class QdError(Exception):
    """An error in a user's kernel or call, reported against the user's source."""

    def __init__(self, message: str, loc: SourceLoc | None = None) -> None:
        self.message = message
        self.loc = loc
        self.calls: tuple[SourceLoc, ...] = ()
        """The calls of `@qd.func`s that led to `loc`, outermost first."""
        super().__init__(self.rendered())

    def rendered(self) -> str:
        return f"{self.loc.render(self.calls)}\n{self.message}" if self.loc else self.message

    def called_from(self, call: SourceLoc | None) -> QdError:
        """This error, with the call of the function it happened in added to its frames."""
        if call is not None and self.loc is not None and call != self.loc:
            self.calls = (call, *self.calls)
            self.args = (self.rendered(),)
        return self


# Quadrants' names, with its hierarchy (`quadrants.lang.exception`): code written against Quadrants
# catches what qdlab raises. qdlab's own names below derive from them, so both kinds of `except`
# hold.
class QuadrantsCompilationError(QdError):
    """The kernel cannot be compiled."""


class QuadrantsSyntaxError(QuadrantsCompilationError, SyntaxError):
    pass


class QuadrantsTypeError(QuadrantsCompilationError, TypeError):
    pass


class QuadrantsNameError(QuadrantsCompilationError, NameError):
    pass


class QuadrantsIndexError(QuadrantsCompilationError, IndexError):
    pass


class QuadrantsRuntimeError(QdError, RuntimeError):
    """A kernel failed while running, or could not be launched with its arguments."""


class QuadrantsRuntimeTypeError(QuadrantsRuntimeError, TypeError):
    pass


class QuadrantsAssertionError(QuadrantsRuntimeError, AssertionError):
    pass


class QdSyntaxError(QuadrantsSyntaxError):
    """The kernel uses Python that the kernel language does not accept."""


class QdTypeError(QuadrantsTypeError):
    """A value has the wrong type for where it is used."""


class QdNameError(QuadrantsNameError):
    """A name the kernel uses is defined nowhere it can see."""


class QdCallError(QuadrantsSyntaxError, TypeError):
    """A call whose arguments do not bind to the parameters (missing, unexpected, too many):
    Quadrants' QuadrantsSyntaxError, and Python's TypeError for the same mistake."""


class QdAnnotationError(QdSyntaxError, QdTypeError):
    """A kernel parameter without a usable annotation: Quadrants' QuadrantsSyntaxError (raised
    where the kernel is defined), and a type error."""


class QdCompileValueError(QuadrantsCompilationError, ValueError):
    """A Python value the kernel uses while compiling cannot be used (Quadrants lets the user's
    ValueError through, or wraps it in a QuadrantsCompilationError)."""


class QdCompileNotImplementedError(QuadrantsCompilationError, NotImplementedError):
    """A construct the kernel compiles asks for something its library does not offer (an
    algorithm's dtype): Quadrants' NotImplementedError, raised while compiling."""


class QdValueError(QdError, ValueError):
    """A kernel argument has the right kind but an unusable value (dtype, ndim, memory layout,
    size)."""


class QdArgumentError(QuadrantsRuntimeTypeError):
    """A scalar argument that its parameter's type cannot hold (out of range, not integral)."""


class QdArgumentTypeError(QdArgumentError, QdTypeError):
    """A kernel argument of a kind its parameter does not take (a str or a fraction for an
    integer, a float for an array): Quadrants' QuadrantsRuntimeTypeError, and the QdTypeError
    qdlab raised for it before."""


class QdRuntimeError(QuadrantsRuntimeError):
    """A kernel failed while running."""


class QdAssertionError(QdRuntimeError, QuadrantsAssertionError):
    """A kernel `assert` failed (debug mode), or a loop's index space does not fit its i32 index."""


class QdRecursionError(QdRuntimeError, RecursionError):
    """A recursive `@qd.real_func` called deeper than `abi.MAX_CALL_DEPTH` (its base case never
    reached, or a recursion too deep for the stack)."""


class QdIndexError(QdAssertionError, IndexError):
    """An array index out of range (debug mode); Quadrants reports it as an assertion error too."""


class QdInitOptionError(KeyError, TypeError):
    """An option `qd.init` does not know: Quadrants raises a KeyError; TypeError (a wrong keyword
    argument), which qdlab raised before, is kept as a base for code that catches that."""

    def __str__(self) -> str:
        return str(self.args[0])  # KeyError would show the message's repr
