"""The layout the design section promises, checked on the source: each module belongs to one layer
of LAYERS (and each module of the compiler to one stage of COMPILER), and imports nothing from a
layer or stage above its own, lazy imports included; no module of qdlab imports another in a
cycle; no private name crosses a module; and an import inside a function is a deliberate lazy one
that says why."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "qdlab"
MODULES = sorted(ROOT.rglob("*.py"))
LAZY = "# lazy:"
"""How a deliberate import inside a function is marked (llvmlite's binding, CuPy, graphviz,
IPython...)."""

LAYERS = (
    ("core", ("qdlab.core",)),
    ("compiler", ("qdlab.compiler",)),
    ("host", ("qdlab.host",)),
    ("notebook", ("qdlab.magics", "qdlab.viz", "qdlab.teach", "qdlab.demo", "qdlab.profile")),
    (
        "facades",
        (
            "qdlab.lang",
            "qdlab.types",
            "qdlab.math",
            "qdlab.ad",
            "qdlab.algorithms",
            "qdlab.experimental",
            "qdlab.interop",
            "qdlab.sparse",
            "qdlab.linalg",
            "qdlab.compat",
            "qdlab.profiler",
            "qdlab.tools",
            "qdlab.run",
            "qdlab._logging",
            "qdlab._tensor",
            "qdlab._test_tools",
            "qdlab",
        ),
    ),
)
"""The layers, bottom first, as the data flows: the vocabulary every layer shares; the compiler;
what a program holds and passes to kernels; the notebook side; the names at the paths Quadrants
users import, and the package itself. A module may import its own layer and those below."""

COMPILER = (
    "qdlab.compiler",
    "qdlab.compiler.ir",
    "qdlab.compiler.passes",
    "qdlab.compiler.split",
    "qdlab.compiler.frontend",
    "qdlab.compiler.runtime",
    "qdlab.compiler.codegen",
    "qdlab.compiler.cache",
    "qdlab.compiler.report",
    "qdlab.compiler.pipeline",
)
"""The compiler's stages, bottom first: a stage may import its own and those below."""


def name_of(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


KNOWN = {name_of(p) for p in MODULES}


def imports(path: Path) -> list[tuple[ast.stmt, list[str], bool]]:
    """(statement, qdlab modules it imports, is it inside a function) for every import: for
    `from package import name`, the submodule `name` where it is one, else the package."""
    package = name_of(path) if path.name == "__init__.py" else name_of(path).rsplit(".", 1)[0]
    out = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and ast.unparse(child.test) == "TYPE_CHECKING":
                continue  # for annotations only: never imported
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    up = package.split(".")[: len(package.split(".")) - child.level + 1]
                    base = ".".join(up + ([child.module] if child.module else []))
                names = [f"{base}.{a.name}" for a in child.names]
                out.append((child, [n if n in KNOWN else base for n in names], in_function))
            elif isinstance(child, ast.Import):
                out.append((child, [a.name for a in child.names], in_function))
            visit(child, inner)

    visit(ast.parse(path.read_text()), False)
    return [(s, [n for n in names if n in KNOWN], f) for s, names, f in out]


def rank(module: str, table: tuple[str, ...]) -> int:
    """The position in `table` of the longest prefix of `module`."""
    best = max((p for p in table if module == p or module.startswith(p + ".")), key=len)
    return table.index(best)


LAYER_PREFIXES = tuple(p for _, prefixes in LAYERS for p in prefixes)
LAYER_OF = {p: k for k, (_, prefixes) in enumerate(LAYERS) for p in prefixes}


def layer(module: str) -> int:
    return LAYER_OF[LAYER_PREFIXES[rank(module, LAYER_PREFIXES)]]


def test_every_module_has_a_layer() -> None:
    for m in sorted(KNOWN):
        if m != "qdlab":
            assert rank(m, LAYER_PREFIXES) != LAYER_PREFIXES.index("qdlab"), (
                f"{m} sits in no layer: place it in a layer's folder and in LAYERS"
            )


@pytest.mark.parametrize("path", MODULES, ids=name_of)
def test_no_module_imports_a_layer_above_its_own(path: Path) -> None:
    me = name_of(path)
    for stmt, names, _ in imports(path):
        for n in names:
            assert layer(n) <= layer(me), (
                f"{me} ({LAYERS[layer(me)][0]}) line {stmt.lineno} imports {n} "
                f"({LAYERS[layer(n)][0]})"
            )
            if layer(me) == layer(n) == 1:
                assert rank(n, COMPILER) <= rank(me, COMPILER), (
                    f"{me} line {stmt.lineno} imports {n}, a later stage of the compiler"
                )


def test_no_import_cycle_inside_qdlab() -> None:
    graph = {name_of(p): set() for p in MODULES}
    for p in MODULES:
        for _, names, _ in imports(p):
            graph[name_of(p)] |= set(names) - {name_of(p)}
    # a package's __init__ is imported by its submodules: not an edge back
    for m, deps in graph.items():
        graph[m] = {d for d in deps if not m.startswith(d + ".")}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for d in sorted(graph[m]):
            if state.get(d) == 1:
                raise AssertionError("import cycle: " + " -> ".join(stack[stack.index(d) :] + [d]))
            if d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)


@pytest.mark.parametrize("path", MODULES, ids=name_of)
def test_no_private_name_is_imported_across_modules(path: Path) -> None:
    for stmt, _, _ in imports(path):
        if isinstance(stmt, ast.ImportFrom):
            private = [
                a.name for a in stmt.names if a.name.startswith("_") and not a.name.startswith("__")
            ]
            assert not private, (
                f"{name_of(path)} line {stmt.lineno} imports {private} from {stmt.module}"
            )


@pytest.mark.parametrize("path", MODULES, ids=name_of)
def test_an_import_inside_a_function_is_a_lazy_one_that_says_why(path: Path) -> None:
    lines = path.read_text().splitlines()
    for stmt, _, in_function in imports(path):
        if in_function:
            assert LAZY in lines[stmt.lineno - 1], (
                f"{name_of(path)} line {stmt.lineno}: `{lines[stmt.lineno - 1].strip()}` needs "
                f"`{LAZY} why`"
            )
