"""`python -m qdlab.run` and `qdlab.compat.as_quadrants()`: a program written for Quadrants runs on
qdlab unchanged, every `quadrants.X` import gives qdlab's module object, and the real quadrants
(installed in this environment, for the oracle tests) is never loaded beside it. Each case runs in a
fresh interpreter, since the alias is process-wide."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.process

PROGRAM = textwrap.dedent(
    """
    import sys
    import numpy as np
    import quadrants as qd
    import quadrants.lang.impl
    from quadrants.lang import impl
    from quadrants.math import sqrt

    qd.init(arch=qd.cpu)

    @qd.kernel
    def fill(a: qd.types.NDArray[qd.f32, 1], s: qd.f32):
        for i in a:
            a[i] = sqrt(s) + i

    a = np.zeros(3, np.float32)
    fill(a, 4.0)
    print(sys.argv[1:], a.tolist(), __name__)
    print(qd is sys.modules["qdlab"], impl is sys.modules["qdlab.lang.impl"])
    print(qd.QuadrantsTypeError is sys.modules["qdlab"].QuadrantsTypeError)
    print(any(getattr(m, "__file__", "") and "site-packages/quadrants" in m.__file__
              for m in list(sys.modules.values())))
    """
)


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args], check=False, cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_a_quadrants_script_runs_unchanged(tmp_path: Path) -> None:
    (tmp_path / "prog.py").write_text(PROGRAM)
    out = _run("-m", "qdlab.run", "prog.py", "--steps", "3", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [
        "['--steps', '3'] [2.0, 3.0, 4.0] __main__",
        "True True",
        "True",
        "False",  # no module of the real quadrants package was loaded
    ]


def test_a_module_runs_with_dash_m(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "sim.py").write_text(PROGRAM)
    out = _run("-m", "qdlab.run", "-m", "pkg.sim", "a", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0] == "['a'] [2.0, 3.0, 4.0] __main__"


def test_a_quadrants_test_suite_runs_under_pytest(tmp_path: Path) -> None:
    """`python -m qdlab.run -m pytest`: the real quadrants registers a pytest plugin, so pytest
    marks its package for assertion rewriting and its import hook, put first as pytest starts,
    imported the real package ahead of the alias (Genesis' test suite stopped in its conftest)."""
    (tmp_path / "conftest.py").write_text("import quadrants as qd\n")
    (tmp_path / "test_prog.py").write_text(
        "import sys\nimport quadrants as qd\nimport quadrants.lang.impl\n\n\n"
        "def test_prog():\n"
        "    assert qd is sys.modules['qdlab']\n"
        "    assert not any('site-packages/quadrants/' in (getattr(m, '__file__', '') or '')\n"
        "                   for m in list(sys.modules.values()))\n"
    )
    out = _run("-m", "qdlab.run", "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=tmp_path)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert "1 passed" in out.stdout


def test_a_submodule_qdlab_lacks_is_named_not_taken_from_the_real_package(tmp_path: Path) -> None:
    (tmp_path / "prog.py").write_text("import quadrants._lib.core\n")
    out = _run("-m", "qdlab.run", "prog.py", cwd=tmp_path)
    assert out.returncode == 1
    assert (
        "ModuleNotFoundError: No module named 'quadrants._lib': qdlab, standing in for quadrants, "
        "has no `qdlab._lib`" in out.stderr
    )


def test_as_quadrants_in_a_notebook_process(tmp_path: Path) -> None:
    code = "import qdlab.compat; qdlab.compat.as_quadrants(); qdlab.compat.as_quadrants()\n"
    (tmp_path / "nb.py").write_text(code + PROGRAM)
    out = _run("nb.py", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[1:] == ["True True", "True", "False"]


def test_as_quadrants_after_the_real_quadrants_is_refused(tmp_path: Path) -> None:
    code = "import quadrants\nimport qdlab.compat\nqdlab.compat.as_quadrants()\n"
    (tmp_path / "late.py").write_text(code)
    out = _run("late.py", cwd=tmp_path)
    assert out.returncode == 1
    assert "the real `quadrants` is already imported in this process" in out.stderr


def test_usage_without_a_script() -> None:
    out = _run("-m", "qdlab.run", cwd=Path.cwd())
    assert out.returncode == 2 and "usage: python -m qdlab.run script.py" in out.stderr
