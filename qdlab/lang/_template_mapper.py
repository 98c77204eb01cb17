"""`quadrants.lang._template_mapper`, as far as programs reach into it: its `__builtins__`, the
interpreter's builtins mapping, in which a kernel's free names are looked up last (qdlab's
frontend does the same, `compiler/frontend/source.py`). Genesis sets `__builtins__["__debug__"]`
there to turn the `if __debug__:` checks in its kernels on or off, and kernels compiled afterwards
see it."""

from __future__ import annotations

import builtins

__builtins__ = vars(builtins)  # a dict, as in any imported module (`__main__` has the module)
