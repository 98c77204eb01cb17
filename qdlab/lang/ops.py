"""`quadrants.lang.ops`: operators as functions, for code that names them there
(`qd.lang.ops.logical_not(x)`). Inside a kernel each is compiled like the operator it names."""

from __future__ import annotations

from ..core.language import BUILTINS, Builtin

logical_not = Builtin("logical_not")
"""`not x` as a function: 1 where `x` is zero, else 0."""
add = Builtin("add")
"""`a + b` as a function."""
abs = BUILTINS["abs"]
atomic_add, atomic_sub, atomic_mul = (BUILTINS[f"atomic_{op}"] for op in ("add", "sub", "mul"))
atomic_min, atomic_max = BUILTINS["atomic_min"], BUILTINS["atomic_max"]
atomic_and, atomic_or, atomic_xor = (BUILTINS[f"atomic_{op}"] for op in ("and", "or", "xor"))
atomic_exchange, atomic_cas = BUILTINS["atomic_exchange"], BUILTINS["atomic_cas"]
"""The atomics, the very objects `qd.atomic_add`... are."""
