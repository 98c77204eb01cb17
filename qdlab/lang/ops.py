"""`quadrants.lang.ops`: operators as functions, for code that names them there
(`qd.lang.ops.logical_not(x)`). Inside a kernel each is compiled like the operator it names."""

from __future__ import annotations

from ..core.language import BUILTINS, Builtin

logical_not = Builtin("logical_not")
"""`not x` as a function: 1 where `x` is zero, else 0."""
add = Builtin("add")
"""`a + b` as a function."""
abs = BUILTINS["abs"]
