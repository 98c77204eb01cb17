"""IPython magics that compile and explain kernels from notebook cells: `%%qdkernel` and `%qdlab`.

`%load_ext qdlab` lands here. IPython and the magic module are imported only then, so `import qdlab` in a plain
script pays nothing for the notebook parts.
"""

from __future__ import annotations

from .. import state


def load_ipython_extension(ipython: object) -> None:
    """Register the magics and the compile hook that updates displays; loading again is harmless."""
    from .magic import QdMagics, on_compile
    ipython.register_magics(QdMagics)  # type: ignore[attr-defined]
    if on_compile not in state.compile_hooks:
        state.compile_hooks.append(on_compile)


def unload_ipython_extension(ipython: object) -> None:
    from .magic import on_compile
    if on_compile in state.compile_hooks:
        state.compile_hooks.remove(on_compile)
    magics = ipython.magics_manager.magics  # type: ignore[attr-defined]
    magics["cell"].pop("qdkernel", None)
    magics["line"].pop("qdkernel", None)
    magics["line"].pop("qdlab", None)
