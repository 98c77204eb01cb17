"""IPython magics that compile and explain kernels from notebook cells: `%%qdkernel` and `%qdlab`.

`%load_ext qdlab` lands here. IPython and the magic module are imported only then, so `import qdlab`
in a plain script pays nothing for the notebook parts.
"""

from __future__ import annotations

import os
import types

from ..core.errors import QdError
from ..host import state

_QDLAB_DIR = os.path.dirname(os.path.dirname(__file__)) + os.sep


def load_ipython_extension(ipython: object) -> None:
    """Register the magics, the compile hook that updates displays, and the handler that shows a
    qdlab error as its message and caret; loading again is harmless."""
    from .magic import QdMagics, on_compile  # lazy: IPython, when the extension loads

    ipython.register_magics(QdMagics)  # type: ignore[attr-defined]
    ipython.set_custom_exc((QdError,), show_error)  # type: ignore[attr-defined]
    if on_compile not in state.compile_hooks:
        state.compile_hooks.append(on_compile)


def show_error(
    shell: object, etype: type, value: BaseException, tb: object, tb_offset: int | None = None
) -> None:
    """A qdlab error in a cell: its own rendering when it has one (the magic's cell-relative form),
    else the traceback of the user's frames. A QdSyntaxError is a SyntaxError, for which IPython
    would otherwise print its own syntax-error view of the cell instead."""
    render = getattr(value, "_render_traceback_", None)
    lines = (
        render()
        if render is not None
        else shell.InteractiveTB.structured_traceback(  # type: ignore
            etype, value, user_frames(tb), tb_offset=tb_offset
        )
    )
    shell._showtraceback(etype, value, lines)  # type: ignore[attr-defined]


def user_frames(tb: types.TracebackType | None) -> types.TracebackType | None:
    """`tb` without qdlab's own frames (the entry points run as `<qdlab>`): a plain call's error
    then shows the user's line and the message, nothing of qdlab in between."""
    frames = []
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if name != "<qdlab>" and not name.startswith(_QDLAB_DIR):
            frames.append(tb)
        tb = tb.tb_next
    out = None
    for t in reversed(frames):
        out = types.TracebackType(out, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return out


def unload_ipython_extension(ipython: object) -> None:
    from .magic import on_compile  # lazy: IPython

    ipython.set_custom_exc((), None)  # type: ignore[attr-defined]
    if on_compile in state.compile_hooks:
        state.compile_hooks.remove(on_compile)
    magics = ipython.magics_manager.magics  # type: ignore[attr-defined]
    magics["cell"].pop("qdkernel", None)
    magics["line"].pop("qdkernel", None)
    magics["line"].pop("qdlab", None)
