"""Whole programs on the GPU against the CPU: the field programs of the oracle
(`tests/oracle/field_programs.py`: scalar, vector, matrix and struct fields, layouts, struct-fors,
fields in funcs, host access, gradients), split and whole kernel, and the data-oriented solver of
`tests/oracle/struct_program.py` (a dataclass of vector ndarrays, templates, `qd.func` methods).

Marked `gpu` and skipped without a device, like `test_gpu.py`. A program that uses what qdlab
refuses on CUDA by name (`qd.get_addr`, `print`) is skipped with that message.
"""

from __future__ import annotations

import os
import subprocess
import sys
import traceback
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cuda_oracle import ORACLE, assert_same, fail

import qdlab
from qdlab.compiler.runtime import cuda as cuda_runtime
from qdlab.core.errors import QdError

sys.path.insert(0, str(ORACLE))
import field_programs  # found through the oracle folder, put on the path above

pytestmark = pytest.mark.process

gpu = pytest.mark.skipif(
    not cuda_runtime.available(), reason="no CUDA device (cupy.is_available() is False)"
)
MODES = {"split": {}, "whole": {"per_offload": False}}
REFUSED = ("supported on the CPU in qdlab", "not supported on CUDA")
"""What qdlab says when it refuses a construct on CUDA by design."""
_cpu: dict[str, Any] = {}


def run_program(name: str, arch: object, **options: object) -> dict[str, np.ndarray] | str:
    """One field program's results, or the traceback it raised."""
    field_programs.qd = qdlab
    qdlab.init(arch=arch, **options)
    try:
        return {k: np.asarray(v) for k, v in field_programs.PROGRAMS[name]().items()}
    except QdError as e:
        if any(r in str(e) for r in REFUSED):
            pytest.skip(f"refused on CUDA by design: {str(e).splitlines()[0]}")
        return traceback.format_exc()
    except Exception:  # noqa: BLE001 - reported by the test
        return traceback.format_exc()
    finally:
        qdlab.init(arch=qdlab.cpu)


@pytest.mark.gpu
@gpu
@pytest.mark.parametrize(("mode", "name"), [(m, n) for m in MODES for n in field_programs.PROGRAMS])
def test_field_program_matches_cpu(mode: str, name: str) -> None:
    if name not in _cpu:
        _cpu[name] = run_program(name, qdlab.cpu)
    want = _cpu[name]
    if isinstance(want, str):
        fail(f"the CPU raised on {name}", want)
    got = run_program(name, qdlab.cuda, **MODES[mode])
    if isinstance(got, str):
        fail(f"CUDA ({mode}) raised on {name}", got)
    assert_same(want, got, f"{name} ({mode})")  # type: ignore[arg-type]


def run_solver(out: Path, *options: str) -> dict[str, np.ndarray]:
    """The solver's results (its construct counts left out: each target compiles its own)."""
    proc = subprocess.run(
        [sys.executable, str(ORACLE / "struct_program.py"), "qdlab", str(out), *options],
        check=False,
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "QDLAB_CACHE_DIR": str(out.parent / "cache")},
    )
    if proc.returncode:
        fail(f"struct_program.py {' '.join(options)} exited with {proc.returncode}", proc.stderr)
    return {k: v for k, v in np.load(out).items() if k != "counts"}


@pytest.mark.gpu
@gpu
@pytest.mark.parametrize("options", [(), ("per_offload=false",)], ids=["split", "whole"])
def test_struct_solver_matches_cpu(options: tuple[str, ...], tmp_path: Path) -> None:
    want = run_solver(tmp_path / "cpu.npz", *options)
    got = run_solver(tmp_path / "cuda.npz", "arch=cuda", *options)
    assert_same(want, got, "struct_program")
