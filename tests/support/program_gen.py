"""A random kernel generator for differential tests: every compile path vs a NumPy interpretation.

Each program is written twice from one draw: as a qdlab kernel, and as a plain Python function over
NumPy arrays that runs the same statements one after another. Programs are race-free by construction
(a parallel loop writes element `i` only, reads written arrays only at `i`, and otherwise writes
only through atomics or by storing one value that every iteration agrees on), so running loop
iterations in order gives the parallel answer, and the NumPy function is a reference wherever the
program draws no random numbers.

Besides plain loops and definitions, the statements reach what the split and the gate have to get
right: top-level `if`s with and without `else` and `while` loops of zero or more trips that may or
may not write a kernel-level local, serial and parallel loops writing locals conditionally, atomics
on locals whose old value is used, a top-level `return` (with statements after it that must not
run), random draws read by several constructs, one array passed for two parameters, a
compile-time helper reading a module global (which the test changes between two loads of the same
kernel), and vectors: an ndarray of ivec3 read and written whole, by entry, by swizzle and through a
runtime entry index, vector locals at the top level (written in part, carried through a serial
loop, reduced into from a parallel one), vector atomics, and vector arithmetic, `dot`, `cross` and
`max`. A third of the programs take A2, F0, V0 and k through a frozen dataclass parameter (V0 in
a nested one: `s.inner.V0`, `s.k`), the others as plain parameters; in those, any of A1, F1 and
V0 may instead be a global `qd.field` the kernel reads and writes by name (the test makes it,
fills it and reads it back around each call), so every statement above also runs on fields, next
to ndarrays; in half of those the fields are the members of one struct field `G`, reached as
`G[i].A1` and `G.A1[j]` (or F1 alone, as the gradient buffer of a `G` with gradients: `G.grad[i].F1`
and `G.F1.grad[j]`); otherwise a global V0 may first be written through
`V0.get_scalar_field(c)`, the field of one entry, which is V0's own memory. A struct local's
members are updated by `+=` and atomics in a parallel loop. A program with plain parameters may
also use a sparse field `SP` (blocks of 4 under a `pointer` or `bitmasked` level `SP_B`, or a
2-D one of 2 x 2 blocks under a `pointer` level, made by the test): one loop activates cells by
writing them, a later one deactivates blocks, a snapshot reads a block's activity in between, and a
struct-for over `SP` visits the active cells (the reference keeps the activity in a NumPy array).
`Program.patterns` names the ones a program uses.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib.util
import itertools
import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import program_funcs
import sifakis_ref
from hypothesis import strategies as st

INT_ARRAYS = ["A0", "A1", "A2"]
FLOAT_ARRAYS = ["F0", "F1"]
VECTOR_ARRAYS = ["V0"]
"""ndarrays of ivec3 (NumPy (n, 3) int32 arrays in the reference)."""
FIELD_CANDIDATES = ("A1", "F1", "V0")
"""Arrays a program may hold in global `qd.field`s read by name instead of parameters."""
KINDS = [
    "def",
    "fdef",
    "store",
    "loop",
    "loop",
    "floop",
    "reduce",
    "carried_read",
    *["branch_two_locals"] * 3,
    "if",
    "atomic",
    "random",
    "snapshot",
    *["cond_local", "while", "serial_loop", "par_flag", "atomic_local", "snapshot"] * 2,
    "serial_atomic",
    "shared_reduce",
    "shared_reduce",
    "shared_random",
    "return",
    "helper",
    *["vloop", "ventry", "vlocal", "vreduce", "vcarried", "vatomic", "vdynamic"],
    "smember",
    "half_extreme",
    "carried_branch",
    "fill",
    "template_ref",
    "sparse",
    "const_divide",
    "svd",
    "ndrange",
]
PATTERNS = (
    "if_else",
    "if_no_else",
    "while",
    "while_zero_trips_possible",
    "serial_cond_local",
    "parallel_cond_local",
    "atomic_old_local",
    "serial_atomic_old",
    "return",
    "after_return",
    "shared_random",
    "random",
    "snapshot",
    "volatile_snapshot",
    "aliased_arrays",
    "compile_time_helper",
    "compile_time_helper_file",
    "typed_func_param",
    "func_through_local",
    "real_func_call",
    "recursive_real_func_call",
    "future_annotations",
    "vector_loop",
    "vector_entry_write",
    "vector_local",
    "vector_reduce",
    "vector_carried",
    "vector_atomic",
    "vector_dynamic_index",
    "dataclass_parameter",
    "global_fields",
    "vector_field",
    "vector_field_entry",
    "shared_element_reduction",
    "carried_read_before_change",
    "recomputed_branch_writes_imported_local",
    "struct_local_member",
    "half_extreme_loop",
    "branch_changes_carried",
    "field_fill_in_kernel",
    "template_param_writes_caller",
    "quant_field",
    "sparse_pointer",
    "sparse_bitmasked",
    "sparse_pointer2d",
    "kernel_body_in_func",
    "const_floordiv",
    "const_raw_div_mod",
    "float_constant_power",
    "data_oriented_primitive",
    "matrix_svd",
    "ndrange_offset_axes",
    "matrix_polar_decompose",
    *program_funcs.PATTERNS,
)
STRUCT_MEMBERS = {"A2": "s.A2", "F0": "s.F0", "V0": "s.inner.V0", "k": "s.k"}
"""What a program with a dataclass parameter reads for these names."""
STRUCT_PREAMBLE = """
import dataclasses


@dataclasses.dataclass(frozen=True)
class Inner:
    V0: qd.types.NDArray[qd.types.vector(3, qd.i32), 1]


@dataclasses.dataclass(frozen=True)
class Args:
    A2: qd.types.NDArray[qd.i32, 1]
    F0: qd.types.NDArray[qd.f32, 1]
    k: qd.i32
    inner: Inner
"""
KNOB_CLASS = """

@qd.data_oriented
class Knob:
    def __init__(self, c):
        self.c = c


KNOBS = (Knob(helper() * 3 - 1), Knob(helper() * 3 + 4))
"""
"""Two instances of a data-oriented class whose primitive `c` (read as `knob.c`) the kernel bakes
per instance; the wrapper passes `KNOBS[k & 1]`, and a reload (the helper's value changed) makes
new ones with other values, which must never run the code compiled for the old."""
ACC_FUNC = """

@qd.func
def acc(ret: qd.template(), x: qd.i32):
    if x > 0:
        ret += x
    else:
        ret -= 1
"""
"""A func that writes its `qd.template()` parameter, which is the caller's variable (Genesis'
neighbour sums, `ret += ...`); with `from __future__ import annotations` the annotation is a
string. `ACC_FUNC_REF` returns the new value instead."""
ACC_FUNC_REF = """

def acc(ret, x):
    ret, x = np.int32(ret), np.int32(x)
    return np.int32(ret + x) if x > 0 else np.int32(ret - 1)
"""
REAL_FUNC = """

@qd.real_func
def step_real(x: qd.i32, t: qd.i32) -> qd.i32:
    r = x
    for j in range(4):
        if r > t:
            return r - j
        r = r + 3
    return r


@qd.real_func
def rec_real(x: qd.i32, n: qd.i32) -> qd.i32:
    if n <= 0:
        return x
    return rec_real(x * 3 + 1, n - 1) - n
"""
REAL_FUNC_REF = """

def step_real(x, t):
    r = np.int32(x)
    for j in range(4):
        if r > t:
            return np.int32(r - np.int32(j))
        r = np.int32(r + np.int32(3))
    return r


def rec_real(x, n):
    if n <= 0:
        return np.int32(x)
    inner = rec_real(np.int32(np.int32(x) * np.int32(3) + np.int32(1)), n - 1)
    return np.int32(inner - np.int32(n))
"""
EDITED_REAL_FUNCS = (("x * 3 + 1", "x * 3 + 2"), ("r = r + 3", "r = r + 4"))
EDITED_REAL_FUNCS_REF = (
    ("np.int32(x) * np.int32(3) + np.int32(1)", "np.int32(x) * np.int32(3) + np.int32(2)"),
    ("r = np.int32(r + np.int32(3))", "r = np.int32(r + np.int32(4))"),
)
"""One constant changed in each real_func body, in both forms (`load(..., edited_funcs=True)`)."""


def edited(source: str, edits: tuple) -> str:
    for old, new in edits:
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    return source


_counter = itertools.count()
_latest = [0]
"""The number in the module names of the latest `load` (an `again` one reuses it)."""


@dataclass
class Program:
    n: int
    alias: bool = False
    """A2 is passed the same array as A0."""
    kernel_lines: list[str] = field(default_factory=list)
    ref_lines: list[str] = field(default_factory=list)
    uses_random: bool = False
    returns: bool = False
    returned: bool = False
    """A top-level `return` has been emitted: what follows must not run."""
    scalars: list[str] = field(default_factory=list)
    """Names of i32 locals defined at top level (usable in later statements)."""
    fscalars: list[str] = field(default_factory=list)
    vlocals: list[str] = field(default_factory=list)
    """Names of ivec3 locals defined at top level."""
    patterns: set[str] = field(default_factory=set)
    helper_value: int | None = None
    """The module global the compile-time helper reads, if the program uses one."""
    helper_file: bool = False
    """The helper reads that value from `HELPER_FILE` beside the module instead (`load` writes it):
    the kernel's source is the same when it changes."""
    typed_func: bool = False
    """The module defines `to_int(x: qd.i32)`, a @qd.func whose annotation converts a float."""
    real_func: bool = False
    acc_func: bool = False
    """The kernel calls `acc`, whose `qd.template()` parameter is the caller's variable."""
    """The module defines `step_real(x, t)`, a @qd.real_func with a `return` in a loop."""
    future: bool = False
    """The kernel's module starts with `from __future__ import annotations` (string annotations)."""
    struct: bool = False
    """A2, F0, V0 and k reach the kernel as members of a dataclass parameter `s`."""
    fields: tuple[str, ...] = ()
    """Arrays held in global fields of the kernel's module (set by the test before each call)."""
    grouped: bool = False
    quant: bool = False
    """A1's field is quantised: a 32-bit signed integer packed with a neighbour (whose bits the
    kernel must not change) in one 64-bit word of a `qd.BitpackedFields`."""
    """The fields are the members of one global struct field `G` (`G[i].A1`, `G.A1[j]`)."""
    grad: bool = False
    """`G` (F1 alone) has gradients, and F1 is its gradient buffer (`G.grad[i].F1`, `G.F1.grad[j]`),
    as Genesis' differentiable MPM zeroes and reads its grid's gradients."""
    pfuncs: list = field(default_factory=list)
    """`@qd.func`s that assign their parameters (`program_funcs.py`), in definition order."""
    body_func: bool = False
    """The kernel's body is a `@qd.func` `body` the kernel calls as its one statement (as every
    Genesis kernel calls its solver's functions): the statement memo replays its statements."""
    knob: bool = False
    """The kernel takes `knob: qd.template()`, a `Knob` (`KNOB_CLASS`), and reads `knob.c`."""
    sparse: str | None = None
    """The level above the sparse field `SP`'s blocks of 4 (`pointer` or `bitmasked`), or of a
    2-D `SP`'s blocks of 2 x 2 (`pointer2d`), made by the test as `SP_B`, or None when the
    program uses none."""

    @property
    def blocks(self) -> int:
        return (self.n + 3) // 4

    @property
    def rows(self) -> int:
        """A 2-D `SP`'s rows of 4 (`pointer2d`): an even number, holding `n` cells."""
        return 2 * ((self.blocks + 1) // 2)

    def emit(self, kernel: str, ref: str | None = None, indent: int = 1) -> None:
        self.kernel_lines.append("    " * indent + kernel)
        self.ref_lines.append("    " * indent + (kernel if ref is None else ref))

    def as_members(self, line: str) -> str:
        """A kernel line with each field as a member of the struct field `G`: `A1[i]` (an index
        without brackets) as `G[i].A1`, any other use as `G.A1`."""
        for a in self.fields:
            grad = self.grad and a == "F1"
            line = re.sub(rf"\b{a}\[([^\[\]]+)\]", rf"G{'.grad' if grad else ''}[\1].{a}", line)
            line = re.sub(rf"(?<![.\w]){a}\b", f"G.{a}{'.grad' if grad else ''}", line)
        return line

    def same(self, arr: str) -> set[str]:
        """The parameters that may hold the same memory as `arr`."""
        return {"A0", "A2"} if self.alias and arr in ("A0", "A2") else {arr}

    def others(self, arr: str) -> tuple[str, ...]:
        return tuple(a for a in INT_ARRAYS if a not in self.same(arr))

    def source(
        self, helper_value: int | None = None, edit_funcs: bool = False, ret_f32: bool = False
    ) -> tuple[str, str]:
        value = self.helper_value if helper_value is None else helper_value
        helper = (
            ["", f"HELPER_C = {value}", "", "", "def helper():", "    return HELPER_C * 2 + 1", ""]
            if value is not None
            else []
        )
        ref_helper = helper
        if self.helper_file:  # the kernel's helper reads the file while compiling, the reference
            helper, ref_helper = HELPER_READS, HELPER_READ_ONCE  # reads it as it is imported
        declared = (
            [f"{a}: qd.types.NDArray[qd.i32, 1]" for a in INT_ARRAYS if a not in self.fields]
            + [f"{f}: qd.types.NDArray[qd.f32, 1]" for f in FLOAT_ARRAYS if f not in self.fields]
            + [
                f"{v}: qd.types.NDArray[qd.types.vector(3, qd.i32), 1]"
                for v in VECTOR_ARRAYS
                if v not in self.fields
            ]
            + ["k: qd.i32"]
        )
        if self.struct:
            declared = [d for d in declared if d.split(":")[0] not in STRUCT_MEMBERS]
            declared.append("s: Args")
        if self.knob:
            declared.append("knob: qd.template()")
        params = ", ".join(declared)
        ret = " -> RET_T" if self.returns else ""  # a reload makes it f32 (`ret_f32`)
        typed = (
            ["", "", "@qd.func", "def to_int(x: qd.i32) -> qd.i32:", "    return x * 2 + 1", ""]
            if self.typed_func
            else []
        )
        typed += ACC_FUNC.splitlines() if self.acc_func else []
        real_src = edited(REAL_FUNC, EDITED_REAL_FUNCS) if edit_funcs else REAL_FUNC
        real = real_src.splitlines() if self.real_func else []
        default = [program_funcs.PF_D.format(2 if edit_funcs else 1)] if self.pfuncs else []
        ret_t = [f"RET_T = qd.{'f32' if ret_f32 else 'i32'}"] if self.returns else []
        pfuncs = default + [line for f in self.pfuncs for line in f.kernel]
        lines = self.kernel_lines or ["    pass"]
        if self.grouped:
            lines = [self.as_members(line) for line in lines]
        if any("to_int_alias(" in line for line in lines):
            lines = ["    to_int_alias = qd.static(to_int)", *lines]
        body: list[str] = []
        if self.body_func:
            names = ", ".join(d.split(":")[0] for d in declared)
            body = ["", "", "@qd.func", f"def body({params}):", *lines, ""]
            lines = [f"    body({names})"]
        wrapper: list[str] = []
        if self.struct:
            plain = ", ".join(a for a in INT_ARRAYS + FLOAT_ARRAYS if a not in STRUCT_MEMBERS)
            knob = ", KNOBS[k & 1]" if self.knob else ""
            pattern = re.compile(r"\b(" + "|".join(STRUCT_MEMBERS) + r")\b")
            lines = [pattern.sub(lambda m: STRUCT_MEMBERS[m.group(1)], line) for line in lines]
            wrapper = [
                "",
                "",
                f"def prog({', '.join(INT_ARRAYS + FLOAT_ARRAYS + VECTOR_ARRAYS)}, k):",
                f"    return kernel({plain}, Args(A2, F0, k, Inner(V0)){knob})",
                "",
                "",
                "prog._primal = kernel",
            ]
        kernel = (
            "\n".join(
                [
                    *(["from __future__ import annotations", ""] if self.future else []),
                    "import qdlab as qd",
                    *(STRUCT_PREAMBLE.splitlines() if self.struct else []),
                    *helper,
                    *(KNOB_CLASS.splitlines() if self.knob else []),
                    *typed,
                    *real,
                    *pfuncs,
                    *ret_t,
                    *(
                        f"{a} = None  # a global field, made by the test"
                        for a in (("G",) if self.grouped else self.fields)
                    ),
                    *(["SP = None", "SP_B = None"] if self.sparse else []),
                    *body,
                    "",
                    "@qd.kernel",
                    f"def {'kernel' if self.struct else 'prog'}({params}){ret}:",
                    *lines,
                    *wrapper,
                ]
            )
            + "\n"
        )
        body = [
            math_ref(line)
            .replace("float(", "np.float32(")
            .replace("for i in range(", "for i in _range(")
            .replace("qd.static(helper())", "helper()")
            for line in self.ref_lines
        ]
        if ret_f32:  # RET_T is f32 there: the kernel converts the value it returns
            body = [
                f"    return np.float32({line[11:]})" if line.startswith("    return ") else line
                for line in body
            ]
        ref = (
            "\n".join(
                [
                    "import numpy as np",
                    MATH_IMPORT,
                    *ref_helper,
                    *(
                        [
                            "",
                            "def to_int(x):",
                            "    return np.int32(x) * np.int32(2) + np.int32(1)",
                            "",
                            "",
                            "to_int_alias = to_int",
                        ]
                        if self.typed_func
                        else []
                    ),
                    *(
                        (
                            edited(REAL_FUNC_REF, EDITED_REAL_FUNCS_REF)
                            if edit_funcs
                            else REAL_FUNC_REF
                        ).splitlines()
                        if self.real_func
                        else []
                    ),
                    "",
                    "def _range(n):",
                    "    return map(np.int32, range(n))",
                    *(
                        ["", "", "class _Knob:", "    def __init__(self, c):", "        self.c = c"]
                        if self.knob
                        else []
                    ),
                    *(ACC_FUNC_REF.splitlines() if self.acc_func else []),
                    *default,
                    *(line for f in self.pfuncs for line in f.ref),
                    "",
                    "",
                    f"def prog({', '.join(INT_ARRAYS + FLOAT_ARRAYS + VECTOR_ARRAYS)}, k):",
                    "    k = np.int32(k)",
                    *(
                        ["    knob = _Knob(np.int32(helper() * 3 + (4 if k & 1 else -1)))"]
                        if self.knob
                        else []
                    ),
                    *(body or ["    pass"]),
                ]
            )
            + "\n"
        )
        return kernel, ref


def int_expr(
    draw, p: Program, idx: str | None, depth: int = 0, readable: tuple[str, ...] = ()
) -> str:
    """An i32 expression: constants, k, top-level scalars, array reads at `idx` (or constant
    indices)."""
    choices = ["const", "k"]
    if p.scalars:
        choices.append("scalar")
    if idx is not None:
        choices += ["read", "read", "index"]
    if readable:
        choices.append("read_const")
    if idx is not None:
        choices.append("vread")  # no loop writes V0 but at `i` (or only through atomics)
    if p.vlocals:
        choices.append("ventry")
    if p.helper_value is not None:
        choices.append("helper")
    if p.struct:
        choices.append("knob")
    if depth < 2:
        choices += ["bin", "bin", "bin", "typed", "real", "pfunc"]
    kind = draw(st.sampled_from(choices))
    if kind == "pfunc":  # a @qd.func that assigns its parameters
        vector = f"V0[{idx}]" if idx is not None else None
        if vector is None and p.vlocals:
            vector = draw(st.sampled_from(p.vlocals))
        arg = int_expr(draw, p, idx, depth + 1, readable)
        return program_funcs.call(draw, p.pfuncs, p.patterns, arg, vector)
    if kind == "const":
        return str(draw(st.integers(-20, 20)))
    if kind == "k":
        return "k"
    if kind == "scalar":
        return draw(st.sampled_from(p.scalars))
    if kind == "index":
        return idx  # type: ignore[return-value]
    if kind == "typed":  # the float is truncated by the parameter's annotation, as Quadrants does
        if not p.typed_func:
            p.typed_func, p.future = True, draw(st.booleans())
        p.patterns.update({"typed_func_param"} | ({"future_annotations"} if p.future else set()))
        name = "to_int"
        if draw(st.booleans()):  # called through a compile-time local, as Genesis calls helpers
            name = "to_int_alias"
            p.patterns.add("func_through_local")
        return f"{name}({float_expr(draw, p, idx, 2)})"
    if kind == "real":
        p.real_func = True
        p.patterns.add("real_func_call")
        a, b = int_expr(draw, p, idx, depth + 1, readable), int_expr(draw, p, idx, 2, readable)
        if draw(st.booleans()):  # compiled as a real call; at most 6 deep
            p.patterns.add("recursive_real_func_call")
            return f"rec_real({a}, min({b}, 6))"
        return f"step_real({a}, {b})"
    if kind == "read":
        return f"{draw(st.sampled_from(INT_ARRAYS))}[{idx}]"
    if kind == "read_const":
        return f"{draw(st.sampled_from(readable))}[{draw(st.integers(0, p.n - 1))}]"
    if kind == "knob":  # a data-oriented object's primitive, baked per instance
        if p.helper_value is None:
            p.helper_value = draw(st.integers(-4, 4))
            p.helper_file = draw(st.booleans())
        p.knob = True
        p.patterns.add("data_oriented_primitive")
        return "knob.c"
    if kind == "helper":  # `0 + `: a bare qd.static(...) cannot be assigned to an element
        return "(0 + qd.static(helper()))"
    if kind == "vread":
        return f"V0[{idx}][{draw(st.integers(0, 2))}]"
    if kind == "ventry":
        return f"{draw(st.sampled_from(p.vlocals))}[{draw(st.integers(0, 2))}]"
    op = draw(st.sampled_from(["+", "-", "*", "//", "%", "&", "^", "|", "max", "min"]))
    a = int_expr(draw, p, idx, depth + 1, readable)
    b = int_expr(draw, p, idx, depth + 1, readable)
    if op in ("max", "min"):
        return f"{op}({a}, {b})"
    if op in ("//", "%") and not set(re.findall(r"[A-Za-z_]\w*", b)) - {"max", "min"}:
        b = f"({b} | 1)"  # a constant divisor is folded at compile time, where zero is an error
    return f"({a} {op} {b})"


def float_expr(draw, p: Program, idx: str | None, depth: int = 0) -> str:
    choices = ["const", "cast"]
    if idx is not None:
        choices += ["read", "read"]
    if p.fscalars:
        choices.append("scalar")
    if depth < 2:
        choices += ["bin", "bin", "math", "math", "tiny"]
    kind = draw(st.sampled_from(choices))
    if kind == "math":
        return math_expr(draw, p, idx, depth)
    if kind == "tiny":  # subnormal products: zero in kernels (and in NumPy after qd.init), as in
        p.patterns.add("subnormal")  # Quadrants; folded ones too, in either tier
        scale = draw(st.sampled_from(["1e-30 * 1e-9", "1e-20 * 1e-20", "1e-38 * 0.25"]))
        return f"({float_expr(draw, p, idx, depth + 1)} * {scale})"
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


# -- float math: `**` and the math library -------------------------------------------------------
# Issue 35: the optimised objects once computed `x ** 2.0` as `x * x` and `8.0 ** x` as
# `exp2(3 * x)` where the quick ones called `powf`. These expressions reach both, and the
# reference computes them as qdlab promises to: the same math library's functions, and `**` as
# `passes/lower_powers.py` and `codegen/arith.py` lower it. Every one is finite for finite inputs.

POWER_EXPONENTS = ("2", "3", "-1", "-2", "4", "2.0", "-1.0", "0.5", "3.0", "1.5", "k")
"""Of `(tanh(e) + 1.5) ** c`, a base in (0.5, 2.5): literal ints and floats (multiplied out, a
square root, the library's `powf`) and the kernel's i32 `k` (multiplied out at run time)."""
CONST_EXPONENTS = ("3", "-2", "4", "5", "7", "-3", "2.5", "-1.5")
"""Of `qd.cast(c, qd.f32) ** e`: folded while compiling as Quadrants folds it."""
MATH_REF_TEXT = (
    ("(qd.cast(", "ref_cpow(("),
    (", qd.f32) ** ", "), "),
    ("((qd.tanh(", "ref_pow((ref_tanhf("),
    (" + 1.5) ** ", " + 1.5), "),
    *((f"({b} ** ", f"ref_pow2({b}, ") for b in ("2.0", "8.0", "0.5")),
    *((f"qd.{f}(", f"ref_{f}f(") for f in ("tanh", "sin", "cos", "exp", "log")),
    *((f"qd.{f}(", f"ref_{f}(") for f in ("pow", "sqrt", "abs")),
    ("qd.f32(", "RefMod("),
    ("qd.polar_decompose(", "ref_polar3("),
    ("qd.svd(", "ref_svd3("),
)
"""How the reference writes what `math_expr` writes, in this order."""
KINDS += ["floop", "fdef"]  # more float statements, where these expressions go
MATH_IMPORT = (
    "from program_gen import CInt, ref_abs, ref_cosf, ref_expf, ref_logf, ref_pow, ref_pow2, "
    "ref_cpow, ref_rawdiv, ref_rawmod, ref_sinf, ref_sqrt, ref_tanhf, RefMod, ref_svd3, ref_polar3"
)


def math_expr(draw, p: Program, idx: str | None, depth: int) -> str:
    """An f32 call of the math library or a power (`**`, `qd.pow`) of an expression."""
    e = float_expr(draw, p, idx, depth + 1)
    kinds = ["sin", "exp", "log", "sqrt", "power", "power", "base", "pow", "mod", "mod", "cpow"]
    kind = draw(st.sampled_from(kinds))
    if kind == "cpow":  # a power of two constants: folded, C's pow in double (`ref_cpow`)
        p.patterns.add("float_constant_power")
        base = draw(st.sampled_from(["0.08", "1.37", "0.3", "1.7", "0.13"]))
        return f"(qd.cast({base}, qd.f32) ** {draw(st.sampled_from(CONST_EXPONENTS))})"
    power = kind in ("power", "base", "pow")
    p.patterns.add("float_mod" if kind == "mod" else "float_power" if power else "float_math")
    if kind == "sin":
        return f"qd.{draw(st.sampled_from(['sin', 'cos']))}({e})"
    if kind == "exp":
        return f"qd.exp(qd.sin({e}))"
    if kind == "log":
        return f"qd.log(qd.abs({e}) + 1.0)"
    if kind == "sqrt":
        return f"qd.sqrt(qd.abs({e}))"
    if kind == "power":  # a literal or k: rewritten while compiling, or multiplied out
        return f"((qd.tanh({e}) + 1.5) ** {draw(st.sampled_from(POWER_EXPONENTS))})"
    if kind == "mod":  # Quadrants' `a - b * floor(a / b)`, each step rounded, not Python's `%`
        return f"(qd.f32({e}) % (qd.abs({float_expr(draw, p, idx, depth + 1)}) + 0.3))"
    if kind == "base":  # a power of two to a float: exp2
        return f"({draw(st.sampled_from(['2.0', '8.0', '0.5']))} ** qd.sin({e}))"
    return f"qd.pow(qd.tanh({e}) + 1.5, qd.cos({float_expr(draw, p, idx, depth + 1)}))"


def math_ref(line: str) -> str:
    for old, new in MATH_REF_TEXT:
        line = line.replace(old, new)
    return line


def _libm(name: str):
    fn = getattr(_LIBM, name)
    fn.restype, fn.argtypes = ctypes.c_float, [ctypes.c_float] * (2 if name == "powf" else 1)
    return lambda *args: np.float32(fn(*(float(a) for a in args)))


_LIBM = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
ref_tanhf, ref_sinf, ref_cosf, ref_expf, ref_logf, ref_exp2f, ref_powf = map(
    _libm, ("tanhf", "sinf", "cosf", "expf", "logf", "exp2f", "powf")
)


class RefMod:
    """`RefMod(a) % b` as Quadrants computes an f32 `a % b`: `a - b * floor(a / b)`, each step
    rounded to f32 (Python's `%`, which NumPy's float32 follows, is the exact remainder)."""

    def __init__(self, a) -> None:
        self.a = np.float32(a)

    def __mod__(self, b):
        b = np.float32(b)
        return np.float32(self.a - b * np.floor(np.float32(self.a / b)))


def ref_abs(x):
    return np.abs(np.float32(x))


def ref_sqrt(x):
    return np.sqrt(np.float32(x))


def ref_pow(x, c):
    """`x ** c` in f32 as qdlab computes it: a literal 0, 1 or 0.5 as 1, x and sqrt(x); an int, or
    a literal integral float up to 32, by squaring (`1 / that` for a negative one); any other float
    by the library's `powf`."""
    x = np.float32(x)
    if isinstance(c, float) and c in (0.0, 1.0, 0.5):
        return {0.0: np.float32(1), 1.0: x, 0.5: np.sqrt(x)}[c]
    if isinstance(c, float) and c.is_integer() and abs(c) <= 32:
        c = int(c)
    if not isinstance(c, (int, np.integer)):
        return ref_powf(x, c)
    r, a, b = np.float32(1), x, abs(int(c))
    while b:
        r, a, b = (r * a if b & 1 else r), a * a, b >> 1
    return np.float32(1) / r if c < 0 else r


ref_svd3, ref_polar3 = sifakis_ref.svd3, sifakis_ref.polar3
"""Quadrants' 3x3 `qd.svd` and `qd.polar_decompose`, bit for bit, in NumPy scalars."""


def ref_cpow(c: float, e: float) -> np.float32:
    """`qd.cast(c, qd.f32) ** e` as Quadrants folds two constants: C's `pow` of the f32 `c` and `e`
    as doubles, rounded once to f32 (run time would multiply in f32, an ulp away)."""
    return np.float32(math.pow(float(np.float32(c)), float(e)))


def ref_pow2(b: float, y):
    """A power of two `2 ** k` to a float: `exp2(y * k)` (`-y` for k = -1)."""
    k = int(np.log2(b))
    return ref_exp2f(y if k == 1 else -y if k == -1 else y * np.float32(k))


def vec_expr(draw, p: Program, idx: str | None, depth: int = 0) -> tuple[str, str]:
    """An ivec3 expression, as (kernel text, NumPy text): V0 read at `idx`, a `qd.Vector` of i32
    expressions, a top-level vector local, a swizzle, entry-wise arithmetic (a scalar broadcast),
    `qd.max` and `cross`."""
    choices = ["make"]
    if idx is not None:
        choices += ["read", "read"]
    if p.vlocals:
        choices.append("local")
    if depth < 2:
        choices += ["bin", "bin", "swizzle", "scalar", "max", "cross"]
    kind = draw(st.sampled_from(choices))
    if kind == "read":
        return f"V0[{idx}]", f"V0[{idx}]"
    if kind == "local":
        name = draw(st.sampled_from(p.vlocals))
        return name, name
    if kind == "make":
        es = [int_expr(draw, p, idx, 2) for _ in range(3)]
        return f"qd.Vector([{', '.join(es)}])", f"np.array([{', '.join(es)}], np.int32)"
    a, ra = vec_expr(draw, p, idx, depth + 1)
    if kind == "swizzle":
        pattern = "".join(draw(st.lists(st.sampled_from("xyz"), min_size=3, max_size=3)))
        return f"({a}).{pattern}", f"({ra})[[{', '.join(str('xyz'.index(c)) for c in pattern)}]]"
    if kind == "scalar":
        e, op = int_expr(draw, p, idx, 2), draw(st.sampled_from(["+", "-", "*", "&"]))
        return f"({a} {op} {e})", f"({ra} {op} np.int32({e}))"
    b, rb = vec_expr(draw, p, idx, depth + 1)
    if kind == "max":
        return f"qd.max({a}, {b})", f"np.maximum({ra}, {rb})"
    if kind == "cross":
        return f"({a}).cross({b})", f"np.cross({ra}, {rb})"
    op = draw(st.sampled_from(["+", "-", "*", "^", "|"]))
    return f"({a} {op} {b})", f"({ra} {op} {rb})"


def vec_sum(name: str) -> str:
    """A vector's entries summed in i32 (NumPy's `sum` would widen to i64)."""
    return f"({name}[0] + {name}[1] + {name}[2])"


def _vector_statement(draw, p: Program, s: int, kind: str) -> None:
    n = p.n
    if kind == "vloop":
        k_expr, r_expr = vec_expr(draw, p, "i")
        p.emit(f"for i in range({n}):")
        p.emit(f"V0[i] = {k_expr}", f"V0[i] = {r_expr}", indent=2)
        p.patterns.add("vector_loop")
    elif kind == "ventry":
        c = draw(st.integers(0, 2))
        e = int_expr(draw, p, "i", 1)
        p.emit(f"for i in range({n}):")
        if draw(st.booleans()):
            p.emit(f"V0[i].{'xyz'[c]} += {e}", f"V0[i][{c}] += np.int32({e})", indent=2)
        else:
            p.emit(f"V0[i][{c}] = {e}", indent=2)
        p.patterns.add("vector_entry_write")
    elif kind == "vdynamic":
        e = int_expr(draw, p, "i", 1)
        p.emit(f"for i in range({n}):")
        p.emit(f"V0[i][(A0[i] + {e}) % 3] = {int_expr(draw, p, 'i', 1)}", indent=2)
        p.patterns.add("vector_dynamic_index")
    elif kind == "vlocal":
        name = f"u{s}"
        k_expr, r_expr = vec_expr(draw, p, None)
        p.emit(f"{name} = {k_expr}", f"{name} = np.array({r_expr}, np.int32)")
        c, e = draw(st.integers(0, 2)), int_expr(draw, p, None, 1)
        p.emit(f"{name}.{'xyz'[c]} = {e}", f"{name}[{c}] = np.int32({e})")
        arr = draw(st.sampled_from(INT_ARRAYS))
        p.emit(f"for i in range({n}):")
        p.emit(f"{arr}[i] = {arr}[i] + {name}[{draw(st.integers(0, 2))}]", indent=2)
        p.vlocals.append(name)
        p.patterns.add("vector_local")
    elif kind == "vreduce":
        name, dst = f"t{s}", draw(st.sampled_from(INT_ARRAYS))
        p.emit(f"{name} = qd.Vector([0, 0, 0])", f"{name} = np.zeros(3, np.int32)")
        p.emit(f"for i in range({n}):")
        p.emit(f"{name} += V0[i] % 17", f"{name} = {name} + V0[i] % 17", indent=2)
        c = draw(st.integers(0, n - 1))
        p.emit(
            f"{dst}[{c}] = {name}.dot(qd.Vector([1, 2, 3]))",
            f"{dst}[{c}] = {name}[0] + 2 * {name}[1] + 3 * {name}[2]",
        )
        p.patterns.add("vector_reduce")
    elif kind == "vcarried":
        name, src = f"q{s}", draw(st.sampled_from(INT_ARRAYS))
        p.emit(f"{name} = qd.Vector([1, 2, 3])", f"{name} = np.array([1, 2, 3], np.int32)")
        p.emit("qd.loop_config(serialize=True)", "pass")
        p.emit(f"for i in range({n}):")
        p.emit(f"if {src}[i] > {draw(st.integers(-40, 40))}:", indent=2)
        p.emit(
            f"{name} = {name}.zxy + V0[i] % 5", f"{name} = {name}[[2, 0, 1]] + V0[i] % 5", indent=3
        )
        dst = draw(st.sampled_from(INT_ARRAYS))
        p.emit(f"{dst}[{draw(st.integers(0, n - 1))}] = {vec_sum(name)}")
        p.vlocals.append(name)
        p.patterns.add("vector_carried")
    elif kind == "vatomic":
        step = draw(st.integers(1, 7))
        v = [draw(st.integers(-5, 5)) for _ in range(3)]
        p.emit(f"for i in range({n}):")
        p.emit(
            f"qd.atomic_add(V0[(i * {step}) % {n}], qd.Vector({v}))",
            f"V0[(i * {step}) % {n}] += np.array({v}, np.int32)",
            indent=2,
        )
        p.patterns.add("vector_atomic")


def _entry_field_statement(draw, p: Program) -> None:
    """V0, a global vector field, written through the field of one of its entries (which is V0's
    own memory) before the program's statements read and write it."""
    c = draw(st.integers(0, 2))
    e = int_expr(draw, p, "i", 1)
    p.emit(f"for i in range({p.n}):")
    p.emit(f"V0.get_scalar_field({c})[i] += {e}", f"V0[i][{c}] += np.int32({e})", indent=2)
    p.patterns.add("vector_field_entry")


def _struct_local_statement(draw, p: Program, s: int) -> None:
    """A struct local (`qd.Struct(m=..., v=...)`, two locals in the reference) whose members a
    parallel loop updates (`+=`, `-=` and an atomic on members and a vector member's entry: atomic,
    the struct being shared), then serial code, read into an array."""
    n, name = p.n, f"w{s}"
    c, at = draw(st.integers(0, 2)), draw(st.integers(0, n - 1))
    e1, e2 = int_expr(draw, p, "i", 1), int_expr(draw, p, "i", 1)
    p.emit(
        f"{name} = qd.Struct(m=0, v=qd.Vector([0, 0, 0]))",
        f"{name}_m, {name}_v = np.int32(0), np.zeros(3, np.int32)",
    )
    p.emit(f"for i in range({n}):")
    p.emit(f"{name}.m += {e1}", f"{name}_m += np.int32({e1})", indent=2)
    p.emit(f"qd.atomic_add({name}.m, i)", f"{name}_m += i", indent=2)
    p.emit(f"{name}.v[{c}] -= {e2}", f"{name}_v[{c}] -= np.int32({e2})", indent=2)
    p.emit(f"{name}.v += qd.Vector([1, 2, 3])", f"{name}_v += np.int32([1, 2, 3])", indent=2)
    p.emit(f"{name}.m *= 3", f"{name}_m *= np.int32(3)")
    dst = draw(st.sampled_from(INT_ARRAYS))
    p.emit(
        f"{dst}[{at}] = {name}.m + {vec_sum(name + '.v')}",
        f"{dst}[{at}] = {name}_m + {vec_sum(name + '_v')}",
    )
    p.patterns.add("struct_local_member")


def _int_def(p: Program, name: str, expr: str, indent: int = 1) -> None:
    if expr.startswith("qd.static("):
        expr = f"0 + {expr}"  # `x = qd.static(...)` binds a compile-time name, which is not a local
    p.emit(f"{name} = {expr}", f"{name} = np.int32({expr})", indent)


def _statement(draw, p: Program, s: int, kind: str) -> None:
    n = p.n
    if kind.startswith("v"):
        _vector_statement(draw, p, s, kind)
    elif kind == "smember":
        _struct_local_statement(draw, p, s)
    elif kind == "def":
        name = f"s{s}"
        _int_def(p, name, int_expr(draw, p, None, 0, tuple(INT_ARRAYS)))
        p.scalars.append(name)
    elif kind == "fdef":
        name = f"g{s}"
        p.emit(f"{name} = {float_expr(draw, p, None)}")
        p.ref_lines[-1] = p.kernel_lines[-1].replace(f"{name} = ", f"{name} = np.float32(") + ")"
        p.fscalars.append(name)
    elif kind == "store":
        arr = draw(st.sampled_from(INT_ARRAYS))
        p.emit(
            f"{arr}[{draw(st.integers(0, n - 1))}] = "
            f"{int_expr(draw, p, None, 0, tuple(INT_ARRAYS))}"
        )
    elif kind == "loop":
        arr = draw(st.sampled_from(INT_ARRAYS))
        others = p.others(arr)
        p.emit(f"for i in range({n}):")
        if draw(st.booleans()):
            p.emit(
                f"if {int_expr(draw, p, 'i', 1, others)} > {draw(st.integers(-5, 5))}:", indent=2
            )
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
        name, src, dst = (
            f"t{s}",
            draw(st.sampled_from(INT_ARRAYS)),
            draw(st.sampled_from(INT_ARRAYS)),
        )
        _int_def(p, name, "0")
        p.emit(f"for i in range({n}):")
        p.emit(f"{name} += {src}[i] % 17", indent=2)
        p.emit(f"{dst}[{draw(st.integers(0, n - 1))}] = {name}")
    elif kind == "carried_read":
        # a local summed by one loop, read by a definition, then changed by a later loop: the
        # definition needs the value from between the loops
        name, d, src = f"m{s}", f"d{s}", draw(st.sampled_from(INT_ARRAYS))
        _int_def(p, name, str(draw(st.integers(-9, 9))))
        p.emit(f"for i in range({n}):")
        p.emit(f"{name} += {src}[i] % 5", f"{name} = np.int32({name} + {src}[i] % 5)", indent=2)
        _int_def(p, d, f"{name} * 2 + {int_expr(draw, p, None, 1)}")
        p.emit(f"for i in range({n}):")
        c = draw(st.integers(1, 3))
        p.emit(f"{name} += {c}", f"{name} = np.int32({name} + {c})", indent=2)
        dst = draw(st.sampled_from(INT_ARRAYS))
        p.emit(f"for i in range({n}):")
        p.emit(f"{dst}[i] = {dst}[i] + {d}", indent=2)
        p.patterns.add("carried_read_before_change")
        p.scalars += [name, d]
    elif kind == "branch_two_locals":
        # a top-level `if` writing two locals, a loop then changing one of them (handed over), and
        # a construct reading both: its slice recomputes the `if` for the other one, which must
        # not overwrite the handed-over value (it did: the random programs found it)
        x, y, j = f"x{s}", f"y{s}", f"j{s}"
        _int_def(p, x, int_expr(draw, p, None, 1, tuple(INT_ARRAYS)))
        _int_def(p, y, str(draw(st.integers(-9, 3))))
        cond = int_expr(draw, p, None, 1, tuple(INT_ARRAYS)) if draw(st.booleans()) else "k + 99"
        p.emit(f"if {cond} > {draw(st.integers(-5, 5))}:")
        if draw(st.booleans()):
            p.emit(f"{x}, {y} = {y}, {y}", indent=2)
        else:
            _int_def(p, x, f"{y} + {draw(st.integers(-3, 3))}", 2)
            _int_def(p, y, f"{y} * 2", 2)
        _int_def(p, j, "0")
        p.emit(f"while {x} < 4 and {j} < {draw(st.integers(1, 4))}:")
        _int_def(p, x, f"{x} + 4", 2)
        _int_def(p, j, f"{j} + 1", 2)
        dst = draw(st.sampled_from(INT_ARRAYS))
        p.emit(f"for i in range({n}):")
        p.emit(f"{dst}[i] = {dst}[i] + {x} * 3 + {y}", indent=2)
        p.patterns.add("recomputed_branch_writes_imported_local")
        p.scalars += [x, y]
    elif kind == "if":
        cond = int_expr(draw, p, None, 1)
        arr = draw(st.sampled_from(INT_ARRAYS))
        p.emit(f"if {cond} > 0:")
        p.emit(f"{arr}[{draw(st.integers(0, n - 1))}] = {int_expr(draw, p, None, 1)}", indent=2)
    elif kind == "shared_reduce":  # every iteration updates one element: reduced per chunk
        arr = draw(st.sampled_from(INT_ARRAYS))
        src = draw(st.sampled_from([a for a in INT_ARRAYS if a not in p.same(arr)]))
        c, op = (
            draw(st.integers(0, n - 1)),
            draw(st.sampled_from(["add", "max", "min", "xor", "+="])),
        )
        v = f"({src}[i] % 17 - {draw(st.integers(0, 9))})"
        p.patterns.add("shared_element_reduction")
        p.emit(f"for i in range({n}):")
        if op == "+=":
            p.emit(f"{arr}[{c}] += {v}", f"{arr}[{c}] += np.int32({v})", indent=2)
        else:
            ref = {"add": "+", "xor": "^"}.get(op)
            rhs = f"{arr}[{c}] {ref} {v}" if ref else f"{op}({arr}[{c}], {v})"
            p.emit(f"qd.atomic_{op}({arr}[{c}], {v})", f"{arr}[{c}] = np.int32({rhs})", indent=2)
    elif kind == "atomic":
        arr, dst = draw(st.sampled_from(INT_ARRAYS)), draw(st.sampled_from(INT_ARRAYS))
        c = draw(st.integers(0, n - 1))
        name = f"o{s}"
        p.emit(
            f"{name} = qd.atomic_add({arr}[{c}], 3)",
            f"{name} = {arr}[{c}]; {arr}[{c}] += np.int32(3)",
        )
        p.emit(f"for i in range({n}):")
        p.emit(f"{dst}[i] = {dst}[i] + {name}", indent=2)
    elif kind == "random":
        p.uses_random = True
        p.patterns.add("random")
        name = f"r{s}"
        arr = draw(st.sampled_from(FLOAT_ARRAYS))
        p.emit(f"{name} = qd.random(qd.f32)", f"{name} = np.float32(0.5)")
        p.emit(f"for i in range({n}):")
        p.emit(f"{arr}[i] = {name} + qd.random(qd.f32)", f"{arr}[i] = {name}", indent=2)
    elif kind == "cond_local":
        # a top-level `if` that may or may not write a local read later
        name = f"x{s}"
        _int_def(p, name, int_expr(draw, p, None, 1, tuple(INT_ARRAYS)))
        p.emit(f"if {int_expr(draw, p, None, 1, tuple(INT_ARRAYS))} > {draw(st.integers(-5, 5))}:")
        _int_def(p, name, int_expr(draw, p, None, 1, tuple(INT_ARRAYS)), 2)
        if draw(st.booleans()):
            p.emit("else:")
            _int_def(p, name, int_expr(draw, p, None, 1), 2)
            p.patterns.add("if_else")
        else:
            p.patterns.add("if_no_else")
        p.scalars.append(name)
    elif kind == "while":
        # a `while` of zero or more trips, writing a local (maybe conditionally) and an array
        # element
        name, j = f"w{s}", f"j{s}"
        _int_def(p, name, int_expr(draw, p, None, 1, tuple(INT_ARRAYS)))
        _int_def(p, j, "0")
        trips = (
            f"((k + {draw(st.integers(-3, 3))}) % 4)"
            if draw(st.booleans())
            else str(draw(st.integers(0, 3)))
        )
        p.patterns.add("while")
        if trips.startswith("(") or trips == "0":
            p.patterns.add("while_zero_trips_possible")
        p.emit(f"while {j} < {trips}:")
        arr = draw(st.sampled_from(INT_ARRAYS))
        if draw(st.booleans()):
            p.emit(
                f"if {int_expr(draw, p, None, 1, tuple(INT_ARRAYS))} > {draw(st.integers(-5, 5))}:",
                indent=2,
            )
            _int_def(p, name, f"{name} + {int_expr(draw, p, None, 1)}", 3)
        else:
            _int_def(p, name, f"{name} * 2 + {j}", 2)
        p.emit(f"{arr}[{j} % {n}] = {arr}[{j} % {n}] + {name}", indent=2)
        p.emit(f"{j} += 1", f"{j} = np.int32({j} + 1)", indent=2)
        p.scalars += [name, j]
    elif kind == "serial_loop":
        name, src = f"b{s}", draw(st.sampled_from(INT_ARRAYS))
        _int_def(p, name, str(draw(st.integers(-9, 9))))
        p.emit("qd.loop_config(serialize=True)", "pass")
        p.emit(f"for i in range({n}):")
        p.emit(f"if {src}[i] > {draw(st.integers(-40, 40))}:", indent=2)
        _int_def(
            p,
            name,
            draw(
                st.sampled_from([f"{src}[i]", f"{name} + {src}[i] % 5", f"max({name}, {src}[i])"])
            ),
            3,
        )
        p.patterns.add("serial_cond_local")
        p.scalars.append(name)
    elif kind == "par_flag":
        # every iteration that writes the local writes the same value, so the parallel loop is
        # race-free
        name, src = f"f{s}", draw(st.sampled_from(INT_ARRAYS))
        _int_def(p, name, str(draw(st.integers(-3, 3))))
        p.emit(f"for i in range({n}):")
        p.emit(f"if {src}[i] > {draw(st.integers(-40, 40))}:", indent=2)
        _int_def(p, name, int_expr(draw, p, None, 1), 3)
        p.patterns.add("parallel_cond_local")
        p.scalars.append(name)
    elif kind == "carried_branch":
        # a local handed over from a parallel loop, changed by one branch of a top-level `if`
        # whose other branch writes another local: a later construct that needs the other local
        # must not run the `if` again on what the `if`'s own construct left in the first
        x, y, src = f"cx{s}", f"cy{s}", draw(st.sampled_from(INT_ARRAYS))
        _int_def(p, x, str(draw(st.integers(-9, 9))))
        _int_def(p, y, str(draw(st.integers(-9, 9))))
        p.emit(f"for i in range({n}):")
        p.emit(f"{x} += {src}[i] % 5", f"{x} = np.int32({x} + {src}[i] % 5)", indent=2)
        p.emit(f"if {int_expr(draw, p, None, 1)} > {draw(st.integers(-5, 5))}:")
        _int_def(p, x, f"{x} + {draw(st.integers(1, 9))}", 2)
        p.emit("else:")
        _int_def(p, y, int_expr(draw, p, None, 1), 2)
        dst = draw(st.sampled_from(INT_ARRAYS))
        p.emit(f"{dst}[{draw(st.integers(0, n - 1))}] = {x} + {y} * 3")
        p.patterns.add("branch_changes_carried")
        p.scalars += [x, y]
    elif kind == "template_ref":
        # a local passed to a func's `qd.template()` parameter, which the func writes: at the top
        # level (a variable of the kernel) or in a loop body (one per iteration)
        p.acc_func, p.future = True, p.future or draw(st.booleans())
        p.patterns |= {"template_param_writes_caller"} | (
            {"future_annotations"} if p.future else set()
        )
        if draw(st.booleans()):
            name = f"t{s}"
            _int_def(p, name, int_expr(draw, p, None, 1))
            e = int_expr(draw, p, None, 1)
            p.emit(f"acc({name}, {e})", f"{name} = acc({name}, {e})")
            p.scalars.append(name)
        else:
            name, src, dst = (
                f"u{s}",
                draw(st.sampled_from(INT_ARRAYS)),
                draw(st.sampled_from(INT_ARRAYS)),
            )
            p.emit(f"for i in range({n}):")
            _int_def(p, name, str(draw(st.integers(-5, 5))), 2)
            p.emit(f"acc({name}, {src}[i] % 7 - 2)", f"{name} = acc({name}, {src}[i] % 7 - 2)", 2)
            p.emit(f"{dst}[i] = {dst}[i] + {name}", indent=2)
    elif kind == "fill":
        # `x.fill(v)` of a global field in the kernel (a loop over its elements, as Genesis clears
        # its spatial hash), between loops that read and write it
        held = [a for a in p.fields if a != "V0"]
        if not held:
            return
        arr = draw(st.sampled_from(held))
        v = draw(st.integers(-6, 6))
        value = f"{v}.5" if arr in FLOAT_ARRAYS else str(v)
        p.emit(f"{arr}.fill({value})", f"{arr}[:] = {value}")
        p.patterns.add("field_fill_in_kernel")
    elif kind == "sparse":
        _sparse_statement(draw, p, s)
    elif kind == "half_extreme":
        # halves reduced by min or max over a loop: an atomic on a local of a parallel loop, or a
        # plain assignment in a serial one (LLVM's vectorizer once aborted the process on both)
        name, src = f"h{s}", draw(st.sampled_from(INT_ARRAYS))
        op, dst = draw(st.sampled_from(["min", "max"])), draw(st.sampled_from(FLOAT_ARRAYS))
        start = draw(st.integers(-4, 4))
        m = draw(st.sampled_from([n, 128, 200]))  # long enough for LLVM to vectorize
        v = f"((i + {src}[i % {n}]) % 17 - 8) * 0.25"
        ref_v = f"np.float16(np.float32((i + {src}[i % {n}]) % 17 - 8) * np.float32(0.25))"
        p.emit(f"{name} = qd.f16({start}.0)", f"{name} = np.float16({start})")
        serial = draw(st.booleans())
        if serial:
            p.emit("qd.loop_config(serialize=True)", "pass")
        p.emit(f"for i in range({m}):")
        p.emit(
            f"{name} = qd.{op}({name}, qd.cast({v}, qd.f16))"
            if serial
            else f"qd.atomic_{op}({name}, qd.cast({v}, qd.f16))",
            f"{name} = {op}({name}, {ref_v})",
            indent=2,
        )
        p.emit(f"{dst}[{draw(st.integers(0, n - 1))}] = {name}", None)
        p.ref_lines[-1] = p.ref_lines[-1].replace(f"= {name}", f"= np.float32({name})")
        p.patterns.add("half_extreme_loop")
    elif kind == "atomic_local":
        # old values of an atomic on a local: a set {0, ..., count-1}, so the array increments are
        # order-free
        name, dst = f"c{s}", draw(st.sampled_from(INT_ARRAYS))
        _int_def(p, name, "0")
        p.emit(f"for i in range({n}):")
        p.emit(
            f"if {draw(st.sampled_from(p.others(dst)))}[i] > {draw(st.integers(-30, 30))}:",
            indent=2,
        )
        p.emit(
            f"o = qd.atomic_add({name}, 1)", f"o = {name}; {name} = np.int32({name} + 1)", indent=3
        )
        p.emit(f"qd.atomic_add({dst}[o % {n}], 1)", f"{dst}[o % {n}] += np.int32(1)", indent=3)
        p.patterns.add("atomic_old_local")
        p.scalars.append(name)
    elif kind == "serial_atomic":
        name, old = f"e{s}", f"eo{s}"
        _int_def(p, name, int_expr(draw, p, None, 1))
        v = draw(st.integers(-5, 5))
        p.emit(
            f"{old} = qd.atomic_add({name}, {v})",
            f"{old} = {name}; {name} = np.int32({name} + {v})",
        )
        p.patterns.add("serial_atomic_old")
        p.scalars += [name, old]
    elif kind == "shared_random":
        p.uses_random = True
        p.patterns.add("shared_random")
        name = f"r{s}"
        a, b = draw(st.sampled_from(FLOAT_ARRAYS)), draw(st.sampled_from(FLOAT_ARRAYS))
        p.emit(f"{name} = qd.random(qd.f32)", f"{name} = np.float32(0.5)")
        p.emit(f"for i in range({n}):")
        p.emit(f"{a}[i] = {a}[i] + {name}", indent=2)
        p.emit(f"for i in range({n}):")
        p.emit(f"{b}[i] = {b}[i] * {name}", indent=2)
    elif kind == "snapshot":
        # a top-level read, an array written in between, and a loop that reads the snapshot after
        # the write
        name, src, dst = (
            f"v{s}",
            draw(st.sampled_from(INT_ARRAYS)),
            draw(st.sampled_from(INT_ARRAYS)),
        )
        element = f"{src}[{draw(st.integers(0, n - 1))}]"
        if draw(st.booleans()):
            p.patterns.add("volatile_snapshot")
            p.emit(f"{name} = qd.volatile_load({element})", f"{name} = np.int32({element})")
        else:
            _int_def(p, name, element)
        p.emit(f"for i in range({n}):")
        p.emit(f"{dst}[i] = {dst}[i] * 2 + {int_expr(draw, p, 'i', 1, p.others(dst))}", indent=2)
        out = draw(st.sampled_from(INT_ARRAYS))
        p.emit(f"for i in range({n}):")
        p.emit(f"{out}[i] = {out}[i] + {name}", indent=2)
        p.patterns.add("snapshot")
        p.scalars.append(name)
    elif kind == "const_divide":
        _const_divide_statement(draw, p, s)
    elif kind == "svd":
        _svd_statement(draw, p, s)
    elif kind == "ndrange":
        _ndrange_statement(draw, p, s)
    elif kind == "return":
        if p.returned:
            return
        p.patterns.add("return")
        p.returns = p.returned = True
        p.emit(f"return {int_expr(draw, p, None, 1, tuple(INT_ARRAYS))}")
    elif kind == "helper":
        if p.helper_value is None:
            p.helper_value = draw(st.integers(-4, 4))
            p.helper_file = draw(st.booleans())
        p.patterns.add("compile_time_helper_file" if p.helper_file else "compile_time_helper")
        arr = draw(st.sampled_from(INT_ARRAYS))
        p.emit(f"for i in range({n}):")
        p.emit(
            f"{arr}[i] = {arr}[i] + qd.static(helper())",
            f"{arr}[i] = {arr}[i] + helper()",
            indent=2,
        )
    if p.returned and kind != "return":
        p.patterns.add("after_return")


def _ndrange_statement(draw, p: Program, s: int) -> None:
    """A loop over a `qd.ndrange` of two axes, each maybe starting below zero or above it, writing
    each element its pair of indices reaches: the flat loop index split into the axes' (unsigned
    division by the extents, `frontend/loops.py`), the axes' offsets added back."""
    e1 = draw(st.integers(1, min(3, p.n)))
    e2 = draw(st.integers(1, p.n // e1))  # e1 * e2 <= n elements
    lo1, lo2 = draw(st.integers(-3, 3)), draw(st.integers(-3, 3))
    a, b = f"a{s}", f"b{s}"
    axes = f"({lo1}, {lo1 + e1}), ({lo2}, {lo2 + e2})"
    ref_axes = f"range({lo1}, {lo1 + e1}) for y in range({lo2}, {lo2 + e2})"
    p.emit(f"for {a}, {b} in qd.ndrange({axes}):", f"for {a}, {b} in [(x, y) for x in {ref_axes}]:")
    p.emit(f"i = ({a} - {lo1}) * {e2} + ({b} - {lo2})", indent=2)
    arr = draw(st.sampled_from(INT_ARRAYS))
    p.emit(f"{arr}[i] = {int_expr(draw, p, 'i', 1, p.others(arr))} + {a} * 7 - {b}", indent=2)
    p.patterns.add("ndrange_offset_axes")


def _svd_statement(draw, p: Program, s: int) -> None:
    """Per element, a 3x3 matrix of float expressions decomposed by `qd.svd` or
    `qd.polar_decompose` (McAdams/Sifakis' SVD in f32, its sweeps a serial loop inside the parallel
    one), and one entry of one factor written to F1; the reference: `sifakis_ref`'s bits."""
    entries = [float_expr(draw, p, "i", 1) for _ in range(9)]
    rows = ", ".join(f"[{', '.join(entries[3 * r : 3 * r + 3])}]" for r in range(3))
    m = f"svd_m{s}"  # names of their own: `V0` is an array, `u{s}` a vector local
    p.emit(f"for i in range({p.n}):")
    p.emit(f"{m} = qd.Matrix([{rows}])", f"{m} = np.array([{rows}], np.float32)", indent=2)
    if draw(st.booleans()):
        factors = [f"svd_r{s}", f"svd_p{s}"]
        p.emit(f"{', '.join(factors)} = qd.polar_decompose({m})", indent=2)
        p.patterns.add("matrix_polar_decompose")
    else:
        factors = [f"svd_u{s}", f"svd_s{s}", f"svd_v{s}"]
        p.emit(f"{', '.join(factors)} = qd.svd({m})", indent=2)
        p.patterns.add("matrix_svd")
    pick, r, c = draw(st.sampled_from(factors)), draw(st.integers(0, 2)), draw(st.integers(0, 2))
    p.emit(f"F1[i] = {pick}[{r}, {c}]", indent=2)


def _const_divide_statement(draw, p: Program, s: int) -> None:
    """A local assigned a literal (and maybe again, `//=` a literal or a term), and `//` and `%` of
    it, `qd.i32(literal)`s, literals and `k`: Quadrants folds the integer `//` and `%` of two
    constants toward zero, as C divides, a local's last constant store forwarded to its loads, and
    floors where an operand is known only at run time (`CInt` is the reference's constant); and
    `qd.raw_div` / `qd.raw_mod` of such terms (C's division, but `//` where both are literals)."""
    name = f"cd{s}"
    a = draw(st.integers(-20, 20))
    p.emit(f"{name} = {a}", f"{name} = CInt({a})")
    for _ in range(draw(st.integers(0, 2))):  # assigned again: its last store is what is read
        if draw(st.booleans()):
            d = draw(st.integers(-9, 9)) | 1
            op = draw(st.sampled_from(["//", "%"]))
            p.emit(f"{name} {op}= {d}", f"{name} = {name} {op} {d}")
        else:
            kernel, ref = _const_term(draw, name, 1)
            p.emit(f"{name} = {kernel}", f"{name} = {ref}")
    kernel, ref = _const_term(draw, name, 0)
    arr = draw(st.sampled_from(INT_ARRAYS))
    at = draw(st.integers(0, p.n - 1))
    p.emit(f"{arr}[{at}] = {kernel}", f"{arr}[{at}] = np.int32(int({ref}))")
    p.patterns.add("const_floordiv")
    if any("qd.raw_" in line for line in p.kernel_lines):
        p.patterns.add("const_raw_div_mod")


def _const_term(draw, local: str, depth: int) -> tuple[str, str]:
    """(kernel text, reference text) of an i32 term of `_const_divide_statement`."""
    kinds = ["local", "cast", "literal", "k"] + (["bin"] * 3 + ["raw"] if depth < 2 else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "local":
        return local, local
    if kind == "k":
        return "k", "k"
    v = draw(st.integers(-20, 20))
    if kind == "cast":
        return f"qd.i32({v})", f"CInt({v})"
    if kind == "literal":
        return str(v), str(v)
    if kind == "raw":  # `qd.raw_div` / `qd.raw_mod`: two literals fold as Quadrants folds them
        f = draw(st.sampled_from(["div", "mod"]))
        ka, ra = _const_term(draw, local, depth + 1)
        if draw(st.booleans()):
            kb, rb = (v | 1,) * 2
        else:
            kb, rb = _const_term(draw, local, depth + 1)
            kb, rb = f"({kb} | 1)", f"({rb} | 1)"
        return f"qd.raw_{f}({ka}, {kb})", f"ref_raw{f}({ra}, {rb})"
    op = draw(st.sampled_from(["//", "%", "//", "%", "+", "-", "*"]))
    (ka, ra), (kb, rb) = _const_term(draw, local, depth + 1), _const_term(draw, local, depth + 1)
    if op in ("//", "%") and "k" not in kb:  # a constant zero divisor is refused by Quadrants
        kb, rb = f"({kb} | 1)", f"({rb} | 1)"
    return f"({ka} {op} {kb})", f"({ra} {op} {rb})"


class CInt:
    """An i32 that the kernel holds as a compile-time constant: a local assigned a literal,
    `qd.i32(literal)`, or an op of such and Python ints. Its `//` and `%` with another round
    toward zero, as Quadrants folds them; with a run-time value (an np.int32) they floor."""

    __array_ufunc__ = None  # np.int32 `op` CInt: NumPy hands it to the reflected method

    def __init__(self, v: int) -> None:
        self.v = (int(v) + 2**31) % 2**32 - 2**31

    def __int__(self) -> int:
        return self.v

    def _op(self, other: object, op: str, swap: bool) -> object:
        if isinstance(other, (CInt, int)):
            a, b = self.v, int(other)  # type: ignore[arg-type]
            a, b = (b, a) if swap else (a, b)
            if op in ("//", "%"):
                q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
                return CInt(q if op == "//" else a - q * b)
            return CInt(CINT_OPS[op](a, b))
        a, b = np.int32(self.v), other
        a, b = (b, a) if swap else (a, b)
        return CINT_OPS[op](a, b)

    def __add__(self, o: object) -> object:
        return self._op(o, "+", False)

    def __radd__(self, o: object) -> object:
        return self._op(o, "+", True)

    def __sub__(self, o: object) -> object:
        return self._op(o, "-", False)

    def __rsub__(self, o: object) -> object:
        return self._op(o, "-", True)

    def __mul__(self, o: object) -> object:
        return self._op(o, "*", False)

    def __rmul__(self, o: object) -> object:
        return self._op(o, "*", True)

    def __floordiv__(self, o: object) -> object:
        return self._op(o, "//", False)

    def __rfloordiv__(self, o: object) -> object:
        return self._op(o, "//", True)

    def __mod__(self, o: object) -> object:
        return self._op(o, "%", False)

    def __rmod__(self, o: object) -> object:
        return self._op(o, "%", True)

    def __or__(self, o: object) -> object:
        return self._op(o, "|", False)

    def __ror__(self, o: object) -> object:
        return self._op(o, "|", True)


def ref_rawdiv(a: object, b: object) -> object:
    """`qd.raw_div(a, b)` on i32 terms: two Python ints fold while compiling with Python's `//`
    (a floor); otherwise C's division, toward zero (a `CInt` where both are constants)."""
    if type(a) is int and type(b) is int:
        return a // b
    x, y = int(a), int(b)  # type: ignore[call-overload]
    q = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
    return CInt(q) if isinstance(a, (CInt, int)) and isinstance(b, (CInt, int)) else np.int32(q)


def ref_rawmod(a: object, b: object) -> object:
    """`qd.raw_mod(a, b)` on i32 terms: C's remainder (the dividend's sign), folded
    (`a - b * int(float(a) / b)`, the same for these small ints) or at run time."""
    if type(a) is int and type(b) is int:
        return a - b * int(float(a) / b)
    x, y = int(a), int(b)  # type: ignore[call-overload]
    r = x - abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1) * y
    return CInt(r) if isinstance(a, (CInt, int)) and isinstance(b, (CInt, int)) else np.int32(r)


CINT_OPS = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "//": lambda a, b: a // b,
    "%": lambda a, b: a % b,
    "|": lambda a, b: a | b,
}


def _sparse_statement(draw, p: Program, s: int) -> None:
    """`SP` zeroed and its blocks deactivated, cells activated by a loop's writes, a snapshot of
    one block's activity, some blocks deactivated (a pointer's zero-filled, a bitmasked one's
    elements kept), then a struct-for over the active cells adding to an array (the reference:
    `SP` and its block flags `SM` as NumPy arrays)."""
    if p.struct:
        return  # the test makes `SP` for a kernel called with plain parameters
    if p.sparse is None:
        p.sparse = draw(st.sampled_from(["pointer", "bitmasked", "pointer2d"]))
    if p.sparse == "pointer2d":
        _sparse_2d_statement(draw, p, s)
        return
    n, nb = p.n, p.blocks
    src, dst = draw(st.sampled_from(INT_ARRAYS)), draw(st.sampled_from(INT_ARRAYS))
    c, d, m = draw(st.integers(-40, 40)), draw(st.integers(0, 2)), draw(st.integers(2, 4))
    blk = draw(st.integers(0, nb - 1))
    name = f"sp{s}"
    p.emit(f"for i in range({4 * nb}):", "if True:")  # zeroed (activating every block)...
    p.emit(
        "SP[i] = 0", f"SP = np.zeros({4 * nb}, np.int32); SM = np.zeros({nb}, np.int32)", indent=2
    )
    p.emit(f"for b in range({nb}):", "if True:")  # ... then deactivated
    p.emit("qd.deactivate(SP_B, [b])", "pass", indent=2)
    p.emit(f"for i in range({n}):")
    p.emit(f"if {src}[i] > {c}:", indent=2)
    p.emit(f"SP[i] = {src}[i] * 2 + 1", indent=3)
    p.emit("pass", "SM[i // 4] = 1", indent=3)
    _int_def(p, name, f"qd.is_active(SP_B, [{blk}]) * 5")
    p.ref_lines[-1] = f"    {name} = np.int32(SM[{blk}] * 5)"
    p.emit(f"for b in range({nb}):")
    p.emit(f"if b % {m} == {d}:", indent=2)
    # a pointer's block is zero-filled; a bitmasked cell only loses its flag
    zero = "SP[b * 4 : b * 4 + 4] = 0; " if p.sparse == "pointer" else ""
    p.emit("qd.deactivate(SP_B, [b])", f"{zero}SM[b] = 0", indent=3)
    p.emit("for i in SP:", f"for i in range({4 * nb}):")
    p.emit("pass", "if SM[i // 4] == 0: continue", indent=2)
    p.emit(f"if i < {n}:", indent=2)
    p.emit(f"{dst}[i] = {dst}[i] + SP[i] + {name}", indent=3)
    p.patterns.add(f"sparse_{p.sparse}")
    p.scalars.append(name)


def _sparse_2d_statement(draw, p: Program, s: int) -> None:
    """`_sparse_statement` on a 2-D `SP` of `p.rows` rows of 4: blocks of 2 x 2 under a pointer
    level of (rows / 2, 2) blocks, so a struct-for walks each active block's cells by row and
    column. Flat index `i` is cell (i // 4, i % 4), of block (i // 8) * 2 + (i % 4) // 2 (the
    reference keeps `SP` flat and its block flags `SM` by that number)."""
    n, rows = p.n, p.rows
    src, dst = draw(st.sampled_from(INT_ARRAYS)), draw(st.sampled_from(INT_ARRAYS))
    c, d, m = draw(st.integers(-40, 40)), draw(st.integers(0, 2)), draw(st.integers(2, 4))
    blk = draw(st.integers(0, rows - 1))
    block_of = "(i // 8) * 2 + (i % 4) // 2"
    name = f"sp{s}"
    p.emit(f"for i in range({4 * rows}):", "if True:")  # zeroed (activating every block)...
    p.emit(
        "SP[i // 4, i % 4] = 0",
        f"SP = np.zeros({4 * rows}, np.int32); SM = np.zeros({rows}, np.int32)",
        indent=2,
    )
    p.emit(f"for b in range({rows}):", "if True:")  # ... then deactivated
    p.emit("qd.deactivate(SP_B, [b // 2, b % 2])", "pass", indent=2)
    p.emit(f"for i in range({n}):")
    p.emit(f"if {src}[i] > {c}:", indent=2)
    p.emit(f"SP[i // 4, i % 4] = {src}[i] * 2 + 1", f"SP[i] = {src}[i] * 2 + 1", indent=3)
    p.emit("pass", f"SM[{block_of}] = 1", indent=3)
    _int_def(p, name, f"qd.is_active(SP_B, [{blk // 2}, {blk % 2}]) * 5")
    p.ref_lines[-1] = f"    {name} = np.int32(SM[{blk}] * 5)"
    p.emit(f"for b in range({rows}):")
    p.emit(f"if b % {m} == {d}:", indent=2)
    cells = "[(b // 2 * 2 + q // 2) * 4 + b % 2 * 2 + q % 2 for q in range(4)]"
    p.emit("qd.deactivate(SP_B, [b // 2, b % 2])", f"SP[{cells}] = 0; SM[b] = 0", indent=3)
    p.emit("for sr, sc in SP:", f"for i in range({4 * rows}):")
    p.emit("i = sr * 4 + sc", f"if SM[{block_of}] == 0: continue", indent=2)
    p.emit(f"if i < {n}:", indent=2)
    p.emit(
        f"{dst}[i] = {dst}[i] + SP[sr, sc] + {name}",
        f"{dst}[i] = {dst}[i] + SP[i] + {name}",
        indent=3,
    )
    p.patterns.add("sparse_pointer2d")
    p.scalars.append(name)


@st.composite
def programs(
    draw, max_statements: int = 6, allow_random: bool = True, kinds: tuple[str, ...] = ()
) -> Program:
    """A random program; `kinds`: its statements drawn from these only (all of KINDS if empty)."""
    n = draw(st.sampled_from([1, 3, 8, 33, 64] + ([20000] if draw(st.integers(0, 9)) == 0 else [])))
    p = Program(n, alias=draw(st.integers(0, 3)) == 0, struct=draw(st.integers(0, 2)) == 0)
    if p.alias:
        p.patterns.add("aliased_arrays")
    if p.struct:
        p.patterns.add("dataclass_parameter")
    else:  # a struct's wrapper passes every array: fields go with plain parameters only
        p.fields = tuple(a for a in FIELD_CANDIDATES if draw(st.integers(0, 2)) == 0)
    p.grouped = bool(p.fields) and draw(st.integers(0, 1)) == 0
    p.quant = "A1" in p.fields and not p.grouped and draw(st.integers(0, 1)) == 0
    p.grad = p.grouped and "F1" in p.fields and draw(st.integers(0, 1)) == 0
    p.fields = ("F1",) if p.grad else p.fields  # integer members have no gradients (as there)
    p.patterns |= {"struct_field_grad"} if p.grad else set()
    p.patterns |= {"quant_field"} if p.quant else set()
    p.patterns |= {"global_fields"} if p.fields else set()
    p.patterns |= {"struct_field"} if p.grouped else set()
    p.patterns |= {"vector_field"} if "V0" in p.fields else set()
    kinds = [k for k in kinds or KINDS if allow_random or k not in ("random", "shared_random")]
    if "V0" in p.fields and not p.grouped and draw(st.booleans()):
        _entry_field_statement(draw, p)
    for s in range(draw(st.integers(1, max_statements))):
        _statement(draw, p, s, draw(st.sampled_from(kinds)))
    if p.returns and not p.returned:
        p.emit("return 0")
    p.body_func = not p.returns and not p.struct and draw(st.integers(0, 2)) == 0
    p.patterns |= {"kernel_body_in_func"} if p.body_func else set()
    return p


def load(
    p: Program,
    folder: Path,
    helper_value: int | None = None,
    again: bool = False,
    moved: int = 0,
    edit_funcs: bool = False,
    ret_f32: bool = False,
) -> tuple[object, object]:
    """Write the program's two forms to files and import them: (qdlab kernel, reference function).
    `again` rewrites the files of the previous load under the same module names, as an edited file
    looks to a new process; `moved` puts that many comment lines above the kernel's module (every
    line number moves, nothing else changes); `edit_funcs` changes a constant in each real_func;
    `ret_f32` makes the global the kernel's return annotation names (`-> RET_T`) qd.f32."""
    kernel_src, ref_src = p.source(helper_value, edit_funcs, ret_f32)
    if p.helper_file:
        write_helper_file(folder, p.helper_value if helper_value is None else helper_value)
    kernel_src = "# moved\n" * moved + kernel_src
    n = _latest[0] if again else next(_counter)
    _latest[0] = n
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


HELPER_FILE = "helper_c.txt"
_READ = f"int(pathlib.Path(__file__).with_name({HELPER_FILE!r}).read_text())"
HELPER_READS = ["", "import pathlib", "", "", "def helper():", f"    return {_READ} * 2 + 1", ""]
"""A compile-time helper that reads its value from a file beside the kernel's module."""
HELPER_READ_ONCE = [
    *("", "import pathlib", "", f"HELPER_C = {_READ}", ""),
    *("", "def helper():", "    return HELPER_C * 2 + 1", ""),
]
"""The reference's: the value read once, as its module is imported."""


def write_helper_file(folder: Path, value: int) -> None:
    """The value the file helper reads (the program's own, or the one a reload changes it to)."""
    (folder / HELPER_FILE).write_text(str(value))
