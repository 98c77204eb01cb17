"""IPython's `%autoreload 2` (issue 35, item 5): a `@qd.func` imported with `from fmod import f`,
edited on disk, and the kernel's cell run again compiles the new body, as Quadrants does (20, then
30). Autoreload leaves the `@qd.func` object itself as it was (it updates functions and classes);
the kernel reads the func's source again because its file changed."""

from __future__ import annotations

import itertools
import os
import sys
import textwrap

from magic_cells import run

_names = itertools.count()

FUNC = """
    import qdlab as qd

    @qd.func
    def f(x):
        return x * {factor}
"""

CELL = """
@qd.kernel
def k(a: qd.types.NDArray[qd.i32, 1]):
    for i in range(a.shape[0]):
        a[i] = f(10)

a = np.zeros(2, np.int32)
k(a)
value = int(a[0])
"""


def test_autoreload_recompiles_an_edited_func(shell, tmp_path) -> None:
    name = f"fmod_autoreload_{next(_names)}"
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(FUNC).format(factor=2))
    sys.path.insert(0, str(tmp_path))
    try:
        shell.run_line_magic("load_ext", "autoreload")
        shell.run_line_magic("autoreload", "2")
        result, _ = run(shell, f"import numpy as np\nimport qdlab as qd\nfrom {name} import f")
        assert result.success
        result, _ = run(shell, CELL)
        assert result.success and shell.user_ns["value"] == 20
        path.write_text(textwrap.dedent(FUNC).format(factor=3))
        later = os.stat(path).st_mtime_ns + 2_000_000_000  # autoreload compares file times
        os.utime(path, ns=(later, later))
        result, _ = run(shell, CELL)
        assert result.success and shell.user_ns["value"] == 30
    finally:
        shell.run_line_magic("autoreload", "off")
        shell.run_line_magic("unload_ext", "autoreload")
        sys.path.remove(str(tmp_path))
        sys.modules.pop(name, None)
