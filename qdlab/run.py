"""`python -m qdlab.run script.py [args ...]` or `python -m qdlab.run -m package.module [args ...]`:
run a program written for Quadrants on qdlab, unchanged (`import quadrants` gives qdlab; see
`qdlab/compat.py`). The script sees its own `sys.argv` and runs as `__main__`, as with `python`."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

from .compat import QuadrantsAlias, as_quadrants

USAGE = "usage: python -m qdlab.run script.py [args ...] | -m module [args ...]"


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help") or (argv[0] == "-m" and len(argv) < 2):
        print(USAGE, file=sys.stderr)
        return 2
    as_quadrants()
    if argv[0] == "-m":
        sys.argv = [argv[1], *argv[2:]]
        if argv[1] == "pytest":  # this module's hook keeps the alias first (below)
            sys.argv[1:1] = ["-p", "qdlab.run"]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = list(argv)
        sys.path.insert(0, str(Path(argv[0]).resolve().parent))  # as `python script.py` does
        runpy.run_path(argv[0], run_name="__main__")
    return 0


def pytest_load_initial_conftests(early_config: object, parser: object, args: object) -> None:
    """pytest's hook, before any conftest imports the program's modules: `import quadrants`
    resolves to qdlab again. pytest puts its assertion-rewriting import hook first on
    `sys.meta_path` as it starts, and marks for rewriting every package of a distribution that
    registers a pytest plugin, which the real `quadrants` does (`quadrants_pytest`): where both
    are installed, its hook imported the real package ahead of qdlab's alias."""
    front = [f for f in sys.meta_path if isinstance(f, QuadrantsAlias)]
    sys.meta_path[:] = front + [f for f in sys.meta_path if not isinstance(f, QuadrantsAlias)]


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
