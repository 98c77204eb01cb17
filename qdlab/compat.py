"""Programs written for Quadrants, run on qdlab unchanged: after `as_quadrants()`, `import
quadrants` gives `qdlab`, and `import quadrants.lang.impl` (any `quadrants.X.Y`) gives the very
module object `qdlab.lang.impl`, so classes, exceptions and types keep one identity whichever name
imported them.

A `quadrants.X` that qdlab does not have is a ModuleNotFoundError naming it: it never falls through
to a real `quadrants` package installed beside qdlab (two runtimes in one program would share
nothing). `python -m qdlab.run script.py` (`qdlab/run.py`) runs a script under the alias; in a
notebook, call `qdlab.compat.as_quadrants()` before the program's imports.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types

NAME = "quadrants"


class QuadrantsAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """The import hook: `quadrants[.X.Y]` -> the module `qdlab[.X.Y]`."""

    def find_spec(
        self, name: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        if name != NAME and not name.startswith(NAME + "."):
            return None
        return importlib.machinery.ModuleSpec(name, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        own = "qdlab" + spec.name[len(NAME) :]
        try:
            return importlib.import_module(own)
        except ModuleNotFoundError as e:
            if e.name is not None and (e.name == own or own.startswith(e.name + ".")):
                raise ModuleNotFoundError(
                    f"No module named '{spec.name}': qdlab, standing in for quadrants, has no "
                    f"`{own}`, so `{spec.name}` cannot be imported",
                    name=spec.name,
                ) from None
            raise

    def exec_module(self, module: types.ModuleType) -> None:
        """Nothing to run: the module is qdlab's, already imported."""


def as_quadrants() -> None:
    """Make `import quadrants` (and its submodules) resolve to qdlab in this process. Call it before
    the program imports quadrants; a `quadrants` imported earlier is a RuntimeError, not a mix of
    the two."""
    if any(isinstance(f, QuadrantsAlias) for f in sys.meta_path):
        return
    early = sys.modules.get(NAME)
    if early is not None and getattr(early, "__name__", None) != "qdlab":
        raise RuntimeError(
            "qdlab.compat.as_quadrants(): the real `quadrants` is already imported in this "
            "process; call as_quadrants() before anything imports quadrants (restart the "
            "notebook kernel)."
        )
    sys.meta_path.insert(0, QuadrantsAlias())
