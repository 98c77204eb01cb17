"""Random `@qd.func`s that assign their own parameters, for the program generator
(`program_gen.py`): each func is written twice from one draw, as a `@qd.func` and as a NumPy
function with the same statements over `np.int32` values.

A parameter of a `@qd.func` is a variable of its body, passed by value: assigned under an `if`, in
a `for` or `while` loop, by `+=`, by unpacking, or with the result of another such func, the value
it holds at the `return` is what the func returns, and the caller's variable is untouched. The
funcs take two i32 parameters (annotated or not; an annotated one truncates a float assigned to
it) and a third that defaults to a module global, or an ivec3 and an i32, return after their last
statement, and later funcs call earlier ones.
A `for` in a func called at the kernel's top level is a parallel loop there, so a `for` body only
adds to a parameter an amount that does not read it (a reduction, the same in any order); a `while`
is bounded by a trip counter.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import strategies as st

PATTERNS = (
    "func_param_if",
    "func_param_if_else",
    "func_param_for",
    "func_param_while",
    "func_param_aug",
    "func_param_unpack",
    "func_param_truncated",
    "func_param_nested_call",
    "func_param_vector",
    "func_param_default",
)
PF_D = "PF_D = {}"
"""The module global the scalar funcs' last parameter defaults to: 1, or 2 in a reload that edits
the funcs (a default is a value the `def` made, which the func's text does not show)."""


@dataclass
class ParamFunc:
    name: str
    vector: bool
    kernel: list[str] = field(default_factory=list)
    ref: list[str] = field(default_factory=list)

    def emit(self, kernel: str, ref: str | None = None, indent: int = 1) -> None:
        self.kernel.append("    " * indent + kernel)
        self.ref.append("    " * indent + (kernel if ref is None else ref))


def expr(draw, names: tuple[str, ...], depth: int = 0) -> str:
    """An i32 expression over `names` and small constants, the same text in both forms."""
    kind = draw(st.sampled_from(["const", "name", "name"] + (["bin"] * 3 if depth < 2 else [])))
    if kind == "const":
        return str(draw(st.integers(-9, 9)))
    if kind == "name":
        return draw(st.sampled_from(names))
    op = draw(st.sampled_from(["+", "-", "*", "//", "%", "&", "^", "|", "max", "min"]))
    a, b = expr(draw, names, depth + 1), expr(draw, names, depth + 1)
    if op in ("max", "min"):
        return f"{op}({a}, {b})"
    if op in ("//", "%"):
        # never zero, and both operands >= 0: Quadrants computes a run-time `//` / `%` as Python
        # does (floored), but folds one whose operands became constants (a func called with
        # literals, `x = -3; 1 % x`) as C does (truncated), and qdlab matches it on both (the
        # parity tests in tests/compiler/frontend); the NumPy model is Python's alone
        return f"(({a} & 1023) {op} (({b} & 7) | 1))"
    return f"({a} {op} {b})"


def _scalar_statement(draw, f: ParamFunc, earlier: list[ParamFunc], used: set[str]) -> None:
    kinds = ["if", "if_else", "for", "while", "aug", "unpack", "truncated"]
    if any(not g.vector for g in earlier):
        kinds.append("call")
    kind = draw(st.sampled_from(kinds))
    target = draw(st.sampled_from(["n", "m"]))
    names = ("n", "m")
    if kind in ("if", "if_else"):
        f.emit(f"if {expr(draw, names, 1)} > {draw(st.integers(-5, 5))}:")
        f.emit(f"{target} = {expr(draw, names)}", indent=2)
        used.add("func_param_if")
        if kind == "if_else":
            f.emit("else:")
            f.emit(f"{'m' if target == 'n' else 'n'} = {expr(draw, names)}", indent=2)
            used.add("func_param_if_else")
    elif kind == "for":  # at the kernel's top level this loop is parallel: a reduction only
        trips, e = draw(st.integers(0, 4)), expr(draw, ("t", "m" if target == "n" else "n"))
        f.emit(f"for t in range({trips}):", f"for t in _range({trips}):")
        f.emit(f"{target} += {e}", f"{target} = np.int32({target} + {e})", indent=2)
        used.add("func_param_for")
    elif kind == "while":
        limit, step = draw(st.integers(-10, 30)), draw(st.integers(1, 9))
        f.emit("w = 0", "w = np.int32(0)")
        f.emit(f"while {target} < {limit} and w < {draw(st.integers(1, 6))}:")
        f.emit(f"{target} = {target} + {step}", indent=2)
        f.emit("w += 1", "w = np.int32(w + 1)", indent=2)
        used.add("func_param_while")
    elif kind == "aug":
        op = draw(st.sampled_from(["+=", "-=", "^=", "|=", "&="]))
        e = expr(draw, names, 1)
        f.emit(f"{target} {op} {e}", f"{target} = np.int32({target} {op[0]} {e})")
        used.add("func_param_aug")
    elif kind == "unpack":
        f.emit(f"if {expr(draw, names, 1)} > {draw(st.integers(-5, 5))}:")
        f.emit(f"n, m = m, {expr(draw, names, 1)}", indent=2)
        used.add("func_param_unpack")
    elif kind == "truncated":  # an f32 value stored into the i32 parameter, truncated
        c = draw(st.sampled_from(["0.5", "1.5", "-0.25"]))
        f.emit(f"if {target} > {draw(st.integers(-5, 5))}:")
        f.emit(
            f"{target} = ({target} % 1000) * {c}",
            f"{target} = np.int32(np.float32({target} % 1000) * np.float32({c}))",
            indent=2,
        )
        used.add("func_param_truncated")
    else:
        g = draw(st.sampled_from([g for g in earlier if not g.vector]))
        f.emit(f"{target} = {g.name}({expr(draw, names, 1)}, {target})")
        used.add("func_param_nested_call")


def param_func(draw, earlier: list[ParamFunc], used: set[str]) -> ParamFunc:
    """A new func (named after how many came before), to be defined after `earlier`."""
    vector = draw(st.integers(0, 3)) == 0
    f = ParamFunc(f"pf{len(earlier)}", vector)
    if vector:
        annotated = draw(st.booleans())
        ann = ": qd.types.vector(3, qd.i32)" if annotated else ""
        f.kernel += ["", "", "@qd.func", f"def {f.name}(v{ann}, c):"]
        f.ref += ["", "", f"def {f.name}(v, c):", "    v, c = np.array(v, np.int32), np.int32(c)"]
        f.emit(f"if c > {draw(st.integers(-5, 5))}:")
        f.emit("v = v.zxy + c", "v = v[[2, 0, 1]] + c", indent=2)
        j, e = draw(st.integers(0, 2)), expr(draw, ("c",), 1)
        f.emit(f"v[{j}] += {e}", f"v[{j}] += np.int32({e})")
        f.emit("return v[0] + v[1] * 3 + v[2] * 5")
        used.add("func_param_vector")
        return f
    annotated = draw(st.booleans())
    ann = ": qd.i32" if annotated else ""
    ret = " -> qd.i32" if annotated and draw(st.booleans()) else ""
    f.kernel += ["", "", "@qd.func", f"def {f.name}(n{ann}, m{ann}, d=PF_D){ret}:"]
    f.ref += ["", "", f"def {f.name}(n, m, d=PF_D):", "    n, m = np.int32(n), np.int32(m)"]
    for _ in range(draw(st.integers(1, 3))):
        _scalar_statement(draw, f, earlier, used)
    result = draw(st.sampled_from(["n", "m", "n - m", "n * 3 + m"]))
    f.emit(f"return {result} + d", f"return np.int32({result} + np.int32(d))")
    used.add("func_param_default")
    return f


def call(draw, funcs: list[ParamFunc], used: set[str], scalar: str, vector: str | None) -> str:
    """A call of one of `funcs` (a new one some of the time), with these argument texts: `scalar`
    an i32 expression, `vector` an ivec3 one (or None where there is none to pass)."""
    if not funcs or (len(funcs) < 3 and draw(st.booleans())):
        f = param_func(draw, funcs, used)
        if f.vector and vector is None:
            return f"({scalar})"  # not defined: nothing to pass it
        funcs.append(f)
    choices = [f for f in funcs if vector is not None or not f.vector]
    if not choices:
        return f"({scalar})"
    f = draw(st.sampled_from(choices))
    if f.vector:
        return f"{f.name}({vector}, {scalar})"
    return f"{f.name}({scalar}, {draw(st.integers(-9, 9))})"
