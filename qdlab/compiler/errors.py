"""User-facing errors that point at the kernel's own source line, with a caret under the column."""

from __future__ import annotations

import os
from dataclasses import dataclass


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

    @property
    def in_cell(self) -> bool:
        return self.filename.startswith("<")

    def where(self) -> str:
        place = "cell line" if self.in_cell else f"{os.path.basename(self.filename)}, line"
        return f"{self.kernel} ({place} {self.lineno}, col {self.col + 1})"

    def render(self) -> str:
        text = self.source_line.rstrip("\n")
        stripped = text.lstrip()
        indent = len(text) - len(stripped)
        caret = " " * (4 + max(0, self.col - indent)) + "^"
        return f"{self.where()}:\n    {stripped}\n{caret}"


class QdError(Exception):
    """An error in a user's kernel or call, reported against the user's source."""

    def __init__(self, message: str, loc: SourceLoc | None = None) -> None:
        self.message = message
        self.loc = loc
        super().__init__(f"{loc.render()}\n{message}" if loc else message)


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


class QdValueError(QdError, ValueError):
    """A kernel argument has the right kind but an unusable value (dtype, ndim, memory layout,
    size)."""


class QdArgumentError(QuadrantsRuntimeTypeError):
    """A scalar argument that its parameter's type cannot hold (out of range, not integral)."""


class QdRuntimeError(QuadrantsRuntimeError):
    """A kernel failed while running."""


class QdAssertionError(QdRuntimeError, QuadrantsAssertionError):
    """A kernel `assert` failed (debug mode), or a loop's index space does not fit its i32 index."""


class QdIndexError(QdAssertionError, IndexError):
    """An array index out of range (debug mode); Quadrants reports it as an assertion error too."""
