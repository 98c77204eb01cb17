"""The printer's text is canonical, so construct cache keys are stable and change only where the
source does.

Same source in two fresh processes: byte-identical IR text and identical keys (no object ids, hash
seeds, dict order or addresses). Editing one loop changes that construct's key only; editing a
shared definition changes the keys of exactly the constructs whose slices include it; moving the
kernel down changes nothing.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import qdlab as qd
from qdlab.compiler.ir.printer import print_kernel
from qdlab.host import state

SOURCE = """\
import qdlab as qd

F = qd.types.NDArray[qd.f32, 1]
c = 0.25


@qd.func
def poly(v: qd.f32, k: qd.f32) -> qd.f32:
    return v * k + 1.5 * v * v - c


@qd.kernel
def five(x: F, o0: F, o1: F, o2: F, o3: F, s: qd.f32):
    n = x.shape[0]
    scale = s * 2.0
    for i in range(n):
        o0[i] = poly(x[i], 1.0)
    for i in range(n):
        o1[i] = x[i] * scale
    for i in range(n):
        o2[i] = poly(x[i], 3.0)
    for i in range(n):
        o3[i] = x[i] * scale + 1.0
    for i in range(n):
        o0[i] += poly(x[i], 5.0)
"""

PROBE = """\
import importlib.util, json, os, sys
junk = [object() for _ in range(int(os.environ.get("JUNK", "0")))]  # shifts every later address
import numpy as np
import qdlab as qd
from qdlab.compiler.ir.printer import print_kernel
qd.init(arch=qd.cpu, offline_cache=False)
spec = importlib.util.spec_from_file_location("probe_kernels", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
x = np.linspace(-1, 1, 64, dtype=np.float32)
outs = [np.zeros(64, np.float32) for _ in range(4)]
mod.five(x, *outs, 0.5)
report = qd.explain(mod.five)
print(json.dumps({"text": print_kernel(mod.five.latest.kernel),
                  "text_locs": print_kernel(mod.five.latest.kernel, with_locs=True),
                  "constructs": [c.stage("ir") for c in report.constructs],
                  "keys": [c.cache_key for c in report.constructs]}))
"""

_names = itertools.count()


@pytest.fixture(autouse=True)
def _init() -> None:
    qd.init(arch=qd.cpu, offline_cache=False)


def compile_source(tmp_path: Path, source: str) -> tuple[list[str], list[list[int]]]:
    """Import `source` as a fresh module, run its kernel; return the construct keys and each one's
    slice lines."""
    name = f"canonical_kernels_{next(_names)}"
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    x = np.linspace(-1, 1, 64, dtype=np.float32)
    mod.five(x, *[np.zeros(64, np.float32) for _ in range(4)], 0.5)
    report = qd.explain(mod.five)
    assert report.mode == "per_offload"
    return [c.cache_key for c in report.constructs], [c.slice_lines for c in report.constructs]


def line_of(source: str, text: str) -> int:
    return next(n for n, line in enumerate(source.splitlines(), 1) if text in line)


def fresh_process(tmp_path: Path, hash_seed: str = "0", junk: str = "0") -> dict:
    """Compile SOURCE in a new interpreter; return its IR texts and construct keys."""
    path = tmp_path / "probe_kernels.py"
    path.write_text(SOURCE)
    (tmp_path / "probe.py").write_text(PROBE)
    env = dict(os.environ, PYTHONHASHSEED=hash_seed, JUNK=junk)
    proc = subprocess.run(
        [sys.executable, str(tmp_path / "probe.py"), str(path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


@pytest.mark.process
def test_same_source_same_text_and_keys_in_fresh_processes(tmp_path: Path) -> None:
    first, second = (
        fresh_process(tmp_path),
        fresh_process(tmp_path, hash_seed="4242", junk="100003"),
    )
    assert first["text"] == second["text"]
    assert first["text_locs"] == second["text_locs"]
    assert first["constructs"] == second["constructs"]
    assert first["keys"] == second["keys"]
    assert len(first["keys"]) == 5 and len(set(first["keys"])) == 5
    assert "0x" not in first["text"] and "object at" not in first["text"]
    assert "%scale = binop %s" in first["text"] and "%x_shape0 = shape %x" in first["text"]


@pytest.mark.process
def test_in_process_text_matches_a_fresh_process(tmp_path: Path) -> None:
    fresh = fresh_process(tmp_path)
    keys, _ = compile_source(tmp_path, SOURCE)
    assert keys == fresh["keys"]


def test_editing_one_loop_changes_only_its_key(tmp_path: Path) -> None:
    before, _ = compile_source(tmp_path, SOURCE)
    after, _ = compile_source(tmp_path, SOURCE.replace("poly(x[i], 3.0)", "poly(x[i], 3.5)"))
    assert [k for k, (a, b) in enumerate(zip(before, after)) if a != b] == [2]


def test_editing_a_shared_definition_changes_the_keys_of_its_consumers(tmp_path: Path) -> None:
    before, slices = compile_source(tmp_path, SOURCE)
    scale_line = line_of(SOURCE, "scale = s * 2.0")
    consumers = [k for k, lines in enumerate(slices) if scale_line in lines]
    assert consumers == [1, 3]
    after, _ = compile_source(tmp_path, SOURCE.replace("scale = s * 2.0", "scale = s * 2.5"))
    assert [k for k, (a, b) in enumerate(zip(before, after)) if a != b] == consumers


def test_editing_a_func_changes_the_keys_of_its_callers(tmp_path: Path) -> None:
    before, _ = compile_source(tmp_path, SOURCE)
    after, _ = compile_source(tmp_path, SOURCE.replace("1.5 * v * v", "1.25 * v * v"))
    assert [k for k, (a, b) in enumerate(zip(before, after)) if a != b] == [0, 2, 4]


def test_moving_the_kernel_down_changes_no_key(tmp_path: Path) -> None:
    before, slices = compile_source(tmp_path, SOURCE)
    moved = SOURCE.replace("@qd.func", "\n\n\n\n\n@qd.func")
    after, moved_slices = compile_source(tmp_path, moved)
    assert after == before
    assert moved_slices == [
        [n + 5 for n in lines] for lines in slices
    ]  # the report still follows the lines


def test_printed_text_has_no_locations_unless_asked(tmp_path: Path) -> None:
    compile_source(tmp_path, SOURCE)
    kernel = state.history["five"].kernel  # type: ignore[attr-defined]
    assert "// line" not in print_kernel(kernel)
    assert "// line 16" in print_kernel(kernel, with_locs=True)
