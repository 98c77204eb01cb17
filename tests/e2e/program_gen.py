"""A random kernel generator for differential tests: split vs whole-kernel vs a NumPy interpretation.

Each program is written twice from one draw: as a qdlab kernel, and as a plain Python function over NumPy arrays
that runs the same statements one after another. Programs are race-free by construction (a parallel loop writes
element `i` only and reads written arrays only at `i`), so running loop iterations in order gives the parallel
answer, and the NumPy function is a reference wherever the program draws no random numbers.
"""

from __future__ import annotations

import importlib.util
import itertools
import sys
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import strategies as st

INT_ARRAYS = ["A0", "A1", "A2"]
FLOAT_ARRAYS = ["F0", "F1"]
_counter = itertools.count()


@dataclass
class Program:
    n: int
    kernel_lines: list[str] = field(default_factory=list)
    ref_lines: list[str] = field(default_factory=list)
    uses_random: bool = False
    scalars: list[str] = field(default_factory=list)
    """Names of i32 locals defined at top level (usable in later statements)."""
    fscalars: list[str] = field(default_factory=list)

    def emit(self, kernel: str, ref: str | None = None, indent: int = 1) -> None:
        self.kernel_lines.append("    " * indent + kernel)
        self.ref_lines.append("    " * indent + (kernel if ref is None else ref))

    def source(self) -> tuple[str, str]:
        params = ", ".join([f"{a}: qd.types.NDArray[qd.i32, 1]" for a in INT_ARRAYS]
                           + [f"{f}: qd.types.NDArray[qd.f32, 1]" for f in FLOAT_ARRAYS] + ["k: qd.i32"])
        kernel = "\n".join(["import qdlab as qd", "", "", "@qd.kernel", f"def prog({params}):",
                            *(self.kernel_lines or ["    pass"])]) + "\n"
        body = [line.replace("float(", "np.float32(").replace("for i in range(", "for i in _range(")
                for line in self.ref_lines]
        ref = "\n".join(["import numpy as np", "", "", "def _range(n):", "    return map(np.int32, range(n))", "",
                         "", f"def prog({', '.join(INT_ARRAYS + FLOAT_ARRAYS)}, k):",
                         "    k = np.int32(k)", *(body or ["    pass"])]) + "\n"
        return kernel, ref


def int_expr(draw, p: Program, idx: str | None, depth: int = 0, readable: tuple[str, ...] = ()) -> str:
    """An i32 expression: constants, k, top-level scalars, array reads at `idx` (or constant indices)."""
    choices = ["const", "k"]
    if p.scalars:
        choices.append("scalar")
    if idx is not None:
        choices += ["read", "read", "index"]
    if readable:
        choices.append("read_const")
    if depth < 2:
        choices += ["bin", "bin", "bin"]
    kind = draw(st.sampled_from(choices))
    if kind == "const":
        return str(draw(st.integers(-20, 20)))
    if kind == "k":
        return "k"
    if kind == "scalar":
        return draw(st.sampled_from(p.scalars))
    if kind == "index":
        return idx  # type: ignore[return-value]
    if kind == "read":
        return f"{draw(st.sampled_from(INT_ARRAYS))}[{idx}]"
    if kind == "read_const":
        return f"{draw(st.sampled_from(readable))}[{draw(st.integers(0, p.n - 1))}]"
    op = draw(st.sampled_from(["+", "-", "*", "//", "%", "&", "^", "|", "max", "min"]))
    a = int_expr(draw, p, idx, depth + 1, readable)
    b = int_expr(draw, p, idx, depth + 1, readable)
    if op in ("max", "min"):
        return f"{op}({a}, {b})"
    if op in ("//", "%") and not any(ch.isalpha() for ch in b):
        b = f"({b} | 1)"  # a constant divisor is folded at compile time, where zero is an error
    return f"({a} {op} {b})"


def float_expr(draw, p: Program, idx: str | None, depth: int = 0) -> str:
    choices = ["const", "cast"]
    if idx is not None:
        choices += ["read", "read"]
    if p.fscalars:
        choices.append("scalar")
    if depth < 2:
        choices += ["bin", "bin"]
    kind = draw(st.sampled_from(choices))
    if kind == "const":
        return repr(draw(st.sampled_from([0.5, 1.25, -2.0, 3.0, 0.1])))
    if kind == "cast":
        return f"float({int_expr(draw, p, idx, 2)})"
    if kind == "scalar":
        return draw(st.sampled_from(p.fscalars))
    if kind == "read":
        return f"{draw(st.sampled_from(FLOAT_ARRAYS))}[{idx}]"
    op = draw(st.sampled_from(["+", "-", "*"]))
    return f"({float_expr(draw, p, idx, depth + 1)} {op} {float_expr(draw, p, idx, depth + 1)})"


@st.composite
def programs(draw, max_statements: int = 6, allow_random: bool = True) -> Program:
    n = draw(st.sampled_from([1, 3, 8, 33, 64] + ([20000] if draw(st.integers(0, 9)) == 0 else [])))
    p = Program(n)
    for s in range(draw(st.integers(1, max_statements))):
        kind = draw(st.sampled_from(["def", "fdef", "store", "loop", "loop", "floop", "reduce", "if", "atomic",
                                     "random"] if allow_random else
                                    ["def", "fdef", "store", "loop", "loop", "floop", "reduce", "if", "atomic"]))
        if kind == "def":
            name = f"s{s}"
            expr = int_expr(draw, p, None, 0, tuple(INT_ARRAYS))
            p.emit(f"{name} = {expr}", f"{name} = np.int32({expr})")
            p.scalars.append(name)
        elif kind == "fdef":
            name = f"g{s}"
            p.emit(f"{name} = {float_expr(draw, p, None)}")
            p.ref_lines[-1] = p.kernel_lines[-1].replace(f"{name} = ", f"{name} = np.float32(") + ")"
            p.fscalars.append(name)
        elif kind == "store":
            arr = draw(st.sampled_from(INT_ARRAYS))
            p.emit(f"{arr}[{draw(st.integers(0, n - 1))}] = {int_expr(draw, p, None, 0, tuple(INT_ARRAYS))}")
        elif kind == "loop":
            arr = draw(st.sampled_from(INT_ARRAYS))
            others = tuple(a for a in INT_ARRAYS if a != arr)
            p.emit(f"for i in range({n}):")
            if draw(st.booleans()):
                p.emit(f"if {int_expr(draw, p, 'i', 1, others)} > {draw(st.integers(-5, 5))}:", indent=2)
                p.emit(f"{arr}[i] = {int_expr(draw, p, 'i', 0, others)}", indent=3)
                p.emit("else:", indent=2)
                p.emit(f"{arr}[i] = {arr}[i] + 1", indent=3)
            else:
                p.emit(f"{arr}[i] = {int_expr(draw, p, 'i', 0, others)}", indent=2)
        elif kind == "floop":
            arr = draw(st.sampled_from(FLOAT_ARRAYS))
            p.emit(f"for i in range({n}):")
            p.emit(f"{arr}[i] = {float_expr(draw, p, 'i')}", indent=2)
        elif kind == "reduce":
            name, src, dst = f"t{s}", draw(st.sampled_from(INT_ARRAYS)), draw(st.sampled_from(INT_ARRAYS))
            p.emit(f"{name} = 0", f"{name} = np.int32(0)")
            p.emit(f"for i in range({n}):")
            p.emit(f"{name} += {src}[i] % 17", indent=2)
            p.emit(f"{dst}[{draw(st.integers(0, n - 1))}] = {name}")
        elif kind == "if":
            cond = int_expr(draw, p, None, 1)
            arr = draw(st.sampled_from(INT_ARRAYS))
            p.emit(f"if {cond} > 0:")
            p.emit(f"{arr}[{draw(st.integers(0, n - 1))}] = {int_expr(draw, p, None, 1)}", indent=2)
        elif kind == "atomic":
            arr, dst = draw(st.sampled_from(INT_ARRAYS)), draw(st.sampled_from(INT_ARRAYS))
            c = draw(st.integers(0, n - 1))
            name = f"o{s}"
            p.emit(f"{name} = qd.atomic_add({arr}[{c}], 3)", f"{name} = {arr}[{c}]; {arr}[{c}] += np.int32(3)")
            p.emit(f"for i in range({n}):")
            p.emit(f"{dst}[i] = {dst}[i] + {name}", indent=2)
        elif kind == "random":
            p.uses_random = True
            name = f"r{s}"
            arr = draw(st.sampled_from(FLOAT_ARRAYS))
            p.emit(f"{name} = qd.random(qd.f32)", f"{name} = np.float32(0.5)")
            p.emit(f"for i in range({n}):")
            p.emit(f"{arr}[i] = {name} + qd.random(qd.f32)", f"{arr}[i] = {name}", indent=2)
    return p


def load(p: Program, folder: Path) -> tuple[object, object]:
    """Write the program's two forms to files and import them: (qdlab kernel, reference function)."""
    kernel_src, ref_src = p.source()
    n = next(_counter)
    out = []
    for tag, src in (("k", kernel_src), ("r", ref_src)):
        path = folder / f"gen_{tag}{n}.py"
        path.write_text(src)
        spec = importlib.util.spec_from_file_location(f"gen_{tag}{n}", path)
        mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        sys.modules[spec.name] = mod  # type: ignore[union-attr]
        spec.loader.exec_module(mod)  # type: ignore[union-attr]
        out.append(mod.prog)
    return out[0], out[1]
