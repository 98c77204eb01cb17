"""The layout the design section promises, checked on the source: the compiler imports nothing of
qdlab above it but `qdlab.lang`, no module of qdlab imports another in a cycle, no private name
crosses a module, no module grows past 600 lines, and an import inside a function is a deliberate
lazy one that says why."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "qdlab"
MODULES = sorted(ROOT.rglob("*.py"))
LAZY = "# lazy:"
"""How a deliberate import inside a function is marked (llvmlite's binding, CuPy, graphviz,
IPython...)."""


def name_of(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> list[tuple[ast.stmt, list[str], bool]]:
    """(statement, qdlab modules or names it imports, is it inside a function) for every import."""
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
                out.append((child, [base] + [f"{base}.{a.name}" for a in child.names], in_function))
            elif isinstance(child, ast.Import):
                out.append((child, [a.name for a in child.names], in_function))
            visit(child, inner)

    visit(ast.parse(path.read_text()), False)
    return [
        (s, [n for n in names if n == "qdlab" or n.startswith("qdlab.")] or names, f)
        for s, names, f in out
    ]


def module_names() -> set[str]:
    return {name_of(p) for p in MODULES}


def qdlab_modules(names: list[str]) -> set[str]:
    known = module_names()
    return {n for n in names if n in known}


@pytest.mark.parametrize("path", [p for p in MODULES if "compiler" in p.parts], ids=name_of)
def test_the_compiler_imports_nothing_above_it_but_the_language(path: Path) -> None:
    for stmt, names, _ in imports(path):
        for n in qdlab_modules(names):
            assert n.startswith(("qdlab.compiler", "qdlab.lang")), (
                f"{name_of(path)} line {stmt.lineno} imports {n}"
            )


def test_no_import_cycle_inside_qdlab() -> None:
    graph = {name_of(p): set() for p in MODULES}
    for p in MODULES:
        for _, names, _ in imports(p):
            graph[name_of(p)] |= qdlab_modules(names) - {name_of(p)}
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
def test_no_module_is_over_600_lines(path: Path) -> None:
    assert len(path.read_text().splitlines()) <= 600


@pytest.mark.parametrize("path", MODULES, ids=name_of)
def test_an_import_inside_a_function_is_a_lazy_one_that_says_why(path: Path) -> None:
    lines = path.read_text().splitlines()
    for stmt, names, in_function in imports(path):
        if in_function:
            assert LAZY in lines[stmt.lineno - 1], (
                f"{name_of(path)} line {stmt.lineno}: `{lines[stmt.lineno - 1].strip()}` needs "
                f"`{LAZY} why`"
            )
